/*
 * tools/wcet/scenarios_rtm.c -- the adversarial heap states of rtmem's other
 * algorithms (pool, buddy, halffit, slab, heapmem), measured through the
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

/* The only free block has 2^j units of 32 bytes (usable 32 * 2^j - 8). */
static int halffit_chain(wcet_heap *w, const wcet_config *cfg)
{
    unsigned top = TOP_LOG2 - 5u;
    for (unsigned j = 0; j <= top; j += cfg->quick && j + 4 < top ? 4u : 1u) {
        size_t usable = ((size_t)HF_UNIT << j) - RTM_HALFFIT_HEADER_BYTES;
        void *p;
        TRY(wcet_heap_with_free(w, usable));
        REQUIRE(wcet_raw_stats(w).largest_free == usable, "halffit: not one block of 2^%u", j);
        TRY(must_alloc(w, SC_HF_CHAIN, V(CHAIN_SPLIT, j), 0, &p));
        TRY(must_free(w, SC_HF_CHAIN, V(CHAIN_MERGE, j), 0, p));
        TRY(must_alloc(w, SC_HF_CHAIN, V(CHAIN_WHOLE, j), usable, &p));
        TRY(must_free(w, SC_HF_CHAIN, V(CHAIN_WHOLE_FREE, j), usable, p));
        REQUIRE(wcet_raw_check(w) == 0, "halffit check failed");
    }
    return 0;
}

static int halffit_fail(wcet_heap *w)
{
    void *p, *q;
    size_t usable = ((size_t)HF_UNIT << 12) - RTM_HALFFIT_HEADER_BYTES;
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
        describe_chain(buf, len, "units of 32 bytes", v);
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
    default:
        return 0;
    }
}
