// SPDX-License-Identifier: MIT
/*
 * bench/workloads/larson.c -- the Larson & Krishnan server benchmark as
 * mimalloc-bench runs it as "larson-sized" (`larson-sized 5 8 1000 5000 100
 * 4141 <procs>`: sizes 8..1000 bytes, 5000 blocks per thread, 100 rounds,
 * seed 4141, one thread per CPU; blocks allocated with operator new and freed
 * with the sized operator delete). The pattern: the main thread allocates
 * every thread's blocks; each worker then, NumBlocks = rounds x blocks times,
 * frees a random block of its set and puts a new one of random size in its
 * place, writing its first two bytes; after that it starts a successor
 * thread which takes over the set (freeing what its predecessor allocated,
 * as a server's new connection thread does) and exits.
 *
 * One difference, on purpose: the suite runs for a fixed wall time and
 * reports operations per second, so how much work is done depends on the
 * machine's neighbours; here each chain runs a fixed number of thread
 * generations, so the process's CPU time measures the allocator and the
 * run is deterministic (the checksum: the sizes allocated). The metric,
 * ns_per_op, is the wall time from start to the last chain's end over the
 * operations of one chain.
 *
 * operator new / sized delete are looked up at run time (dlsym): the
 * preloaded allocator's when it defines them (rtmem, tcmalloc, jemalloc),
 * else malloc / free, which is what libstdc++'s own operators call.
 *
 * usage: larson [threads] [generations] [min] [max] [blocks] [rounds] [seed]
 *        (defaults 2 100 8 1000 5000 100 4141)
 * Run by scripts/workloads.py under each allocator (LD_PRELOAD; docs/MALLOC.md).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 256

/* One chain's block set, handed from thread to thread. Aligned so that two
 * chains' counters never share a cache line: in the suite's larson the
 * per-thread records are neighbours, and their per-operation counters make
 * every operation a line transfer between cores (measured here: 3x the CPU
 * time with 2 threads on 2 cores, for every allocator alike), which would
 * hide what the allocators do. */
struct area {
    _Alignas(128) char **blk;
    size_t *size;
    long blocks, generation;
    uint64_t rng, sum;
};

static long generations = 100, rounds = 100;
static size_t min_size = 8, max_size = 1000;
static sem_t done;
static void *(*op_new)(size_t);
static void (*op_delete)(void *, size_t);

static void *plain_new(size_t n) { return malloc(n); }
static void plain_delete(void *p, size_t n)
{
    (void)n;
    free(p);
}

/* Larson's own generator (lran2 is a shuffled LCG); any good one will do. */
static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void *worker(void *arg);

/* The end of a thread's life: a successor takes the set, or the chain ends. */
static void hand_over(struct area *a)
{
    if (++a->generation < generations) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, worker, a) != 0)
            abort();
        pthread_attr_destroy(&at);
        return;
    }
    sem_post(&done);
}

static void *worker(void *arg)
{
    struct area *a = arg;
    size_t range = max_size - min_size + 1;
    for (long i = 0, n = rounds * a->blocks; i < n; i++) {
        long k = (long)(next(&a->rng) % (uint64_t)a->blocks);
        op_delete(a->blk[k], a->size[k]);
        size_t sz = min_size + (size_t)(next(&a->rng) % range);
        volatile char *p = op_new(sz);
        if (p == NULL)
            abort();
        p[0] = 'a';
        p[1] = 'b';
        a->blk[k] = (char *)p;
        a->size[k] = sz;
        a->sum += sz;
    }
    hand_over(a);
    return NULL;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int usage(void)
{
    fprintf(stderr, "usage: larson [threads] [generations] [min] [max] [blocks] [rounds] "
                    "[seed]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long v[7] = {2, 100, 8, 1000, 5000, 100, 4141};
    if (argc > 8)
        return usage();
    for (int i = 1; i < argc; i++) {
        char *end;
        v[i - 1] = strtol(argv[i], &end, 10);
        if (*argv[i] == '\0' || *end != '\0')
            return usage();
    }
    long threads = v[0], blocks = v[4];
    generations = v[1], rounds = v[5];
    if (threads < 1 || threads > MAX_THREADS || generations < 1 || v[2] < 2 || v[3] < v[2] ||
        v[3] > (1L << 24) || blocks < 1 || blocks > (1L << 24) || rounds < 1)
        return usage();
    min_size = (size_t)v[2];
    max_size = (size_t)v[3];
    op_new = (void *(*)(size_t))dlsym(RTLD_DEFAULT, sizeof(size_t) == 8 ? "_Znwm" : "_Znwj");
    op_delete =
        (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, sizeof(size_t) == 8 ? "_ZdlPvm" : "_ZdlPvj");
    if (op_new == NULL || op_delete == NULL) {
        op_new = plain_new;
        op_delete = plain_delete;
    }
    static struct area areas[MAX_THREADS];
    uint64_t seed = (uint64_t)v[6];
    for (long t = 0; t < threads; t++) { /* the main thread allocates every set */
        struct area *a = &areas[t];
        a->blk = malloc((size_t)blocks * sizeof *a->blk);
        a->size = malloc((size_t)blocks * sizeof *a->size);
        if (a->blk == NULL || a->size == NULL)
            return 1;
        a->blocks = blocks;
        a->rng = seed + (uint64_t)t;
        for (long k = 0; k < blocks; k++) {
            a->size[k] = min_size + (size_t)(next(&a->rng) % (max_size - min_size + 1));
            a->blk[k] = op_new(a->size[k]);
            if (a->blk[k] == NULL)
                return 1;
        }
    }
    if (sem_init(&done, 0, 0) != 0)
        return 1;
    double t0 = now();
    for (long t = 0; t < threads; t++) {
        areas[t].generation = -1;
        hand_over(&areas[t]); /* generation 0 */
    }
    for (long t = 0; t < threads; t++)
        while (sem_wait(&done) != 0)
            ;
    double secs = now() - t0;
    uint64_t sum = 0;
    for (long t = 0; t < threads; t++) {
        for (long k = 0; k < blocks; k++)
            op_delete(areas[t].blk[k], areas[t].size[k]);
        free(areas[t].blk);
        free(areas[t].size);
        sum += areas[t].sum;
    }
    double ops = (double)generations * (double)rounds * (double)blocks;
    printf("larson threads=%ld ns_per_op=%.3f checksum=%llu\n", threads, secs * 1e9 / ops,
           (unsigned long long)sum);
    return 0;
}
