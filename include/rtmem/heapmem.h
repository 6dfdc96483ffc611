// SPDX-License-Identifier: MIT
/*
 * rtmem/heapmem.h -- the typed API of rtmem's page-and-bucket heap, the
 * McKusick-Karels design ("Design of a General Purpose Memory Allocator for
 * the 4.3BSD UNIX Kernel", 1988) in the variant Xenomai uses by default
 * (heapmem, and coreheap, its kernel twin). The generic name is
 * "heapmem:<page size>", default RTM_HEAPMEM_DEFAULT_PAGE.
 *
 * Guarantees:
 *  - The arena is split into pages (a power of two >= 64, page-aligned in
 *    absolute address when the heap is created). A page map inside the
 *    region records, per page: free range head or tail, used range head,
 *    continuation, or bucket page of size class c with its slot bitmap.
 *  - Requests up to half a page are rounded to a power-of-two bucket
 *    (16 bytes at least) and served from a bucket page of that class: one
 *    find-first-zero over the page's bitmap words, whose count is
 *    max(1, page / 512), a constant of the page size. When the class has no
 *    partial page and no free page is left, the smallest larger class with a
 *    free slot serves it (usable size tells), so a smaller request never
 *    fails where a larger one succeeds.
 *  - Larger requests take ceil(n / page) whole pages from free page ranges.
 *    DESIGN CHOICE: free ranges are kept on segregated lists by
 *    floor(log2(pages)) (a one-level TLSF over range lengths, a 32-bit
 *    bitmap of non-empty lists), not in balanced trees by size and address:
 *    finding a range is O(1) (the head of the request's own class if it is
 *    long enough, else the head of the first non-empty higher class, one bit
 *    scan). The price is good fit rather than best fit. Free coalesces with
 *    both neighbouring free ranges in O(1): the page map holds the length in
 *    a free range's first and last page entries.
 *  - So alloc, aligned_alloc, free and in-place realloc are O(1) (bounded
 *    by page / 512 bitmap words); a moving realloc adds an O(size) copy.
 *  - No per-block header. Buckets of size s are aligned to s; page ranges to
 *    the page size. free detects, in every build and in O(1), a pointer
 *    that is not a block start and a double free.
 *  - A bucket page whose last slot is freed goes back to the free ranges at
 *    once, so freeing everything restores the single initial range.
 *  - All metadata lives inside the region; links are page indices, so the
 *    heap is position independent (alignment then holds relative to the
 *    arena start only). At most 2^32 - 2 pages.
 *
 * Region layout:
 *
 *   mem (rounded up to 8)                           page-aligned
 *   [ control | page map: n entries of E bytes | pad | page 0 | ... | tail ]
 *
 *   E = 20 + 4 * max(1, page / 512) rounded up to 8 (rtm_heapmem_entry_size).
 *
 * Not thread-safe: callers serialise access to one heap.
 */
#ifndef RTMEM_HEAPMEM_H
#define RTMEM_HEAPMEM_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_heapmem rtm_heapmem; /* opaque; lives at the start of a region */

/** Bytes of header a block carries: none (the page map holds the state). */
#define RTM_HEAPMEM_HEADER_BYTES 0u
/** Page size "heapmem" uses without a parameter (Xenomai's). */
#define RTM_HEAPMEM_DEFAULT_PAGE 512u
/** Smallest page size accepted. */
#define RTM_HEAPMEM_MIN_PAGE 64u
/** Largest page size accepted (bitmap of 128 words per page). */
#define RTM_HEAPMEM_MAX_PAGE 65536u
/** Smallest bucket. */
#define RTM_HEAPMEM_MIN_BUCKET 16u

/** Bytes of the control structure. O(1). */
RTM_API size_t rtm_heapmem_control_size(void);

/** Bytes of one page map entry for page_size, or 0 when page_size is bad. */
RTM_API size_t rtm_heapmem_entry_size(size_t page_size);

/** The smallest region rtm_heapmem_create() accepts at any start address
 *  (one page), or 0 when page_size is not a power of two in
 *  [RTM_HEAPMEM_MIN_PAGE, RTM_HEAPMEM_MAX_PAGE]. O(1). */
