// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_tlsf_cached.c -- tests of the TLSF heap with the
 * deferred-coalescing cache ("tlsf_cached[:<blocks>]", generic API only):
 * names and bad limits, the create rules, pools (a region over the cache's
 * control refused), reuse of the newest freed block
 * (same bin, the next bin for a smaller request, an older block of the
 * same bin when the newest is too small), the limit (the
 * oldest block goes to TLSF first), blocks above the cached range freed at
 * once, the coalesce-and-retry path (a request that only fits once the
 * cache is coalesced succeeds and is not counted as refused), exact stats
 * and walk, reset, aligned blocks, realloc, and misuse: a second free of a
 * cached block, realloc and usable_size of one, foreign and interior
 * pointers, and a write
 * into a cached block found by the checker; the check word below every
 * block (damage refused and found, a block given to TLSF refused as a
 * second free, a pointer from before a reset refused, aligned blocks
 * through realloc and the walk). Then a seeded random run
 * against plain TLSF on the same requests: both must refuse nothing that
 * fits and end with the whole region free.
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
#include "../tracking/track_test.h"
#include "rtmem.h"

typedef struct tc_test {
    test_region r;
    rtm_heap *h;
} tc_test;

static void make(tc_test *t, const char *name, size_t bytes)
{
    t->r = region_malloc(bytes, 0);
    t->h = rtm_heap_create(name, t->r.mem, t->r.bytes);
    REQUIRE(t->h != NULL);
    REQUIRE(rtm_heap_check(t->h) == 0);
}

static void drop(tc_test *t)
{
    rtm_heap_destroy(t->h);
    region_free(&t->r);
}

/* --- names, creation ------------------------------------------------------ */

static void test_names(void)
{
    int listed = 0;
    for (const char *const *n = rtm_algorithms(); *n != NULL; n++)
        listed += strcmp(*n, "tlsf_cached") == 0;
    CHECK_EQ(listed, 1);
    CHECK(rtm_min_region("tlsf_cached") > rtm_min_region("tlsf"));
    CHECK_EQ(rtm_min_region("tlsf_cached:1"), rtm_min_region("tlsf_cached"));
    CHECK(rtm_min_region("tlsf_cached:352") > 0);
    const char *bad[] = {"tlsf_cached:0", "tlsf_cached:353", "tlsf_cached:",
                         "tlsf_cached:x", "tlsf_cached:-1",  "tlsf_cached:99999999999999999999"};
    test_region r = region_malloc(1u << 16, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_min_region(bad[i]) == 0, "%s", bad[i]);
        errno = 0;
        CHECK_MSG(rtm_heap_create(bad[i], r.mem, r.bytes) == NULL, "%s", bad[i]);
        CHECK_ERRNO(EINVAL);
    }
    rtm_heap *h = rtm_heap_create("tlsf_cached:16", r.mem, r.bytes);
    REQUIRE(h != NULL);
    CHECK(strcmp(rtm_heap_algorithm(h), "tlsf_cached") == 0);
    rtm_heap_destroy(h);
    region_free(&r);
}

static void test_create_rules(void)
{
    size_t min = rtm_min_region("tlsf_cached");
    test_region r = region_malloc(min + 64, 0);
    for (size_t mis = 0; mis < 8; mis++) {
        rtm_heap *h = rtm_heap_create("tlsf_cached", (char *)r.mem + mis, min);
        CHECK_MSG(h != NULL, "minimum region at start + %zu", mis);
        if (h != NULL) {
            CHECK(rtm_heap_check(h) == 0);
            void *p = rtm_alloc(h, 1);
            CHECK(p != NULL);
            rtm_free(h, p);
            rtm_heap_destroy(h);
        }
    }
    errno = 0;
    CHECK(rtm_heap_create("tlsf_cached", r.mem, min - 1) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heap_create("tlsf_cached", NULL, min) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heap_create("tlsf_cached", r.mem, SIZE_MAX) == NULL);
    CHECK_ERRNO(EINVAL);
    region_free(&r);
}

/* Pools go to the TLSF heap; a region over any part of the heap, the
 * cache's own control structure included, is refused unchanged. */
