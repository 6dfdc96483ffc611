// SPDX-License-Identifier: MIT
/*
 * bench/workloads/churn.c -- single-thread small-object churn with realistic
 * lifetimes (the shape of cfrac and espresso: many short-lived blocks of
 * 16-200 bytes, most freed soon and in roughly reverse order, a few living
 * long). A window of live blocks: each step allocates one block, and frees
 * either the most recent (LIFO, 70 %), a random one (25 %) or none (a
 * block that lives on; the window is capped). Every byte of every block is
 * written, and its first byte read into the checksum when it is freed.
 * usage: churn [steps] (default 20000000); prints the checksum.
 * Run by scripts/workloads.py under each allocator (LD_PRELOAD; docs/MALLOC.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 4096

static uint64_t rng = 7;

static uint32_t next(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 20000000L;
    if (argc > 2 || steps < 1) {
        fprintf(stderr, "usage: churn [steps]\n");
        return 2;
    }
    static char *live[WINDOW];
    size_t n = 0;
    uint64_t sum = 0;
    for (long i = 0; i < steps; i++) {
        uint32_t r = next();
        size_t size = 16u + (r & 0x7fu) + ((r >> 7) & 1u ? (r >> 8 & 0x3fu) : 0u);
        char *p = malloc(size);
        if (p == NULL)
            return 1;
        memset(p, (int)i, size);
        if (n == WINDOW) { /* full: one random block makes room */
            size_t k = (r >> 16) % n;
            sum += (unsigned char)live[k][0];
            free(live[k]);
            live[k] = live[--n];
        }
        live[n++] = p;
        uint32_t pick = (r >> 20) % 100u;
        if (pick < 70u) { /* LIFO: the one just made, or the one before */
            sum += (unsigned char)live[n - 1][0];
            free(live[--n]);
        } else if (pick < 95u && n > 1) {
            size_t k = (r >> 12) % n;
            sum += (unsigned char)live[k][0];
            free(live[k]);
            live[k] = live[--n];
        }
    }
    while (n > 0)
        free(live[--n]);
    printf("%llu\n", (unsigned long long)sum);
    return 0;
}
