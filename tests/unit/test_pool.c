// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_pool.c -- white-box tests of the fixed-block pool
 * (rtmem/pool.h): the arena arithmetic (exactly floor(usable / block)
 * blocks), exhaustion, LIFO reuse, misuse detection, exact statistics, the
 * checker against hand-made corruption, reset and walk; and the generic
 * API's "pool:<size>" names.
 *
 * Corruption tests write into the layout the header documents: the bitmap
 * starts rtm_pool_control_size() bytes after the pool handle, and a free
 * block's first word is its free-list link.
 */
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"

/* The documented arena arithmetic, computed independently. */
static size_t expected_count(const void *mem, size_t bytes, size_t block_size)
{
    size_t block = rtm_pool_block_size_for(block_size);
    size_t lost = (size_t)((8u - (uintptr_t)mem % 8u) % 8u);
    size_t ctrl = rtm_pool_control_size();
    if (bytes < lost + ctrl)
        return 0;
    size_t avail = bytes - lost - ctrl;
    size_t n0 = avail / block;
    size_t bitmap = 8u * ((n0 + 63u) / 64u);
    return avail < bitmap ? 0 : (avail - bitmap) / block;
}

/* Allocates until ENOMEM; returns how many blocks it got. */
static size_t drain(rtm_pool *p, void **out, size_t cap)
{
    size_t n = 0;
    for (;;) {
        errno = 0;
        void *b = rtm_pool_alloc(p, 1);
        if (b == NULL) {
            CHECK_ERRNO(ENOMEM);
            return n;
        }
        if (n < cap)
            out[n] = b;
        n++;
    }
}

static void test_block_size_rounding(void)
{
    CHECK_EQ(rtm_pool_block_size_for(0), 0);
    CHECK_EQ(rtm_pool_block_size_for(1), 8);
    CHECK_EQ(rtm_pool_block_size_for(8), 8);
    CHECK_EQ(rtm_pool_block_size_for(9), 16);
    CHECK_EQ(rtm_pool_block_size_for(100), 104);
    CHECK_EQ(rtm_pool_block_size_for(RTM_POOL_MAX_BLOCK), RTM_POOL_MAX_BLOCK);
    CHECK_EQ(rtm_pool_block_size_for(RTM_POOL_MAX_BLOCK + 1u), 0);
    CHECK_EQ(rtm_pool_block_size_for(SIZE_MAX), 0);
}

/* Exactly floor(usable / block) blocks, at every start and many lengths. */
static void test_exact_count(void)
{
    static const size_t sizes[] = {1, 8, 12, 16, 24, 64, 100, 512, 4096};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t m = 0; m < 8; m++) {
            for (size_t bytes = 100; bytes < 40000; bytes = bytes * 5 / 4 + 3) {
                test_region r = region_malloc(bytes, m);
                size_t want = expected_count(r.mem, bytes, sizes[s]);
                rtm_pool *p = rtm_pool_create(r.mem, r.bytes, sizes[s]);
                if (want == 0) {
                    CHECK(p == NULL);
                    region_free(&r);
                    continue;
                }
                REQUIRE(p != NULL);
                CHECK_EQ(rtm_pool_block_count(p), want);
                static void *blocks[8192];
                CHECK_EQ(drain(p, blocks, 8192), want);
                size_t block = rtm_pool_block(p);
                /* back to back, no header, inside the region */
                for (size_t i = 1; i < want && i < 8192; i++)
                    CHECK_EQ((uintptr_t)blocks[i] - (uintptr_t)blocks[i - 1u], block);
                CHECK((unsigned char *)blocks[want - 1u] + block <= r.mem + r.bytes);
                CHECK_EQ(rtm_pool_check(p), 0);
                region_free(&r);
            }
        }
    }
}

