// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_xvmalloc.c -- the model rig (rig.h) over xvmalloc
 * heaps ("xvmalloc:<page>"), through the generic API (rig_ops_heap): the
 * heap has no typed API. The cases and hooks are here; model_driver.c runs
 * them.
 *
 * What xvmalloc promises the rig (flags):
 *  - the whole rtmem contract (RIG_RTMEM_CONTRACT): exact stats; exact
 *    largest_free (alloc(n) succeeds iff n <= largest_free, which is a
 *    page's payload while an empty page remains, so every request above a
 *    page is refused and the rig sees that as honest); full coalescing
 *    (freeing everything gives every page back); realloc(p, 0) frees;
 *    errno ENOMEM; exact walk (empty pages walk as one free block each);
 *    shrink in place;
 *  - RIG_ALIGN_ENOTSUP: alignments above 8 are refused.
 * Not RIG_LARGEST_IS_BIGGEST: with no empty page, largest_free is the head
 * of the highest list, which a removal can leave smaller than another
 * block of that list (as TLSF).
 *
 * Cases: the smallest page (256) to the largest (65536), heaps of one page
 * (every step checked) to megabytes, odd start addresses; requests drawn up
 * to twice a page so refusals above the page come often. Seeds are fixed;
 * RTMEM_SEED or --seed replaces them; a failure prints its replay line.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"

typedef struct model_case {
    const char *band;
    size_t page;
    size_t bytes;
    size_t misalign;
    size_t check_every;
    size_t steps;
    size_t max_request;
    size_t max_alignment;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 256, 1200, 0, 1, 20000, 300, 64, 3},
    {"small", 512, 3000, 3, 1, 30000, 1024, 64, 3},
    {"small", 4096, 4096 + 1100, 7, 1, 30000, 8192, 256, 3},
    {"small", 4096, 40000, 1, 1, 60000, 2048, 1024, 2},
    {"medium", 4096, 200000, 5, 16, 200000, 8192, 4096, 2},
    {"medium", 65536, 1u << 20, 0, 64, 200000, 131072, 4096, 2},
    {"medium", 8192, 3u << 20, 2, 256, 200000, 4096, 64, 1},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    test_region *region = model_region(h, c->bytes, c->misalign);
    char name[40];
    snprintf(name, sizeof name, "xvmalloc:%zu", c->page);
    rtm_heap *heap = rtm_heap_create(name, region->mem, region->bytes);
    REQUIRE(heap != NULL);
    REQUIRE(rtm_heap_check(heap) == 0);
    h->ops = rig_ops_heap(heap);
    h->ops.name = "xvmalloc";
    h->ops.flags = RIG_RTMEM_CONTRACT | RIG_ALIGN_ENOTSUP;
    h->cfg.max_request = c->max_request;
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s, page %zu, %zu B, misalign %zu", c->band, c->page,
             c->bytes, c->misalign);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 7100u, .create = create};
