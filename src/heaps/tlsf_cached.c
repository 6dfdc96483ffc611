// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_cached.c -- "tlsf_cached[:<blocks>]": a TLSF heap whose
 * recently freed small blocks wait in a bounded cache before they are
 * coalesced. Opt-in (plain "tlsf" has no cache and keeps its worst path);
 * reached through the generic API only.
 *
 * Why: immediate coalescing is what makes a TLSF free slow. It reads the
 * freed block's header, then its neighbours' headers and the list
 * neighbours of every block it merges: several cold cache lines per call in
 * a large working set (docs/TLSF.md, "Where the time goes"). A program that
 * frees a block and soon asks for one of about the same size can skip all
 * of that: the block goes back to the caller as it was, its header never
 * rewritten, its neighbours never read. Size-class allocators (mimalloc,
 * tcmalloc) win the random-replace loop that way; this layer does the same
 * on top of an unchanged TLSF, bounded so that it stays a real-time heap.
 *
 *   control: [ kind | limit | held | bins: 44 rings of 8 (offset, usable) ]
 *            [ the inner TLSF heap: control, then its pool ]
 *
 * A cached block is a used block to the inner heap. Bins follow TLSF's
 * classes, 4 per power of two for usable sizes 16 B to 32 KiB - 1; larger
 * blocks are freed at once. Each bin is a ring: free pushes the newest,
 * alloc takes the newest (its lines are the likeliest to be cached), and a
 * full bin or a full cache gives its oldest block to the inner heap, whose
 * neighbours have had the longest to become free too.
 *
 * alloc(s): the newest block of the next bin (every block there is larger
 * than s), else the newest block of s's own bin that is large enough (a
 * scan of at most 8 recorded sizes), else the inner heap. A block is handed out whole, so it may be
 * up to 1.5x the request (the next bin's upper bound); that is the memory this trades. When the
 * inner heap refuses, the whole cache is coalesced and the request tried once more: the cache never
 * refuses a request that plain TLSF would have served from the same blocks.
 *
 * Bounds (docs/TLSF.md, "The deferred-coalescing cache"):
 *  - at most `blocks` blocks (default 128, at most 352) are held, so the
 *    memory held back from coalescing is at most blocks x 32 KiB. (TLSF's
 *    usable sizes are 8k + 4 and at least 20 on 64-bit, so two bins stay
 *    empty there and 336 is the most a cache can hold);
 *  - alloc and free are O(1): alloc is a ring probe and a scan of at most
 *    8 entries, then at most one inner alloc; free is one validation, at most one inner free and a
 *    push. The exception, and the cost of the option: an alloc, aligned
 *    alloc or realloc that the inner heap refuses first coalesces the
 *    whole cache (at most `blocks` inner frees) before its retry. Size the
 *    region so that the real-time phase is never refused, or use "tlsf".
 *    A request served by that retry leaves errno at ENOMEM (C allows it;
 *    this freestanding file cannot read errno to put it back).
 *  - stats and walk coalesce the cache first (O(blocks)), so they report
 *    what TLSF would: used and free bytes exact, largest_free the largest
 *    request that succeeds. peak_used_bytes is the highest used_bytes the
 *    caller could see: the inner heap counts cached blocks as used, so
 *    this layer keeps the bytes it caches and its own peak (the model
 *    rig's "deferred" band found the inner heap's peak reported).
 *
 * Misuse: free and realloc validate the pointer as TLSF does (in every
 * build). A block already in the cache is found by a tag written over its
 * first word and confirmed by a scan of its bin's ring (at most 8
 * entries): a second free, a realloc or a usable_size of it is refused as
 * RTM_ERR_DOUBLE_FREE. User data that
 * happens to equal the tag costs the scan and nothing else.
 *
 * Links are offsets from this control, so the heap is position independent
 * like TLSF. Freestanding; not thread-safe (the caller or "locked:"
 * serialises access).
 */
#include "core/kind.h"
#include "heaps/tlsf_layout.h" /* the inner heap's used_bytes, for the peak */
#include "rtmem/tlsf.h"

