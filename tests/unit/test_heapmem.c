// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_heapmem.c -- white-box tests of the heapmem page/bucket
 * heap (rtmem/heapmem.h): bad inputs, bucket bitmaps (every slot of a page,
 * reuse, the page going back when empty), range coalescing on both sides,
 * double free and interior pointers, corruption found by check, exact
 * statistics.
 *
 * Corruption tests write into the documented layout: the page map starts
 * rtm_heapmem_control_size() bytes after the handle, entries of
 * rtm_heapmem_entry_size(page) bytes: type (byte 0), class (1), len (4..7).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem/heapmem.h"

static uint8_t *entry_of(rtm_heapmem *h, size_t i, size_t page)
{
    return (uint8_t *)h + rtm_heapmem_control_size() + i * rtm_heapmem_entry_size(page);
}

static void test_bad_inputs(void)
{
    static unsigned char buf[8192];
    static const size_t bad[] = {0, 1, 32, 63, 65, 100, 3000, 131072};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK(rtm_heapmem_create(buf, sizeof buf, bad[i]) == NULL);
        CHECK_ERRNO(EINVAL);
        CHECK_EQ(rtm_heapmem_min_region(bad[i]), 0);
    }
    errno = 0;
    CHECK(rtm_heapmem_create(NULL, sizeof buf, 512) == NULL);
    CHECK_ERRNO(EINVAL);
    size_t min = rtm_heapmem_min_region(512);
    errno = 0;
    CHECK(rtm_heapmem_create(buf, 100, 512) == NULL);
    CHECK_ERRNO(EINVAL);
    for (size_t mis = 0; mis < 8; mis++) {
        rtm_heapmem *h = rtm_heapmem_create(buf + mis, min, 512);
        REQUIRE(h != NULL);
        CHECK_EQ(rtm_heapmem_page_count(h), 1);
        CHECK_EQ(rtm_heapmem_check(h), 0);
    }
    rtm_heapmem *h = rtm_heapmem_create(buf, sizeof buf, 512);
    REQUIRE(h != NULL);
    errno = 0;
    CHECK(rtm_heapmem_aligned_alloc(h, 3, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heapmem_aligned_alloc(h, 1024, 8) == NULL);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_heapmem_stats(h).failed_allocs, 0);
    errno = 0;
    CHECK(rtm_heapmem_alloc(h, (size_t)-1) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_heapmem_free(h, NULL), 0);
    CHECK_EQ(rtm_heapmem_usable_size(h, NULL), 0);
    CHECK_EQ(rtm_heapmem_check(h), 0);
}

static void test_bucket_bitmap(void)
{
    test_region r = region_malloc(64 * 1024, 0);
    rtm_heapmem *h = rtm_heapmem_create(r.mem, r.bytes, 512);
    REQUIRE(h != NULL);
    rtm_stats s0 = rtm_heapmem_stats(h);
    void *p[32];
    for (int i = 0; i < 32; i++) {
        p[i] = rtm_heapmem_alloc(h, i == 0 ? 0 : 16);
        REQUIRE(p[i] != NULL);
        CHECK_EQ(rtm_heapmem_usable_size(h, p[i]), 16);
        if (i > 0)
            CHECK_PTR_EQ(p[i], (char *)p[0] + 16 * i); /* find-first-zero, one page */
    }
    CHECK_EQ(rtm_heapmem_check(h), 0);
    void *q = rtm_heapmem_alloc(h, 9); /* the page is full: a second one */
    REQUIRE(q != NULL);
    CHECK(((uintptr_t)q - (uintptr_t)p[0]) % 512 == 0);
    CHECK_EQ(rtm_heapmem_free(h, p[5]), 0);
    CHECK_PTR_EQ(rtm_heapmem_alloc(h, 12), p[5]); /* the freed slot is reused */
    rtm_stats s = rtm_heapmem_stats(h);
    CHECK_EQ(s.used_bytes, 33 * 16);
    CHECK_EQ(s.live_blocks, 33);
    CHECK_EQ(s.free_bytes, s0.free_bytes - 33 * 16);
    for (int i = 0; i < 32; i++)
        CHECK_EQ(rtm_heapmem_free(h, p[i]), 0);
    CHECK_EQ(rtm_heapmem_free(h, q), 0);
    s = rtm_heapmem_stats(h);
    CHECK_EQ(s.free_bytes, s0.free_bytes);
    CHECK_EQ(s.largest_free, s0.largest_free);
    CHECK_EQ(s.used_bytes, 0);
    /* Classes: 17..32 -> 32, 129..256 -> 256 (half a page), 257 -> a page. */
    void *a = rtm_heapmem_alloc(h, 17), *b = rtm_heapmem_alloc(h, 200),
         *c = rtm_heapmem_alloc(h, 257);
    CHECK_EQ(rtm_heapmem_usable_size(h, a), 32);
    CHECK_EQ(rtm_heapmem_usable_size(h, b), 256);
    CHECK_EQ(rtm_heapmem_usable_size(h, c), 512);
    CHECK(((uintptr_t)b & 255u) == 0);
    void *al = rtm_heapmem_aligned_alloc(h, 128, 8);
    CHECK_EQ(rtm_heapmem_usable_size(h, al), 128);
    CHECK(((uintptr_t)al & 127u) == 0);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    rtm_heapmem_reset(h);
    CHECK_EQ(rtm_heapmem_stats(h).free_bytes, s0.free_bytes);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    region_free(&r);
}

