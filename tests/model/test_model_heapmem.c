// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_heapmem.c -- the model rig (rig.h) over heapmem
 * heaps (rtmem/heapmem.h), through the typed API and a rig_ops adapter of
 * its own (the generic "heapmem:<page>" name is wired by the integration
 * work).
 *
 * Cases cover the smallest page (64) to 4 KiB, heaps of one page (every
 * step checked) up to thousands, and odd start addresses. Requests are
 * drawn up to the whole arena, so the rig hits exhaustion and exact
 * largest_free probes both in buckets and in page ranges.
 *
 * What heapmem promises the rig (flags):
 *  - the whole rtmem contract (RIG_RTMEM_CONTRACT): exact stats, exact
 *    largest_free (alloc(n) succeeds iff n <= largest_free), full
 *    coalescing, realloc(p, 0) frees, errno ENOMEM, exact walk (bucket
 *    slots and ranges), shrink in place;
 *  - RIG_ALIGN_ENOTSUP: alignments above the page size are refused.
 * Not RIG_LARGEST_IS_BIGGEST: largest_free is the head range of the top
 * range list, which may be shorter than another range of that list.
 * Plain alignment is 16 (the smallest bucket); overhead 0 (no header).
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
#include "rtmem/heapmem.h"

static void *hm_alloc(void *ctx, size_t n) { return rtm_heapmem_alloc(ctx, n); }
static void *hm_aligned(void *ctx, size_t a, size_t n)
{
    return rtm_heapmem_aligned_alloc(ctx, a, n);
}
static void *hm_realloc(void *ctx, void *p, size_t n) { return rtm_heapmem_realloc(ctx, p, n); }
static int hm_free(void *ctx, void *p) { return rtm_heapmem_free(ctx, p); }
static size_t hm_usable(void *ctx, const void *p) { return rtm_heapmem_usable_size(ctx, p); }
static void hm_stats(void *ctx, rtm_stats *out) { *out = rtm_heapmem_stats(ctx); }
static int hm_check(void *ctx) { return rtm_heapmem_check(ctx); }
static int hm_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_heapmem_walk(ctx, v, arg);
    return 0;
}

static rig_ops rig_ops_heapmem(rtm_heapmem *b)
{
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = "heapmem typed";
    ops.ctx = b;
    ops.alloc = hm_alloc;
    ops.aligned_alloc = hm_aligned;
    ops.realloc = hm_realloc;
    ops.free = hm_free;
    ops.usable_size = hm_usable;
    ops.stats = hm_stats;
    ops.check = hm_check;
    ops.walk = hm_walk;
    ops.alignment = RTM_HEAPMEM_MIN_BUCKET;
    ops.block_overhead = RTM_HEAPMEM_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT | RIG_ALIGN_ENOTSUP;
    return ops;
}

typedef struct model_case {
    const char *band;
    size_t page;
    size_t pages;    /* region for about `pages` pages, or ...   */
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
    {"small", 512, 40, 0, 0, 1, 40000, 3},
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
    size_t bytes = c->pages ? (c->pages * (c->page + rtm_heapmem_entry_size(c->page)) +
                               rtm_heapmem_min_region(c->page))
                            : c->bytes;
    test_region region = region_malloc(bytes, c->misalign);
    rtm_heapmem *b = rtm_heapmem_create(region.mem, region.bytes, c->page);
    REQUIRE(b != NULL);
    size_t pages = rtm_heapmem_page_count(b);
    rig_ops ops = rig_ops_heapmem(b);
    ops.region_count = 1;
    ops.regions[0].base = region.mem;
    ops.regions[0].bytes = region.bytes;

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, c->band, index);
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = steps;
    cfg.max_live = pages * (c->page / 16u) + 16u > 4096u ? 4096u : pages * (c->page / 16u) + 16u;
    cfg.max_request = pages * c->page;
    cfg.max_alignment = c->page * 2u;
    cfg.check_every = c->check_every;
    cfg.sweep_every = c->check_every == 1 ? 200u : 2000u;
    cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&ops, &cfg, &res);
    char label[200];
    snprintf(label, sizeof label,
             "case %zu [%s, heapmem:%zu, %zu pages, %zu B, seed %llu] %s %.2fs", index, c->band,
             c->page, pages, region.bytes, (unsigned long long)seed, rc == 0 ? "ok" : "FAIL",
             check_now_seconds() - t0);
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
    static const rig_suite suite = {CASE_COUNT, case_info, 9000u, run_case};
    return rig_main(argc, argv, &suite);
}
