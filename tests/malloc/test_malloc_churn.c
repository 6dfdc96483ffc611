// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_churn.c -- threads created and exiting in waves
 * must not make memory grow: an exiting thread's cache goes back (blocks to
 * the central lists, the cache itself to the next thread).
 *
 * WAVES waves of THREADS threads; each allocates a few thousand blocks,
 * frees most of them itself and leaves KEEP to the main thread, which frees
 * them after the join (cross-thread frees of an exited thread's blocks).
 * After a warm-up, the mapped and metadata bytes must stay flat; at the end
 * every cache was reclaimed and nothing is in use. Label `threads`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define WAVES 80u
#else
#define WAVES 300u
#endif
#define THREADS 4u
#define BLOCKS  3000u
#define KEEP    100u

typedef struct job {
    uint64_t seed;
    void *kept[KEEP];
} job;

static void *worker(void *arg)
{
    job *j = arg;
    uint64_t s = j->seed;
    static _Thread_local void *mine[BLOCKS];
    for (unsigned i = 0; i < BLOCKS; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        size_t size = (size_t)(s % 4096u) + 1u;
        mine[i] = rtm_malloc(size);
        if (mine[i])
            memset(mine[i], (int)i, size < 64 ? size : 64);
    }
    for (unsigned i = 0; i < BLOCKS; i++) {
        if (i < KEEP)
            j->kept[i] = mine[i];
        else
            rtm_malloc_free(mine[i]);
    }
    return NULL;
}

static void wave(uint64_t w)
{
    pthread_t t[THREADS];
    static job jobs[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        jobs[i].seed = w * 1000003u + i + 1u;
        REQUIRE(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (unsigned i = 0; i < THREADS; i++)
        for (unsigned k = 0; k < KEEP; k++)
            rtm_malloc_free(jobs[i].kept[k]);
}

static void test_churn(void)
{
    for (uint64_t w = 0; w < 50; w++)
        wave(w);
    rtm_malloc_stats_t warm = rtm_malloc_stats();
    for (uint64_t w = 50; w < WAVES; w++)
        wave(w);
    rtm_malloc_thread_flush();
    rtm_malloc_stats_t end = rtm_malloc_stats();
    printf("  after warm-up: mapped %zu KiB, metadata %zu KiB; after %u waves: %zu KiB, %zu KiB\n",
           warm.mapped_bytes >> 10, warm.metadata_bytes >> 10, WAVES, end.mapped_bytes >> 10,
           end.metadata_bytes >> 10);
    CHECK_MSG(end.mapped_bytes <= warm.mapped_bytes + ((size_t)16 << 20),
              "mapped grew from %zu to %zu", warm.mapped_bytes, end.mapped_bytes);
    CHECK_MSG(end.metadata_bytes <= warm.metadata_bytes + ((size_t)1 << 20),
              "metadata grew from %zu to %zu", warm.metadata_bytes, end.metadata_bytes);
    CHECK(end.threads_reclaimed >= (size_t)WAVES * THREADS);
    CHECK(end.threads <= 1u);
    CHECK_EQ(end.in_use_bytes, 0);
    CHECK_EQ(rtm_malloc_check(), 0);
}

int main(void)
{
    RUN_TEST(test_churn);
    return check_summary();
}
