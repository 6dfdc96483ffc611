// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios_tlsf_cached.c -- the adversarial heap states of
 * "tlsf_cached" (src/heaps/tlsf_cached.c: TLSF with a bounded cache of
 * recently freed blocks whose coalescing is deferred), measured through
 * rtm_alloc / rtm_free on the default limit of 128 blocks.
 *
 * Why these states: the cache adds three kinds of path to TLSF's, and each
 * scenario walks one to its end:
 *   - cache-hit: the paths the cache exists for. An alloc served by the
 *     first probe (the newest block of the next bin), by the second (the
 *     newest of its own bin, large enough), and one both probes miss (TLSF
 *     serves it); a free pushed on a ring with room, also of a block reused
 *     from the cache unwritten (the hit sealed its check word live again,
 *     so its free pushes it like any other: the case holds that);
 *   - cache-evict: a free that needs room first: its bin's ring is full, or
 *     the cache holds `limit` blocks, so the bin's oldest block goes to
 *     TLSF, and that block lies between two free blocks: TLSF's worst free
 *     (merging both) inside the cached free. Also the frees the cache does
 *     not take (full cache and an empty ring; a block above 32 KiB - 1),
 *     straight to TLSF with the same merges;
 *   - cache-flush: the option's long path. TLSF refuses a request while the
 *     cache holds `limit` blocks, each between two free blocks; the alloc
 *     coalesces the whole cache (limit TLSF frees, each merging both
 *     neighbours) and the retry succeeds. Thousands of instructions: the
 *     bound the option trades for its short paths, shown as counted.
 *
 * The cache is invisible through the API (rtm_usable_size() refuses a
 * cached block as it refuses a free one), so each case proves its state from
 * TLSF's header word (below the block's 8-byte check word), whose layout
 * rtmem/tlsf.h fixes: its FREE bit (bit 0) is
 * set for a block TLSF holds free (also one merged into its left neighbour:
 * TLSF marks its old header free) and clear for one TLSF counts used; a
 * block rtm_free accepted that TLSF still counts used is in the cache. rtm_heap_check()
 * checks every cached entry and that at most `limit` are held.
 * rtm_heap_stats() coalesces the whole cache, so the builders use it to
 * hand blocks to TLSF, and never between the cached state and the
 * measured call. Variants pack (case, parameter) as case | parameter << 8.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "child.h"

#define MIB          ((size_t)1 << 20)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define V(c, p)      ((unsigned)(c) | (unsigned)(p) << 8)
#define V_CASE(v)    ((v)&0xffu)
#define V_PARAM(v)   ((v) >> 8)

/* tlsf_cached.c's geometry, restated to plan states. A wrong restatement
 * cannot go unnoticed: a block filed in another bin than planned overfills
 * a ring or empties a probe, and the cases' checks see it. */
#define TC_LIMIT   128u /* "tlsf_cached" (wcet_allocators[]): the default */
#define TC_RING    8u   /* entries per bin */
#define TC_BINS    44u  /* 4 per power of two, usable 16 B .. 32 KiB - 1 */
#define TC_LARGEST 32767u
#define NO_BIN     TC_BINS
#define TC_WORD    8u              /* the check word below every caller's block */
#define BELOW      (HDR + TC_WORD) /* TLSF's header word, below a caller's pointer */

/* The bin of a usable size (or a request): bin_of() in tlsf_cached.c. */
static unsigned bin_of(size_t u)
{
    if (u < 16u)
        return 0;
    unsigned f = 63u - (unsigned)__builtin_clzll((unsigned long long)u);
    return ((f - 4u) << 2) + (unsigned)((u >> (f - 2u)) & 3u);
}

/* The smallest usable size the heap gives (TLSF's 8j + 4, at least 20,
 * less the check word) in bin k, or 0 when there is none (bin 2: 24..27).
 * A request of that many bytes gets exactly that block. */
static size_t bin_block(unsigned k)
{
    unsigned f = 4u + k / 4u;
    size_t u = ((size_t)1 << f) + (size_t)(k % 4u) * ((size_t)1 << (f - 2u));
    while (u % 8u != 4u || u < RTM_TLSF_MIN_BLOCK - TC_WORD)
        u++;
    return bin_of(u) == k ? u : 0;
}

