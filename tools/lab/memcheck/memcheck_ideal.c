// SPDX-License-Identifier: MIT
/*
 * memcheck_ideal.c -- what arithmetic allows on each run: the overhead and
 * fragmentation of an ideal heap (no header, no rounding, blocks placed
 * contiguously from the start of the heap) given the same heap size, block
 * size and free order kind as the real run.
 *
 * docs/METHODS.md states the phase averages of this model (random overhead
 * 10.5 %, random fragmentation 12.7 %, power-of-two fragmentation 39.7 %).
 * Computing it on our own runs puts the limit for exactly the block sizes
 * this seed drew beside our figures, and checks the published limits.
 *
 *   ideal heap, heap_size bytes:
 *   +-------+-------+-------+-- ... --+-------+------+
 *   | blk 0 | blk 1 | blk 2 |         | n - 1 | tail |   n = heap / block
 *   +-------+-------+-------+-- ... --+-------+------+
 *
 * Blocks are freed in order, or in a uniform random order (its own random
 * stream, so the real runs draw the same numbers with or without this
 * model); when half of user_size is freed, the largest free extent is the
 * longest run of freed blocks (plus the tail when the run ends at the last
 * block), and the probe finds the largest of freed, freed - block, ... that
 * fits in it, exactly as the real probe does.
 */
#include <string.h>

#include "memcheck/memcheck.h"

/* The probe's answer for a free extent of `extent` bytes. */
static size_t probe(size_t freed, size_t block, size_t extent)
{
    if (extent >= freed)
        return freed;
    size_t steps = (freed - extent + block - 1) / block;
    return freed - steps * block;
}

/* Longest run of freed blocks in bytes; the tail joins a run at the end. */
static size_t longest_extent(const unsigned char *freed_map, size_t n, size_t block, size_t tail)
{
    size_t best = 0, run = 0;
    for (size_t k = 0; k < n; k++) {
        run = freed_map[k] ? run + block : 0;
        if (run > best)
            best = run;
    }
    if (n > 0 && freed_map[n - 1] && run + tail > best)
        best = run + tail;
    return best;
}

void mc_ideal(mc_ctx *c, size_t heap_size, size_t block_size, int flags, double *overhead,
              double *frag)
{
    size_t n = heap_size / block_size, user = n * block_size;
    *overhead = 100.0 - (double)user * 100.0 / (double)heap_size;
    *frag = 0.0;
    if (n == 0 || n > c->max_blocks)
        return;
    size_t *order = c->ideal_order;
    for (size_t k = 0; k < n; k++)
        order[k] = k;
    for (size_t j = n; (flags & MC_SHUFFLE) && j > 1; j--) {
        size_t k = (size_t)rng_below(&c->ideal_rng, j);
        size_t tmp = order[j - 1];
        order[j - 1] = order[k];
        order[k] = tmp;
    }
    memset(c->ideal_map, 0, n);
    size_t freed = 0;
    for (size_t k = 0; k < n; k++) { /* the real probe follows a free */
        c->ideal_map[order[k]] = 1;
        freed += block_size;
        if (freed >= user / 2)
            break;
    }
    size_t extent = longest_extent(c->ideal_map, n, block_size, heap_size - user);
    *frag = (1.0 - (double)probe(freed, block_size, extent) / (double)freed) * 100.0;
}
