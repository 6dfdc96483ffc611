// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios_rtm.c -- the adversarial heap states of rtmem's other
 * algorithms (pool, buddy, halffit, slab, heapmem, xvmalloc), measured through the
 * generic rtm_alloc / rtm_free a user calls. TLSF's are in scenarios.c.
 *
 * Why these states: each algorithm's bound names its own worst path, so the
 * states are built to walk it to the end:
 *   - pool: a list pop or a watermark bump, a push, one bitmap bit; the
 *     states only show that nothing varies (fresh, reused, full, misuse);
 *   - buddy and halffit: one page / unit split from a single free block of
 *     2^j pages / units (j halvings) and freed back (j merges), for every j
 *     up to a 1 GiB heap, so the counts show the cost per level as well as
 *     the maximum;
 *   - slab: a slab's whole life, where the worst paths are: a new slab from
 *     a buddy whose only free block is the top one (the buddy's split chain
 *     inside a slab alloc), the last free slot (slab moves to the full
 *     list), the last object of a slab freed while the class already caches
 *     an empty slab (the page goes back to the buddy and merges all the way
 *     up), and the cached empty slab reused; plus large blocks;
 *   - heapmem: a bucket page taken from the one huge range (split, bit scan
 *     to a higher class), the last slot of a page, the last slot freed so
 *     that the page goes back to the ranges and coalesces with free ranges
 *     on both sides; page ranges split, exact, coalescing none / left /
 *     right / both; each with empty range lists and with a free range of
 *     every length class on the lists ("populated");
 *   - xvmalloc: pages taken fresh or from the empty-page stack; the good
 *     fit that misses its own list and the rest of its first level, takes
 *     the second block of a list one level up and files the rest behind a
 *     larger head; frees merging out of list middles or emptying lists and
 *     bitmap words, or emptying the page;
 *   - every algorithm: failing allocations and detected double frees.
 * Every case starts from a fresh heap over the child's page-aligned region,
 * and checks the layout it relies on (neighbouring blocks, free byte counts)
 * instead of assuming it. Variants pack (case, parameter) as case | p << 8.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "child.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)

/* The page sizes of the specs in wcet_allocators[] (report.c). */
#define BUDDY_PAGE   4096u
#define SLAB_PAGE    4096u
#define HM_PAGE      512u
#define POOL_BLOCK   4096u
#define TOP_LOG2     30u /* the adversarial heaps reach 1 GiB */
#define HF_UNIT      32u /* RTM_HALFFIT_MIN_BLOCK on 64-bit   */
#define V(c, p)      ((unsigned)(c) | (unsigned)(p) << 8)
#define V_CASE(v)    ((v)&0xffu)
#define V_PARAM(v)   ((v) >> 8)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void *m_alloc(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n)
{
    return wcet_m_alloc(w, (unsigned)sc, v, n);
}

static int m_free(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void *p)
{
    return wcet_m_free(w, (unsigned)sc, v, n, p);
}

/* Measured alloc that must succeed / must fail with ENOMEM. */
static int must_alloc(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void **out)
{
    *out = m_alloc(w, sc, v, n);
    REQUIRE(*out != NULL, "request of %zu bytes refused (case %u)", n, V_CASE(v));
    return 0;
}

static int must_fail(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n)
{
    errno = 0;
    void *p = m_alloc(w, sc, v, n);
    REQUIRE(p == NULL && errno == ENOMEM, "request of %zu bytes did not fail with ENOMEM", n);
    return 0;
}

static int must_free(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void *p)
{
    REQUIRE(m_free(w, sc, v, n, p) == 0, "free of a live %zu-byte block rejected", n);
    return 0;
}

/* The second free of p is measured and must be rejected. */
static int double_free(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void *p)
{
    wcet_raw_free(w, p);
    REQUIRE(m_free(w, sc, v, n, p) == -1, "double free of a %zu-byte block not detected", n);
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed after a double free");
    return 0;
}

/* Allocates blocks of n bytes until the heap refuses. */
static void exhaust(wcet_heap *w, size_t n)
{
    while (wcet_raw_alloc(w, n) != NULL) {
    }
}

/* --- pool ----------------------------------------------------------------- */

enum { POOL_FRESH, POOL_REUSE, POOL_FULL, POOL_TOO_BIG, POOL_FREE, POOL_DOUBLE, POOL_INTERIOR };
static const char *const pool_cases[] = {"block never used (watermark bump)",
                                         "reused block (LIFO pop)",
                                         "pool full",
                                         "request above the block size",
                                         "free (push)",
                                         "double free",
                                         "pointer inside a block"};

static int pool_ops(wcet_heap *w)
{
    void *p, *q;
    TRY(wcet_heap_new(w, 0, 64 * KIB));
    TRY(must_alloc(w, SC_POOL_OPS, POOL_FRESH, 0, &p));
    TRY(must_alloc(w, SC_POOL_OPS, POOL_FRESH, POOL_BLOCK, &q));
    TRY(must_free(w, SC_POOL_OPS, POOL_FREE, POOL_BLOCK, p));
    TRY(must_alloc(w, SC_POOL_OPS, POOL_REUSE, 100, &p));
    TRY(must_fail(w, SC_POOL_OPS, POOL_TOO_BIG, POOL_BLOCK + 1));
    exhaust(w, POOL_BLOCK);
    TRY(must_fail(w, SC_POOL_OPS, POOL_FULL, 1));
    REQUIRE(m_free(w, SC_POOL_OPS, POOL_INTERIOR, 8, (char *)q + 8) == -1,
            "interior pointer not rejected");
    return double_free(w, SC_POOL_OPS, POOL_DOUBLE, POOL_BLOCK, q);
}

/* --- buddy ---------------------------------------------------------------- */

static unsigned top_order(size_t page) { return TOP_LOG2 - (unsigned)__builtin_ctzl(page); }

enum { CHAIN_SPLIT, CHAIN_MERGE, CHAIN_WHOLE, CHAIN_WHOLE_FREE };

/* Heap whose only free block is 2^j pages; the smallest block cut from it
 * and freed again, then the whole block. */
