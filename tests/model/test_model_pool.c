// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_pool.c -- the model rig (rig.h) over fixed-block
 * pools ("pool:<size>").
 *
 * Cases cover block sizes from the minimum (8) to 4 KiB, odd sizes that get
 * rounded up, pools of a handful of blocks up to thousands, regions sized
 * exactly with rtm_pool_region_for() and regions of arbitrary length, odd
 * start addresses, the generic API and the typed one. The rig may hold more
 * blocks than the pool has, so every case runs the pool dry again and again
 * (ENOMEM, then reuse). Requests are drawn up to twice the block size, so
 * about half of them fit, plus the rig's absurd sizes.
 *
 * Seeds are fixed; RTMEM_SEED or --seed replaces them. A failure prints the
 * command line that replays it. This file holds the cases and the hooks;
 * model_driver.c runs them.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"
#include "rtmem.h"

typedef struct model_case {
    const char *band;
    size_t block;       /* block size asked for (rounded up by the pool)      */
    size_t blocks;      /* region from rtm_pool_region_for(blocks), or ...    */
    size_t bytes;       /* ... a region of exactly this many bytes (blocks 0) */
    size_t misalign;    /* start address mod 64                               */
    int typed;          /* rtm_pool_* instead of rtm_heap_*("pool:N")         */
    size_t check_every; /* 1 = checked run                                    */
    size_t steps;
    size_t max_alignment;
    unsigned seeds;
    int fills; /* the run must see every block live at once */
} model_case;

static const model_case cases[] = {
    /* small: a few to a hundred blocks, every step checked; all fill up */
    {"small", 8, 1, 0, 0, 0, 1, 20000, 64, 3, 1},
    {"small", 1, 7, 0, 3, 1, 1, 20000, 64, 3, 1},
    {"small", 24, 20, 0, 5, 0, 1, 60000, 256, 3, 1},
    {"small", 64, 0, 3333, 7, 1, 1, 60000, 256, 3, 1},
    {"small", 1000, 0, 50000, 1, 0, 1, 60000, 1024, 2, 1},
    {"small", 4096, 9, 0, 0, 0, 1, 20000, 8192, 2, 1},
    {"small", 4000, 0, 50000, 63, 1, 1, 20000, 4096, 2, 1},
    /* medium: hundreds to thousands of blocks, checked now and then; the
     * big-block ones fill up, the small-block ones exercise long lists */
    {"medium", 4096, 200, 0, 0, 0, 16, 200000, 8192, 2, 1},
    {"medium", 8192, 0, 1024 * 1024 + 5, 9, 1, 16, 200000, 16384, 2, 1},
    {"medium", 2040, 300, 0, 2, 0, 32, 200000, 4096, 2, 1},
    {"medium", 8, 5000, 0, 0, 0, 64, 100000, 64, 2, 0},
    {"medium", 32, 0, 256 * 1024, 9, 1, 64, 100000, 128, 2, 0},
    {"medium", 512, 0, 1024 * 1024 + 5, 4, 1, 64, 100000, 4096, 2, 0},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* rtm_pool_region_for() counts from an 8-aligned start: add what the
 * misalignment loses. */
static size_t region_bytes(const model_case *c)
{
    if (c->blocks == 0)
        return c->bytes;
    return rtm_pool_region_for(c->blocks, c->block) +
           (c->misalign % 8u ? 8u - c->misalign % 8u : 0);
}

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    char name[40];
    snprintf(name, sizeof name, "pool:%zu", c->block);
    size_t bytes = region_bytes(c);
    /* The generic API takes no region below rtm_min_region() (7 bytes of
     * slack for any start); then a few more blocks may fit. */
    int exact = c->blocks != 0 && (c->typed || bytes >= rtm_min_region(name));
    if (!c->typed && bytes < rtm_min_region(name))
        bytes = rtm_min_region(name);
    test_region *region = model_region(h, bytes, c->misalign);
    h->heap = c->typed ? (void *)rtm_pool_create(region->mem, region->bytes, c->block)
                       : (void *)rtm_heap_create(name, region->mem, region->bytes);
    REQUIRE(h->heap != NULL);
    rtm_stats st = c->typed ? rtm_pool_stats(h->heap) : rtm_heap_stats(h->heap);
    size_t count = st.free_bytes / rtm_pool_block_size_for(c->block);
    if (exact)
        CHECK_EQ(count, c->blocks); /* region_for() is exact */
    h->units = count;
    h->ops = c->typed ? rig_ops_pool(h->heap) : rig_ops_pool_heap(h->heap);
    h->cfg.max_live = count + 16u; /* more than fit: the pool runs dry */
    h->cfg.max_request = 2u * rtm_pool_block_size_for(c->block);
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s%s, %s, %zu blocks, %zu B", c->band,
             c->typed ? " typed" : "", name, count, region->bytes);
}

/* Beyond emptying the pool and being refused: when the case says so, the
 * run must have seen every block live at once. */
static int weak(size_t index, const model_heap *h, const rig_result *res)
{
    return cases[index].fills && res->max_live < h->units;
}

static int destroy(size_t index, model_heap *h, int rc)
{
    if (cases[index].typed)
        rtm_pool_reset(h->heap);
    else
        rtm_heap_destroy(h->heap);
    return rc;
}

MODEL_CASES_INFO

const model_entry model_test = {.count = CASE_COUNT,
                                .info = cases_info,
                                .seed_base = 5000u,
                                .create = create,
                                .weak = weak,
                                .destroy = destroy};