/* The usable size the heap gives a request: TLSF's span for it and the
 * check word (rounded to 8, at least the minimum block) less both. */
static size_t usable_for(size_t req)
{
    size_t span = (req + BELOW + 7u) & ~(size_t)7u;
    return (span < RTM_TLSF_MIN_BLOCK + HDR ? RTM_TLSF_MIN_BLOCK + HDR : span) - BELOW;
}

/* --- what the API shows of a block ------------------------------------ */

static size_t usable(wcet_heap *w, const void *p) { return rtm_usable_size(w->h, p); }

/* TLSF's FREE bit in the header word of p's inner block. */
static int tlsf_says_free(const void *p)
{
    uint32_t h;
    memcpy(&h, (const char *)p - BELOW, sizeof h);
    return (h & 1u) != 0;
}

/* The usable size TLSF's header word gives a block it counts used (cached
 * or live): its span less the header and the check word. */
static size_t tlsf_usable(const void *p)
{
    uint32_t h;
    memcpy(&h, (const char *)p - BELOW, sizeof h);
    return (h & ~(uint32_t)7u) - BELOW;
}

/* p was freed through rtm_free: TLSF still counting it used means cached. */
static int is_cached(wcet_heap *w, const void *p, const char *what)
{
    (void)w;
    REQUIRE(!tlsf_says_free(p), "%s is not in the cache (TLSF holds it free)", what);
    return 0;
}

static int is_tlsf_free(wcet_heap *w, const void *p, const char *what)
{
    (void)w;
    REQUIRE(tlsf_says_free(p), "%s is not free in TLSF", what);
    return 0;
}

/* Frees p through rtm_free, which must accept it (a refusal would leave it
 * used too), and checks that it went to the cache. */
static int cache_free(wcet_heap *w, void *p, const char *what)
{
    errno = 0;
    wcet_raw_free(w, p);
    REQUIRE(errno != EINVAL, "the free of %s was refused", what);
    return is_cached(w, p, what);
}

/* Coalesces the cache: every cached block to TLSF (stats does it first). */
static rtm_stats coalesce(wcet_heap *w) { return wcet_raw_stats(w); }

static int carve(wcet_heap *w, size_t n, void **out)
{
    *out = wcet_raw_alloc(w, n);
    REQUIRE(*out != NULL, "cannot allocate %zu bytes", n);
    return 0;
}

/* Allocates n bytes right after block prev (its address neighbour). */
static int carve_after(wcet_heap *w, void *prev, size_t n, void **out)
{
    TRY(carve(w, n, out));
    REQUIRE(wcet_adjacent(w, prev, *out), "a %zu-byte block is not its neighbour's successor", n);
    return 0;
}

/* --- bins to fill -------------------------------------------------------- */

/* Up to `want` bins that can hold blocks, from `first` on in steps of dir
 * (+1 or -1), without bin `skip`. Returns how many. */
static unsigned pick_bins(unsigned first, int dir, unsigned skip, unsigned want, unsigned *bins)
{
    unsigned n = 0;
    for (int k = (int)first; k >= 0 && k < (int)TC_BINS && n < want; k += dir)
        if ((unsigned)k != skip && bin_block((unsigned)k) != 0)
            bins[n++] = (unsigned)k;
    return n;
}

/* n block sizes spread over bins[] round-robin (so neighbours in the plan
 * differ in bin), never more than a ring's 8 in one bin. 0 or 1. */
static int plan_sizes(const unsigned *bins, unsigned nbins, size_t n, size_t *sizes)
{
    REQUIRE(nbins > 0 && n <= (size_t)nbins * TC_RING, "%zu blocks do not fit %u rings", n, nbins);
    for (size_t i = 0; i < n; i++)
        sizes[i] = bin_block(bins[i % nbins]);
    return 0;
}

/* --- measured calls -------------------------------------------------------- */

