// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_tlsf.c -- the model rig (rig.h) over TLSF heaps.
 *
 * Cases cover heaps from 1 KiB to 64 MiB of block space, regions from malloc
 * at deliberately odd start addresses, heaps of several pools, the generic
 * API (rtm_heap_*) and the typed one (rtm_tlsf_*), and checked runs
 * (rtm_heap_check after every step) where the heap is small enough for that
 * to be cheap. Cases are grouped in bands; ctest runs one band per entry so
 * the bands run in parallel.
 *
 * Seeds are fixed (CI must be reproducible); RTMEM_SEED or --seed replaces
 * them to explore or to replay. A failure prints the exact command line that
 * replays it: --band, --case, --seed, --steps. This file holds the cases and
 * the hooks; model_driver.c runs them.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"
#include "rtmem.h"

/* --- the cases ------------------------------------------------------------------ */

#define KiB       ((size_t)1024)
#define MiB       (KiB * KiB)
#define MAX_POOLS 4

typedef struct model_case {
    const char *band;
    size_t block_space[MAX_POOLS]; /* [0]: first region beyond the control
                                      structure; others: add_pool regions */
    size_t misalign;               /* start address mod 64 of the first region */
    int typed;                     /* drive rtm_tlsf_* instead of rtm_heap_*    */
    size_t check_every;            /* 1 = checked run                           */
    size_t steps;
    size_t max_live;
    size_t max_alignment;
    unsigned seeds;
} model_case;

/* Steps are sized so that each band takes well under a minute in a Release
 * build on one core (the heaviest part is filling and checking big blocks). */
static const model_case cases[] = {
    /* tiny: 1-4 KiB, every step checked; the heap is full most of the time */
    {"tiny", {1 * KiB}, 0, 0, 1, 40000, 0, 256, 4},
    {"tiny", {1 * KiB}, 5, 1, 1, 40000, 0, 256, 4},
    {"tiny", {1000}, 3, 0, 1, 40000, 0, 128, 3},
    {"tiny", {2 * KiB}, 7, 0, 1, 40000, 0, 512, 3},
    {"tiny", {3333}, 1, 1, 1, 40000, 0, 1024, 3},
    {"tiny", {4 * KiB}, 63, 0, 1, 40000, 0, 4096, 3},
    /* small: 16-256 KiB, checked up to 64 KiB */
    {"small", {16 * KiB}, 0, 0, 1, 30000, 0, 4096, 3},
    {"small", {16 * KiB + 12}, 6, 1, 1, 30000, 0, 4096, 2},
    {"small", {64 * KiB}, 2, 0, 1, 20000, 0, 8192, 2},
    {"small", {64 * KiB}, 0, 1, 4, 30000, 0, 4096, 2},
    {"small", {256 * KiB}, 4, 0, 16, 40000, 1024, 16384, 2},
    /* medium: 1-4 MiB */
    {"medium", {1 * MiB}, 0, 0, 64, 60000, 2048, 65536, 2},
    {"medium", {1 * MiB + 100}, 9, 1, 64, 60000, 2048, 4096, 2},
    {"medium", {4 * MiB}, 1, 0, 128, 60000, 4096, 1 * MiB, 2},
    /* large: 16-64 MiB */
    {"large", {16 * MiB}, 0, 0, 500, 40000, 4096, 4096, 2},
    {"large", {16 * MiB + 4}, 3, 1, 500, 40000, 4096, 2 * MiB, 1},
    {"large", {64 * MiB}, 5, 0, 1000, 30000, 4096, 65536, 2},
    /* pools: several regions, generic and typed, checked when small */
    {"pools", {1 * KiB, 1 * KiB, 2 * KiB}, 1, 0, 1, 30000, 0, 256, 3},
    {"pools", {2 * KiB, 8 * KiB, 1 * KiB, 4 * KiB}, 6, 1, 1, 30000, 0, 1024, 3},
    {"pools", {64 * KiB, 16 * KiB, 256 * KiB}, 0, 0, 8, 40000, 2048, 8192, 2},
    {"pools", {1 * MiB, 1 * MiB, 1 * MiB, 1 * MiB}, 7, 1, 64, 40000, 4096, 4096, 2},
    {"pools", {4 * KiB, 16 * MiB}, 2, 0, 256, 30000, 4096, 65536, 1},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* Bytes of the first region such that block_space is left after the generic
 * header (16), the misalignment slack (7) and TLSF's control structure. */
static size_t first_region_bytes(const model_case *c)
{
    return c->block_space[0] + rtm_tlsf_control_size() + 16u + 7u;
}

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    test_region *first = model_region(h, first_region_bytes(c), c->misalign);
    if (c->typed)
        h->heap = rtm_tlsf_create(first->mem, first->bytes);
    else
        h->heap = rtm_heap_create("tlsf", first->mem, first->bytes);
    REQUIRE(h->heap != NULL);
    for (size_t pools = 1; pools < MAX_POOLS && c->block_space[pools] != 0; pools++) {
        /* Other pools start at other residues, so every start is exercised. */
        test_region *r = model_region(h, c->block_space[pools], (c->misalign + pools * 11u) % 64u);
        int rc = c->typed ? rtm_tlsf_add_pool(h->heap, r->mem, r->bytes)
                          : rtm_heap_add_pool(h->heap, r->mem, r->bytes);
        REQUIRE(rc == 0);
    }
    h->ops = c->typed ? rig_ops_tlsf(h->heap) : rig_ops_heap(h->heap);
    h->cfg.max_live = c->max_live;
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s%s, %zu pool(s), %zu B first", c->band,
             c->typed ? " typed" : "", h->region_count, c->block_space[0]);
}

/* A run that never filled the heap (no ENOMEM, the driver's own test) or
 * never moved a block proves less than it seems; say so loudly rather than
 * pass quietly (for TLSF a note, not a failure: weak_is_note). */
static int weak(size_t index, const model_heap *h, const rig_result *res)
{
    (void)index;
    (void)h;
    return res->realloc_moved == 0;
}

static int destroy(size_t index, model_heap *h, int rc)
{
    if (cases[index].typed)
        rtm_tlsf_reset(h->heap);
    else
        rtm_heap_destroy(h->heap);
    return rc;
}

MODEL_CASES_INFO

const model_entry model_test = {.count = CASE_COUNT,
                                .info = cases_info,
                                .seed_base = 0u,
                                .create = create,
                                .weak = weak,
                                .weak_is_note = 1,
                                .destroy = destroy};
