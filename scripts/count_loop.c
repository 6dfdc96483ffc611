// SPDX-License-Identifier: MIT
/*
 * scripts/count_loop.c -- the random-replace loop of `rtmem bench random`
 * (tools/lab/random/random_loop.h: 10,000 slots, sizes [16, 4096), one
 * splitmix64 draw per iteration for the slot and the size, one byte written
 * per block) stripped of clocks and child processes, for counting under
 * cachegrind (scripts/count_loop.sh builds and runs it).
 *
 * Why a separate program: cachegrind counts instructions, cache misses and
 * mispredicted branches exactly, with no timing noise, but it counts the
 * whole process. Running this loop at two lengths and subtracting cancels
 * the fill and the start-up (scripts/count_loop.sh does that), which the
 * lab's own command, with its clocks and rounds, would not allow.
 *
 *   count_loop ALGORITHM ITERATIONS   an rtm heap over a written region
 *   count_loop malloc ITERATIONS      malloc/free (LD_PRELOAD a peer)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rtmem.h"

enum { SLOTS = 10000, MIN_SIZE = 16, SIZE_SPAN = 4096 - 16 };
#define REGION_BYTES ((size_t)SLOTS * 4096u * 2u) /* the lab's default */

static uint64_t rng_state = 12345;

static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t scale32(uint32_t x, uint32_t n) { return (uint32_t)(((uint64_t)x * n) >> 32); }

static rtm_heap *heap;

static void *get(size_t n) { return heap != NULL ? rtm_alloc(heap, n) : malloc(n); }

static void put(void *p)
{
    if (heap != NULL)
        rtm_free(heap, p);
    else
        free(p);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: count_loop ALGORITHM|malloc ITERATIONS\n");
        return 2;
    }
    long iterations = atol(argv[2]);
    if (strcmp(argv[1], "malloc") != 0) {
        /* Written before the loop, as the lab writes its regions. */
        char *mem =
            mmap(NULL, REGION_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return 1;
        memset(mem, 1, REGION_BYTES);
        heap = rtm_heap_create(argv[1], mem, REGION_BYTES);
        if (heap == NULL) {
            fprintf(stderr, "count_loop: no heap \"%s\"\n", argv[1]);
            return 2;
        }
    }
    static void *slot[SLOTS];
    for (int i = 0; i < SLOTS; i++) {
        slot[i] = get(MIN_SIZE + scale32((uint32_t)(splitmix64() >> 32), SIZE_SPAN));
        if (slot[i] == NULL)
            return 1;
        *(volatile char *)slot[i] = 1;
    }
    for (long i = 0; i < iterations; i++) {
        uint64_t r = splitmix64();
        uint32_t k = scale32((uint32_t)r, SLOTS);
        put(slot[k]);
        slot[k] = get(MIN_SIZE + scale32((uint32_t)(r >> 32), SIZE_SPAN));
        if (slot[k] == NULL)
            return 1;
        *(volatile char *)slot[k] = (char)i;
    }
    return 0;
}
