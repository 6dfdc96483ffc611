// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_xvmalloc.c -- tests of the xvmalloc heap
 * ("xvmalloc:<page>", generic API only): names and bad parameters, the
 * create rules (minimum at every start address, wrap), the page limit
 * (requests above a page's payload refused, largest_free capped at it),
 * blocks never crossing a page, pages given back when empty and reused,
 * merging only within a page, alignment, realloc, usable_size, exact stats
 * against a walk, reset, misuse reports (foreign, interior, double free,
 * double free after a merge or after the page went back) and the checker
 * against hand-made damage, plus a seeded random run against a shadow.
 *
 * White-box facts used (src/heaps/xvmalloc_layout.h): a block's 8-byte
 * header (units:16, prev units:16, tag:32) sits right before its payload;
 * a free block's two 32-bit links follow its header; pages follow the
 * control structure, so a fresh heap's first block is at the arena start.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"
#include "../tracking/track_test.h"

#define HDR 8u

typedef struct xv_test {
    test_region r;
    rtm_heap *h;
    size_t page;
    char *arena; /* start of page 0 */
} xv_test;

static size_t control_bytes(size_t page)
{
    char name[32];
    snprintf(name, sizeof name, "xvmalloc:%zu", page);
    return rtm_min_region(name) - 7u - page;
}

/* A heap of exactly `pages` pages at start misalignment `mis`. */
static void make(xv_test *t, size_t page, size_t pages, size_t mis)
{
    char name[32];
    snprintf(name, sizeof name, "xvmalloc:%zu", page);
    t->page = page;
    t->r = region_malloc(7u + control_bytes(page) + pages * page, mis);
    t->h = rtm_heap_create(name, t->r.mem, t->r.bytes);
    REQUIRE(t->h != NULL);
    /* The first block of a fresh heap starts the arena. */
    char *p = rtm_alloc(t->h, 1);
    REQUIRE(p != NULL);
    t->arena = p - HDR;
    rtm_free(t->h, p);
    REQUIRE(rtm_heap_check(t->h) == 0);
}

static size_t payload(const xv_test *t) { return t->page - HDR; }
static size_t page_of(const xv_test *t, const void *p)
{
    return (size_t)((const char *)p - t->arena) / t->page;
}

/* --- names, creation ----------------------------------------------------- */

static void test_names(void)
{
    int listed = 0;
    for (const char *const *n = rtm_algorithms(); *n != NULL; n++)
        listed += strcmp(*n, "xvmalloc") == 0;
    CHECK_EQ(listed, 1);
    CHECK_EQ(rtm_min_region("xvmalloc"), rtm_min_region("xvmalloc:4096"));
    CHECK(rtm_min_region("xvmalloc:8192") == rtm_min_region("xvmalloc:4096") + 4096u);
    const char *bad[] = {"xvmalloc:4095", "xvmalloc:128", "xvmalloc:131072", "xvmalloc:0",
                         "xvmalloc:",     "xvmalloc:4k",  "xvmalloc:-4096",  "xvmalloc:6000"};
    static char mem[1u << 18];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_min_region(bad[i]) == 0, "%s", bad[i]);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK_MSG(rtm_heap_create(bad[i], mem, sizeof mem) == NULL, "%s", bad[i]);
        CHECK_ERRNO(EINVAL);
    }
    size_t ok[] = {256, 512, 4096, 65536};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "xvmalloc:%zu", ok[i]);
        rtm_heap *h = rtm_heap_create(name, mem, sizeof mem);
        REQUIRE(h != NULL);
        CHECK(strcmp(rtm_heap_algorithm(h), "xvmalloc") == 0);
        CHECK_EQ(rtm_heap_stats(h).largest_free, ok[i] - HDR);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
    }
}

static void test_create_rules(void)
{
    size_t min = rtm_min_region("xvmalloc");
    for (size_t mis = 0; mis < 8; mis++) {
        test_region r = region_malloc(min, mis);
        errno = 0;
        CHECK(rtm_heap_create("xvmalloc", r.mem, min - 1u) == NULL);
        CHECK_ERRNO(EINVAL);
        rtm_heap *h = rtm_heap_create("xvmalloc", r.mem, min);
        REQUIRE(h != NULL);
        CHECK_EQ(rtm_heap_stats(h).largest_free, 4096u - HDR); /* one page at any start */
        void *p = rtm_alloc(h, 4096u - HDR);
        CHECK(p != NULL);
        CHECK(rtm_alloc(h, 1) == NULL);
        rtm_free(h, p);
        CHECK_EQ(rtm_heap_check(h), 0);
        region_free(&r);
    }
    errno = 0;
    CHECK(rtm_heap_create("xvmalloc", NULL, 1u << 20) == NULL);
    CHECK_ERRNO(EINVAL);
    /* mem + bytes wraps: refused before anything is written. */
    errno = 0;
    CHECK(rtm_heap_create("xvmalloc", (void *)(UINTPTR_MAX - 4095u), 1u << 20) == NULL);
    CHECK_ERRNO(EINVAL);
}

