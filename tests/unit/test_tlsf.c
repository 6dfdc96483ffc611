// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_tlsf.c -- the properties that make rtmem's TLSF heap what
 * docs/TLSF.md says it is, beyond the per-function contracts of test_api.c:
 *
 *  - sizes: no rounded-size pitfall, largest_free exact in the allocator's
 *    sense, the exact-fit probe closing the good-fit gap (rlsf issue 15),
 *    exactly 4 bytes of overhead per block, unique minimum blocks;
 *  - realloc: in place whenever a neighbour allows, alignment kept on a move,
 *    a failed realloc harmless;
 *  - pools and reset: several pools behave as one heap; reset is complete;
 *  - where the metadata lives: never outside the region (guard bytes and
 *    guard pages), and only as offsets (a heap memcpy'd to another address
 *    works there, and the original is never touched);
 *  - misuse: rtm_tlsf_check finds each kind of overwrite and never crashes
 *    on garbage; double and misaligned frees are refused without damage;
 *    impossible sizes and alignments are refused with the right errno.
 *
 * Most tests drive the typed API (rtm_tlsf_*); the ones where the generic
 * API adds something (a header before the control structure, a handle that
 * must survive a move) run both through the small `api` wrapper below.
 * Random workloads use fixed seeds, printed with every failure.
 */
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/bytes.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"
#include "../tracking/track_test.h"

#define KiB ((size_t)1024)
#define MiB (KiB * KiB)
#define HDR ((size_t)RTM_TLSF_HEADER_BYTES)
/* The span of a minimum block: what alloc(0 .. MIN_BLOCK) costs. */
#define MIN_SPAN (RTM_TLSF_MIN_BLOCK + HDR)

/* --- helpers ------------------------------------------------------------------ */

/* splitmix64: tiny, seedable, good enough to shuffle workloads. */

static size_t round_up8(size_t n) { return (n + 7u) & ~(size_t)7u; }

/* The span (payload distance to the next block) a request of n bytes gets. */
static size_t span_for(size_t n)
{
    size_t s = round_up8(n + HDR);
    return s < MIN_SPAN ? MIN_SPAN : s;
}

/* Block contents derived from a key (the block's address, or its offset in
 * the region when the block will be seen at two addresses), so a block
 * overwritten by a neighbour or by the heap is recognised. */
static unsigned char token(uintptr_t key, size_t i)
{
    return (unsigned char)(((key >> 3) * 131u + i * 7u + 1u) & 0xFFu);
}

static void fill(void *p, size_t n, uintptr_t key)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = token(key, i);
}

/* Index of the first byte that differs from its token, or n if none does. */
static size_t verify(const void *p, size_t n, uintptr_t key)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != token(key, i))
            return i;
    return n;
}

/* The header word of block p, the 4 bytes just below it (tlsf_layout.h). */
static uint32_t header_of(const void *p) { return get32((const unsigned char *)p - HDR); }

/* A typed heap over a fresh malloc'd region. */
static rtm_tlsf *typed_heap(test_region *r, size_t bytes, size_t misalign)
{
    *r = region_malloc(bytes, misalign);
    rtm_tlsf *t = rtm_tlsf_create(r->mem, r->bytes);
    REQUIRE(t != NULL);
    return t;
}

/* One heap seen through either API, so a test can run over both. */
typedef struct api {
    rtm_heap *h; /* generic, or NULL */
    rtm_tlsf *t; /* typed, when h is NULL */
} api;

static void *a_alloc(const api *a, size_t n)
{
    return a->h ? rtm_alloc(a->h, n) : rtm_tlsf_alloc(a->t, n);
}

static void *a_realloc(const api *a, void *p, size_t n)
{
    return a->h ? rtm_realloc(a->h, p, n) : rtm_tlsf_realloc(a->t, p, n);
}

static void *a_aligned(const api *a, size_t align, size_t n)
{
    return a->h ? rtm_aligned_alloc(a->h, align, n) : rtm_tlsf_aligned_alloc(a->t, align, n);
}

static void a_free(const api *a, void *p)
{
    if (a->h)
        rtm_free(a->h, p);
    else
        (void)rtm_tlsf_free(a->t, p);
}

static size_t a_usable(const api *a, const void *p)
{
    return a->h ? rtm_usable_size(a->h, p) : rtm_tlsf_usable_size(p);
}

static rtm_stats a_stats(const api *a)
{
    return a->h ? rtm_heap_stats(a->h) : rtm_tlsf_stats(a->t);
}

static int a_check(const api *a) { return a->h ? rtm_heap_check(a->h) : rtm_tlsf_check(a->t); }

static void a_reset(const api *a)
{
    if (a->h)
        (void)rtm_heap_reset(a->h);
    else
        rtm_tlsf_reset(a->t);
}

/* Creates a heap of the kind `generic` asks for over [mem, mem + bytes). */
static api a_create(int generic, void *mem, size_t bytes)
{
    api a = {NULL, NULL};
    if (generic) {
        a.h = rtm_heap_create("tlsf", mem, bytes);
        REQUIRE(a.h != NULL);
    } else {
        a.t = rtm_tlsf_create(mem, bytes);
        REQUIRE(a.t != NULL);
    }
    return a;
}

static const char *a_name(const api *a) { return a->h ? "generic" : "typed"; }

/* Walker that records blocks (up to a cap) and totals. */
typedef struct walk_log {
    size_t n, used, free_n, largest_free_block;
    size_t cap;
    void **ptr;
    size_t *usable;
    int *is_used;
} walk_log;

static void log_block(void *ptr, size_t usable, int used, void *arg)
{
    walk_log *w = arg;
    if (w->n < w->cap) {
        w->ptr[w->n] = ptr;
        w->usable[w->n] = usable;
        w->is_used[w->n] = used;
    }
    w->n++;
    if (used) {
        w->used++;
    } else {
        w->free_n++;
        if (usable > w->largest_free_block)
            w->largest_free_block = usable;
    }
}

/* --- rounded sizes --------------------------------------------------------------- */

/* Sizes whose spans sit on, just below and just above list boundaries (128:
 * end of the linear lists, 256, 1000 and 1024, 4096 + 1), and odd sizes in
 * between. */
static const size_t odd_sizes[] = {
    0,    1,    19,   20,   21,   27,   61,   99,   117,  119,  120,  121,  122,  123,  124,  125,
    126,  127,  128,  129,  131,  133,  189,  249,  250,  251,  252,  253,  254,  255,  256,  257,
    259,  261,  300,  509,  777,  997,  999,  1000, 1001, 1003, 1019, 1021, 1023, 1025, 2043, 2047,
    2049, 3001, 4091, 4093, 4095, 4096, 4097, 4099, 4105, 5003, 8191, 8193, 12289};
#define ODD_SIZES (sizeof odd_sizes / sizeof odd_sizes[0])

/* The rounded-size pitfall: a TLSF that trims a block to the size its search
 * rounded up to (instead of the request) cannot give a freed block back to
 * the same request once the heap is full, because the search for that
 * request rounds past the block's own list. Fill a heap with one size, free
 * a block in the middle: the same request must get exactly that block. */
