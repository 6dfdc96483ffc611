// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_buddy.c -- white-box tests of the binary buddy page
 * allocator (rtmem/buddy.h): bad inputs of every typed function, split and
 * merge at every order, order checks, misuse detection, exhaustion, exact
 * statistics, the checker against hand-made corruption, reset, walk,
 * alignment, regions that are not a power of two of pages, and position
 * independence.
 *
 * Corruption tests write into the layout the header documents: the page map
 * starts rtm_buddy_control_size() bytes after the handle (one byte per
 * page: 0x80 block start, 0x40 free, low bits the order), and a free
 * block's first two words are its list links.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"
#include "rtmem/buddy.h"

#define MAXB 4096

typedef struct walked {
    size_t n;
    void *ptr[MAXB];
    size_t size[MAXB];
    int used[MAXB];
} walked;

static void visit(void *ptr, size_t usable, int used, void *arg)
{
    walked *w = arg;
    if (w->n < MAXB) {
        w->ptr[w->n] = ptr;
        w->size[w->n] = usable;
        w->used[w->n] = used;
    }
    w->n++;
}

static walked *walk_of(const rtm_buddy *b)
{
    static walked w;
    w.n = 0;
    rtm_buddy_walk(b, visit, &w);
    return &w;
}

static uint8_t *map_of(rtm_buddy *b) { return (uint8_t *)b + rtm_buddy_control_size(); }

/* A heap of exactly `pages` pages: the largest region giving that count. */
static rtm_buddy *exact_heap(test_region *r, size_t pages, size_t page)
{
    size_t bytes = rtm_buddy_region_for(pages, page);
    *r = region_malloc(bytes, 0);
    for (size_t n = bytes; n > 0; n--) {
        rtm_buddy *b = rtm_buddy_create(r->mem, n, page);
        if (b != NULL && rtm_buddy_page_count(b) == pages)
            return b;
    }
    REQUIRE(0);
    return NULL;
}