static int buddy_chain(wcet_heap *w, const wcet_config *cfg)
{
    unsigned top = top_order(BUDDY_PAGE);
    for (unsigned j = 0; j <= top; j += cfg->quick && j + 4 < top ? 4u : 1u) {
        size_t block = (size_t)BUDDY_PAGE << j;
        void *p;
        TRY(wcet_heap_with_free(w, block));
        TRY(must_alloc(w, SC_BUDDY_CHAIN, V(CHAIN_SPLIT, j), 1, &p));
        TRY(must_free(w, SC_BUDDY_CHAIN, V(CHAIN_MERGE, j), 1, p));
        TRY(must_alloc(w, SC_BUDDY_CHAIN, V(CHAIN_WHOLE, j), block, &p));
        TRY(must_free(w, SC_BUDDY_CHAIN, V(CHAIN_WHOLE_FREE, j), block, p));
        REQUIRE(wcet_raw_check(w) == 0, "buddy check failed");
    }
    return 0;
}

/* One free block of 2^top pages; a request of every order, each freed. */
static int buddy_orders(wcet_heap *w)
{
    unsigned top = top_order(BUDDY_PAGE);
    TRY(wcet_heap_with_free(w, (size_t)BUDDY_PAGE << top));
    for (unsigned k = 0; k <= top; k++) {
        size_t n = ((size_t)BUDDY_PAGE << k) - (k ? BUDDY_PAGE / 2 : 0);
        void *p;
        TRY(must_alloc(w, SC_BUDDY_ORDERS, V(0, k), n, &p));
        TRY(must_free(w, SC_BUDDY_ORDERS, V(1, k), n, p));
    }
    return 0;
}

enum { FAIL_FULL, FAIL_TOO_BIG, FAIL_SIZE_MAX, FAIL_DOUBLE, FAIL_INTERIOR, FAIL_NO_ORDER };
static const char *const fail_cases[] = {
    "heap full",   "request above the largest block", "request SIZE_MAX",
    "double free", "pointer inside a block",          "no free block of the order or above"};

static int buddy_fail(wcet_heap *w)
{
    void *p, *q;
    TRY(wcet_heap_with_free(w, (size_t)BUDDY_PAGE << 10));
    TRY(must_fail(w, SC_BUDDY_FAIL, FAIL_TOO_BIG, ((size_t)BUDDY_PAGE << 10) + 1));
    TRY(must_fail(w, SC_BUDDY_FAIL, FAIL_SIZE_MAX, SIZE_MAX));
    REQUIRE((p = wcet_raw_alloc(w, BUDDY_PAGE)) != NULL, "no page");
    TRY(must_fail(w, SC_BUDDY_FAIL, FAIL_NO_ORDER, (size_t)BUDDY_PAGE << 9 << 1));
    REQUIRE((q = wcet_raw_alloc(w, 2 * BUDDY_PAGE)) != NULL, "no two pages");
    REQUIRE(m_free(w, SC_BUDDY_FAIL, FAIL_INTERIOR, BUDDY_PAGE, (char *)q + BUDDY_PAGE) == -1,
            "interior pointer not rejected");
    exhaust(w, BUDDY_PAGE);
    TRY(must_fail(w, SC_BUDDY_FAIL, FAIL_FULL, 1));
    return double_free(w, SC_BUDDY_FAIL, FAIL_DOUBLE, BUDDY_PAGE, p);
}

/* --- halffit -------------------------------------------------------------- */

/* Half-fit (one split per alloc, at most two neighbour merges per free):
 * per class j, the smallest block cut from a free block of 2^j units (the
 * deepest split) and freed back (merging with the rest), the whole block;
 * a class-j block of 2^(j+1) - 1 units handed out whole to an order-j
 * request; and frees merging with none, the left, the right or both
 * neighbours, the neighbours alone in their lists or in list middles
 * (both, or one of each). */
enum {
    HF_WHOLE_ODD = 4,
    HF_WHOLE_ODD_FREE,
    HF_M_NONE,
    HF_M_LEFT,
    HF_M_RIGHT,
    HF_M_BOTH_ALONE,
    HF_M_BOTH_MIDDLE,
    HF_M_RIGHT_ALONE_LEFT_MIDDLE,
    HF_M_LEFT_ALONE_RIGHT_MIDDLE
};
static const char *const hf_merge_cases[] = {
    "free, both neighbours used (pushed on an empty list)",
    "free merging the left neighbour",
    "free merging the right neighbour",
    "free merging both neighbours, each alone in its list",
    "free merging both neighbours, each in the middle of its list",
    "free merging both neighbours, the right alone in its list, the left in a list's middle",
    "free merging both neighbours, the left alone in its list, the right in a list's middle"};

static void describe_chain(char *buf, size_t len, const char *unit, unsigned v);
static const char *pick(const char *const *names, size_t n, unsigned i);

static size_t hf_usable(size_t units) { return units * HF_UNIT - RTM_HALFFIT_HEADER_BYTES; }

/* Consecutive raw allocations of `usable` bytes must be address neighbours. */
static int hf_row(wcet_heap *w, size_t usable, void **out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = wcet_raw_alloc(w, usable);
        REQUIRE(out[i] != NULL, "halffit: no block of %zu bytes", usable);
        if (i > 0)
            REQUIRE((char *)out[i] - (char *)out[i - 1] ==
                        (ptrdiff_t)(usable + RTM_HALFFIT_HEADER_BYTES),
                    "halffit: blocks are not neighbours");
    }
    return 0;
}

