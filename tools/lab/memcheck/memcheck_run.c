// SPDX-License-Identifier: MIT
/*
 * memcheck_run.c -- one memcheck run (heap_size, block_size, flags), step by
 * step as docs/METHODS.md describes it:
 *
 *   1. a fresh heap over the arena for heap_size; maxblocks = heap/block
 *   2. timed alloc loop until the first failure (the failing call counts in
 *      the sum and the max); more than maxblocks successes fails the run
 *   3. PATTERN: fill every block, verify them all
 *   4. SHUFFLE: uniform permutation of the block list
 *   5. timed free loop in list order; a failing free fails the run;
 *      PATTERN: re-check the blocks still allocated after every free
 *   6. fragmentation probe, once, when the freed bytes first reach half of
 *      user_size (untimed)
 *   7. HOT: second alloc loop (exactly nrblocks or the run fails) and free
 *      loop in allocation order; these timings replace the first pass's
 *   8. leak check: used bytes and live blocks must be 0
 *
 * Additions to the method, all untimed: rtm_heap_check() after the alloc
 * loop and at the end, so a heap that corrupts itself fails its run instead
 * of producing figures.
 *
 * Timing is clock_gettime(CLOCK_MONOTONIC) around each call, as Xenomai
 * does, with nothing subtracted: the published figures include their clock
 * reads, and ours must stay comparable with them. The driver prints what one
 * read pair costs on this machine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "memcheck/memcheck.h"

/* --- patterns (Xenomai's three series) ----------------------------------- */

static void pattern_start(unsigned pat, unsigned *val, unsigned *count)
{
    static const unsigned start[3] = {'a', '0', 0}, len[3] = {26, 10, 255};
    *val = start[pat % 3u];
    *count = len[pat % 3u];
}

static void fill_pattern(unsigned char *p, size_t size, unsigned pat)
{
    unsigned val, count;
    pattern_start(pat, &val, &count);
    for (size_t i = 0; i < size; i++, val++)
        p[i] = (unsigned char)(val % count);
}

static int pattern_ok(const unsigned char *p, size_t size, unsigned pat)
{
    unsigned val, count;
    pattern_start(pat, &val, &count);
    for (size_t i = 0; i < size; i++, val++)
        if (p[i] != (unsigned char)(val % count))
            return 0;
    return 1;
}

/* Verifies every block of chunks[0..n) still allocated. Returns 0 or -1. */
static int check_live(mc_ctx *c, size_t n, size_t block, const char *when)
{
    for (size_t k = 0; k < n; k++) {
        if (c->chunks[k].ptr != NULL &&
            !pattern_ok(c->chunks[k].ptr, block, c->chunks[k].pattern)) {
            snprintf(c->why, sizeof c->why, "block #%zu corrupted %s (pattern %u)", k, when,
                     c->chunks[k].pattern);
            return -1;
        }
    }
    return 0;
}

/* --- the loops ------------------------------------------------------------ */

typedef struct pass {
    uint64_t alloc_sum, alloc_max, free_sum, free_max;
} pass;

static inline void account(uint64_t d, uint64_t *sum, uint64_t *max)
{
    *sum += d;
    if (d > *max)
        *max = d;
}

/* Allocates block until the heap refuses. Returns 0 with *count, or -1. */
static int alloc_loop(mc_ctx *c, rtm_heap *h, size_t block, size_t maxblocks, int flags,
                      size_t *count, pass *t)
{
    t->alloc_sum = t->alloc_max = 0;
    for (size_t n = 0;; n++) {
        uint64_t t0 = mono_ns();
        void *p = rtm_alloc(h, block);
        uint64_t t1 = mono_ns();
        account(t1 - t0, &t->alloc_sum, &t->alloc_max);
        if (p == NULL) {
            *count = n;
            return 0;
        }
        if (n >= maxblocks) {
            snprintf(c->why, sizeof c->why,
                     "too many blocks: more than %zu (heap/block) "
                     "allocations succeeded",
                     maxblocks);
            return -1;
        }
        c->chunks[n].ptr = p;
        if (flags & MC_PATTERN) {
            c->chunks[n].pattern = (unsigned)rng_below(&c->rng, 3);
            fill_pattern(p, block, c->chunks[n].pattern);
        }
    }
}

/* Step 6: the largest of freed, freed - block, ... down to block that can be
 * allocated now (freed at once); 0 if none. Untimed. */
static size_t largest_free(rtm_heap *h, size_t freed, size_t block)
{
    for (size_t s = freed; s >= block; s -= block) {
        void *p = rtm_alloc(h, s);
        if (p != NULL) {
            rtm_free(h, p);
            return s;
        }
    }
    return 0;
}

/* Frees chunks[0..n) in order. With probe, runs step 6 and fills row's
 * maximum_free and largest_free. Returns 0 or -1. */
