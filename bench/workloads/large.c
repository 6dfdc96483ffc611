// SPDX-License-Identifier: MIT
/*
 * bench/workloads/large.c -- mimalloc-bench's "malloc-large" pattern: a table of 20 slots,
 * each step puts a fresh 5-25 MiB block (sizes uniform, in whole KiB) into a
 * random slot and then frees the block it replaces; every new block is
 * zeroed by hand, as C++ value-initialisation (new char[n]()) does. What it
 * measures: how an allocator serves and takes back blocks far above its
 * small-object classes -- an mmap/munmap and a page fault per 4 KiB per
 * step if it maps each one, none if it keeps recently freed runs.
 * usage: large [steps] (default 400); prints a checksum so the writes stay.
 * Run by scripts/workloads.py under each allocator (LD_PRELOAD; docs/MALLOC.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 20

static uint64_t rng = 42;
/* Read at run time, so the compiler cannot turn malloc + memset(0) into
 * calloc (which would skip the writes that operator new()() does). */
static volatile int zero;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 400;
    if (argc > 2 || steps < 1) {
        fprintf(stderr, "usage: large [steps]\n");
        return 2;
    }
    char *slot[SLOTS] = {0};
    uint64_t sum = 0;
    for (long i = 0; i < steps; i++) {
        size_t kib = (5u << 10) + (size_t)(next() % (20u << 10));
        size_t n = kib << 10;
        char *p = malloc(n);
        if (p == NULL)
            return 1;
        memset(p, zero, n);
        p[0] = (char)i;
        p[n - 1] = (char)(i >> 8);
        unsigned k = (unsigned)(next() % SLOTS);
        if (slot[k])
            sum += (unsigned char)slot[k][0] + (unsigned char)slot[k][4096];
        free(slot[k]); /* after the new one, as unique_ptr assignment does */
        slot[k] = p;
    }
    for (unsigned k = 0; k < SLOTS; k++)
        free(slot[k]);
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
