// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_layout.h -- the memory layout of rtmem's TLSF heap and its
 * free-list operations, shared by tlsf.c (the operations), tlsf_check.c
 * (the validator and walker) and tlsf_rebuild.c (crash recovery).
 * Every header field is read and written through the accessors below, so the
 * algorithm reads like the paper (Masmano et al., "TLSF: a new dynamic memory
 * allocator for real-time systems", 2004).
 *
 * A block is named by its payload address p, which is always 8-aligned. The
 * 4-byte header sits just below it, so headers live at addresses 4 mod 8 and
 * a used block costs 4 bytes, not the 8 or 16 of other TLSFs. The "span" of
 * a block is the distance from its payload to the next block's payload (a
 * multiple of 8); usable size = span - 4.
 *
 *   used block:         free block:
 *   p-4  [span|flags]   p-4  [span|FREE|flags]
 *   p    user data ...  p    next_free  (link: offset + 1, 0 = none)
 *                       p+w  pprev: link of the slot pointing here
 *                            (previous block's next_free, or the list's
 *                            head slot in the control structure)
 *                       ...
 *                       p+span-8 [span]  footer: boundary tag for the next
 *   p+span-4 [next header]               block's merge with this one
 *
 * Flags in the low 3 bits of the header (spans are multiples of 8):
 *   FREE       this block is free (in exactly one free list)
 *   PREV_FREE  the physically previous block is free (its footer is valid)
 *   ALIGNED    allocated by aligned_alloc: realloc must keep the alignment
 *
 * A pool is laid out as
 *   [pool record][4 unused][hdr|first block .............][sentinel hdr]
 * The sentinel is a used header of span 0 whose payload address is the pool
 * end; it stops merges at the end of the pool without a bounds check.
 *
 * Free lists: TLSF's two-level index. First level fl = floor(log2(span)),
 * second level sl = the next SL_LOG2 bits, folded into one flat list index.
 * Each list is LIFO: a block freed goes to the head, and allocation takes
 * the head, the block whose lines were touched last (what is still in the
 * cache). Insert and take are branch-free (a store that has no target when
 * the list is empty goes to the moving block's own link instead). Links are
 * doubly linked through "pprev" (the offset of the slot pointing at the
 * block), so a block leaves its list without its list index being computed.
 */
#ifndef RTM_HEAPS_TLSF_LAYOUT_H
#define RTM_HEAPS_TLSF_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "rtmem/tlsf.h"

/* Second-level lists per power of two, as a power of two. Four lists make
 * 124 lists in all, whose non-empty bits fit two 64-bit words: the search is
 * two bit scans with no summary level, and setting or clearing a bit is one
 * or-/and-to-memory. That is what keeps the worst alloc and free under 120
 * instructions; 16 lists (mattconte/tlsf uses 32) would need a summary
 * level and cost about 20 instructions more per operation. The coarser
 * classes cost no measurable fragmentation here, because the probe serves a
 * request from its own class's head first when it fits (measured in
 * docs/TLSF.md). */
#define RTM_TLSF_SL_LOG2 2
/* Growth on demand (rtm_tlsf_set_grow, tlsf.c): 0 leaves it out of the
 * build, for firmware that never grows a heap. */
#ifndef RTM_TLSF_GROWTH
#define RTM_TLSF_GROWTH 1
#endif
#ifndef RTM_TLSF_COUNT_STEPS
#define RTM_TLSF_COUNT_STEPS 0
#endif

#define GRAN_LOG2 3u
#define GRAN      ((size_t)1 << GRAN_LOG2)
#define HDR_BYTES ((size_t)RTM_TLSF_HEADER_BYTES)
#define SL_LOG2   ((unsigned)RTM_TLSF_SL_LOG2)
#define SL_COUNT  (1u << SL_LOG2)
/* First level f - SL_LOG2 for spans in [2^f, 2^(f+1)); spans are < 2^32 and
 * the good-fit round-up can reach the class of 2^32, one more. */
#define FL_COUNT   (32u - SL_LOG2 + 1u)
#define LIST_COUNT (FL_COUNT * SL_COUNT)
/* The non-empty lists are the bits of two 64-bit words, indexed by the flat
 * list index. */
#define WORD_COUNT 2u

#define BLOCK_FREE      1u
#define BLOCK_PREV_FREE 2u
#define BLOCK_ALIGNED   4u
#define SPAN_MASK       (~(uint32_t)7u)

#define MIN_SPAN (RTM_TLSF_MIN_BLOCK + HDR_BYTES)
#define MAX_SPAN (RTM_TLSF_MAX_BLOCK + HDR_BYTES)

_Static_assert(MIN_SPAN % GRAN == 0, "minimum span keeps payloads aligned");
_Static_assert(SL_LOG2 >= 2 && (1u << SL_LOG2) <= MIN_SPAN, "every span maps to a class");
_Static_assert(LIST_COUNT <= 64u * WORD_COUNT, "lists fit two words");

/* The pool record at the start of every pool; pools form a list. */
typedef struct tlsf_pool {
    ptrdiff_t next; /* offset of the next pool record from control, 0 = none */
    ptrdiff_t end;  /* offset of the sentinel's payload address (pool end)    */
} tlsf_pool;

#define POOL_FIRST_PAYLOAD (sizeof(tlsf_pool) + GRAN) /* from the record */

struct rtm_tlsf {
    uint32_t kind; /* RTM_KIND_TLSF (core/internal.h)     */
    uint32_t unused;
    uint64_t list_bits[WORD_COUNT]; /* bit idx set iff heads[idx] != 0     */

    ptrdiff_t heads[LIST_COUNT]; /* links of list heads, 0 = empty      */
    size_t used_bytes;           /* sum of usable sizes of used blocks          */
    size_t live_blocks;          /* used blocks                                 */
    size_t free_blocks;          /* free blocks (= members of all lists)        */
    size_t peak_used;            /* highest used_bytes                          */
    size_t failed_allocs;        /* ENOMEM refusals                             */
    size_t arena_bytes;          /* bytes given by the caller, control included */
    size_t total_span;           /* sum of the spans of all blocks of all pools */
    size_t max_align;            /* largest alignment ever asked (realloc cap)  */
    ptrdiff_t first_pool;        /* offset of the first pool record             */
    size_t fast_last;            /* fast range: last payload, from FAST_FIRST   */
    /* Growth on demand (rtm_tlsf_set_grow; tlsf.c, "Growth on demand"): the
     * one function pointer a region holds, so it belongs to the process that
     * set it. A shared heap's inner heap never has one: the shared layer
     * refuses set_grow (ENOTSUP), rtm_tlsf_check_region() fails on one and
     * rtm_tlsf_rebuild() clears it. NULL: the heap never grows. Layout 2
     * (RTM_KIND_TLSF "TLS2") added these two fields. */
    void *(*grow)(void *ctx, size_t min_bytes, size_t *got_bytes);
    void *grow_ctx;
#if RTM_TLSF_COUNT_STEPS
    size_t steps; /* steps of the last op: test builds only, after the layout */
#endif
};

/*
 * The fast range: where free() may read a header without searching the pool
 * list. It starts at the first pool's first payload, which rtm_tlsf_create()
 * always puts at FAST_FIRST bytes past the control structure, and covers the
 * payload addresses [FAST_FIRST, FAST_FIRST + fast_last] (offsets from the
 * control): the first pool, extended by every later pool whose record starts
 * less than FAST_GAP bytes after the range's end. The range plus MIN_SPAN
 * bytes is then the caller's memory but for gaps shorter than 32 bytes,
 * which hold no byte of an inaccessible page or MPU region (those are
 * 32-byte aligned multiples of 32 bytes at least, so one lying in a gap
 * would make the gap 32 bytes long), so a header read in it cannot fault.
 * fast_last sits where older versions kept a step counter that release
 * builds never advanced: a control they wrote holds 0 there, so only the
 * first block is in range and the rest is searched (slower but correct).
 * The counter itself (RTM_TLSF_COUNT_STEPS, a test build) now follows the
 * layout.
 */
#define FAST_GAP      32u
#define CONTROL_BYTES ((sizeof(struct rtm_tlsf) + GRAN - 1u) & ~(GRAN - 1u))
#define FAST_FIRST    (CONTROL_BYTES + POOL_FIRST_PAYLOAD)

/* --- accessors: the only code that knows where fields live ------------- */

static inline char *tlsf_base(const rtm_tlsf *t) { return (char *)(uintptr_t)t; }
static inline char *at(const rtm_tlsf *t, ptrdiff_t off) { return tlsf_base(t) + off; }
static inline ptrdiff_t off_of(const rtm_tlsf *t, const char *p) { return p - tlsf_base(t); }

static inline uint32_t *hdr_ptr(const char *p) { return (uint32_t *)(uintptr_t)(p - HDR_BYTES); }
static inline uint32_t hdr(const char *p) { return *hdr_ptr(p); }
static inline void set_hdr(char *p, size_t v) { *hdr_ptr(p) = (uint32_t)v; }
static inline size_t span_of(const char *p) { return hdr(p) & SPAN_MASK; }
/* A header word at an address that may not be 4-aligned (read while a
 * pointer is still being validated: a footer read from user data is any
 * number). One load where the target allows unaligned loads. */
static inline uint32_t hdr_unaligned(const char *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p - HDR_BYTES, sizeof v);
    return v;
}

