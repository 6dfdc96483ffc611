// SPDX-License-Identifier: MIT
/*
 * limits_probe_test.c -- unit test of the largest-block probe
 * (limits_probe.c) against fake allocators whose limit is known exactly.
 *
 * Its own program (tests_limits.cmake), with limits_probe.c.
 *
 * Each fake counts live blocks and refuses any size above its limit (or, for
 * the non-monotone fake, inside a hole), so the test checks: the doubling
 * steps and where they stopped, the exact answer, that every success was
 * released and no refusal was, and the number of calls.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "limits/limits_cmd.h"

typedef struct fake {
    uint64_t limit;              /* largest size it gives                     */
    uint64_t hole_lo, hole_hi;   /* also refuses [hole_lo, hole_hi) if lo < hi */
    long live, allocs, releases; /* bookkeeping the test checks               */
    int bad_release;             /* released a size it did not give           */
    uint64_t last_size;
    char token;
} fake;

static void *fake_alloc(void *ctx, uint64_t bytes)
{
    fake *f = ctx;
    f->allocs++;
    if (bytes > f->limit || (bytes >= f->hole_lo && bytes < f->hole_hi))
        return NULL;
    f->live++;
    f->last_size = bytes;
    return &f->token;
}

static void fake_release(void *ctx, void *p, uint64_t bytes)
{
    fake *f = ctx;
    if (p != &f->token || bytes != f->last_size || f->live != 1)
        f->bad_release = 1;
    f->live--;
    f->releases++;
}

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static probe_result run(fake *f, uint64_t start, uint64_t cap)
{
    probe_ops ops = {fake_alloc, fake_release, f};
    probe_result r;
    probe_largest(&ops, start, cap, &r);
    CHECK(f->live == 0, "limit %" PRIu64 ": %ld blocks left live", f->limit, f->live);
    CHECK(!f->bad_release, "limit %" PRIu64 ": released something it was not given", f->limit);
    CHECK(f->allocs == (long)r.tries, "limit %" PRIu64 ": %ld calls, tries says %u", f->limit,
          f->allocs, r.tries);
    return r;
}

/* floor(log2(x)) for x >= 1. */
static unsigned ilog2(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }

/* A limit inside (start, cap): doubling stops at the first power-of-two
 * multiple above it, and the search lands on it exactly. */
static void test_limit(uint64_t limit)
{
    const uint64_t start = 4096, cap = UINT64_C(1) << 40;
    fake f = {limit, 0, 0, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, start, cap);
    uint64_t last_ok = start << ilog2(limit / start);
    CHECK(!r.capped, "limit %" PRIu64, limit);
    CHECK(r.last_ok == last_ok, "limit %" PRIu64 ": last_ok %" PRIu64, limit, r.last_ok);
    CHECK(r.first_fail == 2 * last_ok, "limit %" PRIu64 ": first_fail %" PRIu64, limit,
          r.first_fail);
    CHECK(r.exact == limit, "limit %" PRIu64 ": exact %" PRIu64, limit, r.exact);
    CHECK(r.nsteps == ilog2(last_ok / start) + 2u, "limit %" PRIu64 ": %u steps", limit, r.nsteps);
    CHECK(r.step_ok[r.nsteps - 1] == 0 && r.step_ok[0] == 1, "limit %" PRIu64, limit);
    /* Search calls: ceil(log2(first_fail - last_ok)) at most, and at least 1
     * unless the gap is a single byte. */
    CHECK(r.tries - r.nsteps <= ilog2(last_ok) + 1u, "limit %" PRIu64 ": %u search calls", limit,
          r.tries - r.nsteps);
    for (unsigned i = 0; i + 1 < r.nsteps; i++)
        CHECK(r.step_bytes[i + 1] == 2 * r.step_bytes[i] && r.step_ok[i], "step %u", i);
}