/* --- the page limit ------------------------------------------------------ */

static void test_page_limit(void)
{
    xv_test t;
    make(&t, 4096, 64, 0);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.largest_free, payload(&t)); /* never more than a page */
    CHECK_EQ(st.free_bytes, 64u * payload(&t));
    errno = 0;
    CHECK(rtm_alloc(t.h, payload(&t) + 1u) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_alloc(t.h, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 2);
    void *p = rtm_alloc(t.h, payload(&t));
    CHECK(p != NULL);
    CHECK_EQ(rtm_usable_size(t.h, p), payload(&t));
    rtm_free(t.h, p);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

/* Random sizes until full: every block [header, payload end) in one page. */
static void test_no_crossing(void)
{
    xv_test t;
    make(&t, 512, 40, 3);
    rng r = {41};
    size_t n = 0;
    for (int i = 0; i < 10000; i++) {
        size_t size = 1u + (size_t)(rng_next(&r) % 300u);
        char *p = rtm_alloc(t.h, size);
        if (p == NULL)
            continue;
        n++;
        size_t usable = rtm_usable_size(t.h, p);
        CHECK(usable >= size);
        CHECK_EQ(page_of(&t, p - HDR), page_of(&t, p + usable - 1u));
    }
    CHECK(n > 40);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

/* --- pages given back ---------------------------------------------------- */

static void test_page_give_back(void)
{
    xv_test t;
    make(&t, 1024, 3, 0);
    size_t pl = payload(&t);
    char *a = rtm_alloc(t.h, 100); /* page 0 */
    char *b = rtm_alloc(t.h, 100); /* page 0, after a */
    char *c = rtm_alloc(t.h, pl);  /* a page of its own */
    char *d = rtm_alloc(t.h, pl);
    REQUIRE(a != NULL && b != NULL && c != NULL && d != NULL);
    CHECK_EQ(page_of(&t, a), page_of(&t, b));
    CHECK(page_of(&t, c) != page_of(&t, a) && page_of(&t, d) != page_of(&t, c));
    errno = 0;
    CHECK(rtm_alloc(t.h, pl) == NULL); /* no empty page, page 0 partly used */
    CHECK_ERRNO(ENOMEM);
    CHECK(rtm_heap_stats(t.h).largest_free < pl);
    rtm_free(t.h, c);                               /* page back ... */
    CHECK_EQ(rtm_heap_stats(t.h).largest_free, pl); /* ... at once */
    CHECK_PTR_EQ(rtm_alloc(t.h, pl), c);            /* the same page, reused */
    rtm_free(t.h, a);
    CHECK(rtm_alloc(t.h, pl) == NULL); /* b keeps page 0 */
    rtm_free(t.h, b);                  /* now page 0 is empty */
    CHECK_EQ(rtm_heap_check(t.h), 0);
    CHECK_PTR_EQ(rtm_alloc(t.h, pl), a);
    rtm_free(t.h, a);
    rtm_free(t.h, c);
    rtm_free(t.h, d);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.free_bytes, 3u * pl);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

/* Merging stays inside the page: the tail of page 0 and the head of page
 * 1 touch in memory but are two free blocks. */
static void test_merge_within_page(void)
{
    xv_test t;
    make(&t, 1024, 2, 0);
    size_t pl = payload(&t);
    char *a = rtm_alloc(t.h, 200);
    char *b = rtm_alloc(t.h, pl - 200u - HDR); /* fills page 0 */
    char *c = rtm_alloc(t.h, 200);
    char *d = rtm_alloc(t.h, pl - 200u - HDR); /* fills page 1 */
    REQUIRE(a != NULL && b != NULL && c != NULL && d != NULL);
    CHECK_EQ(page_of(&t, b), 0);
    CHECK_EQ(page_of(&t, c), 1);
    CHECK_PTR_EQ(b + rtm_usable_size(t.h, b) + HDR, c); /* neighbours in memory */
    rtm_free(t.h, b);
    rtm_free(t.h, c);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.largest_free, pl - 200u - HDR); /* b's size: not b + c */
    CHECK(rtm_alloc(t.h, pl - 200u) == NULL);
    /* Three-way merge in page 0: a, then the gap closes to a whole page. */
    rtm_free(t.h, a);
    CHECK_EQ(rtm_heap_stats(t.h).largest_free, pl);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    /* Middle block freed last merges with both neighbours. */
    char *x = rtm_alloc(t.h, 100), *y = rtm_alloc(t.h, 100), *z = rtm_alloc(t.h, 100);
    REQUIRE(x != NULL && y != NULL && z != NULL);
    rtm_free(t.h, x);
    rtm_free(t.h, z);
    rtm_free(t.h, y);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    rtm_free(t.h, d);
    CHECK_EQ(rtm_heap_stats(t.h).free_bytes, 2u * pl);
    region_free(&t.r);
}

/* --- alignment, realloc, usable_size ------------------------------------ */

static void test_aligned(void)
{
    xv_test t;
    make(&t, 4096, 4, 5);
    for (size_t a = 1; a <= 8; a <<= 1) {
        char *p = rtm_aligned_alloc(t.h, a, 24);
        REQUIRE(p != NULL);
        CHECK_EQ((uintptr_t)p % a, 0);
        rtm_free(t.h, p);
    }
    errno = 0;
    CHECK(rtm_aligned_alloc(t.h, 3, 24) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_aligned_alloc(t.h, 0, 24) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_aligned_alloc(t.h, 16, 24) == NULL);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 0); /* not out of memory */
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

static void test_realloc(void)
{
    xv_test t;
    make(&t, 4096, 4, 0);
    CHECK(rtm_realloc(t.h, NULL, 0) != NULL || errno == ENOMEM);
    rtm_heap_reset(t.h);
    char *p = rtm_realloc(t.h, NULL, 100);
    REQUIRE(p != NULL);
    for (int i = 0; i < 100; i++)
        p[i] = (char)i;
    CHECK_PTR_EQ(rtm_realloc(t.h, p, 100), p);
    CHECK_PTR_EQ(rtm_realloc(t.h, p, 1), p); /* shrink keeps the address */
    char *q = rtm_realloc(t.h, p, 2000);
    REQUIRE(q != NULL);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(q[i], (char)i);
    errno = 0;
    CHECK(rtm_realloc(t.h, q, payload(&t) + 1u) == NULL); /* above a page */
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(q[99], 99);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 1);
    errno = 0;
    CHECK(rtm_realloc(t.h, q, 0) == NULL);
    CHECK_ERRNO(0);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 0);
    recorder_install();
    errno = 0;
    CHECK(rtm_realloc(t.h, q, 10) == NULL); /* q is free now */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    rtm_set_error_handler(NULL, NULL);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