static int halffit_merges(wcet_heap *w, unsigned r)
{
    size_t u = (size_t)1 << r, use = hf_usable(u), use2 = hf_usable(2 * u);
    void *b[12], *p;
    /* none, then both in list middles: [P0 A B C P1 D P2 E P3 F P4 G(2u) P5] */
    TRY(wcet_heap_with_free(w, hf_usable(64 * u)));
    TRY(hf_row(w, use, b, 11));
    REQUIRE((b[11] = wcet_raw_alloc(w, use2)) != NULL, "halffit: no block");
    REQUIRE((p = wcet_raw_alloc(w, use)) != NULL, "halffit: no block");
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_NONE, r), use, b[5]));
    wcet_raw_free(w, b[7]);
    wcet_raw_free(w, b[11]);
    wcet_raw_free(w, b[1]);
    wcet_raw_free(w, b[3]);
    wcet_raw_free(w, b[9]); /* list r: b9 b3 b1 b7 b5 */
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_BOTH_MIDDLE, r), use, b[2]));
    REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    /* both alone: [P0 A(u) B(u) C(2u) P1] */
    TRY(wcet_heap_with_free(w, hf_usable(64 * u)));
    TRY(hf_row(w, use, b, 3));
    REQUIRE((b[3] = wcet_raw_alloc(w, use2)) != NULL, "halffit: no block");
    REQUIRE((char *)b[3] - (char *)b[2] == (ptrdiff_t)(u * HF_UNIT), "halffit: not neighbours");
    REQUIRE((b[4] = wcet_raw_alloc(w, use)) != NULL, "halffit: no block");
    wcet_raw_free(w, b[1]);
    wcet_raw_free(w, b[3]);
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_BOTH_ALONE, r), use, b[2]));
    REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    /* right alone, left in a middle: [P0 x1 P1 x2 P2 x3 L F R(2u) P3] */
    TRY(wcet_heap_with_free(w, hf_usable(64 * u)));
    TRY(hf_row(w, use, b, 8));
    REQUIRE((b[8] = wcet_raw_alloc(w, use2)) != NULL, "halffit: no block");
    REQUIRE((char *)b[8] - (char *)b[7] == (ptrdiff_t)(u * HF_UNIT), "halffit: not neighbours");
    REQUIRE((b[9] = wcet_raw_alloc(w, use)) != NULL, "halffit: no block");
    wcet_raw_free(w, b[1]);
    wcet_raw_free(w, b[6]);
    wcet_raw_free(w, b[3]); /* list r: b3 b6 b1 */
    wcet_raw_free(w, b[8]);
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_RIGHT_ALONE_LEFT_MIDDLE, r), use, b[7]));
    REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    /* left alone, right in a middle: [P0 L F R(2u) P1 Z1(2u) P2 Z2(2u) P3] */
    TRY(wcet_heap_with_free(w, hf_usable(64 * u)));
    TRY(hf_row(w, use, b, 3));
    REQUIRE((b[3] = wcet_raw_alloc(w, use2)) != NULL, "halffit: no block");
    REQUIRE((char *)b[3] - (char *)b[2] == (ptrdiff_t)(u * HF_UNIT), "halffit: not neighbours");
    for (int i = 4; i < 10; i++)
        REQUIRE((b[i] = wcet_raw_alloc(w, i % 2 == 0 ? use : use2)) != NULL, "halffit: no block");
    wcet_raw_free(w, b[5]);
    wcet_raw_free(w, b[3]);
    wcet_raw_free(w, b[7]); /* list r + 1: b7 b3 b5 */
    wcet_raw_free(w, b[1]);
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_LEFT_ALONE_RIGHT_MIDDLE, r), use, b[2]));
    REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    /* left and right: [P0 A B P1 C D P2] */
    TRY(wcet_heap_with_free(w, hf_usable(64 * u)));
    TRY(hf_row(w, use, b, 7));
    wcet_raw_free(w, b[1]);
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_LEFT, r), use, b[2]));
    wcet_raw_free(w, b[5]);
    TRY(must_free(w, SC_HF_CHAIN, V(HF_M_RIGHT, r), use, b[4]));
    REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    return 0;
}

static int halffit_chain(wcet_heap *w, const wcet_config *cfg)
{
    unsigned top = TOP_LOG2 - 5u;
    for (unsigned j = 0; j <= top; j += cfg->quick && j + 4 < top ? 4u : 1u) {
        size_t usable = hf_usable((size_t)1 << j);
        void *p;
        TRY(wcet_heap_with_free(w, usable));
        REQUIRE(wcet_raw_stats(w).largest_free == usable, "halffit: not one block of 2^%u", j);
        TRY(must_alloc(w, SC_HF_CHAIN, V(CHAIN_SPLIT, j), 0, &p));
        TRY(must_free(w, SC_HF_CHAIN, V(CHAIN_MERGE, j), 0, p));
        TRY(must_alloc(w, SC_HF_CHAIN, V(CHAIN_WHOLE, j), usable, &p));
        TRY(must_free(w, SC_HF_CHAIN, V(CHAIN_WHOLE_FREE, j), usable, p));
        REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
        if (j == 0 || j >= top)
            continue;
        /* a class-j block of 2^(j+1) - 1 units: an order-j request takes it whole */
        size_t odd = hf_usable(((size_t)2 << j) - 1u);
        TRY(wcet_heap_with_free(w, odd));
        REQUIRE(wcet_raw_stats(w).largest_free == usable, "halffit: not one class-%u block", j);
        TRY(must_alloc(w, SC_HF_CHAIN, V(HF_WHOLE_ODD, j), usable, &p));
        REQUIRE(wcet_raw_stats(w).free_bytes == 0, "halffit: class-%u block not taken whole", j);
        TRY(must_free(w, SC_HF_CHAIN, V(HF_WHOLE_ODD_FREE, j), usable, p));
        REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    }
    static const unsigned merge_orders[] = {0, 5, 12, 20};
    for (size_t i = 0; i < ARRAY_LEN(merge_orders); i++)
        TRY(halffit_merges(w, merge_orders[i]));
    return 0;
}

static void describe_halffit(char *buf, size_t len, unsigned v)
{
    unsigned c = V_CASE(v), j = V_PARAM(v);
    if (c < HF_WHOLE_ODD)
        describe_chain(buf, len, "units of 32 bytes", v);
    else if (c == HF_WHOLE_ODD)
        snprintf(buf, len, "the only free block has 2^%u - 1 units (class %u): taken whole", j + 1u,
                 j);
    else if (c == HF_WHOLE_ODD_FREE)
        snprintf(buf, len, "a whole class-%u block of 2^%u - 1 units freed (no merge)", j, j + 1u);
    else
        snprintf(buf, len, "blocks of 2^%u units: %s", j,
                 pick(hf_merge_cases, ARRAY_LEN(hf_merge_cases), c - HF_M_NONE));
}

static int halffit_fail(wcet_heap *w)
{
    void *p, *q;
    size_t usable = hf_usable((size_t)1 << 12);
    TRY(wcet_heap_with_free(w, usable));
    TRY(must_fail(w, SC_HF_FAIL, FAIL_TOO_BIG, usable + 1));
    TRY(must_fail(w, SC_HF_FAIL, FAIL_SIZE_MAX, SIZE_MAX));
    REQUIRE((p = wcet_raw_alloc(w, 0)) != NULL, "no block");
    TRY(must_fail(w, SC_HF_FAIL, FAIL_NO_ORDER, usable / 2 + 8));
    REQUIRE((q = wcet_raw_alloc(w, 100)) != NULL, "no block");
    REQUIRE(m_free(w, SC_HF_FAIL, FAIL_INTERIOR, 100, (char *)q + 8) == -1,
            "interior pointer not rejected");
    exhaust(w, 0);
    TRY(must_fail(w, SC_HF_FAIL, FAIL_FULL, 0));
    return double_free(w, SC_HF_FAIL, FAIL_DOUBLE, 0, p);
}

