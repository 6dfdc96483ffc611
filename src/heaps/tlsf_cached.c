// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_cached.c -- "tlsf_cached[:<blocks>]": a TLSF heap whose
 * recently freed small blocks wait in a bounded cache before they are
 * coalesced, and whose blocks carry a check word. Opt-in (plain "tlsf" has
 * no cache and keeps its worst path and its 4-byte header); reached through
 * the generic API only.
 *
 * Why the cache: immediate coalescing is what makes a TLSF free slow. It
 * reads the freed block's header, then its neighbours' headers and the list
 * neighbours of every block it merges: several cold cache lines per call in
 * a large working set (docs/TLSF.md, "Where the time goes"). A program that
 * frees a block and soon asks for one of about the same size can skip all
 * of that: the block goes back to the caller as it was, its neighbours
 * never read. Size-class allocators (mimalloc, tcmalloc) win the
 * random-replace loop that way; this layer does the same on top of an
 * unchanged TLSF, bounded so that it stays a real-time heap.
 *
 * Why the check word: TLSF proves that a pointer handed to free is a live
 * block by reading its header and then its right neighbour's, two dependent
 * cold lines; measured, that was half of this heap's time in the loop. Here
 * every block the caller holds sits 8 bytes above the inner TLSF block, and
 * those 8 bytes are a word sealed with the block's offset:
 *
 *   inner block q:  [TLSF header][ check word ][ caller's bytes ... ]
 *                                              ^ p = q + 8
 *   word = key(offset of p) ^ (usable << 8 | prefix log << 2 | state)
 *
 * One load in the header's line then proves the block, its size and its
 * state (live, cached, freed) where TLSF needed two lines, and a stray
 * word passes with a probability near 2^-50 where TLSF's header and
 * neighbour bit pass garbage with one about the pool's size over 8 GiB.
 * The cost is 8 bytes per block (memcheck, docs/TLSF.md), which is why
 * this is an option. A block of aligned_alloc with an alignment A above 8
 * sits A bytes above its inner block, whose first word then forwards to it
 * (the walk and the check find the caller's pointer from TLSF's block).
 *
 *   control: [ kind | limit | held | salt | bins: 44 rings of 8 (offset, usable) ]
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
 * scan of at most 8 recorded sizes), else the inner heap. A block is handed
 * out whole, so it may be up to 1.5x the request (the next bin's upper
 * bound); that is the memory this trades. When the inner heap refuses, the
 * whole cache is coalesced and the request tried once more: the cache never
 * refuses a request that the inner heap would have served from the same
 * blocks.
 *
 * Bounds (docs/TLSF.md, "The deferred-coalescing cache"):
 *  - at most `blocks` blocks (default 128, at most 352) are held, so the
 *    memory held back from coalescing is at most blocks x 32 KiB;
 *  - alloc and free are O(1): alloc is a ring probe and a scan of at most
 *    8 entries, then at most one inner alloc; free is one check word, at
 *    most one inner free and a push. The exception, and the cost of the
 *    option: an alloc, aligned alloc or realloc that the inner heap refuses
 *    first coalesces the whole cache (at most `blocks` inner frees) before
 *    its retry. Size the region so that the real-time phase is never
 *    refused, or use "tlsf". A request served by that retry leaves errno
 *    at ENOMEM (C allows it; this freestanding file cannot read errno to
 *    put it back).
 *  - stats and walk coalesce the cache first (O(blocks)), so they report
 *    what the caller can get: a free block's size is what a request of
 *    that size would receive (the inner block less the check word), used
 *    bytes are the usable sizes of live blocks, largest_free the largest
 *    request that succeeds. peak_used_bytes is the highest used_bytes the
 *    caller could see.
 *
 * Misuse: free, realloc and usable_size read the check word below the
 * pointer once the pointer lies in a pool (nothing is read before), and
 * compare it with the inner header in the same line. A cached block's word
 * says so (confirmed by a scan of its bin's ring, at most 8 entries) and a
 * block given back to the inner heap is marked freed, so a second free is
 * refused as RTM_ERR_DOUBLE_FREE at its own call; an interior, stale or
 * foreign pointer, or a word overwritten below a block, as
 * RTM_ERR_CORRUPT_HEADER or RTM_ERR_FOREIGN_POINTER. A cached block also
 * carries a tag over its first word, which rtm_heap_check() verifies (a
 * write after free), as it verifies every block's check word.
 *
 * Offsets from this control make the heap position independent like TLSF,
 * and reset changes the salt of the key, so a pointer from before a reset
 * no longer passes. Freestanding; not thread-safe (the caller or "locked:"
 * serialises access).
 */
#include "core/kind.h"
#include "heaps/tlsf_layout.h" /* the inner heap's header, counters, fast range */
#include "rtmem/tlsf.h"

#define TC_SUB_LOG2       2u  /* 4 bins per power of two */
#define TC_LOW_LOG2       4u  /* bin 0 starts at 16 bytes */
#define TC_HIGH_LOG2      14u /* the last power cached    */
#define TC_BINS           ((TC_HIGH_LOG2 - TC_LOW_LOG2 + 1u) << TC_SUB_LOG2) /* 44 */
#define TC_RING           8u                                                 /* a power of two */
#define TC_LARGEST        (((size_t)2u << TC_HIGH_LOG2) - 1u)                /* 32 KiB - 1 */
#define TC_DEFAULT_BLOCKS 128u
#define TC_MAX_BLOCKS     (TC_BINS * TC_RING)

/* The check word: the 8 bytes below every caller's block. */
#define TC_WORD      ((size_t)8u)
#define ST_FORWARD   0u /* an aligned block's inner block: the caller's is 2^log above */
#define ST_LIVE      1u /* the caller holds it                                        */
#define ST_CACHED    2u /* in a ring                                                  */
#define ST_FREED     3u /* given back to the inner heap                               */
#define ST_MASK      3u
#define LOG_SHIFT    2u
#define LOG_MASK     63u
#define USABLE_SHIFT 8u
#define LOG_FIRST    4u /* the smallest prefix log of an aligned block (A = 16) */
#define LOG_LAST     ((unsigned)(sizeof(size_t) * 8u - 1u)) /* any power of two of a size_t */
#define TC_SALT      0x243F6A8885A308D3ull /* the first key's salt (any odd constant) */

typedef struct tc_entry {
    ptrdiff_t off; /* the caller's pointer, from the control structure (an
                      added pool may lie below it) */
    size_t usable; /* its usable size (no word read to compare) */
} tc_entry;

typedef struct rtm_tlsf_cached {
    uint32_t kind;          /* RTM_KIND_TLSF_CACHED */
    uint32_t limit;         /* most blocks held at once */
    uint32_t held;          /* blocks held now */
    uint32_t inner_off;     /* the inner TLSF's control, from this one */
    uint32_t lost;          /* bytes skipped to align the start */
    uint64_t salt;          /* keys the check words; reset changes it */
    size_t undone;          /* inner refusals retried after a flush */
    size_t cached_bytes;    /* usable bytes of the blocks held */
    size_t prefix_bytes;    /* bytes between inner blocks and the caller's, over all */
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

/* --- the check word ------------------------------------------------------ */

/* The key of the word at offset off: a multiply and a shift spread every
 * bit of the offset and the salt over the word (64-bit on every target, so
 * 32-bit heaps get the same strength). */
static inline uint64_t key_of(const rtm_tlsf_cached *c, ptrdiff_t off)
{
    uint64_t k = ((uint64_t)off ^ c->salt) * 0x9E3779B97F4A7C15ull;
    return k ^ (k >> 29);
}

static inline uint64_t *word_at(const char *a) { return (uint64_t *)(uintptr_t)a; }

/* The word of the caller's block p: usable size, prefix log (0: the
 * plain 8 bytes), state. */
static inline void seal(const rtm_tlsf_cached *c, char *p, size_t usable, unsigned lg, unsigned st)
{
    uint64_t v = (uint64_t)usable << USABLE_SHIFT | (uint64_t)lg << LOG_SHIFT | st;
    *word_at(p - TC_WORD) = key_of(c, cached_off(c, p)) ^ v;
}

static inline uint64_t opened(const rtm_tlsf_cached *c, const char *p)
{
    return *word_at(p - TC_WORD) ^ key_of(c, cached_off(c, p));
}

/* Moves p's sealed word from state `from` to `to`: the state is the low
 * bits of what the key was xored with, so no key is computed. */
static inline void restate(char *p, unsigned from, unsigned to)
{
    *word_at(p - TC_WORD) ^= (uint64_t)(from ^ to);
}

/* The whole field, 56 bits on every target: a 32-bit heap must not drop a
 * damaged high bit before comparing (the -m32 run found it). */
static inline uint64_t v_usable(uint64_t v) { return v >> USABLE_SHIFT; }
static inline unsigned v_log(uint64_t v) { return (unsigned)(v >> LOG_SHIFT) & LOG_MASK; }
static inline unsigned v_state(uint64_t v) { return (unsigned)v & ST_MASK; }
static inline size_t prefix_of(unsigned lg) { return lg == 0 ? TC_WORD : (size_t)1u << lg; }

/* The inner header a live block of this usable size and prefix has (FREE
 * clear; ALIGNED set exactly for an aligned block; PREV_FREE masked). */
static inline int header_agrees(const char *q, size_t usable, unsigned lg)
{
    uint32_t want = (uint32_t)(usable + prefix_of(lg) + HDR_BYTES) | (lg != 0 ? BLOCK_ALIGNED : 0u);
    return (hdr(q) & ~(uint32_t)BLOCK_PREV_FREE) == want;
}

/* The word a cached block carries in its first bytes (a write after free
 * to it is found by the check). Unlike any small integer or pointer. */
static inline size_t tag_of(ptrdiff_t off)
{
    return ~((size_t)off * (size_t)0x9E3779B97F4A7C15ull);
}

static inline size_t *first_word(char *p) { return (size_t *)(void *)p; }

/* Hot path: p's inner block q = p - 8 lies in the inner heap's fast range,
 * so the word and the header below it can be read. Debug builds search
 * the pools instead, as TLSF does. */
static inline int in_fast_range(const rtm_tlsf_cached *c, const char *p)
{
    const rtm_tlsf *t = inner(c);
    size_t d = (size_t)((uintptr_t)p - TC_WORD - FAST_FIRST - (uintptr_t)t);
    return !RTM_DEBUG && ((uintptr_t)p & (GRAN - 1u)) == 0 && d <= t->fast_last;
}

/* --- turning inner blocks into the caller's ------------------------------ */

/* The caller's block in inner block q (just allocated, or moved or resized
 * by realloc), with prefix log lg: seals it live and returns it. */
static char *issue(rtm_tlsf_cached *c, char *q, unsigned lg)
{
    if (q == NULL)
        return NULL;
    char *p = q + prefix_of(lg);
    if (lg != 0)
        *word_at(q) = key_of(c, cached_off(c, q)) ^ ((uint64_t)lg << LOG_SHIFT | ST_FORWARD);
    seal(c, p, span_of(q) - HDR_BYTES - prefix_of(lg), lg, ST_LIVE);
    return p;
}

/* The request the inner heap gets for a caller's request: the prefix more
 * (a size no block can have passes unchanged and is refused there). */
static inline size_t inner_request(size_t size, size_t prefix)
{
    return size <= RTM_TLSF_MAX_BLOCK ? size + prefix : size;
}

/* Gives block p (prefix log lg, its word in state st: live or cached)
 * back to the inner heap, marked freed first so that a second free says so. */
static int give_back(rtm_tlsf_cached *c, char *p, unsigned lg, unsigned st)
{
    restate(p, st, ST_FREED);
    if (rtm_tlsf_free(inner(c), p - prefix_of(lg)) != 0) {
        restate(p, ST_FREED, st); /* refused and reported by the inner heap */
        return -1;
    }
    c->prefix_bytes -= prefix_of(lg);
    return 0;
}

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
        size_t usable = c->ring[b][slot].usable;
        c->cached_bytes -= usable;
        c->ring[b][slot] = c->ring[b][newest];
        c->next[b] = (uint8_t)newest;
        c->count[b]--;
        c->held--;
        seal(c, cached_at(c, off), usable, 0, ST_LIVE);
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
    (void)give_back(c, cached_at(c, c->ring[b][slot].off), 0, ST_CACHED);
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

/* Hot path: p (live, plain prefix, cacheable size) onto its bin's ring; a
 * full ring or a full cache first gives the bin's oldest block back. */
static int push(rtm_tlsf_cached *c, char *p, size_t usable)
{
    unsigned b = bin_of(usable);
    if (c->count[b] == TC_RING || c->held >= c->limit) {
        if (c->count[b] == 0)
            return give_back(c, p, 0, ST_LIVE);
        evict_oldest(c, b);
    }
    ptrdiff_t off = cached_off(c, p);
    restate(p, ST_LIVE, ST_CACHED);
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

/* --- validation ----------------------------------------------------------- */

static RTM_COLD RTM_NOINLINE int refuse(const rtm_tlsf_cached *c, const char *p,
                                        rtm_error_kind kind, const char *what)
{
    rtm_report(kind, c, p, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* Why p, which lies in a pool, is not a live block (cold: misuse only). A
 * word the heap wrote (cached, freed) or an inner header marked free says
 * the block was freed before; anything else is no block at all. */
static RTM_COLD RTM_NOINLINE int refuse_word(const rtm_tlsf_cached *c, const char *p, uint64_t v)
{
    unsigned st = v_state(v);
    int ours = v_log(v) == 0 && v_usable(v) <= RTM_TLSF_MAX_BLOCK;
    if (ours && st == ST_CACHED && v_usable(v) <= TC_LARGEST &&
        in_ring(c, bin_of((size_t)v_usable(v)), cached_off(c, p)))
        return refuse(c, p, RTM_ERR_DOUBLE_FREE, "tlsf_cached: the block is already free (cached)");
    if ((ours && st == ST_FREED) || (hdr(p - TC_WORD) & BLOCK_FREE) != 0)
        return refuse(c, p, RTM_ERR_DOUBLE_FREE, "tlsf_cached: the block is free (freed twice?)");
    return refuse(c, p, RTM_ERR_CORRUPT_HEADER,
                  "tlsf_cached: not a live block: the check word below it disagrees (interior, "
                  "stale or foreign pointer, or the word overwritten)");
}

/* The word of live block p, opened, or refuses p (reported, errno EINVAL).
 * Reads nothing at p before p is known to lie in a pool. */
static RTM_NOINLINE int live_word(const rtm_tlsf_cached *c, const char *p, uint64_t *out)
{
    if (((uintptr_t)p & (GRAN - 1u)) != 0)
        return refuse(c, p, RTM_ERR_FOREIGN_POINTER, "pointer not aligned like any block");
    if (!in_fast_range(c, p) && !rtm_tlsf_holds_payload(inner(c), p - TC_WORD))
        return refuse(c, p, RTM_ERR_FOREIGN_POINTER, "pointer not inside any pool of this heap");
    uint64_t v = opened(c, p);
    unsigned lg = v_log(v);
    int shape = v_state(v) == ST_LIVE && v_usable(v) <= RTM_TLSF_MAX_BLOCK &&
                (lg == 0 || (lg >= LOG_FIRST && lg <= LOG_LAST));
    /* An aligned block's inner block lies further down: in a pool too? */
    const char *q = shape ? p - prefix_of(lg) : NULL;
    if (shape && lg != 0 && (q > p || !rtm_tlsf_holds_payload(inner(c), q)))
        shape = 0;
    if (!shape || !header_agrees(q, (size_t)v_usable(v), lg))
        return refuse_word(c, p, v);
    *out = v;
    return 0;
}

/* --- alloc -------------------------------------------------------------- */

/* Hot path: after a block is handed out, the used bytes the caller sees
 * (the inner heap's, less the cached blocks and every prefix) may have
 * reached a new peak. */
static inline void *note_peak(rtm_tlsf_cached *c, void *p)
{
    size_t used = inner(c)->used_bytes - c->cached_bytes - c->prefix_bytes;
    if (p != NULL && used > c->peak)
        c->peak = used;
    return p;
}

/* An inner block for prefix log lg, or NULL: the plain or aligned request. */
static char *inner_alloc(rtm_tlsf_cached *c, size_t align, size_t size, unsigned lg)
{
    size_t want = inner_request(size, prefix_of(lg));
    char *q =
        lg == 0 ? rtm_tlsf_alloc(inner(c), want) : rtm_tlsf_aligned_alloc(inner(c), align, want);
    if (q != NULL)
        c->prefix_bytes += prefix_of(lg);
    return q;
}

/* The inner heap refused: coalesce everything and ask once more. The first
 * refusal is not the caller's (failed_allocs subtracts it). Cold: the
 * bounded but long path of this heap. */
static RTM_COLD void *alloc_flushed(rtm_tlsf_cached *c, size_t align, size_t size, unsigned lg)
{
    if (c->held == 0 || size > RTM_TLSF_MAX_BLOCK)
        return NULL;
    flush(c);
    c->undone++;
    return issue(c, inner_alloc(c, align, size, lg), lg);
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
    char *p = issue(c, inner_alloc(c, 0, size, 0), 0);
    return note_peak(c, RTM_LIKELY(p != NULL) ? p : alloc_flushed(c, 0, size, 0));
}

/* Not cached, either way: an alignment above 8 is rare, its block sits
 * `alignment` bytes above its inner block (the nearest aligned address
 * with room for the word), and it goes straight back to the inner heap
 * when freed. */
static void *tc_aligned_alloc(rtm_tlsf_cached *c, size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1u)) != 0)
        return note_peak(c, rtm_tlsf_aligned_alloc(inner(c), align, size)); /* its EINVAL */
    if (align <= TC_WORD)
        return tc_alloc(c, size);
    unsigned lg = rtm_fls_size(align);
    char *p = issue(c, inner_alloc(c, align, size, lg), lg);
    return note_peak(c, p != NULL ? p : alloc_flushed(c, align, size, lg));
}

/* --- free --------------------------------------------------------------- */

/* Every other free: outside the fast range, aligned, large, or refused. */
static RTM_NOINLINE int free_checked(rtm_tlsf_cached *c, char *p)
{
    uint64_t v = 0;
    if (live_word(c, p, &v) != 0)
        return -1;
    if (v_log(v) == 0 && v_usable(v) <= TC_LARGEST)
        return push(c, p, (size_t)v_usable(v));
    return give_back(c, p, v_log(v), ST_LIVE);
}

/* Hot path: one word and the header in its line prove a live block of a
 * cacheable size; then the push. */
static int tc_free(rtm_tlsf_cached *c, void *ptr)
{
    if (ptr == NULL)
        return 0;
    char *p = (char *)ptr;
    if (RTM_UNLIKELY(!in_fast_range(c, p)))
        return free_checked(c, p);
    uint64_t v = opened(c, p);
    uint64_t usable = v_usable(v);
    if (RTM_UNLIKELY((v & ((1u << USABLE_SHIFT) - 1u)) != ST_LIVE || usable > TC_LARGEST ||
                     !header_agrees(p - TC_WORD, (size_t)usable, 0)))
        return free_checked(c, p);
    return push(c, p, (size_t)usable);
}

/* In place or moved by the inner heap (which keeps an aligned block's
 * alignment); a refusal retries after a flush. */
static void *tc_realloc(rtm_tlsf_cached *c, void *ptr, size_t size)
{
    if (ptr == NULL)
        return tc_alloc(c, size);
    if (size == 0) {
        (void)tc_free(c, ptr);
        return NULL;
    }
    uint64_t v = 0;
    if (live_word(c, (char *)ptr, &v) != 0)
        return NULL;
    unsigned lg = v_log(v);
    char *q = (char *)ptr - prefix_of(lg);
    size_t want = inner_request(size, prefix_of(lg));
    char *q2 = rtm_tlsf_realloc(inner(c), q, want);
    if (q2 == NULL && c->held != 0 && size <= RTM_TLSF_MAX_BLOCK) {
        flush(c);
        c->undone++;
        q2 = rtm_tlsf_realloc(inner(c), q, want);
    }
    return note_peak(c, issue(c, q2, lg));
}

static size_t tc_usable_size(rtm_tlsf_cached *c, const void *ptr)
{
    uint64_t v = 0;
    if (ptr == NULL || live_word(c, (const char *)ptr, &v) != 0)
        return 0;
    return (size_t)v_usable(v);
}

/* --- whole-heap operations ---------------------------------------------- */

static void rings_clear(rtm_tlsf_cached *c)
{
    for (unsigned b = 0; b < TC_BINS; b++)
        c->next[b] = c->count[b] = 0;
    c->held = 0;
    c->cached_bytes = 0;
}

/* The inner heap's figures as the caller sees them: the words are no
 * one's bytes, and a free block holds 8 bytes less than TLSF's. */
static rtm_stats tc_stats(rtm_tlsf_cached *c)
{
    flush(c);
    rtm_stats st = rtm_tlsf_stats(inner(c));
    st.arena_bytes += c->lost + c->inner_off; /* the whole region, as TLSF counts it */
    st.used_bytes -= c->prefix_bytes;
    st.free_bytes -= TC_WORD * inner(c)->free_blocks;
    st.largest_free = st.largest_free > TC_WORD ? st.largest_free - TC_WORD : 0;
    st.failed_allocs -= c->undone;
    st.peak_used_bytes = c->peak;
    return st;
}

/* The caller's block in used inner block q of `usable` inner bytes, and its
 * opened word; NULL when q carries no sound word. */
static char *caller_block(const rtm_tlsf_cached *c, char *q, size_t usable, uint64_t *out)
{
    unsigned lg = 0;
    uint64_t f = *word_at(q) ^ key_of(c, cached_off(c, q));
    if (v_state(f) == ST_FORWARD && (f >> USABLE_SHIFT) == 0 && v_log(f) >= LOG_FIRST &&
        v_log(f) <= LOG_LAST && prefix_of(v_log(f)) <= usable)
        lg = v_log(f);
    char *p = q + prefix_of(lg);
    uint64_t v = opened(c, p);
    unsigned st = v_state(v);
    if (v_log(v) != lg || v_usable(v) != (uint64_t)(usable - prefix_of(lg)) || st == ST_FORWARD ||
        st == ST_FREED || (st == ST_CACHED && lg != 0))
        return NULL;
    *out = v;
    return p;
}

typedef struct tc_walk {
    const rtm_tlsf_cached *c;
    rtm_walker walker; /* NULL: checking */
    void *arg;
    size_t prefixes, cached;
    const char *bad;
} tc_walk;

/* Every inner block, as the caller's (walk) or verified (check). */
static void visit_inner(void *ptr, size_t usable, int used, void *arg)
{
    tc_walk *w = arg;
    char *q = ptr;
    uint64_t v = 0;
    char *p = used ? caller_block(w->c, q, usable, &v) : q + TC_WORD;
    if (p == NULL) {
        w->bad = w->bad != NULL ? w->bad : q;
        p = q + TC_WORD; /* a damaged block is walked where a plain one starts */
        v = (uint64_t)(usable - TC_WORD) << USABLE_SHIFT | ST_LIVE;
    }
    if (used) {
        w->prefixes += (size_t)(p - q);
        w->cached += v_state(v) == ST_CACHED;
    }
    if (w->walker != NULL)
        w->walker(p, used ? (size_t)v_usable(v) : usable - TC_WORD, used, w->arg);
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

/* One ring entry: a cached block of the inner heap with its recorded size
 * and tag, in its own bin, once. NULL or what is wrong. */
static const char *entry_fault(const rtm_tlsf_cached *c, unsigned b, const tc_entry *e)
{
    char *p = cached_at(c, e->off);
    if (e->usable > TC_LARGEST || bin_of(e->usable) != b)
        return "tlsf_cached: an entry is in the wrong bin";
    if (!rtm_tlsf_holds_payload(inner(c), p - TC_WORD))
        return "tlsf_cached: an entry lies outside every pool";
    uint64_t v = opened(c, p);
    if (v_state(v) != ST_CACHED || v_log(v) != 0 || v_usable(v) != (uint64_t)e->usable ||
        !header_agrees(p - TC_WORD, e->usable, 0))
        return "tlsf_cached: an entry is not a cached block of its size";
    if (*first_word(p) != tag_of(e->off))
        return "tlsf_cached: a cached block was written after its free";
    if (in_ring(c, b, e->off) > 1)
        return "tlsf_cached: a block is cached twice";
    return NULL;
}

/* The inner heap first (so the words are read only in a sound heap), then
 * every block's word, then every ring entry and the counts. */
static int tc_check(rtm_tlsf_cached *c)
{
    if (rtm_tlsf_check(inner(c)) != 0)
        return -1;
    tc_walk w = {c, NULL, NULL, 0, 0, NULL};
    rtm_tlsf_walk(inner(c), visit_inner, &w);
    const char *what = w.bad != NULL ? "tlsf_cached: a block's check word is damaged (a write "
                                       "below the block, or a stale word)"
                                     : NULL;
    if (what == NULL && w.prefixes != c->prefix_bytes)
        what = "tlsf_cached: the blocks' prefixes do not match their count";
    unsigned held = 0;
    for (unsigned b = 0; b < TC_BINS && what == NULL; b++) {
        held += c->count[b];
        if (c->count[b] > TC_RING || c->next[b] >= TC_RING)
            what = "tlsf_cached: a ring's count or slot is out of range";
        for (unsigned k = 1; k <= c->count[b] && what == NULL; k++)
            what = entry_fault(c, b, &c->ring[b][(c->next[b] - k) & (TC_RING - 1u)]);
    }
    if (what == NULL && (held != c->held || held > c->limit || w.cached != held))
        what = "tlsf_cached: the held count does not match the rings";
    if (what == NULL && held_bytes(c) != c->cached_bytes)
        what = "tlsf_cached: the cached bytes do not match the rings";
    if (what == NULL)
        return 0;
    rtm_report(RTM_ERR_CHECK_FAILED, c, w.bad, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

static void tc_walk_blocks(rtm_tlsf_cached *c, rtm_walker walker, void *arg)
{
    flush(c);
    tc_walk w = {c, walker, arg, 0, 0, NULL};
    rtm_tlsf_walk(inner(c), visit_inner, &w);
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
    c->prefix_bytes = 0;
    c->salt = TC_SALT;
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
    return tc_usable_size(TC(h), ptr);
}
static rtm_stats tc_kind_stats(rtm_heap *h) { return tc_stats(TC(h)); }
static int tc_kind_check(rtm_heap *h) { return tc_check(TC(h)); }
static int tc_kind_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    tc_walk_blocks(TC(h), walker, arg);
    return 0;
}
static int tc_kind_reset(rtm_heap *h)
{
    rtm_tlsf_cached *c = TC(h);
    rings_clear(c);
    c->undone = 0;
    c->peak = 0;
    c->prefix_bytes = 0;
    /* A new key: a word written before the reset no longer opens. */
    c->salt = (c->salt + TC_SALT) * 0xD1B54A32D192ED03ull;
    rtm_tlsf_reset(inner(c));
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
