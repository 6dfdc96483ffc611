// SPDX-License-Identifier: MIT
/*
 * memcheck_math_test.c -- the lab's arithmetic on known inputs, so that a
 * wrong figure in a report is caught here and not by a reader:
 *
 *   summary.c     min / median / max / mean / spread, nearest-rank quantiles
 *   hist.c        histogram quantiles (exact below 128, within 1/64 above)
 *   memcheck      the "overall" block of a phase from hand-made rows; OVRH%
 *                 and FRAG% and the fragmentation probe on hand-built heaps
 *                 whose answer is known (a pool holds exactly
 *                 floor(heap / stride) blocks and can give only one block
 *                 back; a coalescing TLSF freed in order has no
 *                 fragmentation); the ideal heap's reference.
 *
 * Every expectation is computed from the method's definitions
 * (docs/METHODS.md), not copied from a run.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/hist.h"
#include "memcheck/memcheck.h"
#include "common/summary.h"
#include "common/tests/check.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b)); }

static void test_summary(void)
{
    double odd[] = {5, 1, 3, 2, 4};
    summary s = summarize(odd, 5);
    CHECK(s.n == 5 && s.min == 1 && s.max == 5 && s.median == 3 && near(s.mean, 3));
    CHECK(near(s.spread, 5));
    double even[] = {4, 1, 3, 2};
    s = summarize(even, 4);
    CHECK(near(s.median, 2.5) && near(s.mean, 2.5));
    s = summarize(NULL, 0);
    CHECK(s.n == 0 && s.min == 0 && s.median == 0 && s.spread == 0);
    double zero_min[] = {0, 2};
    CHECK(summarize(zero_min, 2).spread == 0); /* max / 0 is not a spread */
    double sorted[10];
    for (int i = 0; i < 10; i++)
        sorted[i] = i + 1;
    CHECK(sorted_quantile(sorted, 10, 0.0) == 1);
    CHECK(sorted_quantile(sorted, 10, 0.5) == 5);  /* ceil(5) = 5th smallest   */
    CHECK(sorted_quantile(sorted, 10, 0.51) == 6); /* ceil(5.1) = 6th smallest */
    CHECK(sorted_quantile(sorted, 10, 0.99) == 10);
    CHECK(sorted_quantile(sorted, 10, 1.0) == 10);
    CHECK(sorted_quantile(sorted, 0, 0.5) == 0);
}

static void test_hist(void)
{
    static hist h;
    memset(&h, 0, sizeof h);
    for (uint64_t v = 0; v < 100; v++)
        hist_add(&h, v);
    CHECK(h.count == 100 && h.sum == 4950 && h.max == 99);
    CHECK(hist_quantile(&h, 0.5) == 49); /* 50th smallest of 0..99, exact bucket */
    CHECK(hist_quantile(&h, 1.0) == 99);
    memset(&h, 0, sizeof h);
    hist_add(&h, 1000);
    CHECK(hist_quantile(&h, 0.5) == 1000); /* clamped to the exact maximum */
    hist_add(&h, 100000);
    uint64_t q = hist_quantile(&h, 0.5); /* 1000's bucket: within 1/64 above it */
    CHECK(q >= 1000 && q <= 1000 + 1000 / 64 + 1);
    memset(&h, 0, sizeof h);
    CHECK(hist_quantile(&h, 0.5) == 0);
}

static mc_row row(size_t nrblocks, uint64_t asum, uint64_t amax, uint64_t fsum, uint64_t fmax_,
                  double ovrh, double frag)
{
    mc_row r;
    memset(&r, 0, sizeof r);
    r.nrblocks = nrblocks;
    r.alloc_sum = asum;
    r.alloc_max = amax;
    r.free_sum = fsum;
    r.free_max = fmax_;
    r.overhead = ovrh;
    r.frag = frag;
    return r;
}

/* The method's overall block: worst = max of MAX, averages of MAX, of
 * AVG = sum / nrblocks, of OVRH% and FRAG%; rows in ns, block in us. */