#define TC_SUB_LOG2       2u  /* 4 bins per power of two */
#define TC_LOW_LOG2       4u  /* bin 0 starts at 16 bytes */
#define TC_HIGH_LOG2      14u /* the last power cached    */
#define TC_BINS           ((TC_HIGH_LOG2 - TC_LOW_LOG2 + 1u) << TC_SUB_LOG2) /* 44 */
#define TC_RING           8u                                                 /* a power of two */
#define TC_LARGEST        (((size_t)2u << TC_HIGH_LOG2) - 1u)                /* 32 KiB - 1 */
#define TC_DEFAULT_BLOCKS 128u
#define TC_MAX_BLOCKS     (TC_BINS * TC_RING)

typedef struct tc_entry {
    ptrdiff_t off; /* block payload, from the control structure (an added
                      pool may lie below it) */
    size_t usable; /* its usable size (no header read to compare) */
} tc_entry;

typedef struct rtm_tlsf_cached {
    uint32_t kind;          /* RTM_KIND_TLSF_CACHED */
    uint32_t limit;         /* most blocks held at once */
    uint32_t held;          /* blocks held now */
    uint32_t inner_off;     /* the inner TLSF's control, from this one */
    uint32_t lost;          /* bytes skipped to align the start */
    size_t undone;          /* inner refusals retried after a flush */
    size_t cached_bytes;    /* usable bytes of the blocks held */
    size_t peak;            /* highest used_bytes outside the cache */
    uint8_t next[TC_BINS];  /* ring slot the next push writes */
    uint8_t count[TC_BINS]; /* entries in the ring */
    tc_entry ring[TC_BINS][TC_RING];
} rtm_tlsf_cached;

static inline rtm_tlsf *inner(const rtm_tlsf_cached *c)
{
    return (rtm_tlsf *)(uintptr_t)((const char *)c + c->inner_off);
}

static inline char *cached_at(const rtm_tlsf_cached *c, ptrdiff_t off)
{
    return (char *)(uintptr_t)c + off;
}

static inline ptrdiff_t cached_off(const rtm_tlsf_cached *c, const char *p)
{
    return p - (const char *)c;
}

/* TLSF's class of a usable size (or of a request); bin 0 below 16. */
static inline unsigned bin_of(size_t u)
{
    if (u < ((size_t)1u << TC_LOW_LOG2))
        return 0;
    unsigned f = rtm_fls_size(u);
    unsigned sub = (unsigned)(u >> (f - TC_SUB_LOG2)) & ((1u << TC_SUB_LOG2) - 1u);
    return ((f - TC_LOW_LOG2) << TC_SUB_LOG2) + sub;
}

/* The word a cached block carries in its first bytes. Position
 * independent (an offset), and unlike any small integer or pointer. */
static inline size_t tag_of(ptrdiff_t off)
{
    return ~((size_t)off * (size_t)0x9E3779B97F4A7C15ull);
}

static inline size_t *first_word(char *p) { return (size_t *)(void *)p; }

/* --- the rings ---------------------------------------------------------- */

/* Hot path: the newest block of bin b that holds `size` bytes (the ring
 * holds the sizes, so the scan of at most TC_RING entries reads no block).
 * The newest entry fills the hole, which keeps the ring contiguous. */
static inline void *take(rtm_tlsf_cached *c, unsigned b, size_t size)
{
    unsigned newest = (c->next[b] - 1u) & (TC_RING - 1u);
    for (unsigned k = 0; k < c->count[b]; k++) {
        unsigned slot = (newest - k) & (TC_RING - 1u);
        if (c->ring[b][slot].usable < size)
            continue;
        ptrdiff_t off = c->ring[b][slot].off;
        c->cached_bytes -= c->ring[b][slot].usable;
        c->ring[b][slot] = c->ring[b][newest];
        c->next[b] = (uint8_t)newest;
        c->count[b]--;
        c->held--;
        /* The tag goes: a later free of the block, written to or not,
         * then scans no ring (the line is the caller's next write). */
        *first_word(cached_at(c, off)) = 0;
        return cached_at(c, off);
    }
    return NULL;
}

/* Gives the oldest block of bin b (not empty) to the inner heap. */
static void evict_oldest(rtm_tlsf_cached *c, unsigned b)
{
    unsigned slot = (c->next[b] - c->count[b]) & (TC_RING - 1u);
    c->count[b]--;
    c->held--;
    c->cached_bytes -= c->ring[b][slot].usable;
    (void)rtm_tlsf_free(inner(c), cached_at(c, c->ring[b][slot].off));
}