/* --- slab ----------------------------------------------------------------- */

enum {
    SLAB_NEW_PAGE,   /* first object: a new slab from a free 1-page block  */
    SLAB_LAST_SLOT,  /* the slab's last free slot: partial -> full         */
    SLAB_NEW_SPLIT,  /* a new slab split from the 2^j-page top block       */
    SLAB_FREE_FULL,  /* free in a full slab: full -> partial               */
    SLAB_FREE_MID,   /* free in a partial slab                             */
    SLAB_TO_CACHE,   /* last object freed: the slab becomes the cached empty */
    SLAB_TO_BUDDY,   /* last object freed, an empty slab already cached:   */
                     /* the page goes back to the buddy, merging j times   */
    SLAB_FROM_CACHE, /* no partial slab: the cached empty slab is reused   */
    SLAB_POP,        /* an object from a partial slab's free list          */
    SLAB_CASES
};
static const char *const slab_cases[SLAB_CASES] = {
    "first object: new slab from a free 1-page block",
    "last free slot: slab moves to the full list",
    "new slab split from the only large free block, 2^%u pages (%u splits)",
    "free in a full slab: back to the partial list",
    "free in a partial slab",
    "last object freed: slab kept as the class's cached empty slab",
    "last object freed, an empty slab already cached: page back to the buddy, 2^%u (%u merges)",
    "no partial slab: the cached empty slab reused",
    "object from a partial slab's free list"};

static const size_t slab_classes[] = {8, 64, 512};

/* The buddy inside has 2^top + 1 free pages: one page, then the top block.
 * E (the first slab) takes the single page; filling it makes the next
 * object's slab S split from the top block. Freeing E entirely caches it;
 * then freeing S's only object returns S's page, which merges back into the
 * top block. */
static int slab_life(wcet_heap *w, size_t c)
{
    static void *obj[SLAB_PAGE / 8];
    size_t cap = SLAB_PAGE / c;
    unsigned top = top_order(SLAB_PAGE);
    void *s;
    TRY(wcet_heap_with_free(w, ((size_t)SLAB_PAGE << top) + SLAB_PAGE));
    TRY(must_alloc(w, SC_SLAB_LIFE, V(SLAB_NEW_PAGE, c), c, &obj[0]));
    for (size_t i = 1; i + 1 < cap; i++)
        REQUIRE((obj[i] = wcet_raw_alloc(w, c)) != NULL, "slab: cannot fill");
    TRY(must_alloc(w, SC_SLAB_LIFE, V(SLAB_LAST_SLOT, c), c, &obj[cap - 1]));
    TRY(must_alloc(w, SC_SLAB_LIFE, V(SLAB_NEW_SPLIT, c), c, &s));
    REQUIRE(wcet_raw_stats(w).largest_free == (size_t)SLAB_PAGE << (top - 1),
            "slab: the new slab did not split the top block");
    TRY(must_free(w, SC_SLAB_LIFE, V(SLAB_FREE_FULL, c), c, obj[0]));
    TRY(must_alloc(w, SC_SLAB_LIFE, V(SLAB_POP, c), c, &obj[0]));
    for (size_t i = 0; i + 2 < cap; i++)
        wcet_raw_free(w, obj[i]);
    if (cap > 1)
        TRY(must_free(w, SC_SLAB_LIFE, V(SLAB_FREE_MID, c), c, obj[cap - 2]));
    TRY(must_free(w, SC_SLAB_LIFE, V(SLAB_TO_CACHE, c), c, obj[cap - 1]));
    TRY(must_free(w, SC_SLAB_LIFE, V(SLAB_TO_BUDDY, c), c, s));
    REQUIRE(wcet_raw_stats(w).largest_free == (size_t)SLAB_PAGE << top,
            "slab: the released page did not merge back into the top block");
    TRY(must_alloc(w, SC_SLAB_LIFE, V(SLAB_FROM_CACHE, c), c, &s));
    REQUIRE(wcet_raw_check(w) == 0, "slab check failed");
    return 0;
}

static int slab_lives(wcet_heap *w, const wcet_config *cfg)
{
    for (size_t i = 0; i < ARRAY_LEN(slab_classes); i++)
        if (!cfg->quick || i != 1)
            TRY(slab_life(w, slab_classes[i]));
    return 0;
}

/* Large blocks (above the largest class, page / 8) straight from the
 * buddy: one page split from a 2^j-page block and merged back. */
static int slab_large(wcet_heap *w, const wcet_config *cfg)
{
    unsigned top = top_order(SLAB_PAGE);
    for (unsigned j = 0; j <= top; j += cfg->quick && j + 4 < top ? 4u : 1u) {
        size_t block = (size_t)SLAB_PAGE << j;
        void *p;
        TRY(wcet_heap_with_free(w, block));
        TRY(must_alloc(w, SC_SLAB_LARGE, V(CHAIN_SPLIT, j), SLAB_PAGE / 8 + 1, &p));
        TRY(must_free(w, SC_SLAB_LARGE, V(CHAIN_MERGE, j), SLAB_PAGE / 8 + 1, p));
        TRY(must_alloc(w, SC_SLAB_LARGE, V(CHAIN_WHOLE, j), block, &p));
        TRY(must_free(w, SC_SLAB_LARGE, V(CHAIN_WHOLE_FREE, j), block, p));
    }
    return 0;
}

static int slab_fail(wcet_heap *w)
{
    void *p, *q;
    TRY(wcet_heap_with_free(w, (size_t)SLAB_PAGE << 4));
    TRY(must_fail(w, SC_SLAB_FAIL, FAIL_TOO_BIG, ((size_t)SLAB_PAGE << 4) + 1));
    TRY(must_fail(w, SC_SLAB_FAIL, FAIL_SIZE_MAX, SIZE_MAX));
    REQUIRE((p = wcet_raw_alloc(w, 8)) != NULL && (q = wcet_raw_alloc(w, 64)) != NULL,
            "slab: no objects");
    REQUIRE(m_free(w, SC_SLAB_FAIL, FAIL_INTERIOR, 64, (char *)q + 8) == -1,
            "interior pointer not rejected");
    exhaust(w, SLAB_PAGE);
    TRY(must_fail(w, SC_SLAB_FAIL, FAIL_FULL, 128)); /* a new slab needed, no page */
    return double_free(w, SC_SLAB_FAIL, FAIL_DOUBLE, 8, p);
}

