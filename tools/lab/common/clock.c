// SPDX-License-Identifier: MIT
/*
 * clock.c -- calibration of the tick clock (clock.h): ticks per nanosecond
 * against CLOCK_MONOTONIC, and the clock's own cost.
 *
 * Calibration reads both clocks at the start and the end of a ~100 ms spin.
 * Each end is bracketed (monotonic, tsc, monotonic) and the tightest of a few
 * brackets is kept, so a preemption during one read pair costs nothing; a
 * preemption during the spin does not matter since both clocks keep running.
 * The remaining error is a bracket width over 100 ms: well under 0.01 %.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"

#if BENCH_HAVE_TSC
#include <cpuid.h>
#endif

#define CAL_SPIN_NS  UINT64_C(100000000)
#define COST_SAMPLES 100000u

int clock_tsc_usable(void)
{
#if BENCH_HAVE_TSC
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
#else
    return 0;
#endif
}

#if BENCH_HAVE_TSC
/* One (monotonic ns, tsc) pair, the tightest bracket of five tries. */
static void clock_pair(uint64_t *ns, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = mono_ns();
        uint64_t t = tsc_read();
        uint64_t b = mono_ns();
        if (b - a < best) {
            best = b - a;
            *ns = a + (b - a) / 2;
            *tsc = t;
        }
    }
}

static double tsc_ns_per_tick(void)
{
    uint64_t n0 = 0, t0 = 0, n1 = 0, t1 = 0;
    clock_pair(&n0, &t0);
    while (mono_ns() - n0 < CAL_SPIN_NS)
        ;
    clock_pair(&n1, &t1);
    return (double)(n1 - n0) / (double)(t1 - t0);
}
#endif

static int cmp_u64(const void *l, const void *r)
{
    uint64_t a = *(const uint64_t *)l, b = *(const uint64_t *)r;
    return (a > b) - (a < b);
}

/* Median and minimum of COST_SAMPLES empty intervals of the given clock. */
static void empty_interval_cost(const bench_clock *c, uint64_t *median, uint64_t *min)
{
    uint64_t *d = malloc(COST_SAMPLES * sizeof *d);
    if (d == NULL) {
        *median = *min = 0;
        return;
    }
    for (unsigned i = 0; i < COST_SAMPLES; i++) {
        uint64_t t0 = clock_ticks(c);
        uint64_t t1 = clock_ticks(c);
        d[i] = t1 - t0;
    }
    qsort(d, COST_SAMPLES, sizeof *d, cmp_u64);
    *median = d[COST_SAMPLES / 2];
    *min = d[0];
    free(d);
}

void clock_calibrate(bench_clock *c, int want_tsc)
{
    c->use_tsc = want_tsc && clock_tsc_usable();
    c->ns_per_tick = 1.0;
    c->cost_ticks = 0; /* measured below with nothing subtracted */
#if BENCH_HAVE_TSC
    if (c->use_tsc)
        c->ns_per_tick = tsc_ns_per_tick();
#endif
    empty_interval_cost(c, &c->cost_ticks, &c->cost_min_ticks);
}

void clock_monotonic_cost(uint64_t *median_ns, uint64_t *min_ns)
{
    bench_clock mono = {0, 1.0, 0, 0};
    empty_interval_cost(&mono, median_ns, min_ns);
}

void clock_describe(const bench_clock *c, char *buf, size_t n)
{
    if (c->use_tsc)
        snprintf(buf, n,
                 "rdtsc fenced by lfence, %.5f ns/tick calibrated against CLOCK_MONOTONIC "
                 "over 100 ms; clock cost %llu ticks = %.1f ns (median of %u empty intervals, "
                 "min %llu) subtracted from every per-op sample",
                 c->ns_per_tick, (unsigned long long)c->cost_ticks,
                 (double)c->cost_ticks * c->ns_per_tick, COST_SAMPLES,
                 (unsigned long long)c->cost_min_ticks);
    else
        snprintf(buf, n,
                 "clock_gettime(CLOCK_MONOTONIC); clock cost %llu ns (median of %u empty "
                 "intervals, min %llu) subtracted from every per-op sample",
                 (unsigned long long)c->cost_ticks, COST_SAMPLES,
                 (unsigned long long)c->cost_min_ticks);
}