static void test_add_pool(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 16);
    rtm_stats before = rtm_heap_stats(t.h);
    for (size_t at = 0; at < 6000; at += 1000) {
        errno = 0;
        CHECK_MSG(rtm_heap_add_pool(t.h, (char *)t.r.mem + at, 4096) == -1, "over +%zu", at);
        CHECK_ERRNO(EINVAL);
    }
    CHECK_EQ(rtm_heap_stats(t.h).arena_bytes, before.arena_bytes);
    CHECK(rtm_heap_check(t.h) == 0);
    test_region extra = region_malloc(1u << 16, 0);
    CHECK_EQ(rtm_heap_add_pool(t.h, extra.mem, extra.bytes), 0);
    CHECK_EQ(rtm_heap_stats(t.h).arena_bytes, before.arena_bytes + extra.bytes);
    void *big = rtm_alloc(t.h, 60000); /* only the new pool holds it */
    REQUIRE(big != NULL);
    CHECK((char *)big > (char *)extra.mem && (char *)big < (char *)extra.mem + extra.bytes);
    rtm_free(t.h, big);
    CHECK(rtm_heap_check(t.h) == 0);
    drop(&t);
    region_free(&extra);
}

/* --- the cache --------------------------------------------------------- */

/* The newest freed block of a size comes back first, then the one before. */
static void test_reuse_newest(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 20);
    void *a = rtm_alloc(t.h, 200), *b = rtm_alloc(t.h, 200), *c = rtm_alloc(t.h, 200);
    REQUIRE(a && b && c);
    rtm_free(t.h, a);
    rtm_free(t.h, c);
    CHECK(rtm_heap_check(t.h) == 0);
    CHECK_PTR_EQ(rtm_alloc(t.h, 200), c);
    CHECK_PTR_EQ(rtm_alloc(t.h, 200), a);
    /* A smaller request takes a block of the next bin whole. */
    rtm_free(t.h, b);
    void *small = rtm_alloc(t.h, 180); /* bin [160, 192); b is in [192, 224) */
    CHECK_PTR_EQ(small, b);
    CHECK(rtm_usable_size(t.h, small) >= 200);
    rtm_free(t.h, small);
    rtm_free(t.h, a);
    rtm_free(t.h, c);
    /* In one bin ([192, 224)), a request the newest block cannot hold takes
     * an older one that can; the newest stays cached. */
    void *big = rtm_alloc(t.h, 216), *little = rtm_alloc(t.h, 194);
    REQUIRE(big && little);
    REQUIRE(rtm_usable_size(t.h, little) < 210 && rtm_usable_size(t.h, big) < 224);
    rtm_free(t.h, big);
    rtm_free(t.h, little);
    CHECK_PTR_EQ(rtm_alloc(t.h, 210), big);
    CHECK_PTR_EQ(rtm_alloc(t.h, 194), little);
    rtm_free(t.h, big);
    rtm_free(t.h, little);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    drop(&t);
}

/* With a limit of 2 the third free gives the oldest block to TLSF; blocks
 * above 32 KiB never wait. */
static void test_limit(void)
{
    tc_test t;
    make(&t, "tlsf_cached:2", 1u << 20);
    void *p[4];
    for (int i = 0; i < 4; i++)
        REQUIRE((p[i] = rtm_alloc(t.h, 100)) != NULL);
    void *guard = rtm_alloc(t.h, 100); /* keeps p[3] from the heap's end */
    rtm_free(t.h, p[0]);
    rtm_free(t.h, p[2]);
    rtm_free(t.h, p[3]); /* p[0] leaves the cache */
    CHECK(rtm_heap_check(t.h) == 0);
    CHECK_PTR_EQ(rtm_alloc(t.h, 100), p[3]);
    CHECK_PTR_EQ(rtm_alloc(t.h, 100), p[2]);
    /* The third comes from TLSF: p[0], which the eviction made free. */
    CHECK_PTR_EQ(rtm_alloc(t.h, 100), p[0]);

    void *big = rtm_alloc(t.h, 40000), *after = rtm_alloc(t.h, 16);
    REQUIRE(big && after);
    size_t free_before = rtm_heap_stats(t.h).free_bytes;
    rtm_free(t.h, big);
    /* Freed at once: a walk-free stats call shows it free without a flush
     * having anything to do; an alloc of that size gets it back. */
    CHECK(rtm_heap_stats(t.h).free_bytes > free_before);
    CHECK_PTR_EQ(rtm_alloc(t.h, 40000), big);
    (void)guard;
    rtm_heap_reset(t.h);
    drop(&t);
}

