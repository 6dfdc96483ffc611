// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_stress.c -- blocks passed between threads.
 *
 * PAIRS producer/consumer pairs share a single-producer single-consumer
 * ring. A producer allocates blocks of random sizes (mostly small, some
 * large, a few huge), stamps them (a header with a sequence number and the
 * size, and a pattern over the first and last bytes and one word per 4 KiB)
 * and hands them over; its consumer checks every stamp, sometimes
 * reallocates, and frees: every block is freed by a thread that did not
 * allocate it. Both also churn private blocks in between. A checker thread
 * calls rtm_malloc_check() while all this runs.
 *
 * At the end (all threads joined): the allocator's check is clean, nothing
 * is in use, every thread's cache was taken back, and the mapped memory is
 * bounded (the consumers' frees did not pile up anywhere). Runs under TSan
 * (label `threads`) with fewer blocks.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define BLOCKS 20000u
#else
#define BLOCKS 200000u
#endif
#define PAIRS 3u
#define RING  4096u

typedef struct msg {
    unsigned char *p;
    size_t size;
    uint64_t seq;
} msg;

/* A bounded queue; blocking (mutex and condition variables) rather than
 * spinning, so the test's time does not depend on how busy the machine is.
 * Threads still hand blocks over in bursts of up to RING. */
typedef struct ring {
    msg slots[RING];
    size_t head, tail; /* head: next to write; tail: next to read */
    int done;          /* the producer has finished */
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    uint64_t seed;
} ring;

static ring rings[PAIRS];
static atomic_ulong bad_blocks;

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t draw_size(uint64_t *s)
{
    uint64_t r = next_rand(s) % 1000u;
    if (r < 700)
        return (size_t)(next_rand(s) % 257u);
    if (r < 980)
        return (size_t)(next_rand(s) % 32769u);
    if (r < 999)
        return (size_t)(next_rand(s) % (300u << 10));
    return (size_t)(4u << 20) + (size_t)(next_rand(s) % (1u << 20));
}

static unsigned char pattern(uint64_t seq, size_t i) { return (unsigned char)(seq * 31u + i * 7u); }

static void stamp(unsigned char *p, size_t size, uint64_t seq)
{
    size_t edge = size < 64 ? size : 64;
    for (size_t i = 0; i < edge; i++)
        p[i] = pattern(seq, i);
    for (size_t i = size - edge; i < size; i++)
        p[i] = pattern(seq, i);
    for (size_t i = 4096; i < size; i += 4096)
        p[i] = pattern(seq, i);
}

static int verify(const unsigned char *p, size_t size, uint64_t seq)
{
    size_t edge = size < 64 ? size : 64;
    for (size_t i = 0; i < edge; i++)
        if (p[i] != pattern(seq, i))
            return 0;
    for (size_t i = size - edge; i < size; i++)
        if (p[i] != pattern(seq, i))
            return 0;
    for (size_t i = 4096; i < size; i += 4096)
        if (p[i] != pattern(seq, i))
            return 0;
    return 1;
}

/* Private churn: a small window of blocks allocated and freed here. */
static void churn(uint64_t *s, void **window, size_t n)
{
    size_t k = (size_t)(next_rand(s) % n);
    rtm_malloc_free(window[k]);
    window[k] = (next_rand(s) & 1u) ? rtm_malloc(draw_size(s) % 2048u)
                                    : rtm_malloc_calloc(1, draw_size(s) % 512u);
}

static void *producer(void *arg)
{
    ring *r = arg;
    uint64_t s = r->seed;
    void *window[64] = {0};
    for (uint64_t seq = 1; seq <= BLOCKS; seq++) {
        size_t size = draw_size(&s) + 1u;
        unsigned char *p = rtm_malloc(size);
        if (p == NULL) {
            atomic_fetch_add(&bad_blocks, 1);
            continue;
        }
        stamp(p, size, seq);
        pthread_mutex_lock(&r->lock);
        while (r->head - r->tail == RING)
            pthread_cond_wait(&r->not_full, &r->lock);
        r->slots[r->head++ % RING] = (msg){p, size, seq};
        pthread_cond_signal(&r->not_empty);
        pthread_mutex_unlock(&r->lock);
        if ((seq & 3u) == 0)
            churn(&s, window, 64);
    }
    for (size_t i = 0; i < 64; i++)
        rtm_malloc_free(window[i]);
    pthread_mutex_lock(&r->lock);
    r->done = 1;
    pthread_cond_signal(&r->not_empty);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void *consumer(void *arg)
{
    ring *r = arg;
    uint64_t s = r->seed ^ 0x9e3779b97f4a7c15u;
    void *window[32] = {0};
    for (uint64_t got = 0;; got++) {
        pthread_mutex_lock(&r->lock);
        while (r->head == r->tail && !r->done)
            pthread_cond_wait(&r->not_empty, &r->lock);
        if (r->head == r->tail) {
            pthread_mutex_unlock(&r->lock);
            break;
        }
        msg m = r->slots[r->tail++ % RING];
        pthread_cond_signal(&r->not_full);
        pthread_mutex_unlock(&r->lock);
        if (!verify(m.p, m.size, m.seq))
            atomic_fetch_add(&bad_blocks, 1);
        if ((m.seq % 16u) == 0) { /* grow or shrink, contents kept */
            size_t n = m.size < 100000 ? m.size * 2u : m.size / 3u;
            unsigned char *q = rtm_malloc_realloc(m.p, n);
            if (q == NULL || q[0] != pattern(m.seq, 0))
                atomic_fetch_add(&bad_blocks, 1);
            else
                m.p = q;
        }
        rtm_malloc_free(m.p);
        if ((got & 7u) == 0)
            churn(&s, window, 32);
    }
    for (size_t i = 0; i < 32; i++)
        rtm_malloc_free(window[i]);
    return NULL;
}

static atomic_int stop_checker;
static atomic_int checker_failures;

static void *checker(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_checker)) {
        if (rtm_malloc_check() != 0)
            atomic_fetch_add(&checker_failures, 1);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void test_producer_consumer(void)
{
    pthread_t prod[PAIRS], cons[PAIRS], chk;
    for (unsigned i = 0; i < PAIRS; i++) {
        rings[i].seed = 0x1234567u + i * 7919u;
        pthread_mutex_init(&rings[i].lock, NULL);
        pthread_cond_init(&rings[i].not_full, NULL);
        pthread_cond_init(&rings[i].not_empty, NULL);
    }
    REQUIRE(pthread_create(&chk, NULL, checker, NULL) == 0);
    for (unsigned i = 0; i < PAIRS; i++) {
        REQUIRE(pthread_create(&cons[i], NULL, consumer, &rings[i]) == 0);
        REQUIRE(pthread_create(&prod[i], NULL, producer, &rings[i]) == 0);
    }
    for (unsigned i = 0; i < PAIRS; i++) {
        pthread_join(prod[i], NULL);
        pthread_join(cons[i], NULL);
    }
    atomic_store(&stop_checker, 1);
    pthread_join(chk, NULL);
    CHECK_EQ(atomic_load(&bad_blocks), 0);
    CHECK_EQ(atomic_load(&checker_failures), 0);
    CHECK_EQ(rtm_malloc_check(), 0);
    rtm_malloc_thread_flush();
    rtm_malloc_stats_t st = rtm_malloc_stats();
    CHECK_EQ(st.in_use_bytes, 0);
    CHECK_EQ(st.thread_cache_bytes, 0);
    CHECK(st.threads_reclaimed >= 2u * PAIRS);
    CHECK(st.threads <= 1u);
    CHECK_EQ(st.foreign_frees, 0);
    /* Live data never exceeds a few rings of blocks; what is mapped beyond
     * it is caches, bounded by design (docs/MALLOC.md, "Bounds"). */
    CHECK_MSG(st.mapped_bytes < ((size_t)512 << 20), "mapped %zu bytes", st.mapped_bytes);
    printf("  mapped %zu KiB, resident <= %zu KiB, central caches %zu KiB\n", st.mapped_bytes >> 10,
           st.resident_bytes >> 10, st.central_cache_bytes >> 10);
}

int main(void)
{
    RUN_TEST(test_producer_consumer);
    return check_summary();
}
