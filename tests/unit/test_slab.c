// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_slab.c -- white-box tests of the slab heap (rtmem/slab.h):
 * bad inputs, every class boundary (8/9, 16/17, ..., largest / largest + 1
 * going to the buddy), slabs moving between partial / full / empty lists,
 * the one-cached-empty-slab policy (further empty slabs go back to the
 * buddy), double free and foreign pointers, exact statistics, alignment,
 * realloc, walk, reset and the checker after every step.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem/slab.h"

static test_region reg;

static rtm_slab *heap(size_t bytes, size_t page)
{
    reg = region_malloc(bytes, 0);
    rtm_slab *s = rtm_slab_create(reg.mem, reg.bytes, page);
    REQUIRE(s != NULL);
    REQUIRE(rtm_slab_check(s) == 0);
    return s;
}

static void test_bad_inputs(void)
{
    char buf[64];
    errno = 0;
    CHECK(rtm_slab_create(NULL, 100000, 4096) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_slab_create(buf, sizeof buf, 4096) == NULL);
    CHECK(rtm_slab_min_region(128) == 0);
    CHECK(rtm_slab_min_region(1000) == 0);
    CHECK(rtm_slab_min_region((size_t)RTM_SLAB_MAX_PAGE * 2u) == 0);
    test_region r = region_malloc(100000, 0);
    CHECK(rtm_slab_create(r.mem, r.bytes, 128) == NULL);
    CHECK(rtm_slab_create(r.mem, r.bytes, 3000) == NULL);
    region_free(&r);
    /* The minimum region works at every start. */
    for (size_t p = 256; p <= 8192; p <<= 1)
        for (size_t mis = 0; mis < 64; mis += 7) {
            r = region_malloc(rtm_slab_min_region(p), mis);
            rtm_slab *s = rtm_slab_create(r.mem, r.bytes, p);
            CHECK(s != NULL);
            if (s != NULL) {
                CHECK(rtm_slab_check(s) == 0);
                void *a = rtm_slab_alloc(s, 8);
                CHECK(a != NULL);
                CHECK(rtm_slab_free(s, a) == 0);
                CHECK(rtm_slab_check(s) == 0);
            }
            region_free(&r);
        }
}

static void test_class_boundaries(void)
{
    for (size_t page = 256; page <= 16384; page <<= 1) {
        rtm_slab *s = heap(64 * page, page);
        CHECK_EQ(rtm_slab_class_count(s), (unsigned)(__builtin_ctzl(page) - 5));
        CHECK_EQ(rtm_slab_usable_size(s, NULL), 0);
        void *z = rtm_slab_alloc(s, 0);
        CHECK_EQ(rtm_slab_usable_size(s, z), 8);
        for (size_t c = 8; c <= page / 8; c <<= 1) {
            void *a = rtm_slab_alloc(s, c), *b = rtm_slab_alloc(s, c + 1);
            REQUIRE(a != NULL && b != NULL);
            CHECK_EQ(rtm_slab_usable_size(s, a), c);
            CHECK_EQ(rtm_slab_usable_size(s, b), c == page / 8 ? page : 2 * c);
            CHECK(((uintptr_t)a & (c - 1)) == 0); /* natural alignment */
            CHECK_EQ(rtm_slab_usable_size(s, (char *)a + 1), 0);
            CHECK(rtm_slab_check(s) == 0);
        }
        /* largest + 1 is a buddy block: rounded to pages. */
        void *big = rtm_slab_alloc(s, 3 * page);
        CHECK_EQ(rtm_slab_usable_size(s, big), 4 * page);
        CHECK(rtm_slab_check(s) == 0);
        region_free(&reg);
    }
}