/* rtm_pool_region_for(): count blocks fit, 8 bytes less does not. */
static void test_region_for(void)
{
    static const size_t sizes[] = {1, 8, 16, 24, 64, 4096};
    CHECK_EQ(rtm_pool_region_for(0, 8), 0);
    CHECK_EQ(rtm_pool_region_for(10, 0), 0);
    CHECK_EQ(rtm_pool_region_for(SIZE_MAX / 2u, 64), 0);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t count = 1; count < 3000; count = count * 3 / 2 + 1) {
            size_t bytes = rtm_pool_region_for(count, sizes[s]);
            test_region r = region_malloc(bytes, 0);
            rtm_pool *p = rtm_pool_create(r.mem, bytes, sizes[s]);
            REQUIRE(p != NULL);
            CHECK_EQ(rtm_pool_block_count(p), count);
            CHECK(expected_count(r.mem, bytes - 8u, sizes[s]) < count);
            region_free(&r);
        }
    }
}

static void test_min_region(void)
{
    for (size_t m = 0; m < 8; m++) {
        size_t min = rtm_pool_min_region(24);
        test_region r = region_malloc(min, m);
        rtm_pool *p = rtm_pool_create(r.mem, min, 24);
        CHECK(p != NULL);
        if (p != NULL)
            CHECK(rtm_pool_block_count(p) >= 1);
        region_free(&r);
    }
    test_region r = region_malloc(4096, 1); /* worst start: 7 bytes lost to alignment */
    errno = 0;
    CHECK(rtm_pool_create(r.mem, rtm_pool_min_region(24) - 1u, 24) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_pool_create(NULL, 4096, 24) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_pool_create(r.mem, 4096, 0) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_pool_create(r.mem, 4096, RTM_POOL_MAX_BLOCK + 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_pool_create(r.mem, 4096, 8192) == NULL); /* not one block fits */
    CHECK_ERRNO(EINVAL);
    region_free(&r);
}

/* Exhaustion, then LIFO reuse: the last freed block comes back first. */
static void test_exhaustion_and_lifo(void)
{
    test_region r = region_malloc(rtm_pool_region_for(10, 48), 0);
    rtm_pool *p = rtm_pool_create(r.mem, r.bytes, 48);
    REQUIRE(p != NULL);
    void *b[10];
    for (size_t i = 0; i < 10; i++) {
        b[i] = rtm_pool_alloc(p, 48);
        REQUIRE(b[i] != NULL);
        if (i > 0) /* fresh blocks come in address order */
            CHECK_EQ((uintptr_t)b[i] - (uintptr_t)b[i - 1u], 48);
    }
    errno = 0;
    CHECK(rtm_pool_alloc(p, 1) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_pool_alloc(p, 0) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_pool_stats(p).failed_allocs, 2);
    CHECK_EQ(rtm_pool_stats(p).largest_free, 0);
    /* free 3, 7, 1, 5: reuse order 5, 1, 7, 3 */
    static const size_t order[] = {3, 7, 1, 5};
    for (size_t i = 0; i < 4; i++)
        CHECK_EQ(rtm_pool_free(p, b[order[i]]), 0);
    for (size_t i = 0; i < 4; i++)
        CHECK_PTR_EQ(rtm_pool_alloc(p, 8), b[order[3u - i]]);
    CHECK(rtm_pool_alloc(p, 8) == NULL);
    /* every block freed is reusable: free all, get all ten back */
    for (size_t i = 0; i < 10; i++)
        CHECK_EQ(rtm_pool_free(p, b[i]), 0);
    void *again[10];
    for (size_t i = 0; i < 10; i++) {
        again[i] = rtm_pool_alloc(p, 1);
        CHECK_PTR_EQ(again[i], b[9u - i]);
    }
    CHECK_EQ(rtm_pool_check(p), 0);
    /* size above the block: ENOMEM, counted */
    rtm_pool_reset(p);
    errno = 0;
    CHECK(rtm_pool_alloc(p, 49) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_pool_stats(p).failed_allocs, 1);
    region_free(&r);
}

static void expect_refused(rtm_pool *p, void *ptr, rtm_error_kind kind)
{
    rtm_stats before = rtm_pool_stats(p);
    recorder_reset();
    errno = 0;
    CHECK_EQ(rtm_pool_free(p, ptr), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, 1);
    CHECK_EQ(recorder()->last_kind, kind);
    CHECK_PTR_EQ(recorder()->last_ptr, ptr);
    CHECK_PTR_EQ(recorder()->last_heap, p);
    rtm_stats after = rtm_pool_stats(p);
    CHECK(memcmp(&before, &after, sizeof before) == 0);
    CHECK_EQ(rtm_pool_check(p), 0);
}

static void test_misuse(void)
{
    recorder_install();
    test_region r = region_malloc(rtm_pool_region_for(8, 64), 0);
    test_region r2 = region_malloc(rtm_pool_region_for(8, 64), 0);
    rtm_pool *p = rtm_pool_create(r.mem, r.bytes, 64);
    rtm_pool *q = rtm_pool_create(r2.mem, r2.bytes, 64);
    REQUIRE(p != NULL && q != NULL);
    unsigned char *a = rtm_pool_alloc(p, 64), *b = rtm_pool_alloc(p, 64);
    unsigned char *other = rtm_pool_alloc(q, 64);
    REQUIRE(a != NULL && b != NULL && other != NULL);
    unsigned char *last = a + 7u * 64u;                       /* a block start, never handed out */
    expect_refused(p, a + 8, RTM_ERR_FOREIGN_POINTER);        /* interior */
    expect_refused(p, a + 1, RTM_ERR_FOREIGN_POINTER);        /* misaligned */
    expect_refused(p, a + 8u * 64u, RTM_ERR_FOREIGN_POINTER); /* one past the end */
    expect_refused(p, a - 64, RTM_ERR_FOREIGN_POINTER);       /* before block 0 */
    expect_refused(p, other, RTM_ERR_FOREIGN_POINTER);        /* another pool's */
    expect_refused(p, last, RTM_ERR_DOUBLE_FREE);             /* never allocated */
    CHECK_EQ(rtm_pool_free(p, b), 0);
    expect_refused(p, b, RTM_ERR_DOUBLE_FREE);
    /* realloc refuses the same pointers, NULL and EINVAL */
    errno = 0;
    CHECK(rtm_pool_realloc(p, a + 8, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_pool_realloc(p, b, 8) == NULL);
    CHECK_EQ(rtm_pool_free(p, NULL), 0);
    CHECK_EQ(rtm_pool_free(p, a), 0);
    CHECK_EQ(rtm_pool_check(p), 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
    region_free(&r2);
}

static void test_realloc_and_aligned(void)
{
    test_region r = region_malloc(rtm_pool_region_for(4, 64) + 64, 0);
    unsigned char *mem = r.mem + (64u - (uintptr_t)r.mem % 64u) % 64u; /* 64-aligned */
    rtm_pool *p = rtm_pool_create(mem, rtm_pool_region_for(4, 64), 64);
    REQUIRE(p != NULL);
    size_t align = rtm_pool_block_alignment(p);
    CHECK(align >= 8 && align <= 64);
    unsigned char *a = rtm_pool_aligned_alloc(p, align, 10);
    CHECK(a != NULL && (uintptr_t)a % align == 0);
    errno = 0;
    CHECK(rtm_pool_aligned_alloc(p, align * 2u, 10) == NULL);
    CHECK_ERRNO(ENOTSUP);
    errno = 0;
    CHECK(rtm_pool_aligned_alloc(p, 24, 10) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_pool_aligned_alloc(p, 8, 65) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_pool_stats(p).failed_allocs, 1); /* ENOTSUP/EINVAL not counted */
    memset(a, 0x5a, 64);
    CHECK_PTR_EQ(rtm_pool_realloc(p, a, 64), a);
    CHECK_PTR_EQ(rtm_pool_realloc(p, a, 1), a);
    errno = 0;
    CHECK(rtm_pool_realloc(p, a, 65) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(a[63], 0x5a);
    CHECK_EQ(rtm_pool_usable_size(p, a), 64);
    CHECK_EQ(rtm_pool_usable_size(p, NULL), 0);
    errno = EDOM;
    CHECK(rtm_pool_realloc(p, a, 0) == NULL);
    CHECK_ERRNO(EDOM);
    CHECK_EQ(rtm_pool_stats(p).live_blocks, 0);
    region_free(&r);
}

static void test_stats_exact(void)
{
    test_region r = region_malloc(10000, 3);
    rtm_pool *p = rtm_pool_create(r.mem, r.bytes, 100);
    REQUIRE(p != NULL);
    size_t n = rtm_pool_block_count(p), blk = rtm_pool_block(p);
    CHECK_EQ(blk, 104);
    rtm_stats st = rtm_pool_stats(p);
    CHECK_EQ(st.arena_bytes, 10000);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.free_bytes, n * blk);
    CHECK_EQ(st.largest_free, blk);
    void *x = rtm_pool_alloc(p, 3), *y = rtm_pool_alloc(p, 104);
    st = rtm_pool_stats(p);
    CHECK_EQ(st.used_bytes, 2 * blk);
    CHECK_EQ(st.live_blocks, 2);
    CHECK_EQ(st.free_bytes, (n - 2) * blk);
    CHECK_EQ(st.peak_used_bytes, 2 * blk);
    rtm_pool_free(p, x);
    rtm_pool_free(p, y);
    st = rtm_pool_stats(p);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.peak_used_bytes, 2 * blk);
    CHECK_EQ(st.free_bytes, n * blk);
    region_free(&r);
}

/* The checker: a damaged free link, and bitmap bits that disagree with the
 * list either way, are each reported; repairing restores a clean check. */
static void test_check_detects_corruption(void)
{
    recorder_install();
    test_region r = region_malloc(rtm_pool_region_for(16, 32), 0);
    rtm_pool *p = rtm_pool_create(r.mem, r.bytes, 32);
    REQUIRE(p != NULL);
    void *b[16];
    CHECK_EQ(drain(p, b, 16), 16);
    rtm_pool_free(p, b[2]);
    rtm_pool_free(p, b[9]); /* list: 9 -> 2 */
    CHECK_EQ(rtm_pool_check(p), 0);
    uint32_t *bits = (uint32_t *)(void *)((char *)p + rtm_pool_control_size());
    ptrdiff_t *link = b[9];
    ptrdiff_t saved = *link;
    static const ptrdiff_t bad[] = {8, 12345, -64, 1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        *link = saved + bad[i];
        recorder_reset();
        errno = 0;
        CHECK_EQ(rtm_pool_check(p), -1);
        CHECK_ERRNO(EFAULT);
        CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
    }
    *link = 0; /* list cut short */
    CHECK_EQ(rtm_pool_check(p), -1);
    *link = (ptrdiff_t)((char *)b[9] - (char *)p); /* a cycle */
    CHECK_EQ(rtm_pool_check(p), -1);
    *link = saved;
    CHECK_EQ(rtm_pool_check(p), 0);
    bits[0] |= 1u << 5; /* used block 5 marked free: bitmap/list mismatch */
    CHECK_EQ(rtm_pool_check(p), -1);
    bits[0] &= ~(1u << 5);
    bits[0] &= ~(1u << 2); /* listed block 2 marked used */
    CHECK_EQ(rtm_pool_check(p), -1);
    bits[0] |= 1u << 2;
    CHECK_EQ(rtm_pool_check(p), 0);
    errno = 0;
    CHECK_EQ(rtm_pool_check(NULL), -1);
    CHECK_ERRNO(EINVAL);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

typedef struct walk_log {
    size_t blocks, used, free;
    uintptr_t last;
    int ordered;
} walk_log;

static void walk_visit(void *ptr, size_t usable, int used, void *arg)
{
    walk_log *w = arg;
    if (w->blocks > 0 && (uintptr_t)ptr <= w->last)
        w->ordered = 0;
    w->last = (uintptr_t)ptr;
    w->blocks++;
    CHECK_EQ(usable, 16);
    if (used)
        w->used++;
    else
        w->free++;
}

static void test_walk_and_reset(void)
{
    test_region r = region_malloc(rtm_pool_region_for(20, 16), 0);
    rtm_pool *p = rtm_pool_create(r.mem, r.bytes, 16);
    REQUIRE(p != NULL);
    void *b[20];
    for (size_t i = 0; i < 12; i++)
        b[i] = rtm_pool_alloc(p, 16);
    rtm_pool_free(p, b[4]);
    rtm_pool_free(p, b[0]);
    walk_log w = {0, 0, 0, 0, 1};
    rtm_pool_walk(p, walk_visit, &w);
    CHECK_EQ(w.blocks, 20);
    CHECK_EQ(w.used, 10);
    CHECK_EQ(w.free, 10);
    CHECK(w.ordered);
    rtm_pool_reset(p);
    rtm_stats st = rtm_pool_stats(p);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.peak_used_bytes, 0);
    CHECK_EQ(st.free_bytes, 20 * 16);
    CHECK_EQ(rtm_pool_check(p), 0);
    /* after reset, blocks come back in address order from the start */
    CHECK_PTR_EQ(rtm_pool_alloc(p, 1), b[0]);
    CHECK_PTR_EQ(rtm_pool_alloc(p, 1), b[1]);
    w = (walk_log){0, 0, 0, 0, 1};
    rtm_pool_walk(p, walk_visit, &w);
    CHECK_EQ(w.used, 2);
    CHECK_EQ(rtm_pool_check(p), 0);
    region_free(&r);
}

/* The generic API: names, defaults, bad parameters, dispatch. */
static void test_generic_names(void)
{
    test_region r = region_malloc(64 * 1024, 3);
    static const char *const bad[] = {"pool:",   "pool:0",  "pool:abc", "pool:-1",
                                      "pool:+8", "pool: 8", "pool:8 ",  "pool:99999999999999999999",
                                      "pool:8:8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_heap_create(bad[i], r.mem, r.bytes) == NULL, "\"%s\" accepted", bad[i]);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK_EQ(rtm_min_region(bad[i]), 0);
        CHECK_ERRNO(EINVAL);
    }
    CHECK_EQ(rtm_min_region("pool"), rtm_pool_min_region(RTM_POOL_DEFAULT_BLOCK));
    CHECK_EQ(rtm_min_region("pool:24"), rtm_pool_min_region(24));
    errno = 0;
    CHECK(rtm_heap_create("pool:24", r.mem, rtm_min_region("pool:24") - 1u) == NULL);
    CHECK_ERRNO(EINVAL);

    rtm_heap *h = rtm_heap_create("pool", r.mem, r.bytes);
    REQUIRE(h != NULL);
    CHECK(strcmp(rtm_heap_algorithm(h), "pool") == 0);
    void *a = rtm_alloc(h, 0);
    CHECK(a != NULL);
    CHECK_EQ(rtm_usable_size(h, a), RTM_POOL_DEFAULT_BLOCK);
    errno = 0;
    CHECK(rtm_alloc(h, RTM_POOL_DEFAULT_BLOCK + 1u) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK(rtm_realloc(h, a, 10) == a);
    errno = 0;
    CHECK(rtm_realloc(h, a, 1000) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 4096, 8) == NULL);
    CHECK_ERRNO(ENOTSUP);
    void *c = rtm_aligned_alloc(h, 8, 8);
    CHECK(c != NULL);
    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(h, r.mem, 100), -1);
    CHECK_ERRNO(ENOTSUP);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.live_blocks, 2);
    CHECK_EQ(st.failed_allocs, 2);
    recorder_install();
    errno = 0;
    rtm_free(h, (char *)a + 8);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 1);
    rtm_free(h, a);
    rtm_free(h, a);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    rtm_set_error_handler(NULL, NULL);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_heap_reset(h), 0);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    rtm_heap_destroy(h);
    errno = 0;
    CHECK(rtm_alloc(h, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_heap_algorithm(h) == NULL);

    h = rtm_heap_create("pool:4096", r.mem, r.bytes);
    REQUIRE(h != NULL);
    CHECK_EQ(rtm_heap_stats(h).largest_free, 4096);
    region_free(&r);
}

int main(void)
{
    RUN_TEST(test_block_size_rounding);
    RUN_TEST(test_exact_count);
    RUN_TEST(test_region_for);
    RUN_TEST(test_min_region);
    RUN_TEST(test_exhaustion_and_lifo);
    RUN_TEST(test_misuse);
    RUN_TEST(test_realloc_and_aligned);
    RUN_TEST(test_stats_exact);
    RUN_TEST(test_check_detects_corruption);
    RUN_TEST(test_walk_and_reset);
    RUN_TEST(test_generic_names);
    return check_summary();
}