static void test_usable_size(void)
{
    xv_test t;
    make(&t, 4096, 4, 0);
    CHECK_EQ(rtm_usable_size(t.h, NULL), 0);
    size_t sizes[] = {0, 1, 8, 9, 15, 16, 17, 100, 1000, 4088};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *p = rtm_alloc(t.h, sizes[i]);
        REQUIRE(p != NULL);
        size_t u = rtm_usable_size(t.h, p);
        CHECK(u >= sizes[i] && u >= 8u && u % 8u == 0);
        CHECK_MSG(u < sizes[i] + 8u + 16u, "usable %zu for %zu", u, sizes[i]);
        memset(p, 0xa5, u);
        CHECK_EQ(rtm_heap_check(t.h), 0);
        rtm_free(t.h, p);
    }
    /* Not a live block: 0 with errno EINVAL and one report each, as free
     * refuses it (include/rtmem.h; tests/hardening/test_harden_usable.c
     * for every heap). */
    recorder_install();
    static char outside[64];
    char *p = rtm_alloc(t.h, 40);
    REQUIRE(p != NULL);
    errno = 0;
    CHECK_EQ(rtm_usable_size(t.h, outside + 8), 0);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_usable_size(t.h, p + 8), 0);
    CHECK_EQ(rtm_usable_size(t.h, p + 1), 0);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 3);
    rtm_free(t.h, p);
    errno = 0;
    CHECK_EQ(rtm_usable_size(t.h, p), 0);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK_EQ(recorder()->calls, 4);
    rtm_set_error_handler(NULL, NULL);
    region_free(&t.r);
}

