// SPDX-License-Identifier: MIT
/*
 * bench/workloads/large.c -- mimalloc-bench's "malloc-large" pattern, step for
 * step: a table of 20 slots; each step picks a slot at random, then a size
 * uniform in bytes over [5 MiB, 25 MiB] (not page multiples), allocates a
 * block of that size, zero-fills it, and only then frees the block the slot
 * held (`buffers[i] = std::make_unique<char[]>(n)`: make_unique value-
 * initialises, i.e. operator new[] then a memset to 0 by the program; the
 * unique_ptr assignment deletes the old block after the new one exists). The
 * suite runs 2000 steps; the blocks still in the table are freed at the end.
 * What it measures: how an allocator serves and takes back blocks far above
 * its small-object classes, at a steady state of up to 20 live blocks
 * (about 300 MiB) -- an mmap/munmap and a page fault per 4 KiB per step if it
 * maps each one, none if it keeps recently freed runs resident.
 * usage: large [steps] (default 2000); prints a checksum so the writes stay.
 * Run by scripts/workloads.py under each allocator (LD_PRELOAD; docs/MALLOC.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS    20
#define MIN_SIZE ((size_t)5 << 20)
#define MAX_SIZE ((size_t)25 << 20)

static uint64_t rng = 42;
/* Read at run time, so the compiler cannot turn malloc + memset(0) into
 * calloc (which would skip the writes that value-initialisation does). */
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
    long steps = argc > 1 ? atol(argv[1]) : 2000;
    if (argc > 2 || steps < 1) {
        fprintf(stderr, "usage: large [steps]\n");
        return 2;
    }
    char *slot[SLOTS] = {0};
    uint64_t sum = 0;
    for (long i = 0; i < steps; i++) {
        unsigned k = (unsigned)(next() % SLOTS);
        size_t n = MIN_SIZE + (size_t)(next() % (MAX_SIZE - MIN_SIZE + 1));
        char *p = malloc(n);
        if (p == NULL)
            return 1;
        memset(p, zero, n);
        p[0] = (char)i;
        p[n - 1] = (char)(i >> 8);
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