RTM_API size_t rtm_heapmem_min_region(size_t page_size);

/** Creates a heap over [mem, mem + bytes). Returns the heap (mem rounded up
 *  to 8) or NULL (errno EINVAL when hosted, nothing written) when mem is
 *  NULL, page_size is bad, not one page fits, or mem + bytes wraps the
 *  address space. O(pages): the page map is initialised. */
RTM_API rtm_heapmem *rtm_heapmem_create(void *mem, size_t bytes, size_t page_size);

/** A block of at least size bytes (size 0: the smallest bucket), aligned to
 *  RTM_ALIGN at least, or NULL with errno ENOMEM (counted in failed_allocs).
 *  Succeeds iff size <= rtm_heapmem_stats().largest_free. O(1). Hot path. */
RTM_API void *rtm_heapmem_alloc(rtm_heapmem *h, size_t size);

/** As alloc, aligned to alignment: up to half a page from a bucket of at
 *  least that size, up to a page from a page range. NULL with errno EINVAL
 *  (not a power of two), ENOTSUP (above the page size; not counted), or
 *  ENOMEM (counted). O(1). */
RTM_API void *rtm_heapmem_aligned_alloc(rtm_heapmem *h, size_t alignment, size_t size);

/** In place (ptr returned, O(1)) when size fits the block's bucket or page
 *  range (shrinks included: usable size and alignment stay); otherwise
 *  allocates, copies (O(size)) and frees. realloc(NULL, n) allocates;
 *  realloc(p, 0) frees and returns NULL. ENOMEM: NULL, ptr unchanged. A
 *  pointer free would refuse is refused the same way (NULL, EINVAL). */
RTM_API void *rtm_heapmem_realloc(rtm_heapmem *h, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL (heap untouched) after reporting
 *  RTM_ERR_FOREIGN_POINTER (not a block start of this heap) or
 *  RTM_ERR_DOUBLE_FREE (block already free). NULL returns 0. O(1). */
RTM_API int rtm_heapmem_free(rtm_heapmem *h, void *ptr);

/** The bucket size or range bytes of the live block ptr starts; 0 for
 *  NULL. Anything else is refused as rtm_heapmem_free() refuses it (same
 *  checks and report) and gives 0 with errno EINVAL. O(1). */
RTM_API size_t rtm_heapmem_usable_size(const rtm_heapmem *h, const void *ptr);

/** Page size and page count. O(1). */
RTM_API size_t rtm_heapmem_page_size(const rtm_heapmem *h);
RTM_API size_t rtm_heapmem_page_count(const rtm_heapmem *h);

/** Exact statistics. free_bytes = free pages x page + free bucket slots x
 *  their size; largest_free is exactly the largest size alloc grants now:
 *  the length of the head range of the highest non-empty range list (which
 *  may be shorter than the longest free range of that list), else the
 *  largest bucket class with a free slot, else 0. O(1). */
RTM_API rtm_stats rtm_heapmem_stats(const rtm_heapmem *h);

/** Verifies every invariant (geometry, the page map tiling the arena, free
 *  ranges coalesced and listed on their class, bucket bitmaps and counts,
 *  partial lists, the bitmaps of non-empty lists, the counters). Offsets
 *  and links are validated as integers before use; lists are walked at most
 *  their expected length. Returns 0, or -1 (errno EFAULT when hosted) after
 *  reporting RTM_ERR_CHECK_FAILED. O(pages x page / 512). */
RTM_API int rtm_heapmem_check(const rtm_heapmem *h);

/** Calls walker for every block in address order: free ranges, used
 *  ranges, and every slot of every bucket page (used or free). */
RTM_API void rtm_heapmem_walk(const rtm_heapmem *h,
                              void (*walker)(void *ptr, size_t usable, int used, void *arg),
                              void *arg);

/** Frees every block at once and restarts the counters. O(pages). */
RTM_API void rtm_heapmem_reset(rtm_heapmem *h);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_HEAPMEM_H */
