// SPDX-License-Identifier: MIT
/*
 * threads_parse.c -- the pure pieces of `rtmem bench threads` (threads.h):
 * the strict list parsers behind --threads and --allocators, the pool benchmark's size
 * formula and the region sizes derived from it, the result line's fields.
 *
 * Kept apart from everything that allocates, spawns or prints so that the
 * unit test (tests/threads_unit.c) links them alone. Lists are parsed strictly,
 * like opts.c's numbers: "1,,2", "0", "2,2", " 1" or "1," is a usage error,
 * not a silently different measurement.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/result_line.h"
#include "threads/threads.h"

const char *const tr_bench_names[TR_NBENCH] = {"seed002", "pc"};
/* One element of a count list: digits only, no leading zero, <= max_value.
 * Returns the value, or 0 for anything else. */
static size_t parse_count(const char *s, size_t len, size_t max_value)
{
    if (len == 0 || len > 9 || s[0] == '0')
        return 0;
    size_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10u + (size_t)(s[i] - '0');
    }
    return v <= max_value ? v : 0;
}

int tr_parse_counts(const char *text, size_t *out, size_t max_n, size_t max_value, size_t *n,
                    char *why, size_t why_n)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t v = parse_count(p, len, max_value);
        if (v == 0) {
            snprintf(why, why_n, "'%.*s' in '%s' is not a count in [1, %zu]", (int)len, p, text,
                     max_value);
            return -1;
        }
        for (size_t i = 0; i < *n; i++)
            if (out[i] == v) {
                snprintf(why, why_n, "%zu given twice in '%s'", v, text);
                return -1;
            }
        if (*n == max_n) {
            snprintf(why, why_n, "more than %zu values in '%s'", max_n, text);
            return -1;
        }
        out[(*n)++] = v;
        if (p[len] == '\0')
            return 0;
        p += len + 1; /* past the comma: an empty element after it fails above */
    }
}

int tr_split_names(const char *text, char out[][TR_NAME_MAX], size_t max_n, size_t *n, char *why,
                   size_t why_n)
{
    *n = 0;
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(why, why_n, "empty name in '%s'", text);
            return -1;
        }
        if (len >= TR_NAME_MAX) {
            snprintf(why, why_n, "name '%.*s' too long", (int)len, p);
            return -1;
        }
        if (*n == max_n) {
            snprintf(why, why_n, "more than %zu names in '%s'", max_n, text);
            return -1;
        }
        memcpy(out[*n], p, len);
        out[*n][len] = '\0';
        for (size_t i = 0; i < *n; i++)
            if (strcmp(out[i], out[*n]) == 0) {
                snprintf(why, why_n, "'%s' given twice", out[i]);
                return -1;
            }
        (*n)++;
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

size_t tr_seed_max_size(uint64_t ntimes)
{
    /* Sizes climb from 17 by one per index and wrap to 1 after 8192. */
    return ntimes == 0 ? 0 : ntimes + 15u >= 8191u ? 8192u : (size_t)ntimes + 16u;
}

uint64_t tr_seed_live_bytes(uint64_t ntimes)
{
    /* Whole periods of 8192 indices hold 1 + 2 + ... + 8192 bytes each; the
     * rest is summed directly (at most 8191 terms, untimed). */
    uint64_t period = 8192u * 8193u / 2u, whole = ntimes / 8192u, sum = whole * period;
    for (uint64_t i = whole * 8192u; i < ntimes; i++)
        sum += tr_seed_size(i);
    return sum;
}

#define REGION_SLACK (UINT64_C(4) << 20)
#define BLOCK_HEADER 64u   /* generous: rtm heaps add 0 to 8 bytes, plus alignment */
#define HEAP_PAGE    4096u /* buddy's default page: its smallest block               */

/* The most any rtm heap can take for one request of size bytes: a header,
 * rounded up to a power of two (halffit, buddy), at least a buddy page. */
static uint64_t block_bound(uint64_t size)
{
    uint64_t b = HEAP_PAGE;
    while (b < size + BLOCK_HEADER)
        b *= 2u;
    return b;
}

uint64_t tr_seed_region(uint64_t nworks, uint64_t ntimes)
{
    return nworks * ntimes * block_bound(tr_seed_max_size(ntimes)) + REGION_SLACK;
}

uint64_t tr_pc_region(uint64_t pairs)
{
    /* The queue full, one block in each producer's and consumer's hands. */
    uint64_t live = TR_PC_QUEUE + 2u * pairs;
    return 2u * live * block_bound(TR_PC_MAX) + REGION_SLACK;
}

double tr_ratio(double a, double b)
{
    if (!(a > 0) || !(b > 0) || isinf(a) || isinf(b))
        return NAN;
    return a / b;
}

int tr_parse_result(const char *text, tr_result *r)
{
    memset(r, 0, sizeof *r);
    const char *start = strstr(text, "RESULT\t");
    while (start != NULL && start != text && start[-1] != '\n')
        start = strstr(start + 1, "RESULT\t");
    if (start == NULL)
        return -1;
    /* Only this line: an allocator may print lines of its own after it. */
    static char line[4096];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(start, "\n"), start);
    r->ok = line_field_u64(line, "ok") != 0;
    r->valid = line_field_u64(line, "valid") != 0;
    r->heap_ok = line_field_u64(line, "heap_ok") != 0;
    line_field(line, "why", r->why, sizeof r->why);
    line_field(line, "from", r->from, sizeof r->from);
    line_field(line, "version", r->version, sizeof r->version);
    r->wall_ns = line_field_num(line, "wall_ns");
    r->malloc_ns = line_field_num(line, "malloc_ns");
    r->free_ns = line_field_num(line, "free_ns");
    r->blocks = line_field_u64(line, "blocks");
    r->corrupt = line_field_u64(line, "corrupt");
    r->refused = line_field_u64(line, "refused");
    r->rss_start_kb = line_field_u64(line, "rss_start_kb");
    r->maxrss_kb = line_field_u64(line, "maxrss_kb");
    r->region = line_field_u64(line, "region");
    r->unattached = line_field_u64(line, "unattached");
    return 0;
}
