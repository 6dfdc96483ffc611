// SPDX-License-Identifier: MIT
/*
 * summary.c -- min / median / max / mean / spread of repeated runs
 * (summary.h).
 */
#include <math.h>
#include <stdlib.h>

#include "common/summary.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

summary summarize(double *v, size_t n)
{
    summary s = {0};
    if (n == 0)
        return s;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    s.n = n;
    s.min = v[0];
    s.max = v[n - 1];
    s.mean = sum / (double)n;
    s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s.spread = s.min > 0 ? s.max / s.min : 0;
    return s;
}

double sorted_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    double rank = ceil(q * (double)n);
    size_t k = rank < 1 ? 1 : (size_t)rank;
    return v[(k > n ? n : k) - 1];
}
