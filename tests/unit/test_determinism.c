// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_determinism.c -- the O(1) claim of the TLSF heap, counted.
 *
 * This program links rtmem_steps_variant, built with RTM_TLSF_COUNT_STEPS=1:
 * every STEP() site in src/heaps/tlsf.c (a list insertion, a list removal,
 * taking a block from a list, the probe of a request's own list) adds one to
 * a counter that rtm_tlsf_last_steps() returns for the last alloc, free or
 * realloc. A bounded-time allocator has a constant worst case; so this file
 *  1. builds the worst heap states it can, on a 64 KiB heap and on a 1 GiB
 *     heap: a free block in every list a ladder of spans reaches, deep
 *     fragmentation, frees between two free neighbours, small requests split
 *     from one huge block, requests only the exact-fit probe serves,
 *     requests that fail, aligned requests, reallocs in place;
 *  2. records the largest step count per kind of operation on each heap and
 *     fails when the two heaps differ (work that grows with the heap) or when
 *     a maximum exceeds the bound derived from the code below, or does not
 *     reach it (then the bound or the worst states are stale);
 *  3. drives 100,000 random operations on each heap and holds every single
 *     one to the bound.
 *
 * The bounds, counted on the worst path of src/heaps/tlsf.c (re-derive them
 * when that file changes; the tightness check will say so):
 *
 *   alloc          find_free_block: the probe of the request's own list (1);
 *                  then either that list's head fits and is unlinked,
 *                  list_remove (1), or list_search finds a list and
 *                  list_take_any (1) takes a block from it; then use_block
 *                  splits and list_insert's the tail (1).            = 3
 *                  (a refusal stops after the probe and the search: 1)
 *   aligned alloc  list_take_any (1) or, on a search miss, the probe's
 *                  list_remove (1) -- the probe itself has no STEP; then
 *                  align_within list_insert's the leading gap (1) and
 *                  use_block the tail (1).                           = 3
 *   free           release_block: list_remove of a free left neighbour (1),
 *                  of a free right neighbour (1), list_insert of the merged
 *                  block (1).                                        = 3
 *   realloc in     shrink: list_remove of a free right neighbour (1) and
 *   place          list_insert of the tail merged with it (1); grow:
 *                  list_remove of the absorbed neighbour (1) and list_insert
 *                  of the split tail (1) -- the block after the neighbour is
 *                  used, so that shrink never removes again.          = 2
 *
 * A realloc that moves is alloc (or aligned alloc) + copy + free, and
 * last_steps() reports the sum of both; it is held to the larger alloc
 * bound plus the free bound and not tabulated.
 */
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"

#define KiB      ((size_t)1024)
#define MiB      (KiB * KiB)
#define GiB      (KiB * MiB)
#define HDR      ((size_t)RTM_TLSF_HEADER_BYTES)
#define MIN_SPAN (RTM_TLSF_MIN_BLOCK + HDR)

enum op_kind { K_ALLOC, K_ALIGNED, K_FREE, K_REALLOC_IN_PLACE, K_COUNT };

static const char *const kind_name[K_COUNT] = {"alloc", "aligned alloc", "free",
                                               "realloc in place"};
/* The derivation is in the comment at the top of this file. */
static const size_t bound[K_COUNT] = {3, 3, 3, 2};
#define BOUND_REFUSED_ALLOC 1u /* probe + search, nothing found */

typedef struct maxima {
    size_t max[K_COUNT];
    size_t ops[K_COUNT];
    const char *where[K_COUNT]; /* which scenario reached the maximum first */
} maxima;

/* One heap under test and what it has seen so far. */
typedef struct bench {
    const char *name;
    rtm_tlsf *t;
    maxima worst;      /* scenarios (worst states) */
    maxima random;     /* the random run */
    maxima *now;       /* where record() writes */
    const char *scen;  /* scenario running now, for messages */
    size_t violations; /* operations over their bound (the first few are printed) */
} bench;

static void record(bench *b, enum op_kind k, size_t steps)
{
    maxima *m = b->now;
    m->ops[k]++;
    if (m->where[k] == NULL || steps > m->max[k]) {
        m->where[k] = b->scen;
        m->max[k] = steps;
    }
    if (steps > bound[k] && b->violations++ < 5)
        CHECK_MSG(steps <= bound[k], "%s, %s: a %s took %zu steps, bound %zu", b->name, b->scen,
                  kind_name[k], steps, bound[k]);
}

/* --- measured operations ------------------------------------------------------- */

static void *m_alloc(bench *b, size_t n)
{
    void *p = rtm_tlsf_alloc(b->t, n);
    size_t steps = rtm_tlsf_last_steps(b->t);
    record(b, K_ALLOC, steps);
    if (p == NULL) {
        if (steps > BOUND_REFUSED_ALLOC && b->violations++ < 5)
            CHECK_MSG(steps <= BOUND_REFUSED_ALLOC, "%s, %s: refused alloc(%zu) took %zu steps",
                      b->name, b->scen, n, steps);
    } else
        CHECK_MSG(steps >= 1, "%s, %s: alloc(%zu) counted no step (is the counter on?)", b->name,
                  b->scen, n);
    return p;
}

static void *m_aligned(bench *b, size_t align, size_t n)
{
    void *p = rtm_tlsf_aligned_alloc(b->t, align, n);
    /* align <= 8 is a plain alloc */
    record(b, align <= RTM_ALIGN ? K_ALLOC : K_ALIGNED, rtm_tlsf_last_steps(b->t));
    if (p != NULL)
        CHECK_MSG((uintptr_t)p % align == 0, "aligned_alloc(%zu) gave %p", align, p);
    return p;
}

static void m_free(bench *b, void *p)
{
    CHECK_EQ(rtm_tlsf_free(b->t, p), 0);
    size_t steps = rtm_tlsf_last_steps(b->t);
    record(b, K_FREE, steps);
    CHECK_MSG(steps >= 1, "%s, %s: free counted no step", b->name, b->scen);
}

/* Returns the new pointer or NULL; in-place results are tabulated, moves and
 * failures only bounded (see the top comment). */
static void *m_realloc(bench *b, void *p, size_t n)
{
    void *q = rtm_tlsf_realloc(b->t, p, n);
    size_t steps = rtm_tlsf_last_steps(b->t);
    if (q == p) {
        record(b, K_REALLOC_IN_PLACE, steps);
    } else if (q != NULL) {
        size_t limit =
            (bound[K_ALLOC] > bound[K_ALIGNED] ? bound[K_ALLOC] : bound[K_ALIGNED]) + bound[K_FREE];
        if (steps > limit && b->violations++ < 5)
            CHECK_MSG(steps <= limit, "%s, %s: moving realloc reported %zu steps", b->name, b->scen,
                      steps);
        /* The move's free must have been counted on top of its alloc. */
        if (steps <= bound[K_FREE] / 2u && b->violations++ < 5)
            CHECK_MSG(steps > bound[K_FREE] / 2u, "%s, %s: moving realloc counted only %zu steps",
                      b->name, b->scen, steps);
    } else {
        size_t limit = bound[K_ALLOC] > bound[K_ALIGNED] ? bound[K_ALLOC] : bound[K_ALIGNED];
        if (steps > limit && b->violations++ < 5)
            CHECK_MSG(steps <= limit, "%s, %s: failed realloc took %zu steps", b->name, b->scen,
                      steps);
    }
    return q;
}

/* --- building blocks of worst states ------------------------------------------- */

/* Spans that start a free list under any second-level setting: 16 per
 * power of two (the finest the layout allows, RTM_TLSF_SL_LOG2 = 4), so with
 * coarser lists several rungs share a list and still every list gets one.
 * Spans below 128 step by the 8-byte granule. */
static size_t list_bounds(size_t *out, size_t cap, size_t max_span)
{
    size_t n = 0;
    for (size_t s = MIN_SPAN; s < 128 && n < cap; s += 8)
        out[n++] = s;
    for (size_t f = 128; f <= max_span; f *= 2u)
        for (size_t sl = 0; sl < 16 && n < cap; sl++) {
            size_t s = f + sl * (f / 16u);
            if (s > max_span)
                return n;
            out[n++] = s;
        }
    return n;
}

typedef struct ladder {
    size_t n;
    size_t reserve; /* free space kept back for the requests that probe it */
    size_t span[1024];
    unsigned char *blk[1024];
} ladder;

/* Allocates a rung of span s and a used separator after it, if the heap
 * still has room for them and for the scenario's own blocks. */
static int add_rung(bench *b, ladder *l, size_t s)
{
    size_t room = rtm_tlsf_stats(b->t).largest_free;
    if (l->n == 1024 || s + 2u * MIN_SPAN + l->reserve > room)
        return 0;
    unsigned char *p = m_alloc(b, s - HDR);
    REQUIRE(p != NULL);
    /* A rung near the end of the free space may keep its tail (the tail
     * rule, tlsf_layout.h); giving it back trims the rung to span s. */
    if (rtm_tlsf_usable_size(p) != s - HDR)
        REQUIRE(rtm_tlsf_realloc(b->t, p, s - HDR) == p);
    void *sep = m_alloc(b, 0);
    REQUIRE(sep != NULL);
    REQUIRE(rtm_tlsf_usable_size(p) == s - HDR);
    l->span[l->n] = s;
    l->blk[l->n++] = p;
    return 1;
}

/* A free block in as many lists as the heap can hold at once, each between
 * used minimum blocks so nothing merges: alloc the ladder, then free it.
 * Not every list fits at once (their lower bounds sum to far more than the
 * heap), so there are two shapes: `top` first puts one block at the lower
 * bound of each first-level class, smallest up (they sum to twice the
 * largest, so every class up to half the heap gets one, and the free rest
 * of the heap lands in the class above); then both shapes fill every list
 * they still can, smallest up. */
static void build_ladder(bench *b, ladder *l, int top)
{
    size_t bounds[1024];
    size_t nb = list_bounds(bounds, 1024, (size_t)1 << 31);
    l->n = 0;
    l->reserve = rtm_tlsf_stats(b->t).largest_free / 128u;
    if (top)
        for (size_t f = 128; f <= ((size_t)1 << 31) && add_rung(b, l, f); f *= 2u)
            ;
    for (size_t i = 0; i < nb; i++)
        if (!add_rung(b, l, bounds[i]))
            break;
    for (size_t i = 0; i < l->n; i++)
        m_free(b, l->blk[i]);
    REQUIRE(rtm_tlsf_check(b->t) == 0);
}

/* --- the worst-state scenarios --------------------------------------------------- */

/* A small request split from one huge free block, on a fresh heap. */
static void scenario_split_huge(bench *b)
{
    b->scen = "small request from one huge block";
    rtm_tlsf_reset(b->t);
    void *p = m_alloc(b, 1), *q = m_alloc(b, 0), *r = m_aligned(b, 4096, 10);
    REQUIRE(p && q && r);
    m_free(b, q); /* between a used block and a used block */
    m_free(b, p); /* between the heap start and a free block */
    m_free(b, r); /* between two free blocks */
    CHECK_EQ(rtm_tlsf_check(b->t), 0);
}

/* Requests against a ladder, from every list it populated: exact requests
 * (the probe takes the head), requests a little smaller (split, or taken
 * from a higher list by the search), a little larger (the search goes up),
 * aligned requests, and one byte more than the largest free block and
 * SIZE_MAX (refused). Each block is freed again, so the state stays. */
static void probe_ladder(bench *b, const ladder *l)
{
    const long deltas[] = {0, -8, -16, -24, -32, -48, -64, -128, +8, +16, +64};
    for (size_t i = 0; i < l->n; i++) {
        for (size_t d = 0; d < sizeof deltas / sizeof deltas[0]; d++) {
            long want = (long)l->span[i] + deltas[d];
            if (want < (long)MIN_SPAN)
                continue;
            void *p = m_alloc(b, (size_t)want - HDR);
            if (p != NULL)
                m_free(b, p);
        }
        for (size_t k = 4; k <= 12; k += 4) {
            void *p = m_aligned(b, (size_t)1 << k, l->span[i] / 2u);
            if (p != NULL)
                m_free(b, p);
        }
    }
    size_t lf = rtm_tlsf_stats(b->t).largest_free;
    CHECK(m_alloc(b, lf + 1u) == NULL);
    CHECK(m_alloc(b, SIZE_MAX) == NULL);
    CHECK(m_aligned(b, 64, lf + 1u) == NULL);
    CHECK_EQ(rtm_tlsf_check(b->t), 0);
}

static void scenario_ladder(bench *b)
{
    static ladder l;
    for (int top = 0; top < 2; top++) {
        b->scen = top ? "free block in every class" : "free block in every list";
        rtm_tlsf_reset(b->t);
        build_ladder(b, &l, top);
        REQUIRE(l.n > 20);
        size_t lo = l.span[0], hi = l.span[0];
        for (size_t i = 1; i < l.n; i++) {
            lo = l.span[i] < lo ? l.span[i] : lo;
            hi = l.span[i] > hi ? l.span[i] : hi;
        }
        printf("  %s, %s: %zu free rungs (spans %zu .. %zu)\n", b->name, b->scen, l.n, lo, hi);
        probe_ladder(b, &l);
    }
}

/* Deep fragmentation: a long run of blocks of many classes; every other one
 * freed (each insertion among hundreds of members), then the rest freed so
 * each merges with two free neighbours of different lists. Then requests
 * into the merged space. */
static void scenario_fragmentation(bench *b, size_t count)
{
    static unsigned char *blk[4096];
    b->scen = "deep fragmentation";
    rtm_tlsf_reset(b->t);
    REQUIRE(count <= 4096);
    size_t n = 0;
    for (; n < count; n++) {
        blk[n] = m_alloc(b, 20u + (n * 40u) % 600u);
        if (blk[n] == NULL)
            break;
    }
    REQUIRE(n > 100);
    void *tail_sep = m_alloc(b, 0); /* so the last block has a used right side */
    for (size_t i = 0; i < n; i += 2)
        m_free(b, blk[i]);
    for (size_t i = 0; i < n; i += 2) { /* reuse some holes: probes and takes */
        void *p = m_alloc(b, 20u + (i * 40u) % 600u);
        if (p != NULL)
            m_free(b, p);
    }
    for (size_t i = 1; i < n; i += 2)
        m_free(b, blk[i]); /* free | X | free */
    if (tail_sep != NULL)
        m_free(b, tail_sep);
    CHECK_EQ(rtm_tlsf_check(b->t), 0);
    CHECK_EQ(rtm_tlsf_stats(b->t).live_blocks, 0);
}

/* Requests only the exact-fit probe serves: the only free block has a span
 * just above its list's lower bound, and every higher list is empty. */
static void scenario_exact_fit_probe(bench *b)
{
    b->scen = "exact-fit probe";
    const size_t lower[] = {1024, 4096, 16384};
    for (size_t i = 0; i < 3; i++) {
        size_t s = lower[i] + lower[i] / 32u; /* middle of a list 1/16 wide */
        rtm_tlsf_reset(b->t);
        unsigned char *x = m_alloc(b, s - HDR);
        void *sep = m_alloc(b, 0);
        REQUIRE(x && sep);
        void *rest = m_alloc(b, rtm_tlsf_stats(b->t).largest_free);
        REQUIRE(rest != NULL);
        m_free(b, x);
        for (size_t d = 0; d <= 64; d += 8) {
            void *p = m_alloc(b, s - HDR - d);
            CHECK_MSG(p == x, "%s: the exact-fit probe missed alloc(%zu)", b->name, s - HDR - d);
            if (p != NULL)
                m_free(b, p);
        }
        CHECK(m_alloc(b, s - HDR + 1u) == NULL); /* one more: refused */
        CHECK_EQ(rtm_tlsf_check(b->t), 0);
    }
}

/* Reallocs in place against a free right neighbour and a used one. */
static void scenario_realloc_in_place(bench *b)
{
    b->scen = "realloc in place";
    rtm_tlsf_reset(b->t);
    unsigned char *x = m_alloc(b, 1000), *r = m_alloc(b, 3000);
    void *sep = m_alloc(b, 0);
    REQUIRE(x && r && sep);
    m_free(b, r);
    CHECK(m_realloc(b, x, 200) == x);      /* shrink, tail merges into r */
    CHECK(m_realloc(b, x, 2000) == x);     /* grow into r, split */
    CHECK(m_realloc(b, x, 2000 + 8) == x); /* grow by a crumb */
    /* x and its free neighbour still tile the first two blocks' spans */
    size_t all = (1000u + HDR + 7u) / 8u * 8u + (3000u + HDR + 7u) / 8u * 8u - HDR;
    CHECK(m_realloc(b, x, all) == x); /* absorb the neighbour whole */
    CHECK(m_realloc(b, x, 100) == x); /* shrink against a used neighbour */
    CHECK(m_realloc(b, x, 90) == x);  /* a tail too small to stand alone */
    m_free(b, x);
    m_free(b, sep);
    CHECK_EQ(rtm_tlsf_check(b->t), 0);
}

/* Aligned requests: a gap split before and a tail after, on a fresh heap and
 * on the ladder, for alignments up to 64 KiB. */
static void scenario_aligned(bench *b)
{
    static ladder l;
    b->scen = "aligned alloc";
    for (int state = 0; state < 2; state++) {
        rtm_tlsf_reset(b->t);
        if (state == 1)
            build_ladder(b, &l, 0);
        void *keep[17];
        size_t n = 0;
        for (unsigned k = 4; k <= 16; k++) {
            void *p = m_aligned(b, (size_t)1 << k, 100u * k);
            if (p != NULL)
                keep[n++] = p;
        }
        CHECK_MSG(n >= (state ? 3u : 8u), "%s: only %zu aligned requests served", b->name, n);
        while (n > 0)
            m_free(b, keep[--n]);
        CHECK_EQ(rtm_tlsf_check(b->t), 0);
    }
}

/* --- random operations ------------------------------------------------------------- */

/* 100,000 random allocs, aligned allocs, frees and reallocs; every one is
 * held to its bound by record(). Sizes spread up to 2^max_log2. */
static void random_run(bench *b, uint64_t seed, unsigned max_log2)
{
    enum { LIVE = 2048 };
    static void *live[LIVE];
    size_t n = 0;
    rng g = {seed};
    b->scen = "random";
    b->now = &b->random;
    rtm_tlsf_reset(b->t);
    for (unsigned step = 0; step < 100000u; step++) {
        size_t op = rng_below(&g, 20);
        if (op < 8 && n < LIVE) {
            void *p = m_alloc(b, rng_size(&g, max_log2));
            if (p != NULL)
                live[n++] = p;
        } else if (op < 10 && n < LIVE) {
            void *p = m_aligned(b, (size_t)1 << rng_below(&g, 13), rng_size(&g, max_log2));
            if (p != NULL)
                live[n++] = p;
        } else if (op < 17 && n > 0) {
            size_t i = rng_below(&g, n);
            m_free(b, live[i]);
            live[i] = live[--n];
        } else if (n > 0) {
            size_t i = rng_below(&g, n);
            void *q = m_realloc(b, live[i], rng_size(&g, max_log2) + 1u);
            if (q != NULL)
                live[i] = q;
        }
        if (step % 10000u == 0)
            CHECK_MSG(rtm_tlsf_check(b->t) == 0,
                      "%s: random run (seed %llu) broke the heap "
                      "by step %u",
                      b->name, (unsigned long long)seed, step);
    }
    while (n > 0)
        m_free(b, live[--n]);
    CHECK_EQ(rtm_tlsf_check(b->t), 0);
    b->now = &b->worst;
}

/* --- the two heaps ------------------------------------------------------------------- */

static void run_worst_states(bench *b, size_t frag_blocks)
{
    b->now = &b->worst;
    scenario_split_huge(b);
    scenario_ladder(b);
    scenario_fragmentation(b, frag_blocks);
    scenario_exact_fit_probe(b);
    scenario_realloc_in_place(b);
    scenario_aligned(b);
}

static void test_step_bounds(void)
{
    static bench small, big;
    memset(&small, 0, sizeof small);
    memset(&big, 0, sizeof big);

    test_region r = region_malloc(64 * KiB, 0);
    small.name = "64 KiB heap";
    small.t = rtm_tlsf_create(r.mem, r.bytes);
    REQUIRE(small.t != NULL);

    /* 1 GiB reserved, not committed: the heap writes only headers, links and
     * footers, so a few MiB become real. */
    void *huge = region_map_sparse(GiB);
    REQUIRE(huge != NULL && "mmap(1 GiB, MAP_NORESERVE) refused");
    big.name = "1 GiB heap";
    big.t = rtm_tlsf_create(huge, GiB);
    REQUIRE(big.t != NULL);
    REQUIRE(rtm_tlsf_stats(big.t).largest_free > GiB - MiB);

    run_worst_states(&small, 4096);
    run_worst_states(&big, 4096);

    printf("  %-18s %14s %14s %6s   reached first in (1 GiB)\n", "worst steps", "64 KiB heap",
           "1 GiB heap", "bound");
    for (int k = 0; k < K_COUNT; k++) {
        printf("  %-18s %8zu/%-5zu %8zu/%-5zu %6zu   %s\n", kind_name[k], small.worst.max[k],
               small.worst.ops[k], big.worst.max[k], big.worst.ops[k], bound[k],
               big.worst.where[k] ? big.worst.where[k] : "-");
        CHECK_MSG(small.worst.max[k] == big.worst.max[k],
                  "%s: worst case %zu steps on 64 KiB but %zu on 1 GiB: work grows with the heap",
                  kind_name[k], small.worst.max[k], big.worst.max[k]);
        CHECK_MSG(big.worst.max[k] == bound[k],
                  "%s: worst state reached %zu steps, bound %zu: re-derive the bound from "
                  "src/heaps/tlsf.c or find the state that reaches it",
                  kind_name[k], big.worst.max[k], bound[k]);
    }
    printf("  (max/ops: largest step count / operations measured)\n");
    CHECK_MSG(small.violations == 0 && big.violations == 0,
              "operations over their bound: %zu on 64 KiB, %zu on 1 GiB (first 5 printed)",
              small.violations, big.violations);

    random_run(&small, 64u, 13);
    random_run(&big, 1024u, 24);
    printf("  %-18s %14s %14s\n", "random, 100k ops", "64 KiB heap", "1 GiB heap");
    for (int k = 0; k < K_COUNT; k++)
        printf("  %-18s %8zu/%-5zu %8zu/%-5zu\n", kind_name[k], small.random.max[k],
               small.random.ops[k], big.random.max[k], big.random.ops[k]);

    CHECK_MSG(small.violations == 0 && big.violations == 0,
              "operations over their bound, all runs: %zu on 64 KiB, %zu on 1 GiB",
              small.violations, big.violations);
    region_unmap(huge, GiB);
    region_free(&r);
}

int main(void)
{
    RUN_TEST(test_step_bounds);
    return check_summary();
}