/* Below the first page: pool:64 gives 64 bytes; the search runs in (0, start). */
static void test_below_start(void)
{
    fake f = {64, 0, 0, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, 4096, 1u << 30);
    CHECK(r.nsteps == 1 && r.step_ok[0] == 0, "%u steps", r.nsteps);
    CHECK(r.last_ok == 0 && r.first_fail == 4096, "last_ok %" PRIu64, r.last_ok);
    CHECK(r.exact == 64 && !r.capped, "exact %" PRIu64, r.exact);
    CHECK(r.tries == 1 + 12, "tries %u (1 step + log2(4096) search calls)", r.tries);
}

/* Nothing at all: even one byte is refused. */
static void test_nothing(void)
{
    fake f = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, 4096, 1u << 20);
    CHECK(r.exact == 0 && r.last_ok == 0 && r.first_fail == 4096, "exact %" PRIu64, r.exact);
}

/* Never refuses up to the cap: a lower bound, and nothing above the cap is
 * ever requested (the point of the cap for malloc and mmap). */
static void test_capped(uint64_t cap)
{
    fake f = {UINT64_MAX, 0, 0, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, 4096, cap);
    uint64_t top = UINT64_C(4096) << ilog2(cap / 4096);
    CHECK(r.capped && r.first_fail == 0, "cap %" PRIu64, cap);
    CHECK(r.last_ok == top && r.exact == top, "cap %" PRIu64 ": last_ok %" PRIu64, cap, r.last_ok);
    CHECK(r.tries == r.nsteps && r.nsteps == ilog2(top / 4096) + 1u, "cap %" PRIu64, cap);
    for (unsigned i = 0; i < r.nsteps; i++)
        CHECK(r.step_bytes[i] <= cap, "step %" PRIu64 " above the cap", r.step_bytes[i]);
}

/* The limit exactly at a doubling step, and the cap itself as the limit. */
static void test_edges(void)
{
    fake f = {1u << 20, 0, 0, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, 4096, 1u << 30);
    CHECK(r.last_ok == 1u << 20 && r.first_fail == 2u << 20 && r.exact == 1u << 20,
          "exact %" PRIu64, r.exact);
    fake g = {1u << 20, 0, 0, 0, 0, 0, 0, 0, 0};
    r = run(&g, 4096, 1u << 20);
    CHECK(r.capped && r.exact == 1u << 20, "limit at the cap: exact %" PRIu64, r.exact);
    fake h = {4096, 0, 0, 0, 0, 0, 0, 0, 0};
    r = run(&h, 4096, 4096);
    CHECK(r.capped && r.exact == 4096 && r.tries == 1, "start == cap: tries %u", r.tries);
}

/* Not monotone: refuses a hole below its limit. The probe still returns a
 * size that succeeded with the next byte refused (the documented pair). */
static void test_hole(void)
{
    fake f = {5u << 20, 3u << 20, 4u << 20, 0, 0, 0, 0, 0, 0};
    probe_result r = run(&f, 4096, 1u << 30);
    CHECK(r.first_fail == 8u << 20, "first_fail %" PRIu64, r.first_fail);
    int ok_at = r.exact <= f.limit && (r.exact < f.hole_lo || r.exact >= f.hole_hi);
    int fail_next = r.exact + 1 > f.limit || (r.exact + 1 >= f.hole_lo && r.exact + 1 < f.hole_hi);
    CHECK(ok_at && fail_next, "exact %" PRIu64 " is not a success followed by a refusal", r.exact);
}

int main(void)
{
    static const uint64_t limits[] = {4096,
                                      4097,
                                      8191,
                                      8192 * 5 + 3,
                                      (1u << 26) - 1,
                                      67104760,
                                      1u << 26,
                                      UINT64_C(25) << 30,
                                      (UINT64_C(1) << 40) - 1};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        test_limit(limits[i]);
    test_below_start();
    test_nothing();
    test_capped(UINT64_C(1) << 40);
    test_capped((UINT64_C(1) << 40) + 12345);
    test_edges();
    test_hole();
    if (failures != 0) {
        fprintf(stderr, "limits_probe_test: %d failure(s)\n", failures);
        return 1;
    }
    printf("limits_probe_test: all checks passed\n");
    return 0;
}