/* Every cached block to the inner heap, oldest first. O(held). */
static void flush(rtm_tlsf_cached *c)
{
    for (unsigned b = 0; c->held != 0 && b < TC_BINS; b++)
        while (c->count[b] != 0)
            evict_oldest(c, b);
}

/* How many entries of bin b hold off (0 or 1 in a sound heap). */
static unsigned in_ring(const rtm_tlsf_cached *c, unsigned b, ptrdiff_t off)
{
    unsigned n = 0;
    for (unsigned k = 1; k <= c->count[b]; k++)
        n += c->ring[b][(c->next[b] - k) & (TC_RING - 1u)].off == off;
    return n;
}

/* 1 (reported, errno EINVAL) if p is a block the cache holds. */
static int cached_already(const rtm_tlsf_cached *c, char *p, size_t usable)
{
    ptrdiff_t off = cached_off(c, p);
    if (*first_word(p) != tag_of(off) || !in_ring(c, bin_of(usable), off))
        return 0;
    rtm_report(RTM_ERR_DOUBLE_FREE, c, p, "tlsf_cached: the block is already free (cached)");
    RTM_SET_ERRNO(RTM_EINVAL);
    return 1;
}

/* --- alloc -------------------------------------------------------------- */

/* Hot path: after a block is handed out, the used bytes the caller sees
 * (the inner heap's, less the cached ones) may have reached a new peak. */
static inline void *note_peak(rtm_tlsf_cached *c, void *p)
{
    size_t used = inner(c)->used_bytes - c->cached_bytes;
    if (p != NULL && used > c->peak)
        c->peak = used;
    return p;
}

/* The inner heap refused: coalesce everything and ask once more. The first
 * refusal is not the caller's (failed_allocs subtracts it). Cold: the
 * bounded but long path of this heap. */
static RTM_COLD void *alloc_flushed(rtm_tlsf_cached *c, size_t align, size_t size)
{
    if (c->held == 0 || size > RTM_TLSF_MAX_BLOCK)
        return NULL;
    flush(c);
    c->undone++;
    return align == 0 ? rtm_tlsf_alloc(inner(c), size)
                      : rtm_tlsf_aligned_alloc(inner(c), align, size);
}

/* Hot path. */
static void *tc_alloc(rtm_tlsf_cached *c, size_t size)
{
    if (RTM_LIKELY(size <= TC_LARGEST)) {
        unsigned b = bin_of(size);
        void *p = b + 1u < TC_BINS ? take(c, b + 1u, 0) : NULL;
        if (p != NULL || (p = take(c, b, size)) != NULL)
            return note_peak(c, p);
    }
    void *p = rtm_tlsf_alloc(inner(c), size);
    return note_peak(c, RTM_LIKELY(p != NULL) ? p : alloc_flushed(c, 0, size));
}

/* Not cached, either way: an alignment above 8 is rare, and its block goes
 * straight back to the inner heap when freed (tc_free says why). */
static void *tc_aligned_alloc(rtm_tlsf_cached *c, size_t align, size_t size)
{
    void *p = rtm_tlsf_aligned_alloc(inner(c), align, size);
    if (p != NULL || align == 0 || (align & (align - 1u)) != 0)
        return note_peak(c, p); /* EINVAL is the inner heap's answer; no retry */
    return note_peak(c, alloc_flushed(c, align, size));
}

/* --- free --------------------------------------------------------------- */

/* Hot path: validate as TLSF does, then push; a full ring or a full cache
 * first gives its oldest block of this bin to the inner heap. */
static int tc_free(rtm_tlsf_cached *c, void *ptr)
{
    if (ptr == NULL)
        return 0;
    char *p = (char *)ptr;
    size_t usable = rtm_tlsf_usable_size_in(inner(c), p);
    if (usable == 0)
        return -1; /* refused and reported by the inner heap */
    /* A block of aligned_alloc keeps TLSF's "aligned" mark, which makes its
     * realloc keep the alignment: cached, it would pass that on to a plain
     * request (whose realloc could then be refused where TLSF's succeeds;
     * the model rig's "deferred" band found it). */
    if (usable > TC_LARGEST || (hdr(p) & BLOCK_ALIGNED) != 0)
        return rtm_tlsf_free(inner(c), p);
    if (cached_already(c, p, usable))
        return -1;
    unsigned b = bin_of(usable);
    if (c->count[b] == TC_RING || c->held >= c->limit) {
        if (c->count[b] == 0)
            return rtm_tlsf_free(inner(c), p);
        evict_oldest(c, b);
    }
    ptrdiff_t off = cached_off(c, p);
    *first_word(p) = tag_of(off);
    tc_entry *e = &c->ring[b][c->next[b]];
    e->off = off;
    e->usable = usable;
    c->next[b] = (uint8_t)((c->next[b] + 1u) & (TC_RING - 1u));
    c->count[b]++;
    c->held++;
    c->cached_bytes += usable;
    return 0;
}