/* --- heapmem -------------------------------------------------------------- */

#define HM_HEAP (4 * MIB)

/* Fills the range lists: a free range of every length class (1, 2, 4, ...
 * 64 pages and one of 3), each followed by a used page so nothing merges.
 * Returns 0 or 1. */
static int hm_populate(wcet_heap *w)
{
    static const size_t lens[] = {1, 2, 3, 4, 8, 16, 32, 64};
    void *r[ARRAY_LEN(lens)];
    for (size_t i = 0; i < ARRAY_LEN(lens); i++) {
        r[i] = wcet_raw_alloc(w, lens[i] * HM_PAGE);
        REQUIRE(r[i] != NULL && wcet_raw_alloc(w, HM_PAGE) != NULL, "heapmem: no room");
    }
    for (size_t i = 0; i < ARRAY_LEN(lens); i++)
        wcet_raw_free(w, r[i]);
    return 0;
}

/* A fresh heap; populated: the range lists filled at once (cases that need
 * neighbouring blocks place them first and populate afterwards, since the
 * free ranges would otherwise serve their allocations). */
static int hm_new(wcet_heap *w, int populated)
{
    TRY(wcet_heap_new(w, 0, HM_HEAP));
    return populated ? hm_populate(w) : 0;
}

static int hm_adjacent(const void *p, size_t pages, const void *q)
{
    return (const char *)q == (const char *)p + pages * HM_PAGE;
}

enum {
    HMB_NEW_PAGE,  /* no partial page: a page split from a free range      */
    HMB_PARTIAL,   /* a slot of a partial page                             */
    HMB_LAST_SLOT, /* the page's last free slot: off the partial list      */
    HMB_FREE_FULL, /* free in a full page: back on the partial list        */
    HMB_FREE_MID,  /* free in a partial page                               */
    HMB_RELEASE,   /* last slot freed: page back to the ranges, merged with */
                   /* the free range on its right                          */
    HMB_RELEASE2,  /* ... between two free ranges: coalesced on both sides */
    HMB_CASES
};
static const char *const hmb_cases[HMB_CASES] = {
    "no partial page: a page split from a free range",
    "slot of a partial page",
    "last free slot: page off the partial list",
    "free in a full page: back on the partial list",
    "free in a partial page",
    "last slot freed: page back to the ranges, merged with the right one",
    "last slot freed: page back between two free ranges, coalesced both sides"};

static const size_t hm_buckets[] = {16, 32, 64, 128, 256};

/* A bucket page's life, class c, on a fresh heap (populated lists or not). */
static int hm_bucket_life(wcet_heap *w, size_t c, int pop)
{
    static void *obj[HM_PAGE / 16];
    size_t cap = HM_PAGE / c;
    unsigned v = (unsigned)(c | (size_t)pop << 12);
    TRY(hm_new(w, pop));
    TRY(must_alloc(w, SC_HM_BUCKET, V(HMB_NEW_PAGE, v), c, &obj[0]));
    for (size_t i = 1; i + 1 < cap; i++) {
        if (i == 1)
            TRY(must_alloc(w, SC_HM_BUCKET, V(HMB_PARTIAL, v), c, &obj[i]));
        else
            REQUIRE((obj[i] = wcet_raw_alloc(w, c)) != NULL, "heapmem: cannot fill");
    }
    TRY(must_alloc(w, SC_HM_BUCKET, V(HMB_LAST_SLOT, v), c, &obj[cap - 1]));
    TRY(must_free(w, SC_HM_BUCKET, V(HMB_FREE_FULL, v), c, obj[0]));
    for (size_t i = 1; i + 2 < cap; i++)
        wcet_raw_free(w, obj[i]);
    if (cap > 2)
        TRY(must_free(w, SC_HM_BUCKET, V(HMB_FREE_MID, v), c, obj[cap - 2]));
    TRY(must_free(w, SC_HM_BUCKET, V(HMB_RELEASE, v), c, obj[cap - 1]));
    REQUIRE(wcet_raw_check(w) == 0, "heapmem check failed");
    return 0;
}

/* [L: 2 pages][bucket page][R: 2 pages][fence]: L and R freed, then the
 * page's only object. */
static int hm_release_both(wcet_heap *w, size_t c, int pop)
{
    unsigned v = (unsigned)(c | (size_t)pop << 12);
    TRY(hm_new(w, 0));
    void *l = wcet_raw_alloc(w, 2 * HM_PAGE), *b = wcet_raw_alloc(w, c);
    void *r = wcet_raw_alloc(w, 2 * HM_PAGE), *f = wcet_raw_alloc(w, HM_PAGE);
    REQUIRE(l && b && r && f && hm_adjacent(l, 2, b) && hm_adjacent(b, 1, r) &&
                hm_adjacent(r, 2, f),
            "heapmem: cannot place a bucket page between two ranges");
    if (pop)
        TRY(hm_populate(w));
    wcet_raw_free(w, l);
    wcet_raw_free(w, r);
    TRY(must_free(w, SC_HM_BUCKET, V(HMB_RELEASE2, v), c, b));
    return 0;
}

static int hm_buckets_all(wcet_heap *w, const wcet_config *cfg)
{
    for (int pop = 0; pop < 2; pop++)
        for (size_t i = 0; i < ARRAY_LEN(hm_buckets); i++) {
            if (cfg->quick && (i == 1 || i == 3))
                continue;
            TRY(hm_bucket_life(w, hm_buckets[i], pop));
            TRY(hm_release_both(w, hm_buckets[i], pop));
        }
    return 0;
}

enum { HMR_SPLIT, HMR_EXACT, HMR_FREE_NONE, HMR_FREE_LEFT, HMR_FREE_RIGHT, HMR_FREE_BOTH };
static const char *const hmr_cases[] = {"range taken from the free ranges (split)",
                                        "range = a free range of exactly its length",
                                        "free, both neighbours used",
                                        "free, left neighbour free",
                                        "free, right neighbour free",
                                        "free between two free ranges"};

static const size_t hm_lens[] = {1, 2, 3, 8, 100};