/*
 * Free-list links: a free block's next and pprev, the list heads, and the
 * head slots a pprev names. A link is the offset of its target counted from
 * the byte below the control structure, one more than at()'s offset, so
 * every link but "none" (0) is odd. A header word read inside a free
 * block's links then reads as FREE (its low bits are a link's odd low bits)
 * or as span 0 (a link's high half): free() of a stale pointer into them is
 * refused on every byte order and word size, with no check added to the
 * free path (the -1 folds into the address arithmetic). Layout 3.
 */
static inline char *link_at(const rtm_tlsf *t, ptrdiff_t link) { return at(t, link - 1); }
static inline ptrdiff_t link_to(const rtm_tlsf *t, const char *p) { return off_of(t, p) + 1; }
/* The block offset (at()) a link names, 0 for none. */
static inline ptrdiff_t link_offset(ptrdiff_t link) { return link != 0 ? link - 1 : 0; }

static inline ptrdiff_t *link_next(const char *p) { return (ptrdiff_t *)(uintptr_t)p; }
/* The offset of the slot that points to this block: the previous block's
 * next link, or (for a list head) the head slot in the control structure. */
static inline ptrdiff_t *link_pprev(const char *p)
{
    return (ptrdiff_t *)(uintptr_t)(p + sizeof(ptrdiff_t));
}
/* The footer of the block with payload p and span s; the block after it
 * reads the same word as "the span of my free predecessor". */