/* In place or moved by the inner heap; a refusal retries after a flush. */
static void *tc_realloc(rtm_tlsf_cached *c, void *ptr, size_t size)
{
    if (ptr == NULL)
        return tc_alloc(c, size);
    if (size == 0) {
        (void)tc_free(c, ptr);
        return NULL;
    }
    size_t usable = rtm_tlsf_usable_size_in(inner(c), ptr);
    if (usable == 0 || (usable <= TC_LARGEST && cached_already(c, ptr, usable)))
        return NULL;
    void *q = rtm_tlsf_realloc(inner(c), ptr, size);
    if (q != NULL || c->held == 0 || size > RTM_TLSF_MAX_BLOCK)
        return note_peak(c, q);
    flush(c);
    c->undone++;
    return note_peak(c, rtm_tlsf_realloc(inner(c), ptr, size));
}

/* --- whole-heap operations ---------------------------------------------- */

static void rings_clear(rtm_tlsf_cached *c)
{
    for (unsigned b = 0; b < TC_BINS; b++)
        c->next[b] = c->count[b] = 0;
    c->held = 0;
    c->cached_bytes = 0;
}

static rtm_stats tc_stats(rtm_tlsf_cached *c)
{
    flush(c);
    rtm_stats st = rtm_tlsf_stats(inner(c));
    st.arena_bytes += c->lost + c->inner_off; /* the whole region, as TLSF counts it */
    st.failed_allocs -= c->undone;
    st.peak_used_bytes = c->peak;
    return st;
}

/* The usable bytes the rings hold, counted afresh. */
static size_t held_bytes(const rtm_tlsf_cached *c)
{
    size_t sum = 0;
    for (unsigned b = 0; b < TC_BINS; b++)
        for (unsigned k = 1; k <= c->count[b] && k <= TC_RING; k++)
            sum += c->ring[b][(c->next[b] - k) & (TC_RING - 1u)].usable;
    return sum;
}

/* Each entry: a live block of the inner heap with the usable size and the
 * tag recorded, in its own bin, counted once. The inner heap first, so the
 * entries are read only in a sound heap. */
