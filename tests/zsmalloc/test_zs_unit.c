// SPDX-License-Identifier: MIT
/*
 * tests/zsmalloc/test_zs_unit.c -- the contract of every rtm_zs_* function
 * (include/rtmem/zsmalloc.h): bad inputs, the class geometry, every kind of
 * bad handle refused and reported with the pool untouched, map nesting and
 * pins, compaction keeping handles, exhaustion of pages and of handles,
 * the validator catching damage, and position independence.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/recorder.h"
#include "rtmem/zsmalloc.h"
#include "zsmalloc/zs_test.h"

static _Alignas(64) unsigned char region_a[8 << 20];
static _Alignas(64) unsigned char region_b[256 << 10];

/* A pool's stats equal, field by field. */
static int stats_same(rtm_zs_stats a, rtm_zs_stats b)
{
    return a.pages_total == b.pages_total && a.pages_used == b.pages_used &&
           a.objects == b.objects && a.bytes_stored == b.bytes_stored;
}

static void test_create_bad_inputs(void)
{
    size_t min = rtm_zs_min_region();
    CHECK(min > 4u * RTM_ZS_PAGE);
    CHECK(min < 64u * 1024u);
    errno = 0;
    CHECK(rtm_zs_create(NULL, sizeof region_a) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_zs_create(region_a, min - 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_zs_create(region_a, 0) == NULL);
    for (size_t mis = 1; mis < 8; mis++) {
        errno = 0;
        CHECK(rtm_zs_create(region_a + mis, sizeof region_a - 8u) == NULL);
        CHECK_ERRNO(EINVAL);
    }
    /* mem + bytes wraps: refused before anything is written. */
    errno = 0;
    CHECK(rtm_zs_create(region_a, SIZE_MAX - 16u) == NULL);
    CHECK_ERRNO(EINVAL);
    /* The minimum works and holds a 4-page span (a 4096-byte object). */
    rtm_zspool *p = rtm_zs_create(region_a, min);
    REQUIRE(p != NULL);
    CHECK_PTR_EQ(p, region_a);
    rtm_zs_stats st = rtm_zs_stats_get(p);
    CHECK_EQ(st.pages_total, 4);
    CHECK_EQ(st.pages_used, 0);
    rtm_zs_handle h = rtm_zs_malloc(p, RTM_ZS_MAX_SIZE);
    CHECK(h != 0);
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, 4);
    CHECK_EQ(rtm_zs_check(p), 0);
    /* 8-aligned but not 16-aligned is accepted. */
    CHECK(rtm_zs_create(region_a + 8, sizeof region_a - 8u) != NULL);
}