static void test_bad_inputs(void)
{
    unsigned char buf[4096];
    static const size_t bad_pages[] = {0, 1, 32, 63, 65, 100, 3000};
    for (size_t i = 0; i < sizeof bad_pages / sizeof bad_pages[0]; i++) {
        errno = 0;
        CHECK(rtm_buddy_create(buf, sizeof buf, bad_pages[i]) == NULL);
        CHECK_ERRNO(EINVAL);
        CHECK_EQ(rtm_buddy_min_region(bad_pages[i]), 0);
        CHECK_EQ(rtm_buddy_region_for(4, bad_pages[i]), 0);
    }
    errno = 0;
    CHECK(rtm_buddy_create(NULL, sizeof buf, 64) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_buddy_region_for(0, 64), 0);
    CHECK_EQ(rtm_buddy_region_for(SIZE_MAX / 2, 4096), 0);
    /* min_region is enough at every start, and one byte less than one
     * control + map byte + page never is. */
    for (size_t page = 64; page <= 4096; page *= 2) {
        size_t min = rtm_buddy_min_region(page);
        CHECK(min > page);
        for (size_t m = 0; m < 64; m++) {
            test_region r = region_malloc(min, m);
            rtm_buddy *b = rtm_buddy_create(r.mem, r.bytes, page);
            CHECK(b != NULL);
            if (b != NULL)
                CHECK(rtm_buddy_page_count(b) >= 1);
            region_free(&r);
        }
        errno = 0;
        CHECK(rtm_buddy_create(buf, rtm_buddy_control_size() + page, page) == NULL);
        CHECK_ERRNO(EINVAL);
    }
    /* region_for(n) holds n pages (at most one more) at every start. */
    for (size_t n = 1; n < 300; n = n * 3 / 2 + 1) {
        for (size_t m = 0; m < 64; m += 7) {
            test_region r = region_malloc(rtm_buddy_region_for(n, 256), m);
            rtm_buddy *b = rtm_buddy_create(r.mem, r.bytes, 256);
            REQUIRE(b != NULL);
            CHECK(rtm_buddy_page_count(b) == n || rtm_buddy_page_count(b) == n + 1);
            CHECK_EQ(rtm_buddy_check(b), 0);
            region_free(&r);
        }
    }

    test_region r;
    rtm_buddy *b = exact_heap(&r, 16, 64);
    recorder_install();
    errno = 0;
    CHECK(rtm_buddy_alloc_pages(b, RTM_BUDDY_MAX_ORDER + 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_buddy_alloc_pages(b, 5) == NULL); /* 32 pages > 16 */
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_buddy_alloc(b, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_buddy_aligned_alloc(b, 24, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_buddy_aligned_alloc(b, 0, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_buddy_aligned_alloc(b, (size_t)1 << (sizeof(size_t) * 8u - 1u), 8) == NULL);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_buddy_stats(b).failed_allocs, 2); /* EINVAL/ENOTSUP not counted */
    CHECK_EQ(rtm_buddy_free(b, NULL), 0);
    CHECK_EQ(rtm_buddy_free_pages(b, NULL, 3), 0);
    CHECK_EQ(rtm_buddy_usable_size(b, NULL), 0);
    CHECK(rtm_buddy_realloc(b, NULL, 64) != NULL);
    CHECK_EQ(recorder()->calls, 0);
    CHECK_EQ(rtm_buddy_order_for(b, 0), 0);
    CHECK_EQ(rtm_buddy_order_for(b, 64), 0);
    CHECK_EQ(rtm_buddy_order_for(b, 65), 1);
    CHECK_EQ(rtm_buddy_order_for(b, 129), 2);
    CHECK_EQ(rtm_buddy_order_for(b, SIZE_MAX),
             sizeof(size_t) == 8 ? -1 : 26); /* 2^26 pages of 64 on 32-bit */
    errno = 0;
    CHECK_EQ(rtm_buddy_check(NULL), -1);
    CHECK_EQ(rtm_buddy_check(b), 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

/* Allocating order k from a fresh heap of 2^K pages splits the single block
 * K - k times: the block lands at page 0 and one free buddy of each order
 * k..K-1 remains at page 2^j. Freeing it merges everything back. */
static void test_split_merge_every_order(void)
{
    static const size_t pages_of[] = {64, 256, 4096};
    for (size_t pi = 0; pi < 3; pi++) {
        size_t page = pages_of[pi];
        unsigned K = 10;
        test_region r;
        rtm_buddy *b = exact_heap(&r, (size_t)1 << K, page);
        walked *w = walk_of(b);
        REQUIRE(w->n == 1);
        char *page0 = w->ptr[0];
        for (unsigned k = 0; k <= K; k++) {
            char *p = rtm_buddy_alloc_pages(b, k);
            REQUIRE(p != NULL);
            CHECK_PTR_EQ(p, page0);
            CHECK_EQ(rtm_buddy_usable_size(b, p), page << k);
            CHECK_EQ(rtm_buddy_check(b), 0);
            w = walk_of(b);
            CHECK_EQ(w->n, 1u + (K - k));
            CHECK(w->used[0] && w->size[0] == page << k);
            for (unsigned j = k; j < K && 1u + j - k < w->n; j++) {
                size_t at = 1u + j - k;
                CHECK_PTR_EQ(w->ptr[at], page0 + (page << j));
                CHECK_EQ(w->size[at], page << j);
                CHECK(!w->used[at]);
            }
            rtm_stats st = rtm_buddy_stats(b);
            CHECK_EQ(st.used_bytes, page << k);
            CHECK_EQ(st.free_bytes, (page << K) - (page << k));
            CHECK_EQ(st.largest_free, k == K ? 0 : page << (K - 1));
            CHECK_EQ(rtm_buddy_free_pages(b, p, k), 0);
            w = walk_of(b);
            CHECK_EQ(w->n, 1);
            CHECK(!w->used[0] && w->size[0] == page << K);
            CHECK_EQ(rtm_buddy_check(b), 0);
        }
        /* Every page as order 0, freed in a shuffled order: full re-merge. */
        static void *blocks[1024];
        for (size_t i = 0; i < 1024; i++) {
            blocks[i] = rtm_buddy_alloc_pages(b, 0);
            REQUIRE(blocks[i] != NULL);
        }
        CHECK(rtm_buddy_alloc_pages(b, 0) == NULL);
        srand(7);
        for (size_t i = 1023; i > 0; i--) {
            size_t j = (size_t)rand() % (i + 1);
            void *t = blocks[i];
            blocks[i] = blocks[j];
            blocks[j] = t;
        }
        for (size_t i = 0; i < 1024; i++) {
            CHECK_EQ(rtm_buddy_free(b, blocks[i]), 0);
            if (i % 61 == 0)
                CHECK_EQ(rtm_buddy_check(b), 0);
        }
        CHECK_EQ(rtm_buddy_stats(b).largest_free, page << K);
        CHECK_EQ(walk_of(b)->n, 1);
        CHECK_EQ(rtm_buddy_check(b), 0);
        region_free(&r);
    }
}

/* A region of 13 pages is 8 + 4 + 1; the tail block has no buddy. */
static void test_non_power_of_two(void)
{
    test_region r;
    rtm_buddy *b = exact_heap(&r, 13, 128);
    walked *w = walk_of(b);
    REQUIRE(w->n == 3);
    CHECK_EQ(w->size[0], 8 * 128);
    CHECK_EQ(w->size[1], 4 * 128);
    CHECK_EQ(w->size[2], 1 * 128);
    CHECK_EQ(rtm_buddy_stats(b).largest_free, 8 * 128);
    CHECK(rtm_buddy_alloc_pages(b, 4) == NULL);
    void *p[13];
    for (int i = 0; i < 13; i++)
        REQUIRE((p[i] = rtm_buddy_alloc_pages(b, 0)) != NULL);
    CHECK(rtm_buddy_alloc_pages(b, 0) == NULL);
    for (int i = 12; i >= 0; i--)
        CHECK_EQ(rtm_buddy_free(b, p[i]), 0);
    w = walk_of(b);
    CHECK_EQ(w->n, 3);
    CHECK_EQ(rtm_buddy_check(b), 0);
    region_free(&r);
}

static void test_misuse(void)
{
    test_region r;
    rtm_buddy *b = exact_heap(&r, 64, 256);
    recorder_install();
    char *p = rtm_buddy_alloc_pages(b, 2);
    REQUIRE(p != NULL);
    rtm_stats before = rtm_buddy_stats(b);
    /* wrong order */
    errno = 0;
    CHECK_EQ(rtm_buddy_free_pages(b, p, 1), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 1);
    CHECK_PTR_EQ(recorder()->last_ptr, p);
    CHECK_EQ(rtm_buddy_free_pages(b, p, 3), -1);
    /* interior pointers: inside the first page, and a later page */
    recorder_reset();
    CHECK_EQ(rtm_buddy_free(b, p + 8), -1);
    CHECK_EQ(rtm_buddy_free(b, p + 256), -1);
    CHECK_EQ(rtm_buddy_free(b, p - 256 * 100), -1);
    char outside[16];
    CHECK_EQ(rtm_buddy_free(b, outside), -1);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 4);
    CHECK_EQ(rtm_buddy_usable_size(b, p + 256), 0);
    CHECK(rtm_buddy_realloc(b, p + 8, 10) == NULL);
    CHECK_EQ(rtm_buddy_stats(b).used_bytes, before.used_bytes);
    CHECK_EQ(rtm_buddy_check(b), 0);
    /* double free, also of a block that merged away */
    recorder_reset();
    CHECK_EQ(rtm_buddy_free_pages(b, p, 2), 0);
    errno = 0;
    CHECK_EQ(rtm_buddy_free(b, p), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    char *q = rtm_buddy_alloc_pages(b, 0);
    char *q2 = rtm_buddy_alloc_pages(b, 0);
    CHECK_EQ(rtm_buddy_free(b, q2), 0);
    CHECK_EQ(rtm_buddy_free(b, q2), -1); /* merged into q's buddy: interior */
    CHECK_EQ(rtm_buddy_free(b, q), 0);
    CHECK_EQ(rtm_buddy_free(b, q), -1);
    CHECK_EQ(recorder()->calls, 3);
    CHECK_EQ(rtm_buddy_check(b), 0);
    CHECK_EQ(rtm_buddy_stats(b).live_blocks, 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

static void test_exhaustion_and_stats(void)
{
    test_region r;
    rtm_buddy *b = exact_heap(&r, 100, 64); /* 64 + 32 + 4 */
    CHECK(rtm_buddy_stats(b).arena_bytes <= r.bytes);
    size_t used = 0, live = 0;
    for (unsigned k = 6;; k = k ? k - 1 : 0) {
        errno = 0;
        void *p = rtm_buddy_alloc_pages(b, k);
        if (p == NULL) {
            CHECK_ERRNO(ENOMEM);
            if (k == 0)
                break;
            continue;
        }
        used += (size_t)64 << k;
        live++;
        rtm_stats st = rtm_buddy_stats(b);
        CHECK_EQ(st.used_bytes, used);
        CHECK_EQ(st.live_blocks, live);
        CHECK_EQ(st.free_bytes, 6400 - used);
        CHECK_EQ(st.peak_used_bytes, used);
    }
    rtm_stats st = rtm_buddy_stats(b);
    CHECK_EQ(st.used_bytes, 6400);
    CHECK_EQ(st.free_bytes, 0);
    CHECK_EQ(st.largest_free, 0);
    CHECK_EQ(st.failed_allocs, 4); /* orders 6, 5, 2 granted; 4, 3, 1, 0 refused */
    CHECK(rtm_buddy_alloc(b, 1) == NULL);
    CHECK_EQ(rtm_buddy_check(b), 0);
    /* reset frees everything and restarts the counters */
    rtm_buddy_reset(b);
    st = rtm_buddy_stats(b);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.peak_used_bytes, 0);
    CHECK_EQ(st.failed_allocs, 0);
    CHECK_EQ(st.free_bytes, 6400);
    CHECK_EQ(st.largest_free, 64 * 64);
    CHECK_EQ(walk_of(b)->n, 3);
    CHECK_EQ(rtm_buddy_check(b), 0);
    /* byte API rounding */
    void *p = rtm_buddy_alloc(b, 0);
    CHECK_EQ(rtm_buddy_usable_size(b, p), 64);
    void *p2 = rtm_buddy_alloc(b, 65);
    CHECK_EQ(rtm_buddy_usable_size(b, p2), 128);
    void *p3 = rtm_buddy_alloc(b, 64 * 33);
    CHECK_EQ(rtm_buddy_usable_size(b, p3), 64 * 64);
    CHECK_EQ(rtm_buddy_stats(b).used_bytes, 64 + 128 + 64 * 64);
    CHECK_EQ(rtm_buddy_free(b, p3), 0);
    CHECK_EQ(rtm_buddy_free(b, p2), 0);
    CHECK_EQ(rtm_buddy_free(b, p), 0);
    CHECK_EQ(rtm_buddy_stats(b).peak_used_bytes, 64 + 128 + 64 * 64);
    region_free(&r);
}

static void test_realloc(void)
{
    test_region r;
    rtm_buddy *b = exact_heap(&r, 64, 64);
    unsigned char *p = rtm_buddy_alloc(b, 64 * 8);
    REQUIRE(p != NULL);
    for (size_t i = 0; i < 64 * 8; i++)
        p[i] = (unsigned char)i;
    /* shrink in place: the order (and so usable size, alignment) stays */
    CHECK_PTR_EQ(rtm_buddy_realloc(b, p, 100), p);
    CHECK_EQ(rtm_buddy_usable_size(b, p), 64 * 8);
    CHECK_EQ(rtm_buddy_stats(b).used_bytes, 64 * 8);
    CHECK_EQ(rtm_buddy_check(b), 0);
    CHECK_PTR_EQ(rtm_buddy_realloc(b, p, 64 * 8), p);
    /* grow moves and keeps the contents */
    unsigned char *q = rtm_buddy_realloc(b, p, 64 * 20);
    REQUIRE(q != NULL);
    CHECK(q != p);
    CHECK_EQ(rtm_buddy_usable_size(b, q), 64 * 32);
    for (size_t i = 0; i < 64 * 8; i++)
        CHECK_EQ(q[i], (unsigned char)i);
    CHECK_EQ(rtm_buddy_stats(b).used_bytes, 64 * 32);
    CHECK_EQ(rtm_buddy_check(b), 0);
    /* too large: refused, counted, block unchanged */
    errno = 0;
    CHECK(rtm_buddy_realloc(b, q, 64 * 64) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_buddy_stats(b).failed_allocs, 1);
    CHECK_EQ(rtm_buddy_usable_size(b, q), 64 * 32);
    errno = 0;
    CHECK(rtm_buddy_realloc(b, q, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    /* realloc(p, 0) frees */
    errno = 0;
    CHECK(rtm_buddy_realloc(b, q, 0) == NULL);
    CHECK_ERRNO(0);
    CHECK_EQ(rtm_buddy_stats(b).live_blocks, 0);
    CHECK_EQ(rtm_buddy_stats(b).largest_free, 64 * 64);
    CHECK_EQ(rtm_buddy_check(b), 0);
    region_free(&r);
}

static void test_alignment(void)
{
    /* A region aligned far beyond the page: the arena start is aligned at
     * least to the page; blocks of order k to min(page << k, its alignment). */
    size_t page = 256;
    size_t bytes = rtm_buddy_region_for(256, page);
    unsigned char *mem = aligned_alloc(1u << 20, (bytes + (1u << 20)) & ~(size_t)((1u << 20) - 1));
    REQUIRE(mem != NULL);
    rtm_buddy *b = rtm_buddy_create(mem, bytes, page);
    REQUIRE(b != NULL);
    walked *w = walk_of(b);
    uintptr_t a0 = (uintptr_t)w->ptr[0];
    CHECK_EQ(a0 % page, 0);
    size_t arena_align = (size_t)(a0 & (~a0 + 1u));
    for (size_t a = 1; a <= (size_t)page << 8; a *= 2) {
        errno = 0;
        void *p = rtm_buddy_aligned_alloc(b, a, 1);
        if (a > arena_align) {
            CHECK(p == NULL);
            CHECK_ERRNO(ENOTSUP);
            continue;
        }
        REQUIRE(p != NULL);
        CHECK_EQ((uintptr_t)p % a, 0);
        CHECK(rtm_buddy_usable_size(b, p) >= a || a <= page);
        /* plain blocks of every order are aligned to min(size, arena_align) */
        CHECK_EQ(rtm_buddy_free(b, p), 0);
    }
    for (unsigned k = 0; k < 8; k++) {
        void *p = rtm_buddy_alloc_pages(b, k);
        REQUIRE(p != NULL);
        size_t want = (size_t)page << k;
        if (want > arena_align)
            want = arena_align;
        CHECK_EQ((uintptr_t)p % want, 0);
    }
    CHECK_EQ(rtm_buddy_check(b), 0);
    free(mem);
}

/* Every corruption the checker claims to catch is caught and reported. */
static void test_check_detects_corruption(void)
{
    recorder_install();
    for (int which = 0; which < 8; which++) {
        test_region r;
        rtm_buddy *b = exact_heap(&r, 32, 64);
        uint8_t *m = map_of(b);
        char *a = rtm_buddy_alloc_pages(b, 0); /* page 0; free: 1, 2-3, 4-7, 8-15, 16-31 */
        char *c = rtm_buddy_alloc_pages(b, 0); /* page 1 */
        REQUIRE(a != NULL && c != NULL);
        CHECK_EQ(rtm_buddy_check(b), 0);
        ptrdiff_t *free4 = (ptrdiff_t *)(void *)(a + 4 * 64); /* order-2 block's links */
        switch (which) {
        case 0:
            m[1] = 0xc0;
            break; /* page 1 marked free: unmerged, unlisted */
        case 1:
            m[5] = 0x80;
            break; /* interior page marked a start */
        case 2:
            m[4] = 0xc3;
            break; /* free block with the wrong order */
        case 3:
            free4[0] = (ptrdiff_t)0x7fffffff;
            break; /* wild next link */
        case 4:
            free4[1] = 12345;
            break; /* wrong prev link */
        case 5:
            m[0] = 0x85;
            break; /* order past the arena */
        case 6:
            free4[0] = free4[0] + 8;
            break; /* unaligned link */
        case 7:
            m[0] = 0x00;
            break; /* page 0 in no block */
        }
        recorder_reset();
        errno = 0;
        CHECK_MSG(rtm_buddy_check(b) == -1, "corruption %d not detected", which);
        CHECK_ERRNO(EFAULT);
        CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
        region_free(&r);
    }
    /* the counters and kind word: the first words of the handle */
    test_region r;
    rtm_buddy *b = exact_heap(&r, 32, 64);
    ((uint32_t *)(void *)b)[0] ^= 1u;
    CHECK_EQ(rtm_buddy_check(b), -1);
    ((uint32_t *)(void *)b)[0] ^= 1u;
    CHECK_EQ(rtm_buddy_check(b), 0);
    ((uint32_t *)(void *)b)[2] ^= 4u; /* the order bitmap */
    CHECK_EQ(rtm_buddy_check(b), -1);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

/* The heap holds only offsets: a byte copy elsewhere is a working heap. */
static void test_position_independence(void)
{
    test_region r1;
    rtm_buddy *b = exact_heap(&r1, 64, 128);
    char *p[8];
    for (unsigned k = 0; k < 8; k++) {
        p[k] = rtm_buddy_alloc_pages(b, k % 4);
        REQUIRE(p[k] != NULL);
        memset(p[k], 'a' + (int)k, 128);
    }
    CHECK_EQ(rtm_buddy_free(b, p[2]), 0);
    CHECK_EQ(rtm_buddy_free(b, p[5]), 0);
    test_region r2 = region_malloc(r1.bytes, 24); /* same mod 8, not mod 128 */
    memcpy(r2.mem, r1.mem, r1.bytes);
    memset(r1.mem, 0xee, r1.bytes); /* the original is gone */
    ptrdiff_t delta = (char *)r2.mem - (char *)r1.mem;
    rtm_buddy *b2 = (rtm_buddy *)(void *)((char *)b + delta);
    CHECK_EQ(rtm_buddy_check(b2), 0);
    CHECK_EQ(rtm_buddy_stats(b2).live_blocks, 6);
    for (unsigned k = 0; k < 8; k++) {
        if (k == 2 || k == 5)
            continue;
        char *q = p[k] + delta;
        CHECK_EQ(q[0], 'a' + (int)k);
        CHECK_EQ(rtm_buddy_free_pages(b2, q, k % 4), 0);
    }
    CHECK_EQ(rtm_buddy_stats(b2).live_blocks, 0);
    CHECK_EQ(walk_of(b2)->n, 1);
    void *n = rtm_buddy_alloc_pages(b2, 6);
    CHECK(n != NULL);
    CHECK((char *)n >= (char *)r2.mem && (char *)n < (char *)r2.mem + r2.bytes);
    CHECK_EQ(rtm_buddy_check(b2), 0);
    region_free(&r1);
    region_free(&r2);
}

static void count_walk(void *ptr, size_t usable, int used, void *arg)
{
    size_t *sums = arg;
    (void)ptr;
    sums[used ? 0 : 1] += usable;
}

static void test_walk_sums(void)
{
    test_region r;
    rtm_buddy *b = exact_heap(&r, 77, 64);
    void *keep[20];
    for (unsigned i = 0; i < 20; i++)
        keep[i] = rtm_buddy_alloc_pages(b, i % 3);
    for (unsigned i = 0; i < 20; i += 3)
        rtm_buddy_free(b, keep[i]);
    size_t sums[2] = {0, 0};
    rtm_buddy_walk(b, count_walk, sums);
    rtm_stats st = rtm_buddy_stats(b);
    CHECK_EQ(sums[0], st.used_bytes);
    CHECK_EQ(sums[1], st.free_bytes);
    CHECK_EQ(sums[0] + sums[1], 77 * 64);
    CHECK_EQ(rtm_buddy_check(b), 0);
    region_free(&r);
}

/* The generic API: "buddy:<page>" names, dispatch, and what a buddy heap
 * refuses (a second region). */
static void test_generic_api(void)
{
    static const char *const bad[] = {"buddy:",    "buddy:100",   "buddy:32",
                                      "buddy:abc", "buddy:4096x", "buddy:99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_min_region(bad[i]) == 0, "rtm_min_region(\"%s\") accepted", bad[i]);
        CHECK_ERRNO(EINVAL);
    }
    int listed = 0;
    for (const char *const *n = rtm_algorithms(); *n != NULL; n++)
        listed += strcmp(*n, "buddy") == 0;
    CHECK_EQ(listed, 1);
    CHECK_EQ(rtm_min_region("buddy"), rtm_buddy_min_region(RTM_BUDDY_DEFAULT_PAGE));

    size_t bytes = rtm_buddy_region_for(64, 256);
    char *mem = malloc(bytes + 8u);
    REQUIRE(mem != NULL);
    errno = 0;
    CHECK(rtm_heap_create("buddy:256", mem + 1, rtm_min_region("buddy:256") - 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    rtm_heap *h = rtm_heap_create("buddy:256", mem + 1, bytes);
    REQUIRE(h != NULL);
    CHECK(strcmp(rtm_heap_algorithm(h), "buddy") == 0);
    void *a = rtm_alloc(h, 300); /* two pages */
    void *b = rtm_aligned_alloc(h, 256, 10);
    REQUIRE(a != NULL && b != NULL);
    CHECK_EQ(rtm_usable_size(h, a), 512u);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 2u);
    a = rtm_realloc(h, a, 500);
    CHECK(a != NULL);
    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(h, mem, 4096), -1);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_free(h, a);
    rtm_free(h, b);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0u);
    CHECK_EQ(rtm_heap_reset(h), 0);
    rtm_heap_destroy(h);
    errno = 0;
    CHECK(rtm_alloc(h, 1) == NULL);
    CHECK_ERRNO(EINVAL);
    free(mem);
}

int main(void)
{
    RUN_TEST(test_bad_inputs);
    RUN_TEST(test_split_merge_every_order);
    RUN_TEST(test_non_power_of_two);
    RUN_TEST(test_misuse);
    RUN_TEST(test_exhaustion_and_stats);
    RUN_TEST(test_realloc);
    RUN_TEST(test_alignment);
    RUN_TEST(test_check_detects_corruption);
    RUN_TEST(test_position_independence);
    RUN_TEST(test_walk_sums);
    RUN_TEST(test_generic_api);
    return check_summary();
}
