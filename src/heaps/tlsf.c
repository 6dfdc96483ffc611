// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf.c -- rtmem's TLSF heap: pools, alloc, aligned alloc, free,
 * realloc, stats, reset, growth on demand. Layout, invariants and the
 * free-list operations: heaps/tlsf_layout.h.
 *
 * Why it is shaped like this:
 *  - O(1) everywhere: every operation is a fixed sequence of bit scans, at
 *    most two list removals and one insertion; no loop depends on the heap.
 *  - Short worst case: a block's list index is computed once (a bsr and
 *    three adds); removal needs none (pprev links); the non-empty lists fit
 *    two bitmap words. The budget for the worst alloc and the worst free is
 *    120 instructions on x86-64 at -O2 (measured by build/rtmem-wcet).
 *  - Probe, then good fit: the head of the request's own list (the block
 *    freed there last) is taken when it holds the request (closest class,
 *    its lines still cached, and it closes the gap of plain good fit, rlsf
 *    issue 15); otherwise the search rounds the request up to the next
 *    list boundary, so any block found fits. Lists are LIFO (see the
 *    layout header). What remains of the gap: a block that fits but is not
 *    its list's head is not seen until it is.
 *  - The tail rule (layout header): a tail shorter than three quarters of
 *    the request stays with the block instead of becoming a fragment that
 *    every later merge must unlink from a long list.
 *  - Few mispredicted branches: the probe's outcome is an add, not a branch
 *    (mispredicted on 42 % of allocations when it was one).
 *  - No libc: this file builds freestanding (it uses __builtin_memcpy only).
 *
 * Not thread-safe; the caller serialises access to one heap.
 */
#include "heaps/tlsf_layout.h"
#include "core/kind.h"

#if RTM_TLSF_GROWTH
#include <stdatomic.h> /* growth_code: a freestanding header */
#endif

/* ---------------------------------------------------------------------- */
/* Free lists                                                              */
/* ---------------------------------------------------------------------- */

/* The list operations (insert, remove, take, search) are in tlsf_layout.h,
 * shared with crash recovery (tlsf_rebuild.c); the search policy is here. */

/* A free block whose span is at least s, out of its list, or NULL.
 * The probe: the head of s's own list (the block freed there last) is
 * taken when it holds s -- the closest class, and the lines touched last
 * -- which also closes the gap of plain good fit (rlsf issue 15: a block
 * just above its list's lower bound would serve no request of its own
 * list). Else good fit: the first non-empty list at or above s's class
 * rounded up, whose head fits whatever it holds. The choice between the
 * two is a conditional move, not a branch (the probe's outcome is random
 * in a random workload: it was mispredicted on 42 % of allocations), and
 * both end in the same bit scan and the same branch-free take. Whether the
 * list is empty stays a branch (mispredicted on 16 % of allocations, but
 * the branch-free form took 10 instructions more on the worst path). */
RTM_INLINE char *find_free_block(rtm_tlsf *t, size_t s)
{
    unsigned f = rtm_fls_size(s);
    unsigned own = list_index_f(s, f);
    ptrdiff_t head_off = t->heads[own];
    /* Good fit starts at the next list (the rounded-up class): own + 1 when
     * s lies above its list's lower bound. When s is that bound, every
     * block of its list fits, the head included, so the probe never fails
     * there -- and when the list is empty, starting one list later finds
     * the same block. So the probe's outcome is one add, no select. */
    unsigned from = own + 1u;
    if (head_off != 0) {
        RTM_ASSERT((hdr(link_at(t, head_off)) & BLOCK_FREE) != 0); /* debug: a listed block */
        from = own + (unsigned)(span_of(link_at(t, head_off)) < s);
    }
    STEP(t);
    int idx = list_search(t, from);
    if (idx < 0)
        return NULL;
    return list_take_head(t, (unsigned)idx);
}

/* ---------------------------------------------------------------------- */
/* Block use and release                                                   */
/* ---------------------------------------------------------------------- */

/* Marks free block b (span bspan, already out of its list but still counted
 * in free_blocks) used with span s, returning the tail to the free lists when
 * it can stand alone:
 *   [ b ............................ ][next]
 *   [ b: s (used) ][ rest (free)     ][next]   rest >= MIN_SPAN
 * flags carries PREV_FREE/ALIGNED for the new header. */
static inline void *use_block(rtm_tlsf *t, char *b, size_t bspan, size_t s, uint32_t flags)
{
    RTM_ASSERT(bspan >= s && s >= MIN_SPAN);
    size_t rest = bspan - s;
    if (rest >= tail_least(s)) {
        char *r = b + s;
        set_hdr(r, rest | BLOCK_FREE);
        set_footer(r, rest);
        list_insert(t, r, rest);
        bspan = s;
    } else {
        char *next = b + bspan;
        set_hdr(next, hdr(next) & ~BLOCK_PREV_FREE);
        t->free_blocks--; /* the split's remainder would have replaced b */
    }
    set_hdr(b, bspan | flags);
    t->used_bytes += bspan - HDR_BYTES;
    t->live_blocks++;
    if (t->used_bytes > t->peak_used)
        t->peak_used = t->used_bytes;
    return b;
}