static void test_null_and_non_pools(void)
{
    recorder_install();
    unsigned char junk[256] = {0};
    rtm_zspool *fake = (rtm_zspool *)(void *)junk;
    errno = 0;
    CHECK_EQ(rtm_zs_malloc(NULL, 8), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_zs_malloc(fake, 8), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_zs_map(NULL, 1) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    rtm_zs_free(NULL, 1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    rtm_zs_unmap(fake, 1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_zs_compact(NULL), 0);
    CHECK_ERRNO(EINVAL);
    rtm_zs_stats st = rtm_zs_stats_get(NULL);
    CHECK(st.pages_total == 0 && st.pages_used == 0 && st.objects == 0 && st.bytes_stored == 0);
    st = rtm_zs_stats_get(fake);
    CHECK_EQ(st.pages_total, 0);
    errno = 0;
    CHECK_EQ(rtm_zs_check(NULL), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_zs_check(fake), -1);
    CHECK_ERRNO(EFAULT);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
    CHECK_EQ(recorder()->calls, 1); /* only the check reported */
    rtm_set_error_handler(NULL, NULL);
}

/* Every request size maps to the class and span Linux would give it: one
 * object of a size in a fresh pool takes exactly that span's pages, and
 * objs objects fill one span (the next takes a second). */
static void test_class_geometry(void)
{
    /* Known points of Linux's table, stated outright. */
    CHECK_EQ(zs_test_span_pages(16), 1);
    CHECK_EQ(zs_test_span_pages(48), 3);
    CHECK_EQ(zs_test_span_pages(4112), 4);
    static const size_t sizes[] = {1,    8,    9,    24,   40,   100,  1000, 1500,
                                   2040, 2041, 2048, 2056, 3000, 4088, 4089, 4096};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t size = sizes[i], slot = zs_test_slot(size);
        size_t k = zs_test_span_pages(slot), objs = zs_test_objs(slot);
        rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
        REQUIRE(p != NULL);
        for (size_t n = 0; n < objs; n++)
            CHECK(rtm_zs_malloc(p, size) != 0);
        rtm_zs_stats st = rtm_zs_stats_get(p);
        CHECK_MSG(st.pages_used == k, "size %zu: %zu pages, expected %zu", size, st.pages_used, k);
        CHECK_EQ(st.objects, objs);
        CHECK_EQ(st.bytes_stored, objs * size);
        CHECK(rtm_zs_malloc(p, size) != 0);
        CHECK_MSG(rtm_zs_stats_get(p).pages_used == 2u * k, "size %zu: second span", size);
        CHECK_EQ(rtm_zs_check(p), 0);
    }
}

static void test_malloc_sizes(void)
{
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p != NULL);
    errno = 0;
    CHECK_EQ(rtm_zs_malloc(p, 0), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_zs_malloc(p, RTM_ZS_MAX_SIZE + 1u), 0);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK_EQ(rtm_zs_malloc(p, SIZE_MAX), 0);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_zs_stats_get(p).objects, 0);
    /* Every size 1..4096 once: data 8-aligned, writable to its end,
     * objects disjoint (each keeps its own pattern). */
    static rtm_zs_handle hs[RTM_ZS_MAX_SIZE + 1];
    size_t total = 0;
    for (size_t size = 1; size <= RTM_ZS_MAX_SIZE; size += 1u + size / 64u) {
        hs[size] = rtm_zs_malloc(p, size);
        if (hs[size] == 0) {
            CHECK_MSG(0, "size %zu refused", size);
            continue;
        }
        unsigned char *d = rtm_zs_map(p, hs[size]);
        REQUIRE(d != NULL);
        CHECK_EQ((uintptr_t)d % 8u, 0);
        memset(d, (int)(size & 0xffu), size);
        rtm_zs_unmap(p, hs[size]);
        total += size;
    }
    CHECK_EQ(rtm_zs_stats_get(p).bytes_stored, total);
    for (size_t size = 1; size <= RTM_ZS_MAX_SIZE; size += 1u + size / 64u) {
        const unsigned char *d = rtm_zs_map(p, hs[size]);
        REQUIRE(d != NULL);
        for (size_t i = 0; i < size; i++) {
            if (d[i] != (unsigned char)(size & 0xffu)) {
                CHECK_MSG(0, "size %zu: byte %zu overwritten", size, i);
                break;
            }
        }
        rtm_zs_unmap(p, hs[size]);
        rtm_zs_free(p, hs[size]);
    }
    rtm_zs_stats st = rtm_zs_stats_get(p);
    CHECK_EQ(st.objects, 0);
    CHECK_EQ(st.bytes_stored, 0);
    CHECK_EQ(st.pages_used, 0); /* empty spans go back at once */
    CHECK_EQ(rtm_zs_check(p), 0);
}

/* A refused call: reported once with this kind and handle, errno EINVAL,
 * stats unchanged, the pool still valid. */
static void expect_refused(rtm_zspool *p, rtm_zs_handle h, rtm_error_kind kind, const char *what)
{
    rtm_zs_stats before = rtm_zs_stats_get(p);
    void (*const ops[2])(rtm_zspool *, rtm_zs_handle) = {rtm_zs_free, rtm_zs_unmap};
    for (int op = 0; op < 3; op++) {
        recorder_reset();
        errno = 0;
        if (op < 2)
            ops[op](p, h);
        else
            CHECK(rtm_zs_map(p, h) == NULL);
        CHECK_ERRNO(EINVAL);
        CHECK_MSG(recorder()->calls == 1 && recorder()->last_kind == kind,
                  "%s, op %d: %u reports, last %s", what, op, recorder()->calls,
                  recorder_kind_name(recorder()->last_kind));
        CHECK_PTR_EQ(recorder()->last_heap, p);
        CHECK(recorder()->last_ptr == (const void *)(uintptr_t)h);
    }
    CHECK(stats_same(before, rtm_zs_stats_get(p)));
    CHECK_EQ(rtm_zs_check(p), 0);
}