static void test_range_coalescing(void)
{
    test_region r = region_malloc(64 * 1024, 3);
    rtm_heapmem *h = rtm_heapmem_create(r.mem, r.bytes, 512);
    REQUIRE(h != NULL);
    size_t pages = rtm_heapmem_page_count(h);
    rtm_stats s0 = rtm_heapmem_stats(h);
    CHECK_EQ(s0.largest_free, pages * 512);
    void *a = rtm_heapmem_alloc(h, 1024), *b = rtm_heapmem_alloc(h, 1500),
         *c = rtm_heapmem_alloc(h, 513), *d = rtm_heapmem_alloc(h, 512);
    REQUIRE(a && b && c && d);
    CHECK_PTR_EQ(b, (char *)a + 1024);
    CHECK_PTR_EQ(c, (char *)b + 1536);
    CHECK_EQ(rtm_heapmem_usable_size(h, b), 1536);
    CHECK_EQ(rtm_heapmem_usable_size(h, (char *)b + 512), 0);
    CHECK_EQ(rtm_heapmem_free(h, a), 0); /* no free neighbour */
    CHECK_EQ(rtm_heapmem_free(h, c), 0); /* no free neighbour */
    CHECK_EQ(rtm_heapmem_check(h), 0);
    CHECK_EQ(rtm_heapmem_free(h, b), 0); /* merges left and right */
    CHECK_EQ(rtm_heapmem_check(h), 0);
    void *big = rtm_heapmem_alloc(h, 1024 + 1536 + 1024);
    CHECK_PTR_EQ(big, a); /* the merged 7 pages are one range again */
    CHECK_EQ(rtm_heapmem_free(h, big), 0);
    CHECK_EQ(rtm_heapmem_free(h, d), 0); /* merges left and with the tail */
    rtm_stats s = rtm_heapmem_stats(h);
    CHECK_EQ(s.largest_free, s0.largest_free);
    CHECK_EQ(s.free_bytes, s0.free_bytes);
    /* realloc: in place inside the range, moves beyond it. */
    void *p = rtm_heapmem_alloc(h, 600);
    memset(p, 0x5a, 600);
    CHECK_PTR_EQ(rtm_heapmem_realloc(h, p, 1024), p);
    CHECK_PTR_EQ(rtm_heapmem_realloc(h, p, 10), p);
    void *q = rtm_heapmem_realloc(h, p, 5000);
    REQUIRE(q != NULL);
    CHECK(((unsigned char *)q)[599] == 0x5a);
    CHECK(rtm_heapmem_realloc(h, q, 0) == NULL);
    CHECK_EQ(rtm_heapmem_stats(h).live_blocks, 0);
    /* Exhaustion: every page, then nothing; largest_free exact. */
    void *all = rtm_heapmem_alloc(h, pages * 512);
    REQUIRE(all != NULL);
    CHECK_EQ(rtm_heapmem_stats(h).largest_free, 0);
    errno = 0;
    CHECK(rtm_heapmem_alloc(h, 1) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_heapmem_stats(h).failed_allocs, 1);
    CHECK_EQ(rtm_heapmem_free(h, all), 0);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    region_free(&r);
}