/* [A: 2][B: n][C: 3][fence]: neighbours freed as the case says, then B. */
static int hm_range_free(wcet_heap *w, size_t n, int pop, unsigned kind)
{
    unsigned v = (unsigned)(n | (size_t)pop << 12);
    TRY(hm_new(w, 0));
    void *a = wcet_raw_alloc(w, 2 * HM_PAGE), *b = wcet_raw_alloc(w, n * HM_PAGE);
    void *c = wcet_raw_alloc(w, 3 * HM_PAGE), *f = wcet_raw_alloc(w, HM_PAGE);
    REQUIRE(a && b && c && f && hm_adjacent(a, 2, b) && hm_adjacent(b, n, c) &&
                hm_adjacent(c, 3, f),
            "heapmem: cannot place three neighbouring ranges");
    if (pop)
        TRY(hm_populate(w));
    if (kind == HMR_FREE_LEFT || kind == HMR_FREE_BOTH)
        wcet_raw_free(w, a);
    if (kind == HMR_FREE_RIGHT || kind == HMR_FREE_BOTH)
        wcet_raw_free(w, c);
    return must_free(w, SC_HM_RANGE, V(kind, v), n * HM_PAGE, b);
}

static int hm_ranges(wcet_heap *w)
{
    for (int pop = 0; pop < 2; pop++)
        for (size_t i = 0; i < ARRAY_LEN(hm_lens); i++) {
            size_t n = hm_lens[i];
            unsigned v = (unsigned)(n | (size_t)pop << 12);
            void *p, *x;
            TRY(hm_new(w, pop));
            TRY(must_alloc(w, SC_HM_RANGE, V(HMR_SPLIT, v), n * HM_PAGE, &p));
            /* exact: a free range of n pages, fenced, as the only fit */
            TRY(hm_new(w, pop));
            x = wcet_raw_alloc(w, n * HM_PAGE);
            REQUIRE(x != NULL && wcet_raw_alloc(w, HM_PAGE) != NULL, "heapmem: no room");
            exhaust(w, HM_PAGE);
            wcet_raw_free(w, x);
            TRY(must_alloc(w, SC_HM_RANGE, V(HMR_EXACT, v), n * HM_PAGE, &p));
            REQUIRE(p == x, "heapmem: exact fit took another range");
            for (unsigned k = HMR_FREE_NONE; k <= HMR_FREE_BOTH; k++)
                TRY(hm_range_free(w, n, pop, k));
        }
    return 0;
}

enum { HMF_FALLBACK = 8 };

static int hm_fail(wcet_heap *w)
{
    void *p, *big;
    TRY(wcet_heap_new(w, 0, 64 * KIB));
    TRY(must_fail(w, SC_HM_FAIL, FAIL_TOO_BIG, 64 * KIB));
    TRY(must_fail(w, SC_HM_FAIL, FAIL_SIZE_MAX, SIZE_MAX));
    REQUIRE((p = wcet_raw_alloc(w, 16)) != NULL && (big = wcet_raw_alloc(w, 256)) != NULL,
            "heapmem: no room");
    exhaust(w, HM_PAGE);
    /* No 32-byte page, no free page: the partial 256-byte page serves. */
    void *q = m_alloc(w, SC_HM_FAIL, HMF_FALLBACK, 32);
    REQUIRE(q != NULL, "heapmem: no larger class served a small request");
    REQUIRE(m_free(w, SC_HM_FAIL, FAIL_INTERIOR, 16, (char *)big + 16) == -1,
            "interior pointer not rejected");
    exhaust(w, 16);
    exhaust(w, 256);
    TRY(must_fail(w, SC_HM_FAIL, FAIL_FULL, 16));
    return double_free(w, SC_HM_FAIL, FAIL_DOUBLE, 16, p);
}

/* --- xvmalloc ------------------------------------------------------------- */

/* "xvmalloc:8192" (report.c): pages of 1024 units of 8 bytes; a block of
 * u units serves a request of u * 8 - 8 bytes. States are laid out page by
 * page on a fresh heap of exactly the pages needed: consecutive requests
 * fill a page in address order (each takes the rest of the page just
 * split), then chosen blocks are freed (their neighbours used, so nothing
 * merges) to put blocks on chosen lists in a chosen order (equal sizes:
 * LIFO). Each page's last block is a used filler. */
#define XV_PAGE       8192u
#define XV_PAGE_UNITS (XV_PAGE / 8u)
#define XV_BYTES(u)   ((size_t)(u)*8u - 8u)

enum {
    XVA_FRESH,
    XVA_STACK,
    XVA_PROBE,
    XVA_GOOD_FIT,
    XVA_WHOLE,
    XVA_MISS_PAGE,
    XVA_GOOD_FIT_LAST,
    XVA_CASES
};
static const char *const xva_cases[XVA_CASES] = {
    "no listed block fits: a never-used page, split",
    "no listed block fits: an empty page popped from the stack, split",
    "own list's head fits (no search), split",
    "own head too small, good fit one first level up: second block of its list, "
    "rest inserted behind a larger head, right neighbour told",
    "own list's head fits exactly (no split)",
    "own head too small, good fit finds nothing: an empty page popped and split",
    "own head too small, good fit one first level up takes its list's only block "
    "(both bitmap words cleared), rest pushed on a non-empty list's head"};

enum { XVF_NONE, XVF_LEFT, XVF_RIGHT, XVF_BOTH, XVF_BOTH_LAST, XVF_PAGE, XVF_CASES };
static const char *const xvf_cases[XVF_CASES] = {
    "no free neighbour: inserted behind a larger head",
    "free left neighbour (middle of its list) merged",
    "free right neighbour (middle of its list) merged",
    "both neighbours merged out of list middles, result behind a larger head",
    "both neighbours merged, each the last of its list (bitmap words cleared)",
    "both neighbours merged into the whole page: page back on the stack"};

static int xv_heap(wcet_heap *w, size_t pages)
{
    return wcet_heap_new(w, 0, rtm_min_region("xvmalloc:8192") + (pages - 1u) * XV_PAGE);
}

/* Allocates blocks of units[i] units in order, each right after the one
 * before (a new page when a page is full: the units sum to 512 per page). */
