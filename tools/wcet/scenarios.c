// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios.c -- the heap states rtmem-wcet measures, built on
 * purpose through the public API, each measured in isolation (a fresh heap
 * per case, so one measurement never inherits another's state).
 *
 * (The other allocators' states: scenarios_rtm.c, scenarios_glibc.c,
 * scenarios_zsmalloc.c, scenarios_tlsf_cached.c; the random-replace
 * scenario below and the dispatch serve them all.)
 *
 * Why these states: a TLSF operation is a fixed sequence of bit scans, list
 * removals and insertions, a split or merges; what varies is which branches
 * each step takes. The scenarios force every branch the issue names:
 *   - random-replace: the TLSF/xvmalloc/zsmalloc study's benchmark loop
 *     (docs/METHODS.md), the typical mixture;
 *   - split-huge, exact-fit, probe-fit, good-fit: every way an alloc finds
 *     its block (found in the rounded class or a higher first level, the
 *     exact-fit probe of the request's own list), with and without a split;
 *   - classes: a free block in every first- and second-level class, and
 *     requests aimed at each;
 *   - merge-none/left/right/both: every merge a free can do;
 *   - enomem, double-free: the failing paths, which are part of "any heap
 *     state" too;
 *   - aligned, realloc: reported on their own rows (not in the budget).
 * List positions matter as much as sizes: removing a list head costs more
 * than removing a middle block, inserting into an empty list sets bitmap
 * bits. So the merge, fit and realloc scenarios combine sizes with the
 * list "shapes" of child.h for every block they remove or insert.
 *
 * Sizes are payload sizes whose spans (payload + 4-byte header) are
 * multiples of 8 and lie mid-way in their classes (for 16 or 32 lists per
 * power of two), so that companions 8 bytes smaller or larger share the
 * class. Each case is identified by (scenario, variant, size); describe()
 * turns that back into words for the report.
 */
#include <errno.h>
#include <stdio.h>

#include "child.h"

#define KIB          ((size_t)1 << 10)
#define MIB          ((size_t)1 << 20)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Unpacks bits [shift, shift + bits) of a variant. */
#define FIELD(v, shift, bits) (((v) >> (shift)) & ((1u << (bits)) - 1u))

static size_t span_of_usable(size_t u) { return u + HDR; }

/* --- self-test ---------------------------------------------------------- */

/* Runs first in every task, so every lane proves its counter before its
 * numbers are used. The tracer compares each count with probes.c. */
static int selftest(void)
{
    static const uint64_t loops[] = {0, 1, 7, 40}, reps[] = {0, 1, 200};
    wcet_marker(ROW_SELF_STRAIGHT, SC_SELFTEST, 0, 0);
    REQUIRE(wcet_selftest_straight(1, 2) == 4, "self-test straight returned a wrong value");
    for (size_t i = 0; i < ARRAY_LEN(loops); i++) {
        wcet_marker(ROW_SELF_LOOP, SC_SELFTEST, 0, loops[i]);
        REQUIRE(wcet_selftest_loop(loops[i]) == loops[i], "self-test loop returned a wrong value");
    }
    for (size_t i = 0; i < ARRAY_LEN(reps); i++) {
        wcet_marker(ROW_SELF_REP, SC_SELFTEST, 0, reps[i]);
        REQUIRE(wcet_selftest_rep(reps[i]) == 0, "self-test rep returned a wrong value");
    }
    wcet_marker(ROW_SELF_TAIL, SC_SELFTEST, 0, 3);
    REQUIRE(wcet_selftest_tail(3) == 7, "self-test tail returned a wrong value");
    return 0;
}

int wcet_selftest_calls(void) { return selftest(); }

/* --- random-replace (the TLSF/xvmalloc/zsmalloc study's loop) ----------- */

#define RR_SLOTS 10000u
#define RR_MIN   16u
#define RR_RANGE 4080u /* sizes in [16, 4096) */

/* splitmix64: small, fast, and the same sequence on every machine. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* 10,000 slots filled with random sizes, then each iteration frees a random
 * slot and refills it with a new random size, both calls measured. The heap
 * (256 MiB of address space for at most 40 MiB live) never refuses; a
 * refusal would be a fake speed-up, so it fails the run. The same for every
 * allocator (same seed, same sequence of sizes); glibc's heap is its own. */
static int random_replace(wcet_heap *w, const wcet_config *cfg)
{
    static void *slot[RR_SLOTS];
    static size_t slot_size[RR_SLOTS];
    uint64_t rng = cfg->seed;
    if (w->al != AL_GLIBC)
        TRY(wcet_heap_new(w, 0, 256 * MIB));
    for (unsigned i = 0; i < RR_SLOTS; i++) {
        slot_size[i] = RR_MIN + (size_t)(rng_next(&rng) % RR_RANGE);
        slot[i] = wcet_raw_alloc(w, slot_size[i]);
        REQUIRE(slot[i] != NULL, "fill refused %zu bytes", slot_size[i]);
    }
    for (unsigned long it = 0; it < cfg->iterations; it++) {
        unsigned i = (unsigned)(rng_next(&rng) % RR_SLOTS);
        size_t n = RR_MIN + (size_t)(rng_next(&rng) % RR_RANGE);
        REQUIRE(wcet_m_free(w, SC_RANDOM_REPLACE, (unsigned)it, slot_size[i], slot[i]) == 0,
                "free rejected a live block at iteration %lu", it);
        slot[i] = wcet_m_alloc(w, SC_RANDOM_REPLACE, (unsigned)it, n);
        slot_size[i] = n;
        REQUIRE(slot[i] != NULL, "refused %zu bytes at iteration %lu (heap too small)", n, it);
    }
    REQUIRE(w->al == AL_GLIBC || wcet_raw_check(w) == 0, "heap check failed after the run");
    return 0;
}

/* --- allocation from one block ------------------------------------------ */

static const size_t split_requests[] = {0, 1, 8, 20, 24, 100, 1000, 4092, 65536, MIB, 1024 * MIB};
static const size_t split_blocks[] = {RTM_TLSF_MAX_BLOCK, MIB - HDR};

/* A small (or not so small) request cut from the heap's only free block:
 * the search runs from the request's class up to the top first level. */
static int split_huge(wcet_heap *w)
{
    for (unsigned b = 0; b < ARRAY_LEN(split_blocks); b++) {
        for (size_t r = 0; r < ARRAY_LEN(split_requests); r++) {
            size_t n = split_requests[r];
            if (n >= split_blocks[b])
                continue;
            TRY(wcet_heap_exact(w, split_blocks[b]));
            REQUIRE(wcet_m_alloc(w, SC_SPLIT_HUGE, b, n) != NULL, "request %zu refused", n);
        }
    }
    return 0;
}

/* Spans at class lower bounds (a request finds them by the good-fit search)
 * and just above one (1032, 4104, 65544: found by the exact-fit probe). */
static const size_t exact_spans[] = {24,    32,  64,       128,  256,  1024, 4096,
                                     65536, MIB, 16 * MIB, 1032, 4104, 65544};

/* The heap's only free block has exactly the request's span: no split. */
static int exact_fit(wcet_heap *w)
{
    for (size_t i = 0; i < ARRAY_LEN(exact_spans); i++) {
        size_t u = exact_spans[i] - HDR;
        TRY(wcet_heap_exact(w, u));
        REQUIRE(wcet_m_alloc(w, SC_EXACT_FIT, 0, u) != NULL, "exact request %zu refused", u);
        REQUIRE(wcet_raw_stats(w).free_bytes == 0, "exact fit of %zu left free bytes", u);
    }
    return 0;
}

/* --- the exact-fit probe ------------------------------------------------ */

static const size_t probe_bounds[] = {256, 1024, 4096, 65536, MIB}; /* class lower bounds */

/* The request's span is 8 above a class lower bound L, so the good-fit
 * search starts one class higher and finds nothing; the only candidate is
 * the largest block of the request's own list, of span r (no split) or of
 * the top span of the class (split). Everything above is allocated. The
 * variant adds companions to the own list (head with followers) and to the
 * list the split tail goes to. */
static int probe_case(wcet_heap *w, unsigned li, unsigned xi, enum wcet_shape hs,
                      enum wcet_shape ts)
{
    size_t bound = probe_bounds[li], r_span = bound + 8;
    size_t x_span = xi == 0 ? r_span : bound + bound / 16 - 8;
    size_t tail_span = x_span - r_span;
    unsigned variant = li | xi << 3 | (unsigned)hs << 4 | (unsigned)ts << 6;
    wcet_companions comp = {0};
    void *x;
    wcet_plan_shape(&comp, hs, x_span - HDR);
    if (tail_span >= 24)
        wcet_plan_shape(&comp, ts, tail_span - HDR);
    TRY(wcet_heap_new(w, 0, 16 * MIB));
    TRY(wcet_carve_companions(w, &comp));
    TRY(wcet_carve_fenced(w, x_span - HDR, &x));
    TRY(wcet_consume_largest(w));
    wcet_free_companions(w, &comp);
    wcet_raw_free(w, x);
    REQUIRE(wcet_raw_stats(w).largest_free == x_span - HDR,
            "probe state: the block is not largest");
    REQUIRE(wcet_m_alloc(w, SC_PROBE_FIT, variant, r_span - HDR) != NULL,
            "probe request %zu refused", r_span - HDR);
    return 0;
}

static int probe_fit(wcet_heap *w)
{
    for (unsigned li = 0; li < ARRAY_LEN(probe_bounds); li++)
        for (unsigned xi = 0; xi < 2; xi++)
            for (unsigned hs = SHAPE_ALONE; hs <= SHAPE_HEAD; hs++)
                for (unsigned ts = 0; ts < (xi ? SHAPE_COUNT : 1u); ts++)
                    TRY(probe_case(w, li, xi, (enum wcet_shape)hs, (enum wcet_shape)ts));
    return 0;
}

/* --- good fit with list shapes ------------------------------------------ */

static const size_t fit_requests[] = {20, 100, 1052, 41980};

/* The block found by the search has span 1.5x (same first level) or 3x
 * (next first level) the request's; the found list and the list the split
 * tail joins take every shape. The pool's large remainder sits above. */
static int good_fit_case(wcet_heap *w, unsigned ri, unsigned rel, enum wcet_shape fs,
                         enum wcet_shape ts)
{
    size_t r_span = span_of_usable(fit_requests[ri]);
    size_t x_span = rel == 0 ? (r_span + r_span / 2 + 7) & ~(size_t)7 : 3 * r_span;
    size_t tail_span = x_span - r_span;
    unsigned variant = ri | rel << 2 | (unsigned)fs << 3 | (unsigned)ts << 5;
    wcet_companions comp = {0};
    void *x;
    wcet_plan_shape(&comp, fs, x_span - HDR);
    if (tail_span >= 24)
        wcet_plan_shape(&comp, ts, tail_span - HDR);
    TRY(wcet_heap_new(w, 0, 16 * MIB));
    TRY(wcet_carve_companions(w, &comp));
    TRY(wcet_carve_fenced(w, x_span - HDR, &x));
    wcet_free_companions(w, &comp);
    wcet_raw_free(w, x);
    REQUIRE(wcet_m_alloc(w, SC_GOOD_FIT, variant, r_span - HDR) != NULL,
            "good-fit request %zu refused", r_span - HDR);
    return 0;
}

static int good_fit(wcet_heap *w)
{
    for (unsigned ri = 0; ri < ARRAY_LEN(fit_requests); ri++)
        for (unsigned rel = 0; rel < 2; rel++)
            for (unsigned fs = 0; fs < SHAPE_COUNT; fs++)
                for (unsigned ts = 0; ts < SHAPE_COUNT; ts++)
                    TRY(good_fit_case(w, ri, rel, (enum wcet_shape)fs, (enum wcet_shape)ts));
    return 0;
}

/* --- every class populated ---------------------------------------------- */

#define GRID_MAX 2048

/* Spans: every multiple of 8 below 128 (the linear small classes), then
 * per_octave evenly spaced spans in every power of two up to 2^top, capped
 * at the largest block. Returns the count. */
static size_t class_grid(const wcet_config *cfg, size_t *spans)
{
    size_t n = 0;
    for (size_t s = 24; s < 128; s += 8)
        spans[n++] = s;
    for (unsigned k = 7; k <= cfg->class_top_log2 && k < 32; k++) {
        for (unsigned j = 0; j < cfg->per_octave && n < GRID_MAX; j++) {
            size_t s = (((size_t)1 << k) + j * (((size_t)1 << k) / cfg->per_octave)) & ~(size_t)7;
            if (s - HDR > RTM_TLSF_MAX_BLOCK)
                break;
            if (s > spans[n - 1])
                spans[n++] = s;
        }
    }
    return n;
}

/* Each grid block is a pool of its own (rtm_*_add_pool over exactly its
 * bytes), so no block has a free neighbour and no carving is needed, even
 * for blocks of gigabytes (address space only: a pool touches two pages).
 * Then, for every grid span g, a request of span g (its own class) and of
 * g + 8 (rounded up to the next class: split, then merged back by the free)
 * are measured, each followed by the measured free that restores the state. */
static int classes(wcet_heap *w, const wcet_config *cfg)
{
    static size_t spans[GRID_MAX];
    size_t n = class_grid(cfg, spans), first = rtm_min_region("tlsf"), total = first + 64;
    for (size_t i = 0; i < n; i++)
        total += rtm_tlsf_pool_overhead() + spans[i] - HDR;
    TRY(wcet_region_reserve(total));
    TRY(wcet_heap_new(w, 0, first));
    size_t free0 = wcet_raw_stats(w).free_bytes, off = (first + 7) & ~(size_t)7;
    for (size_t i = 0; i < n; i++) {
        size_t bytes = rtm_tlsf_pool_overhead() + spans[i] - HDR;
        TRY(wcet_heap_add_pool(w, wcet_region() + off, bytes));
        off += (bytes + 7) & ~(size_t)7;
        free0 += spans[i] - HDR;
    }
    REQUIRE(wcet_raw_stats(w).free_bytes == free0, "class grid: pools do not add up");
    size_t top = spans[n - 1] - HDR;
    for (size_t i = 0; i < n; i++) {
        for (unsigned v = 0; v < 2; v++) {
            size_t u = spans[i] - HDR + 8 * v;
            void *p = wcet_m_alloc(w, SC_CLASSES, v, u);
            REQUIRE(p != NULL || u > top, "class request %zu refused", u);
            if (p != NULL)
                REQUIRE(wcet_m_free(w, SC_CLASSES, v, u, p) == 0, "class free rejected");
        }
    }
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed after the class grid");
    return 0;
}

/* --- merges ------------------------------------------------------------- */

/* A and C sizes (index 3 = the pool's free remainder as right neighbour)
 * and B sizes. */
static const size_t merge_sizes[] = {20, 1052, 41980};
static const size_t merge_b_sizes[] = {20, 1052};
#define MERGE_REMAINDER 3u

/* [companions][A][B][C][fence][remainder]: A and/or C freed first, then the
 * measured free of B. Shapes: ls for A's list, rs for C's, ms for the list
 * the merged block joins. */
static int merge_case(wcet_heap *w, enum wcet_scenario sc, unsigned ai, unsigned bi, unsigned ci,
                      const enum wcet_shape sh[3])
{
    int left = sc == SC_MERGE_LEFT || sc == SC_MERGE_BOTH;
    int right = sc == SC_MERGE_RIGHT || sc == SC_MERGE_BOTH;
    int rem = ci == MERGE_REMAINDER;
    size_t a = merge_sizes[ai], b = merge_b_sizes[bi], c = rem ? 0 : merge_sizes[ci];
    size_t m = b + (left ? a + HDR : 0) + (right && !rem ? c + HDR : 0);
    unsigned variant =
        ai | bi << 2 | ci << 3 | (unsigned)sh[0] << 5 | (unsigned)sh[1] << 7 | (unsigned)sh[2] << 9;
    wcet_companions comp = {0};
    if (left)
        wcet_plan_shape(&comp, sh[0], a);
    if (right && !rem)
        wcet_plan_shape(&comp, sh[1], c);
    if (!(right && rem))
        wcet_plan_shape(&comp, sh[2], m);
    TRY(wcet_heap_new(w, 0, 16 * MIB));
    TRY(wcet_carve_companions(w, &comp));
    void *pa = wcet_raw_alloc(w, a), *pb = wcet_raw_alloc(w, b), *pc = NULL;
    REQUIRE(pa != NULL && pb != NULL && wcet_adjacent(w, pa, pb), "merge: cannot place A, B");
    if (!rem) {
        void *fence;
        pc = wcet_raw_alloc(w, c);
        fence = wcet_raw_alloc(w, 0);
        REQUIRE(pc != NULL && fence != NULL && wcet_adjacent(w, pb, pc) &&
                    wcet_adjacent(w, pc, fence),
                "merge: cannot place C and its fence");
    }
    wcet_free_companions(w, &comp);
    if (left)
        wcet_raw_free(w, pa);
    if (right && !rem)
        wcet_raw_free(w, pc);
    REQUIRE(wcet_m_free(w, sc, variant, b, pb) == 0, "merge: free rejected");
    return 0;
}

/* Runs merge_case over sizes and shapes. Shapes only vary for the blocks
 * the case removes or inserts; the others stay ALONE. */
static int merges(wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc)
{
    int left = sc == SC_MERGE_LEFT || sc == SC_MERGE_BOTH;
    int right = sc == SC_MERGE_RIGHT || sc == SC_MERGE_BOTH;
    unsigned a_hi = left ? (cfg->quick ? 2u : 3u) : 1u, a_lo = left && cfg->quick ? 1u : 0u;
    unsigned c_hi = right ? 4u : 1u, c_lo = right && cfg->quick ? 1u : 0u;
    unsigned b_hi = cfg->quick ? 1u : 2u;
    for (unsigned ai = a_lo; ai < a_hi; ai++)
        for (unsigned bi = 0; bi < b_hi; bi++)
            for (unsigned ci = c_lo; ci < c_hi; ci++) {
                if (right && cfg->quick && ci == 2)
                    continue;
                int rem = right && ci == MERGE_REMAINDER;
                unsigned nl = left ? SHAPE_COUNT : 1u, nr = right && !rem ? SHAPE_COUNT : 1u;
                unsigned nm = rem ? 1u : SHAPE_COUNT;
                for (unsigned l = 0; l < nl; l++)
                    for (unsigned r = 0; r < nr; r++)
                        for (unsigned mm = 0; mm < nm; mm++) {
                            enum wcet_shape sh[3] = {(enum wcet_shape)l, (enum wcet_shape)r,
                                                     (enum wcet_shape)mm};
                            TRY(merge_case(w, sc, ai, bi, right ? ci : 0, sh));
                        }
            }
    return 0;
}

/* --- failures ------------------------------------------------------------ */

enum {
    ENOMEM_BEYOND_MAX,
    ENOMEM_SIZE_MAX,
    ENOMEM_NOTHING_ABOVE,
    ENOMEM_PROBE_1K,
    ENOMEM_PROBE_64K,
    ENOMEM_FULL,
    ENOMEM_COUNT
};
static const char *const enomem_names[ENOMEM_COUNT] = {
    "request beyond the largest block size",
    "request SIZE_MAX",
    "no class above the request holds a block",
    "own list's only block 8 bytes short (1 KiB class)",
    "own list's only block 8 bytes short (64 KiB class)",
    "heap completely allocated"};

static int enomem_case(wcet_heap *w, unsigned v)
{
    size_t n = 0;
    switch (v) {
    case ENOMEM_BEYOND_MAX:
        n = RTM_TLSF_MAX_BLOCK + 1;
        TRY(wcet_heap_new(w, 0, MIB));
        break;
    case ENOMEM_SIZE_MAX:
        n = SIZE_MAX;
        TRY(wcet_heap_new(w, 0, MIB));
        break;
    case ENOMEM_NOTHING_ABOVE:
        n = 4 * MIB;
        TRY(wcet_heap_new(w, 0, MIB));
        break;
    case ENOMEM_PROBE_1K:
    case ENOMEM_PROBE_64K: {
        size_t bound = v == ENOMEM_PROBE_1K ? KIB : 64 * KIB;
        TRY(wcet_heap_exact(w, bound + 8 - HDR));
        n = bound + 16 - HDR;
        break;
    }
    default:
        TRY(wcet_heap_exact(w, 1052));
        TRY(wcet_consume_largest(w));
        n = 20;
        break;
    }
    errno = 0;
    void *p = wcet_m_alloc(w, SC_ENOMEM, v, n);
    REQUIRE(p == NULL && errno == ENOMEM, "%s: expected NULL with ENOMEM", enomem_names[v]);
    return 0;
}

static int enomem(wcet_heap *w)
{
    for (unsigned v = 0; v < ENOMEM_COUNT; v++)
        TRY(enomem_case(w, v));
    return 0;
}

/* A block between two used neighbours, freed twice: the second free must be
 * rejected (and measured) and leave the heap intact. */
static int double_free(wcet_heap *w)
{
    static const size_t sizes[] = {20, 1052};
    for (unsigned i = 0; i < ARRAY_LEN(sizes); i++) {
        void *p;
        TRY(wcet_heap_new(w, 0, MIB));
        REQUIRE(wcet_raw_alloc(w, 0) != NULL, "double free: no room");
        TRY(wcet_carve_fenced(w, sizes[i], &p));
        wcet_raw_free(w, p);
        REQUIRE(wcet_m_free(w, SC_DOUBLE_FREE, i, sizes[i], p) == -1,
                "double free of a %zu-byte block not detected", sizes[i]);
        REQUIRE(wcet_raw_check(w) == 0, "heap check failed after a double free");
    }
    return 0;
}

/* --- aligned_alloc ------------------------------------------------------- */

static const size_t aligned_requests[] = {20, 1000};

/* Sweep: the heap starts at every 8-byte offset modulo the alignment, so the
 * leading gap takes every value (none, too small to stand alone, a free
 * block). Tight: the heap's only block is just around what the request needs
 * with its worst gap, which exercises the probe with a real gap; these may
 * fail with ENOMEM, which is measured too. */
static int aligned(wcet_heap *w, const wcet_config *cfg)
{
    static const size_t aligns[] = {64, 4096};
    for (unsigned ai = 0; ai < 2; ai++) {
        size_t al = aligns[ai], step = cfg->quick ? al / 8 : 8;
        for (size_t off = 0; off < al; off += step)
            for (unsigned ni = 0; ni < 2; ni++) {
                size_t n = aligned_requests[ni];
                TRY(wcet_heap_new(w, off, MIB));
                void *p = wcet_m_aligned(w, SC_ALIGNED, ai | ni << 1 | (unsigned)off << 2, al, n);
                REQUIRE(p != NULL && ((uintptr_t)p & (al - 1)) == 0, "aligned request refused");
            }
        size_t s = span_of_usable(1004), worst = s + al + 24, sstep = al == 64 ? 8 : 256;
        for (size_t span = s; span <= worst + 8; span += sstep) {
            TRY(wcet_heap_exact(w, span - HDR));
            unsigned variant = 1u << 31 | ai | (unsigned)span << 2;
            (void)wcet_m_aligned(w, SC_ALIGNED, variant, al, 1000);
        }
    }
    return 0;
}

/* --- realloc in place ---------------------------------------------------- */

static const size_t grow_a[] = {20, 1052}, grow_n[] = {100, 1052, 41980};

/* [A][N free][fence]: A grows by 8 bytes, by half of N's span, or by all of
 * it; N takes every list shape. Index 3 of N: A's right neighbour is the
 * pool's remainder. The block must not move. */
static int grow_case(wcet_heap *w, unsigned ai, unsigned ni, enum wcet_shape ns, unsigned g)
{
    int rem = ni == 3;
    size_t a = grow_a[ai], n = rem ? 0 : grow_n[ni], nspan = rem ? 2000 : n + HDR;
    size_t add = g == 0 ? 8 : g == 1 ? (nspan / 2) & ~(size_t)7 : nspan;
    unsigned variant = ai | ni << 1 | (unsigned)ns << 3 | g << 5;
    wcet_companions comp = {0};
    void *pa, *pn = NULL;
    if (!rem)
        wcet_plan_shape(&comp, ns, n);
    TRY(wcet_heap_new(w, 0, 16 * MIB));
    TRY(wcet_carve_companions(w, &comp));
    pa = wcet_raw_alloc(w, a);
    REQUIRE(pa != NULL, "grow: no room");
    if (!rem)
        TRY(wcet_carve_fenced(w, n, &pn));
    REQUIRE(rem || wcet_adjacent(w, pa, pn), "grow: cannot place N after A");
    wcet_free_companions(w, &comp);
    if (!rem)
        wcet_raw_free(w, pn);
    void *q = wcet_m_realloc(w, ROW_REALLOC_GROW, SC_REALLOC, variant, pa, a + add);
    REQUIRE(q == pa, "realloc grow of %zu by %zu did not stay in place", a, add);
    return 0;
}

static const size_t shrink_a[] = {1052, 41980};

/* [A][R][fence]: A shrinks to 20 bytes, to half, or by 8 bytes (a tail too
 * small to stand alone). R is used (the tail's list takes every shape) or
 * free (R's list takes every shape; the tail merges into it). */
static int shrink_case(wcet_heap *w, unsigned ai, unsigned ni, unsigned rfree, enum wcet_shape sh)
{
    size_t a = shrink_a[ai], r = 1052;
    size_t n = ni == 0 ? 20 : ni == 1 ? ((a / 2) & ~(size_t)7) + 4 : a - 8;
    size_t tail = a - n; /* the tail's span */
    unsigned variant = ai | ni << 1 | rfree << 3 | (unsigned)sh << 4 | 1u << 8;
    wcet_companions comp = {0};
    void *pa, *pr;
    if (rfree)
        wcet_plan_shape(&comp, sh, r);
    else if (tail >= 24)
        wcet_plan_shape(&comp, sh, tail - HDR);
    TRY(wcet_heap_new(w, 0, 16 * MIB));
    TRY(wcet_carve_companions(w, &comp));
    pa = wcet_raw_alloc(w, a);
    REQUIRE(pa != NULL, "shrink: no room");
    TRY(wcet_carve_fenced(w, r, &pr));
    REQUIRE(wcet_adjacent(w, pa, pr), "shrink: cannot place R after A");
    wcet_free_companions(w, &comp);
    if (rfree)
        wcet_raw_free(w, pr);
    void *q = wcet_m_realloc(w, ROW_REALLOC_SHRINK, SC_REALLOC, variant, pa, n);
    REQUIRE(q == pa, "realloc shrink of %zu to %zu moved the block", a, n);
    return 0;
}

static int realloc_in_place(wcet_heap *w)
{
    for (unsigned ai = 0; ai < 2; ai++)
        for (unsigned ni = 0; ni < 4; ni++)
            for (unsigned s = 0; s < (ni == 3 ? 1u : SHAPE_COUNT); s++)
                for (unsigned g = 0; g < 3; g++)
                    TRY(grow_case(w, ai, ni, (enum wcet_shape)s, g));
    for (unsigned ai = 0; ai < 2; ai++)
        for (unsigned ni = 0; ni < 3; ni++)
            for (unsigned rf = 0; rf < 2; rf++)
                for (unsigned s = 0; s < SHAPE_COUNT; s++)
                    TRY(shrink_case(w, ai, ni, rf, (enum wcet_shape)s));
    return 0;
}

/* --- dispatch ------------------------------------------------------------ */

int wcet_scenario_uses(enum wcet_allocator al, enum wcet_scenario sc, enum wcet_api api)
{
    enum wcet_allocator owner = wcet_scenario_owner[sc];
    if (sc == SC_SELFTEST)
        return 0; /* runs inside every task */
    if (owner != AL_COUNT && owner != al)
        return 0;
    if (al == AL_MT_TLSF && owner != al)
        return 0; /* random-replace: its shards are tlsf's heaps */
    if (al != AL_TLSF)
        return api == API_GENERIC; /* only TLSF has typed rows */
    if (sc == SC_ALIGNED || sc == SC_REALLOC)
        return api == API_GENERIC; /* reported rows are the generic calls */
    return 1;
}

unsigned long wcet_scenario_weight(const wcet_config *cfg, enum wcet_allocator al,
                                   enum wcet_scenario sc)
{
    static size_t spans[GRID_MAX];
    if (al == AL_ZSMALLOC)
        return wcet_zs_weight(cfg, sc);
    if (sc != SC_RANDOM_REPLACE && al == AL_GLIBC)
        return 150;
    if (sc != SC_RANDOM_REPLACE && al == AL_TLSF_CACHED)
        return wcet_tc_weight(cfg, sc);
    if (al == AL_MT_TLSF)
        return wcet_mt_weight(cfg, sc);
    if (sc != SC_RANDOM_REPLACE && al != AL_TLSF)
        return wcet_rtm_weight(cfg, sc);
    switch (sc) {
    case SC_RANDOM_REPLACE:
        return 2 * cfg->iterations;
    case SC_CLASSES:
        return 4 * class_grid(cfg, spans);
    case SC_MERGE_BOTH:
        return cfg->quick ? 80 : 1300;
    case SC_ALIGNED:
        return cfg->quick ? 60 : 1100;
    default:
        return 150;
    }
}

int wcet_child_main(const wcet_config *cfg, enum wcet_allocator al, enum wcet_scenario sc,
                    enum wcet_api api)
{
    wcet_heap w = {api, NULL, NULL, al};
    wcet_current = "self-test";
    TRY(selftest());
    wcet_current = wcet_scenario_names[sc];
    if (al == AL_ZSMALLOC) /* typed calls, its own random-replace too */
        return wcet_zs_scenario(cfg, sc);
    if (sc == SC_RANDOM_REPLACE)
        return random_replace(&w, cfg);
    if (al == AL_GLIBC)
        return wcet_glibc_scenario(cfg, sc);
    if (al == AL_TLSF_CACHED)
        return wcet_tc_scenario(&w, cfg, sc);
    if (al == AL_MT_TLSF)
        return wcet_mt_scenario(&w, cfg, sc);
    if (al != AL_TLSF)
        return wcet_rtm_scenario(&w, cfg, sc);
    switch (sc) {
    case SC_SELFTEST:
        return 0;
    case SC_RANDOM_REPLACE:
        return random_replace(&w, cfg);
    case SC_SPLIT_HUGE:
        return split_huge(&w);
    case SC_EXACT_FIT:
        return exact_fit(&w);
    case SC_PROBE_FIT:
        return probe_fit(&w);
    case SC_GOOD_FIT:
        return good_fit(&w);
    case SC_CLASSES:
        return classes(&w, cfg);
    case SC_MERGE_NONE:
    case SC_MERGE_LEFT:
    case SC_MERGE_RIGHT:
    case SC_MERGE_BOTH:
        return merges(&w, cfg, sc);
    case SC_ENOMEM:
        return enomem(&w);
    case SC_DOUBLE_FREE:
        return double_free(&w);
    case SC_ALIGNED:
        return aligned(&w, cfg);
    case SC_REALLOC:
        return realloc_in_place(&w);
    default:
        break;
    }
    return wcet_fail("scenario %d is not a TLSF scenario", (int)sc);
}

/* --- describing a case ----------------------------------------------------- */

static const char *shape(unsigned v) { return wcet_shape_names[v & 3u]; }

static void describe_merge(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned ai = FIELD(v, 0, 2), ci = FIELD(v, 3, 2);
    char a[48] = "", c[48] = "", m[32] = "";
    if (sc == SC_MERGE_LEFT || sc == SC_MERGE_BOTH)
        snprintf(a, sizeof a, ", left free %zu (%s)", merge_sizes[ai], shape(FIELD(v, 5, 2)));
    if ((sc == SC_MERGE_RIGHT || sc == SC_MERGE_BOTH) && ci == MERGE_REMAINDER)
        snprintf(c, sizeof c, ", right = pool remainder");
    else if (sc == SC_MERGE_RIGHT || sc == SC_MERGE_BOTH)
        snprintf(c, sizeof c, ", right free %zu (%s)", merge_sizes[ci], shape(FIELD(v, 7, 2)));
    if (!((sc == SC_MERGE_RIGHT || sc == SC_MERGE_BOTH) && ci == MERGE_REMAINDER))
        snprintf(m, sizeof m, ", into list: %s", shape(FIELD(v, 9, 2)));
    snprintf(buf, len, "free %llu%s%s%s", (unsigned long long)size, a, c, m);
}

static void describe_realloc(char *buf, size_t len, unsigned v, uint64_t size)
{
    static const char *const growth[] = {"by 8", "by half its span", "by all of it", "?"};
    unsigned long long n = (unsigned long long)size;
    if (FIELD(v, 8, 1)) {
        snprintf(buf, len, "shrink %zu to %llu, right neighbour %s, %s list %s",
                 shrink_a[FIELD(v, 0, 1)], n, FIELD(v, 3, 1) ? "free" : "used",
                 FIELD(v, 3, 1) ? "its" : "tail's", shape(FIELD(v, 4, 2)));
    } else if (FIELD(v, 1, 2) == 3) {
        snprintf(buf, len, "grow %zu to %llu into the pool remainder", grow_a[FIELD(v, 0, 1)], n);
    } else {
        snprintf(buf, len, "grow %zu to %llu into free %zu (%s) %s", grow_a[FIELD(v, 0, 1)], n,
                 grow_n[FIELD(v, 1, 2)], shape(FIELD(v, 3, 2)), growth[FIELD(v, 5, 2)]);
    }
}

void wcet_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned long long n = (unsigned long long)size;
    switch (sc) {
    case SC_SELFTEST:
        snprintf(buf, len, "n=%llu", n);
        break;
    case SC_RANDOM_REPLACE:
        snprintf(buf, len, "iteration %u, size %llu", v, n);
        break;
    case SC_SPLIT_HUGE:
        snprintf(buf, len, "request %llu from one free block of %zu", n, split_blocks[v & 1u]);
        break;
    case SC_EXACT_FIT:
        snprintf(buf, len, "request %llu = the only free block", n);
        break;
    case SC_PROBE_FIT:
        snprintf(buf, len, "request %llu, own list head %s (%s)%s%s", n,
                 FIELD(v, 3, 1) ? "top of class, split" : "same size", shape(FIELD(v, 4, 2)),
                 FIELD(v, 3, 1) ? ", tail into list: " : "",
                 FIELD(v, 3, 1) ? shape(FIELD(v, 6, 2)) : "");
        break;
    case SC_GOOD_FIT:
        snprintf(buf, len, "request %llu, block %s first level, found list %s, tail list %s", n,
                 FIELD(v, 2, 1) ? "next" : "same", shape(FIELD(v, 3, 2)), shape(FIELD(v, 5, 2)));
        break;
    case SC_CLASSES:
        snprintf(buf, len, "request %llu%s, every class populated", n,
                 v ? " (class bound + 8)" : " (class bound)");
        break;
    case SC_MERGE_NONE:
    case SC_MERGE_LEFT:
    case SC_MERGE_RIGHT:
    case SC_MERGE_BOTH:
        describe_merge(buf, len, sc, v, size);
        break;
    case SC_ENOMEM:
        snprintf(buf, len, "%s (request %llu)", v < ENOMEM_COUNT ? enomem_names[v] : "?", n);
        break;
    case SC_DOUBLE_FREE:
        snprintf(buf, len, "second free of a %llu-byte block", n);
        break;
    case SC_ALIGNED:
        if (v >> 31)
            snprintf(buf, len, "request %llu, only block of span %u", n, FIELD(v, 2, 20));
        else
            snprintf(buf, len, "request %llu, heap start offset %u", n, FIELD(v, 2, 20));
        break;
    case SC_REALLOC:
        describe_realloc(buf, len, v, size);
        break;
    default:
        if (!wcet_rtm_describe(buf, len, sc, v, size) &&
            !wcet_glibc_describe(buf, len, sc, v, size) &&
            !wcet_zs_describe(buf, len, sc, v, size) && !wcet_tc_describe(buf, len, sc, v, size) &&
            !wcet_mt_describe(buf, len, sc, v, size))
            snprintf(buf, len, "variant %u size %llu", v, n);
        break;
    }
}