/* Fills the heap with 40-byte blocks, frees them all but every 400th,
 * then those: the last ones freed stay in the cache (one bin: 8 at most),
 * 16 KiB apart, so TLSF's largest free block is about 16 KiB until the
 * cache is coalesced. Returns how many blocks fitted. */
static size_t fragment_with_cached(rtm_heap *h, void **blocks, size_t cap)
{
    size_t n = 0;
    while (n < cap && (blocks[n] = rtm_alloc(h, 40)) != NULL)
        n++;
    for (size_t i = 0; i < n; i++)
        if (i % 400 != 399)
            rtm_free(h, blocks[i]);
    for (size_t i = 399; i < n; i += 400)
        rtm_free(h, blocks[i]);
    return n;
}

/* A request that fits only once the cached blocks are merged: served, and
 * not counted as refused; alloc, aligned_alloc and a moving realloc. */
static void test_coalesce_and_retry(void)
{
    tc_test t;
    make(&t, "tlsf_cached:352", 200000);
    static void *blocks[8192];
    size_t n = fragment_with_cached(t.h, blocks, 8192);
    REQUIRE(n > 3000);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 1); /* the filling loop's last call */
    n = fragment_with_cached(t.h, blocks, 8192);
    void *whole = rtm_alloc(t.h, 100000);
    CHECK(whole != NULL);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 2); /* the second filling only */
    CHECK(rtm_heap_check(t.h) == 0);
    rtm_free(t.h, whole);

    (void)fragment_with_cached(t.h, blocks, 8192);
    void *al = rtm_aligned_alloc(t.h, 4096, 100000);
    CHECK(al != NULL && (uintptr_t)al % 4096 == 0);
    rtm_free(t.h, al);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 3);

    n = fragment_with_cached(t.h, blocks, 8192);
    void *grown = rtm_realloc(t.h, blocks[0] = rtm_alloc(t.h, 40), 100000);
    CHECK(grown != NULL);
    rtm_free(t.h, grown);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.failed_allocs, 4);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.largest_free, st.free_bytes);
    /* A request too large for any coalescing is refused, and counted once. */
    errno = 0;
    CHECK(rtm_alloc(t.h, 300000) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_heap_stats(t.h).failed_allocs, 5);
    (void)n;
    drop(&t);
}

static void count_block(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    size_t *n = arg;
    n[used ? 1 : 0]++;
}

/* Stats and walk report cached blocks as free, exactly as plain TLSF. */
static void test_stats_walk_reset(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 18);
    rtm_stats fresh = rtm_heap_stats(t.h);
    void *p[50];
    for (int i = 0; i < 50; i++)
        REQUIRE((p[i] = rtm_alloc(t.h, (size_t)(16 + 37 * i))) != NULL);
    for (int i = 0; i < 50; i += 2)
        rtm_free(t.h, p[i]);
    size_t n[2] = {0, 0};
    CHECK_EQ(rtm_heap_walk(t.h, count_block, n), 0);
    CHECK_EQ(n[1], 25);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 25);
    for (int i = 1; i < 50; i += 2)
        rtm_free(t.h, p[i]);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.free_bytes, fresh.free_bytes);
    CHECK_EQ(st.largest_free, fresh.largest_free);
    CHECK(st.peak_used_bytes > 0);
    for (int i = 0; i < 10; i++)
        p[i] = rtm_alloc(t.h, 64);
    for (int i = 0; i < 10; i++)
        rtm_free(t.h, p[i]);
    CHECK_EQ(rtm_heap_reset(t.h), 0);
    st = rtm_heap_stats(t.h);
    CHECK_EQ(st.free_bytes, fresh.free_bytes);
    CHECK_EQ(st.peak_used_bytes, 0);
    CHECK(rtm_heap_check(t.h) == 0);
    drop(&t);
}

/* peak_used_bytes is the most the caller held: a cached block is not
 * counted with the block allocated after it. */