static int xv_lay(wcet_heap *w, const unsigned *units, size_t n, void **out)
{
    size_t in_page = 0;
    for (size_t i = 0; i < n; i++) {
        REQUIRE((out[i] = wcet_raw_alloc(w, XV_BYTES(units[i]))) != NULL,
                "xvmalloc: block %zu of %u units refused", i, units[i]);
        REQUIRE(in_page == 0 || (char *)out[i] == (char *)out[i - 1] + units[i - 1] * 8u,
                "xvmalloc: block %zu not right after block %zu", i, i - 1);
        in_page = (in_page + units[i]) % XV_PAGE_UNITS;
    }
    return 0;
}

/* Frees blk[order[0]], blk[order[1]], ... up to a -1. */
static void xv_free_list(wcet_heap *w, void **blk, const int *order)
{
    for (; *order >= 0; order++)
        wcet_raw_free(w, blk[*order]);
}

static int xv_alloc_cases(wcet_heap *w)
{
    void *b[16], *p;
    /* Fresh page, then the same page popped back from the stack. */
    TRY(xv_heap(w, 2));
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_FRESH, 100, &p));
    wcet_raw_free(w, p);
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_STACK, 100, &p));
    /* Good fit one level up. Page 0: [F199][U2][F199][U2][F99][U523];
     * page 1: [F199][U2][F99][U2][F100][U622]. Request 103 units: its own
     * list (100..103) has the 100 at its head, too small; rounded up to
     * 106 the search passes the rest of first level 3 and finds the three
     * 199s (192..199); the second is split, its rest of 96 goes to list
     * 96..99 behind a 99 head, followed by the other 99. */
    static const unsigned lay[] = {199, 2, 199, 2, 99, 523, 199, 2, 99, 2, 100, 622};
    static const int frees[] = {0, 2, 6, 4, 8, 10, -1};
    TRY(xv_heap(w, 2));
    TRY(xv_lay(w, lay, ARRAY_LEN(lay), b));
    xv_free_list(w, b, frees);
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_GOOD_FIT, XV_BYTES(103), &p));
    REQUIRE(p == b[2], "xvmalloc: good fit took another block");
    /* Own list's head: a 100 fits 100 exactly, a 99's list serves 97. */
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_WHOLE, XV_BYTES(100), &p));
    REQUIRE(p == b[10], "xvmalloc: exact fit took another block");
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_PROBE, XV_BYTES(97), &p));
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    /* Page 0: [F199][U2][F96][U2][F100][U625], page 1 on the stack. 103
     * units: the 100 is too small, the good fit finds the 199 alone in its
     * first level (its words go empty), the rest of 96 goes on top of the
     * other 96. Then 103 again: the 100 is too small, nothing above: the
     * stacked page. */
    static const unsigned lay2[] = {199, 2, 96, 2, 100, 625};
    static const int frees2[] = {0, 2, 4, -1};
    TRY(xv_heap(w, 2));
    TRY(xv_lay(w, lay2, ARRAY_LEN(lay2), b));
    REQUIRE((p = wcet_raw_alloc(w, XV_BYTES(XV_PAGE_UNITS))) != NULL, "xvmalloc: no page 1");
    wcet_raw_free(w, p);
    xv_free_list(w, b, frees2);
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_GOOD_FIT_LAST, XV_BYTES(103), &p));
    REQUIRE(p == b[0], "xvmalloc: good fit took another block");
    TRY(must_alloc(w, SC_XV_ALLOC, XVA_MISS_PAGE, XV_BYTES(103), &p));
    REQUIRE((size_t)((char *)p - (char *)b[0]) == XV_PAGE, "xvmalloc: page 1 not used");
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    return 0;
}

static int xv_free_cases(wcet_heap *w)
{
    void *b[16];
    /* Page 0: [U2][F50][U2][F50 L][U20 X][F50 R][U2][F50][U2][F123][U2]
     * [F123][U548]. The four 50s share list 50..51, freed so that it reads
     * x, L, R, y from the head; X merged with both gives 120, inserted in
     * list 120..123 behind a 123 head, before the other 123. */
    static const unsigned lay[] = {2, 50, 2, 50, 20, 50, 2, 50, 2, 123, 2, 123, 548};
    static const int frees[] = {7, 5, 3, 1, 9, 11, -1};
    TRY(xv_heap(w, 1));
    TRY(xv_lay(w, lay, ARRAY_LEN(lay), b));
    xv_free_list(w, b, frees);
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    TRY(must_free(w, SC_XV_FREE, XVF_BOTH, XV_BYTES(20), b[4]));
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    /* The same, each neighbour alone on its list (44: list 44..45, 58:
     * list 58..59, the only lists of first level 2), merged into 122. */
    static const unsigned lay2[] = {2, 44, 20, 58, 2, 123, 2, 123, 650};
    static const int frees2[] = {1, 3, 5, 7, -1};
    TRY(xv_heap(w, 1));
    TRY(xv_lay(w, lay2, ARRAY_LEN(lay2), b));
    xv_free_list(w, b, frees2);
    TRY(must_free(w, SC_XV_FREE, XVF_BOTH_LAST, XV_BYTES(20), b[2]));
    /* Left only, right only, none. [F50 d][U2][F50 a][U6 t1][U2][U6 t2]
     * [F50 c][U2][F50 e][U2][F51 h][U2][U50 t3][U2][U699]: list 50..51
     * reads h, c, a, e, d; t1 merges a (left), t2 merges c (right), t3
     * goes behind the 51 head. */
    static const unsigned lay3[] = {50, 2, 50, 6, 2, 6, 50, 2, 50, 2, 51, 2, 50, 2, 699};
    static const int frees3[] = {0, 8, 2, 6, 10, -1};
    TRY(xv_heap(w, 1));
    TRY(xv_lay(w, lay3, ARRAY_LEN(lay3), b));
    xv_free_list(w, b, frees3);
    TRY(must_free(w, SC_XV_FREE, XVF_LEFT, XV_BYTES(6), b[3]));
    TRY(must_free(w, SC_XV_FREE, XVF_RIGHT, XV_BYTES(6), b[5]));
    TRY(must_free(w, SC_XV_FREE, XVF_NONE, XV_BYTES(50), b[12]));
    REQUIRE(wcet_raw_check(w) == 0, "xvmalloc: check failed");
    /* The page's last block, between two free ones. */
    static const unsigned lay4[] = {100, 12, 912};
    TRY(xv_heap(w, 1));
    TRY(xv_lay(w, lay4, ARRAY_LEN(lay4), b));
    wcet_raw_free(w, b[0]);
    wcet_raw_free(w, b[2]);
    TRY(must_free(w, SC_XV_FREE, XVF_PAGE, XV_BYTES(12), b[1]));
    REQUIRE(wcet_raw_stats(w).live_blocks == 0, "xvmalloc: page not empty");
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("xvmalloc: check failed");
}

