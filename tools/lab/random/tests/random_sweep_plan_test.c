// SPDX-License-Identifier: MIT
/*
 * random_sweep_plan_test.c -- unit test of the pure parts of
 * `rtmem bench random --sweep` (random_sweep_plan.c): the window list, the
 * 0-byte rule, the seeds, the option rules, the compact table's rows, and
 * the statistics of a window over rounds and of a curve over windows (a
 * refused window must never become a point of the curve).
 *
 * Prints every failed check and exits 1 when any failed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "random/random_sweep.h"
#include "common/tests/check.h"

static void test_windows(void)
{
    /* The study's sweep: x = 0, 64, ..., 16320 is 256 windows. */
    CHECK(sweep_window_count(64, 16320) == 256);
    CHECK(sweep_window_count(1024, 16320) == 16); /* 0 .. 15360 */
    CHECK(sweep_window_count(64, 0) == 1);
    CHECK(sweep_window_count(64, 63) == 1);
    CHECK(sweep_window_count(64, 64) == 2);
    CHECK(sweep_window_count(0, 16320) == 0);

    sweep_window w = sweep_window_at(64, 0);
    CHECK(w.x == 0 && w.lo == 1 && w.hi == 64); /* no 0-byte request */
    w = sweep_window_at(64, 1);
    CHECK(w.x == 64 && w.lo == 64 && w.hi == 128);
    w = sweep_window_at(64, 255);
    CHECK(w.x == 16320 && w.lo == 16320 && w.hi == 16384);
    w = sweep_window_at(8, 3);
    CHECK(w.x == 24 && w.lo == 24 && w.hi == 88); /* windows may overlap */
}

static void test_seeds(void)
{
    CHECK(sweep_window_seed(42, 7) == sweep_window_seed(42, 7));
    CHECK(sweep_window_seed(42, 7) != sweep_window_seed(42, 8));
    CHECK(sweep_window_seed(42, 7) != sweep_window_seed(43, 7));
    /* Round r+1's window i is not round r's window i+1. */
    CHECK(sweep_window_seed(43, 7) != sweep_window_seed(42, 8));
    CHECK(sweep_window_seed(0, 0) != 0);
}

static void test_check(void)
{
    char why[160];
    CHECK(sweep_check(64, 16320, 20000, 10000, why, sizeof why) == 0 && why[0] == '\0');
    CHECK(sweep_check(8, 0, 1, 1, why, sizeof why) == 0);
    CHECK(sweep_check(0, 16320, 20000, 10000, why, sizeof why) != 0);
    CHECK(strstr(why, "--sweep-step") != NULL);
    CHECK(sweep_check(12, 16320, 20000, 10000, why, sizeof why) != 0);
    CHECK(strstr(why, "multiple of 8") != NULL);
    CHECK(sweep_check(64, UINT32_MAX, 20000, 10000, why, sizeof why) != 0);
    CHECK(sweep_check(64, (uint64_t)UINT32_MAX - SWEEP_WIDTH, 20000, 1, why, sizeof why) != 0);
    CHECK(strstr(why, "windows") != NULL); /* too many windows */
    CHECK(sweep_check(8, 8u * (SWEEP_MAX_WINDOWS - 1u), 1, 1, why, sizeof why) == 0);
    CHECK(sweep_check(8, 8u * SWEEP_MAX_WINDOWS, 1, 1, why, sizeof why) != 0);
    CHECK(sweep_check(64, 16320, 0, 10000, why, sizeof why) != 0);
    CHECK(strstr(why, "--sweep-iterations") != NULL);
    CHECK(sweep_check(1u << 20, 1u << 30, 1, UINT64_MAX / 4u, why, sizeof why) != 0);
    CHECK(strstr(why, "too large") != NULL);
}

static void test_table_rows(void)
{
    size_t rows = 0;
    for (size_t i = 0; i < 256; i++)
        rows += (size_t)sweep_table_row(i, 256);
    CHECK(rows == 17); /* 0, 16, ..., 240 and the last (255) */
    CHECK(sweep_table_row(0, 256) && sweep_table_row(240, 256) && sweep_table_row(255, 256));
    CHECK(!sweep_table_row(1, 256) && !sweep_table_row(254, 256));
    for (size_t i = 0; i < 16; i++)
        CHECK(sweep_table_row(i, 16));
    CHECK(sweep_table_row(0, 1));
}

static void test_cell(void)
{
    double scratch[4];
    const double ns[3] = {3.0, 1.0, 2.0};
    const uint64_t none[3] = {0, 0, 0}, one[3] = {0, 5, 0}, all[3] = {1, 2, 3};
    const int ok[3] = {1, 1, 1}, ok_first_bad[3] = {0, 1, 1};

    sweep_cell c = sweep_cell_of(ns, none, ok, 3, scratch);
    CHECK(c.min == 1.0 && c.median == 2.0 && c.clean_runs == 3 && c.refused == 0 &&
          c.refused_runs == 0);
    /* The round with refusals (and its fast 1.0) is left out, but counted. */
    c = sweep_cell_of(ns, one, ok, 3, scratch);
    CHECK(c.min == 2.0 && c.median == 2.5 && c.clean_runs == 2);
    CHECK(c.refused == 5 && c.refused_runs == 1);
    c = sweep_cell_of(ns, all, ok, 3, scratch);
    CHECK(isnan(c.min) && isnan(c.median) && c.clean_runs == 0);
    CHECK(c.refused == 6 && c.refused_runs == 3);
    /* A round that did not report the window, or was not valid, is out. */
    c = sweep_cell_of(ns, none, ok_first_bad, 3, scratch);
    CHECK(c.min == 1.0 && c.median == 1.5 && c.clean_runs == 2);
    c = sweep_cell_of(ns, none, ok, 0, scratch);
    CHECK(isnan(c.median) && c.clean_runs == 0);
}

static void test_curve(void)
{
    const double v[4] = {NAN, 2.0, 5.0, 1.0};
    sweep_curve_stats st = sweep_curve_of(v, 4);
    CHECK(st.max == 5.0 && st.argmax == 2 && st.plotted == 3);
    CHECK(fabs(st.mean - 8.0 / 3.0) < 1e-12);
    const double gaps[2] = {NAN, NAN};
    st = sweep_curve_of(gaps, 2);
    CHECK(st.plotted == 0 && isnan(st.max) && isnan(st.mean));
    st = sweep_curve_of(v, 0);
    CHECK(st.plotted == 0);
}

int main(void)
{
    test_windows();
    test_seeds();
    test_check();
    test_table_rows();
    test_cell();
    test_curve();
    if (failures != 0) {
        fprintf(stderr, "random_sweep_plan_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("random_sweep_plan_test: all checks passed\n");
    return 0;
}
