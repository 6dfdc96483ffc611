// SPDX-License-Identifier: MIT
/*
 * summary.h -- what the lab says about repeated measurements of one thing:
 * the minimum (the least disturbed run on a shared machine), the median
 * (the typical one), the maximum, the mean and the spread max/min. Every
 * command reports repeated runs this way, so tables and JSON read alike.
 */
#ifndef RTM_LAB_SUMMARY_H
#define RTM_LAB_SUMMARY_H

#include <stddef.h>

typedef struct summary {
    size_t n;
    double min, median, max, mean;
    double spread; /* max / min; 0 when min is 0 or n is 0 */
} summary;

/* Summarises v[0..n) (sorts v in place). n == 0 gives all zeros. The median
 * of an even count is the mean of the two middle values. */
summary summarize(double *v, size_t n);

/* The q-quantile (0 <= q <= 1) of sorted v[0..n) by the nearest-rank rule:
 * the ceil(q*n)-th smallest value (the smallest for q == 0). 0 when n == 0. */
double sorted_quantile(const double *v, size_t n, double q);

#endif /* RTM_LAB_SUMMARY_H */
