// SPDX-License-Identifier: MIT
/*
 * random_sweep_plan.c -- the pure parts of `rtmem bench random --sweep`
 * (random_sweep.h): which windows, their seeds, the option rules, and the
 * statistics of a window over rounds and of a curve over windows.
 *
 * Nothing here does I/O or touches the clock, so a unit test
 * (tests/random_sweep_plan_test.c) checks it exactly.
 */
#include <math.h>
#include <stdio.h>

#include "common/prng.h"
#include "random/random_sweep.h"
#include "common/summary.h"

size_t sweep_window_count(uint64_t step, uint64_t max)
{
    return step == 0 ? 0 : (size_t)(max / step) + 1u;
}

sweep_window sweep_window_at(uint64_t step, size_t i)
{
    sweep_window w;
    w.x = (uint64_t)i * step;
    /* x = 0: [1, 64). A 0-byte request is no allocation (random_sweep.h). */
    w.lo = w.x == 0 ? 1 : w.x;
    w.hi = w.x + SWEEP_WIDTH;
    return w;
}

uint64_t sweep_window_seed(uint64_t round_seed, size_t i)
{
    /* Mixed twice: round_seed + i alone would give round r+1's window i the
     * sequence of round r's window i+1. */
    bench_rng r;
    rng_seed(&r, round_seed);
    rng_seed(&r, rng_next(&r) + (uint64_t)i);
    return rng_next(&r);
}

int sweep_check(uint64_t step, uint64_t max, uint64_t iterations, uint64_t slots, char *why,
                size_t n)
{
    why[0] = '\0';
    if (step == 0 || step % SWEEP_GRANULE != 0)
        snprintf(why, n, "--sweep-step must be a positive multiple of %u (got %llu)", SWEEP_GRANULE,
                 (unsigned long long)step);
    else if (max > UINT32_MAX - SWEEP_WIDTH)
        snprintf(why, n, "--sweep-max must be at most %llu",
                 (unsigned long long)(UINT32_MAX - SWEEP_WIDTH));
    else if (sweep_window_count(step, max) > SWEEP_MAX_WINDOWS)
        snprintf(why, n, "--sweep-max / --sweep-step gives %zu windows; at most %u",
                 sweep_window_count(step, max), SWEEP_MAX_WINDOWS);
    else if (iterations == 0)
        snprintf(why, n, "--sweep-iterations must be at least 1");
    else if (slots != 0 && slots > UINT64_MAX / 2u / (max + SWEEP_WIDTH))
        snprintf(why, n, "--slots x (--sweep-max + %u) x 2 is too large", SWEEP_WIDTH);
    return why[0] == '\0' ? 0 : -1;
}

int sweep_table_row(size_t i, size_t nwin)
{
    size_t every = (nwin + 15u) / 16u; /* about 16 rows */
    return i + 1 == nwin || (every != 0 && i % every == 0);
}

sweep_cell sweep_cell_of(const double *ns, const uint64_t *refused, const int *ok, size_t nruns,
                         double *scratch)
{
    sweep_cell c = {NAN, NAN, 0, 0, 0};
    size_t k = 0;
    for (size_t r = 0; r < nruns; r++) {
        if (!ok[r])
            continue;
        c.refused += refused[r];
        if (refused[r] != 0) {
            c.refused_runs++;
            continue; /* its time is that of skipped work: not a point */
        }
        scratch[k++] = ns[r];
    }
    c.clean_runs = k;
    if (k != 0) {
        summary s = summarize(scratch, k);
        c.min = s.min;
        c.median = s.median;
    }
    return c;
}

sweep_curve_stats sweep_curve_of(const double *v, size_t n)
{
    sweep_curve_stats st = {NAN, NAN, 0, 0};
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i]))
            continue;
        if (st.plotted == 0 || v[i] > st.max) {
            st.max = v[i];
            st.argmax = i;
        }
        sum += v[i];
        st.plotted++;
    }
    if (st.plotted != 0)
        st.mean = sum / (double)st.plotted;
    return st;
}
