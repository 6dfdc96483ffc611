// SPDX-License-Identifier: MIT
/*
 * heaps/halffit_layout.h -- the half-fit heap's in-memory layout and the
 * tiny accessors halffit.c and halffit_check.c share. Private to those two
 * files. Layout and invariants: the top of heaps/halffit.c.
 */
#ifndef RTM_HEAPS_HALFFIT_LAYOUT_H
#define RTM_HEAPS_HALFFIT_LAYOUT_H

#include "core/internal.h"
#include "rtmem/halffit.h"

#define HF_HDR       ((size_t)RTM_HALFFIT_HEADER_BYTES)
#define HF_UNIT      RTM_HALFFIT_MIN_BLOCK
#define HF_LOG2U     (sizeof(ptrdiff_t) > 4u ? 5u : 4u)
#define HF_MAX_ORDER RTM_HALFFIT_MAX_ORDER
#define HF_ORDERS    58u /* lists: enough for the 64-bit HF_MAX_ORDER */

/* Header states: two unlikely words, so that a stray pointer whose "header"
 * is user data is refused as foreign rather than taken for a block. */
#define HF_USED 0x55534544u /* "DESU" */
#define HF_FREE 0x46524545u /* "EERF" */

/* Every block, used or free, starts with this. */
typedef struct hf_header {
    uint32_t order; /* block is HF_UNIT << order bytes       */
    uint32_t state; /* HF_USED or HF_FREE; anything else: not a block */
} hf_header;

/* A free block's links follow its header: offsets from the control
 * structure (0 = none), so the heap survives being moved. */
typedef struct hf_links {
    ptrdiff_t prev;
    ptrdiff_t next;
} hf_links;

_Static_assert(sizeof(hf_header) == RTM_HALFFIT_HEADER_BYTES, "header size is public");
_Static_assert(sizeof(hf_header) + sizeof(hf_links) <= RTM_HALFFIT_MIN_BLOCK,
               "a free block holds its header and links");
_Static_assert(((size_t)1 << HF_LOG2U) == RTM_HALFFIT_MIN_BLOCK, "unit is 2^HF_LOG2U");
_Static_assert(HF_ORDERS > RTM_HALFFIT_MAX_ORDER, "one list per order");
_Static_assert(HF_ORDERS <= 64u, "the bitmap is one 64-bit word");

struct rtm_halffit {
    uint32_t kind;              /* RTM_KIND_HALFFIT (core/internal.h) */
    uint32_t lost;              /* bytes skipped to align the control (0..7)  */
    size_t region_bytes;        /* bytes given by the caller                  */
    size_t arena_units;         /* arena size in HF_UNIT                       */
    size_t free_units;          /* units in free blocks                        */
    size_t free_blocks;         /* free blocks (all lists)                     */
    size_t used_units;          /* units in live blocks                        */
    size_t live_blocks;         /* live blocks                                 */
    size_t peak_used;           /* highest used bytes since create or reset    */
    size_t failed_allocs;       /* ENOMEM refusals                             */
    uint64_t bitmap;            /* bit k set iff list k is non-empty           */
    ptrdiff_t heads[HF_ORDERS]; /* first free block of order k, 0 = none */
};

/* The arena starts right after the control structure. */
static inline size_t hf_ctrl_bytes(void) { return (sizeof(rtm_halffit) + 7u) & ~(size_t)7u; }
static inline char *hf_ctrl(const rtm_halffit *h) { return (char *)(uintptr_t)h; }
static inline char *hf_base(const rtm_halffit *h) { return hf_ctrl(h) + hf_ctrl_bytes(); }

/* Arena offsets (o, from base) versus link offsets (from the control). */
static inline ptrdiff_t hf_off_from_ctrl(const rtm_halffit *h, size_t o)
{
    (void)h;
    return (ptrdiff_t)(o + hf_ctrl_bytes());
}
static inline size_t hf_off_in_arena(const rtm_halffit *h, ptrdiff_t link)
{
    (void)h;
    return (size_t)link - hf_ctrl_bytes();
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
    return (hf_links *)(uintptr_t)(hf_ctrl(h) + link + HF_HDR);
}

/* The order whose block holds size + header; above HF_MAX_ORDER when none
 * does (huge sizes do not wrap). */
static inline unsigned hf_order_for(size_t size)
{
    if (size > ((HF_UNIT << HF_MAX_ORDER) - HF_HDR))
        return HF_MAX_ORDER + 1u;
    size_t need = size + HF_HDR;
    if (need <= HF_UNIT)
        return 0;
    return rtm_fls_size(need - 1u) + 1u - HF_LOG2U;
}

/* Usable bytes (block minus header) summed over live and free blocks. */
static inline size_t hf_used_bytes(const rtm_halffit *h)
{
    return (h->used_units << HF_LOG2U) - h->live_blocks * HF_HDR;
}
static inline size_t hf_free_bytes(const rtm_halffit *h)
{
    return (h->free_units << HF_LOG2U) - h->free_blocks * HF_HDR;
}

/* The arena size create gives a region of `bytes` after skipping `lost`:
 * capped so that every link (control + offset) fits in a ptrdiff_t. */
static inline size_t hf_units_for(size_t bytes, size_t lost)
{
    size_t units = (bytes - lost - hf_ctrl_bytes()) >> HF_LOG2U;
    size_t cap = ((size_t)1 << (HF_MAX_ORDER + 1u)) - 64u;
    return units > cap ? cap : units;
}

#endif /* RTM_HEAPS_HALFFIT_LAYOUT_H */
