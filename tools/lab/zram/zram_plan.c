// SPDX-License-Identifier: MIT
/*
 * zram_plan.c -- the pure parts of `rtmem bench zram` (zram.h): the zram
 * case's mean, memory efficiency, the page set that counts the pages
 * holding live bytes, the VmRSS reader, the summary's size bands.
 *
 * No I/O, no clock: tools/lab/zram/tests/zram_plan_test.c checks them exactly.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "zram/zram.h"

double zram_dist_mean(void)
{
    double sum = 0;
    for (size_t b = 0; b < ZRAM_DIST_BANDS; b++) /* uniform in [lo, hi): (lo + hi - 1) / 2 */
        sum += zram_dist[b].weight * ((double)zram_dist[b].lo + (double)zram_dist[b].hi - 1) / 2;
    return sum / 1000.0;
}

double zram_efficiency(uint64_t stored, uint64_t held)
{
    return held == 0 ? NAN : (double)stored / (double)held;
}

void zram_pageset_mark(zram_pageset *s, uint64_t off, uint64_t len)
{
    if (len == 0)
        return;
    uint64_t first = off / ZRAM_PAGE, last = (off + len - 1u) / ZRAM_PAGE;
    for (uint64_t p = first; p <= last && p < s->npages; p++) {
        uint64_t bit = UINT64_C(1) << (p % 64u);
        if ((s->bits[p / 64u] & bit) == 0) {
            s->bits[p / 64u] |= bit;
            s->count++;
        }
    }
}

int zram_parse_vmrss(const char *status, uint64_t *kb)
{
    /* A line "VmRSS:\t   1234 kB"; the key at a line start only. */
    for (const char *p = status; p != NULL && *p != '\0';) {
        if (strncmp(p, "VmRSS:", 6) == 0) {
            char *end;
            unsigned long long v = strtoull(p + 6, &end, 10);
            if (end == p + 6)
                return -1;
            *kb = (uint64_t)v;
            return 0;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

uint64_t zram_rss_growth(uint64_t base_kb, uint64_t now_kb)
{
    return now_kb > base_kb ? (now_kb - base_kb) * 1024u : 0;
}

/* Bands around the page: xvmalloc's half-page waste and its page limit,
 * zsmalloc's page limit, then TLSF and the mallocs alone. */
const uint32_t zram_xband_lo[ZRAM_XBANDS + 1] = {0, 512, 1024, 2048, 3072, 4096, 8192, UINT32_MAX};

size_t zram_xband_of(uint64_t x)
{
    size_t b = 0;
    while (b + 1u < ZRAM_XBANDS && x >= zram_xband_lo[b + 1u])
        b++;
    return b;
}

double zram_mean_finite(const double *v, const unsigned char *keep, size_t n, size_t *count)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if ((keep != NULL && !keep[i]) || !isfinite(v[i]))
            continue;
        sum += v[i];
        k++;
    }
    if (count != NULL)
        *count = k;
    return k ? sum / (double)k : NAN;
}