static void test_lists(void)
{
    const size_t page = 1024;
    rtm_slab *s = heap(64 * page, page);
    unsigned c = 3; /* class 64: 16 per slab */
    size_t cap = page / 64;
    void *p[64];
    for (size_t i = 0; i < 2 * cap; i++)
        REQUIRE((p[i] = rtm_slab_alloc(s, 64)) != NULL);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_FULL), 2);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_PARTIAL), 0);
    rtm_stats st = rtm_slab_stats(s);
    CHECK_EQ(st.used_bytes, 2 * page);
    CHECK_EQ(st.live_blocks, 2 * cap);
    size_t free0 = st.free_bytes;
    /* one free: full -> partial */
    CHECK(rtm_slab_free(s, p[0]) == 0);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_FULL), 1);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_PARTIAL), 1);
    /* the freed slot is reused first */
    CHECK_PTR_EQ(rtm_slab_alloc(s, 60), p[0]);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_FULL), 2);
    /* empty the first slab: it becomes the cached empty slab */
    for (size_t i = 0; i < cap; i++)
        CHECK(rtm_slab_free(s, p[i]) == 0);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_EMPTY), 1);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_FULL), 1);
    CHECK(rtm_slab_check(s) == 0);
    size_t buddy_free = rtm_slab_stats(s).free_bytes;
    /* empty the second: returned to the buddy (one empty cached at most) */
    for (size_t i = cap; i < 2 * cap; i++)
        CHECK(rtm_slab_free(s, p[i]) == 0);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_EMPTY), 1);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_FULL), 0);
    st = rtm_slab_stats(s);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.free_bytes, free0 + 2 * page);
    CHECK(st.free_bytes == buddy_free + page);
    CHECK_EQ(st.peak_used_bytes, 2 * page);
    /* the cached slab serves the next allocation */
    void *q = rtm_slab_alloc(s, 64);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_EMPTY), 0);
    CHECK_EQ(rtm_slab_slab_count(s, c, RTM_SLAB_PARTIAL), 1);
    CHECK(rtm_slab_free(s, q) == 0);
    CHECK(rtm_slab_check(s) == 0);
    region_free(&reg);
}

static void test_misuse(void)
{
    recorder_install();
    rtm_slab *s = heap(64 * 4096, 4096);
    void *a = rtm_slab_alloc(s, 24), *b = rtm_slab_alloc(s, 9000);
    REQUIRE(a != NULL && b != NULL);
    CHECK(rtm_slab_free(s, a) == 0);
    recorder_reset();
    errno = 0;
    CHECK(rtm_slab_free(s, a) == -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK(rtm_slab_free(s, (char *)a + 8) == -1); /* interior of class 32 */
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 1);
    CHECK(rtm_slab_free(s, (char *)b + 8) == -1); /* interior of a large block */
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 2);
    int local;
    CHECK(rtm_slab_free(s, &local) == -1);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 3);
    CHECK(rtm_slab_free(s, b) == 0);
    CHECK(rtm_slab_free(s, b) == -1);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 2);
    CHECK(rtm_slab_realloc(s, a, 100) == NULL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 3);
    CHECK(rtm_slab_free(s, NULL) == 0);
    CHECK(rtm_slab_check(s) == 0);
    rtm_stats st = rtm_slab_stats(s);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.used_bytes, 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&reg);
}

static void test_exhaustion_and_stats(void)
{
    rtm_slab *s = heap(rtm_slab_min_region(256) + 4 * 256, 256);
    size_t n = 0, used = 0;
    void *p[4096];
    errno = 0;
    while (n < 4096 && (p[n] = rtm_slab_alloc(s, 8)) != NULL) {
        n++;
        used += 8;
        rtm_stats st = rtm_slab_stats(s);
        CHECK_EQ(st.used_bytes, used);
        CHECK_EQ(st.live_blocks, n);
    }
    CHECK_ERRNO(ENOMEM);
    rtm_stats st = rtm_slab_stats(s);
    CHECK_EQ(st.failed_allocs, 1);
    CHECK_EQ(st.largest_free, 0);
    CHECK_EQ(st.free_bytes, 0);
    CHECK(rtm_slab_alloc(s, 300) == NULL);
    CHECK_EQ(rtm_slab_stats(s).failed_allocs, 2);
    CHECK(rtm_slab_free(s, p[0]) == 0);
    CHECK_EQ(rtm_slab_stats(s).largest_free, 8);
    CHECK(rtm_slab_check(s) == 0);
    rtm_slab_reset(s);
    CHECK(rtm_slab_check(s) == 0);
    st = rtm_slab_stats(s);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.failed_allocs, 0);
    CHECK(st.largest_free >= 256);
    region_free(&reg);
}

