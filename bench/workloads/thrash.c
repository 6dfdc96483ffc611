// SPDX-License-Identifier: MIT
/*
 * bench/workloads/thrash.c -- false sharing between threads, two ways (the
 * patterns of the Hoard suite's cache-thrash and cache-scratch, as
 * mimalloc-bench runs them):
 *  - thrash: each thread repeatedly allocates a small object, writes every
 *    byte of it many times and frees it. Active false sharing: an allocator
 *    that gives two threads blocks on one 64-byte line makes every write a
 *    cache-line transfer between cores.
 *  - scratch: the main thread allocates one object per thread and hands it
 *    over; each thread frees it first (a free of another thread's block)
 *    and then loops as above. Passive false sharing: the freed block may
 *    come straight back to the thread, on a line the main thread's other
 *    blocks share.
 * Prints the mode, the threads, the time per write (ns: each thread times
 * its own loop, from the common start to its end, and the mean over the
 * threads is divided by the writes of one thread; the measure these
 * benchmarks compare, with and without the cross-thread reuse) and a
 * checksum of what was written.
 * usage: thrash [thrash|scratch] [threads] [rounds] [writes] [size]
 * Run by scripts/workloads.py under each allocator (LD_PRELOAD; docs/MALLOC.md).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 256

static long rounds = 20000, writes = 1000;
static size_t objsize = 8;
static pthread_barrier_t start;

struct job {
    void *handed; /* scratch: the main thread's block; thrash: NULL */
    uint64_t sum;
    double secs; /* the thread's loop */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
    struct job *j = arg;
    free(j->handed);
    pthread_barrier_wait(&start);
    double t0 = now();
    uint64_t sum = 0;
    for (long r = 0; r < rounds; r++) {
        volatile unsigned char *p = malloc(objsize);
        if (p == NULL)
            abort();
        for (size_t k = 0; k < objsize; k++)
            p[k] = (unsigned char)r;
        for (long w = 0; w < writes; w++)
            for (size_t k = 0; k < objsize; k++)
                p[k] = (unsigned char)(p[k] + 1);
        sum += p[0] + p[objsize - 1];
        free((void *)p);
    }
    j->secs = now() - t0;
    j->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "thrash";
    int scratch = strcmp(mode, "scratch") == 0;
    int nthreads = argc > 2 ? atoi(argv[2]) : 2;
    if (argc > 3)
        rounds = atol(argv[3]);
    if (argc > 4)
        writes = atol(argv[4]);
    if (argc > 5)
        objsize = (size_t)atol(argv[5]);
    if (argc > 6 || (!scratch && strcmp(mode, "thrash") != 0) || nthreads < 1 ||
        nthreads > MAX_THREADS || rounds < 1 || writes < 1 || objsize == 0 || objsize > 4096) {
        fprintf(stderr, "usage: thrash [thrash|scratch] [threads] [rounds] [writes] [size]\n");
        return 2;
    }
    static pthread_t t[MAX_THREADS];
    static struct job jobs[MAX_THREADS];
    if (pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1) != 0)
        return 1;
    for (int i = 0; i < nthreads; i++) {
        if (scratch) { /* neighbours on the main thread's lines, each written */
            jobs[i].handed = malloc(objsize);
            if (jobs[i].handed == NULL)
                return 1;
            memset(jobs[i].handed, i, objsize);
        }
        if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0)
            return 1;
    }
    pthread_barrier_wait(&start);
    uint64_t sum = 0;
    double secs = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        sum += jobs[i].sum;
        secs += jobs[i].secs;
    }
    double ns = secs * 1e9 / ((double)nthreads * (double)rounds * (double)writes);
    printf("%s threads=%d ns_per_write=%.3f checksum=%llu\n", mode, nthreads, ns,
           (unsigned long long)sum);
    return 0;
}
