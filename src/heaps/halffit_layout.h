// SPDX-License-Identifier: MIT
/*
 * heaps/halffit_layout.h -- the half-fit heap's in-memory layout and the
 * tiny accessors halffit.c and halffit_check.c share. Private to those two
 * files. Layout, invariants and the bound: the top of heaps/halffit.c.
 */
#ifndef RTM_HEAPS_HALFFIT_LAYOUT_H
#define RTM_HEAPS_HALFFIT_LAYOUT_H

#include "core/internal.h"
#include "rtmem/halffit.h"

#define HF_HDR       ((size_t)RTM_HALFFIT_HEADER_BYTES)
#define HF_UNIT      RTM_HALFFIT_MIN_BLOCK
#define HF_LOG2U     5u
#define HF_MAX_ORDER RTM_HALFFIT_MAX_ORDER
#define HF_CLASSES   32u /* lists: one per class floor(log2 units), 0..31 */

/* Header states: unlikely words, so that a stray pointer whose "header" is
 * user data is refused as foreign rather than taken for a block. */
#define HF_USED 0x55534544u /* "DESU": a live block                        */
#define HF_FREE 0x46524545u /* "EERF": a free fragment (or a stale header) */
#define HF_SHIM 0x4d494853u /* "SHIM": in front of an over-aligned payload */
#define HF_END  0x21444e45u /* "END!": the sentinel after the last block   */

/* Every block, used or free, starts with this (16 bytes, so payloads are
 * 16-aligned: the arena starts 16-aligned and blocks are 32-byte units).
 * A shim (aligned_alloc) has the same shape: units = bytes from its block's
 * header to the shim, state HF_SHIM. */
typedef struct hf_header {
    uint32_t units;      /* block size in units (live: all it holds)       */
    uint32_t prev_units; /* size of the block before it; 0 for the first   */
    uint32_t state;      /* HF_USED, HF_FREE, HF_SHIM or HF_END            */
    uint32_t order;      /* live: bits 0..4 the request's order r; for an
                            aligned_alloc(), bits 5..9 log2(alignment) and
                            bits 10..31 the payload's distance from the
                            usual one in 16-byte steps; free: unused      */
} hf_header;

/* A free block's list links follow its header. A link is the offset of a
 * node's header from the control structure, so the heap survives being
 * moved. The lists are circular through a sentinel node per class in the
 * control structure (its link is the offset its "header" would have), so
 * unlinking and pushing need no test for the list's ends. */
typedef struct hf_links {
    ptrdiff_t prev;
    ptrdiff_t next;
} hf_links;

_Static_assert(sizeof(hf_header) == RTM_HALFFIT_HEADER_BYTES, "header size is public");
_Static_assert(sizeof(hf_header) + sizeof(hf_links) <= RTM_HALFFIT_MIN_BLOCK,
               "a free block holds its header and links");
_Static_assert(((size_t)1 << HF_LOG2U) == RTM_HALFFIT_MIN_BLOCK, "unit is 2^HF_LOG2U");
_Static_assert(HF_CLASSES > RTM_HALFFIT_MAX_ORDER, "one list per class");

struct rtm_halffit {
    uint32_t kind;              /* RTM_KIND_HALFFIT (core/internal.h)          */
    uint32_t lost;              /* bytes skipped to align the control (0..15)  */
    size_t region_bytes;        /* bytes given by the caller                  */
    size_t arena_units;         /* units of blocks (the sentinel excluded)    */
    size_t raw_used;            /* bytes held by live blocks, headers excluded
                                   (used bytes before shim_bytes): what alloc
                                   compares with peak_mark, so it needs no
                                   arithmetic on the counters               */
    size_t failed_allocs;       /* ENOMEM refusals                             */
    size_t live_blocks;         /* live blocks                                 */
    size_t peak_mark;           /* highest used bytes since create or reset,
                                   plus shim_bytes (so that alloc compares it
                                   with raw_used, see hf_peak_used())         */
    size_t blocks;              /* all blocks, live and free (the sentinel
                                   excluded): a free without a merge leaves it
                                   as it is; free blocks = blocks - live      */
    uint32_t bitmap;            /* bit c set iff list c is non-empty           */
    uint32_t reserved;          /* 0                                           */
    size_t shim_bytes;          /* live aligned payloads' distances from the
                                   usual payload (bytes not usable)           */
    hf_links lists[HF_CLASSES]; /* list c's sentinel node: a circular list  */
};

/* The arena starts right after the control structure, 16-aligned. */
static inline size_t hf_ctrl_bytes(void) { return (sizeof(rtm_halffit) + 15u) & ~(size_t)15u; }
static inline char *hf_ctrl(const rtm_halffit *h) { return (char *)(uintptr_t)h; }
static inline char *hf_base(const rtm_halffit *h) { return hf_ctrl(h) + hf_ctrl_bytes(); }

/* List links are offsets from the link origin, 16 bytes before list 0's
 * sentinel: a node's link is its header's address minus the origin, so the
 * sentinel of list c (its links where a header's links would be) has the
 * link c * 16, and every block's link is above HF_CLASSES * 16. */
