// SPDX-License-Identifier: MIT
/*
 * tests/malloc/pool_benchmark.c -- a standalone driver of the tcmalloc-style
 * pool benchmark's loop (BenchmarkMalloc of the thread-caching allocator
 * study, docs/METHODS.md), for tuning the malloc by hand under LD_PRELOAD
 * (not a test: ctest only checks that it runs). It uses plain malloc/free, so that the same
 * binary measures glibc, rtmem, mimalloc, jemalloc or tcmalloc:
 *
 *   LD_PRELOAD=build/librtmem-malloc.so build/tests/pool_benchmark 4 10000 10
 *
 * plain mode (default): `threads` threads, each doing `rounds` rounds of
 * `ntimes` mallocs of size (16 + i) % 8192 + 1, then freeing them all;
 * prints the summed malloc time, the summed free time, the wall time and
 * the peak RSS. touch mode: the same, writing the first byte of every
 * block as it is allocated (so page faults land in the malloc time of
 * every allocator alike: rtmem never writes into a block, glibc and
 * mimalloc write headers or free-list links). pc mode (5th argument "pc"): threads/2
 * producer/consumer pairs; producers malloc blocks of random size (8..1024) and hand them over in
 * batches of 256 through a locked queue; consumers free them; prints the wall time for all blocks
 * and the peak RSS. The lab's `rtmem bench threads` runs both properly (medians, spread, peers).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static size_t ntimes = 10000, rounds = 10;
static int touch; /* "touch" mode: write the first byte of every block */
static double malloc_total, free_total;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *seed_worker(void *arg)
{
    (void)arg;
    void **v = malloc(ntimes * sizeof *v);
    double tm = 0, tf = 0;
    for (size_t r = 0; r < rounds; r++) {
        double t0 = now();
        for (size_t i = 0; i < ntimes; i++) {
            v[i] = malloc((16 + i) % 8192 + 1);
            if (touch)
                *(volatile char *)v[i] = 1;
        }
        double t1 = now();
        for (size_t i = 0; i < ntimes; i++)
            free(v[i]);
        double t2 = now();
        tm += t1 - t0;
        tf += t2 - t1;
    }
    free(v);
    pthread_mutex_lock(&total_lock);
    malloc_total += tm;
    free_total += tf;
    pthread_mutex_unlock(&total_lock);
    return NULL;
}

#define BATCH 256
typedef struct queue {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    void **batches[64];
    int head, tail, done;
} queue;

static void *producer(void *arg)
{
    queue *q = arg;
    uint64_t s = (uint64_t)(uintptr_t)q | 1u;
    size_t total = ntimes * rounds;
    for (size_t n = 0; n < total; n += BATCH) {
        void **b = malloc(BATCH * sizeof *b);
        for (int i = 0; i < BATCH; i++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            b[i] = malloc(8u + (size_t)(s % 1017u));
        }
        pthread_mutex_lock(&q->lock);
        while (q->head - q->tail == 64)
            pthread_cond_wait(&q->cond, &q->lock);
        q->batches[q->head++ % 64] = b;
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
    }
    pthread_mutex_lock(&q->lock);
    q->done = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

static void *consumer(void *arg)
{
    queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        while (q->head == q->tail && !q->done)
            pthread_cond_wait(&q->cond, &q->lock);
        if (q->head == q->tail) {
            pthread_mutex_unlock(&q->lock);
            return NULL;
        }
        void **b = q->batches[q->tail++ % 64];
        pthread_cond_broadcast(&q->cond);
        pthread_mutex_unlock(&q->lock);
        for (int i = 0; i < BATCH; i++)
            free(b[i]);
        free(b);
    }
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        ntimes = (size_t)atol(argv[2]);
    if (argc > 3)
        rounds = (size_t)atol(argv[3]);
    int pc = argc > 4 && strcmp(argv[4], "pc") == 0;
    touch = argc > 4 && strcmp(argv[4], "touch") == 0;
    if (threads < 1 || threads > 256 || ntimes == 0 || rounds == 0) {
        fprintf(stderr, "usage: %s [threads [ntimes [rounds [plain|touch|pc]]]]\n", argv[0]);
        return 2;
    }
    pthread_t t[256];
    queue qs[128];
    double t0 = now();
    if (!pc) {
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, seed_worker, NULL);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
    } else {
        int pairs = threads < 2 ? 1 : threads / 2;
        for (int i = 0; i < pairs; i++) {
            memset(&qs[i], 0, sizeof qs[i]);
            pthread_mutex_init(&qs[i].lock, NULL);
            pthread_cond_init(&qs[i].cond, NULL);
            pthread_create(&t[2 * i], NULL, producer, &qs[i]);
            pthread_create(&t[2 * i + 1], NULL, consumer, &qs[i]);
        }
        for (int i = 0; i < 2 * pairs; i++)
            pthread_join(t[i], NULL);
    }
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (!pc)
        printf("threads %d ntimes %zu rounds %zu: malloc %.4f s free %.4f s wall %.4f s "
               "peak_rss %ld KiB\n",
               threads, ntimes, rounds, malloc_total, free_total, wall, ru.ru_maxrss);
    else
        printf("pc threads %d blocks %zu: wall %.4f s peak_rss %ld KiB\n", threads,
               ntimes * rounds * (size_t)(threads < 2 ? 1 : threads / 2), wall, ru.ru_maxrss);
    return 0;
}