/* --- stats, walk, reset -------------------------------------------------- */

typedef struct walk_sum {
    size_t used, free, used_n, free_n, max_free;
} walk_sum;

static void visit(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    walk_sum *s = arg;
    if (used) {
        s->used += usable;
        s->used_n++;
    } else {
        s->free += usable;
        s->free_n++;
        if (usable > s->max_free)
            s->max_free = usable;
    }
}

static walk_sum walk(rtm_heap *h)
{
    walk_sum s;
    memset(&s, 0, sizeof s);
    CHECK_EQ(rtm_heap_walk(h, visit, &s), 0);
    return s;
}

static void test_stats_walk_reset(void)
{
    xv_test t;
    make(&t, 2048, 10, 1);
    walk_sum w = walk(t.h);
    CHECK_EQ(w.free_n, 10); /* an empty page walks as one free block */
    CHECK_EQ(w.free, 10u * payload(&t));
    size_t want_used = 0, peak = 0;
    void *ps[50];
    for (int i = 0; i < 50; i++) {
        ps[i] = rtm_alloc(t.h, (size_t)(i * 37 % 700));
        REQUIRE(ps[i] != NULL);
        want_used += rtm_usable_size(t.h, ps[i]);
        peak = want_used;
    }
    for (int i = 0; i < 50; i += 3) {
        want_used -= rtm_usable_size(t.h, ps[i]);
        rtm_free(t.h, ps[i]);
        ps[i] = NULL;
    }
    rtm_stats st = rtm_heap_stats(t.h);
    w = walk(t.h);
    CHECK_EQ(st.used_bytes, want_used);
    CHECK_EQ(st.peak_used_bytes, peak);
    CHECK_EQ(st.live_blocks, 33);
    CHECK_EQ(w.used, st.used_bytes);
    CHECK_EQ(w.used_n, st.live_blocks);
    CHECK_EQ(w.free, st.free_bytes);
    CHECK(st.largest_free <= w.max_free);
    CHECK_EQ(st.largest_free, payload(&t)); /* pages left */
    CHECK_EQ(st.arena_bytes, t.r.bytes);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    CHECK_EQ(rtm_heap_reset(t.h), 0);
    st = rtm_heap_stats(t.h);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.peak_used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.failed_allocs, 0);
    CHECK_EQ(st.free_bytes, 10u * payload(&t));
    CHECK_PTR_EQ(rtm_alloc(t.h, 5), t.arena + HDR);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

/* The heap holds offsets only: a copy at another address (same start
 * alignment) works, and the original is untouched. */
static void test_moved(void)
{
    xv_test t;
    make(&t, 1024, 8, 0);
    char *p[20];
    for (int i = 0; i < 20; i++)
        p[i] = rtm_alloc(t.h, (size_t)(30 + i * 20));
    for (int i = 0; i < 20; i += 2)
        rtm_free(t.h, p[i]);
    test_region copy = region_malloc(t.r.bytes, 0);
    TRACK_OPEN(t.r.mem, t.r.bytes); /* copies the whole region, headers too */
    memcpy(copy.mem, t.r.mem, t.r.bytes);
    rtm_heap *h2 = (rtm_heap *)(void *)((char *)copy.mem + ((char *)t.h - (char *)t.r.mem));
    CHECK_EQ(rtm_heap_check(h2), 0);
    ptrdiff_t shift = (char *)copy.mem - (char *)t.r.mem;
    for (int i = 1; i < 20; i += 2)
        rtm_free(h2, p[i] + shift);
    CHECK_EQ(rtm_heap_check(h2), 0);
    CHECK_EQ(rtm_heap_stats(h2).free_bytes, 8u * payload(&t));
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 10);
    region_free(&copy);
    region_free(&t.r);
}

/* --- misuse -------------------------------------------------------------- */

/* rtm_free returns nothing: a refused free shows as errno EINVAL. */
static int bad_free(rtm_heap *h, void *p)
{
    errno = 0;
    rtm_free(h, p);
    return errno == EINVAL ? -1 : 0;
}