static inline void set_footer(char *p, size_t s)
{
    *(uint32_t *)(uintptr_t)(p + s - 2u * HDR_BYTES) = (uint32_t)s;
}
static inline size_t prev_span(const char *p)
{
    return *(const uint32_t *)(uintptr_t)(p - 2u * HDR_BYTES);
}

static inline tlsf_pool *pool_at(const rtm_tlsf *t, ptrdiff_t off)
{
    return (tlsf_pool *)(uintptr_t)at(t, off);
}
static inline char *pool_first(tlsf_pool *pool) { return (char *)pool + POOL_FIRST_PAYLOAD; }

/* --- the two-level mapping --------------------------------------------- */
/*
 * A list is named by one flat index idx = fl * SL_COUNT + sl, computed once
 * per block and passed around, so the bitmaps and the head array are reached
 * without recomputing the class. For a span s with f = floor(log2(s)):
 *   fl = f - SL_LOG2,  sl = (s >> (f - SL_LOG2)) - SL_COUNT
 * which folds to idx = (f << SL_LOG2) + (s >> (f - SL_LOG2)) - (SL_LOG2 + 1)
 * * SL_COUNT: a bsr, a shift and two adds, no branch. Spans below 128 fall
 * in classes finer than the 8-byte granule, so each holds one span only.
 */
static inline unsigned list_index_f(size_t s, unsigned f)
{
    return (f << SL_LOG2) + (unsigned)(s >> (f - SL_LOG2)) - (SL_LOG2 + 1u) * SL_COUNT;
}

/* The list a free block of span s belongs to. */
static inline unsigned list_index(size_t s) { return list_index_f(s, rtm_fls_size(s)); }

/* Good fit: the first list all of whose blocks hold span s -- s's own list
 * when s is its lower bound, else the next one. This is s's class rounded
 * up, ceil(s / 2^(f - SL_LOG2)) = ((s - 1) >> (f - SL_LOG2)) + 1, and the
 * flat index carries into the next power of two by itself. */
static inline unsigned list_index_fit_f(size_t s, unsigned f)
{
    return (f << SL_LOG2) + (unsigned)((s - 1u) >> (f - SL_LOG2)) + 1u - (SL_LOG2 + 1u) * SL_COUNT;
}