static RTM_COLD void *refuse(rtm_tlsf *t, int err)
{
    if (err == RTM_ENOMEM)
        t->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject_free(const rtm_tlsf *t, const void *p, rtm_error_kind kind,
                                const char *what)
{
    rtm_report(kind, t, p, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Validating a pointer handed back                                        */
/* ---------------------------------------------------------------------- */
/*
 * free, realloc and usable_size trust nothing about the pointer. In every
 * build, each step before the next one reads memory:
 *  1. p is 8-aligned and lies in a pool, with room for a block after it:
 *     in the fast range (tlsf_layout.h; two subtractions and a compare),
 *     else in one of the other pools (a search, O(pools)). Nothing at p is
 *     read before this holds, so a stack address or another heap's block is
 *     refused without a fault.
 *  2. p's header: FREE clear, MIN_SPAN <= span <= bytes to the range's end
 *     (a block the fast range cannot hold is checked again against its
 *     pool: the range may end inside a pool).
 *  3. the header at p + span (inside the range by 2): PREV_FREE clear, as
 *     after every used block.
 *  4. if p's header says PREV_FREE: the footer below p (a span ps) keeps
 *     p - ps inside the range, and the header at p - ps is exactly ps + FREE
 *     (the merge will trust that block's links).
 * A header read by these steps lies in memory the caller gave the heap, so
 * garbage makes the checks fail, never fault. What they cannot see: user
 * data just below an interior or stale pointer that forms a used header
 * passing 2-4 (include/rtmem/tlsf.h lists the cases). Debug builds search
 * the pools on every call (exact pool bounds, not the fast range) and also
 * check a free right neighbour's span and footer before merging with it.
 * Measured cost on the worst free: docs/TLSF.md, "Errors and misuse".
 */

/* Offset of p from the fast range's first payload (wraps below it). */
static inline size_t fast_offset(const rtm_tlsf *t, const char *p)
{
    return (size_t)((uintptr_t)p - FAST_FIRST - (uintptr_t)t);
}

/* Steps 2-4 for p, `below` bytes above the first payload of its range and
 * `room` bytes before the range's end minus MIN_SPAN. 0: a used block. */
static inline int header_bad(const char *p, size_t below, size_t room)
{
    uint32_t h = hdr(p);
    size_t s = h & SPAN_MASK;
    if ((h & BLOCK_FREE) != 0 || s - MIN_SPAN > room || (hdr(p + s) & BLOCK_PREV_FREE) != 0)
        return 1;
    if ((h & BLOCK_PREV_FREE) == 0)
        return 0;
    size_t ps = prev_span(p);
    /* The header word a free block of span ps has: ps + FREE, not ps | FREE,
     * so an odd footer is refused too. Compared in 32 bits (one compare with
     * memory), which wraps only for a footer of 2^32 - 1 with a zero word
     * that far below p: a forgery, like any header the user writes. */
    return ps > below || hdr_unaligned(p - ps) != (uint32_t)ps + BLOCK_FREE;
}

/* Step 1 by search: the pool holding payload address a with room for a
 * block. Compares integers, so a foreign pointer never forms an
 * out-of-range pointer. 0 and the bounds, or -1. O(pools). */
static int locate_in_pools(const rtm_tlsf *t, uintptr_t a, size_t *below, size_t *room)
{
    if ((a & (GRAN - 1u)) != 0)
        return -1;
    for (ptrdiff_t off = t->first_pool; off != 0;) {
        tlsf_pool *pool = pool_at(t, off);
        uintptr_t first = (uintptr_t)pool_first(pool), end = (uintptr_t)at(t, pool->end);
        if (a >= first && a < end && end - a >= MIN_SPAN) {
            *below = (size_t)(a - first);
            *room = (size_t)(end - a) - MIN_SPAN;
            return 0;
        }
        off = pool->next;
    }
    return -1;
}

/* Step 1 in the fast range (release builds): 0 and the bounds, or -1. The
 * range may end inside a pool (a control from a version without it holds
 * 0: only the first payload), so a block it rejects is searched again. */
static inline int locate_fast(const rtm_tlsf *t, const char *p, size_t *below, size_t *room)
{
    size_t d = fast_offset(t, p);
    if (RTM_DEBUG || ((uintptr_t)p & (GRAN - 1u)) != 0 || d > t->fast_last)
        return -1;
    *below = d;
    *room = t->fast_last - d;
    return 0;
}

#if RTM_DEBUG
/* Debug builds: a free right neighbour must have a span inside the pool and
 * a footer equal to it before its links are trusted by the merge. */
static int debug_neighbour_bad(const char *p, size_t room)
{
    const char *next = p + span_of(p);
    uint32_t nh = hdr(next);
    size_t ns = nh & SPAN_MASK, left = room + MIN_SPAN - span_of(p);
    if ((nh & BLOCK_FREE) == 0)
        return 0;
    return ns < MIN_SPAN || ns > left || prev_span(next + ns) != ns;
}
#else
#define debug_neighbour_bad(p, room) 0
#endif

int rtm_tlsf_holds_payload(const rtm_tlsf *t, const void *p)
{
    size_t below = 0, room = 0;
    const char *c = (const char *)p;
    return locate_fast(t, c, &below, &room) == 0 ||
           locate_in_pools(t, (uintptr_t)c, &below, &room) == 0;
}

/* Reports a pointer outside every pool (cold: only misuse gets here). */
static RTM_COLD RTM_NOINLINE int refuse_foreign(const rtm_tlsf *t, const char *p)
{
    if (((uintptr_t)p & (GRAN - 1u)) != 0)
        return reject_free(t, p, RTM_ERR_FOREIGN_POINTER, "pointer not aligned like any block");
    return reject_free(t, p, RTM_ERR_FOREIGN_POINTER, "pointer not inside any pool of this heap");
}

/* Reports a pointer in a pool that is not a used block: a FREE header with a
 * span that fits the pool is a block freed before, anything else a header
 * no block can have (cold). */
static RTM_COLD RTM_NOINLINE int refuse_header(const rtm_tlsf *t, const char *p, size_t room)
{
    uint32_t h = hdr(p);
    if ((h & BLOCK_FREE) != 0 && (h & SPAN_MASK) - MIN_SPAN <= room)
        return reject_free(t, p, RTM_ERR_DOUBLE_FREE, "block is free (freed twice?)");
    return reject_free(t, p, RTM_ERR_CORRUPT_HEADER,
                       "not a used block: its header or a neighbour's disagrees (interior or "
                       "stale pointer, or header overwritten)");
}

/* Steps 2-4 and the debug checks, for p located by step 1. */
static inline int used_block_at(const char *p, size_t below, size_t room)
{
    return !header_bad(p, below, room) && !debug_neighbour_bad(p, room);
}

/* The validation against the pool that holds p, reporting a refusal: 0
 * when p is a used block of t. O(pools). */
static RTM_NOINLINE int block_invalid_searched(const rtm_tlsf *t, const char *p)
{
    size_t below = 0, room = 0;
    if (locate_in_pools(t, (uintptr_t)p, &below, &room) != 0)
        return refuse_foreign(t, p);
    if (!used_block_at(p, below, room))
        return refuse_header(t, p, room);
    return 0;
}

/* The whole validation, reporting a refusal: 0 when p is a used block of t.
 * For realloc and usable_size: the fast range first, then the search. */
static inline int block_invalid(const rtm_tlsf *t, const char *p)
{
    size_t below = 0, room = 0;
    if (locate_fast(t, p, &below, &room) == 0 && used_block_at(p, below, room))
        return 0;
    return block_invalid_searched(t, p);
}

/* Returns used block b (span s) to the free lists, merging with free
 * neighbours so that no two free blocks are ever adjacent:
 *   [ prev free ][ b ][ next free ][after]  =>  [ ------ free ------ ][after]
 */
static inline void release_block(rtm_tlsf *t, char *b, size_t s)
{
    char *next = b + s;
    uint32_t next_hdr = hdr(next);
    if ((hdr(b) & BLOCK_PREV_FREE) != 0) {
        size_t ps = prev_span(b);
        /* b's own header is now inside the merged block; marking it free
         * keeps a second free(b) detectable (it lies past the links). */
        set_hdr(b, hdr(b) | BLOCK_FREE);
        b -= ps;
        RTM_ASSERT((hdr(b) & (BLOCK_FREE | SPAN_MASK)) == (BLOCK_FREE | ps));
        t->free_blocks--;
        list_remove(t, b);
        s += ps;
    }
    if ((next_hdr & BLOCK_FREE) != 0) {
        size_t ns = next_hdr & SPAN_MASK;
        t->free_blocks--;
        list_remove(t, next);
        s += ns;
        next += ns;
        next_hdr = hdr(next);
    }
    set_hdr(b, s + BLOCK_FREE); /* s is 8-granular: + is |, and one lea */
    set_footer(b, s);
    set_hdr(next, next_hdr | BLOCK_PREV_FREE);
    /* One used block less. Here, not beside the used-bytes updates in
     * free_used(): gcc pairs adjacent counter updates into a vector
     * load-add-store, one instruction more than two adds to memory. */
    t->live_blocks--;
    list_insert(t, b, s);
    /* One free block less per merge, one more now: each a single add or
     * subtract to memory, cheaper than counting the merges. */
    t->free_blocks++;
}

/* Growth on demand (below), reached only where a request would be refused:
 * a block of span s at an `align` boundary (0: no alignment) from grown
 * memory, or ENOMEM. */
static RTM_COLD RTM_NOINLINE void *grow_or_refuse(rtm_tlsf *t, size_t s, size_t align);

/* ---------------------------------------------------------------------- */
/* Public operations                                                       */
/* ---------------------------------------------------------------------- */

/* Hot path. Worst case: a probe miss, a two-level search, taking a block
 * from mid-list, a split and an insertion; budget 120 instructions. */
void *rtm_tlsf_alloc(rtm_tlsf *t, size_t size)
{
    STEPS_RESET(t);
    if (RTM_UNLIKELY(size - 1u >= RTM_TLSF_MAX_BLOCK)) {
        if (size != 0)
            return refuse(t, RTM_ENOMEM);
        size = 1; /* malloc(0): a unique minimum block */
    }
    size_t s = span_for(size);
    char *b = find_free_block(t, s);
    if (RTM_UNLIKELY(b == NULL))
        return !RTM_TLSF_GROWTH || t->grow == NULL ? refuse(t, RTM_ENOMEM)
                                                   : grow_or_refuse(t, s, 0); /* tail calls */
    return use_block(t, b, span_of(b), s, 0);
}

/* The gap to leave before a payload at b so that it lands on an `align`
 * boundary: 0, or at least MIN_SPAN so the gap can stand as a free block. */
static inline size_t gap_needed(const char *b, size_t align)
{
    uintptr_t pa = ((uintptr_t)b + align - 1u) & ~(uintptr_t)(align - 1u);
    if (pa != (uintptr_t)b && pa - (uintptr_t)b < MIN_SPAN)
        pa = ((uintptr_t)b + MIN_SPAN + align - 1u) & ~(uintptr_t)(align - 1u);
    return (size_t)(pa - (uintptr_t)b);
}

/* Splits the leading gap off free block b so that the payload lands on an
 * `align` boundary; returns the aligned payload. The gap becomes a free
 * block (its predecessor is used, as b's was):
 *   [ b ........................ ]  =>  [ gap (free) ][ a ............ ]  */
static inline char *align_within(rtm_tlsf *t, char *b, size_t align)
{
    size_t gap = gap_needed(b, align);
    if (gap == 0)
        return b;
    size_t bspan = span_of(b);
    char *a = b + gap;
    set_hdr(a, (bspan - gap) | BLOCK_PREV_FREE);
    set_hdr(b, gap | BLOCK_FREE);
    set_footer(b, gap);
    list_insert(t, b, gap);
    t->free_blocks++;
    return a;
}

/* A free block, out of its list, that holds span s at an `align` boundary,
 * or NULL: good fit for worst = s + align + MIN_SPAN (which holds s after
 * any gap), else the head of worst's own list, tried with its real gap.
 * Forced inline: called twice (fast and refusal path), gcc outlined it once
 * the odd links grew it, and the call cost the worst aligned alloc 9
 * instructions (192 against 185). */
RTM_INLINE char *aligned_take(rtm_tlsf *t, size_t align, size_t s, size_t worst)
{
    int idx = list_search(t, list_index_fit_f(worst, rtm_fls_size(worst)));
    if (idx >= 0)
        return list_take_head(t, (unsigned)idx);
    ptrdiff_t head_off = t->heads[list_index(worst)];
    if (head_off == 0)
        return NULL;
    char *b = link_at(t, head_off);
    if (span_of(b) < gap_needed(b, align) + s)
        return NULL;
    list_remove(t, b);
    return b;
}

/* Uses free block b (out of its list) for span s at an `align` boundary. */
RTM_INLINE void *aligned_use(rtm_tlsf *t, char *b, size_t align, size_t s)
{
    char *a = align_within(t, b, align);
    uint32_t flags = BLOCK_ALIGNED | (a != b ? BLOCK_PREV_FREE : 0u);
    if (align > t->max_align)
        t->max_align = align;
    return use_block(t, a, span_of(a), s, flags);
}

void *rtm_tlsf_aligned_alloc(rtm_tlsf *t, size_t align, size_t size)
{
    if (!rtm_is_pow2(align))
        return refuse(t, RTM_EINVAL);
    if (align <= GRAN)
        return rtm_tlsf_alloc(t, size);
    STEPS_RESET(t);
    if (size > RTM_TLSF_MAX_BLOCK || align > MAX_SPAN)
        return refuse(t, RTM_ENOMEM);
    size_t s = span_for(size);
    size_t worst = s + align + MIN_SPAN; /* holds s after any gap */
    if (worst > MAX_SPAN)
        return refuse(t, RTM_ENOMEM);
    char *b = aligned_take(t, align, s, worst);
    if (RTM_UNLIKELY(b == NULL))
        return grow_or_refuse(t, s, align); /* grows, or ENOMEM: a tail call */
    return aligned_use(t, b, align, s);
}

/* Frees used block p, validated. The used bytes drop by the span first and
 * get the header back after the release: two subtractions from memory, where
 * one update of span minus header compiles to a load, two operations and a
 * store (the worst free is 2 instructions shorter). */
static inline void free_used(rtm_tlsf *t, char *p)
{
    size_t s = span_of(p);
    t->used_bytes -= s;
    release_block(t, p, s);
    t->used_bytes += HDR_BYTES;
}

/* A free the fast path did not accept: a block of a pool outside the fast
 * range, or misuse (reported). */
static RTM_NOINLINE int free_searched(rtm_tlsf *t, char *p)
{
    if (block_invalid_searched(t, p) != 0)
        return -1;
    free_used(t, p);
    return 0;
}

/* Hot path. Worst case: two merges (two removals) and one insertion. The
 * pointer's validation (see above) is inline for the fast range; both
 * refusal paths are tail calls, so the function needs no stack frame. */
int rtm_tlsf_free(rtm_tlsf *t, void *ptr)
{
    STEPS_RESET(t);
    if (RTM_UNLIKELY(ptr == NULL))
        return 0;
    char *p = (char *)ptr;
    size_t below = fast_offset(t, p), room = 0;
    if (RTM_UNLIKELY(RTM_DEBUG || ((uintptr_t)p & (GRAN - 1u)) != 0))
        return free_searched(t, p);
    if (RTM_UNLIKELY(__builtin_sub_overflow(t->fast_last, below, &room)))
        return free_searched(t, p); /* below the range or past it */
    if (RTM_UNLIKELY(header_bad(p, below, room)))
        return free_searched(t, p); /* misuse, or a block past the range's end */
    free_used(t, p);
    return 0;
}

size_t rtm_tlsf_usable_size(const void *ptr)
{
    return ptr == NULL ? 0 : span_of((const char *)ptr) - HDR_BYTES;
}

size_t rtm_tlsf_usable_size_in(const rtm_tlsf *t, const void *ptr)
{
    if (ptr == NULL)
        return 0;
    if (block_invalid(t, (const char *)ptr) != 0)
        return 0;
    return span_of((const char *)ptr) - HDR_BYTES;
}

/* Shrinks used block p from span cur to span s in place, giving the tail
 * back (merged with a free right neighbour when there is one). */
static void shrink_in_place(rtm_tlsf *t, char *p, size_t cur, size_t s)
{
    char *tail = p + s;
    char *next = p + cur;
    uint32_t next_hdr = hdr(next);
    size_t rest = cur - s;
    if ((next_hdr & BLOCK_FREE) != 0) {
        size_t ns = next_hdr & SPAN_MASK;
        list_remove(t, next);
        rest += ns;
        next += ns;
        next_hdr = hdr(next);
    } else if (rest < MIN_SPAN) {
        return; /* the tail cannot stand alone: keep it in the block */
    } else {
        t->free_blocks++; /* a new free block, not a grown neighbour */
    }
    set_hdr(p, s | (hdr(p) & ~SPAN_MASK));
    set_hdr(tail, rest | BLOCK_FREE);
    set_footer(tail, rest);
    set_hdr(next, next_hdr | BLOCK_PREV_FREE);
    list_insert(t, tail, rest);
    t->used_bytes -= cur - s;
}

/* Grows used block p (span cur) into its free right neighbour when the two
 * hold span s; returns 0 on success. */
static int grow_in_place(rtm_tlsf *t, char *p, size_t cur, size_t s)
{
    char *next = p + cur;
    uint32_t next_hdr = hdr(next);
    size_t ns = next_hdr & SPAN_MASK;
    if ((next_hdr & BLOCK_FREE) == 0 || cur + ns < s)
        return -1;
    list_remove(t, next);
    t->free_blocks--;
    char *after = next + ns;
    set_hdr(after, hdr(after) & ~BLOCK_PREV_FREE);
    set_hdr(p, (cur + ns) | (hdr(p) & ~SPAN_MASK));
    t->used_bytes += ns;
    shrink_in_place(t, p, cur + ns, s);
    if (t->used_bytes > t->peak_used)
        t->peak_used = t->used_bytes;
    return 0;
}

void *rtm_tlsf_realloc(rtm_tlsf *t, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_tlsf_alloc(t, size);
    if (size == 0) {
        (void)rtm_tlsf_free(t, ptr);
        return NULL;
    }
    STEPS_RESET(t);
    char *p = (char *)ptr;
    if (block_invalid(t, p) != 0)
        return NULL;
    if (size > RTM_TLSF_MAX_BLOCK)
        return refuse(t, RTM_ENOMEM);
    size_t cur = span_of(p), s = span_for(size);
    if (s <= cur) {
        shrink_in_place(t, p, cur, s);
        return p;
    }
    if (grow_in_place(t, p, cur, s) == 0)
        return p;
    void *q = (hdr(p) & BLOCK_ALIGNED) != 0 ? rtm_tlsf_aligned_alloc(t, alignment_of(t, p), size)
                                            : rtm_tlsf_alloc(t, size);
    if (q == NULL)
        return NULL; /* refuse() counted it; p is untouched */
    __builtin_memcpy(q, p, cur - HDR_BYTES);
#if RTM_TLSF_COUNT_STEPS
    size_t alloc_steps = t->steps; /* the nested calls each restart the count */
    (void)rtm_tlsf_free(t, p);
    t->steps += alloc_steps;
#else
    (void)rtm_tlsf_free(t, p);
#endif
    return q;
}

/* ---------------------------------------------------------------------- */
/* Creation, pools, reset, stats                                           */
/* ---------------------------------------------------------------------- */

size_t rtm_tlsf_control_size(void) { return CONTROL_BYTES; }

/* Record + 4 unused + first header + sentinel header. */
size_t rtm_tlsf_pool_overhead(void) { return POOL_FIRST_PAYLOAD + HDR_BYTES; }

size_t rtm_tlsf_min_region(void)
{
    return rtm_tlsf_control_size() + rtm_tlsf_pool_overhead() + RTM_TLSF_MIN_BLOCK;
}

size_t rtm_tlsf_region_for(size_t usable)
{
    if (usable > RTM_TLSF_MAX_BLOCK)
        return 0;
    return rtm_tlsf_control_size() + POOL_FIRST_PAYLOAD + span_for(usable);
}

/* Makes [first, end) one free block followed by the sentinel. */
static void pool_format(rtm_tlsf *t, tlsf_pool *pool)
{
    char *first = pool_first(pool), *end = at(t, pool->end);
    size_t s = (size_t)(end - first);
    set_hdr(first, s | BLOCK_FREE);
    set_footer(first, s);
    set_hdr(end, BLOCK_PREV_FREE); /* sentinel: used, span 0 */
    list_insert(t, first, s);
    t->free_blocks++;
}

/* Adds one pool of at most MAX_SPAN; returns bytes consumed or 0. */
static size_t add_one_pool(rtm_tlsf *t, char *mem, size_t bytes)
{
    uintptr_t start = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    if (bytes < lost + POOL_FIRST_PAYLOAD + MIN_SPAN)
        return 0;
    size_t room = bytes - lost - POOL_FIRST_PAYLOAD; /* first payload .. region end */
    size_t s = room & ~(GRAN - 1u);
    if (s > MAX_SPAN)
        s = MAX_SPAN;
    tlsf_pool *pool = (tlsf_pool *)start;
    pool->end = off_of(t, pool_first(pool) + s);
    pool->next = t->first_pool;
    t->first_pool = off_of(t, (char *)pool);
    t->total_span += s;
    pool_format(t, pool);
    return lost + POOL_FIRST_PAYLOAD + s;
}

/* Does [mem, mem + bytes) wrap around the end of the address space? Such a
 * "region" cannot be memory; pools carved from it would be written all
 * over. */
static inline int region_wraps(const void *mem, size_t bytes)
{
    return (uintptr_t)bytes > UINTPTR_MAX - (uintptr_t)mem;
}

/* Does [lo, hi) share a byte with the control structure or a pool of t?
 * Integer compares: the regions are different objects. O(pools). */
static int overlaps_heap(const rtm_tlsf *t, uintptr_t lo, uintptr_t hi)
{
    uintptr_t ctrl = (uintptr_t)t;
    if (lo < ctrl + sizeof(rtm_tlsf) && ctrl < hi)
        return 1;
    for (ptrdiff_t off = t->first_pool; off != 0;) {
        tlsf_pool *pool = pool_at(t, off);
        if (lo < (uintptr_t)at(t, pool->end) && (uintptr_t)pool < hi)
            return 1;
        off = pool->next;
    }
    return 0;
}

/* Adds a region as one pool per MAX_SPAN bytes. Pools never touch, so a
 * block never spans two regions even when the caller's regions are adjacent.
 */
static int add_region(rtm_tlsf *t, char *mem, size_t bytes)
{
    size_t used = add_one_pool(t, mem, bytes);
    if (used == 0)
        return -1;
    t->arena_bytes += bytes;
    while (bytes - used >= POOL_FIRST_PAYLOAD + MIN_SPAN + GRAN) {
        mem += used;
        bytes -= used;
        used = add_one_pool(t, mem, bytes);
    }
    return 0;
}

/* The address where the fast range's memory ends (its last pool's end). */
static uintptr_t fast_end(const rtm_tlsf *t)
{
    return (uintptr_t)t + FAST_FIRST + t->fast_last + MIN_SPAN;
}

/* Extends the fast range up to the end of the newest pool (the highest of
 * the region just added), whose region the caller made sure starts less
 * than FAST_GAP bytes after the range's end (tlsf_layout.h: why the gap
 * cannot fault). */
static void fast_range_extend(rtm_tlsf *t)
{
    uintptr_t end = (uintptr_t)at(t, pool_at(t, t->first_pool)->end);
    t->fast_last = (size_t)(end - MIN_SPAN - ((uintptr_t)t + FAST_FIRST));
}

int rtm_tlsf_add_pool(rtm_tlsf *t, void *mem, size_t bytes)
{
    if (t == NULL || mem == NULL || region_wraps(mem, bytes) ||
        overlaps_heap(t, (uintptr_t)mem, (uintptr_t)mem + bytes)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    uintptr_t rec = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    int touches = rec - fast_end(t) < FAST_GAP; /* its first record */
    if (add_region(t, (char *)mem, bytes) != 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (touches)
        fast_range_extend(t);
    return 0;
}

static void control_clear(rtm_tlsf *t)
{
    for (unsigned w = 0; w < WORD_COUNT; w++)
        t->list_bits[w] = 0;
    for (unsigned idx = 0; idx < LIST_COUNT; idx++)
        t->heads[idx] = 0;
    t->used_bytes = t->live_blocks = t->free_blocks = 0;
    t->peak_used = t->failed_allocs = 0;
    STEPS_RESET(t);
}

rtm_tlsf *rtm_tlsf_create(void *mem, size_t bytes)
{
    if (mem == NULL || region_wraps(mem, bytes)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    uintptr_t start = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    if (bytes < lost || bytes - lost < rtm_tlsf_min_region()) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_tlsf *t = (rtm_tlsf *)start;
    t->kind = RTM_KIND_TLSF;
    control_clear(t);
    t->arena_bytes = lost + CONTROL_BYTES;
    t->total_span = 0;
    t->max_align = GRAN;
    t->first_pool = 0;
    t->grow = NULL;
    t->grow_ctx = NULL;
    (void)add_region(t, (char *)t + CONTROL_BYTES, bytes - lost - CONTROL_BYTES);
    /* The fast range: the first pool (the region's further pools, when it
     * is over 4 GiB, are searched). */
    tlsf_pool *main_pool = pool_at(t, (ptrdiff_t)CONTROL_BYTES);
    t->fast_last = (size_t)(at(t, main_pool->end) - pool_first(main_pool)) - MIN_SPAN;
    return t;
}

/* ---------------------------------------------------------------------- */
/* Growth on demand                                                        */
/* ---------------------------------------------------------------------- */
/*
 * With a grow function set (rtm_tlsf_set_grow), a request no free block
 * fits asks it once for memory, adds that memory and searches again. This
 * lives on the refusal paths only: alloc reaches it by a tail call where it
 * would return ENOMEM, so the worst alloc and free keep their instruction
 * counts (build/rtmem-wcet), and a heap without a grow function pays one
 * load and compare on refusal.
 *
 * How much is asked for: the span the search needs plus what a new pool
 * costs before its first payload (record, 4 unused bytes, header) plus a
 * granule of slack for a misaligned start:
 *     min_bytes = span + POOL_FIRST_PAYLOAD + GRAN     (span + 32)
 * so memory of min_bytes bytes at any address holds the block as a new
 * pool. (Memory that extends a pool would need only the span, but where
 * the memory will be is known only after the call.)
 *
 * Where it goes:
 *  - memory that starts exactly at the end of a pool (its sentinel's
 *    payload address) extends that pool, if the pool stays within MAX_SPAN
 *    (a block of a whole free pool must fit a header): the old sentinel's
 *    header becomes the header of one new free block, merged with the
 *    pool's last block when that one is free, and a new sentinel closes it:
 *        [ ... | last (free) ][S]  +  [ memory ............ ]
 *        [ ... | ---------- one free block ----------- ][S']
 *    Bytes between the old region's end and the pool's end (under 8) are
 *    not assumed to be the caller's: only an exact start extends.
 *  - any other memory becomes a new pool through rtm_tlsf_add_pool: the
 *    same checks (wrap, overlap with the control or a pool: refused), a
 *    misaligned start rounded up, more than MAX_SPAN split.
 * Refused memory (got < min_bytes, overlap, wrap, NULL) is not touched and
 * stays the grow function's; the request fails with ENOMEM.
 *
 * An image that never calls rtm_tlsf_set_grow does not link any of it
 * (growth_code below). RTM_TLSF_GROWTH 0 (a build option, RTM_CONFIG_HEADER)
 * leaves it out of the build: set_grow then gives ENOTSUP.
 */

#if RTM_TLSF_GROWTH
static void *alloc_grown(rtm_tlsf *t, size_t s, size_t align);

/* The growth code's entry, published by rtm_tlsf_set_grow: the refusal
 * paths reach growth only through this pointer, so an image that never
 * calls set_grow does not link the growth code (--gc-sections drops it:
 * 700 bytes of a Cortex-M4 image at -Os, docs/FIRMWARE.md). One pointer
 * for every heap, since the code is the same; relaxed atomic because two
 * threads may set grow functions on two heaps at once (both store the same
 * value). A heap whose grow is set was set in this process (a shared
 * heap's never is: rtm_tlsf_check_region, rtm_tlsf_rebuild), so the
 * pointer is set whenever a heap's grow is. */
static _Atomic(void *(*)(rtm_tlsf *, size_t, size_t)) growth_code;
#endif

int rtm_tlsf_set_grow(rtm_tlsf *t, void *(*grow)(void *ctx, size_t min_bytes, size_t *got_bytes),
                      void *ctx)
{
    if (t == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
#if RTM_TLSF_GROWTH
    if (grow != NULL)
        atomic_store_explicit(&growth_code, alloc_grown, memory_order_relaxed);
    t->grow = grow;
    t->grow_ctx = grow != NULL ? ctx : NULL;
    return 0;
#else
    (void)grow;
    (void)ctx;
    RTM_SET_ERRNO(RTM_ENOTSUP); /* built without growth */
    return -1;
#endif
}

static RTM_COLD RTM_NOINLINE void *grow_or_refuse(rtm_tlsf *t, size_t s, size_t align)
{
#if RTM_TLSF_GROWTH
    void *(*grown)(rtm_tlsf *, size_t, size_t) =
        atomic_load_explicit(&growth_code, memory_order_relaxed);
    if (t->grow != NULL && grown != NULL)
        return grown(t, s, align);
#else
    (void)align;
    (void)s;
#endif
    return refuse(t, RTM_ENOMEM);
}

#if RTM_TLSF_GROWTH
/* The pool whose end (sentinel payload address) is exactly a, or NULL.
 * O(pools); the newest pool, the usual one, comes first. */
static tlsf_pool *pool_ending_at(const rtm_tlsf *t, uintptr_t a)
{
    for (ptrdiff_t off = t->first_pool; off != 0;) {
        tlsf_pool *pool = pool_at(t, off);
        if ((uintptr_t)at(t, pool->end) == a)
            return pool;
        off = pool->next;
    }
    return NULL;
}

/* Extends pool by the memory [end, end + got) that starts at its end (see
 * above); the caller checked the memory overlaps nothing. 0, or -1 when
 * the pool would outgrow MAX_SPAN (the memory is then untouched). */
static int extend_pool(rtm_tlsf *t, tlsf_pool *pool, size_t got)
{
    char *end = at(t, pool->end);
    size_t added = got & ~(GRAN - 1u);
    size_t span = (size_t)(end - pool_first(pool));
    if (added < MIN_SPAN || added > MAX_SPAN - span)
        return -1;
    char *b = end; /* the old sentinel's header becomes b's */
    size_t s = added;
    if ((hdr(end) & BLOCK_PREV_FREE) != 0) {
        b = end - prev_span(end);
        s += span_of(b);
        list_remove(t, b);
        t->free_blocks--;
    }
    set_hdr(b, s | BLOCK_FREE); /* its predecessor is used: no PREV_FREE */
    set_footer(b, s);
    set_hdr(end + added, BLOCK_PREV_FREE); /* the new sentinel */
    list_insert(t, b, s);
    t->free_blocks++;
    if (fast_end(t) == (uintptr_t)end)
        t->fast_last += added; /* the fast range ended with this pool */
    pool->end = off_of(t, end + added);
    t->total_span += added;
    t->arena_bytes += got;
    return 0;
}

/* Asks the grow function for room for a free block of `span` and adds it.
 * 0, or -1 with the heap unchanged. */
static RTM_COLD RTM_NOINLINE int grow_by(rtm_tlsf *t, size_t span)
{
    size_t min = span + POOL_FIRST_PAYLOAD + GRAN, got = 0;
    char *mem = (char *)t->grow(t->grow_ctx, min, &got);
    if (mem == NULL || got < min || region_wraps(mem, got) ||
        overlaps_heap(t, (uintptr_t)mem, (uintptr_t)mem + got))
        return -1;
    tlsf_pool *pool = pool_ending_at(t, (uintptr_t)mem);
    if (pool != NULL && extend_pool(t, pool, got) == 0)
        return 0;
    return rtm_tlsf_add_pool(t, mem, got);
}

/* The refusal paths with a grow function set (alloc tests for one, 2
 * instructions, so a heap that does not grow refuses as fast as before;
 * aligned_alloc's path tests in grow_or_refuse): grow, then take a block
 * that holds span s at an `align` boundary (0: none), or ENOMEM.
 *  - align 0: growth adds room for a block of span s (a pool of at least
 *    s, or a pool's last block grown past s), and the search finds any
 *    block that holds s in its own class (what growth added was inserted
 *    last, so it is its list's head, which the probe sees) or above.
 *  - aligned: growth adds a free block of at least worst = s + align +
 *    MIN_SPAN, which holds s after any gap; the good-fit search finds it. */
static void *alloc_grown(rtm_tlsf *t, size_t s, size_t align)
{
    size_t worst = align == 0 ? s : s + align + MIN_SPAN;
    if (grow_by(t, worst) != 0)
        return refuse(t, RTM_ENOMEM);
    char *b = align == 0 ? find_free_block(t, s) : aligned_take(t, align, s, worst);
    if (b == NULL)
        return refuse(t, RTM_ENOMEM);
    return align == 0 ? use_block(t, b, span_of(b), s, 0) : aligned_use(t, b, align, s);
}

/* Grown pools stay: reset makes every pool, given or grown, one free block
 * again, and keeps the grow function. */
#endif

void rtm_tlsf_reset(rtm_tlsf *t)
{
    control_clear(t);
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next)
        pool_format(t, pool_at(t, off));
}

rtm_stats rtm_tlsf_stats(const rtm_tlsf *t)
{
    rtm_stats st;
    size_t used_span = t->used_bytes + HDR_BYTES * t->live_blocks;
    st.arena_bytes = t->arena_bytes;
    st.used_bytes = t->used_bytes;
    st.free_bytes = t->total_span - used_span - HDR_BYTES * t->free_blocks;
    st.live_blocks = t->live_blocks;
    st.peak_used_bytes = t->peak_used;
    st.failed_allocs = t->failed_allocs;
    st.largest_free = 0;
    if ((t->list_bits[0] | t->list_bits[1]) != 0) {
        unsigned w = t->list_bits[1] != 0;
        unsigned idx = (w << 6) + rtm_fls64(t->list_bits[w]);
        st.largest_free = span_of(link_at(t, t->heads[idx])) - HDR_BYTES;
    }
    return st;
}

size_t rtm_tlsf_last_steps(const rtm_tlsf *t)
{
#if RTM_TLSF_COUNT_STEPS
    return t->steps;
#else
    (void)t;
    return 0;
#endif
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

/* rtm_alloc and rtm_free call TLSF directly (core/heap.c); the descriptor
 * serves every other generic call. */
RTM_KIND_ADAPT_BLOCKS(tlsf, rtm_tlsf)
RTM_KIND_ADAPT_WHOLE(tlsf, rtm_tlsf)

static size_t tlsf_kind_usable_size(rtm_heap *h, const void *ptr)
{
    return rtm_tlsf_usable_size_in(RTM_KIND_AS(rtm_tlsf, h), ptr);
}
static int tlsf_kind_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    return rtm_tlsf_add_pool(RTM_KIND_AS(rtm_tlsf, h), mem, bytes);
}
static int tlsf_kind_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx)
{
    return rtm_tlsf_set_grow(RTM_KIND_AS(rtm_tlsf, h), grow, ctx);
}

/* 7 bytes of slack: the region may start at any address. "tlsf" takes no
 * parameter. */
static size_t tlsf_kind_min_region(size_t unused)
{
    (void)unused;
    return 7u + rtm_tlsf_min_region();
}
static rtm_heap *tlsf_kind_create(void *mem, size_t bytes, size_t unused)
{
    (void)unused;
    return (rtm_heap *)(void *)rtm_tlsf_create(mem, bytes);
}

const rtm_heap_kind rtm_kind_tlsf = {
    .kind = RTM_KIND_TLSF,
    .min_region = tlsf_kind_min_region,
    .create = tlsf_kind_create,
    RTM_KIND_OPERATIONS(tlsf),
    .add_pool = tlsf_kind_add_pool,
    .set_grow = tlsf_kind_set_grow,
};