static void test_bad_handles(void)
{
    recorder_install();
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    rtm_zspool *q = rtm_zs_create(region_b, sizeof region_b);
    REQUIRE(p != NULL && q != NULL);
    rtm_zs_handle keep = rtm_zs_malloc(p, 100), h = rtm_zs_malloc(p, 100);
    rtm_zs_handle other = rtm_zs_malloc(q, 100);
    REQUIRE(keep != 0 && h != 0 && other != 0);
    expect_refused(p, 0, RTM_ERR_FOREIGN_POINTER, "handle 0");
    expect_refused(p, other, RTM_ERR_FOREIGN_POINTER, "another pool's handle");
    expect_refused(q, h, RTM_ERR_FOREIGN_POINTER, "this pool's handle in another");
    expect_refused(p, (h & ~ZS_TEST_IDX_MASK) | 2u, RTM_ERR_FOREIGN_POINTER, "never issued");
    expect_refused(p, h | ZS_TEST_IDX_MASK, RTM_ERR_FOREIGN_POINTER, "index out of the table");
    expect_refused(p, h ^ ((uint64_t)1 << 29), RTM_ERR_DOUBLE_FREE, "wrong generation");
    rtm_zs_free(p, h);
    expect_refused(p, h, RTM_ERR_DOUBLE_FREE, "freed");
    /* The slot issued again: the old handle is stale, the new one works. */
    rtm_zs_handle again = rtm_zs_malloc(p, 100);
    REQUIRE(again != 0);
    CHECK_EQ(again & ZS_TEST_IDX_MASK, h & ZS_TEST_IDX_MASK);
    CHECK(again != h);
    expect_refused(p, h, RTM_ERR_DOUBLE_FREE, "stale after reuse");
    CHECK(rtm_zs_map(p, again) != NULL);
    rtm_zs_unmap(p, again);
    /* A pool created again over the same memory refuses the old handles. */
    rtm_zspool *p2 = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p2 == p);
    expect_refused(p2, keep, RTM_ERR_FOREIGN_POINTER, "handle of the pool before re-create");
    /* Unmap without a map. */
    rtm_zs_handle u = rtm_zs_malloc(p2, 10);
    REQUIRE(u != 0);
    recorder_reset();
    errno = 0;
    rtm_zs_unmap(p2, u);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK_EQ(rtm_zs_check(p2), 0);
    rtm_set_error_handler(NULL, NULL);
}

static void test_map_nesting(void)
{
    recorder_install();
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p != NULL);
    rtm_zs_handle h = rtm_zs_malloc(p, 64);
    REQUIRE(h != 0);
    void *a = rtm_zs_map(p, h), *b = rtm_zs_map(p, h);
    CHECK(a != NULL);
    CHECK_PTR_EQ(a, b);
    rtm_zs_unmap(p, h);
    rtm_zs_unmap(p, h);
    CHECK_EQ(recorder()->calls, 0);
    rtm_zs_unmap(p, h); /* one more than the maps */
    CHECK_EQ(recorder()->calls, 1);
    /* 65535 nested maps; the next is refused without a report. */
    for (unsigned i = 0; i < 65535u; i++)
        REQUIRE(rtm_zs_map(p, h) != NULL);
    recorder_reset();
    errno = 0;
    CHECK(rtm_zs_map(p, h) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(recorder()->calls, 0);
    CHECK_EQ(rtm_zs_check(p), 0);
    /* Freeing a mapped object ends its mappings. */
    rtm_zs_free(p, h);
    CHECK_EQ(rtm_zs_check(p), 0);
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, 0);
    rtm_set_error_handler(NULL, NULL);
}

