// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_halffit.c -- issue 12, case 2: a second free
 * of a half-fit block that has already merged into its free left
 * neighbour. Before the fix the absorbed block's own header still said
 * "used", so the second free was accepted: the block went onto a free list
 * while being part of the merged block, and one block was later handed out
 * twice.
 *
 *   merged   b freed after its left neighbour a (b merges into a), with and
 *            without its right neighbour c free too (b then merges both
 *            ways, c's header absorbed as well); then free(b) again
 *            (typed, generic and realloc): refused, reported as
 *            RTM_ERR_DOUBLE_FREE, errno EINVAL, heap and stats unchanged,
 *            the check passing, and every unit handed out exactly once.
 *   stale    the merged block is allocated again (b's old header lies in
 *            its payload, untouched by the user): free(b) is refused the
 *            same way and the live block's contents are intact.
 *
 * Usage: test_harden_halffit [merged|stale|all]
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/bytes.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"
#include "rtmem/halffit.h"

#define U   RTM_HALFFIT_MIN_BLOCK
#define HDR RTM_HALFFIT_HEADER_BYTES

/* A heap whose arena is exactly `units` units (one free block; the region
 * is 64-aligned, so nothing is lost to alignment) and the sentinel unit. */
static rtm_halffit *make(test_region *r, size_t units)
{
    *r = region_malloc(rtm_halffit_control_size() + (units + 1u) * U, 0);
    rtm_halffit *h = rtm_halffit_create(r->mem, r->bytes);
    REQUIRE(h != NULL);
    REQUIRE(rtm_halffit_stats(h).largest_free == units * U - HDR);
    return h;
}

/* free(p) must be refused as a double free and change nothing. */
static void expect_refused(rtm_halffit *h, void *p)
{
    rtm_stats before = rtm_halffit_stats(h);
    recorder_install();
    errno = 0;
    CHECK_EQ(rtm_halffit_free(h, p), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, 1);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_DOUBLE_FREE);
    CHECK_PTR_EQ(recorder()->last_ptr, p);
    CHECK(stats_equal(rtm_halffit_stats(h), before));
    CHECK_EQ(rtm_halffit_check(h), 0);

    /* The same pointer through the generic API and through realloc. */
    recorder_reset();
    errno = 0;
    rtm_free((rtm_heap *)(void *)h, p);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    errno = 0;
    CHECK(rtm_halffit_realloc(h, p, 3 * U) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 2);
    CHECK(stats_equal(rtm_halffit_stats(h), before));
    CHECK_EQ(rtm_heap_check((rtm_heap *)(void *)h), 0);
    rtm_set_error_handler(NULL, NULL);
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* With nothing live, the heap hands out exactly `units` minimum blocks, all
 * distinct: a free list with a cycle or a block listed twice would give a
 * block twice (or more blocks than the arena has). */
static void expect_each_unit_once(rtm_halffit *h, size_t units)
{
    void **p = calloc(units + 1u, sizeof *p);
    REQUIRE(p != NULL);
    size_t n = 0;
    while (n <= units && (p[n] = rtm_halffit_alloc(h, U - HDR)) != NULL)
        n++;
    CHECK_EQ(n, units);
    qsort(p, n, sizeof *p, by_address);
    for (size_t i = 1; i < n; i++)
        CHECK_MSG(p[i] != p[i - 1], "block %p handed out twice", p[i]);
    for (size_t i = 0; i < n && i < units; i++)
        CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
    CHECK_EQ(rtm_halffit_check(h), 0);
    CHECK_EQ(rtm_halffit_stats(h).largest_free, units * U - HDR);
    free(p);
}

/* b (4 units) merges into its free left neighbour a; `cascade` also frees
 * c (8 units, with the rest of the arena behind it) first, so that b's free
 * merges both ways. */
static void merged_case(int cascade)
{
    test_region r;
    const size_t units = 64;
    rtm_halffit *h = make(&r, units);
    char *a = rtm_halffit_alloc(h, 4 * U - HDR), *b = rtm_halffit_alloc(h, 4 * U - HDR);
    char *c = rtm_halffit_alloc(h, 8 * U - HDR);
    REQUIRE(a != NULL && b != NULL && c != NULL);
    REQUIRE(b - a == (ptrdiff_t)(4 * U) && c - a == (ptrdiff_t)(8 * U)); /* neighbours */
    if (cascade)
        CHECK_EQ(rtm_halffit_free(h, c), 0);
    CHECK_EQ(rtm_halffit_free(h, a), 0);
    CHECK_EQ(rtm_halffit_free(h, b), 0); /* merges into a (and c) */
    CHECK_EQ(rtm_halffit_check(h), 0);
    expect_refused(h, b);
    expect_refused(h, a); /* a's header says free: detected before the fix too */
    if (cascade)
        expect_refused(h, c);
    else
        CHECK_EQ(rtm_halffit_free(h, c), 0);
    expect_each_unit_once(h, units);
    region_free(&r);
}

static void test_merged(void)
{
    merged_case(0);
    merged_case(1);
}

static void test_stale(void)
{
    test_region r;
    const size_t units = 64;
    rtm_halffit *h = make(&r, units);
    char *a = rtm_halffit_alloc(h, 4 * U - HDR), *b = rtm_halffit_alloc(h, 4 * U - HDR);
    REQUIRE(a != NULL && b != NULL && b - a == (ptrdiff_t)(4 * U));
    CHECK_EQ(rtm_halffit_free(h, a), 0);
    CHECK_EQ(rtm_halffit_free(h, b), 0); /* the whole arena merges back */
    /* The merged block again, live: b's old header is inside its payload.
     * The user fills the payload but for those 16 bytes. */
    char *big = rtm_halffit_alloc(h, 8 * U - HDR);
    REQUIRE(big == a);
    size_t usable = rtm_halffit_usable_size(h, big);
    size_t hole = (size_t)(b - HDR - big);
    memset(big, 0x5a, hole);
    memset(b, 0xa5, usable - hole - HDR);
    expect_refused(h, b);
    for (size_t i = 0; i < hole; i++)
        if (big[i] != 0x5a) {
            CHECK_MSG(0, "live block overwritten at byte %zu", i);
            break;
        }
    for (size_t i = 0; i < usable - hole - HDR; i++)
        if ((unsigned char)b[i] != 0xa5) {
            CHECK_MSG(0, "live block overwritten at byte %zu", hole + HDR + i);
            break;
        }
    CHECK_EQ(rtm_halffit_usable_size(h, big), usable);
    CHECK_EQ(rtm_halffit_free(h, big), 0);
    expect_each_unit_once(h, units);
    region_free(&r);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int all = strcmp(which, "all") == 0;
    if (all || strcmp(which, "merged") == 0)
        RUN_TEST(test_merged);
    if (all || strcmp(which, "stale") == 0)
        RUN_TEST(test_stale);
    return check_summary();
}
