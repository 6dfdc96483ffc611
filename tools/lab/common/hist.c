// SPDX-License-Identifier: MIT
/*
 * hist.c -- quantiles of the log-linear histogram (hist.h).
 *
 * A quantile is reported as the upper bound of its bucket: latency figures
 * err on the pessimistic side by at most 1/64, never the optimistic one.
 */
#include <math.h>

#include "common/hist.h"

/* Largest value that lands in bucket i. */
static uint64_t bucket_upper(unsigned i)
{
    if (i < HIST_EXACT)
        return i;
    unsigned k = i - HIST_EXACT;
    unsigned shift = k / HIST_SUB + 1u;
    uint64_t top = HIST_SUB + k % HIST_SUB;
    return ((top + 1u) << shift) - 1u;
}

uint64_t hist_quantile(const hist *h, double q)
{
    if (h->count == 0)
        return 0;
    double r = ceil(q * (double)h->count);
    uint64_t rank = r < 1.0 ? 1u : (uint64_t)r;
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t up = bucket_upper(i);
            return up < h->max ? up : h->max;
        }
    }
    return h->max;
}