static void pitfall_one(const api *a, size_t n)
{
    enum { CAP = 4096 };
    static void *blocks[CAP];
    size_t count = 0;
    a_reset(a);
    while (count < CAP && (blocks[count] = a_alloc(a, n)) != NULL)
        count++;
    REQUIRE(count < CAP);
    if (count < 3) {
        CHECK_MSG(0, "%s: only %zu blocks of %zu bytes fit", a_name(a), count, n);
        return;
    }
    size_t holes[3] = {count / 2, count / 4, count - 2};
    for (size_t k = 0; k < 3; k++) {
        void *victim = blocks[holes[k]];
        a_free(a, victim);
        void *again = a_alloc(a, n);
        CHECK_MSG(again == victim,
                  "%s: heap full of %zu blocks of %zu bytes, freed block %zu (%p), "
                  "alloc(%zu) gave %p",
                  a_name(a), count, n, holes[k], victim, n, again);
        if (again != NULL && again != victim)
            a_free(a, again);
    }
    /* Two holes at once, refilled in the other order. */
    a_free(a, blocks[1]);
    a_free(a, blocks[count - 2]);
    void *x = a_alloc(a, n), *y = a_alloc(a, n);
    CHECK_MSG(x != NULL && y != NULL && x != y, "%s: two holes of %zu bytes, refill %p %p",
              a_name(a), n, x, y);
    CHECK_MSG(a_check(a) == 0, "%s: check after the pitfall run of %zu bytes", a_name(a), n);
}

static void test_rounded_size_pitfall(void)
{
    for (int generic = 0; generic < 2; generic++) {
        test_region r = region_malloc(64 * KiB, generic ? 3u : 0u);
        api a = a_create(generic, r.mem, r.bytes);
        for (size_t i = 0; i < ODD_SIZES; i++)
            pitfall_one(&a, odd_sizes[i]);
        region_free(&r);
    }
}

/* --- largest_free ------------------------------------------------------------------ */

/* stats.largest_free is what rtm_alloc grants, to the byte: alloc of it
 * succeeds and alloc of one byte more fails, at every heap state. The states
 * come from a random workload that keeps the heap nearly full. */
static void test_largest_free_exact(void)
{
    const uint64_t seed = 0x1A2B3C4Dull;
    for (int generic = 0; generic < 2; generic++) {
        rng g = {seed + (uint64_t)generic};
        test_region r = region_malloc(256 * KiB, 5);
        api a = a_create(generic, r.mem, r.bytes);
        enum { LIVE = 512 };
        void *live[LIVE];
        size_t nlive = 0, states = 0;
        for (unsigned step = 0; step < 6000; step++) {
            size_t op = rng_below(&g, 10);
            if (op < 6 && nlive < LIVE) {
                void *p = (op == 5)
                              ? a_aligned(&a, (size_t)1 << rng_below(&g, 12), rng_size(&g, 14))
                              : a_alloc(&a, rng_size(&g, 15));
                if (p != NULL)
                    live[nlive++] = p;
            } else if (op < 9 && nlive > 0) {
                size_t i = rng_below(&g, nlive);
                a_free(&a, live[i]);
                live[i] = live[--nlive];
            } else if (nlive > 0) {
                size_t i = rng_below(&g, nlive);
                void *q = a_realloc(&a, live[i], rng_size(&g, 15) + 1u);
                if (q != NULL)
                    live[i] = q;
            }
            /* The property, at this state. */
            size_t lf = a_stats(&a).largest_free;
            errno = 0;
            void *more = a_alloc(&a, lf + 1u);
            CHECK_MSG(more == NULL && errno == ENOMEM,
                      "%s seed %llx step %u: largest_free %zu but alloc(%zu) = %p", a_name(&a),
                      (unsigned long long)seed, step, lf, lf + 1u, more);
            if (more != NULL)
                a_free(&a, more);
            if (lf > 0) {
                void *p = a_alloc(&a, lf);
                CHECK_MSG(p != NULL, "%s seed %llx step %u: largest_free %zu, alloc of it failed",
                          a_name(&a), (unsigned long long)seed, step, lf);
                if (p != NULL) {
                    CHECK(a_usable(&a, p) >= lf);
                    a_free(&a, p);
                }
                states++;
            }
        }
        CHECK_EQ(a_check(&a), 0);
        CHECK(states > 1000); /* the workload did not exhaust the heap for good */
        region_free(&r);
    }
}

/* --- the exact-fit probe ------------------------------------------------------------ */

/* Leaves a heap whose only free block has span s, between two used blocks
 * (the rest of the heap is one used block). Returns that block's payload. */
static unsigned char *only_free_block(rtm_tlsf *t, size_t s)
{
    rtm_tlsf_reset(t);
    unsigned char *b = rtm_tlsf_alloc(t, s - HDR);
    void *sep = rtm_tlsf_alloc(t, 0);
    REQUIRE(b != NULL && sep != NULL);
    REQUIRE(rtm_tlsf_usable_size(b) == s - HDR);
    size_t rest = rtm_tlsf_stats(t).largest_free;
    REQUIRE(rest > 0 && rtm_tlsf_alloc(t, rest) != NULL);
    REQUIRE(rtm_tlsf_stats(t).free_bytes == 0);
    REQUIRE(rtm_tlsf_free(t, b) == 0);
    return b;
}

/* rlsf issue 15: good fit rounds a request up to the next list boundary, so
 * a free block of span s just above a list's lower bound serves no request
 * in (bound, s] -- including the request that exactly fits it -- and the
 * heap fails while it has the memory. The probe of the request's own list
 * must grant all of them. */
static void test_exact_fit_gap(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 4 * MiB, 0);
    const size_t bounds[] = {256,  384,  512,  768,   1024,  1536,   2048,
                             4096, 6144, 8192, 65536, 98304, 1048576};
    size_t cases = 0;
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        size_t b = bounds[i];
        size_t pow2 = 1;
        while (pow2 * 2u <= b)
            pow2 *= 2u;
        /* At most 16 lists per power of two (RTM_TLSF_SL_LOG2 <= 4): a span
         * within pow2/16 above a list bound b stays in b's list whatever
         * the setting. */
        size_t width = pow2 >> 4;
        REQUIRE(b % width == 0); /* b is a list's lower bound */
        const size_t offsets[] = {8, 16, 24, 40, width / 2, width - 8};
        for (size_t j = 0; j < sizeof offsets / sizeof offsets[0]; j++) {
            size_t s = b + offsets[j];
            if (offsets[j] == 0 || offsets[j] >= width)
                continue; /* the span would be in another list */
            unsigned char *blk = only_free_block(t, s);
            size_t usable = s - HDR;
            CHECK_EQ(rtm_tlsf_stats(t).largest_free, usable);
            for (size_t k = 0; k <= 40; k++) {
                void *p = rtm_tlsf_alloc(t, usable - k);
                CHECK_MSG(p == blk,
                          "only free block has span %zu (list from %zu): alloc(%zu) = %p, "
                          "expected %p",
                          s, b, usable - k, p, (void *)blk);
                if (p != NULL)
                    (void)rtm_tlsf_free(t, p);
                rtm_stats st = rtm_tlsf_stats(t);
                CHECK_EQ(st.free_bytes, usable);
                CHECK_EQ(st.largest_free, usable);
            }
            CHECK_EQ(rtm_tlsf_check(t), 0);
            cases++;
        }
    }
    CHECK(cases > 30);
    region_free(&r);
}

/* --- exact overhead --------------------------------------------------------------- */

/* A used block costs its 4-byte header and the rounding to 8, nothing more:
 * two consecutive blocks of n bytes lie exactly round_up(n + 4, 8) apart on
 * a fresh heap, and the whole span minus the header is usable. */