/* Fill n objects of `size` with a pattern from their number. */
static void fill(rtm_zspool *p, rtm_zs_handle *hs, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        hs[i] = rtm_zs_malloc(p, size);
        REQUIRE(hs[i] != 0);
        unsigned char *d = rtm_zs_map(p, hs[i]);
        for (size_t j = 0; j < size; j++)
            d[j] = (unsigned char)(i * 7u + j);
        rtm_zs_unmap(p, hs[i]);
    }
}

static int intact(rtm_zspool *p, rtm_zs_handle h, size_t i, size_t size)
{
    const unsigned char *d = rtm_zs_map(p, h);
    int ok = d != NULL;
    for (size_t j = 0; ok && j < size; j++)
        ok = d[j] == (unsigned char)(i * 7u + j);
    rtm_zs_unmap(p, h);
    return ok;
}

static void test_compaction(void)
{
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p != NULL);
    CHECK_EQ(rtm_zs_compact(p), 0); /* empty: nothing to do */
    /* 1000-byte objects: slot 1008, 4 per page, span of 1 page (99 %...). */
    const size_t size = 1000, slot = zs_test_slot(size), objs = zs_test_objs(slot);
    const size_t k = zs_test_span_pages(slot), n = 40u * objs;
    static rtm_zs_handle hs[4096];
    fill(p, hs, n, size);
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, 40u * k);
    CHECK_EQ(rtm_zs_compact(p), 0); /* all full: nothing to do */
    /* Keep one object in every other span... and pin the first kept one. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % objs == 0 && (i / objs) % 2 == 0) {
            kept++;
            continue;
        }
        rtm_zs_free(p, hs[i]);
        hs[i] = 0;
    }
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, 20u * k);
    void *pinned = rtm_zs_map(p, hs[0]);
    REQUIRE(pinned != NULL);
    size_t given = 0, calls = 0, got;
    while ((got = rtm_zs_compact(p)) != 0) {
        CHECK_EQ(got, k); /* one span per call */
        given += got;
        calls++;
        CHECK_EQ(rtm_zs_check(p), 0);
        REQUIRE(calls < 100);
    }
    size_t want_spans = (kept + objs - 1u) / objs;
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, want_spans * k);
    CHECK_EQ(given, (20u - want_spans) * k);
    CHECK_PTR_EQ(rtm_zs_map(p, hs[0]), pinned); /* the pinned object did not move */
    rtm_zs_unmap(p, hs[0]);
    rtm_zs_unmap(p, hs[0]);
    for (size_t i = 0; i < n; i++)
        if (hs[i] != 0)
            CHECK_MSG(intact(p, hs[i], i, size), "object %zu changed by compaction", i);
    CHECK_EQ(rtm_zs_stats_get(p).objects, kept);
    CHECK_EQ(rtm_zs_check(p), 0);
}

/* Pins keep every span from being a source: compaction does nothing. */
static void test_compaction_respects_pins(void)
{
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p != NULL);
    static rtm_zs_handle hs[64];
    fill(p, hs, 3, 3000); /* one object per span (3008-byte slot) */
    rtm_zs_free(p, hs[1]);
    size_t used = rtm_zs_stats_get(p).pages_used;
    REQUIRE(rtm_zs_map(p, hs[0]) != NULL);
    REQUIRE(rtm_zs_map(p, hs[2]) != NULL);
    CHECK_EQ(rtm_zs_compact(p), 0);
    CHECK_EQ(rtm_zs_stats_get(p).pages_used, used);
    rtm_zs_unmap(p, hs[0]);
    rtm_zs_unmap(p, hs[2]);
    CHECK(intact(p, hs[0], 0, 3000));
    CHECK(intact(p, hs[2], 2, 3000));
    CHECK_EQ(rtm_zs_check(p), 0);
}