static void test_peak_leaves_cached_out(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 20);
    void *a = rtm_alloc(t.h, 1000);
    REQUIRE(a != NULL);
    size_t ua = rtm_usable_size(t.h, a);
    rtm_free(t.h, a);               /* cached */
    void *b = rtm_alloc(t.h, 3000); /* from TLSF: a stays cached */
    REQUIRE(b != NULL && b != a);
    size_t ub = rtm_usable_size(t.h, b);
    void *c = rtm_alloc(t.h, 1000); /* a again, from the cache */
    CHECK_PTR_EQ(c, a);
    rtm_stats st = rtm_heap_stats(t.h);
    CHECK_EQ(st.used_bytes, ua + ub);
    CHECK_EQ(st.peak_used_bytes, ua + ub);
    rtm_free(t.h, c);
    rtm_free(t.h, b);               /* both cached */
    void *d = rtm_alloc(t.h, 2000); /* from TLSF: no cached block fits its bins */
    REQUIRE(d != NULL);
    st = rtm_heap_stats(t.h);
    CHECK_EQ(st.peak_used_bytes, ua + ub);
    rtm_free(t.h, d);
    /* Eight blocks live at once, then cached; a larger block from TLSF
     * does not add to the peak. */
    void *p[8];
    for (int i = 0; i < 8; i++)
        REQUIRE((p[i] = rtm_alloc(t.h, 5000)) != NULL);
    size_t u8 = 8u * rtm_usable_size(t.h, p[0]);
    for (int i = 0; i < 8; i++)
        rtm_free(t.h, p[i]);
    void *big = rtm_alloc(t.h, 20000);
    REQUIRE(big != NULL && rtm_usable_size(t.h, big) < u8);
    st = rtm_heap_stats(t.h);
    CHECK_EQ(st.peak_used_bytes, u8);
    rtm_free(t.h, big);
    CHECK(rtm_heap_check(t.h) == 0);
    drop(&t);
}

static void test_aligned_and_realloc(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 20);
    void *a = rtm_aligned_alloc(t.h, 256, 300);
    REQUIRE(a != NULL);
    CHECK_EQ((uintptr_t)a % 256, 0);
    errno = 0;
    CHECK(rtm_aligned_alloc(t.h, 24, 300) == NULL);
    CHECK_ERRNO(EINVAL);
    /* Not cached: TLSF's aligned mark would pass to a plain request that
     * reused it (the checker refuses an aligned block in the cache). */
    rtm_free(t.h, a);
    CHECK(rtm_heap_check(t.h) == 0);
    void *p = rtm_realloc(t.h, NULL, 100);
    REQUIRE(p != NULL);
    memset(p, 7, 100);
    void *q = rtm_realloc(t.h, p, 5000);
    REQUIRE(q != NULL);
    CHECK(((unsigned char *)q)[99] == 7);
    CHECK(rtm_realloc(t.h, q, 0) == NULL); /* frees */
    CHECK(rtm_heap_check(t.h) == 0);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 0);
    drop(&t);
}

/* --- misuse ------------------------------------------------------------- */

static void test_misuse(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 18);
    recorder_install();
    char *p = rtm_alloc(t.h, 100), *q = rtm_alloc(t.h, 100);
    REQUIRE(p && q);
    rtm_free(t.h, p);
    errno = 0;
    rtm_free(t.h, p); /* still in the cache */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK_PTR_EQ(recorder()->last_ptr, p);
    errno = 0;
    CHECK(rtm_realloc(t.h, p, 300) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 2);
    errno = 0;
    CHECK_EQ(rtm_usable_size(t.h, p), 0); /* free to the caller, though TLSF's */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 3);
    CHECK(rtm_heap_check(t.h) == 0);
    /* Handed out once only. */
    void *x = rtm_alloc(t.h, 100), *y = rtm_alloc(t.h, 100);
    CHECK(x != y);
    CHECK_PTR_EQ(x, p);
    /* A live block whose first word equals nothing special frees normally;
     * foreign and interior pointers are refused by TLSF's checks. */
    recorder_reset();
    int on_stack = 0;
    errno = 0;
    rtm_free(t.h, &on_stack);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 1);
    errno = 0;
    rtm_free(t.h, q + 8);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, 2);
    CHECK(rtm_heap_check(t.h) == 0);
    /* A write into a cached block's first word: the checker names it. */
    rtm_free(t.h, q);
    TRACK_OPEN(q, 8);
    q[0] ^= 1;
    recorder_reset();
    errno = 0;
    CHECK(rtm_heap_check(t.h) == -1);
    CHECK_ERRNO(EFAULT);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
    q[0] ^= 1;
    CHECK(rtm_heap_check(t.h) == 0);
    rtm_set_error_handler(NULL, NULL);
    drop(&t);
}

/* --- the check word ------------------------------------------------------- */

