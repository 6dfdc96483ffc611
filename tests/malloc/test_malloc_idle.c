// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_idle.c -- idle thread caches are trimmed
 * (tcache.c, "Idle trim"; docs/MALLOC.md): a bin the thread has stopped
 * allocating from gives its blocks back to the central lists within a
 * bounded time, while the thread keeps running slow paths in another class.
 * Run with RTMEM_DECAY_MS=20 (tests/malloc/malloc.cmake): the period.
 *
 * Thread A fills its 2048-byte bin (allocates and frees 48 blocks, 8
 * times), then
 * only allocates and frees 16-byte blocks in batches larger than their bin
 * (refills and overflows: slow paths) until the 2048-byte blocks are gone
 * from the thread caches (rtm_malloc_stats().thread_cache_bytes) or 50
 * periods passed. The bound: 2 periods once 256 slow paths ran; the test
 * allows 50 for a loaded machine. Before the trim the blocks stayed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

enum { BIG = 2048, NBIG = 48, SMALL = 16, NSMALL = 1000, PERIOD_MS = 20 };
/* The most the 16-byte bin holds: no bin holds more than 256 blocks
 * (internal.h, struct tbin); the big bin must hold more than twice that. */
#define SMALL_HELD_MAX ((size_t)256 * SMALL)

typedef struct result {
    size_t before, held, after;
    double waited_ms;
} result;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void *idle_bin(void *arg)
{
    result *r = arg;
    static void *big[NBIG], *small[NSMALL];
    r->before = rtm_malloc_stats().thread_cache_bytes;
    for (int round = 0; round < 8; round++) { /* a user of the class: its bin grows */
        for (int i = 0; i < NBIG; i++)
            big[i] = rtm_malloc(BIG);
        for (int i = 0; i < NBIG; i++)
            rtm_malloc_free(big[i]);
    }
    r->held = rtm_malloc_stats().thread_cache_bytes - r->before;
    double t0 = now_ms();
    for (;;) {
        for (int i = 0; i < NSMALL; i++)
            small[i] = rtm_malloc(SMALL);
        for (int i = 0; i < NSMALL; i++)
            rtm_malloc_free(small[i]);
        r->after = rtm_malloc_stats().thread_cache_bytes - r->before;
        r->waited_ms = now_ms() - t0;
        if (r->after <= SMALL_HELD_MAX || r->waited_ms > 50.0 * PERIOD_MS)
            break;
    }
    return NULL;
}

static void test_idle_bin_trimmed(void)
{
    (void)rtm_malloc_trim(); /* the main thread's cache: empty, and quiet */
    CHECK_EQ(rtm_malloc_stats().decay_ms, PERIOD_MS);
    result r = {0};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, idle_bin, &r) == 0);
    pthread_join(t, NULL);
    /* Precondition: the bin held blocks to give back. */
    CHECK_MSG(r.held > 2u * SMALL_HELD_MAX, "the 2048-byte bin held only %zu bytes", r.held);
    /* After: at most the 16-byte bin's blocks, none of the 2048-byte ones. */
    CHECK_MSG(r.after <= SMALL_HELD_MAX,
              "thread cache still holds %zu bytes after %.0f ms (%zu before the idle time)",
              r.after, r.waited_ms, r.held);
    printf("idle bin: %zu bytes held, %zu after %.0f ms (period %d ms)\n", r.held, r.after,
           r.waited_ms, PERIOD_MS);
    CHECK_EQ(rtm_malloc_check(), 0);
}

int main(void)
{
    RUN_TEST(test_idle_bin_trimmed);
    return check_summary();
}