static void test_misuse(void)
{
    xv_test t;
    make(&t, 1024, 4, 0);
    recorder_install();
    char *a = rtm_alloc(t.h, 50);
    char *b = rtm_alloc(t.h, 50);
    char *c = rtm_alloc(t.h, 50);
    char *big = rtm_alloc(t.h, payload(&t)); /* page 1, alone */
    REQUIRE(a != NULL && b != NULL && c != NULL && big != NULL);
    memset(b, 0, 50);
    rtm_stats before = rtm_heap_stats(t.h);
    static char outside[64];
    CHECK_EQ(bad_free(t.h, outside + 8), -1);                 /* another object */
    CHECK_EQ(bad_free(t.h, b + 1), -1);                       /* misaligned */
    CHECK_EQ(bad_free(t.h, b + 16), -1);                      /* interior, zeros as header */
    CHECK_EQ(bad_free(t.h, (char *)t.h), -1);                 /* the control structure */
    CHECK_EQ(bad_free(t.h, t.arena + 3u * t.page + HDR), -1); /* never-used page */
    CHECK_EQ(bad_free(t.h, t.arena + 64u * t.page), -1);      /* past the end */
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 6);
    rtm_stats after = rtm_heap_stats(t.h);
    CHECK(memcmp(&before, &after, sizeof before) == 0); /* heap untouched */
    CHECK_EQ(rtm_heap_check(t.h), 0);

    /* Double frees: plain, after merging into the lower neighbour, after
     * the whole page went back. */
    recorder_reset();
    rtm_free(t.h, a);
    errno = 0;
    CHECK_EQ(bad_free(t.h, a), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_PTR_EQ(recorder()->last_ptr, a);
    CHECK_PTR_EQ(recorder()->last_heap, t.h);
    rtm_free(t.h, b); /* merges into a's block */
    CHECK_EQ(bad_free(t.h, b), -1);
    rtm_free(t.h, big); /* page 1 back */
    CHECK_EQ(bad_free(t.h, big), -1);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 3);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    rtm_free(t.h, c); /* page 0 back */
    CHECK_EQ(bad_free(t.h, a), -1);
    CHECK_EQ(bad_free(t.h, c), -1);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 5);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&t.r);
}

/* --- the checker against damage ----------------------------------------- */

/* check must fail with EFAULT and report, then pass once repaired. */
static void expect_damage(rtm_heap *h, void *at, const void *bad, size_t n, const char *what)
{
    unsigned char saved[16];
    TRACK_OPEN(at, n); /* damages a header or a free block on purpose */
    memcpy(saved, at, n);
    memcpy(at, bad, n);
    recorder_install();
    errno = 0;
    CHECK_MSG(rtm_heap_check(h) == -1, "check missed: %s", what);
    CHECK_ERRNO(EFAULT);
    CHECK_MSG(recorder()->by_kind[RTM_ERR_CHECK_FAILED] == 1, "no report: %s", what);
    rtm_set_error_handler(NULL, NULL);
    memcpy(at, saved, n);
    CHECK_MSG(rtm_heap_check(h) == 0, "repair failed: %s", what);
}

