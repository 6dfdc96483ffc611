// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_xvmalloc.c -- the model rig (rig.h) over xvmalloc
 * heaps ("xvmalloc:<page>"), through the generic API (rig_ops_heap): the
 * heap has no typed API.
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
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rig.h"
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

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_case *c = &cases[index];
    test_region region = region_malloc(c->bytes, c->misalign);
    char name[40];
    snprintf(name, sizeof name, "xvmalloc:%zu", c->page);
    rtm_heap *h = rtm_heap_create(name, region.mem, region.bytes);
    REQUIRE(h != NULL);
    REQUIRE(rtm_heap_check(h) == 0);
    rig_ops ops = rig_ops_heap(h);
    ops.name = "xvmalloc";
    ops.flags = RIG_RTMEM_CONTRACT | RIG_ALIGN_ENOTSUP;
    ops.region_count = 1;
    ops.regions[0].base = region.mem;
    ops.regions[0].bytes = region.bytes;

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, c->band, index);
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = steps;
    cfg.max_request = c->max_request;
    cfg.max_alignment = c->max_alignment;
    cfg.check_every = c->check_every;
    cfg.sweep_every = c->check_every == 1 ? 200u : 2000u;
    cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&ops, &cfg, &res);
    char label[200];
    snprintf(label, sizeof label,
             "case %zu [%s, page %zu, %zu B, misalign %zu, seed %llu] %s %.2fs", index, c->band,
             c->page, c->bytes, c->misalign, (unsigned long long)seed, rc == 0 ? "ok" : "FAIL",
             check_now_seconds() - t0);
    if (verbose || rc != 0)
        rig_print_result(label, &res);
    else
        printf("%s\n", label);
    /* The run must have been refused and have emptied the heap, or it
     * proves less than it seems. */
    if (rc == 0 && (res.enomem == 0 || res.free_alls == 0)) {
        rig_print_result("  weak coverage", &res);
        rc = 1;
    }
    region_free(&region);
    return rc;
}

static rig_case_info case_info(size_t index)
{
    rig_case_info info = {cases[index].band, cases[index].steps, cases[index].seeds};
    return info;
}

int main(int argc, char **argv)
{
    static const rig_suite suite = {CASE_COUNT, case_info, 7100u, run_case};
    return rig_main(argc, argv, &suite);
}
