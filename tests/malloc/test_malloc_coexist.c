// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_coexist.c -- the heap API (rtmem.h) and the
 * thread-caching malloc's own API (rtmem/malloc.h) in one translation unit
 * and one program.
 *
 * The two headers once declared rtm_free, rtm_realloc and rtm_aligned_alloc
 * with different signatures, so this file did not compile, and the two
 * static archives did not link together. Now every name of the malloc's API
 * starts with rtm_malloc; the static assertions below pin both signatures,
 * and the tests interleave both APIs and check that each call reached its
 * own library: heap blocks inside the heap's region and counted in its
 * statistics, malloc blocks outside it and counted in rtm_malloc_stats().
 *
 * Built twice (tests/malloc/malloc.cmake):
 *  - test_malloc_coexist: librtmem.a with rtmem_malloc_api (the allocator
 *    without the drop-in names), in every build, sanitizers included;
 *  - test_malloc_coexist_static (COEXIST_DROPIN=1): librtmem.a with
 *    librtmem-malloc.a, whose drop-in names replace malloc; it also checks
 *    that malloc() is this allocator. Not in sanitizer builds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/rng.h"
#include "rtmem.h"
#include "rtmem/malloc.h"

#ifndef COEXIST_DROPIN
#define COEXIST_DROPIN 0
#endif

/* Both APIs keep their own signatures (a mismatch fails the build). */
_Static_assert(_Generic(&rtm_free, void (*)(rtm_heap *, void *) : 1, default : 0),
               "heap API: rtm_free(rtm_heap *, void *)");
_Static_assert(_Generic(&rtm_realloc, void *(*)(rtm_heap *, void *, size_t) : 1, default : 0),
               "heap API: rtm_realloc(rtm_heap *, void *, size_t)");
_Static_assert(_Generic(&rtm_aligned_alloc, void *(*)(rtm_heap *, size_t, size_t) : 1, default : 0),
               "heap API: rtm_aligned_alloc(rtm_heap *, size_t, size_t)");
_Static_assert(_Generic(&rtm_malloc_free, void (*)(void *) : 1, default : 0),
               "malloc API: rtm_malloc_free(void *)");
_Static_assert(_Generic(&rtm_malloc_realloc, void *(*)(void *, size_t) : 1, default : 0),
               "malloc API: rtm_malloc_realloc(void *, size_t)");
_Static_assert(_Generic(&rtm_malloc_aligned_alloc, void *(*)(size_t, size_t) : 1, default : 0),
               "malloc API: rtm_malloc_aligned_alloc(size_t, size_t)");
_Static_assert(_Generic(&rtm_malloc_calloc, void *(*)(size_t, size_t) : 1, default : 0),
               "malloc API: rtm_malloc_calloc(size_t, size_t)");

#define REGION_BYTES ((size_t)1 << 20)
#define PAIRS        96u

static _Alignas(64) unsigned char region[REGION_BYTES];

static int in_region(const void *p, const unsigned char *mem, size_t bytes)
{
    return (const unsigned char *)p >= mem && (const unsigned char *)p < mem + bytes;
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1u)) == 0; }

/* A byte derived from the block's slot and position: a block overwritten
 * by the other allocator, or moved without its contents, shows. */
static unsigned char token(size_t slot, size_t i) { return (unsigned char)(slot * 31u + i + 1u); }

static void fill(unsigned char *p, size_t slot, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = token(slot, i);
}

static int intact(const unsigned char *p, size_t slot, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != token(slot, i))
            return 0;
    return 1;
}

/* One heap block and one malloc block per slot, allocated, resized and freed
 * in alternation through the two APIs, on a TLSF heap in a static region. */
typedef struct pair {
    unsigned char *heap, *mall;
    size_t heap_n, mall_n;
} pair;

