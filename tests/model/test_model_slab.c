// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_slab.c -- the model rig (rig.h) over slab heaps
 * (rtmem/slab.h), through the typed API and a rig_ops adapter of its own.
 *
 * Cases cover the smallest page (256) to 4 KiB, tiny heaps (every step
 * checked) up to megabytes, odd start addresses. Requests are drawn up to
 * the whole arena, so both small classes and large buddy blocks are hit.
 *
 * What the slab promises the rig (flags): exact stats, realloc(p, 0) frees,
 * errno ENOMEM, exact walk (object slots and buddy blocks), shrink in
 * place, ENOTSUP for alignments the arena can never give, and coalescing
 * (RIG_COALESCES: an empty slab is cached only where it cannot split the
 * buddy's largest blocks, so freeing everything restores free_bytes and
 * largest_free). Not promised:
 *  - RIG_LARGEST_FREE_EXACT: with the buddy exhausted, largest_free is the
 *    largest class with a free slot, while a smaller class may be full.
 * Alignment is 8 (class 8); overhead 0 (no per-object header).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rig.h"
#include "rtmem/slab.h"

static void *bd_alloc(void *ctx, size_t n) { return rtm_slab_alloc(ctx, n); }
static void *bd_aligned(void *ctx, size_t a, size_t n) { return rtm_slab_aligned_alloc(ctx, a, n); }
static void *bd_realloc(void *ctx, void *p, size_t n) { return rtm_slab_realloc(ctx, p, n); }
static int bd_free(void *ctx, void *p) { return rtm_slab_free(ctx, p); }
static size_t bd_usable(void *ctx, const void *p) { return rtm_slab_usable_size(ctx, p); }
static void bd_stats(void *ctx, rtm_stats *out) { *out = rtm_slab_stats(ctx); }
static int bd_check(void *ctx) { return rtm_slab_check(ctx); }
static int bd_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_slab_walk(ctx, v, arg);
    return 0;
}

static rig_ops rig_ops_slab(rtm_slab *b)
{
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = "slab typed";
    ops.ctx = b;
    ops.alloc = bd_alloc;
    ops.aligned_alloc = bd_aligned;
    ops.realloc = bd_realloc;
    ops.free = bd_free;
    ops.usable_size = bd_usable;
    ops.stats = bd_stats;
    ops.check = bd_check;
    ops.walk = bd_walk;
    ops.alignment = RTM_ALIGN;
    ops.block_overhead = 0;
    ops.flags = RIG_STATS_EXACT | RIG_REALLOC_ZERO_FREES | RIG_ERRNO_ENOMEM | RIG_WALK_EXACT |
                RIG_SHRINK_IN_PLACE | RIG_ALIGN_ENOTSUP | RIG_COALESCES;
    return ops;
}

typedef struct model_case {
    const char *band;
    size_t page;
    size_t unused;   /* 0                                                 */
    size_t bytes;    /* region bytes                                      */
    size_t misalign; /* start address mod 64                             */
    size_t check_every;
    size_t steps;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 256, 0, 2000, 0, 1, 20000, 2},
    {"small", 256, 0, 6000, 3, 1, 40000, 3},
    {"small", 512, 0, 9000, 5, 1, 40000, 3},
    {"small", 4096, 0, 40000, 7, 1, 20000, 2},
    {"small", 1024, 0, 30000, 63, 1, 40000, 2},
    {"medium", 256, 0, 256 * 1024 + 33, 1, 64, 200000, 2},
    {"medium", 4096, 0, 1024 * 1024 + 5, 9, 16, 200000, 2},
    {"medium", 512, 0, 400000, 2, 32, 200000, 2},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_case *c = &cases[index];
    size_t bytes = c->bytes;
    test_region region = region_malloc(bytes, c->misalign);
    rtm_slab *b = rtm_slab_create(region.mem, region.bytes, c->page);
    REQUIRE(b != NULL);
    size_t pages = c->bytes / c->page;
    rig_ops ops = rig_ops_slab(b);
    ops.region_count = 1;
    ops.regions[0].base = region.mem;
    ops.regions[0].bytes = region.bytes;

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, c->band, index);
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = steps;
    cfg.max_live = pages * 64u + 16u;
    cfg.max_request = pages * c->page;
    cfg.max_alignment = c->page * 8u;
    cfg.check_every = c->check_every;
    cfg.sweep_every = c->check_every == 1 ? 200u : 2000u;
    cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&ops, &cfg, &res);
    char label[200];
    snprintf(label, sizeof label, "case %zu [%s, slab:%zu, %zu pages, %zu B, seed %llu] %s %.2fs",
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