static void test_exact_overhead(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 1 * MiB, 0);
    size_t f0 = rtm_tlsf_stats(t).free_bytes;
    size_t sizes[3200];
    size_t n = 0;
    for (size_t s = 0; s <= 3000; s++)
        sizes[n++] = s;
    for (size_t s = 3001; n < sizeof sizes / sizeof sizes[0] && s < 400 * KiB; s = s * 21u / 20u)
        sizes[n++] = s;
    REQUIRE(sizes[n - 1u] * 2u < f0);
    for (size_t i = 0; i < n; i++) {
        size_t sz = sizes[i];
        size_t span = span_for(sz);
        rtm_tlsf_reset(t);
        unsigned char *p = rtm_tlsf_alloc(t, sz), *q = rtm_tlsf_alloc(t, sz);
        REQUIRE(p != NULL && q != NULL);
        CHECK_MSG((size_t)(q - p) == span, "alloc(%zu) twice: %td bytes apart, expected %zu", sz,
                  q - p, span);
        CHECK_MSG(rtm_tlsf_usable_size(p) == span - HDR, "usable_size(alloc(%zu)) = %zu, want %zu",
                  sz, rtm_tlsf_usable_size(p), span - HDR);
        if (sz >= RTM_TLSF_MIN_BLOCK)
            CHECK_EQ(span, round_up8(sz + RTM_TLSF_HEADER_BYTES));
        /* The stats agree: free space fell by exactly the two spans. */
        CHECK_EQ(rtm_tlsf_stats(t).free_bytes, f0 - 2u * span);
    }
    CHECK_EQ(rtm_tlsf_check(t), 0);
    region_free(&r);
}

/* malloc(0) semantics: a unique, freeable minimum block each time. */
static void test_alloc_zero(void)
{
    for (int generic = 0; generic < 2; generic++) {
        test_region r = region_malloc(64 * KiB, 1);
        api a = a_create(generic, r.mem, r.bytes);
        rtm_stats st0 = a_stats(&a);
        enum { N = 1000 };
        static unsigned char *p[N];
        for (size_t i = 0; i < N; i++) {
            p[i] = a_alloc(&a, 0);
            REQUIRE(p[i] != NULL);
            CHECK_EQ(a_usable(&a, p[i]), RTM_TLSF_MIN_BLOCK);
            fill(p[i], RTM_TLSF_MIN_BLOCK, (uintptr_t)p[i]);
            if (i > 0) /* a fresh heap hands them out in address order */
                CHECK_EQ((uintptr_t)p[i] - (uintptr_t)p[i - 1], MIN_SPAN);
        }
        size_t intact = 0;
        for (size_t i = 0; i < N; i++)
            intact += verify(p[i], RTM_TLSF_MIN_BLOCK, (uintptr_t)p[i]) == RTM_TLSF_MIN_BLOCK;
        CHECK_EQ(intact, N);
        for (size_t i = 0; i < N; i++)
            a_free(&a, p[(i * 7u) % N]); /* 7 is coprime to N: each once */
        rtm_stats st = a_stats(&a);
        CHECK_EQ(st.live_blocks, 0);
        CHECK_EQ(st.free_bytes, st0.free_bytes);
        CHECK_EQ(st.largest_free, st0.largest_free);
        CHECK_EQ(a_check(&a), 0);
        region_free(&r);
    }
}

/* --- realloc ------------------------------------------------------------------------ */

/* Growing into a free right neighbour keeps the pointer and the contents,
 * whether the neighbour is absorbed whole or split. */
static void test_realloc_grow_in_place(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 64 * KiB, 0);
    /* (neighbour's size, new size): the neighbour absorbed exactly, split
     * (twice), and a tail of 8 bytes, too small to stand alone, absorbed. */
    const size_t cases[][2] = {
        {300, 100 + 4 + 300}, {300, 250}, {1000, 600}, {300, 390}, {64, 164}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rtm_tlsf_reset(t);
        unsigned char *p = rtm_tlsf_alloc(t, 100), *q = rtm_tlsf_alloc(t, cases[i][0]);
        void *sep = rtm_tlsf_alloc(t, 10);
        REQUIRE(p && q && sep);
        size_t pspan = span_for(100), qspan = span_for(cases[i][0]);
        fill(p, 100, 42);
        REQUIRE(rtm_tlsf_free(t, q) == 0);
        size_t want = cases[i][1];
        unsigned char *p2 = rtm_tlsf_realloc(t, p, want);
        CHECK_MSG(p2 == p, "realloc(100 -> %zu) with %zu free bytes to the right moved: %p -> %p",
                  want, qspan - HDR, (void *)p, (void *)p2);
        if (p2 == NULL)
            continue;
        CHECK_EQ(verify(p2, 100, 42), 100);
        size_t got = rtm_tlsf_usable_size(p2);
        CHECK(got >= want);
        /* Either the tail stood alone (exact span) or it was too small. */
        size_t total = pspan + qspan;
        CHECK_MSG(got + HDR == span_for(want) ||
                      (got + HDR == total && total - span_for(want) < MIN_SPAN),
                  "grown to %zu: usable %zu from spans %zu + %zu", want, got, pspan, qspan);
        CHECK_EQ(rtm_tlsf_stats(t).used_bytes, got + rtm_tlsf_usable_size(sep));
        CHECK_EQ(rtm_tlsf_check(t), 0);
    }
    region_free(&r);
}

/* Shrinking keeps the pointer and returns the tail: alone when it can stand
 * alone, merged into a free right neighbour always (even a tail of 8). */
static void test_realloc_shrink_in_place(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 64 * KiB, 0);

    /* Used right neighbour: the tail becomes a free block of its own. */
    unsigned char *p = rtm_tlsf_alloc(t, 1000);
    void *sep = rtm_tlsf_alloc(t, 10);
    REQUIRE(p && sep);
    fill(p, 1000, 7);
    size_t f = rtm_tlsf_stats(t).free_bytes;
    CHECK_PTR_EQ(rtm_tlsf_realloc(t, p, 200), p);
    CHECK_EQ(verify(p, 200, 7), 200);
    CHECK_EQ(rtm_tlsf_usable_size(p), span_for(200) - HDR);
    CHECK_EQ(rtm_tlsf_stats(t).free_bytes, f + (span_for(1000) - span_for(200)) - HDR);
    /* A tail below the minimum block with a used neighbour stays inside. */
    unsigned char *p2 = rtm_tlsf_alloc(t, 200);
    void *sep2 = rtm_tlsf_alloc(t, 10);
    REQUIRE(p2 && sep2 && p2 + span_for(200) == (unsigned char *)sep2);
    f = rtm_tlsf_stats(t).free_bytes;
    CHECK_PTR_EQ(rtm_tlsf_realloc(t, p2, 190), p2);
    CHECK_EQ(rtm_tlsf_usable_size(p2), span_for(200) - HDR);
    CHECK_EQ(rtm_tlsf_stats(t).free_bytes, f);
    CHECK_EQ(rtm_tlsf_check(t), 0);

    /* Free right neighbour: the tail merges into it whatever its size; 992
     * leaves a tail of 8 bytes, which could not stand alone; 1 shrinks to
     * the minimum block. */
    const size_t shrink_to[] = {200, 1000 - 8, 24, 1};
    for (size_t i = 0; i < sizeof shrink_to / sizeof shrink_to[0]; i++) {
        rtm_tlsf_reset(t);
        p = rtm_tlsf_alloc(t, 1000);
        unsigned char *q = rtm_tlsf_alloc(t, 500);
        sep = rtm_tlsf_alloc(t, 10);
        REQUIRE(p && q && sep);
        fill(p, 1000, 9);
        REQUIRE(rtm_tlsf_free(t, q) == 0);
        f = rtm_tlsf_stats(t).free_bytes;
        size_t cur = span_for(1000), s = span_for(shrink_to[i]);
        CHECK_EQ(rtm_tlsf_usable_size(p) + HDR, cur);
        CHECK_PTR_EQ(rtm_tlsf_realloc(t, p, shrink_to[i]), p);
        CHECK_EQ(verify(p, shrink_to[i], 9), shrink_to[i]);
        CHECK_EQ(rtm_tlsf_stats(t).free_bytes, f + (cur - s));
        /* The walk shows p, then one free block from p's new end to sep. */
        void *ptrs[8];
        size_t us[8];
        int used[8];
        walk_log w = {0, 0, 0, 0, 8, ptrs, us, used};
        rtm_tlsf_walk(t, log_block, &w);
        REQUIRE(w.n >= 3);
        CHECK_PTR_EQ(ptrs[0], p);
        CHECK_PTR_EQ(ptrs[1], p + s);
        CHECK(!used[1]);
        CHECK_EQ(us[1], (cur - s) + span_for(500) - HDR);
        CHECK_PTR_EQ(ptrs[2], sep);
        CHECK_EQ(rtm_tlsf_check(t), 0);
    }
    region_free(&r);
}

