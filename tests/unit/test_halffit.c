// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_halffit.c -- white-box tests of the half-fit heap
 * (rtmem/halffit.h): bad inputs of every typed function, the proven
 * worst-case bound driven by adversarial sequences on heaps of exactly
 * rtm_halffit_arena_size(M, n) bytes (and a smaller heap shown to fail),
 * misuse detection, the checker against hand-made corruption, exact
 * statistics, alignment, reset, walk and position independence.
 *
 * Corruption tests write into the documented layout: a block's 16-byte
 * header (units, prev_units, state, order) sits right before its payload;
 * a free block's two links follow its header.
 */
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"
#include "rtmem/halffit.h"

#define U   RTM_HALFFIT_MIN_BLOCK
#define HDR RTM_HALFFIT_HEADER_BYTES

static rtm_halffit *make(test_region *r, size_t bytes, size_t misalign)
{
    *r = region_malloc(bytes, misalign);
    rtm_halffit *h = rtm_halffit_create(r->mem, r->bytes);
    REQUIRE(h != NULL);
    return h;
}

static void test_sizes_and_bad_inputs(void)
{
    CHECK_EQ(rtm_halffit_block_size(0), U);
    CHECK_EQ(rtm_halffit_block_size(U - HDR), U);
    CHECK_EQ(rtm_halffit_block_size(U - HDR + 1u), 2u * U);
    CHECK_EQ(rtm_halffit_block_size(1000), 1024u);
    CHECK_EQ(rtm_halffit_block_size(1008), 1024u);
    CHECK_EQ(rtm_halffit_block_size(1009), 2048u);
    CHECK_EQ(rtm_halffit_block_size(SIZE_MAX), 0);
    CHECK_EQ(rtm_halffit_block_size(SIZE_MAX - HDR + 1u), 0);

    errno = 0;
    CHECK(rtm_halffit_create(NULL, 4096) == NULL);
    CHECK_ERRNO(EINVAL);
    unsigned char small[1024];
    errno = 0;
    CHECK(rtm_halffit_create(small, rtm_halffit_min_region() - 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_halffit_min_region() <= sizeof small);
    for (size_t m = 0; m < 16; m++) { /* min_region works at any start */
        test_region r = region_malloc(rtm_halffit_min_region(), m);
        rtm_halffit *h = rtm_halffit_create(r.mem, r.bytes);
        REQUIRE(h != NULL);
        void *p = rtm_halffit_alloc(h, U - HDR);
        CHECK(p != NULL);
        CHECK(rtm_halffit_alloc(h, 0) == NULL);
        CHECK_EQ(rtm_halffit_free(h, p), 0);
        CHECK_EQ(rtm_halffit_check(h), 0);
        region_free(&r);
    }

    errno = 0;
    CHECK_EQ(rtm_halffit_arena_size(0, 0), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_halffit_arena_size(1000, 2000), 0); /* M below one max block */
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_halffit_arena_size(SIZE_MAX, 1u << 20), 0); /* overflow */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_halffit_arena_size(SIZE_MAX, SIZE_MAX), 0);
    /* 2 (1 + log2(1024 / U)) M + U (sentinel) + control + 15 */
    size_t levels = 2u * (1u + 5u);
    CHECK_EQ(rtm_halffit_arena_size(4096, 1000),
             15u + rtm_halffit_control_size() + U + levels * 4096u);
    CHECK_EQ(rtm_halffit_arena_size(4096 + U - 1u, 1000),
             15u + rtm_halffit_control_size() + U + levels * 4096u);

    test_region r;
    rtm_halffit *h = make(&r, 8192, 3);
    errno = 0;
    CHECK(rtm_halffit_alloc(h, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_halffit_alloc(h, 1u << 20) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_halffit_aligned_alloc(h, 3, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_halffit_aligned_alloc(h, 0, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_halffit_aligned_alloc(h, RTM_HALFFIT_MAX_ALIGN * 2u, 8) == NULL);
    CHECK_ERRNO(ENOTSUP);
    errno = 0;
    CHECK(rtm_halffit_aligned_alloc(h, 64, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_halffit_stats(h).failed_allocs, 3); /* EINVAL not counted */
    CHECK_EQ(rtm_halffit_free(h, NULL), 0);
    CHECK_EQ(rtm_halffit_usable_size(h, NULL), 0);
    CHECK(rtm_halffit_realloc(h, NULL, 0) != NULL); /* realloc(NULL, 0) = alloc(0) */
    errno = 0;
    CHECK_EQ(rtm_halffit_check(NULL), -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

/* Every payload 16-aligned (max_align_t); aligned_alloc up to 16 is a
 * plain alloc; usable size is the block minus the header: the rounded
 * block, or up to twice it when a whole free block was handed out. */
static void test_alignment_and_usable(void)
{
    for (size_t m = 0; m < 16; m++) {
        test_region r;
        rtm_halffit *h = make(&r, 64 * 1024, m);
        for (size_t s = 0; s < 3000; s += 37) {
            void *p = (s & 1) ? rtm_halffit_aligned_alloc(h, 16, s) : rtm_halffit_alloc(h, s);
            REQUIRE(p != NULL);
            CHECK_EQ((uintptr_t)p % 16u, 0);
            CHECK(rtm_halffit_usable_size(h, p) >= rtm_halffit_block_size(s) - HDR);
            CHECK(rtm_halffit_usable_size(h, p) < 2u * rtm_halffit_block_size(s) - HDR);
            CHECK(rtm_halffit_usable_size(h, p) >= s);
            memset(p, 0xAB, s);
            CHECK_EQ(rtm_halffit_free(h, p), 0);
        }
        CHECK_EQ(rtm_halffit_check(h), 0);
        region_free(&r);
    }
}

/* Stats are exact: used/free sum usable sizes, largest_free is the exact
 * boundary of what alloc grants. */
static void test_stats_exact(void)
{
    test_region r;
    rtm_halffit *h = make(&r, 100000, 0);
    rtm_stats s0 = rtm_halffit_stats(h);
    CHECK_EQ(s0.arena_bytes, 100000);
    CHECK_EQ(s0.used_bytes, 0);
    CHECK_EQ(s0.live_blocks, 0);
    void *p[64];
    size_t used = 0, peak = 0;
    rng g = {42};
    for (int i = 0; i < 64; i++) {
        size_t s = (size_t)(rng_next(&g) % 700u);
        p[i] = rtm_halffit_alloc(h, s);
        REQUIRE(p[i] != NULL);
        used += rtm_halffit_usable_size(h, p[i]);
        rtm_stats st = rtm_halffit_stats(h);
        CHECK_EQ(st.used_bytes, used);
        CHECK_EQ(st.live_blocks, (size_t)i + 1u);
        size_t lf = st.largest_free;
        void *q = rtm_halffit_alloc(h, lf + 1u);
        CHECK(q == NULL);
        q = rtm_halffit_alloc(h, lf);
        CHECK(q != NULL);
        if (used + rtm_halffit_usable_size(h, q) > peak) /* may hold more than lf */
            peak = used + rtm_halffit_usable_size(h, q);
        CHECK_EQ(rtm_halffit_free(h, q), 0);
    }
    rtm_stats st = rtm_halffit_stats(h);
    CHECK_EQ(st.peak_used_bytes, peak);
    CHECK_EQ(st.failed_allocs, 64);
    for (int i = 0; i < 64; i += 2)
        CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
    for (int i = 1; i < 64; i += 2)
        CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
    st = rtm_halffit_stats(h);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.free_bytes, s0.free_bytes);
    CHECK_EQ(st.largest_free, s0.largest_free);
    CHECK_EQ(st.peak_used_bytes, peak);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

/* One split per alloc, neighbour merges on free, and a class-r block
 * handed out whole to an order-r request. */
static void test_split_merge(void)
{
    /* an arena of exactly 64 units (and the one-unit sentinel) */
    size_t bytes = 15u + rtm_halffit_control_size() + 65u * U;
    test_region r;
    rtm_halffit *h = make(&r, bytes, 5);
    rtm_stats s0 = rtm_halffit_stats(h);
    CHECK_EQ(s0.largest_free, 64u * U - HDR);
    CHECK_EQ(s0.free_bytes, 64u * U - HDR);
    void *a = rtm_halffit_alloc(h, 0);
    rtm_stats s1 = rtm_halffit_stats(h);
    CHECK_EQ(s1.largest_free, 32u * U - HDR); /* 63 units: class 5 */
    CHECK_EQ(s1.free_bytes, 63u * U - HDR);   /* one split, one free block */
    void *b = rtm_halffit_alloc(h, 0);
    CHECK_EQ((size_t)((char *)b - (char *)a), U); /* the split's rest */
    void *c = rtm_halffit_alloc(h, 0);
    CHECK_EQ(rtm_halffit_free(h, a), 0); /* no merge: b is live */
    CHECK_EQ(rtm_halffit_free(h, c), 0); /* merges the rest on its right */
    CHECK_EQ(rtm_halffit_stats(h).free_bytes, 63u * U - 2u * HDR);
    CHECK_EQ(rtm_halffit_check(h), 0);
    CHECK_EQ(rtm_halffit_free(h, b), 0); /* merges both neighbours */
    CHECK_EQ(rtm_halffit_stats(h).largest_free, s0.largest_free);
    CHECK_EQ(rtm_halffit_stats(h).free_bytes, s0.free_bytes);
    CHECK_EQ(rtm_halffit_check(h), 0);
    /* the whole arena as one block, then nothing */
    void *all = rtm_halffit_alloc(h, 64u * U - HDR);
    CHECK(all != NULL);
    CHECK(rtm_halffit_alloc(h, 0) == NULL);
    CHECK_EQ(rtm_halffit_free(h, all), 0);
    region_free(&r);

    /* 63 units: class 5; an order-5 request (32 units) takes all 63, since
     * the rest (31 units) would be of a class below the request's */
    bytes = 15u + rtm_halffit_control_size() + 64u * U;
    h = make(&r, bytes, 0);
    CHECK_EQ(rtm_halffit_stats(h).largest_free, 32u * U - HDR);
    all = rtm_halffit_alloc(h, 32u * U - HDR);
    REQUIRE(all != NULL);
    CHECK_EQ(rtm_halffit_usable_size(h, all), 63u * U - HDR);
    CHECK_EQ(rtm_halffit_stats(h).free_bytes, 0);
    CHECK_EQ(rtm_halffit_stats(h).used_bytes, 63u * U - HDR);
    CHECK_EQ(rtm_halffit_check(h), 0);
    CHECK_EQ(rtm_halffit_free(h, all), 0);
    /* an order-4 request splits it: 16 units live, 47 free (class 5) */
    all = rtm_halffit_alloc(h, 16u * U - HDR);
    CHECK_EQ(rtm_halffit_usable_size(h, all), 16u * U - HDR);
    CHECK_EQ(rtm_halffit_stats(h).free_bytes, 47u * U - HDR);
    CHECK_EQ(rtm_halffit_free(h, all), 0);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

/* aligned_alloc: every power of two up to RTM_HALFFIT_MAX_ALIGN, at every
 * start residue, with usable size, free, realloc keeping the alignment,
 * double free through the aligned pointer, and the heap whole again. */
static void test_aligned_alloc(void)
{
    for (size_t m = 0; m < 16; m += 3) {
        test_region r;
        rtm_halffit *h = make(&r, 1u << 20, m);
        rtm_stats s0 = rtm_halffit_stats(h);
        void *p[20];
        size_t n = 0;
        for (size_t a = 1; a <= RTM_HALFFIT_MAX_ALIGN; a <<= 1) {
            size_t size = (a * 7u) % 300u;
            char *q = rtm_halffit_aligned_alloc(h, a, size);
            REQUIRE(q != NULL);
            CHECK_EQ((uintptr_t)q % (a > 16u ? a : 16u), 0);
            CHECK(rtm_halffit_usable_size(h, q) >= size);
            CHECK(rtm_halffit_usable_size(h, q) >= 1u);
            memset(q, 0x5A, rtm_halffit_usable_size(h, q));
            p[n++] = q;
            CHECK_EQ(rtm_halffit_check(h), 0);
        }
        /* realloc moving an aligned block keeps its alignment */
        char *g = rtm_halffit_realloc(h, p[12], 5000); /* aligned to 4096 */
        REQUIRE(g != NULL);
        CHECK_EQ((uintptr_t)g % 4096u, 0);
        CHECK_EQ((unsigned char)g[0], 0x5A);
        p[12] = g;
        {
            rtm_stats st = rtm_halffit_stats(h);
            size_t used = 0;
            for (size_t i = 0; i < n; i++)
                used += rtm_halffit_usable_size(h, p[i]);
            CHECK_EQ(st.used_bytes, used);
            CHECK_EQ(st.live_blocks, n);
            CHECK(st.peak_used_bytes >= used);
        }
        recorder_install();
        for (size_t i = 0; i < n; i++)
            CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
        recorder_reset();
        errno = 0;
        CHECK_EQ(rtm_halffit_free(h, p[10]), -1); /* double free via the shim */
        CHECK_ERRNO(EINVAL);
        CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
        rtm_set_error_handler(NULL, NULL);
        rtm_stats st = rtm_halffit_stats(h);
        CHECK_EQ(st.free_bytes, s0.free_bytes);
        CHECK_EQ(st.used_bytes, 0);
        CHECK_EQ(rtm_halffit_check(h), 0);
        region_free(&r);
    }
    test_region r;
    rtm_halffit *h = make(&r, 8192, 0);
    static const size_t bad[] = {0, 3, 24, 100, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK(rtm_halffit_aligned_alloc(h, bad[i], 8) == NULL);
        CHECK_ERRNO(EINVAL);
    }
    static const size_t above[] = {RTM_HALFFIT_MAX_ALIGN * 2u, (size_t)1 << 30,
                                   (SIZE_MAX >> 1) + 1u};
    for (size_t i = 0; i < sizeof above / sizeof above[0]; i++) {
        errno = 0;
        CHECK(rtm_halffit_aligned_alloc(h, above[i], 8) == NULL);
        CHECK_ERRNO(ENOTSUP);
    }
    errno = 0;
    CHECK(rtm_halffit_aligned_alloc(h, 4096, 8192) == NULL); /* too big here */
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_halffit_stats(h).failed_allocs, 1);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

static void test_realloc(void)
{
    test_region r;
    rtm_halffit *h = make(&r, 64 * 1024, 1);
    char *p = rtm_halffit_alloc(h, 100); /* block 128, usable 112 */
    REQUIRE(p != NULL);
    for (int i = 0; i < 100; i++)
        p[i] = (char)i;
    CHECK_PTR_EQ(rtm_halffit_realloc(h, p, 112), p); /* the block holds it */
    CHECK_PTR_EQ(rtm_halffit_realloc(h, p, 1), p);   /* shrink keeps the block */
    char *q = rtm_halffit_realloc(h, p, 1000);
    REQUIRE(q != NULL);
    CHECK(q != p);
    for (int i = 0; i < 100; i++)
        CHECK_EQ(q[i], (char)i);
    errno = 0;
    CHECK(rtm_halffit_realloc(h, q, 1u << 20) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(q[99], 99);
    errno = 0;
    CHECK(rtm_halffit_realloc(h, q, 0) == NULL);
    CHECK_ERRNO(0);
    CHECK_EQ(rtm_halffit_stats(h).live_blocks, 0);
    recorder_install();
    errno = 0;
    CHECK(rtm_halffit_realloc(h, q, 10) == NULL); /* q is free now */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    rtm_set_error_handler(NULL, NULL);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

static void test_misuse(void)
{
    test_region r;
    rtm_halffit *h = make(&r, 32 * 1024, 0);
    recorder_install();
    char *a = rtm_halffit_alloc(h, 50);
    char *b = rtm_halffit_alloc(h, 50);
    REQUIRE(a != NULL && b != NULL);
    CHECK_EQ(rtm_halffit_free(h, a), 0);
    rtm_stats before = rtm_halffit_stats(h);
    errno = 0;
    CHECK_EQ(rtm_halffit_free(h, a), -1); /* double free */
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->by_kind[RTM_ERR_DOUBLE_FREE], 1);
    CHECK_PTR_EQ(recorder()->last_ptr, a);
    CHECK_PTR_EQ(recorder()->last_heap, h);
    static char outside[64];
    recorder_reset();
    CHECK_EQ(rtm_halffit_free(h, outside + 8), -1); /* foreign */
    CHECK_EQ(rtm_halffit_free(h, b + 1), -1);       /* misaligned */
    CHECK_EQ(rtm_halffit_free(h, b + U), -1);       /* interior, user data as header */
    CHECK_EQ(rtm_halffit_free(h, (char *)h), -1);   /* the control structure */
    CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 4);
    rtm_stats after = rtm_halffit_stats(h);
    CHECK(memcmp(&before, &after, sizeof before) == 0); /* heap untouched */
    CHECK_EQ(rtm_halffit_check(h), 0);
    CHECK_EQ(rtm_halffit_free(h, b), 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&r);
}

/* Damages one thing at a time in a copy of a busy heap; check must say -1
 * (EFAULT) with a report, and never crash. */
typedef struct corrupt_case {
    const char *what;
    int target; /* 0: control word, 1: used header, 2: free header, 3: free link */
    size_t offset;
    uint32_t value;
} corrupt_case;

static void test_check_detects_corruption(void)
{
    static const corrupt_case cases[] = {
        {"kind", 0, 0, 0x12345678u},
        {"used units", 1, 0, 3u},
        {"used units huge", 1, 0, 200000u},
        {"used prev units", 1, 4, 5u},
        {"used state", 1, 8, 0u},
        {"used order", 1, 12, 9u},
        {"free units", 2, 0, 1u},
        /* xor-ed into the units */ {"free state to used", 2, 8, 0x55534544u},
        {"free prev link", 3, 0, 0x40u},
        {"free next link", 3, sizeof(ptrdiff_t), 0x7fffffffu},
        {"free next link low", 3, sizeof(ptrdiff_t), 1u},
    };
    size_t bytes = 64 * 1024;
    test_region src;
    rtm_halffit *h = make(&src, bytes, 0);
    void *p[40];
    for (int i = 0; i < 40; i++)
        p[i] = rtm_halffit_alloc(h, (size_t)(i * 13 % 300));
    for (int i = 0; i < 40; i += 3)
        CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
    REQUIRE(rtm_halffit_check(h) == 0);
    unsigned char *used_hdr = (unsigned char *)p[1] - HDR;
    /* p[0] is the first block and p[1] (its right neighbour) is live, so
     * p[0]'s block is a free block of its own */
    unsigned char *free_hdr = (unsigned char *)p[0] - HDR;
    uint32_t st;
    memcpy(&st, free_hdr + 8, 4);
    REQUIRE(st == 0x46524545u);
    recorder_install();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        test_region copy = region_malloc(bytes, 0);
        memcpy(copy.mem, src.mem, bytes);
        rtm_halffit *k = (rtm_halffit *)copy.mem;
        unsigned char *at = (unsigned char *)k;
        if (cases[c].target == 1)
            at += used_hdr - (unsigned char *)h;
        else if (cases[c].target >= 2)
            at += free_hdr - (unsigned char *)h + (cases[c].target == 3 ? (ptrdiff_t)HDR : 0);
        if (cases[c].target == 3) {
            ptrdiff_t v = (ptrdiff_t)cases[c].value;
            memcpy(at + cases[c].offset, &v, sizeof v);
        } else {
            uint32_t v = cases[c].value;
            if (cases[c].target == 2 && cases[c].offset == 0) {
                memcpy(&v, at, 4); /* the free block's units, off by one */
                v ^= cases[c].value;
            }
            memcpy(at + cases[c].offset, &v, 4);
        }
        recorder_reset();
        errno = 0;
        CHECK_MSG(rtm_halffit_check(k) == -1, "corruption not detected: %s", cases[c].what);
        CHECK_ERRNO(EFAULT);
        CHECK_EQ(recorder()->by_kind[RTM_ERR_CHECK_FAILED], 1);
        region_free(&copy);
    }
    /* random byte damage anywhere in the control or arena: never a crash */
    rng g = {7};
    size_t detected = 0;
    for (int t = 0; t < 2000; t++) {
        test_region copy = region_malloc(bytes, 0);
        memcpy(copy.mem, src.mem, bytes);
        size_t at = (size_t)(rng_next(&g) % 4096u);
        copy.mem[at] ^= (unsigned char)(1u + rng_next(&g) % 255u);
        detected += rtm_halffit_check((rtm_halffit *)copy.mem) != 0;
        region_free(&copy);
    }
    CHECK(detected > 0);
    rtm_set_error_handler(NULL, NULL);
    region_free(&src);
}

/* --- reset, walk, position independence --------------------------------- */

typedef struct walk_acc {
    size_t used, free, blocks, used_blocks;
} walk_acc;

static void walk_sum(void *ptr, size_t usable, int used, void *arg)
{
    walk_acc *w = arg;
    (void)ptr;
    w->blocks++;
    if (used) {
        w->used += usable;
        w->used_blocks++;
    } else {
        w->free += usable;
    }
}

static void test_walk_reset(void)
{
    test_region r;
    rtm_halffit *h = make(&r, 50000, 2);
    rtm_stats s0 = rtm_halffit_stats(h);
    for (int i = 0; i < 30; i++)
        (void)rtm_halffit_alloc(h, (size_t)i * 20u);
    walk_acc w = {0, 0, 0, 0};
    rtm_halffit_walk(h, walk_sum, &w);
    rtm_stats st = rtm_halffit_stats(h);
    CHECK_EQ(w.used, st.used_bytes);
    CHECK_EQ(w.free, st.free_bytes);
    CHECK_EQ(w.used_blocks, 30);
    rtm_halffit_reset(h);
    st = rtm_halffit_stats(h);
    CHECK(memcmp(&st, &s0, sizeof st) == 0);
    CHECK_EQ(rtm_halffit_check(h), 0);
    region_free(&r);
}

static void test_position_independent(void)
{
    size_t bytes = 40000;
    test_region a;
    rtm_halffit *h = make(&a, bytes, 0);
    char *p[20];
    for (int i = 0; i < 20; i++) {
        p[i] = rtm_halffit_alloc(h, 100);
        memset(p[i], i, 100);
    }
    for (int i = 0; i < 20; i += 2)
        CHECK_EQ(rtm_halffit_free(h, p[i]), 0);
    test_region b = region_malloc(bytes, 0);
    memcpy(b.mem, a.mem, bytes);
    memset(a.mem, 0xEE, bytes); /* the original is gone */
    rtm_halffit *g = (rtm_halffit *)b.mem;
    CHECK_EQ(rtm_halffit_check(g), 0);
    ptrdiff_t shift = (char *)b.mem - (char *)a.mem;
    for (int i = 1; i < 20; i += 2) {
        char *q = p[i] + shift;
        CHECK_EQ(q[50], (char)i);
        CHECK_EQ(rtm_halffit_free(g, q), 0);
    }
    void *x = rtm_halffit_alloc(g, 500);
    CHECK(x != NULL && (char *)x > (char *)b.mem && (char *)x < (char *)b.mem + bytes);
    CHECK_EQ(rtm_halffit_free(g, x), 0);
    CHECK_EQ(rtm_halffit_stats(g).live_blocks, 0);
    CHECK_EQ(rtm_halffit_check(g), 0);
    region_free(&a);
    region_free(&b);
}

/* --- the bound ---------------------------------------------------------- */

#define MAXLIVE 20000

typedef struct bound_run {
    rtm_halffit *h;
    unsigned char *region;
    size_t region_bytes;
    size_t M, n;
    void *ptr[MAXLIVE];
    size_t blk[MAXLIVE];
    unsigned char guard[MAXLIVE]; /* kept by seq_whole() */
    size_t count;
    size_t live;       /* rounded live bytes */
    size_t top_usable; /* usable size of a block of the largest order     */
    size_t needed;     /* most arena bytes ever not in a free block that
                          could serve the largest request (the rest is
                          what the bound left to spare)                   */
    size_t failures;
    size_t ops;
} bound_run;

/* Allocates `size` if the contract allows it (live + block <= M); returns
 * 1 when allocated, 0 when the contract forbids it, -1 on a refusal. */
static int bound_alloc(bound_run *b, size_t size)
{
    size_t blk = rtm_halffit_block_size(size);
    if (b->live + blk > b->M || b->count == MAXLIVE)
        return 0;
    void *p = rtm_halffit_alloc(b->h, size);
    b->ops++;
    if (p == NULL) {
        b->failures++;
        return -1;
    }
    b->ptr[b->count] = p;
    b->blk[b->count] = blk;
    b->guard[b->count] = 0;
    b->count++;
    b->live += blk;
    return 1;
}

/* Arena bytes in blocks the largest request cannot use (live blocks and
 * free blocks below its order): what the sequence has made unavailable. */
typedef struct measure {
    size_t top_usable, unavailable;
} measure;

static void count_unavailable(void *ptr, size_t usable, int used, void *arg)
{
    measure *m = arg;
    (void)ptr;
    if (used || usable < m->top_usable)
        m->unavailable += usable + HDR;
}

static void bound_measure(bound_run *b)
{
    measure m = {b->top_usable, 0};
    rtm_halffit_walk(b->h, count_unavailable, &m);
    if (m.unavailable > b->needed)
        b->needed = m.unavailable;
}

static void bound_free(bound_run *b, size_t i)
{
    CHECK_EQ(rtm_halffit_free(b->h, b->ptr[i]), 0);
    b->ops++;
    b->live -= b->blk[i];
    b->count--;
    b->ptr[i] = b->ptr[b->count];
    b->blk[i] = b->blk[b->count];
    b->guard[i] = b->guard[b->count];
}

static void bound_free_all(bound_run *b)
{
    while (b->count > 0)
        bound_free(b, b->count - 1u);
}

/* Frees every other live block in address order (the Robson move: keep
 * one small block in each hole so the holes cannot merge). */
static void free_every_other_by_address(bound_run *b)
{
    /* selection by address: sort indices (insertion sort, small counts) */
    for (size_t i = 1; i < b->count; i++) {
        void *p = b->ptr[i];
        size_t k = b->blk[i], j = i;
        unsigned char g = b->guard[i];
        for (; j > 0 && (uintptr_t)b->ptr[j - 1] > (uintptr_t)p; j--) {
            b->ptr[j] = b->ptr[j - 1];
            b->blk[j] = b->blk[j - 1];
            b->guard[j] = b->guard[j - 1];
        }
        b->ptr[j] = p;
        b->blk[j] = k;
        b->guard[j] = g;
    }
    size_t keep = 0;
    for (size_t i = 0; i < b->count; i++) {
        if (i % 2 == 0) {
            CHECK_EQ(rtm_halffit_free(b->h, b->ptr[i]), 0);
            b->ops++;
            b->live -= b->blk[i];
        } else {
            b->ptr[keep] = b->ptr[i];
            b->blk[keep] = b->blk[i];
            b->guard[keep] = b->guard[i];
            keep++;
        }
    }
    b->count = keep;
}

/* The request size whose block is 2^k units (the largest such). */
static size_t size_for_order(unsigned k) { return (U << k) - HDR; }

/* Robson-style: for each order from 0 up, fill all that M allows with
 * blocks of that order, then free every other one by address. */
static void seq_robson(bound_run *b, unsigned top)
{
    for (unsigned k = 0; k <= top; k++) {
        while (bound_alloc(b, size_for_order(k)) == 1) {
        }
        bound_measure(b);
        free_every_other_by_address(b);
        bound_measure(b);
    }
    bound_free_all(b);
}

/* The same, but requests of the smallest size of each order and freeing
 * all but the last of every four, from the top order down and up again. */
static void seq_sawtooth(bound_run *b, unsigned top)
{
    for (int round = 0; round < 2; round++) {
        for (unsigned i = 0; i <= 2u * top; i++) {
            unsigned k = i <= top ? i : 2u * top - i;
            size_t s = k == 0 ? 0 : size_for_order(k - 1u) + 1u;
            while (bound_alloc(b, s) == 1) {
            }
            bound_measure(b);
            for (size_t j = b->count; j-- > 0;)
                if (j % 4u != 3u)
                    bound_free(b, j);
        }
        bound_free_all(b);
    }
}

/* Aimed at the whole-block rule, from the top order down: runs of
 * [order k][orders k-1 .. 0][guard] as long as M allows, then everything
 * but the guards freed, which leaves free blocks of 2^(k+1) - 1 units
 * (class k) between live guards; order-k requests then take them whole,
 * each holding nearly twice the 2^k units it counts; every other block by
 * address is freed, and the next order down reuses what is left. */
static void seq_whole(bound_run *b, unsigned top)
{
    for (unsigned k = top; k >= 1; k--) {
        for (;;) {
            size_t before = b->count;
            int ok = bound_alloc(b, size_for_order(k)) == 1;
            for (unsigned j = k; ok && j-- > 0;)
                ok = bound_alloc(b, size_for_order(j)) == 1;
            ok = ok && bound_alloc(b, 0) == 1;
            if (!ok) {
                while (b->count > before)
                    bound_free(b, b->count - 1u);
                break;
            }
            b->guard[b->count - 1u] = 1;
        }
        bound_measure(b);
        for (size_t i = b->count; i-- > 0;)
            if (!b->guard[i])
                bound_free(b, i);
        while (bound_alloc(b, size_for_order(k)) == 1) {
        }
        bound_measure(b);
        free_every_other_by_address(b);
        bound_measure(b);
    }
    bound_free_all(b);
}

/* Random sizes up to n (log-uniform), live kept <= M. */
static void seq_random(bound_run *b, uint64_t seed, size_t steps)
{
    rng g = {seed};
    for (size_t t = 0; t < steps; t++) {
        unsigned bits = (unsigned)(rng_next(&g) % 64u);
        size_t s = (size_t)(rng_next(&g) % ((b->n >> (bits % 16u)) + 1u));
        if (rng_next(&g) % 3u != 0) {
            if (bound_alloc(b, s) == 0 && b->count > 0)
                bound_free(b, (size_t)(rng_next(&g) % b->count));
        } else if (b->count > 0) {
            bound_free(b, (size_t)(rng_next(&g) % b->count));
        }
        if (t % 512u == 0)
            CHECK_EQ(rtm_halffit_check(b->h), 0);
        if (t % 64u == 0)
            bound_measure(b);
    }
    bound_free_all(b);
}

static bound_run *bound_setup(test_region *r, size_t region_bytes, size_t M, size_t n)
{
    static bound_run run;
    memset(&run, 0, sizeof run);
    *r = region_malloc(region_bytes, 3);
    run.h = rtm_halffit_create(r->mem, r->bytes);
    REQUIRE(run.h != NULL);
    run.region = r->mem;
    run.region_bytes = region_bytes;
    run.M = M;
    run.n = n;
    run.top_usable = rtm_halffit_block_size(n) - HDR;
    return &run;
}

static void test_bound_never_fails(void)
{
    static const struct {
        size_t M, n;
    } pairs[] = {{4096, 64},      {16384, 1000},        {65536, 4096},   {100000, 100},
                 {262144, 16384}, {1u << 20, 1u << 16}, {600000, 300000}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        size_t M = pairs[i].M, n = pairs[i].n;
        size_t bytes = rtm_halffit_arena_size(M, n);
        REQUIRE(bytes != 0);
        unsigned top = 0;
        while ((U << top) < rtm_halffit_block_size(n))
            top++;
        size_t worst = 0, ops = 0, fails = 0;
        for (int seq = 0; seq < 6; seq++) {
            test_region r;
            bound_run *b = bound_setup(&r, bytes, M, n);
            if (seq == 0)
                seq_robson(b, top);
            else if (seq == 1)
                seq_sawtooth(b, top);
            else if (seq == 5)
                seq_whole(b, top);
            else
                seq_random(b, 1000u * i + (uint64_t)seq, 60000);
            CHECK_EQ(rtm_halffit_check(b->h), 0);
            CHECK_EQ(rtm_halffit_stats(b->h).failed_allocs, b->failures);
            CHECK_MSG(b->failures == 0, "M=%zu n=%zu seq=%d: %zu refusals", M, n, seq, b->failures);
            if (b->needed > worst)
                worst = b->needed;
            ops += b->ops;
            fails += b->failures;
            region_free(&r);
        }
        printf("  bound M=%zu n=%zu: region %zu B = %.2f M (levels %u), most arena made "
               "unusable for n: %zu B = %.2f M = %.0f%% of region, %zu ops, %zu refusals\n",
               M, n, bytes, (double)bytes / (double)M, top + 1u, worst, (double)worst / (double)M,
               100.0 * (double)worst / (double)bytes, ops, fails);
    }
}

/* A heap of a quarter of the bound can be made to fail by the Robson
 * sequence: the bound test is able to fail. */
static void test_smaller_heap_fails(void)
{
    size_t M = 65536, n = 4096;
    size_t full = rtm_halffit_arena_size(M, n);
    unsigned top = 0;
    while ((U << top) < rtm_halffit_block_size(n))
        top++;
    size_t fails[2];
    size_t bytes = full / 4u;
    for (int seq = 0; seq < 2; seq++) {
        test_region r;
        bound_run *b = bound_setup(&r, bytes, M, n);
        if (seq == 0)
            seq_robson(b, top);
        else
            seq_whole(b, top);
        fails[seq] = b->failures;
        CHECK_EQ(rtm_halffit_check(b->h), 0);
        region_free(&r);
    }
    printf("  smaller heap: %zu B (bound %zu B): %zu refusals (Robson), %zu (whole blocks)\n",
           bytes, full, fails[0], fails[1]);
    CHECK(fails[0] > 0); /* the whole-block sequence is reported, not required to fail */
}

/* The generic API: the "halffit" name, dispatch, and what a half-fit heap
 * refuses (a parameter, a second region, alignment above 8). */
static void test_generic_api(void)
{
    errno = 0;
    CHECK(rtm_min_region("halffit:64") == 0);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_min_region("halffit"), rtm_halffit_min_region());
    int listed = 0;
    for (const char *const *n = rtm_algorithms(); *n != NULL; n++)
        listed += strcmp(*n, "halffit") == 0;
    CHECK_EQ(listed, 1);

    size_t bytes = rtm_halffit_arena_size(16384, 1000);
    REQUIRE(bytes != 0);
    char *mem = malloc(bytes + 8u);
    REQUIRE(mem != NULL);
    errno = 0;
    CHECK(rtm_heap_create("halffit", mem + 3, rtm_min_region("halffit") - 1u) == NULL);
    CHECK_ERRNO(EINVAL);
    rtm_heap *h = rtm_heap_create("halffit", mem + 3, bytes);
    REQUIRE(h != NULL);
    CHECK(strcmp(rtm_heap_algorithm(h), "halffit") == 0);
    void *a = rtm_alloc(h, 1000);
    REQUIRE(a != NULL);
    CHECK(rtm_usable_size(h, a) >= 1000u);
    void *al = rtm_aligned_alloc(h, 64, 10);
    REQUIRE(al != NULL);
    CHECK_EQ((uintptr_t)al % 64u, 0);
    rtm_free(h, al);
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 48, 10) == NULL);
    CHECK_ERRNO(EINVAL);
    a = rtm_realloc(h, a, 10);
    CHECK(a != NULL);
    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(h, mem, 4096), -1);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 1u);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_free(h, a);
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
    RUN_TEST(test_sizes_and_bad_inputs);
    RUN_TEST(test_alignment_and_usable);
    RUN_TEST(test_stats_exact);
    RUN_TEST(test_split_merge);
    RUN_TEST(test_aligned_alloc);
    RUN_TEST(test_realloc);
    RUN_TEST(test_misuse);
    RUN_TEST(test_check_detects_corruption);
    RUN_TEST(test_walk_reset);
    RUN_TEST(test_position_independent);
    RUN_TEST(test_bound_never_fails);
    RUN_TEST(test_smaller_heap_fails);
    RUN_TEST(test_generic_api);
    return check_summary();
}
