// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_tlsf_cached.c -- the model rig (rig.h) over TLSF
 * heaps with the deferred-coalescing cache ("tlsf_cached:<blocks>"),
 * through the generic API (rig_ops_heap): the heap has no typed API. The
 * cases and hooks are here; model_driver.c runs them.
 *
 * The cache must be invisible to every promise plain TLSF makes, so the rig
 * holds it to the whole rtmem contract (RIG_RTMEM_CONTRACT): exact stats
 * and walk (both coalesce the cache first), alloc(n) succeeds iff n <=
 * largest_free (a refusal coalesces the cache and retries), freeing
 * everything gives the region back whole, errno ENOMEM on refusal. Checked
 * runs also verify the cache itself (rtm_heap_check: every entry a live
 * block of its size, tagged, in its bin, counted once, no more than the
 * limit).
 *
 * Cases: limits from 1 block to the most (352), heaps from 2 KiB (refused
 * often, so the coalesce-and-retry path runs) to 16 MiB, odd start
 * addresses. Seeds are fixed; RTMEM_SEED or --seed replaces them; a
 * failure prints its replay line.
 *
 * Reading the stats coalesces the cache, so the bands "small" and "medium",
 * which read them after every step (to judge every allocation against the
 * largest_free just before it), see a cache that is emptied every step. The
 * band "deferred" reads them every `stats_every` steps only: the cache fills,
 * hands out, evicts and coalesces on refusal as in use, under the shadow's
 * overlap and contents checks and rtm_heap_check (which verifies the cache
 * without emptying it); honesty is judged on the steps after a read.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"

typedef struct model_case {
    const char *band;
    size_t blocks; /* the cache's limit */
    size_t bytes;
    size_t misalign;
    size_t check_every;
    size_t steps;
    size_t max_live;
    size_t max_alignment;
    unsigned seeds;
    size_t stats_every; /* 0: after every step */
} model_case;

static const model_case cases[] = {
    {"small", 1, 12000, 0, 1, 30000, 0, 256, 3, 0},
    {"small", 8, 16000, 3, 1, 30000, 0, 1024, 3, 0},
    {"small", 128, 24000, 7, 1, 30000, 0, 4096, 3, 0},
    {"small", 352, 64000, 5, 1, 30000, 0, 4096, 2, 0},
    {"medium", 128, 1u << 20, 1, 32, 100000, 2048, 65536, 2, 0},
    {"medium", 352, 4u << 20, 0, 64, 100000, 4096, 4096, 2, 0},
    {"medium", 16, 16u << 20, 6, 256, 60000, 4096, 1u << 20, 1, 0},
    {"deferred", 128, 24000, 7, 1, 60000, 0, 4096, 4, 97},
    {"deferred", 352, 64000, 3, 1, 30000, 0, 1024, 2, 1000},
    {"deferred", 128, 1u << 20, 1, 16, 200000, 2048, 65536, 3, 500},
    {"deferred", 32, 12000, 5, 1, 30000, 0, 256, 3, 61},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    test_region *region = model_region(h, c->bytes, c->misalign);
    char name[40];
    snprintf(name, sizeof name, "tlsf_cached:%zu", c->blocks);
    rtm_heap *heap = rtm_heap_create(name, region->mem, region->bytes);
    REQUIRE(heap != NULL);
    REQUIRE(rtm_heap_check(heap) == 0);
    h->ops = rig_ops_heap(heap);
    h->ops.name = "tlsf_cached";
    h->ops.flags = RIG_RTMEM_CONTRACT;
    h->cfg.max_live = c->max_live;
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    h->cfg.stats_every = c->stats_every;
    snprintf(h->what, sizeof h->what,
             "%s, %zu blocks cached at most, %zu B, misalign %zu, stats every %zu steps", c->band,
             c->blocks, c->bytes, c->misalign, c->stats_every ? c->stats_every : 1u);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 7300u, .create = create};
