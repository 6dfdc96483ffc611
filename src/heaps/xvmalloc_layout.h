// SPDX-License-Identifier: MIT
/*
 * heaps/xvmalloc_layout.h -- the xvmalloc heap's in-memory layout, its
 * size-class mapping and the tiny accessors heaps/xvmalloc.c and
 * heaps/xvmalloc_check.c share. Private to those two files. The design and
 * the invariants: the top of heaps/xvmalloc.c.
 *
 * Everything inside a page is counted in 8-byte units with 16-bit fields,
 * as Linux's xvmalloc did: a page holds at most 65536 bytes (8192 units),
 * so a block header is one unit and a free block's two links one more.
 */
#ifndef RTM_HEAPS_XVMALLOC_LAYOUT_H
#define RTM_HEAPS_XVMALLOC_LAYOUT_H

#include "core/internal.h"
#include "rtmem.h"

#define XV_LOG2U     3u /* 8-byte units: RTM_ALIGN, the payload alignment */
#define XV_UNIT      ((size_t)1 << XV_LOG2U)
#define XV_HDR       XV_UNIT /* block header bytes                          */
#define XV_MIN_UNITS 2u      /* header + the two 32-bit list links          */

#define XV_DEFAULT_PAGE 4096u
#define XV_MIN_SHIFT    8u  /* pages of 256 bytes ...                     */
#define XV_MAX_SHIFT    16u /* ... up to 64 KiB: units fit 16-bit fields */

/* Two-level size classes over block units n (TLSF's mapping): n < 16 has a
 * list of its own (first level 0); above, the first level is the power of
 * two and the second splits it into 16 equal ranges. 8192 units (the
 * largest page) is first level 10, so 11 first-level classes. */
#define XV_SL_LOG2 4u
#define XV_SL      (1u << XV_SL_LOG2)
#define XV_FL      (XV_MAX_SHIFT - XV_LOG2U - XV_SL_LOG2 + 2u)
#define XV_LISTS   (XV_FL * XV_SL)

/* Tags: an unlikely word XOR the block's unit offset in its page, so that
 * a stray pointer (or a pointer into a block) rarely finds a header that
 * claims to start where it is. A page on the empty-page stack has the
 * EMPTY tag in its first header. */
#define XV_USED  0x55534544u /* "DESU" */
#define XV_FREE  0x46524545u /* "EERF" */
#define XV_EMPTY 0x54504d45u /* "EMPT" */

/* Every block, used or free, starts with this (one unit). */
typedef struct xv_hdr {
    uint16_t units; /* block size in units, header included          */
    uint16_t prev;  /* units of the block just before it; 0: first   */
    uint32_t tag;   /* XV_USED / XV_FREE ^ offset, or XV_EMPTY       */
} xv_hdr;

/* A free block's links follow its header: global unit index of the block
 * + 1 (0 = none); an empty page's header keeps the next empty page + 1 in
 * `next`. Indices, not pointers, so the heap survives being moved. */
typedef struct xv_links {
    uint32_t next;
    uint32_t prev;
} xv_links;

_Static_assert(sizeof(xv_hdr) == XV_HDR, "a header is one unit");
_Static_assert(sizeof(xv_hdr) + sizeof(xv_links) <= XV_MIN_UNITS * XV_UNIT,
               "a free block holds its header and links");
_Static_assert((1u << (XV_MAX_SHIFT - XV_LOG2U)) <= 0xffffu, "units fit 16 bits");
_Static_assert(XV_SL <= 32u && XV_FL <= 32u, "bitmaps are 32-bit words");

typedef struct rtm_xvmalloc {
    uint32_t kind;            /* RTM_KIND_XVMALLOC (core/internal.h)           */
    uint32_t lost;            /* bytes skipped to align the control (0..7)    */
    size_t region_bytes;      /* bytes given by the caller                     */
    uint32_t page_shift;      /* log2 of the page size                         */
    uint32_t page_units;      /* units per page                                */
    uint32_t pages;           /* pages in the arena                            */
    uint32_t fresh;           /* pages [fresh, pages) were never used          */
    uint32_t empty_top;       /* empty-page stack: page + 1, 0 = none          */
    uint32_t empty_count;     /* pages on that stack                           */
    size_t free_units;        /* units in listed free blocks                   */
    size_t free_blocks;       /* listed free blocks                            */
    size_t used_units;        /* units in live blocks                          */
    size_t live_blocks;       /* live blocks                                   */
    size_t peak_used;         /* highest used bytes since create or reset      */
    size_t failed_allocs;     /* ENOMEM refusals                               */
    uint32_t fl_bits;         /* bit f set iff sl_bits[f] != 0                 */
    uint32_t sl_bits[XV_FL];  /* bit s of word f set iff list f*16+s is non-empty */
    uint32_t heads[XV_LISTS]; /* first block of each list (index + 1) */
} rtm_xvmalloc;