static int tc_check(rtm_tlsf_cached *c)
{
    if (rtm_tlsf_check(inner(c)) != 0)
        return -1;
    unsigned held = 0;
    const char *what = NULL;
    for (unsigned b = 0; b < TC_BINS && what == NULL; b++) {
        held += c->count[b];
        if (c->count[b] > TC_RING || c->next[b] >= TC_RING)
            what = "tlsf_cached: a ring's count or slot is out of range";
        for (unsigned k = 1; k <= c->count[b] && what == NULL; k++) {
            const tc_entry *e = &c->ring[b][(c->next[b] - k) & (TC_RING - 1u)];
            if (e->usable > TC_LARGEST || bin_of(e->usable) != b)
                what = "tlsf_cached: an entry is in the wrong bin";
            else if (rtm_tlsf_usable_size_in(inner(c), cached_at(c, e->off)) != e->usable)
                what = "tlsf_cached: an entry is not a live block of its size";
            else if ((hdr(cached_at(c, e->off)) & BLOCK_ALIGNED) != 0)
                what = "tlsf_cached: a block of aligned_alloc is cached";
            else if (*first_word(cached_at(c, e->off)) != tag_of(e->off))
                what = "tlsf_cached: a cached block was written after its free";
            else if (in_ring(c, b, e->off) > 1)
                what = "tlsf_cached: a block is cached twice";
        }
    }
    if (what == NULL && (held != c->held || held > c->limit))
        what = "tlsf_cached: the held count does not match the rings";
    if (what == NULL && held_bytes(c) != c->cached_bytes)
        what = "tlsf_cached: the cached bytes do not match the rings";
    if (what == NULL)
        return 0;
    rtm_report(RTM_ERR_CHECK_FAILED, c, NULL, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

/* --- creation ------------------------------------------------------------ */

static size_t control_bytes(void) { return (sizeof(rtm_tlsf_cached) + 7u) & ~(size_t)7u; }

/* Up to 7 bytes of alignment, this control, the smallest TLSF. 0 for a
 * block limit out of range. */
static size_t tc_min_region(size_t blocks)
{
    return blocks == 0 || blocks > TC_MAX_BLOCKS ? 0 : 7u + control_bytes() + rtm_tlsf_min_region();
}

static rtm_heap *tc_create(void *mem, size_t bytes, size_t blocks)
{
    size_t need = tc_min_region(blocks);
    if (mem == NULL || need == 0 || bytes < need || bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t lost = (size_t)((8u - (uintptr_t)mem % 8u) % 8u);
    rtm_tlsf_cached *c = (rtm_tlsf_cached *)(uintptr_t)((char *)mem + lost);
    rtm_tlsf *t = rtm_tlsf_create((char *)c + control_bytes(), bytes - lost - control_bytes());
    if (t == NULL)
        return NULL;
    c->kind = RTM_KIND_TLSF_CACHED;
    c->limit = (uint32_t)blocks;
    c->inner_off = (uint32_t)((char *)t - (char *)c);
    c->lost = (uint32_t)lost;
    c->undone = 0;
    c->peak = 0;
    rings_clear(c);
    return (rtm_heap *)(void *)c;
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

#define TC(h) RTM_KIND_AS(rtm_tlsf_cached, h)

static void *tc_kind_alloc(rtm_heap *h, size_t size) { return tc_alloc(TC(h), size); }
static void tc_kind_free(rtm_heap *h, void *ptr) { (void)tc_free(TC(h), ptr); }
static void *tc_kind_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    return tc_aligned_alloc(TC(h), alignment, size);
}
static void *tc_kind_realloc(rtm_heap *h, void *ptr, size_t size)
{
    return tc_realloc(TC(h), ptr, size);
}
/* A cached block is free to the caller: its usable size is refused as a
 * second free is (TLSF sees a used block there). */
static size_t tc_kind_usable_size(rtm_heap *h, const void *ptr)
{
    rtm_tlsf_cached *c = TC(h);
    size_t usable = rtm_tlsf_usable_size_in(inner(c), ptr);
    if (usable != 0 && usable <= TC_LARGEST && cached_already(c, (char *)(uintptr_t)ptr, usable))
        return 0;
    return usable;
}
static rtm_stats tc_kind_stats(rtm_heap *h) { return tc_stats(TC(h)); }
static int tc_kind_check(rtm_heap *h) { return tc_check(TC(h)); }
static int tc_kind_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    flush(TC(h));
    rtm_tlsf_walk(inner(TC(h)), walker, arg);
    return 0;
}
static int tc_kind_reset(rtm_heap *h)
{
    rings_clear(TC(h));
    TC(h)->undone = 0;
    TC(h)->peak = 0;
    rtm_tlsf_reset(inner(TC(h)));
    return 0;
}
/* TLSF refuses a region over its own control or pools; this control lies
 * before TLSF's, so a region over it is refused here (fuzz_misuse found
 * it accepted). */
static int tc_kind_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    const rtm_tlsf_cached *c = TC(h);
    uintptr_t lo = (uintptr_t)c - c->lost, hi = (uintptr_t)c + c->inner_off;
    uintptr_t a = (uintptr_t)mem;
    if (mem != NULL && bytes <= UINTPTR_MAX - a && a < hi && lo < a + bytes) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    return rtm_tlsf_add_pool(inner(TC(h)), mem, bytes);
}
static int tc_kind_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx)
{
    return rtm_tlsf_set_grow(inner(TC(h)), grow, ctx);
}

const rtm_heap_kind rtm_kind_tlsf_cached = {
    .kind = RTM_KIND_TLSF_CACHED,
    .default_param = TC_DEFAULT_BLOCKS, /* "tlsf_cached:<blocks held at most>" */
    .min_region = tc_min_region,
    .create = tc_create,
    RTM_KIND_OPERATIONS(tc),
    .add_pool = tc_kind_add_pool,
    .set_grow = tc_kind_set_grow,
};