typedef struct find_block {
    const void *want;
    int found, used;
} find_block;

static void find_visit(void *ptr, size_t usable, int used, void *arg)
{
    find_block *f = arg;
    (void)usable;
    if (ptr == f->want) {
        f->found = 1;
        f->used = used;
    }
}

/* Allocates minimum blocks until the block right after p is used, so that
 * p cannot grow in place; the others stay allocated (they only fill gaps). */
static void pin_after(rtm_tlsf *t, const unsigned char *p)
{
    const unsigned char *after = p + rtm_tlsf_usable_size(p) + HDR;
    find_block f = {after, 0, 0};
    rtm_tlsf_walk(t, find_visit, &f);
    if (f.found && f.used)
        return;
    for (int i = 0; i < 50000; i++) {
        unsigned char *q = rtm_tlsf_alloc(t, 0);
        REQUIRE(q != NULL);
        if (q == after)
            return;
    }
    REQUIRE(0 && "no block landed after p");
}

/* A block that cannot grow moves, keeping its contents; an aligned block
 * keeps its alignment when it moves. */
static void test_realloc_move_and_alignment(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 8 * MiB, 3);
    unsigned char *p = rtm_tlsf_alloc(t, 100);
    void *sep = rtm_tlsf_alloc(t, 10);
    REQUIRE(p && sep);
    fill(p, 100, 1);
    unsigned char *q = rtm_tlsf_realloc(t, p, 5000);
    CHECK(q != NULL && q != p);
    if (q != NULL) {
        CHECK_EQ(verify(q, 100, 1), 100);
        CHECK_EQ(rtm_tlsf_stats(t).live_blocks, 2); /* p was freed */
        (void)rtm_tlsf_free(t, q);
    }
    CHECK_EQ(rtm_tlsf_check(t), 0);

    /* Each alignment on its own heap state (max_align then is that
     * alignment), then both together. */
    const size_t aligns[] = {256, 4096};
    for (size_t round = 0; round < 3; round++) {
        rtm_tlsf_reset(t);
        unsigned char *blk[2] = {NULL, NULL};
        for (size_t i = 0; i < 2; i++) {
            if (round < 2 && round != i)
                continue;
            blk[i] = rtm_tlsf_aligned_alloc(t, aligns[i], 100);
            REQUIRE(blk[i] != NULL && (uintptr_t)blk[i] % aligns[i] == 0);
            pin_after(t, blk[i]); /* no room to grow: realloc must move */
            fill(blk[i], 100, aligns[i]);
        }
        for (size_t i = 0; i < 2; i++) {
            if (blk[i] == NULL)
                continue;
            const size_t growth[] = {20000, 300000, 1000000};
            for (size_t g = 0; g < 3; g++) {
                unsigned char *n = rtm_tlsf_realloc(t, blk[i], growth[g]);
                CHECK_MSG(n != NULL && n != blk[i],
                          "realloc of a pinned %zu-aligned block to %zu gave %p (was %p)",
                          aligns[i], growth[g], (void *)n, (void *)blk[i]);
                if (n == NULL)
                    break;
                CHECK_MSG((uintptr_t)n % aligns[i] == 0,
                          "realloc of a %zu-aligned block to %zu gave %p", aligns[i], growth[g],
                          (void *)n);
                CHECK_EQ(verify(n, 100, aligns[i]), 100);
                blk[i] = n;
                pin_after(t, n);
            }
        }
        CHECK_EQ(rtm_tlsf_check(t), 0);
    }
    region_free(&r);
}

/* A failed realloc changes nothing: not the block, not its contents, not
 * the heap beyond the failure counter. */
static void test_realloc_failure_keeps_block(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 64 * KiB, 0);
    unsigned char *plain = rtm_tlsf_alloc(t, 300);
    unsigned char *aligned = rtm_tlsf_aligned_alloc(t, 512, 300);
    REQUIRE(plain && aligned);
    fill(plain, 300, 11);
    fill(aligned, 300, 12);
    unsigned char *blk[2] = {plain, aligned};
    for (size_t i = 0; i < 2; i++) {
        rtm_stats st0 = rtm_tlsf_stats(t);
        size_t usable = rtm_tlsf_usable_size(blk[i]);
        const size_t too_big[] = {st0.largest_free + usable + 8u, 64 * KiB, RTM_TLSF_MAX_BLOCK,
                                  RTM_TLSF_MAX_BLOCK + 1u, SIZE_MAX};
        for (size_t k = 0; k < sizeof too_big / sizeof too_big[0]; k++) {
            errno = 0;
            CHECK_MSG(rtm_tlsf_realloc(t, blk[i], too_big[k]) == NULL,
                      "realloc(%zu-byte block, %zu) succeeded", usable, too_big[k]);
            CHECK_ERRNO(ENOMEM);
            CHECK_EQ(rtm_tlsf_usable_size(blk[i]), usable);
            CHECK_EQ(verify(blk[i], 300, 11u + i), 300);
        }
        rtm_stats st = rtm_tlsf_stats(t);
        CHECK_EQ(st.failed_allocs, st0.failed_allocs + 5u);
        st.failed_allocs = st0.failed_allocs;
        CHECK(stats_equal(st, st0));
        CHECK_EQ(rtm_tlsf_check(t), 0);
    }
    region_free(&r);
}

/* --- pools ---------------------------------------------------------------------------- */

typedef struct pool_span {
    const unsigned char *lo, *hi;
} pool_span;

typedef struct pool_census {
    const pool_span *pools;
    size_t npools;
    size_t blocks[4], used[4], outside;
} pool_census;

static size_t pool_index(const pool_span *pools, size_t n, const void *p)
{
    for (size_t i = 0; i < n; i++)
        if ((const unsigned char *)p >= pools[i].lo && (const unsigned char *)p < pools[i].hi)
            return i;
    return n;
}

static void census_block(void *ptr, size_t usable, int used, void *arg)
{
    pool_census *c = arg;
    (void)usable;
    size_t i = pool_index(c->pools, c->npools, ptr);
    if (i == c->npools) {
        c->outside++;
        return;
    }
    c->blocks[i]++;
    c->used[i] += used != 0;
}

/* Four pools behave as one heap: every pool serves requests, the walk
 * visits all of them, and freeing everything gives back the exact initial
 * free space and largest block. */