#if RTM_TLSF_COUNT_STEPS
#define STEP(t)        ((t)->steps++)
#define STEPS_RESET(t) ((t)->steps = 0)
#else
#define STEP(t)        ((void)0)
#define STEPS_RESET(t) ((void)0)
#endif

/* --- requests and aligned blocks --------------------------------------- */

/* Request bytes -> span: payload plus header, rounded to the granule, at
 * least MIN_SPAN. The caller has bounded size by RTM_TLSF_MAX_BLOCK. */
static inline size_t span_for(size_t size)
{
    size_t s = (size + HDR_BYTES + GRAN - 1u) & ~(GRAN - 1u);
    return s < MIN_SPAN ? MIN_SPAN : s;
}

/*
 * The tail rule: allocation splits the tail off the block it takes only
 * when the tail is at least three quarters of the span asked for, or at
 * least RTM_TLSF_TAIL_MAX bytes (2 KiB). A shorter tail stays with the
 * block, usable by its owner (rtm_usable_size says so), and comes back when
 * the block is freed. Why: a short tail is a free block few requests fit,
 * which sits between used blocks until a neighbour is freed, and then the
 * merge unlinks it from the middle of a long list -- stores to two cold
 * blocks. In the random-replace loop (sizes 16 to 4095, 10,000 live
 * blocks) splitting every tail left 4,300 free fragments beside the 10,000
 * used blocks, and a free + alloc pair took 7.1 L1 misses; with the rule,
 * 98 fragments and 3.45 misses. The price: the live blocks hold 13.7 %
 * more than they asked for, the heap's extent grows 7.8 % (docs/TLSF.md,
 * "Issue 29: the misses, counted and removed"). The cap keeps a large
 * request from swallowing the rest of a small heap (a 40 KiB request in a
 * 64 KiB heap leaves the other 24 KiB free). A region carved by requests
 * of one size (the memcheck method) is unchanged: only the last block's
 * tail is short enough to stay. RTM_TLSF_TAIL_MAX 0 splits every tail that
 * can stand alone (MIN_SPAN), the classic rule.
 */
#ifndef RTM_TLSF_TAIL_MAX
#define RTM_TLSF_TAIL_MAX 2048u
#endif
_Static_assert(RTM_TLSF_TAIL_MAX == 0 || RTM_TLSF_TAIL_MAX >= MIN_SPAN,
               "RTM_TLSF_TAIL_MAX is 0 or at least the smallest block");

/* The shortest tail split off a block taken for span s. Three quarters of
 * s is at least 18 for the smallest span (24), and tails are multiples of
 * 8: a tail that reaches it reaches MIN_SPAN, with no compare for that. */
static inline size_t tail_least(size_t s)
{
#if RTM_TLSF_TAIL_MAX > 0
    size_t part = s - (s >> 2);
    return part < RTM_TLSF_TAIL_MAX ? part : RTM_TLSF_TAIL_MAX;
#else
    (void)s;
    return MIN_SPAN;
#endif
}
_Static_assert(MIN_SPAN - (MIN_SPAN >> 2) > MIN_SPAN - GRAN, "see tail_least");

/* The alignment an aligned block had: its address's lowest set bit, capped
 * by the largest alignment this heap was ever asked for (the address may be
 * aligned far more than was requested). */
static inline size_t alignment_of(const rtm_tlsf *t, const char *p)
{
    uintptr_t a = (uintptr_t)p & (uintptr_t)(-(intptr_t)(uintptr_t)p);
    return a < t->max_align ? (size_t)a : t->max_align;
}

/* --- free lists ---------------------------------------------------------- */
/*
 * The list operations of tlsf.c's alloc and free. Crash recovery
 * (tlsf_rebuild.c) relinks blocks with the same list_insert and predicts
 * which blocks an operation will touch with the same list_search, and the
 * validator (tlsf_check.c) checks head_slot links: one definition, so they
 * cannot drift apart. Every link below goes through link_at/link_to.
 */

static inline void bits_set(rtm_tlsf *t, unsigned idx)
{
    t->list_bits[idx >> 6] |= (uint64_t)1 << (idx & 63u);
}

/* The mask is ~1 rotated left by the bit's position: a constant and one
 * rotate, where ~(1 << bit) takes a constant, a shift and a not (the worst
 * free clears two bits). */