/* The pages start right after the control structure. */
static inline size_t xv_ctrl_bytes(void) { return (sizeof(rtm_xvmalloc) + 7u) & ~(size_t)7u; }
static inline char *xv_base(const rtm_xvmalloc *h)
{
    return (char *)(uintptr_t)h + xv_ctrl_bytes();
}

/* Blocks are named by global unit index g = page * page_units + offset. */
static inline xv_hdr *xv_at(const rtm_xvmalloc *h, size_t g)
{
    return (xv_hdr *)(uintptr_t)(xv_base(h) + (g << XV_LOG2U));
}
static inline xv_links *xv_links_at(const rtm_xvmalloc *h, size_t g)
{
    return (xv_links *)(uintptr_t)(xv_base(h) + (g << XV_LOG2U) + XV_HDR);
}
static inline uint32_t xv_offset(const rtm_xvmalloc *h, size_t g)
{
    return (uint32_t)(g & (h->page_units - 1u));
}
static inline uint32_t xv_tag(uint32_t magic, uint32_t offset) { return magic ^ offset; }

/* The list of a block of n units (2 <= n <= 8192 + 511). */
static inline unsigned xv_list_of(size_t n)
{
    if (n < XV_SL)
        return (unsigned)n;
    unsigned f = rtm_fls_size(n);
    unsigned sl = (unsigned)(n >> (f - XV_SL_LOG2)) - XV_SL;
    return ((f - XV_SL_LOG2 + 1u) << XV_SL_LOG2) + sl;
}

/* The first list all of whose blocks hold n units: n rounded up to the
 * next list boundary (good fit). */
static inline unsigned xv_list_fit(size_t n)
{
    if (n >= XV_SL)
        n += ((size_t)1 << (rtm_fls_size(n) - XV_SL_LOG2)) - 1u;
    return xv_list_of(n);
}

/* Units of the block that serves a request of size bytes; 0 when the
 * request cannot fit any page (huge sizes do not wrap). */
static inline size_t xv_units_for(const rtm_xvmalloc *h, size_t size)
{
    if (size > ((size_t)h->page_units << XV_LOG2U) - XV_HDR)
        return 0;
    size_t n = (size + XV_HDR + XV_UNIT - 1u) >> XV_LOG2U;
    return n < XV_MIN_UNITS ? XV_MIN_UNITS : n;
}

static inline int xv_page_ok(size_t page)
{
    return rtm_is_pow2(page) && page >= ((size_t)1 << XV_MIN_SHIFT) &&
           page <= ((size_t)1 << XV_MAX_SHIFT);
}

/* The page count create gives a region of `bytes` after skipping `lost`:
 * capped so that every global unit index + 1 fits a 32-bit link. */
static inline uint32_t xv_pages_for(size_t bytes, size_t lost, unsigned shift)
{
    size_t pages = (bytes - lost - xv_ctrl_bytes()) >> shift;
    size_t cap = (size_t)0xfffffffeu >> (shift - XV_LOG2U);
    return (uint32_t)(pages > cap ? cap : pages);
}

/* Payload bytes of an empty page (one free block of the whole page). */
static inline size_t xv_page_payload(const rtm_xvmalloc *h)
{
    return ((size_t)h->page_units << XV_LOG2U) - XV_HDR;
}

/* Pages that hold no block: on the empty stack or never used. */
static inline size_t xv_empty_pages(const rtm_xvmalloc *h)
{
    return (size_t)h->empty_count + (h->pages - h->fresh);
}

static inline size_t xv_used_bytes(const rtm_xvmalloc *h)
{
    return (h->used_units - h->live_blocks) << XV_LOG2U;
}

/* --- heaps/xvmalloc_check.c --------------------------------------------- */

/* The consistency check: 0, or -1 with errno EFAULT and a report naming
 * the first broken invariant. Trusts nothing it reads; never crashes or
 * loops on a damaged heap. Cold. */
int rtm_xv_check(const rtm_xvmalloc *h);
/* Every block in address order (an empty page is one free block of a
 * page's payload); -1 with EFAULT, after the blocks before it, on a header
 * that would lead outside its page. */
int rtm_xv_walk(const rtm_xvmalloc *h, rtm_walker walker, void *arg);

#endif /* RTM_HEAPS_XVMALLOC_LAYOUT_H */