static void test_overall(void)
{
    mc_row rows[2] = {row(10, 10000, 3000, 5000, 1000, 10, 20),
                      row(5, 2500, 800, 5000, 4000, 30, 0)};
    mc_phase ph = {"test", rows, 2, 2, 2, 0};
    mc_overall o = mc_overall_of(&ph);
    CHECK(o.n == 2);
    CHECK(near(o.worst_alloc, 3.0) && near(o.worst_free, 4.0));
    CHECK(near(o.avg_max_alloc, (3.0 + 0.8) / 2) && near(o.avg_max_free, (1.0 + 4.0) / 2));
    CHECK(near(o.avg_alloc, (1.0 + 0.5) / 2)); /* 10000/10 ns and 2500/5 ns */
    CHECK(near(o.avg_free, (0.5 + 1.0) / 2));
    CHECK(near(o.overhead, 20) && near(o.frag, 10));
    mc_phase empty = {"empty", NULL, 0, 0, 0, 0};
    o = mc_overall_of(&empty);
    CHECK(o.n == 0 && isnan(o.overhead)); /* no rows: no average, never 0 % */
}

static mc_ctx ctx;

static void run(const char *algorithm, size_t heap, size_t block, int flags, mc_row *r)
{
    ctx.algorithm = algorithm;
    ctx.narenas = 0;
    int rc = mc_run(&ctx, heap, block, flags, r);
    if (rc != 0)
        fprintf(stderr, "mc_run(%s, %zu, %zu, %d): %s\n", algorithm, heap, block, flags, ctx.why);
    CHECK(rc == 0);
}

/* A pool of the run's block size holds exactly floor(heap / stride)
 * blocks; it can give back one block only, so the probe after freeing half
 * must find largest_free = block. */
static void test_pool_heap(void)
{
    mc_row r;
    run("pool", 8192, 64, 0, &r);
    CHECK(r.nrblocks == 128 && r.user_size == 8192);
    CHECK(near(r.overhead, 0.0));
    CHECK(r.maximum_free == 4096 && r.largest_free == 64);
    CHECK(near(r.frag, (1.0 - 64.0 / 4096.0) * 100.0));

    run("pool", 8192, 100, MC_SHUFFLE, &r); /* stride 104: 78 blocks */
    CHECK(r.nrblocks == 8192 / 104 && r.user_size == 78 * 100);
    CHECK(near(r.overhead, 100.0 - 7800.0 * 100.0 / 8192.0));
    /* The probe runs when the freed bytes first reach half of user_size:
     * 39 blocks of 100 = 3900 = 7800 / 2. */
    CHECK(r.maximum_free == 3900 && r.largest_free == 100);
    CHECK(near(r.frag, (1.0 - 100.0 / 3900.0) * 100.0));
}

/* A coalescing heap freed in allocation order keeps its freed half in one
 * block: the probe's first try (all the freed bytes) succeeds, FRAG = 0. */
static void test_tlsf_heap(void)
{
    mc_row r, hot;
    run("tlsf", 16384, 1000, 0, &r);
    CHECK(r.nrblocks > 0 && r.nrblocks <= 16); /* never more than heap / block */
    CHECK(r.user_size == r.nrblocks * 1000);
    CHECK(near(r.overhead, 100.0 - (double)r.user_size * 100.0 / 16384.0));
    CHECK(r.largest_free == r.maximum_free && near(r.frag, 0.0));
    run("tlsf", 16384, 1000, MC_HOT, &hot); /* the second pass fits as many */
    CHECK(hot.nrblocks == r.nrblocks);
}

/* The ideal heap: no header, no rounding, contiguous: floor(heap / block)
 * blocks, and no fragmentation when freed in order. */
static void test_ideal(void)
{
    double ovrh, frag;
    mc_ideal(&ctx, 8192, 3000, 0, &ovrh, &frag);
    CHECK(near(ovrh, 100.0 - 2.0 * 3000.0 * 100.0 / 8192.0));
    CHECK(near(frag, 0.0));
    mc_ideal(&ctx, 8192, 64, 0, &ovrh, &frag);
    CHECK(near(ovrh, 0.0) && near(frag, 0.0));
}

int main(void)
{
    test_summary();
    test_hist();
    test_overall();
    static mc_params p;
    p.algorithm = "tlsf";
    p.seq_heap_size = 32768;
    p.pattern_heap_size = 8192;
    p.seed = 42;
    if (mc_ctx_init(&ctx, &p) != 0) {
        fprintf(stderr, "cannot map the buffers\n");
        return 1;
    }
    test_pool_heap();
    test_tlsf_heap();
    test_ideal();
    if (failures == 0)
        printf("memcheck_math_test: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
