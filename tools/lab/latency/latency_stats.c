// SPDX-License-Identifier: MIT
/*
 * latency_stats.c -- what one latency test's samples say (latency.h):
 * the bmCtx* suite's avg / min / max and the percentiles p50 / p99 / p99.9
 * (both from summary.h, the lab's one implementation of them, so every
 * command's numbers agree), a fixed-width histogram, and the T_sw formula.
 *
 * Why fixed-width buckets and not hist.h's log-linear ones: a latency
 * distribution here spans one or two decades (1 to 50 us), and the report
 * plots it; equal widths read directly as a density, and 20 to 64 numbers
 * per test keep the JSON small. The range ends at p99.9, so one preemption
 * of a hundred microseconds does not squash every other bucket into the
 * first; what lies past it is counted in `overflow` and the exact maximum
 * is in the stats.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency/latency.h"
#include "common/summary.h"

/* The lab's one statistics implementation (summary.h) gives the sort, min,
 * max and mean; the percentiles are its nearest-rank quantiles. */
lat_stats lat_stats_of(double *v, size_t n)
{
    summary all = summarize(v, n); /* sorts v, which the histogram needs */
    lat_stats s = {
        .n = all.n,
        .avg = all.mean,
        .min = all.min,
        .max = all.max,
        .p50 = sorted_quantile(v, n, 0.50),
        .p99 = sorted_quantile(v, n, 0.99),
        .p999 = sorted_quantile(v, n, 0.999),
    };
    return s;
}

double lat_nice_width(double span, unsigned buckets)
{
    double want = buckets > 0 ? span / (double)buckets : span;
    double w = 1.0;
    /* 1, 2, 5, 10, 20, 50, ... ns: widths a reader can add up in his head. */
    for (int k = 0; k < 40 && w < want; k++)
        w *= (k % 3 == 1) ? 2.5 : 2.0;
    return w;
}

void lat_hist_build(const double *sorted, size_t n, const lat_stats *st, unsigned buckets,
                    lat_hist *h)
{
    h->first_ns = 0;
    h->width_ns = 1;
    h->nbuckets = 0;
    h->overflow = 0;
    for (unsigned i = 0; i < LAT_MAX_BUCKETS; i++)
        h->counts[i] = 0;
    if (n == 0)
        return;
    if (buckets == 0 || buckets > LAT_MAX_BUCKETS - 1u)
        buckets = LAT_MAX_BUCKETS - 1u;
    h->width_ns = lat_nice_width(st->p999 - st->min, buckets);
    h->first_ns = floor(st->min / h->width_ns) * h->width_ns;
    /* The bucket that holds p99.9 is the last; first may sit up to one width
     * below min, hence at most buckets + 1 of them. */
    double last = floor((st->p999 - h->first_ns) / h->width_ns);
    h->nbuckets = last + 1.0 > (double)LAT_MAX_BUCKETS ? LAT_MAX_BUCKETS : (unsigned)last + 1u;
    for (size_t i = 0; i < n; i++) {
        double b = floor((sorted[i] - h->first_ns) / h->width_ns);
        if (b < 0)
            b = 0; /* rounding at the lower edge only */
        if (b >= (double)h->nbuckets)
            h->overflow++;
        else
            h->counts[(unsigned)b]++;
    }
}

double lat_tsw(double t, double t_raise, double t_lower, double t_readclock)
{
    return (t - t_raise - t_lower - 2.0 * t_readclock) / 2.0;
}

void lat_finish(lat_test *t, const lat_env *e)
{
    t->st = lat_stats_of(t->ns, t->n);
    lat_hist_build(t->ns, t->n, &t->st, e->buckets, &t->hist);
}

void lat_fail(lat_test *t, lab_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->why, sizeof t->why, fmt, ap);
    va_end(ap);
    t->status = s;
}

int lat_samples_alloc(lat_test *t, const lat_env *e)
{
    size_t n = e->iterations > 0 ? (size_t)e->iterations : 1u;
    t->ns = malloc(n * sizeof *t->ns);
    if (t->ns == NULL)
        return -1;
    memset(t->ns, 0, n * sizeof *t->ns); /* fault every page before timing */
    t->n = 0;
    return 0;
}
