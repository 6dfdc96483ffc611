// SPDX-License-Identifier: MIT
/*
 * random_sweep_target.c -- the sweep measured against the heaps people
 * would use instead: for every rtm heap, in how many windows it is slower
 * than glibc and how its mean compares with mimalloc's, and the verdict on
 * TLSF's sweep target ("at or below glibc in every window, its mean at or
 * below mimalloc's"; docs/TLSF.md).
 *
 * Both comparisons use only the windows where both allocators have a time:
 * a mean over different windows would compare different size ranges. The
 * verdict is PASS or FAIL from the median and from the minimum curves; when
 * a row is missing or some window has no time in both, it says NOT JUDGED
 * and why, never PASS. The lines end with what the comparison cannot hide:
 * rtm heaps run over a region written before the clock, the malloc peers
 * pay their first touch of fresh memory inside the timed replacements.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "random/random_sweep.h"

#define SWEEP_TARGET "TLSF at or below glibc in every window, its mean at or below mimalloc's"

/* One heap against glibc and mimalloc, over one statistic of the cells. */
typedef struct sweep_versus {
    size_t common_glibc;  /* windows timed for both the heap and glibc */
    size_t above_glibc;   /* ... of which the heap was slower          */
    size_t common_mi;     /* windows timed for both the heap and mimalloc */
    double mean, mean_mi; /* both means over those windows            */
} sweep_versus;

static const sweep_row *row_named(const sweep_bench *s, const char *name)
{
    for (size_t i = 0; i < s->nrows; i++)
        if (!s->rows[i].id.missing && strcmp(s->rows[i].id.name, name) == 0)
            return &s->rows[i];
    return NULL;
}

static double cell_value(const sweep_cell *c, int from_min)
{
    return from_min ? c->min : c->median;
}

static sweep_versus versus(const sweep_bench *s, const sweep_row *heap, const sweep_row *glibc,
                           const sweep_row *mi, int from_min)
{
    sweep_versus v = {0, 0, 0, 0.0, 0.0};
    for (size_t w = 0; w < s->nwin; w++) {
        double h = cell_value(&heap->cells[w], from_min);
        if (isnan(h))
            continue;
        double g = glibc != NULL ? cell_value(&glibc->cells[w], from_min) : NAN;
        if (!isnan(g)) {
            v.common_glibc++;
            v.above_glibc += h > g;
        }
        double m = mi != NULL ? cell_value(&mi->cells[w], from_min) : NAN;
        if (!isnan(m)) {
            v.common_mi++;
            v.mean += h;
            v.mean_mi += m;
        }
    }
    if (v.common_mi != 0) {
        v.mean /= (double)v.common_mi;
        v.mean_mi /= (double)v.common_mi;
    }
    return v;
}

static void print_versus(const sweep_bench *s, const sweep_row *heap, const sweep_row *glibc,
                         const sweep_row *mi)
{
    sweep_versus v = versus(s, heap, glibc, mi, 0);
    printf("  %-12s", heap->id.name);
    if (glibc != NULL)
        printf(" above glibc in %zu of %zu windows;", v.above_glibc, v.common_glibc);
    if (mi != NULL && v.common_mi != 0)
        printf(" mean %.1f against mimalloc's %.1f over %zu windows (%.2fx)", v.mean, v.mean_mi,
               v.common_mi, v.mean / v.mean_mi);
    printf("\n");
}

/* PASS / FAIL / NOT JUDGED for TLSF from one statistic, with the reason. */
static const char *verdict(const sweep_bench *s, const sweep_row *tlsf, const sweep_row *glibc,
                           const sweep_row *mi, int from_min, char *why, size_t n)
{
    if (tlsf == NULL || glibc == NULL || mi == NULL) {
        snprintf(why, n, "needs tlsf, glibc and mimalloc in the sweep; missing: %s%s%s",
                 tlsf ? "" : "tlsf ", glibc ? "" : "glibc ", mi ? "" : "mimalloc");
        return "NOT JUDGED";
    }
    sweep_versus v = versus(s, tlsf, glibc, mi, from_min);
    if (v.common_glibc != s->nwin || v.common_mi != s->nwin) {
        snprintf(why, n,
                 "%zu of %zu windows timed for both tlsf and glibc, %zu for tlsf and mimalloc",
                 v.common_glibc, s->nwin, v.common_mi);
        return "NOT JUDGED";
    }
    int ok = v.above_glibc == 0 && v.mean <= v.mean_mi;
    snprintf(why, n, "above glibc in %zu of %zu windows; mean %.1f against mimalloc's %.1f",
             v.above_glibc, s->nwin, v.mean, v.mean_mi);
    return ok ? "PASS" : "FAIL";
}

void sweep_print_targets(const sweep_bench *s)
{
    const sweep_row *glibc = row_named(s, "glibc"), *mi = row_named(s, "mimalloc");
    if (glibc == NULL && mi == NULL)
        return;
    printf("\nagainst glibc and mimalloc (median curves, windows timed for both):\n");
    for (size_t i = 0; i < s->nrows; i++)
        if (s->rows[i].id.peer == NULL && !s->rows[i].id.missing)
            print_versus(s, &s->rows[i], glibc, mi);
    char why[256];
    const sweep_row *tlsf = row_named(s, "tlsf");
    printf("sweep target \"%s\":\n", SWEEP_TARGET);
    const char *v = verdict(s, tlsf, glibc, mi, 0, why, sizeof why);
    printf("  verdict from medians:  %s  (%s)\n", v, why);
    v = verdict(s, tlsf, glibc, mi, 1, why, sizeof why);
    printf("  verdict from minimums: %s  (%s)\n", v, why);
    printf("(rtm heaps run over a region written before the clock, as a real-time system "
           "prepares its heap;\nthe malloc peers pay their first touch of fresh pages inside "
           "the timed replacements, as a program does:\ndocs/METHODS.md, \"Pre-faulted "
           "regions\"; --sweep-iterations longer than 20000 dilutes it)\n");
}
