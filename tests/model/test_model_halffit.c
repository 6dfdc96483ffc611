// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_halffit.c -- the model rig (rig.h) over half-fit
 * heaps (rtmem/halffit.h), through a rig_ops adapter written here (the
 * generic API's "halffit" is wired by another change).
 *
 * Flags: the half-fit heap promises the whole rtmem contract
 * (RIG_RTMEM_CONTRACT). Not RIG_LARGEST_IS_BIGGEST: largest_free is what
 * alloc grants, (MIN_BLOCK << c) - header for the highest non-empty class
 * c, and a free block of that class may hold up to twice as much. Every
 * alignment the rig draws (up to 4096) is served, so no RIG_ALIGN_ENOTSUP.
 * Plain payloads are 16-aligned; the per-block overhead told to the rig is
 * the 16-byte header.
 *
 * Cases: heaps from a few blocks to megabytes, odd start addresses, checked
 * runs (check after every step) and long unchecked ones. Seeds are fixed;
 * RTMEM_SEED or --seed replaces them; a failure prints its replay line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rig.h"
#include "rtmem/halffit.h"

static void *hf_alloc(void *ctx, size_t n) { return rtm_halffit_alloc(ctx, n); }
static void *hf_aligned(void *ctx, size_t a, size_t n)
{
    return rtm_halffit_aligned_alloc(ctx, a, n);
}
static void *hf_realloc(void *ctx, void *p, size_t n) { return rtm_halffit_realloc(ctx, p, n); }
static int hf_free(void *ctx, void *p) { return rtm_halffit_free(ctx, p); }
static size_t hf_usable(void *ctx, const void *p) { return rtm_halffit_usable_size(ctx, p); }
static void hf_stats(void *ctx, rtm_stats *out) { *out = rtm_halffit_stats(ctx); }
static int hf_check(void *ctx) { return rtm_halffit_check(ctx); }
static int hf_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_halffit_walk(ctx, v, arg);
    return 0;
}

static rig_ops rig_ops_halffit(rtm_halffit *h)
{
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = "halffit typed";
    ops.ctx = h;
    ops.alloc = hf_alloc;
    ops.aligned_alloc = hf_aligned;
    ops.realloc = hf_realloc;
    ops.free = hf_free;
    ops.usable_size = hf_usable;
    ops.stats = hf_stats;
    ops.check = hf_check;
    ops.walk = hf_walk;
    ops.alignment = 16u;
    ops.block_overhead = RTM_HALFFIT_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT;
    return ops;
}

typedef struct model_case {
    const char *band;
    size_t bytes;
    size_t misalign;
    size_t check_every;
    size_t steps;
    size_t max_request; /* 0: the rig's default (the region) */
    size_t max_alignment;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 800, 0, 1, 20000, 0, 64, 3},
    {"small", 1000, 3, 1, 30000, 0, 64, 3},
    {"small", 4096 + 600, 7, 1, 60000, 512, 256, 3},
    {"small", 20000, 1, 1, 60000, 2048, 1024, 2},
    {"medium", 100000, 5, 16, 200000, 4096, 4096, 2},
    {"medium", 1u << 20, 0, 64, 200000, 65536, 4096, 2},
    {"medium", 3u << 20, 2, 256, 200000, 0, 4096, 1},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_case *c = &cases[index];
    test_region region = region_malloc(c->bytes, c->misalign);
    rtm_halffit *h = rtm_halffit_create(region.mem, region.bytes);
    REQUIRE(h != NULL);
    REQUIRE(rtm_halffit_check(h) == 0);
    rig_ops ops = rig_ops_halffit(h);
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
    snprintf(label, sizeof label, "case %zu [%s, %zu B, misalign %zu, seed %llu] %s %.2fs", index,
             c->band, c->bytes, c->misalign, (unsigned long long)seed, rc == 0 ? "ok" : "FAIL",
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
    static const rig_suite suite = {CASE_COUNT, case_info, 7000u, run_case};
    return rig_main(argc, argv, &suite);
}