static int free_loop(mc_ctx *c, rtm_heap *h, size_t n, size_t block, int flags, int probe,
                     mc_row *row, pass *t)
{
    size_t freed = 0;
    t->free_sum = t->free_max = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned long misuse = c->misuse;
        errno = 0;
        uint64_t t0 = mono_ns();
        rtm_free(h, c->chunks[k].ptr);
        uint64_t t1 = mono_ns();
        if (errno != 0 || c->misuse != misuse) {
            snprintf(c->why, sizeof c->why, "free of block #%zu failed (errno %d)", k, errno);
            return -1;
        }
        account(t1 - t0, &t->free_sum, &t->free_max);
        c->chunks[k].ptr = NULL;
        if ((flags & MC_PATTERN) && check_live(c, n, block, "while freeing") != 0)
            return -1;
        freed += block;
        if (probe && freed >= row->user_size / 2) {
            row->maximum_free = freed;
            row->largest_free = largest_free(h, freed, block);
            probe = 0;
        }
    }
    return 0;
}

/* Step 4: Fisher-Yates, each index drawn from [0, j). */
static void shuffle(mc_ctx *c, size_t n)
{
    for (size_t j = n; j > 1; j--) {
        size_t k = (size_t)rng_below(&c->rng, j);
        struct mc_chunk tmp = c->chunks[j - 1];
        c->chunks[j - 1] = c->chunks[k];
        c->chunks[k] = tmp;
    }
}

static int heap_sound(mc_ctx *c, rtm_heap *h, const char *when)
{
    if (rtm_heap_check(h) == 0)
        return 0;
    snprintf(c->why, sizeof c->why, "rtm_heap_check failed %s", when);
    return -1;
}

/* Step 7: the second pass; its timings replace the first pass's. */
static int hot_pass(mc_ctx *c, rtm_heap *h, size_t maxblocks, mc_row *row, pass *t)
{
    size_t again;
    if (alloc_loop(c, h, row->block_size, maxblocks, 0, &again, t) != 0)
        return -1;
    if (again != row->nrblocks) {
        snprintf(c->why, sizeof c->why, "hot pass allocated %zu blocks, the first pass %zu", again,
                 row->nrblocks);
        return -1;
    }
    return free_loop(c, h, again, row->block_size, 0, 0, row, t);
}

/* Every block was freed: the heap must say so. Read after each pass, so a
 * heap that defers work until it is asked (tlsf_cached coalesces its cache
 * in rtm_heap_stats) starts the hot pass from the state its stats
 * describe, as every other heap does. */
static int leak_free(mc_ctx *c, rtm_heap *h, const char *when)
{
    rtm_stats st = rtm_heap_stats(h);
    if (st.used_bytes == 0 && st.live_blocks == 0)
        return 0;
    snprintf(c->why, sizeof c->why, "memory leak %s: %zu bytes in %zu blocks still used", when,
             st.used_bytes, st.live_blocks);
    return -1;
}

/* Steps 2 to 8 on a fresh heap. */
static int run_body(mc_ctx *c, rtm_heap *h, size_t maxblocks, int flags, mc_row *row)
{
    pass t = {0, 0, 0, 0}; /* a run whose first alloc fails never frees: no free time */
    size_t block = row->block_size;
    if (alloc_loop(c, h, block, maxblocks, flags, &row->nrblocks, &t) != 0)
        return -1;
    row->user_size = row->nrblocks * block;
    if (row->nrblocks > 0) {
        if (heap_sound(c, h, "with every block allocated") != 0)
            return -1;
        if ((flags & MC_PATTERN) && check_live(c, row->nrblocks, block, "after allocation") != 0)
            return -1;
        if (flags & MC_SHUFFLE)
            shuffle(c, row->nrblocks);
        if (free_loop(c, h, row->nrblocks, block, flags, 1, row, &t) != 0)
            return -1;
        if ((flags & MC_HOT) && leak_free(c, h, "after the first pass") != 0)
            return -1;
        if ((flags & MC_HOT) && hot_pass(c, h, maxblocks, row, &t) != 0)
            return -1;
    }
    row->alloc_sum = t.alloc_sum;
    row->alloc_max = t.alloc_max;
    row->free_sum = t.free_sum;
    row->free_max = t.free_max;
    if (leak_free(c, h, "at the end") != 0)
        return -1;
    return heap_sound(c, h, "after freeing every block");
}

static void derive(mc_row *row)
{
    row->overhead = 100.0 - (double)row->user_size * 100.0 / (double)row->heap_size;
    row->frag = row->maximum_free == 0
                    ? 0.0
                    : (1.0 - (double)row->largest_free / (double)row->maximum_free) * 100.0;
}

int mc_run(mc_ctx *c, size_t heap_size, size_t block_size, int flags, mc_row *row)
{
    memset(row, 0, sizeof *row);
    row->heap_size = heap_size;
    row->block_size = block_size;
    row->flags = flags;
    c->why[0] = '\0';
    rtm_heap *h = mc_heap_open(c, heap_size, block_size);
    if (h == NULL)
        return -1;
    int rc = run_body(c, h, heap_size / block_size, flags, row);
    mc_heap_close(c, h);
    if (rc != 0)
        return -1;
    derive(row);
    mc_ideal(c, heap_size, block_size, flags, &row->ideal_overhead, &row->ideal_frag);
    return 0;
}