static void test_aligned_realloc(void)
{
    rtm_slab *s = heap(256 * 4096, 4096);
    errno = 0;
    CHECK(rtm_slab_aligned_alloc(s, 24, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    for (size_t a = 8; a <= 4 * 4096; a <<= 1) {
        errno = 0;
        void *p = rtm_slab_aligned_alloc(s, a, 10);
        if (a > 4096 && p == NULL) { /* beyond the arena start's alignment */
            CHECK_ERRNO(ENOTSUP);
            continue;
        }
        REQUIRE(p != NULL);
        CHECK(((uintptr_t)p & (a - 1)) == 0);
        CHECK(rtm_slab_check(s) == 0);
    }
    char *p = rtm_slab_alloc(s, 20);
    memset(p, 0x5a, 20);
    CHECK_PTR_EQ(rtm_slab_realloc(s, p, 32), p); /* within class 32 */
    char *q = rtm_slab_realloc(s, p, 33);
    REQUIRE(q != NULL);
    CHECK(q != p);
    CHECK(q[19] == 0x5a);
    CHECK_EQ(rtm_slab_usable_size(s, q), 64);
    char *r = rtm_slab_realloc(s, q, 10000);
    REQUIRE(r != NULL);
    CHECK_EQ(rtm_slab_usable_size(s, r), 4 * 4096);
    CHECK(r[0] == 0x5a);
    char *t = rtm_slab_realloc(s, r, 30000);
    CHECK_EQ(rtm_slab_usable_size(s, t), 8 * 4096);
    errno = 0;
    CHECK(rtm_slab_realloc(s, t, 0) == NULL);
    CHECK_ERRNO(0);
    CHECK(rtm_slab_check(s) == 0);
    region_free(&reg);
}

typedef struct sums {
    size_t used, freeb, n;
} sums;
static void sum(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    sums *w = arg;
    if (used)
        w->used += usable;
    else
        w->freeb += usable;
    w->n++;
}

static void test_walk(void)
{
    rtm_slab *s = heap(64 * 512, 512);
    void *a = rtm_slab_alloc(s, 16), *b = rtm_slab_alloc(s, 64), *c = rtm_slab_alloc(s, 2000);
    REQUIRE(a && b && c);
    sums w = {0, 0, 0};
    rtm_slab_walk(s, sum, &w);
    rtm_stats st = rtm_slab_stats(s);
    CHECK_EQ(w.used, st.used_bytes);
    CHECK_EQ(w.freeb, st.free_bytes);
    CHECK_EQ(st.used_bytes, 16 + 64 + 2048);
    region_free(&reg);
}

static void test_corruption(void)
{
    recorder_install();
    rtm_slab *s = heap(64 * 4096, 4096);
    uint32_t *kind = (uint32_t *)(void *)s;
    uint32_t saved = *kind;
    *kind = 0;
    CHECK(rtm_slab_check(s) == -1);
    *kind = saved;
    CHECK(rtm_slab_check(s) == 0);
    void *a = rtm_slab_alloc(s, 64), *b = rtm_slab_alloc(s, 64);
    CHECK(rtm_slab_free(s, a) == 0);
    uint32_t link = *(uint32_t *)a;
    *(uint32_t *)a = 12345; /* free-list link off the class grid */
    CHECK(rtm_slab_check(s) == -1);
    *(uint32_t *)a = link;
    CHECK(rtm_slab_check(s) == 0);
    CHECK(rtm_slab_free(s, b) == 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&reg);
}

int main(void)
{
    RUN_TEST(test_bad_inputs);
    RUN_TEST(test_class_boundaries);
    RUN_TEST(test_lists);
    RUN_TEST(test_misuse);
    RUN_TEST(test_exhaustion_and_stats);
    RUN_TEST(test_aligned_realloc);
    RUN_TEST(test_walk);
    RUN_TEST(test_corruption);
    return check_summary();
}