static inline void bits_clear(rtm_tlsf *t, unsigned idx)
{
    unsigned bit = idx & 63u;
    uint64_t keep = ~(uint64_t)1;
    t->list_bits[idx >> 6] &= (keep << bit) | (keep >> ((64u - bit) & 63u));
}

/* The link of list idx's head slot: what a head's pprev link holds. */
static inline ptrdiff_t head_slot(const rtm_tlsf *t, unsigned idx)
{
    return link_to(t, (const char *)&t->heads[idx]);
}

/* Links free block b (span s) in at the head of its list (LIFO):
 *   [b][old head][...]
 * Branch-free: with no old head, the store to its back link goes to b's
 * own back link, which the next store overwrites. In the random-replace
 * loop the "empty list?" branch was missed on 18 % of frees (cachegrind);
 * a store is cheaper than that. */
static inline void list_insert(rtm_tlsf *t, char *b, size_t s)
{
    unsigned idx = list_index(s);
    ptrdiff_t head_off = t->heads[idx];
    ptrdiff_t b_off = link_to(t, b);
    RTM_ASSERT(s >= MIN_SPAN && s % GRAN == 0 && idx < LIST_COUNT);
    STEP(t);
    if (head_off != 0)
        *link_pprev(link_at(t, head_off)) = b_off;
    /* b's two links with another store between them: gcc 12 turns two
     * adjacent 8-byte stores into one vector store (two moves to vector
     * registers, an unpack, the store: two instructions more). */
    *link_next(b) = head_off;
    t->heads[idx] = b_off;
    *link_pprev(b) = head_slot(t, idx);
    bits_set(t, idx);
}

/* Unlinks free block b from its list. Its pprev link names the slot that
 * points to it (a head slot or the previous block's next link), so no list
 * index is computed; when the list empties, the slot's position in the head
 * array is the index whose bit to clear. */
static inline void list_remove(rtm_tlsf *t, char *b)
{
    ptrdiff_t next = *link_next(b);
    ptrdiff_t pprev = *link_pprev(b);
    RTM_ASSERT(pprev != 0 && (hdr(b) & BLOCK_FREE) != 0);
    STEP(t);
    *(ptrdiff_t *)(uintptr_t)link_at(t, pprev) = next;
    if (next != 0) {
        *link_pprev(link_at(t, next)) = pprev;
        return;
    }
    size_t slot = (size_t)(pprev - head_slot(t, 0)) / sizeof(ptrdiff_t);
    if (slot < LIST_COUNT)
        bits_clear(t, (unsigned)slot);
}

/* Takes the head out of non-empty list idx. A branch on whether it was
 * the only block: the branch-free form (a store to the head's own link, a
 * mask for the bit) cost 5 instructions more on the worst alloc, which has
 * no room for them; the branch is missed on about 10 % of allocations. */
static inline char *list_take_head(rtm_tlsf *t, unsigned idx)
{
    char *head = link_at(t, t->heads[idx]);
    ptrdiff_t next = *link_next(head);
    RTM_ASSERT((hdr(head) & BLOCK_FREE) != 0);
    STEP(t);
    t->heads[idx] = next;
    if (next == 0)
        bits_clear(t, idx);
    else
        *link_pprev(link_at(t, next)) = head_slot(t, idx);
    return head;
}

/* The first non-empty list at or above idx, or -1. */
static inline int list_search(const rtm_tlsf *t, unsigned idx)
{
    uint64_t high = t->list_bits[1];
    if (idx < 64u) {
        uint64_t low = t->list_bits[0] & (~(uint64_t)0 << idx);
        if (low != 0)
            return (int)rtm_ctz64(low);
    } else {
        high &= ~(uint64_t)0 << (idx & 63u);
    }
    return high != 0 ? (int)(64u + rtm_ctz64(high)) : -1;
}

/* --- tlsf.c <-> tlsf_check.c ------------------------------------------- */

/* Reports a failed invariant, sets errno EFAULT, returns -1. */
int rtm_tlsf_check_fail(const rtm_tlsf *t, const void *where, const char *what);

/* --- tlsf.c <-> tlsf_cached.c ------------------------------------------ */

/* 1 if payload address p lies in a pool of t with room for a block after
 * it (the fast range, then a search of the pools), else 0. Reads nothing
 * at p and reports nothing: the cache layer checks its own word below p
 * once this holds. */
int rtm_tlsf_holds_payload(const rtm_tlsf *t, const void *p);

#endif /* RTM_HEAPS_TLSF_LAYOUT_H */
