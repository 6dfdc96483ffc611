// SPDX-License-Identifier: MIT
/*
 * zram_plan_test.c -- unit test of the pure parts of `rtmem bench zram`
 * (zram_plan.c and the inline size draw in zram.h): the zram case's sizes
 * stay in [1, 4096] and follow the band weights, the mean is the table's,
 * efficiency, the page set (pages holding live bytes, each counted once),
 * the VmRSS reader, the RSS growth, the summary's bands and finite means.
 *
 * Prints every failed check and exits 1 when any failed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/prng.h"
#include "zram/zram.h"
#include "common/tests/check.h"

static void test_table(void)
{
    uint32_t sum = 0;
    for (size_t b = 0; b < ZRAM_DIST_BANDS; b++) {
        sum += zram_dist[b].weight;
        CHECK(zram_dist[b].lo < zram_dist[b].hi);
        CHECK(b == 0 || zram_dist[b].lo == zram_dist[b - 1].hi); /* contiguous */
    }
    CHECK(sum == 1000);
    CHECK(zram_dist[0].lo == 1 && zram_dist[ZRAM_DIST_BANDS - 1].hi == ZRAM_PAGE + 1u);
    /* The exact mean of the table: sum of weight x (lo + hi - 1) / 2. */
    CHECK(fabs(zram_dist_mean() - 1831.54) < 0.001);
}

/* Ends of the 32-bit input: the first and the last band, their ends. */
static void test_draw_ends(void)
{
    CHECK(zram_dist_size(0) == 1);
    CHECK(zram_dist_size(0xffffffffu) == ZRAM_PAGE);
    CHECK(zram_dist_size(0xffff0000u) == 63); /* band 0, top of its span */
    for (uint64_t v = 0; v <= 0xffffffffu; v += 0x10001u) {
        uint32_t s = zram_dist_size((uint32_t)v);
        if (s < 1 || s > ZRAM_PAGE) {
            CHECK(s >= 1 && s <= ZRAM_PAGE);
            break;
        }
    }
}

/* 2^20 draws: each band's share within 1 % of its weight, the mean within
 * 1 % of the table's. */
static void test_draw_shares(void)
{
    bench_rng r;
    rng_seed(&r, 12345);
    uint64_t hits[ZRAM_DIST_BANDS] = {0};
    double sum = 0;
    const uint32_t n = 1u << 20;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = zram_dist_size((uint32_t)(rng_next(&r) >> 32));
        sum += s;
        for (size_t b = 0; b < ZRAM_DIST_BANDS; b++)
            if (s >= zram_dist[b].lo && s < zram_dist[b].hi)
                hits[b]++;
    }
    for (size_t b = 0; b < ZRAM_DIST_BANDS; b++)
        CHECK(fabs((double)hits[b] / n - zram_dist[b].weight / 1000.0) < 0.01);
    CHECK(fabs(sum / n / zram_dist_mean() - 1.0) < 0.01);
}

static void test_efficiency(void)
{
    CHECK(isnan(zram_efficiency(100, 0)));
    CHECK(zram_efficiency(0, 4096) == 0.0);
    CHECK(zram_efficiency(2048, 4096) == 0.5);
    CHECK(zram_efficiency(8192, 4096) == 2.0); /* never clamped: a bug would show */
}

static void test_pageset(void)
{
    uint64_t bits[2] = {0, 0};
    zram_pageset s = {bits, 100, 0};
    zram_pageset_mark(&s, 0, 0); /* empty: nothing */
    CHECK(s.count == 0);
    zram_pageset_mark(&s, 0, 1);
    CHECK(s.count == 1 && bits[0] == 1);
    zram_pageset_mark(&s, 100, 200); /* same page again */
    CHECK(s.count == 1);
    zram_pageset_mark(&s, 4095, 2); /* straddles pages 0 and 1 */
    CHECK(s.count == 2 && bits[0] == 3);
    zram_pageset_mark(&s, 63u * ZRAM_PAGE, 2u * ZRAM_PAGE); /* pages 63, 64: across words */
    CHECK(s.count == 4 && (bits[0] >> 63) == 1 && (bits[1] & 1) == 1);
    zram_pageset_mark(&s, 99u * ZRAM_PAGE, 10u * ZRAM_PAGE); /* beyond npages: cut */
    CHECK(s.count == 5);
    zram_pageset_mark(&s, 200u * ZRAM_PAGE, 1); /* wholly beyond */
    CHECK(s.count == 5);
}

static void test_vmrss(void)
{
    uint64_t kb = 7;
    CHECK(zram_parse_vmrss("Name:\tx\nVmPeak:\t  900 kB\nVmRSS:\t    1234 kB\nRssAnon:\t 5 kB\n",
                           &kb) == 0 &&
          kb == 1234);
    CHECK(zram_parse_vmrss("VmRSS:\t42 kB", &kb) == 0 && kb == 42);
    kb = 7;
    CHECK(zram_parse_vmrss("Name:\tVmRSS:\t5 kB\n", &kb) == -1 &&
          kb == 7); /* not at a line start */
    CHECK(zram_parse_vmrss("VmRSS:\tgarbage\n", &kb) == -1);
    CHECK(zram_parse_vmrss("", &kb) == -1);
    CHECK(zram_rss_growth(100, 150) == 50u * 1024u);
    CHECK(zram_rss_growth(150, 100) == 0);
    CHECK(zram_rss_growth(100, 100) == 0);
}

static void test_bands(void)
{
    CHECK(zram_xband_of(0) == 0);
    CHECK(zram_xband_of(511) == 0);
    CHECK(zram_xband_of(512) == 1);
    CHECK(zram_xband_of(2048) == 3);
    CHECK(zram_xband_of(4095) == 4);
    CHECK(zram_xband_of(4096) == 5);
    CHECK(zram_xband_of(16320) == ZRAM_XBANDS - 1);
    CHECK(zram_xband_of(UINT64_MAX) == ZRAM_XBANDS - 1);
    for (size_t b = 0; b < ZRAM_XBANDS; b++)
        CHECK(zram_xband_lo[b] < zram_xband_lo[b + 1]);
}

static void test_mean_finite(void)
{
    const double v[4] = {1.0, NAN, 3.0, 10.0};
    const unsigned char keep[4] = {1, 1, 1, 0};
    size_t k = 99;
    CHECK(zram_mean_finite(v, keep, 4, &k) == 2.0 && k == 2);
    CHECK(zram_mean_finite(v, NULL, 4, &k) == 14.0 / 3.0 && k == 3);
    CHECK(isnan(zram_mean_finite(v, keep, 0, &k)) && k == 0);
    const double none[2] = {NAN, INFINITY};
    CHECK(isnan(zram_mean_finite(none, NULL, 2, NULL)));
}

int main(void)
{
    test_table();
    test_draw_ends();
    test_draw_shares();
    test_efficiency();
    test_pageset();
    test_vmrss();
    test_bands();
    test_mean_finite();
    if (failures != 0) {
        fprintf(stderr, "zram_plan_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("zram_plan_test: all checks passed\n");
    return 0;
}