static void test_several_pools(void)
{
    for (int generic = 0; generic < 2; generic++) {
        const size_t bytes[4] = {32 * KiB, 48 * KiB, 16 * KiB, 100 * KiB};
        const size_t misalign[4] = {0, 3, 8, 5};
        test_region reg[4];
        pool_span pools[4];
        for (size_t i = 0; i < 4; i++) {
            reg[i] = region_malloc(bytes[i], misalign[i]);
            pools[i].lo = reg[i].mem;
            pools[i].hi = reg[i].mem + reg[i].bytes;
        }
        api a = a_create(generic, reg[0].mem, reg[0].bytes);
        for (size_t i = 1; i < 4; i++)
            REQUIRE((generic ? rtm_heap_add_pool(a.h, reg[i].mem, reg[i].bytes)
                             : rtm_tlsf_add_pool(a.t, reg[i].mem, reg[i].bytes)) == 0);
        rtm_stats st0 = a_stats(&a);
        CHECK_EQ(a_check(&a), 0);

        rng g = {77u + (uint64_t)generic};
        enum { CAP = 8192 };
        static void *live[CAP];
        size_t n = 0, misses = 0, per_pool[5] = {0, 0, 0, 0, 0};
        while (n < CAP && misses < 200) {
            void *p =
                (n % 5 == 0) ? a_aligned(&a, 64, rng_size(&g, 11)) : a_alloc(&a, rng_size(&g, 12));
            if (p == NULL) {
                misses++;
                continue;
            }
            live[n++] = p;
            per_pool[pool_index(pools, 4, p)]++;
        }
        while (n < CAP && (live[n] = a_alloc(&a, 0)) != NULL) /* fill the crumbs */
            per_pool[pool_index(pools, 4, live[n++])]++;
        for (size_t i = 0; i < 4; i++)
            CHECK_MSG(per_pool[i] > 0, "%s: pool %zu (%zu bytes) served nothing", a_name(&a), i,
                      bytes[i]);
        CHECK_EQ(per_pool[4], 0); /* nothing outside the pools */

        pool_census c = {pools, 4, {0}, {0}, 0};
        if (generic)
            CHECK_EQ(rtm_heap_walk(a.h, census_block, &c), 0);
        else
            rtm_tlsf_walk(a.t, census_block, &c);
        CHECK_EQ(c.outside, 0);
        size_t walked_used = 0;
        for (size_t i = 0; i < 4; i++) {
            CHECK_MSG(c.blocks[i] > 0, "%s: walk never visited pool %zu", a_name(&a), i);
            CHECK_EQ(c.used[i], per_pool[i]);
            walked_used += c.used[i];
        }
        CHECK_EQ(walked_used, n);
        CHECK_EQ(a_stats(&a).live_blocks, n);
        CHECK_EQ(a_check(&a), 0);

        for (size_t i = n; i > 1; i--) { /* free in a random order */
            size_t j = rng_below(&g, i);
            void *tmp = live[j];
            live[j] = live[i - 1u];
            live[i - 1u] = tmp;
        }
        for (size_t i = 0; i < n; i++)
            a_free(&a, live[i]);
        rtm_stats st = a_stats(&a);
        CHECK_EQ(st.live_blocks, 0);
        CHECK_EQ(st.used_bytes, 0);
        CHECK_EQ(st.free_bytes, st0.free_bytes);
        CHECK_EQ(st.largest_free, st0.largest_free);
        CHECK_EQ(a_check(&a), 0);
        for (size_t i = 0; i < 4; i++)
            region_free(&reg[i]);
    }
}

/* Reset forgets 100,000 live blocks at once and leaves a heap equal to a
 * fresh one. */
static void test_reset_many_blocks(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 150000u * 40u + 64 * KiB, 0);
    test_region extra = region_malloc(64 * KiB, 3);
    REQUIRE(rtm_tlsf_add_pool(t, extra.mem, extra.bytes) == 0);
    rtm_stats st0 = rtm_tlsf_stats(t);
    rng g = {100000u};
    void *first = NULL;
    for (size_t i = 0; i < 150000u; i++) {
        void *p = rtm_tlsf_alloc(t, rng_size(&g, 5));
        REQUIRE(p != NULL);
        if (i == 0)
            first = p;
        if (i % 3 == 1) /* some holes, so the lists are not empty */
            (void)rtm_tlsf_free(t, p);
    }
    (void)rtm_tlsf_alloc(t, SIZE_MAX);
    REQUIRE(rtm_tlsf_stats(t).live_blocks == 100000u);
    double t0 = check_now_seconds();
    rtm_tlsf_reset(t);
    double took = check_now_seconds() - t0;
    printf("  reset of %u blocks: %.1f us\n", 100000u, took * 1e6);
    rtm_stats st = rtm_tlsf_stats(t);
    CHECK_MSG(stats_equal(st, st0),
              "after reset: used %zu free %zu (want %zu) largest %zu (want %zu) live %zu peak %zu "
              "failed %zu",
              st.used_bytes, st.free_bytes, st0.free_bytes, st.largest_free, st0.largest_free,
              st.live_blocks, st.peak_used_bytes, st.failed_allocs);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    void *ptrs[4];
    size_t us[4];
    int used[4];
    walk_log w = {0, 0, 0, 0, 4, ptrs, us, used};
    rtm_tlsf_walk(t, log_block, &w);
    CHECK_EQ(w.n, 2); /* one free block per pool */
    CHECK_EQ(w.used, 0);
    /* The heap hands out the same first block as when it was fresh. */
    CHECK_PTR_EQ(rtm_tlsf_alloc(t, 1), first);
    region_free(&extra);
    region_free(&r);
}

/* --- where the metadata lives ---------------------------------------------------------- */

/* A workload that writes every usable byte of every block, checks contents
 * before each free, and ends with everything freed. */
static void full_workload(const api *a, uint64_t seed, unsigned steps, unsigned max_log2)
{
    enum { LIVE = 256 };
    unsigned char *live[LIVE];
    size_t n = 0;
    rng g = {seed};
    rtm_stats st0 = a_stats(a);
    for (unsigned step = 0; step < steps; step++) {
        size_t op = rng_below(&g, 8);
        if (op < 4 && n < LIVE) {
            unsigned char *p =
                (op == 3) ? a_aligned(a, (size_t)1 << rng_below(&g, 10), rng_size(&g, max_log2))
                          : a_alloc(a, rng_size(&g, max_log2));
            if (p != NULL) {
                fill(p, a_usable(a, p), (uintptr_t)p);
                live[n++] = p;
            }
        } else if (op < 7 && n > 0) {
            size_t i = rng_below(&g, n);
            size_t u = a_usable(a, live[i]);
            CHECK_MSG(verify(live[i], u, (uintptr_t)live[i]) == u,
                      "%s seed %llu step %u: block %p overwritten", a_name(a),
                      (unsigned long long)seed, step, (void *)live[i]);
            a_free(a, live[i]);
            live[i] = live[--n];
        } else if (n > 0) {
            size_t i = rng_below(&g, n);
            size_t keep = a_usable(a, live[i]);
            size_t want = rng_size(&g, max_log2) + 1u;
            unsigned char *q = a_realloc(a, live[i], want);
            if (q != NULL) {
                size_t kept = keep < want ? keep : want;
                CHECK_MSG(verify(q, kept, (uintptr_t)live[i]) == kept,
                          "%s seed %llu step %u: realloc lost contents", a_name(a),
                          (unsigned long long)seed, step);
                fill(q, a_usable(a, q), (uintptr_t)q);
                live[i] = q;
            }
        }
    }
    while (n > 0)
        a_free(a, live[--n]);
    CHECK_EQ(a_check(a), 0);
    CHECK_EQ(a_stats(a).free_bytes, st0.free_bytes);
}

/* Every byte the heap writes is inside its region: guard bytes around a
 * malloc'd region stay untouched, and guard pages around an mmap'd one
 * never fault, under a workload that also fills every usable byte. */
static void test_metadata_inside_region(void)
{
    enum { GUARD = 256 };
    for (int generic = 0; generic < 2; generic++) {
        size_t body = 48 * KiB + 5u;
        test_region r = region_malloc(body + 2u * GUARD, 0);
        memset(r.mem, 0xA5, r.bytes);
        unsigned char *mem = r.mem + GUARD + 3u; /* an odd start as well */
        api a = a_create(generic, mem, body);
        full_workload(&a, 31u + (uint64_t)generic, 20000, 12);
        size_t bad_lo = 0, bad_hi = 0;
        for (unsigned char *b = r.mem; b < mem; b++)
            bad_lo += *b != 0xA5;
        for (unsigned char *b = mem + body; b < r.mem + r.bytes; b++)
            bad_hi += *b != 0xA5;
        CHECK_MSG(bad_lo == 0 && bad_hi == 0, "%s: %zu guard bytes below, %zu above changed",
                  a_name(&a), bad_lo, bad_hi);
        region_free(&r);

        /* Guard pages: any access outside faults, with the region flush
         * against the upper guard. */
        guarded_region gr = region_map_guarded(12, 5u + (size_t)generic * 8u);
        api b = a_create(generic, gr.mem, gr.bytes);
        full_workload(&b, 57u + (uint64_t)generic, 20000, 13);
        region_unmap_guarded(&gr);
    }
}