static void test_interleaved(void)
{
    rng r = {0xC0E1u};
    rtm_heap *h = rtm_heap_create("tlsf", region, sizeof region);
    REQUIRE(h != NULL);
    rtm_malloc_stats_t m0 = rtm_malloc_stats();
    static pair s[PAIRS];
    size_t heap_live = 0;
    for (size_t k = 0; k < PAIRS; k++) {
        size_t align = (size_t)16 << (k % 5u); /* 16 .. 256 */
        s[k].heap_n = 1u + rng_size(&r, 11);
        s[k].mall_n = 1u + rng_size(&r, 11);
        s[k].heap = (k & 1u) ? rtm_aligned_alloc(h, align, s[k].heap_n) : rtm_alloc(h, s[k].heap_n);
        s[k].mall =
            (k & 1u) ? rtm_malloc_aligned_alloc(align, s[k].mall_n) : rtm_malloc(s[k].mall_n);
        REQUIRE(s[k].heap != NULL && s[k].mall != NULL);
        heap_live++;
        CHECK_MSG(in_region(s[k].heap, region, sizeof region), "slot %zu: heap block outside", k);
        CHECK_MSG(!in_region(s[k].mall, region, sizeof region), "slot %zu: malloc block inside", k);
        if (k & 1u) {
            CHECK(is_aligned(s[k].heap, align));
            CHECK(is_aligned(s[k].mall, align));
        }
        CHECK(rtm_usable_size(h, s[k].heap) >= s[k].heap_n);
        CHECK(rtm_malloc_usable_size(s[k].mall) >= s[k].mall_n);
        fill(s[k].heap, 2u * k, s[k].heap_n);
        fill(s[k].mall, 2u * k + 1u, s[k].mall_n);
    }
    CHECK_EQ(rtm_heap_stats(h).live_blocks, heap_live);
    CHECK(rtm_malloc_stats().in_use_bytes >= m0.in_use_bytes + PAIRS);

    /* Resize every block through its own API: contents kept up to the
     * smaller size, and each block stays on its side of the region. */
    for (size_t k = 0; k < PAIRS; k++) {
        size_t hn = 1u + rng_size(&r, 12), mn = 1u + rng_size(&r, 12);
        unsigned char *hp = rtm_realloc(h, s[k].heap, hn);
        unsigned char *mp = rtm_malloc_realloc(s[k].mall, mn);
        REQUIRE(hp != NULL && mp != NULL);
        CHECK_MSG(intact(hp, 2u * k, hn < s[k].heap_n ? hn : s[k].heap_n), "slot %zu heap", k);
        CHECK_MSG(intact(mp, 2u * k + 1u, mn < s[k].mall_n ? mn : s[k].mall_n), "slot %zu", k);
        CHECK(in_region(hp, region, sizeof region));
        CHECK(!in_region(mp, region, sizeof region));
        s[k].heap = hp;
        s[k].mall = mp;
        s[k].heap_n = hn;
        s[k].mall_n = mn;
        fill(hp, 2u * k, hn);
        fill(mp, 2u * k + 1u, mn);
    }
    CHECK_EQ(rtm_heap_stats(h).live_blocks, heap_live);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_malloc_check(), 0);

    /* Free in alternation; each API only ever sees its own blocks. */
    for (size_t k = 0; k < PAIRS; k++) {
        CHECK_MSG(intact(s[k].heap, 2u * k, s[k].heap_n), "slot %zu heap before free", k);
        CHECK_MSG(intact(s[k].mall, 2u * k + 1u, s[k].mall_n), "slot %zu malloc before free", k);
        rtm_free(h, s[k].heap);
        rtm_malloc_free(s[k].mall);
        heap_live--;
        CHECK_EQ(rtm_heap_stats(h).live_blocks, heap_live);
    }
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_malloc_stats_t m1 = rtm_malloc_stats();
    CHECK_EQ(m1.in_use_bytes, m0.in_use_bytes);
    CHECK_EQ(m1.foreign_frees, m0.foreign_frees);
    CHECK_EQ(rtm_malloc_check(), 0);
    rtm_heap_destroy(h);
}

/* rtm_malloc_calloc zeroes, and rtm_malloc_free leaves errno alone, next to
 * heap calls that set it. */
static void test_calloc_and_errno(void)
{
    rtm_heap *h = rtm_heap_create("tlsf", region, sizeof region);
    REQUIRE(h != NULL);
    unsigned char *z = rtm_malloc_calloc(100, 10);
    REQUIRE(z != NULL);
    size_t nonzero = 0;
    for (size_t i = 0; i < 1000; i++)
        nonzero += z[i] != 0;
    CHECK_EQ(nonzero, 0);
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 24, 8) == NULL); /* not a power of two */
    CHECK_ERRNO(EINVAL);
    rtm_malloc_free(z);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_malloc_aligned_alloc(24, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
}

/* A heap of every algorithm whose region is a block of the malloc: the
 * heap API works inside memory the malloc API handed out. */
static void test_heap_inside_malloc_block(void)
{
    for (const char *const *name = rtm_algorithms(); *name != NULL; name++) {
        size_t bytes = REGION_BYTES;
        unsigned char *mem = rtm_malloc_aligned_alloc(4096, bytes);
        REQUIRE(mem != NULL);
        rtm_heap *h = rtm_heap_create(*name, mem, bytes);
        REQUIRE(h != NULL);
        void *p[8];
        for (size_t i = 0; i < 8; i++) {
            p[i] = rtm_alloc(h, 24);
            CHECK_MSG(p[i] != NULL && in_region(p[i], mem, bytes), "%s: block %zu", *name, i);
            if (p[i] != NULL)
                fill(p[i], i, 24);
        }
        CHECK_EQ(rtm_heap_stats(h).live_blocks, 8);
        CHECK_EQ(rtm_heap_check(h), 0);
        for (size_t i = 0; i < 8; i++) {
            CHECK_MSG(p[i] == NULL || intact(p[i], i, 24), "%s: block %zu", *name, i);
            rtm_free(h, p[i]);
        }
        CHECK_MSG(rtm_heap_stats(h).live_blocks == 0, "%s: blocks left", *name);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
        CHECK(rtm_malloc_usable_size(mem) >= bytes);
        rtm_malloc_free(mem);
    }
    CHECK_EQ(rtm_malloc_check(), 0);
}

#if COEXIST_DROPIN
/* Linked with librtmem-malloc.a, malloc itself is this allocator, and
 * librtmem (which never calls malloc) still gives heap blocks. */
static void test_malloc_is_ours(void)
{
    size_t before = rtm_malloc_stats().in_use_bytes;
    void *p = malloc(1000);
    REQUIRE(p != NULL);
    CHECK_EQ(rtm_malloc_usable_size(p), 1024);
    CHECK(rtm_malloc_stats().in_use_bytes >= before + 1024u);
    rtm_heap *h = rtm_heap_create("tlsf", region, sizeof region);
    REQUIRE(h != NULL);
    void *q = rtm_alloc(h, 1000);
    CHECK(q != NULL && in_region(q, region, sizeof region));
    CHECK(!in_region(p, region, sizeof region));
    rtm_free(h, q);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    free(p);
    CHECK_EQ(rtm_malloc_stats().in_use_bytes, before);
    rtm_heap_destroy(h);
}
#endif

int main(void)
{
    RUN_TEST(test_interleaved);
    RUN_TEST(test_calloc_and_errno);
    RUN_TEST(test_heap_inside_malloc_block);
#if COEXIST_DROPIN
    RUN_TEST(test_malloc_is_ours);
#endif
    return check_summary();
}