static void test_check_damage(void)
{
    xv_test t;
    make(&t, 1024, 4, 0);
    char *a = rtm_alloc(t.h, 100);
    char *b = rtm_alloc(t.h, 100);
    char *c = rtm_alloc(t.h, 100);
    char *d = rtm_alloc(t.h, 100);
    char *e = rtm_alloc(t.h, 300);
    REQUIRE(a && b && c && d && e);
    rtm_free(t.h, b); /* listed, between used a and c */
    rtm_free(t.h, d); /* listed, between used c and e */
    CHECK_EQ(rtm_heap_check(t.h), 0);
    uint16_t u16;
    uint32_t u32;

    u16 = 0; /* a used header's size */
    expect_damage(t.h, c - HDR, &u16, 2, "used size 0");
    u16 = 2000;
    expect_damage(t.h, c - HDR, &u16, 2, "used size past the page");
    u16 = 3; /* a wrong back size */
    expect_damage(t.h, c - HDR + 2, &u16, 2, "back size");
    u32 = 0x12345678u; /* a tag */
    expect_damage(t.h, c - HDR + 4, &u32, 4, "tag");
    { /* c claims to be free: two free neighbours, one not listed */
        uint32_t free_tag;
        TRACK_OPEN(b - HDR + 4, 4); /* reads a free block's header */
        memcpy(&free_tag, b - HDR + 4, 4);
        uint32_t off_b = (uint32_t)((b - HDR - t.arena) / 8),
                 off_c = (uint32_t)((c - HDR - t.arena) / 8);
        free_tag ^= off_b ^ off_c; /* the free tag of c's offset */
        expect_damage(t.h, c - HDR + 4, &free_tag, 4, "unlisted free block");
    }
    /* A free block's links (use after free). */
    u32 = 0xdeadbeefu;
    expect_damage(t.h, b, &u32, 4, "next link garbage");
    u32 = (uint32_t)((c - HDR + 16 - t.arena) / 8) + 1u; /* inside c, not a block */
    expect_damage(t.h, b, &u32, 4, "next link into a block's middle");
    /* Equal sizes, so d went to the head of the list it shares with b:
     * d -> b. */
    u32 = (uint32_t)((d - HDR - t.arena) / 8) + 1u; /* a cycle */
    expect_damage(t.h, d, &u32, 4, "next link to itself");
    expect_damage(t.h, d + 4, &u32, 4, "back link wrong");
    expect_damage(t.h, b, &u32, 4, "tail links back to the head");
    /* A free block's size (still a legal size, but the next header's back
     * size and the list class disagree). */
    u16 = 4;
    expect_damage(t.h, b - HDR, &u16, 2, "free size");
    /* The empty-page stack: a whole-page block takes page 1 (never used
     * before), and freeing it puts page 1 on the stack. */
    char *big = rtm_alloc(t.h, payload(&t));
    REQUIRE(big != NULL);
    rtm_free(t.h, big); /* page on the stack */
    CHECK_EQ(rtm_heap_check(t.h), 0);
    u32 = 0x7777u;
    expect_damage(t.h, big, &u32, 4, "empty-page link");
    u16 = 5;
    expect_damage(t.h, big - HDR, &u16, 2, "empty page size");
    rtm_free(t.h, a);
    rtm_free(t.h, c);
    rtm_free(t.h, e);
    CHECK_EQ(rtm_heap_check(t.h), 0);
    region_free(&t.r);
}

/* --- seeded random run against a shadow ---------------------------------- */

static void test_random(void)
{
    unsigned long long seed = 20261125ull;
    const char *env = getenv("RTMEM_SEED");
    if (env != NULL)
        seed = strtoull(env, NULL, 10);
    xv_test t;
    make(&t, 512, 24, 6);
    rng r = {seed};
    enum { SLOTS = 200 };
    char *slot[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    size_t live = 0, used = 0;
    for (int step = 0; step < 20000; step++) {
        size_t i = (size_t)(rng_next(&r) % SLOTS);
        if (slot[i] != NULL) {
            for (size_t k = 0; k < size[i]; k++)
                if (slot[i][k] != (char)(i + k)) {
                    CHECK_MSG(0, "block %zu damaged (replay: RTMEM_SEED=%llu)", i, seed);
                    break;
                }
            used -= rtm_usable_size(t.h, slot[i]);
            rtm_free(t.h, slot[i]);
            slot[i] = NULL;
            live--;
        } else {
            size_t n = (size_t)(rng_next(&r) % 600u);
            rtm_stats pre = rtm_heap_stats(t.h);
            slot[i] = rtm_alloc(t.h, n);
            CHECK_MSG((slot[i] != NULL) == (n <= pre.largest_free),
                      "alloc(%zu) vs largest_free %zu (replay: RTMEM_SEED=%llu)", n,
                      pre.largest_free, seed);
            if (slot[i] == NULL)
                continue;
            size[i] = n;
            for (size_t k = 0; k < n; k++)
                slot[i][k] = (char)(i + k);
            used += rtm_usable_size(t.h, slot[i]);
            live++;
        }
        if (step % 64 == 0) {
            CHECK_MSG(rtm_heap_check(t.h) == 0, "check at step %d (replay: RTMEM_SEED=%llu)", step,
                      seed);
            rtm_stats st = rtm_heap_stats(t.h);
            CHECK_EQ(st.live_blocks, live);
            CHECK_EQ(st.used_bytes, used);
        }
    }
    region_free(&t.r);
}

int main(void)
{
    RUN_TEST(test_names);
    RUN_TEST(test_create_rules);
    RUN_TEST(test_page_limit);
    RUN_TEST(test_no_crossing);
    RUN_TEST(test_page_give_back);
    RUN_TEST(test_merge_within_page);
    RUN_TEST(test_aligned);
    RUN_TEST(test_realloc);
    RUN_TEST(test_usable_size);
    RUN_TEST(test_stats_walk_reset);
    RUN_TEST(test_moved);
    RUN_TEST(test_misuse);
    RUN_TEST(test_check_damage);
    RUN_TEST(test_random);
    return check_summary();
}