typedef struct pi_block {
    size_t off;  /* from the region start */
    size_t size; /* bytes filled */
} pi_block;

/* Position independence: a heap memcpy'd to another address works there
 * through the handle moved by the same distance, and never reaches back
 * into the original (which is made inaccessible while the copy runs). */
static void test_position_independence(void)
{
    size_t page = region_page_size();
    for (int generic = 0; generic < 2; generic++) {
        guarded_region ra = region_map_guarded(16, 24), rb = region_map_guarded(16, 24);
        REQUIRE(ra.bytes == rb.bytes);
        api a = a_create(generic, ra.mem, ra.bytes);
        rtm_stats st0 = a_stats(&a);
        rng g = {4242u + (uint64_t)generic};
        enum { N = 160 };
        pi_block blocks[N];
        size_t n = 0;
        unsigned char *tmp[N];
        for (size_t i = 0; i < N; i++) {
            size_t sz = rng_size(&g, 10);
            unsigned char *p = (i % 4 == 3) ? a_aligned(&a, 256, sz) : a_alloc(&a, sz);
            REQUIRE(p != NULL);
            tmp[i] = p;
        }
        for (size_t i = 0; i < N; i++) { /* free every third: free lists in use */
            if (i % 3 == 0) {
                a_free(&a, tmp[i]);
                continue;
            }
            blocks[n].off = (size_t)(tmp[i] - ra.mem);
            blocks[n].size = a_usable(&a, tmp[i]);
            fill(tmp[i], blocks[n].size, blocks[n].off); /* keyed by offset: same in A and B */
            n++;
        }
        REQUIRE(a_check(&a) == 0);
        rtm_stats st_a = a_stats(&a);

        TRACK_OPEN(ra.mem, ra.bytes); /* the heap copied whole, headers too */
        memcpy(rb.mem, ra.mem, ra.bytes);
        unsigned char *snapshot = malloc(ra.bytes);
        REQUIRE(snapshot != NULL);
        memcpy(snapshot, ra.mem, ra.bytes);
        /* A becomes inaccessible: one access through a stale absolute
         * pointer faults. */
        REQUIRE(region_protect_none(ra.map + page, 16 * page) == 0);

        uintptr_t delta = (uintptr_t)rb.mem - (uintptr_t)ra.mem;
        api b = {NULL, NULL};
        if (generic)
            b.h = (rtm_heap *)(void *)((uintptr_t)a.h + delta);
        else
            b.t = (rtm_tlsf *)(void *)((uintptr_t)a.t + delta);
        CHECK_EQ(a_check(&b), 0);
        CHECK(stats_equal(a_stats(&b), st_a));
        for (size_t i = 0; i < n; i++) {
            unsigned char *p = rb.mem + blocks[i].off;
            CHECK_EQ(a_usable(&b, p), blocks[i].size);
            CHECK_MSG(verify(p, blocks[i].size, blocks[i].off) == blocks[i].size,
                      "%s: copied block at offset %zu differs", a_name(&b), blocks[i].off);
        }
        for (size_t i = 0; i < n; i += 2) /* free half of the copied blocks */
            a_free(&b, rb.mem + blocks[i].off);
        CHECK_EQ(a_check(&b), 0);
        full_workload(&b, 99u, 3000, 11); /* new blocks, reallocs, frees */
        for (size_t i = 1; i < n; i += 2) {
            unsigned char *p = rb.mem + blocks[i].off;
            CHECK_EQ(verify(p, blocks[i].size, blocks[i].off), blocks[i].size);
            unsigned char *q = a_realloc(&b, p, blocks[i].size + 100u);
            CHECK(q != NULL && q >= rb.mem && q < rb.mem + rb.bytes);
            if (q != NULL) {
                CHECK_EQ(verify(q, blocks[i].size, blocks[i].off), blocks[i].size);
                a_free(&b, q);
            }
        }
        rtm_stats st = a_stats(&b);
        CHECK_EQ(st.live_blocks, 0);
        CHECK_EQ(st.free_bytes, st0.free_bytes);
        CHECK_EQ(a_check(&b), 0);

        REQUIRE(region_protect_rw(ra.map + page, 16 * page) == 0);
        CHECK_MSG(memcmp(snapshot, ra.mem, ra.bytes) == 0,
                  "%s: operating on the copy changed the original", a_name(&a));
        CHECK_EQ(a_check(&a), 0); /* and the original is still a heap */
        free(snapshot);
        region_unmap_guarded(&ra);
        region_unmap_guarded(&rb);
    }
}

/* --- check finds corruption ------------------------------------------------------------ */

/* Runs check on a heap the test corrupted: -1, EFAULT, one report. */
static void expect_check_fails(rtm_tlsf *t, const char *what, size_t variant)
{
    recorder_install();
    errno = 0;
    int rc = rtm_tlsf_check(t);
    int e = errno;
    CHECK_MSG(rc == -1 && e == EFAULT, "%s (variant %zu): check returned %d, errno %d", what,
              variant, rc, e);
    CHECK_MSG(recorder()->calls == 1 && recorder()->last_kind == RTM_ERR_CHECK_FAILED,
              "%s (variant %zu): %u report(s), last %s", what, variant, recorder()->calls,
              recorder_kind_name(recorder()->last_kind));
    rtm_set_error_handler(NULL, NULL);
}

/* A fresh heap: three 200-byte blocks (a, b, c) with used separators, then
 * the rest of the pool free. */
typedef struct three {
    rtm_tlsf *t;
    unsigned char *a, *b, *c, *sep[3];
} three;

static three make_three(test_region *r)
{
    three x;
    x.t = rtm_tlsf_create(r->mem, r->bytes);
    REQUIRE(x.t != NULL);
    x.a = rtm_tlsf_alloc(x.t, 200);
    x.sep[0] = rtm_tlsf_alloc(x.t, 40);
    x.b = rtm_tlsf_alloc(x.t, 200);
    x.sep[1] = rtm_tlsf_alloc(x.t, 40);
    x.c = rtm_tlsf_alloc(x.t, 200);
    x.sep[2] = rtm_tlsf_alloc(x.t, 40);
    REQUIRE(x.a && x.b && x.c && x.sep[0] && x.sep[1] && x.sep[2]);
    REQUIRE(rtm_tlsf_check(x.t) == 0);
    return x;
}

static ptrdiff_t offset_in(const three *x, const void *p)
{
    return (ptrdiff_t)((uintptr_t)p - (uintptr_t)x->t);
}

/* A free-list link to p: its offset plus one (tlsf_layout.h, links). */
static ptrdiff_t link_in(const three *x, const void *p) { return offset_in(x, p) + 1; }

