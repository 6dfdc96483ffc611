// SPDX-License-Identifier: MIT
/*
 * hist.h -- a log-linear latency histogram (the HdrHistogram layout, cut
 * down): values below 128 have a bucket each; above, every power of two is
 * split into 64 buckets, so any value is known to 1/64 (1.6 %). Count, sum
 * and maximum are kept exactly.
 *
 * Why a histogram and not an array of samples: two million iterations give
 * four million samples per run; sorting them costs more than the run, and
 * writing them streams 32 MB through the cache that the allocator under test
 * is using. Adding to a 30 KB table is one increment in a mostly cached line.
 */
#ifndef RTM_BENCH_HIST_H
#define RTM_BENCH_HIST_H

#include <stdint.h>

#define HIST_EXACT     128u /* values [0, 128) have a bucket each        */
#define HIST_SUB       64u  /* buckets per power of two above that       */
#define HIST_SUB_SHIFT 6u   /* log2(HIST_SUB)                            */
#define HIST_BUCKETS   (HIST_EXACT + (64u - 7u) * HIST_SUB)

typedef struct hist {
    uint64_t count, sum, max;
    uint64_t bucket[HIST_BUCKETS];
} hist;

/*   v < 128:  index v
 *   v >= 128: msb = floor(log2 v) >= 7, shift = msb - 6, top = v >> shift in
 *             [64, 128): index 128 + (shift - 1) * 64 + (top - 64) */
static inline unsigned hist_index(uint64_t v)
{
    if (v < HIST_EXACT)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - HIST_SUB_SHIFT;
    unsigned top = (unsigned)(v >> shift);
    return HIST_EXACT + (shift - 1u) * HIST_SUB + (top - HIST_SUB);
}

static inline void hist_add(hist *h, uint64_t v)
{
    h->count++;
    h->sum += v;
    if (v > h->max)
        h->max = v;
    h->bucket[hist_index(v)]++;
}

/* --- hist.c ------------------------------------------------------------ */

/* The value at quantile q in (0, 1]: the upper bound of the bucket holding
 * the ceil(q * count)-th smallest sample, clamped to the exact maximum.
 * 0 for an empty histogram. */
uint64_t hist_quantile(const hist *h, double q);

#endif /* RTM_BENCH_HIST_H */