static void test_exhaustion(void)
{
    /* Pages: 4096-byte objects until refused; then every freed one fits. */
    rtm_zspool *p = rtm_zs_create(region_b, sizeof region_b);
    REQUIRE(p != NULL);
    size_t pages = rtm_zs_stats_get(p).pages_total, n = 0;
    static rtm_zs_handle hs[1 << 16];
    while ((hs[n] = rtm_zs_malloc(p, 2000)) != 0)
        n++;
    CHECK_ERRNO(ENOMEM);
    CHECK(n > 0);
    CHECK(pages - rtm_zs_stats_get(p).pages_used < zs_test_span_pages(zs_test_slot(2000)));
    rtm_zs_free(p, hs[0]);
    CHECK((hs[0] = rtm_zs_malloc(p, 2000)) != 0);
    CHECK_EQ(rtm_zs_check(p), 0);
    /* Handles: one per 128 bytes of pages; tiny objects run out of them. */
    p = rtm_zs_create(region_b, sizeof region_b);
    REQUIRE(p != NULL);
    n = 0;
    while ((hs[n] = rtm_zs_malloc(p, 1)) != 0)
        n++;
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(n, pages * 4096u / 128u);
    CHECK(rtm_zs_stats_get(p).pages_used < pages);
    rtm_zs_free(p, hs[5]);
    CHECK(rtm_zs_malloc(p, 1) != 0);
    CHECK_EQ(rtm_zs_check(p), 0);
}

/* The validator sees damage: an overwritten object header. */
static void test_check_detects(void)
{
    recorder_install();
    rtm_zspool *p = rtm_zs_create(region_a, sizeof region_a);
    REQUIRE(p != NULL);
    rtm_zs_handle a = rtm_zs_malloc(p, 24), b = rtm_zs_malloc(p, 24);
    REQUIRE(a != 0 && b != 0);
    unsigned char *d = rtm_zs_map(p, a);
    rtm_zs_unmap(p, a);
    CHECK_EQ(rtm_zs_check(p), 0);
    CHECK_EQ(recorder()->calls, 0);
    unsigned char save[8];
    memcpy(save, d - 8, 8);
    d[-6] ^= 1u; /* the header's size field */
    errno = 0;
    CHECK_EQ(rtm_zs_check(p), -1);
    CHECK_ERRNO(EFAULT);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
    memcpy(d - 8, save, 8);
    d[-8] ^= 1u; /* the header's handle index */
    CHECK_EQ(rtm_zs_check(p), -1);
    memcpy(d - 8, save, 8);
    CHECK_EQ(rtm_zs_check(p), 0);
    rtm_set_error_handler(NULL, NULL);
}

/* Offsets, not pointers: a pool copied elsewhere keeps working. */
static void test_position_independent(void)
{
    rtm_zspool *p = rtm_zs_create(region_b, sizeof region_b);
    REQUIRE(p != NULL);
    static rtm_zs_handle hs[16];
    fill(p, hs, 16, 300);
    static _Alignas(64) unsigned char copy[sizeof region_b];
    memcpy(copy, region_b, sizeof region_b);
    memset(region_b, 0xa5, sizeof region_b);
    rtm_zspool *q = (rtm_zspool *)(void *)copy;
    CHECK_EQ(rtm_zs_check(q), 0);
    for (size_t i = 0; i < 16; i++)
        CHECK(intact(q, hs[i], i, 300));
    rtm_zs_free(q, hs[3]);
    CHECK(rtm_zs_malloc(q, 300) != 0);
    CHECK_EQ(rtm_zs_check(q), 0);
}

int main(void)
{
    RUN_TEST(test_create_bad_inputs);
    RUN_TEST(test_null_and_non_pools);
    RUN_TEST(test_class_geometry);
    RUN_TEST(test_malloc_sizes);
    RUN_TEST(test_bad_handles);
    RUN_TEST(test_map_nesting);
    RUN_TEST(test_compaction);
    RUN_TEST(test_compaction_respects_pins);
    RUN_TEST(test_exhaustion);
    RUN_TEST(test_check_detects);
    RUN_TEST(test_position_independent);
    return check_summary();
}