static int xv_fail(wcet_heap *w)
{
    void *p, *q;
    TRY(xv_heap(w, 2));
    TRY(must_fail(w, SC_XV_FAIL, FAIL_TOO_BIG, XV_BYTES(XV_PAGE_UNITS) + 1u));
    TRY(must_fail(w, SC_XV_FAIL, FAIL_SIZE_MAX, SIZE_MAX));
    REQUIRE((p = wcet_raw_alloc(w, 16)) != NULL && (q = wcet_raw_alloc(w, 100)) != NULL,
            "xvmalloc: no room");
    REQUIRE(m_free(w, SC_XV_FAIL, FAIL_INTERIOR, 100, (char *)q + 8) == -1,
            "interior pointer not rejected");
    exhaust(w, 16);
    TRY(must_fail(w, SC_XV_FAIL, FAIL_FULL, 16));
    return double_free(w, SC_XV_FAIL, FAIL_DOUBLE, 16, p);
}

/* --- dispatch and descriptions ------------------------------------------- */

int wcet_rtm_scenario(wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc)
{
    switch (sc) {
    case SC_POOL_OPS:
        return pool_ops(w);
    case SC_BUDDY_CHAIN:
        return buddy_chain(w, cfg);
    case SC_BUDDY_ORDERS:
        return buddy_orders(w);
    case SC_BUDDY_FAIL:
        return buddy_fail(w);
    case SC_HF_CHAIN:
        return halffit_chain(w, cfg);
    case SC_HF_FAIL:
        return halffit_fail(w);
    case SC_SLAB_LIFE:
        return slab_lives(w, cfg);
    case SC_SLAB_LARGE:
        return slab_large(w, cfg);
    case SC_SLAB_FAIL:
        return slab_fail(w);
    case SC_HM_BUCKET:
        return hm_buckets_all(w, cfg);
    case SC_HM_RANGE:
        return hm_ranges(w);
    case SC_HM_FAIL:
        return hm_fail(w);
    case SC_XV_ALLOC:
        return xv_alloc_cases(w);
    case SC_XV_FREE:
        return xv_free_cases(w);
    case SC_XV_FAIL:
        return xv_fail(w);
    default:
        return wcet_fail("scenario %d is not an rtm scenario", (int)sc);
    }
}

unsigned long wcet_rtm_weight(const wcet_config *cfg, enum wcet_scenario sc)
{
    (void)cfg;
    switch (sc) {
    case SC_BUDDY_CHAIN:
    case SC_HF_CHAIN:
    case SC_SLAB_LARGE:
        return 120; /* chains of up to 25 levels: long calls */
    case SC_HM_BUCKET:
    case SC_HM_RANGE:
        return 100;
    default:
        return 20;
    }
}

/* A chain case in words: the block of 2^j units and the levels walked. */
static void describe_chain(char *buf, size_t len, const char *unit, unsigned v)
{
    unsigned j = V_PARAM(v);
    switch (V_CASE(v)) {
    case CHAIN_SPLIT:
        snprintf(buf, len, "smallest block cut from the only free block, 2^%u %s (%u splits)", j,
                 unit, j);
        break;
    case CHAIN_MERGE:
        snprintf(buf, len, "smallest block freed back into 2^%u %s (%u merges)", j, unit, j);
        break;
    case CHAIN_WHOLE:
        snprintf(buf, len, "the whole free block, 2^%u %s (no split)", j, unit);
        break;
    default:
        snprintf(buf, len, "the whole block of 2^%u %s freed (no merge)", j, unit);
        break;
    }
}

static const char *pick(const char *const *names, size_t n, unsigned i)
{
    return i < n ? names[i] : "?";
}

int wcet_rtm_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned long long n = (unsigned long long)size;
    unsigned c = V_CASE(v), p = V_PARAM(v);
    switch (sc) {
    case SC_POOL_OPS:
        snprintf(buf, len, "%s (request %llu)", pick(pool_cases, ARRAY_LEN(pool_cases), v), n);
        return 1;
    case SC_BUDDY_CHAIN:
        describe_chain(buf, len, "pages", v);
        return 1;
    case SC_HF_CHAIN:
        describe_halffit(buf, len, v);
        return 1;
    case SC_SLAB_LARGE:
        describe_chain(buf, len, "pages (large block)", v);
        return 1;
    case SC_BUDDY_ORDERS:
        snprintf(buf, len, "%s %llu bytes (order %u) from one block of 2^%u pages",
                 c ? "free" : "request", n, p, top_order(BUDDY_PAGE));
        return 1;
    case SC_BUDDY_FAIL:
    case SC_HF_FAIL:
    case SC_SLAB_FAIL:
    case SC_HM_FAIL:
    case SC_XV_FAIL:
        if (sc == SC_HM_FAIL && v == HMF_FALLBACK)
            snprintf(buf, len, "no page left: a larger class's partial page serves %llu", n);
        else
            snprintf(buf, len, "%s (%llu bytes)", pick(fail_cases, ARRAY_LEN(fail_cases), v), n);
        return 1;
    case SC_SLAB_LIFE: {
        char what[160];
        unsigned top = top_order(SLAB_PAGE);
        snprintf(what, sizeof what, pick(slab_cases, SLAB_CASES, c), top, top);
        snprintf(buf, len, "class %u: %s", p, what);
        return 1;
    }
    case SC_HM_BUCKET:
        snprintf(buf, len, "bucket %u: %s%s", p & 0xfffu, pick(hmb_cases, HMB_CASES, c),
                 p >> 12 ? " (range lists populated)" : "");
        return 1;
    case SC_HM_RANGE:
        snprintf(buf, len, "%u pages: %s%s", p & 0xfffu, pick(hmr_cases, ARRAY_LEN(hmr_cases), c),
                 p >> 12 ? " (range lists populated)" : "");
        return 1;
    case SC_XV_ALLOC:
        snprintf(buf, len, "%s (request %llu)", pick(xva_cases, XVA_CASES, v), n);
        return 1;
    case SC_XV_FREE:
        snprintf(buf, len, "%s (block of %llu)", pick(xvf_cases, XVF_CASES, v), n);
        return 1;
    default:
        return 0;
    }
}