static void test_check_detects_corruption(void)
{
    test_region r = region_malloc(64 * KiB, 0);

    /* A used block's header: span changed (bigger, smaller, 0, huge). */
    for (size_t v = 0; v < 5; v++) {
        three x = make_three(&r);
        uint32_t h = header_of(x.b);
        const uint32_t bad[] = {h + 8u, h - 8u, h & 7u, 0xFFFFFFF8u | (h & 7u), h + 4096u};
        put32(x.b - HDR, bad[v]);
        expect_check_fails(x.t, "used block header span overwritten", v);
    }

    /* A free block's next link: list (all spans equal) is c -> b -> a. */
    for (size_t v = 0; v < 9; v++) {
        three x = make_three(&r);
        REQUIRE(rtm_tlsf_free(x.t, x.a) == 0 && rtm_tlsf_free(x.t, x.b) == 0 &&
                rtm_tlsf_free(x.t, x.c) == 0);
        REQUIRE(rtm_tlsf_check(x.t) == 0);
        ptrdiff_t next;
        memcpy(&next, x.b, sizeof next);
        REQUIRE(next == link_in(&x, x.a)); /* the layout this test assumes */
        const ptrdiff_t bad[] = {0,
                                 link_in(&x, x.b),
                                 link_in(&x, x.c),
                                 link_in(&x, x.sep[0]),
                                 link_in(&x, x.a) + 8,
                                 link_in(&x, x.a) + 4,
                                 offset_in(&x, x.a),  /* even: a link of layout 2 */
                                 PTRDIFF_MAX / 2 + 1, /* far outside any pool */
                                 -64};
        memcpy(x.b, &bad[v], sizeof bad[v]);
        expect_check_fails(x.t, "free block's next link overwritten", v);
    }

    /* A free block's footer (the span copy in its last 4 bytes). */
    for (size_t v = 0; v < 3; v++) {
        three x = make_three(&r);
        REQUIRE(rtm_tlsf_free(x.t, x.b) == 0);
        size_t span = header_of(x.b) & ~(uint32_t)7u;
        unsigned char *footer = x.b + span - 2u * HDR;
        REQUIRE(get32(footer) == span);
        const uint32_t bad[] = {(uint32_t)span + 8u, (uint32_t)span - 8u, 0u};
        put32(footer, bad[v]);
        expect_check_fails(x.t, "free block footer overwritten", v);
    }

    /* The free tail's header flag: a FREE bit cleared makes a used block
     * that the lists still hold. */
    {
        three x = make_three(&r);
        unsigned char *tail = x.sep[2] + span_for(40);
        REQUIRE((header_of(tail) & 1u) != 0);
        put32(tail - HDR, header_of(tail) & ~1u);
        expect_check_fails(x.t, "free block marked used", 0);
    }
    region_free(&r);
}

/* Where a heap keeps metadata: each header, and a free block's links and
 * footer. Garbage aimed there reaches deep into check. */
typedef struct meta_spots {
    size_t n;
    uintptr_t at[1024];
} meta_spots;

static void meta_visit(void *ptr, size_t usable, int used, void *arg)
{
    meta_spots *m = arg;
    uintptr_t p = (uintptr_t)ptr;
    if (m->n < 1020) {
        m->at[m->n++] = p - HDR;
        if (!used) {
            m->at[m->n++] = p;
            m->at[m->n++] = p + sizeof(ptrdiff_t);
            m->at[m->n++] = p + usable - HDR; /* footer: span - 8 from p */
        }
    }
}

/* check trusts nothing it reads: garbage in the block area of a busy heap,
 * half of it aimed at headers, links and footers, gives 0 or -1 (with
 * EFAULT and one report), never a crash or a hang. The pool record (two
 * offsets at the pool's start) is left alone: the pool list is the root
 * check walks from. */
static void test_check_survives_garbage(void)
{
    test_region r = region_malloc(32 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
    REQUIRE(t != NULL);
    rng g = {0xBADull};
    void *live[200];
    size_t n = 0;
    for (size_t i = 0; i < 400; i++) {
        void *p = rtm_tlsf_alloc(t, rng_size(&g, 8));
        if (p != NULL && n < 200)
            live[n++] = p;
        if (n > 0 && rng_below(&g, 3) == 0) {
            size_t k = rng_below(&g, n);
            (void)rtm_tlsf_free(t, live[k]);
            live[k] = live[--n];
        }
    }
    REQUIRE(rtm_tlsf_check(t) == 0);
    static meta_spots spots;
    spots.n = 0;
    rtm_tlsf_walk(t, meta_visit, &spots);
    REQUIRE(spots.n > 100);
    unsigned char *pristine = malloc(r.bytes);
    REQUIRE(pristine != NULL);
    memcpy(pristine, r.mem, r.bytes);
    size_t lo = rtm_tlsf_control_size() + 2u * sizeof(ptrdiff_t); /* after the pool record */
    size_t span = r.bytes - lo;
    size_t failed = 0;
    recorder_install();
    for (unsigned trial = 0; trial < 3000; trial++) {
        memcpy(r.mem, pristine, r.bytes);
        unsigned writes = 1u + (unsigned)rng_below(&g, 6);
        for (unsigned w = 0; w < writes; w++) {
            size_t at = lo + (rng_below(&g, span - 8u) & ~(size_t)3u);
            if (rng_below(&g, 2) == 0) /* aim at metadata */
                at = (size_t)(spots.at[rng_below(&g, spots.n)] - (uintptr_t)r.mem);
            uint64_t v = rng_next(&g);
            switch (rng_below(&g, 4)) {
            case 0: /* random bytes */
                memcpy(r.mem + at, &v, 8);
                break;
            case 1: /* a plausible header: small span, random flags */
                put32(r.mem + at, (uint32_t)((v % 512u) * 8u) | (uint32_t)(v >> 61));
                break;
            case 2: { /* a plausible link: an offset inside the region */
                ptrdiff_t off = (ptrdiff_t)(v % r.bytes) - (ptrdiff_t)(v % 16u);
                memcpy(r.mem + (at & ~(size_t)7u), &off, sizeof off);
                break;
            }
            default: /* one bit flipped */
                r.mem[at + (v & 3u)] ^= (unsigned char)(1u << ((v >> 8) & 7u));
                break;
            }
        }
        recorder_reset();
        errno = 0;
        int rc = rtm_tlsf_check(t);
        CHECK_MSG(rc == 0 || rc == -1, "trial %u: check returned %d", trial, rc);
        if (rc == -1) {
            failed++;
            CHECK_MSG(errno == EFAULT && recorder()->calls == 1 &&
                          recorder()->last_kind == RTM_ERR_CHECK_FAILED,
                      "trial %u: check failed with errno %d and %u report(s)", trial, errno,
                      recorder()->calls);
        }
    }
    rtm_set_error_handler(NULL, NULL);
    printf("  %zu of 3000 corrupted heaps rejected by check\n", failed);
    CHECK(failed > 1500); /* aimed garbage mostly breaks an invariant */
    free(pristine);
    region_free(&r);
}

/* --- misuse at free ---------------------------------------------------------------------- */

/* A double free is refused and reported whatever the block's neighbours
 * were when it was first freed: used on both sides, or free (so the block
 * merged into them) on the left, the right or both: [a][X][c][sep]. The
 * rejected call changes nothing. */
static void test_double_free(void)
{
    test_region r = region_malloc(64 * KiB, 0);
    static const char *const config[] = {"used|X|used", "free|X|used", "used|X|free",
                                         "free|X|free"};
    for (unsigned cfg = 0; cfg < 4; cfg++) {
        rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
        REQUIRE(t != NULL);
        unsigned char *a = rtm_tlsf_alloc(t, 200), *b = rtm_tlsf_alloc(t, 200),
                      *c = rtm_tlsf_alloc(t, 200), *sep = rtm_tlsf_alloc(t, 40);
        REQUIRE(a && b && c && sep && b == a + span_for(200) && c == b + span_for(200));
        if (cfg & 1u)
            REQUIRE(rtm_tlsf_free(t, a) == 0);
        if (cfg & 2u)
            REQUIRE(rtm_tlsf_free(t, c) == 0);
        REQUIRE(rtm_tlsf_free(t, b) == 0);
        rtm_stats st0 = rtm_tlsf_stats(t);
        recorder_install();
        errno = 0;
        int rc = rtm_tlsf_free(t, b);
        int e = errno;
        CHECK_MSG(rc == -1 && e == EINVAL,
                  "[%s] then free(X) twice: second free returned %d, errno %d (want -1, EINVAL)",
                  config[cfg], rc, e);
        CHECK_MSG(recorder()->by_kind[RTM_ERR_DOUBLE_FREE] == 1 && recorder()->calls == 1,
                  "[%s]: %u report(s), last %s (want one RTM_ERR_DOUBLE_FREE)", config[cfg],
                  recorder()->calls, recorder_kind_name(recorder()->last_kind));
        rtm_set_error_handler(NULL, NULL);
        rtm_stats st = rtm_tlsf_stats(t);
        CHECK_MSG(stats_equal(st, st0),
                  "[%s]: the rejected free changed stats: free_bytes %zu -> %zu, live %zu -> %zu",
                  config[cfg], st0.free_bytes, st.free_bytes, st0.live_blocks, st.live_blocks);
        CHECK_MSG(rtm_tlsf_check(t) == 0, "[%s]: heap damaged by the second free", config[cfg]);
    }
    region_free(&r);
}

/* A pointer that is not 8-aligned cannot be a block: refused, reported as
 * foreign, nothing changes. Through realloc too. */
static void test_misaligned_free(void)
{
    test_region r;
    rtm_tlsf *t = typed_heap(&r, 16 * KiB, 0);
    unsigned char *p = rtm_tlsf_alloc(t, 100);
    REQUIRE(p != NULL);
    fill(p, 100, 5);
    rtm_stats st0 = rtm_tlsf_stats(t);
    recorder_install();
    for (size_t k = 1; k < 8; k++) {
        recorder_reset();
        errno = 0;
        CHECK_EQ(rtm_tlsf_free(t, p + k), -1);
        CHECK_ERRNO(EINVAL);
        CHECK_MSG(recorder()->calls == 1 && recorder()->last_kind == RTM_ERR_FOREIGN_POINTER,
                  "free(p + %zu): %u report(s), last %s", k, recorder()->calls,
                  recorder_kind_name(recorder()->last_kind));
        CHECK_PTR_EQ(recorder()->last_ptr, p + k);
        recorder_reset();
        errno = 0;
        CHECK(rtm_tlsf_realloc(t, p + k, 50) == NULL);
        CHECK_ERRNO(EINVAL);
        CHECK_EQ(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER], 1);
    }
    rtm_set_error_handler(NULL, NULL);
    CHECK(stats_equal(rtm_tlsf_stats(t), st0));
    CHECK_EQ(verify(p, 100, 5), 100);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    CHECK_EQ(rtm_tlsf_free(t, p), 0);
    region_free(&r);
}