typedef struct walk_find {
    const void *p;
    size_t usable;
    int used, seen;
} walk_find;

static void find_block(void *ptr, size_t usable, int used, void *arg)
{
    walk_find *f = arg;
    if (ptr == f->p) {
        f->seen++;
        f->usable = usable;
        f->used = used;
    }
}

/* Every block carries a word below it: damage to it is refused at the free
 * and found by the checker; a block freed to TLSF is refused as a second
 * free; a pointer from before a reset no longer passes; aligned blocks
 * keep their alignment through realloc and are walked at their address. */
static void test_check_word(void)
{
    tc_test t;
    make(&t, "tlsf_cached", 1u << 20);
    recorder_install();
    unsigned char *p = rtm_alloc(t.h, 100);
    REQUIRE(p != NULL);
    /* One bit of the word below the block. */
    TRACK_OPEN(p - 8, 8);
    p[-3] ^= 0x10;
    errno = 0;
    CHECK(rtm_heap_check(t.h) == -1);
    CHECK_ERRNO(EFAULT);
    errno = 0;
    rtm_free(t.h, p);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_CORRUPT_HEADER], 1);
    CHECK_PTR_EQ(recorder()->last_ptr, p);
    errno = 0;
    CHECK_EQ(rtm_usable_size(t.h, p), 0);
    CHECK_ERRNO(EINVAL);
    p[-3] ^= 0x10;
    CHECK(rtm_heap_check(t.h) == 0);
    CHECK(rtm_usable_size(t.h, p) >= 100);
    rtm_free(t.h, p);
    CHECK(rtm_heap_check(t.h) == 0);

    /* A block above the cached sizes goes to TLSF at once: freeing it
     * again is a second free, reported at that call. */
    recorder_reset();
    void *big = rtm_alloc(t.h, 40000);
    REQUIRE(big != NULL);
    rtm_free(t.h, big);
    errno = 0;
    rtm_free(t.h, big);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK_PTR_EQ(recorder()->last_ptr, big);
    /* So is a cached block evicted to TLSF since (the limit of 128 pushes
     * it out): its word says freed. */
    void *blk[200];
    for (int i = 0; i < 200; i++)
        REQUIRE((blk[i] = rtm_alloc(t.h, 40)) != NULL);
    for (int i = 0; i < 200; i++)
        rtm_free(t.h, blk[i]);
    errno = 0;
    rtm_free(t.h, blk[0]);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 2);
    CHECK(rtm_heap_check(t.h) == 0);

    /* A pointer from before a reset: refused, the heap untouched. */
    unsigned char *old = rtm_alloc(t.h, 300);
    REQUIRE(old != NULL);
    void *keep = rtm_alloc(t.h, 300);
    REQUIRE(keep != NULL && keep != old);
    CHECK_EQ(rtm_heap_reset(t.h), 0);
    rtm_stats fresh = rtm_heap_stats(t.h);
    size_t calls = recorder()->calls;
    errno = 0;
    rtm_free(t.h, keep);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, calls + 1u);
    CHECK_EQ(rtm_heap_stats(t.h).free_bytes, fresh.free_bytes);
    CHECK(rtm_heap_check(t.h) == 0);

    /* Aligned blocks: every alignment up to a page, through realloc, and
     * the walk reports them where the caller holds them. */
    for (size_t align = 16; align <= 4096; align *= 2) {
        unsigned char *a = rtm_aligned_alloc(t.h, align, 200);
        REQUIRE(a != NULL);
        CHECK_EQ((uintptr_t)a % align, 0);
        CHECK(rtm_usable_size(t.h, a) >= 200);
        memset(a, 0x5a, 200);
        walk_find f = {a, 0, 0, 0};
        CHECK_EQ(rtm_heap_walk(t.h, find_block, &f), 0);
        CHECK_EQ(f.seen, 1);
        CHECK_EQ(f.used, 1);
        CHECK_EQ(f.usable, rtm_usable_size(t.h, a));
        unsigned char *b = rtm_realloc(t.h, a, 3000);
        REQUIRE(b != NULL);
        CHECK_EQ((uintptr_t)b % align, 0);
        CHECK(b[0] == 0x5a && b[199] == 0x5a);
        CHECK(rtm_heap_check(t.h) == 0);
        rtm_free(t.h, b);
        errno = 0;
        rtm_free(t.h, b); /* not cached: TLSF's, and the word says freed */
        CHECK_ERRNO(EINVAL);
    }
    /* An alignment no pool can give: refused as TLSF refuses it. */
    errno = 0;
    CHECK(rtm_aligned_alloc(t.h, (size_t)1 << (sizeof(size_t) * 8u - 1u), 16) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_heap_stats(t.h).live_blocks, 0);
    CHECK(rtm_heap_check(t.h) == 0);
    rtm_set_error_handler(NULL, NULL);
    drop(&t);
}

