// SPDX-License-Identifier: MIT
/*
 * latency_stats_test.c -- unit test of latency_stats.c: the summary and the
 * percentiles (through common/summary.c, which lat_stats_of uses) and the
 * histogram on samples whose answers are known by hand, and the bmCtx*
 * suite's T_sw formula on known inputs.
 *
 * Its own program (tests_latency.cmake), with latency_stats.c and summary.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "latency/latency.h"

static int failures;

static void check_eq(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9 * (fabs(want) > 1 ? fabs(want) : 1)) {
        fprintf(stderr, "FAIL %s: got %.9g, want %.9g\n", what, got, want);
        failures++;
    }
}

/* 1..1000 ns in a scrambled order: every statistic is known. */
static void test_known_samples(void)
{
    double v[1000];
    for (unsigned i = 0; i < 1000; i++)
        v[i] = (double)((i * 379u) % 1000u + 1u); /* 379 is prime to 1000 */
    lat_stats s = lat_stats_of(v, 1000);
    check_eq("n", (double)s.n, 1000);
    check_eq("avg", s.avg, 500.5);
    check_eq("min", s.min, 1);
    check_eq("max", s.max, 1000);
    check_eq("p50", s.p50, 500);   /* ceil(0.5 * 1000)   = 500th  */
    check_eq("p99", s.p99, 990);   /* ceil(0.99 * 1000)  = 990th  */
    check_eq("p999", s.p999, 999); /* ceil(0.999 * 1000) = 999th  */
    check_eq("sorted", v[0] + v[999], 1001);

    /* Width nice(998 / 20 = 49.9) = 50 from 0: [0,50) holds 1..49, then 50
     * each up to [950,1000) which holds p99.9 = 999; 1000 overflows. */
    lat_hist h;
    lat_hist_build(v, 1000, &s, 20, &h);
    check_eq("hist width", h.width_ns, 50);
    check_eq("hist first", h.first_ns, 0);
    check_eq("hist buckets", h.nbuckets, 20);
    check_eq("hist bucket 0", (double)h.counts[0], 49);
    check_eq("hist bucket 1", (double)h.counts[1], 50);
    check_eq("hist bucket 19", (double)h.counts[19], 50);
    check_eq("hist overflow", (double)h.overflow, 1);
    uint64_t sum = h.overflow;
    for (unsigned b = 0; b < h.nbuckets; b++)
        sum += h.counts[b];
    check_eq("hist total", (double)sum, 1000);
}

/* A handful of samples: percentiles by the nearest rank. */
static void test_small(void)
{
    double v[] = {7000, 3000, 5000, 1000, 9000};
    lat_stats s = lat_stats_of(v, 5);
    check_eq("small avg", s.avg, 5000);
    check_eq("small p50", s.p50, 5000); /* ceil(2.5) = 3rd */
    check_eq("small p99", s.p99, 9000);
    check_eq("small p999", s.p999, 9000);
    double same[] = {3000, 3000, 3000};
    s = lat_stats_of(same, 3);
    lat_hist h;
    lat_hist_build(same, 3, &s, 20, &h);
    check_eq("same: one bucket", h.nbuckets, 1);
    check_eq("same: holds all", (double)h.counts[0], 3);
    check_eq("same: from the value", h.first_ns, 3000);
    s = lat_stats_of(NULL, 0);
    check_eq("empty n", (double)s.n, 0);
    lat_hist_build(NULL, 0, &s, 20, &h);
    check_eq("empty buckets", h.nbuckets, 0);
}

static void test_widths(void)
{
    check_eq("width 0", lat_nice_width(0, 20), 1);
    check_eq("width 25/5", lat_nice_width(25, 5), 5);
    check_eq("width 101/10", lat_nice_width(101, 10), 20);
    check_eq("width 1e6/1", lat_nice_width(1e6, 1), 1e6);
    check_eq("width 3e6/2", lat_nice_width(3e6, 2), 2e6);
}

/* T_sw = (T - T_r - T_l - 2 T_rt) / 2, the bmCtxTaskSwitch formula. */
static void test_tsw(void)
{
    check_eq("tsw", lat_tsw(1000, 200, 100, 25), 325);
    check_eq("tsw switches only", lat_tsw(10, 0, 0, 0), 5);
    check_eq("tsw published-like", lat_tsw(8.0, 1.5, 1.25, 0.125), 2.5);
    check_eq("tsw may go negative (callers clamp)", lat_tsw(100, 80, 40, 10), -20);
}

int main(void)
{
    test_known_samples();
    test_small();
    test_widths();
    test_tsw();
    if (failures != 0) {
        fprintf(stderr, "latency_stats_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("latency_stats_test: all checks passed\n");
    return 0;
}