static inline char *hf_origin(const rtm_halffit *h)
{
    return hf_ctrl(h) + offsetof(rtm_halffit, lists) - HF_HDR;
}
static inline ptrdiff_t hf_sentinel(unsigned c)
{
    return (ptrdiff_t)((size_t)c * sizeof(hf_links)); /* c zero-extended */
}
/* 1 when a link is a sentinel's (below HF_CLASSES * 16, every block's is
 * above), else 0: the sign of link - HF_CLASSES * 16, one subtraction and
 * one shift, for a bitmap update without a branch or a flag-to-integer
 * conversion. */
static inline uint32_t hf_is_sentinel(ptrdiff_t link)
{
    return (uint32_t)(((size_t)link - HF_CLASSES * sizeof(hf_links)) >> (sizeof(size_t) * 8u - 1u));
}
/* Arena byte offsets (o, from base) versus links. */
static inline ptrdiff_t hf_link_of(size_t o)
{
    return (ptrdiff_t)(o + hf_ctrl_bytes() + HF_HDR - offsetof(rtm_halffit, lists));
}
static inline size_t hf_off_in_arena(ptrdiff_t link)
{
    return (size_t)link + offsetof(rtm_halffit, lists) - HF_HDR - hf_ctrl_bytes();
}
static inline ptrdiff_t hf_node_link(const rtm_halffit *h, const hf_header *b)
{
    return (const char *)b - hf_origin(h);
}
static inline hf_header *hf_node(const rtm_halffit *h, ptrdiff_t link)
{
    return (hf_header *)(uintptr_t)(hf_origin(h) + link);
}

static inline hf_header *hf_block(const rtm_halffit *h, size_t o)
{
    return (hf_header *)(uintptr_t)(hf_base(h) + o);
}
static inline hf_links *hf_link(const rtm_halffit *h, size_t o)
{
    return (hf_links *)(uintptr_t)(hf_base(h) + o + HF_HDR);
}
static inline hf_links *hf_link_at(const rtm_halffit *h, ptrdiff_t link)
{
    return (hf_links *)(uintptr_t)(hf_origin(h) + link + HF_HDR);
}

/* The largest request: 2^HF_MAX_ORDER units minus the header. */
#define HF_MAX_SIZE ((HF_UNIT << HF_MAX_ORDER) - HF_HDR)

/* The order r whose 2^r units hold size + header, for size <= HF_MAX_SIZE
 * (alloc tests that first, so it needs no second test of r). */
static inline unsigned hf_order_of(size_t size)
{
    /* fls(need - 1) + 1 - log2(unit) for need = size + header > unit */
    return rtm_fls_size((size + HF_HDR - 1u) | (HF_UNIT - 1u)) + 1u - HF_LOG2U;
}

/* The same for any size; above HF_MAX_ORDER when none holds it (huge sizes
 * do not wrap). */
static inline unsigned hf_order_for(size_t size)
{
    return size > HF_MAX_SIZE ? HF_MAX_ORDER + 1u : hf_order_of(size);
}

/* The list of a free block of `units` units: floor(log2 units). */
static inline unsigned hf_class(uint32_t units) { return rtm_fls32(units); }

/* Usable bytes (block minus header) of the live blocks, shims excluded. */
static inline size_t hf_used_bytes(const rtm_halffit *h) { return h->raw_used - h->shim_bytes; }
/* The peak of the used bytes. */
static inline size_t hf_peak_used(const rtm_halffit *h) { return h->peak_mark - h->shim_bytes; }
static inline size_t hf_free_blocks(const rtm_halffit *h) { return h->blocks - h->live_blocks; }
/* A live header's order and aligned-payload distance (bytes). */
static inline unsigned hf_live_order(const hf_header *b) { return b->order & 31u; }
static inline unsigned hf_live_align_log2(const hf_header *b) { return (b->order >> 5) & 31u; }
static inline size_t hf_live_shift(const hf_header *b) { return (size_t)(b->order >> 10) << 4; }
/* Units held by live blocks: their usable bytes plus their headers. */
static inline size_t hf_used_units(const rtm_halffit *h)
{
    return (h->raw_used + h->live_blocks * HF_HDR) >> HF_LOG2U;
}
static inline size_t hf_free_bytes(const rtm_halffit *h)
{
    return ((h->arena_units - hf_used_units(h)) << HF_LOG2U) - hf_free_blocks(h) * HF_HDR;
}

/* The largest arena create makes: every size fits the 32-bit header fields
 * and every class is at most HF_MAX_ORDER. */
#define HF_MAX_UNITS (((size_t)1 << (HF_MAX_ORDER + 1u)) - 1u)

/* The block units create gives a region of `bytes` after skipping `lost`:
 * everything after the control structure in whole units, minus the
 * one-unit sentinel, capped at HF_MAX_UNITS. 0 when nothing is left. */
static inline size_t hf_units_for(size_t bytes, size_t lost)
{
    size_t units = (bytes - lost - hf_ctrl_bytes()) >> HF_LOG2U;
    if (units < 2u)
        return 0;
    units--;
    return units > HF_MAX_UNITS ? HF_MAX_UNITS : units;
}

#endif /* RTM_HEAPS_HALFFIT_LAYOUT_H */
