// SPDX-License-Identifier: MIT
/*
 * rtmem/buddy.h -- the typed API of rtmem's binary buddy page allocator, for
 * users who choose the algorithm at compile time. Its order API follows the
 * Linux kernel's __get_free_pages()/free_pages(); the byte API is what the
 * generic layer (rtmem.h, algorithm "buddy:<page size>", default 4096) calls.
 *
 * Guarantees:
 *  - Every block is 2^order pages (order 0 .. RTM_BUDDY_MAX_ORDER) and starts
 *    at a multiple of its own size from the arena start, which is aligned to
 *    the page size in absolute address when the heap is created. So a block
 *    of 2^k pages is aligned to min(page << k, the arena start's alignment):
 *    always to the page size, beyond that as the arena start allows.
 *  - alloc takes one bit scan over a 32-bit bitmap of non-empty orders and at
 *    most RTM_BUDDY_MAX_ORDER splits; free at most RTM_BUDDY_MAX_ORDER
 *    merges; each split or merge is a constant number of list and map
 *    updates. So alloc, alloc_pages, aligned_alloc and free are O(1), bounded
 *    by RTM_BUDDY_MAX_ORDER (31) steps whatever the heap's contents. realloc
 *    in place is O(1) the same way; a moving realloc adds an O(size) copy.
 *  - No per-block header: the page map (one byte per page, inside the region)
 *    records each block's start, order and state, so free finds the order
 *    without a header and detects, in every build and in O(1), a pointer that
 *    is not a block start of this heap and a double free.
 *  - Internal waste: a request of n bytes takes the smallest 2^k pages >= n,
 *    so up to half of a block (plus the page rounding) is unused.
 *  - All metadata lives inside the region; free-list links are offsets from
 *    the control structure, so the heap is position independent (after a move
 *    to an address with another alignment modulo the page size, blocks keep
 *    working but are aligned only relative to the arena start).
 *
 * Region layout (any start address; the arithmetic of rtm_buddy_region_for):
 *
 *   mem (rounded up to 8)                         page-aligned
 *   [ control | page map: 1 byte per page | pad | page 0 | page 1 | ... | tail ]
 *     CTRL      n bytes                     <page  <----- n pages ----->
 *
 *   n is the largest count with CTRL + n + pad + n * page fitting. Pages that
 *   are not a power of two in number are covered by several maximal blocks
 *   in decreasing size (13 pages: blocks of 8, 4 and 1 pages), like the
 *   zones of Linux's buddy allocator; blocks merge only with their buddy.
 *
 * Not thread-safe: callers serialise access to one heap.
 */
#ifndef RTMEM_BUDDY_H
#define RTMEM_BUDDY_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_buddy rtm_buddy; /* opaque; lives at the start of a region */

/** Bytes of header a block carries: none (the page map holds the state). */
#define RTM_BUDDY_HEADER_BYTES 0u
/** Page size the generic API uses for "buddy" without a parameter. */
#define RTM_BUDDY_DEFAULT_PAGE 4096u
/** Smallest page size accepted (a free block holds two list links). */
#define RTM_BUDDY_MIN_PAGE 64u
/** Largest order: a block is at most 2^31 pages; the order bitmap is one
 *  32-bit word, so finding a free order is one bit scan. */
#define RTM_BUDDY_MAX_ORDER 31u

/** Bytes of the control structure (placed at the start of the region). */
RTM_API size_t rtm_buddy_control_size(void);

/** The smallest region rtm_buddy_create(mem, bytes, page_size) accepts at
 *  any start address (one page), or 0 when page_size is not a power of two
 *  >= RTM_BUDDY_MIN_PAGE. O(1). */
RTM_API size_t rtm_buddy_min_region(size_t page_size);

/** A region size that holds at least `pages` pages at any start address
 *  (control, page map, up to 7 + page - 1 bytes of alignment padding), or 0
 *  when pages is 0, page_size is bad or the size would overflow. At most
 *  one page more may fit, depending on the start. O(1). */
RTM_API size_t rtm_buddy_region_for(size_t pages, size_t page_size);

/** Creates a buddy heap over [mem, mem + bytes). Returns the heap (mem
 *  rounded up to 8) or NULL (errno EINVAL when hosted, nothing written)
 *  when mem is NULL, page_size is not a power of two >= RTM_BUDDY_MIN_PAGE,
 *  not one page fits, or mem + bytes wraps the address space. O(pages): the
 *  page map is cleared. */
RTM_API rtm_buddy *rtm_buddy_create(void *mem, size_t bytes, size_t page_size);

/** A block of 2^order pages, or NULL: errno EINVAL (not counted) when order
 *  > RTM_BUDDY_MAX_ORDER, ENOMEM (counted in failed_allocs) when no free
 *  block of that order or above exists. O(1): one bit scan, at most
 *  RTM_BUDDY_MAX_ORDER splits. Hot path. */
RTM_API void *rtm_buddy_alloc_pages(rtm_buddy *b, unsigned order);