/* --- against plain TLSF ------------------------------------------------ */

/* The same seeded requests on "tlsf" and "tlsf_cached", in regions large
 * enough that plain TLSF refuses nothing: the cache must refuse nothing
 * either, keep every block's contents (no block handed out twice) and its
 * alignment, give at least the size asked (realloc included), keep its
 * own invariants (checked every 500 steps), and end with the region free
 * and whole. No stats in the loop: they coalesce the cache, and this test
 * is about the cache's own paths (the model rig covers stats). */
static void test_random_against_tlsf(void)
{
    enum { SLOTS = 600, STEPS = 60000 };
    tc_test plain, cached;
    make(&plain, "tlsf", 4u << 20);
    make(&cached, "tlsf_cached", 4u << 20);
    rtm_stats fresh = rtm_heap_stats(cached.h);
    void *a[SLOTS] = {0};
    unsigned char *b[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    rng r = {4242};
    size_t refused_plain = 0, refused_cached = 0, damaged = 0;
    for (int i = 0; i < STEPS; i++) {
        size_t k = rng_below(&r, SLOTS);
        for (size_t j = 0; j < size[k]; j++)
            damaged += b[k][j] != (unsigned char)k;
        rtm_free(plain.h, a[k]);
        rtm_free(cached.h, b[k]);
        size[k] = 1 + rng_below(&r, (i / 1000) % 2 ? 4000 : 200);
        size_t align = (size_t)8 << rng_below(&r, 6);
        int aligned = rng_below(&r, 16) == 0;
        a[k] = aligned ? rtm_aligned_alloc(plain.h, align, size[k]) : rtm_alloc(plain.h, size[k]);
        b[k] = aligned ? rtm_aligned_alloc(cached.h, align, size[k]) : rtm_alloc(cached.h, size[k]);
        if (b[k] != NULL && aligned)
            damaged += (uintptr_t)b[k] % align != 0;
        if (b[k] != NULL && rng_below(&r, 16) == 0) { /* grow or shrink it */
            size_t to = 1 + rng_below(&r, 6000);
            void *q = rtm_realloc(cached.h, b[k], to);
            refused_cached += q == NULL;
            b[k] = q != NULL ? q : b[k];
            size[k] = q != NULL ? to : size[k];
        }
        if (b[k] != NULL)
            damaged += rtm_usable_size(cached.h, b[k]) < size[k];
        refused_plain += a[k] == NULL;
        refused_cached += b[k] == NULL;
        if (b[k] == NULL)
            size[k] = 0;
        else
            memset(b[k], (int)k, size[k]);
        if (i % 500 == 0)
            CHECK(rtm_heap_check(cached.h) == 0);
    }
    CHECK_EQ(refused_plain, 0);
    CHECK_EQ(refused_cached, 0);
    CHECK_EQ(damaged, 0);
    for (size_t k = 0; k < SLOTS; k++) {
        rtm_free(plain.h, a[k]);
        rtm_free(cached.h, b[k]);
    }
    rtm_stats st = rtm_heap_stats(cached.h);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.largest_free, fresh.largest_free);
    CHECK_EQ(st.failed_allocs, 0);
    CHECK(rtm_heap_check(cached.h) == 0);
    drop(&plain);
    drop(&cached);
}

int main(void)
{
    RUN_TEST(test_names);
    RUN_TEST(test_create_rules);
    RUN_TEST(test_add_pool);
    RUN_TEST(test_reuse_newest);
    RUN_TEST(test_limit);
    RUN_TEST(test_coalesce_and_retry);
    RUN_TEST(test_stats_walk_reset);
    RUN_TEST(test_peak_leaves_cached_out);
    RUN_TEST(test_aligned_and_realloc);
    RUN_TEST(test_misuse);
    RUN_TEST(test_check_word);
    RUN_TEST(test_random_against_tlsf);
    return check_summary();
}