static int must_free(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void *p)
{
    REQUIRE(wcet_m_free(w, (unsigned)sc, v, n, p) == 0, "free of a live %zu-byte block rejected",
            n);
    return 0;
}

/* --- cache-hit ----------------------------------------------------------- */

enum { HIT_NEXT, HIT_OWN, HIT_MISS, PUSH_EMPTY, PUSH_ROOM, PUSH_TAGGED, HIT_CASES };
static const char *const hit_cases[HIT_CASES] = {
    "alloc: the next bin's newest (first probe)",
    "alloc: next bin empty, own bin's newest large enough (second probe)",
    "alloc: both probes miss (next bin empty, own bin's newest too small), TLSF serves",
    "free pushed on an empty ring",
    "free pushed on a ring of 7",
    "free of a block reused from the cache unwritten (word sealed live by the hit): pushed"};

/* Requests and the blocks they get: the smallest bin, a mid one, the top
 * bin (no next bin to probe). */
static const size_t hit_sizes[] = {1, 100, 1000, 20000, 30000};

/* Allocs served by a probe, or missed by both. */
static int hit_alloc(wcet_heap *w, unsigned si, unsigned c)
{
    size_t req = hit_sizes[si];
    unsigned b = bin_of(req);
    size_t x_size = c == HIT_NEXT  ? (b + 1u < TC_BINS ? bin_block(b + 1u) : 0)
                    : c == HIT_OWN ? req
                                   : bin_block(b);
    if (c == HIT_MISS)
        req = x_size + 1u; /* spans 8 bytes more than the cached block */
    if (x_size == 0 || bin_of(req) != b || (c == HIT_OWN && bin_of(usable_for(req)) != b))
        return 0; /* no such block for this bin (the case does not exist) */
    void *x, *p;
    TRY(wcet_heap_new(w, 0, 4 * MIB));
    TRY(carve(w, x_size, &x));
    TRY(cache_free(w, x, "the block"));
    REQUIRE(bin_of(tlsf_usable(x)) == (c == HIT_NEXT ? b + 1u : b), "the block is in another bin");
    REQUIRE(c != HIT_OWN || tlsf_usable(x) >= req, "the block is too small");
    REQUIRE(c != HIT_MISS || tlsf_usable(x) < req, "the block is large enough");
    p = wcet_m_alloc(w, SC_TC_HIT, V(c, si), req);
    REQUIRE(p != NULL, "request of %zu bytes refused", req);
    REQUIRE((p == x) == (c != HIT_MISS), "request of %zu: %s", req,
            c == HIT_MISS ? "the too-small block was handed out" : "not served from the cache");
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

/* Frees pushed on a ring with room: empty, 7 entries, 7 entries and the
 * freed block reused from the cache unwritten (the hit sealed its check
 * word live again, so the free pushes it like any other). */
static int hit_push(wcet_heap *w, unsigned si, unsigned c)
{
    size_t n = hit_sizes[si];
    void *blk[TC_RING], *x;
    TRY(wcet_heap_new(w, 0, 4 * MIB));
    for (unsigned i = 0; i < TC_RING; i++)
        TRY(carve(w, n, &blk[i]));
    x = blk[TC_RING - 1u];
    if (c == PUSH_TAGGED) {
        TRY(cache_free(w, x, "the block"));
        REQUIRE(wcet_raw_alloc(w, n) == x, "the block did not come back from the cache");
    }
    for (unsigned i = 0; c != PUSH_EMPTY && i + 1u < TC_RING; i++)
        TRY(cache_free(w, blk[i], "a ring entry"));
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed");
    TRY(must_free(w, SC_TC_HIT, V(c, si), usable(w, x), x));
    TRY(is_cached(w, x, "the freed block"));
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

static int cache_hit(wcet_heap *w)
{
    for (unsigned si = 0; si < ARRAY_LEN(hit_sizes); si++) {
        for (unsigned c = HIT_NEXT; c <= HIT_MISS; c++)
            TRY(hit_alloc(w, si, c));
        for (unsigned c = PUSH_EMPTY; c <= PUSH_TAGGED; c++)
            TRY(hit_push(w, si, c));
    }
    return 0;
}

/* --- cache-evict ----------------------------------------------------------- */

enum { EV_RING, EV_RING_TAGGED, EV_LIMIT, EV_LIMIT_EMPTY, EV_LARGE, EV_CASES };
static const char *const ev_cases[EV_CASES] = {
    "full ring: its oldest to TLSF, merging both",
    "block reused from the cache unwritten (word sealed live), full ring: the oldest to TLSF, "
    "merging both",
    "cache full (128), ring not: the bin's oldest to TLSF, merging both",
    "cache full (128), ring empty: the block to TLSF, merging both",
    "block above 32 KiB - 1 (not cached): to TLSF, merging both"};

/* The evicted block's sizes (a cached bin low, mid, top) and its free
 * neighbours: each alone in its TLSF list, as in TLSF's worst free. */
static const size_t ev_sizes[] = {20, 1000, 30000};
#define EV_LEFT       1052u
#define EV_RIGHT      20u
#define EV_LARGE_SIZE 41980u

/* [L][B][R][fence] with L and R free in TLSF (not cached), B used, the
 * merged block's TLSF list given shape ms by companions; `nsame` more
 * blocks of B's size and `nfill` of other bins allocated for the caller to
 * cache. Everything is allocated before L and R are freed, so no later
 * request can take them. Leaves the cache empty. */
typedef struct ev_state {
    void *l, *b, *r;
    void *same[TC_RING];
    void *fill[TC_LIMIT];
    size_t nfill;
} ev_state;

static int ev_build(wcet_heap *w, size_t bn, enum wcet_shape ms, unsigned nsame, size_t nfill,
                    ev_state *s)
{
    wcet_companions comp = {0};
    unsigned bins[TC_BINS];
    size_t sizes[TC_LIMIT];
    void *fence;
    TRY(wcet_heap_new(w, 0, 8 * MIB));
    wcet_plan_shape(&comp, ms, EV_LEFT + bn + EV_RIGHT + 2u * BELOW + TC_WORD);
    TRY(wcet_carve_companions(w, &comp));
    TRY(carve(w, EV_LEFT, &s->l));
    TRY(carve_after(w, s->l, bn, &s->b));
    TRY(carve_after(w, s->b, EV_RIGHT, &s->r));
    TRY(carve_after(w, s->r, 0, &fence));
    unsigned nb = pick_bins(1, +1, bin_of(usable(w, s->b)), TC_BINS, bins);
    TRY(plan_sizes(bins, nb < 16u ? nb : 16u, nfill, sizes));
    for (unsigned i = 0; i < nsame; i++)
        TRY(carve(w, bn, &s->same[i]));
    for (size_t i = 0; i < nfill; i++)
        TRY(carve(w, sizes[i], &s->fill[i]));
    s->nfill = nfill;
    wcet_free_companions(w, &comp);
    wcet_raw_free(w, s->l);
    wcet_raw_free(w, s->r);
    (void)coalesce(w);
    TRY(is_tlsf_free(w, s->l, "the left neighbour"));
    TRY(is_tlsf_free(w, s->r, "the right neighbour"));
    for (size_t i = 0; i < comp.n; i++)
        TRY(is_tlsf_free(w, comp.p[i], "a companion"));
    return 0;
}

static int ev_fill(wcet_heap *w, ev_state *s)
{
    for (size_t i = 0; i < s->nfill; i++)
        TRY(cache_free(w, s->fill[i], "a block of another bin"));
    return 0;
}

/* The ring of B's bin full, B its oldest: B and 7 more of its size cached,
 * then the measured free of x (its size too), or of a block reused from the
 * cache unwritten. */
static int ev_ring(wcet_heap *w, unsigned si, enum wcet_shape ms, int tagged)
{
    size_t bn = ev_sizes[si];
    ev_state s;
    TRY(ev_build(w, bn, ms, TC_RING, 0, &s));
    void **blk = s.same, *x = blk[TC_RING - 1u];
    if (tagged) {
        TRY(cache_free(w, x, "the block"));
        REQUIRE(wcet_raw_alloc(w, bn) == x, "the block did not come back from the cache");
    }
    TRY(cache_free(w, s.b, "the oldest block"));
    for (unsigned i = 0; i + 1u < TC_RING; i++)
        TRY(cache_free(w, blk[i], "a ring entry"));
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed");
    unsigned c = tagged ? EV_RING_TAGGED : EV_RING;
    TRY(must_free(w, SC_TC_EVICT, V(c, si | (unsigned)ms << 2), usable(w, x), x));
    TRY(is_tlsf_free(w, s.b, "the oldest block, after the free"));
    TRY(is_cached(w, x, "the freed block"));
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

/* The cache full (128 held): B alone in its ring and 127 blocks of other
 * bins (evicts B), or 128 of other bins and B itself freed (its ring
 * empty: straight to TLSF). */
static int ev_limit(wcet_heap *w, unsigned si, int empty)
{
    size_t bn = ev_sizes[si];
    ev_state s;
    void *x;
    TRY(ev_build(w, bn, SHAPE_TAIL, empty ? 0u : 1u, empty ? TC_LIMIT : TC_LIMIT - 1u, &s));
    x = empty ? s.b : s.same[0];
    TRY(ev_fill(w, &s));
    if (!empty)
        TRY(cache_free(w, s.b, "the oldest block")); /* the 128th held */
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed (more than the limit held?)");
    unsigned c = empty ? EV_LIMIT_EMPTY : EV_LIMIT;
    TRY(must_free(w, SC_TC_EVICT, V(c, si | SHAPE_TAIL << 2), usable(w, x), x));
    TRY(is_tlsf_free(w, s.b, "the block merged by the free"));
    if (!empty)
        TRY(is_cached(w, x, "the freed block"));
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

static int ev_large(wcet_heap *w)
{
    ev_state s;
    TRY(ev_build(w, EV_LARGE_SIZE, SHAPE_TAIL, 0, 0, &s));
    REQUIRE(usable(w, s.b) > TC_LARGEST, "the block is not above the cached sizes");
    TRY(must_free(w, SC_TC_EVICT, V(EV_LARGE, SHAPE_TAIL << 2), usable(w, s.b), s.b));
    TRY(is_tlsf_free(w, s.b, "the block"));
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

static int cache_evict(wcet_heap *w)
{
    for (unsigned si = 0; si < ARRAY_LEN(ev_sizes); si++) {
        for (unsigned ms = 0; ms < SHAPE_COUNT; ms++)
            for (int tagged = 0; tagged < 2; tagged++)
                TRY(ev_ring(w, si, (enum wcet_shape)ms, tagged));
        TRY(ev_limit(w, si, 0));
        TRY(ev_limit(w, si, 1));
    }
    return ev_large(w);
}

/* --- cache-flush ------------------------------------------------------------ */

enum { FL_TOP_RINGS, FL_EVERY_BIN, FL_CASES };
static const char *const fl_cases[FL_CASES] = {
    "128 cached in the 16 top bins (rings full), both probes miss, TLSF refuses: 128 frees "
    "merging both, retry",
    "128 cached over every bin (3 or 4 each), own-bin probe misses, TLSF refuses: 128 frees "
    "merging both, retry"};

#define FL_GAP 20u /* the free blocks between the cached ones */

/* [F0][C1][F1] ... [C128][F128][fence], the rest of the heap allocated:
 * the F free in TLSF (the only free blocks: 20 bytes each), the C cached.
 * The request fits no F, so TLSF refuses it; once the cache is coalesced
 * everything from F0 to F128 is one block and the retry takes its start. */
static int flush_case(wcet_heap *w, unsigned c)
{
    static void *gap[TC_LIMIT + 1u], *blk[TC_LIMIT];
    static size_t sizes[TC_LIMIT];
    unsigned bins[TC_BINS], nb;
    size_t req;
    if (c == FL_TOP_RINGS) {
        nb = pick_bins(TC_BINS - 1u, -1, NO_BIN, TC_LIMIT / TC_RING, bins);
        req = bin_block(bins[nb - 1u] - 2u); /* two bins below the lowest filled */
    } else {
        nb = pick_bins(0, +1, NO_BIN, TC_BINS, bins);
        req = TC_LARGEST; /* the top bin: its blocks are all smaller */
    }
    TRY(plan_sizes(bins, nb, TC_LIMIT, sizes));
    TRY(wcet_heap_new(w, 0, 8 * MIB));
    TRY(carve(w, FL_GAP, &gap[0]));
    for (size_t i = 0; i < TC_LIMIT; i++) {
        TRY(carve_after(w, gap[i], sizes[i], &blk[i]));
        TRY(carve_after(w, blk[i], FL_GAP, &gap[i + 1u]));
    }
    void *fence;
    TRY(carve_after(w, gap[TC_LIMIT], 0, &fence));
    TRY(wcet_consume_largest(w));
    for (size_t i = 0; i <= TC_LIMIT; i++)
        wcet_raw_free(w, gap[i]);
    rtm_stats st = coalesce(w);
    REQUIRE(st.largest_free == FL_GAP && st.free_bytes == (TC_LIMIT + 1u) * FL_GAP,
            "the free blocks are not only the gaps (largest %zu, free %zu)", st.largest_free,
            st.free_bytes);
    for (size_t i = 0; i < TC_LIMIT; i++)
        TRY(cache_free(w, blk[i], "a block"));
    for (size_t i = 0; i <= TC_LIMIT; i++)
        TRY(is_tlsf_free(w, gap[i], "a gap"));
    REQUIRE(wcet_raw_check(w) == 0, "heap check failed (more than the limit held?)");
    unsigned b = bin_of(req);
    for (unsigned k = 0; k < nb; k++)
        REQUIRE(bins[k] != b + 1u || b + 1u >= TC_BINS, "the first probe would hit");
    for (size_t i = 0; i < TC_LIMIT; i++)
        REQUIRE(bin_of(sizes[i]) != b || sizes[i] < req, "the second probe would hit");
    void *p = wcet_m_alloc(w, SC_TC_FLUSH, V(c, nb), req);
    REQUIRE(p != NULL, "request of %zu bytes refused after the flush", req);
    REQUIRE(p == gap[0], "the retry did not take the coalesced block");
    for (size_t i = 0; i < TC_LIMIT; i++)
        TRY(is_tlsf_free(w, blk[i], "a block after the flush"));
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("heap check failed");
}

static int cache_flush(wcet_heap *w)
{
    for (unsigned c = 0; c < FL_CASES; c++)
        TRY(flush_case(w, c));
    return 0;
}

/* --- dispatch and descriptions ------------------------------------------- */

int wcet_tc_scenario(wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc)
{
    (void)cfg;
    switch (sc) {
    case SC_TC_HIT:
        return cache_hit(w);
    case SC_TC_EVICT:
        return cache_evict(w);
    case SC_TC_FLUSH:
        return cache_flush(w);
    default:
        return wcet_fail("scenario %d is not a tlsf_cached scenario", (int)sc);
    }
}

unsigned long wcet_tc_weight(const wcet_config *cfg, enum wcet_scenario sc)
{
    (void)cfg;
    return sc == SC_TC_FLUSH ? 400 : 40; /* a flush is ~150 calls' worth */
}

static const char *pick(const char *const *names, size_t n, unsigned i)
{
    return i < n ? names[i] : "?";
}

int wcet_tc_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned long long n = (unsigned long long)size;
    unsigned c = V_CASE(v), p = V_PARAM(v);
    switch (sc) {
    case SC_TC_HIT:
        snprintf(buf, len, "%s (%s %llu)", pick(hit_cases, HIT_CASES, c),
                 c < PUSH_EMPTY ? "request" : "block of", n);
        return 1;
    case SC_TC_EVICT:
        snprintf(buf, len, "%s (block of %llu, merged into list: %s)", pick(ev_cases, EV_CASES, c),
                 n, wcet_shape_names[(p >> 2) & 3u]);
        return 1;
    case SC_TC_FLUSH:
        snprintf(buf, len, "%s (request %llu)", pick(fl_cases, FL_CASES, c), n);
        return 1;
    default:
        return 0;
    }
}
