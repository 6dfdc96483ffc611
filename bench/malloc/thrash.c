// SPDX-License-Identifier: MIT
/*
 * bench/malloc/thrash.c -- false sharing between threads, two ways (the
 * patterns of the Hoard suite's cache-thrash and cache-scratch):
 *  - thrash: each thread repeatedly allocates a small object, writes it many
 *    times and frees it. Active false sharing: an allocator that gives two
 *    threads blocks on one 64-byte line makes every write a cache-line
 *    transfer between cores.
 *  - scratch: the main thread allocates one object per thread and hands it
 *    over; each thread frees it first and then loops as above. Passive
 *    false sharing: the freed block may come straight back to the thread.
 * usage: thrash [thrash|scratch] [threads] [rounds] [writes] [size]
 * Time is the measure (run it under time(1)).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rounds = 20000, writes = 2000;
static size_t objsize = 8;

static void *worker(void *arg)
{
    free(arg); /* scratch: the block handed over; thrash: NULL */
    for (long r = 0; r < rounds; r++) {
        volatile char *p = malloc(objsize);
        if (p == NULL)
            abort();
        for (long w = 0; w < writes; w++)
            for (size_t k = 0; k < objsize; k++)
                p[k] = (char)(p[k] + 1);
        free((void *)p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int scratch = argc > 1 && strcmp(argv[1], "scratch") == 0;
    int nthreads = argc > 2 ? atoi(argv[2]) : 2;
    if (argc > 3)
        rounds = atol(argv[3]);
    if (argc > 4)
        writes = atol(argv[4]);
    if (argc > 5)
        objsize = (size_t)atol(argv[5]);
    if (nthreads < 1 || nthreads > 256 || objsize == 0) {
        fprintf(stderr, "usage: thrash [thrash|scratch] [threads] [rounds] [writes] [size]\n");
        return 2;
    }
    pthread_t t[256];
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, scratch ? malloc(objsize) : NULL) != 0)
            return 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    return 0;
}