/** Frees a block that rtm_buddy_alloc_pages(b, order) (or any allocation of
 *  that order) returned. Returns 0, or -1 with errno EINVAL (heap untouched)
 *  after reporting: RTM_ERR_FOREIGN_POINTER for a pointer that is not a
 *  block start of this heap or a block of another order,
 *  RTM_ERR_DOUBLE_FREE for a free block. NULL returns 0. O(1): at most
 *  RTM_BUDDY_MAX_ORDER merges. */
RTM_API int rtm_buddy_free_pages(rtm_buddy *b, void *ptr, unsigned order);

/** The order rtm_buddy_alloc() uses for `size` bytes (size 0: order 0), or
 *  -1 when no order holds it. O(1). */
RTM_API int rtm_buddy_order_for(const rtm_buddy *b, size_t size);

/** A block of the smallest 2^k pages holding size bytes (size 0: one page),
 *  aligned to the page size. NULL with errno ENOMEM (counted) when no block
 *  is large enough. O(1) as rtm_buddy_alloc_pages(). Hot path. */
RTM_API void *rtm_buddy_alloc(rtm_buddy *b, size_t size);

/** As rtm_buddy_alloc(), aligned to `alignment`: alignments up to the page
 *  size cost nothing; above it the block's order is raised to
 *  log2(alignment / page), whose natural alignment gives it. NULL with errno
 *  EINVAL when alignment is not a power of two, ENOTSUP (not counted) when
 *  it exceeds the arena start's alignment or the largest block the region
 *  has (no block will ever have it), ENOMEM (counted) otherwise. O(1). */
RTM_API void *rtm_buddy_aligned_alloc(rtm_buddy *b, size_t alignment, size_t size);

/** Returns ptr unchanged (O(1), in place) when the new size needs the
 *  block's order or less: a shrink keeps the order, so usable size and
 *  alignment stay. Otherwise allocates a block of the larger order, copies
 *  (O(size)) and frees the old one; the larger order is naturally aligned
 *  at least as well, so an aligned_alloc'd block keeps its alignment. realloc(NULL, n) allocates;
 *  realloc(p, 0) frees and returns NULL (errno untouched). On ENOMEM
 *  (counted) returns NULL and ptr is unchanged. A pointer free would refuse
 *  is refused the same way (NULL, EINVAL). */
RTM_API void *rtm_buddy_realloc(rtm_buddy *b, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL (heap untouched) after reporting to
 *  the error handler: RTM_ERR_FOREIGN_POINTER for a pointer that is not a
 *  block start of this heap (outside, interior, not page aligned),
 *  RTM_ERR_DOUBLE_FREE for a free block. NULL returns 0. O(1), every build.
 *  Hot path. */
RTM_API int rtm_buddy_free(rtm_buddy *b, void *ptr);

/** page << order of the live block ptr starts; 0 for NULL. A pointer that
 *  is not a live block start is refused as rtm_buddy_free() refuses it
 *  (same checks, same report to the error handler) and gives 0 with errno
 *  EINVAL. Reads nothing outside the heap's page map. O(1). */
RTM_API size_t rtm_buddy_usable_size(const rtm_buddy *b, const void *ptr);

/** The page size. O(1). */
RTM_API size_t rtm_buddy_page_size(const rtm_buddy *b);

/** The number of pages the arena has. O(1). */
RTM_API size_t rtm_buddy_page_count(const rtm_buddy *b);

/** Exact statistics: used_bytes = pages of live blocks x page, free_bytes
 *  = free pages x page, largest_free = page << the highest non-empty order,
 *  which is exactly the largest size rtm_buddy_alloc() grants now (and the
 *  biggest free block). O(1). */
RTM_API rtm_stats rtm_buddy_stats(const rtm_buddy *b);

/** Verifies every invariant: geometry inside the region; the page map (each
 *  block start at a multiple of its size, inside the arena, interior pages
 *  zero, no two free buddies of one order left unmerged); each free list
 *  (links are block starts of the list's order marked free, prev links
 *  consistent, length equal to the map's count); the order bitmap equal to
 *  the non-empty lists; the counters. Offsets are validated as integers
 *  before any pointer is formed, lists are walked at most their expected
 *  length, so a corrupted heap never crashes it. Returns 0, or -1 (errno
 *  EFAULT when hosted) after reporting the first broken invariant.
 *  O(pages). */
RTM_API int rtm_buddy_check(const rtm_buddy *b);

/** Calls walker(ptr, page << order, used, arg) for every block, in address
 *  order. O(blocks). */
RTM_API void rtm_buddy_walk(const rtm_buddy *b,
                            void (*walker)(void *ptr, size_t usable, int used, void *arg),
                            void *arg);

/** Frees every block at once and restarts the counters. O(pages): the page
 *  map is cleared and rebuilt. */
RTM_API void rtm_buddy_reset(rtm_buddy *b);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_BUDDY_H */