static void test_misuse(void)
{
    test_region r = region_malloc(16 * 1024, 0);
    rtm_heapmem *h = rtm_heapmem_create(r.mem, r.bytes, 512);
    REQUIRE(h != NULL);
    recorder_install();
    void *s = rtm_heapmem_alloc(h, 16), *s2 = rtm_heapmem_alloc(h, 16);
    void *g = rtm_heapmem_alloc(h, 2000);
    recorder_reset();
    errno = 0;
    CHECK_EQ(rtm_heapmem_free(h, (char *)s + 8), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_FOREIGN_POINTER);
    CHECK_EQ(rtm_heapmem_free(h, (char *)g + 512), -1);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_FOREIGN_POINTER);
    CHECK_EQ(rtm_heapmem_free(h, (char *)r.mem + r.bytes + 4096), -1);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_FOREIGN_POINTER);
    CHECK_EQ(rtm_heapmem_free(h, s), 0);
    recorder_reset();
    CHECK_EQ(rtm_heapmem_free(h, s), -1); /* double free of a slot */
    CHECK_EQ(recorder()->last_kind, RTM_ERR_DOUBLE_FREE);
    CHECK_EQ(rtm_heapmem_free(h, g), 0);
    recorder_reset();
    CHECK_EQ(rtm_heapmem_free(h, g), -1); /* double free of a range */
    CHECK_EQ(recorder()->last_kind, RTM_ERR_DOUBLE_FREE);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    CHECK_EQ(rtm_heapmem_free(h, s2), 0);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

static void test_check_detects_corruption(void)
{
    test_region r = region_malloc(16 * 1024, 0);
    rtm_heapmem *h = rtm_heapmem_create(r.mem, r.bytes, 512);
    REQUIRE(h != NULL);
    recorder_install();
    void *s = rtm_heapmem_alloc(h, 16);
    void *g = rtm_heapmem_alloc(h, 1024);
    (void)s;
    (void)g;
    CHECK_EQ(rtm_heapmem_check(h), 0);
    size_t es = rtm_heapmem_entry_size(512);
    unsigned char *saved = malloc(rtm_heapmem_control_size() + 8 * es);
    memcpy(saved, h, rtm_heapmem_control_size() + 8 * es);
    /* page 0: bucket (type, class, count, bitmap); 1: used range head
     * (type, len); 2: its continuation (type); 3: the free range head
     * (type, len, next, prev). */
    static const size_t cases[][2] = {{0, 0}, {0, 1}, {0, 4}, {0, 20}, {0, 21}, {1, 0},
                                      {1, 4}, {2, 0}, {3, 0}, {3, 4},  {3, 8},  {3, 12}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        {
            size_t pg = cases[k][0];
            size_t offs[1];
            offs[0] = cases[k][1];
            uint8_t *e = entry_of(h, pg, 512);
            e[offs[0]] ^= 0x5a;
            recorder_reset();
            errno = 0;
            CHECK_MSG(rtm_heapmem_check(h) == -1, "page %zu byte %zu", pg, offs[0]);
            CHECK_ERRNO(EFAULT);
            CHECK_EQ(recorder()->last_kind, RTM_ERR_CHECK_FAILED);
            memcpy(h, saved, rtm_heapmem_control_size() + 8 * es);
        }
    }
    /* The control: a list head out of range. */
    CHECK_EQ(rtm_heapmem_check(h), 0);
    free(saved);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

static void visit(void *ptr, size_t usable, int used, void *arg)
{
    size_t *sums = arg;
    (void)ptr;
    sums[used ? 1 : 0] += usable;
}

static void test_stats_and_walk(void)
{
    test_region r = region_malloc(32 * 1024, 5);
    rtm_heapmem *h = rtm_heapmem_create(r.mem, r.bytes, 256);
    REQUIRE(h != NULL);
    void *p[40];
    size_t want = 0;
    for (size_t i = 0; i < 40; i++) {
        p[i] = rtm_heapmem_alloc(h, i * 37 % 700);
        REQUIRE(p[i] != NULL);
        want += rtm_heapmem_usable_size(h, p[i]);
    }
    for (size_t i = 0; i < 40; i += 3) {
        want -= rtm_heapmem_usable_size(h, p[i]);
        CHECK_EQ(rtm_heapmem_free(h, p[i]), 0);
    }
    rtm_stats s = rtm_heapmem_stats(h);
    CHECK_EQ(s.used_bytes, want);
    size_t sums[2] = {0, 0};
    rtm_heapmem_walk(h, visit, sums);
    CHECK_EQ(sums[1], s.used_bytes);
    CHECK_EQ(sums[0], s.free_bytes);
    CHECK_EQ(sums[0] + sums[1], rtm_heapmem_page_count(h) * 256);
    CHECK(s.peak_used_bytes >= s.used_bytes);
    CHECK_EQ(rtm_heapmem_check(h), 0);
    region_free(&r);
}

int main(void)
{
    RUN_TEST(test_bad_inputs);
    RUN_TEST(test_bucket_bitmap);
    RUN_TEST(test_range_coalescing);
    RUN_TEST(test_misuse);
    RUN_TEST(test_check_detects_corruption);
    RUN_TEST(test_stats_and_walk);
    return check_summary();
}