/* --- sizes and alignments no heap serves ------------------------------------------------- */

static void test_impossible_sizes(void)
{
    for (int generic = 0; generic < 2; generic++) {
        test_region r = region_malloc(64 * KiB, 0);
        api a = a_create(generic, r.mem, r.bytes);
        void *p = a_alloc(&a, 100);
        REQUIRE(p != NULL);
        rtm_stats st0 = a_stats(&a);
        const size_t sizes[] = {SIZE_MAX, RTM_TLSF_MAX_BLOCK + 1u};
        size_t refusals = 0;
        for (size_t i = 0; i < 2; i++) {
            errno = 0;
            CHECK_MSG(a_alloc(&a, sizes[i]) == NULL, "%s alloc(%zu)", a_name(&a), sizes[i]);
            CHECK_ERRNO(ENOMEM);
            errno = 0;
            CHECK_MSG(a_aligned(&a, 64, sizes[i]) == NULL, "%s aligned(64, %zu)", a_name(&a),
                      sizes[i]);
            CHECK_ERRNO(ENOMEM);
            errno = 0;
            CHECK_MSG(a_realloc(&a, NULL, sizes[i]) == NULL, "%s realloc(NULL, %zu)", a_name(&a),
                      sizes[i]);
            CHECK_ERRNO(ENOMEM);
            errno = 0;
            CHECK_MSG(a_realloc(&a, p, sizes[i]) == NULL, "%s realloc(p, %zu)", a_name(&a),
                      sizes[i]);
            CHECK_ERRNO(ENOMEM);
            refusals += 4;
            CHECK_EQ(a_stats(&a).failed_allocs, st0.failed_allocs + refusals);
        }
        rtm_stats st = a_stats(&a);
        st.failed_allocs = st0.failed_allocs;
        CHECK(stats_equal(st, st0));
        CHECK_EQ(a_usable(&a, p), 100u + (span_for(100) - 100u - HDR));
        CHECK_EQ(a_check(&a), 0);
        region_free(&r);
    }
}

/* Every power of two from 1 to 1 MiB is honoured; non-powers are EINVAL. */
static void test_aligned_alloc_all_powers(void)
{
    for (int generic = 0; generic < 2; generic++) {
        test_region r = region_malloc(16 * MiB, 7);
        api a = a_create(generic, r.mem, r.bytes);
        rtm_stats st0 = a_stats(&a);
        enum { MAXLOG = 20 };
        const size_t sizes[] = {0, 1, 100, 5000};
        void *blocks[(MAXLOG + 1) * 4];
        size_t n = 0;
        for (unsigned k = 0; k <= MAXLOG; k++) {
            size_t align = (size_t)1 << k;
            for (size_t i = 0; i < 4; i++) {
                unsigned char *p = a_aligned(&a, align, sizes[i]);
                CHECK_MSG(p != NULL, "%s aligned_alloc(%zu, %zu) failed", a_name(&a), align,
                          sizes[i]);
                if (p == NULL)
                    continue;
                size_t want = align > RTM_ALIGN ? align : RTM_ALIGN;
                CHECK_MSG((uintptr_t)p % want == 0, "%s aligned_alloc(%zu, %zu) = %p", a_name(&a),
                          align, sizes[i], (void *)p);
                CHECK(a_usable(&a, p) >= sizes[i]);
                fill(p, a_usable(&a, p), (uintptr_t)p);
                blocks[n++] = p;
            }
        }
        CHECK_EQ(a_check(&a), 0);
        for (size_t i = 0; i < n; i++) {
            size_t u = a_usable(&a, blocks[i]);
            CHECK_EQ(verify(blocks[i], u, (uintptr_t)blocks[i]), u);
            a_free(&a, blocks[i]);
        }
        rtm_stats st = a_stats(&a);
        CHECK_EQ(st.free_bytes, st0.free_bytes);
        CHECK_EQ(st.largest_free, st0.largest_free);
        CHECK_EQ(a_check(&a), 0);

        const size_t bad[] = {0, 3, 24};
        st0 = a_stats(&a);
        for (size_t i = 0; i < 3; i++) {
            errno = 0;
            CHECK_MSG(a_aligned(&a, bad[i], 16) == NULL, "%s aligned_alloc(%zu) accepted",
                      a_name(&a), bad[i]);
            CHECK_ERRNO(EINVAL);
        }
        CHECK(stats_equal(a_stats(&a), st0)); /* EINVAL is not an ENOMEM refusal */
        region_free(&r);
    }
}

int main(void)
{
    RUN_TEST(test_rounded_size_pitfall);
    RUN_TEST(test_largest_free_exact);
    RUN_TEST(test_exact_fit_gap);
    RUN_TEST(test_exact_overhead);
    RUN_TEST(test_alloc_zero);
    RUN_TEST(test_realloc_grow_in_place);
    RUN_TEST(test_realloc_shrink_in_place);
    RUN_TEST(test_realloc_move_and_alignment);
    RUN_TEST(test_realloc_failure_keeps_block);
    RUN_TEST(test_several_pools);
    RUN_TEST(test_reset_many_blocks);
    RUN_TEST(test_metadata_inside_region);
    RUN_TEST(test_position_independence);
    RUN_TEST(test_check_detects_corruption);
    RUN_TEST(test_double_free);
    RUN_TEST(test_misaligned_free);
    RUN_TEST(test_impossible_sizes);
    RUN_TEST(test_aligned_alloc_all_powers);
    /* Last: a sanitizer build aborts here on a finding (see the test). */
    RUN_TEST(test_check_survives_garbage);
    return check_summary();
}
