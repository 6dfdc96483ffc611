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
} model_case;

static const model_case cases[] = {
    {"small", 1, 12000, 0, 1, 30000, 0, 256, 3},
    {"small", 8, 16000, 3, 1, 30000, 0, 1024, 3},
    {"small", 128, 24000, 7, 1, 30000, 0, 4096, 3},
    {"small", 352, 64000, 5, 1, 30000, 0, 4096, 2},
    {"medium", 128, 1u << 20, 1, 32, 100000, 2048, 65536, 2},
    {"medium", 352, 4u << 20, 0, 64, 100000, 4096, 4096, 2},
    {"medium", 16, 16u << 20, 6, 256, 60000, 4096, 1u << 20, 1},
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
    snprintf(h->what, sizeof h->what, "%s, %zu blocks cached at most, %zu B, misalign %zu", c->band,
             c->blocks, c->bytes, c->misalign);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 7300u, .create = create};
