// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_buddy.c -- the model rig (rig.h) over binary buddy
 * heaps (rtmem/buddy.h), through the typed API and a rig_ops adapter of its
 * own (the generic "buddy:<page>" name is wired by the integration work).
 *
 * Cases cover the smallest page (64) to 4 KiB, heaps of a handful of pages
 * (every step checked) up to thousands, regions that are a power of two of
 * pages and regions that are not (several maximal blocks), and odd start
 * addresses. Requests are drawn up to the whole arena, so the rig hits
 * exhaustion and exact largest_free probes at every order.
 *
 * What the buddy promises the rig (flags):
 *  - the whole rtmem contract (RIG_RTMEM_CONTRACT): exact stats, exact
 *    largest_free, full coalescing, realloc(p, 0) frees, errno ENOMEM,
 *    exact walk, shrink in place;
 *  - RIG_LARGEST_IS_BIGGEST: every free block can be allocated whole, and
 *    largest_free is page << the highest non-empty order;
 *  - RIG_ALIGN_ENOTSUP: alignments above the arena start's alignment (or the
 *    largest block) are refused with ENOTSUP.
 * Every flag the rig has is set; alignment is the page size (every block
 * starts on a page) and the per-block overhead is 0 (no header).
 *
 * Seeds are fixed; RTMEM_SEED or --seed replaces them. A failure prints the
 * command line that replays it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rig.h"
#include "rtmem/buddy.h"

static void *bd_alloc(void *ctx, size_t n) { return rtm_buddy_alloc(ctx, n); }
static void *bd_aligned(void *ctx, size_t a, size_t n)
{
    return rtm_buddy_aligned_alloc(ctx, a, n);
}
static void *bd_realloc(void *ctx, void *p, size_t n) { return rtm_buddy_realloc(ctx, p, n); }
static int bd_free(void *ctx, void *p) { return rtm_buddy_free(ctx, p); }
static size_t bd_usable(void *ctx, const void *p) { return rtm_buddy_usable_size(ctx, p); }
static void bd_stats(void *ctx, rtm_stats *out) { *out = rtm_buddy_stats(ctx); }
static int bd_check(void *ctx) { return rtm_buddy_check(ctx); }
static int bd_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_buddy_walk(ctx, v, arg);
    return 0;
}

static rig_ops rig_ops_buddy(rtm_buddy *b)
{
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = "buddy typed";
    ops.ctx = b;
    ops.alloc = bd_alloc;
    ops.aligned_alloc = bd_aligned;
    ops.realloc = bd_realloc;
    ops.free = bd_free;
    ops.usable_size = bd_usable;
    ops.stats = bd_stats;
    ops.check = bd_check;
    ops.walk = bd_walk;
    ops.alignment = rtm_buddy_page_size(b);
    ops.block_overhead = RTM_BUDDY_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT | RIG_LARGEST_IS_BIGGEST | RIG_ALIGN_ENOTSUP;
    return ops;
}

typedef struct model_case {
    const char *band;
    size_t page;
    size_t pages;    /* region from rtm_buddy_region_for(pages), or ...   */
    size_t bytes;    /* ... a region of exactly this many bytes (pages 0) */
    size_t misalign; /* start address mod 64                             */
    size_t check_every;
    size_t steps;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 64, 1, 0, 0, 1, 20000, 2},
    {"small", 64, 16, 0, 3, 1, 40000, 3},
    {"small", 128, 13, 0, 5, 1, 40000, 3},
    {"small", 256, 0, 20000, 7, 1, 40000, 3},
    {"small", 4096, 8, 0, 0, 1, 20000, 2},
    {"small", 64, 100, 0, 63, 1, 60000, 2},
    {"medium", 64, 1024, 0, 0, 16, 200000, 2},
    {"medium", 4096, 0, 1024 * 1024 + 5, 9, 16, 200000, 2},
    {"medium", 512, 777, 0, 2, 32, 200000, 2},
    {"medium", 64, 0, 256 * 1024 + 33, 1, 64, 200000, 2},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_case *c = &cases[index];
    size_t bytes = c->pages ? rtm_buddy_region_for(c->pages, c->page) : c->bytes;
    test_region region = region_malloc(bytes, c->misalign);
    rtm_buddy *b = rtm_buddy_create(region.mem, region.bytes, c->page);
    REQUIRE(b != NULL);
    size_t pages = rtm_buddy_page_count(b);
    rig_ops ops = rig_ops_buddy(b);
    ops.region_count = 1;
    ops.regions[0].base = region.mem;
    ops.regions[0].bytes = region.bytes;

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, c->band, index);
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = steps;
    cfg.max_live = pages + 16u;
    cfg.max_request = pages * c->page;
    cfg.max_alignment = c->page * 8u;
    cfg.check_every = c->check_every;
    cfg.sweep_every = c->check_every == 1 ? 200u : 2000u;
    cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&ops, &cfg, &res);
    char label[200];
    snprintf(label, sizeof label, "case %zu [%s, buddy:%zu, %zu pages, %zu B, seed %llu] %s %.2fs",
             index, c->band, c->page, pages, region.bytes, (unsigned long long)seed,
             rc == 0 ? "ok" : "FAIL", check_now_seconds() - t0);
    if (verbose || rc != 0)
        rig_print_result(label, &res);
    else
        printf("%s\n", label);
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
    static const rig_suite suite = {CASE_COUNT, case_info, 7000u, run_case};
    return rig_main(argc, argv, &suite);
}
