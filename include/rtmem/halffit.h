// SPDX-License-Identifier: MIT
/*
 * rtmem/halffit.h -- the typed API of rtmem's half-fit heap: every block a
 * power of two, one free list per power of two, buddy merging. The heap
 * whose worst-case memory need is proven (Robson's bound, as o1heap
 * documents it for its half-fit): size the region with
 * rtm_halffit_arena_size() and no allocation within the stated limits ever
 * fails, whatever the order of requests and frees.
 *
 * Guarantees:
 *  - alloc, free, aligned_alloc and in-place realloc run in O(1): one bit
 *    scan picks the list, then at most RTM_HALFFIT_MAX_ORDER halvings
 *    (alloc) or buddy merges (free), a constant of the build (57 on 64-bit
 *    targets, 26 on 32-bit ones), independent of the heap contents.
 *    realloc copies O(size) only when the block must move.
 *  - A block of order k is RTM_HALFFIT_MIN_BLOCK << k bytes, header
 *    included; a request of n bytes takes the smallest order whose block
 *    holds n + RTM_HALFFIT_HEADER_BYTES (rtm_halffit_block_size()).
 *    Payloads are aligned to RTM_ALIGN (8) bytes.
 *  - The bound (proof in src/heaps/halffit.c): let the live bytes be
 *    counted as ROUNDED block sizes, live = sum of rtm_halffit_block_size(n)
 *    over live blocks. If live never exceeds max_live_bytes (the block a
 *    request is about to take included) and no request exceeds max_request,
 *    a heap created over rtm_halffit_arena_size(max_live_bytes, max_request)
 *    bytes never refuses a request. Counted in requested bytes instead:
 *    rtm_halffit_block_size(n) <= max(2 * (n + RTM_HALFFIT_HEADER_BYTES),
 *    RTM_HALFFIT_MIN_BLOCK), so pass twice the live (request + header)
 *    bytes, each request counted at least RTM_HALFFIT_MIN_BLOCK / 2.
 *  - All metadata lives inside the region; links are offsets from the
 *    control structure, so the heap is position independent (copy the
 *    region to another 8-aligned address and keep using the copy).
 *
 * Not thread-safe: callers serialise access to one heap.
 */
#ifndef RTMEM_HALFFIT_H
#define RTMEM_HALFFIT_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_halffit rtm_halffit; /* opaque; lives at the start of a region */

/** Bytes of header every block (used or free) carries. */
#define RTM_HALFFIT_HEADER_BYTES 8u
/** The smallest block (order 0), header included: a free block holds the
 *  header and two list links, rounded up to a power of two (32 bytes on
 *  64-bit targets, 16 on 32-bit ones). */
#define RTM_HALFFIT_MIN_BLOCK (sizeof(ptrdiff_t) > 4u ? (size_t)32u : (size_t)16u)
/** The largest order: blocks of MIN_BLOCK << MAX_ORDER bytes (and arena
 *  offsets) stay below a quarter of the address space. */
#define RTM_HALFFIT_MAX_ORDER (sizeof(ptrdiff_t) > 4u ? 57u : 26u)

/** Bytes of the control structure (placed at the start of the region). */
RTM_API size_t rtm_halffit_control_size(void);

/** The smallest region rtm_halffit_create() accepts at any start address
 *  (one minimum block). O(1). */
RTM_API size_t rtm_halffit_min_region(void);

/** The block (header included, a power of two) a request of `size` bytes
 *  takes; 0 when no heap could serve it. O(1). */
RTM_API size_t rtm_halffit_block_size(size_t size);

/** The region (at any start address, control structure included) on which
 *  a heap never refuses a request while (a) every request is at most
 *  max_request bytes and (b) the live blocks' rtm_halffit_block_size() sum,
 *  the requested block included, stays at most max_live_bytes. It is
 *  (1 + log2(B / MIN_BLOCK)) * M + control + 7 with B =
 *  rtm_halffit_block_size(max_request) and M = max_live_bytes rounded down
 *  to MIN_BLOCK (Robson's H = M (1 + log2 n) in blocks). Returns 0 (errno
 *  EINVAL when hosted) when max_live_bytes < B (not even the largest request
 *  could ever be live), max_request is too large, or the size overflows.
 *  O(1). */
RTM_API size_t rtm_halffit_arena_size(size_t max_live_bytes, size_t max_request);

/** Creates a heap over [mem, mem + bytes): the control structure first,
 *  the rest (rounded down to MIN_BLOCK) cut into the largest aligned
 *  power-of-two blocks. Returns the heap (mem rounded up to 8) or NULL
 *  (errno EINVAL when hosted, nothing written) when mem is NULL, bytes <
 *  rtm_halffit_min_region(), or mem + bytes wraps the address space. O(1):
 *  at most one block per address bit. */
RTM_API rtm_halffit *rtm_halffit_create(void *mem, size_t bytes);

/** A block holding `size` bytes, or NULL (errno ENOMEM, counted in
 *  failed_allocs) when no free block of the needed order or above exists.
 *  Size 0 gives a unique minimum block. O(1). Hot path. */
RTM_API void *rtm_halffit_alloc(rtm_halffit *h, size_t size);

/** As rtm_halffit_alloc() for alignment <= RTM_ALIGN. NULL with errno
 *  EINVAL when alignment is not a power of two, ENOTSUP (not counted as a
 *  failed alloc) when it is above RTM_ALIGN: payloads sit a header past
 *  their block start, so only 8 is guaranteed. O(1). */
RTM_API void *rtm_halffit_aligned_alloc(rtm_halffit *h, size_t alignment, size_t size);

/** In place (same pointer, O(1)) when the block's order already holds size
 *  (a shrink keeps the whole block), else allocate-copy-free. realloc(NULL,
 *  n) allocates; realloc(p, 0) frees and returns NULL (errno untouched). On
 *  failure NULL (errno ENOMEM) and p unchanged; a pointer free would refuse
 *  is refused the same way (NULL, EINVAL). */
RTM_API void *rtm_halffit_realloc(rtm_halffit *h, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL (heap untouched) after reporting to
 *  the error handler: RTM_ERR_DOUBLE_FREE for a block that is free, also
 *  one that has merged into a free neighbour since (its header stays
 *  marked free inside the merged block, until a split reuses that start),
 *  RTM_ERR_FOREIGN_POINTER for a pointer outside the arena, misaligned, or
 *  whose header is not a used block's. NULL returns 0. O(1), every build. */
RTM_API int rtm_halffit_free(rtm_halffit *h, void *ptr);

/** Usable bytes of a live block: its block size minus the header (0 for
 *  NULL; ptr is not validated). O(1). */
RTM_API size_t rtm_halffit_usable_size(const rtm_halffit *h, const void *ptr);

/** Exact statistics: used_bytes and free_bytes sum usable sizes (block minus
 *  header), largest_free is exactly the largest size rtm_halffit_alloc()
 *  grants now (the biggest free block's usable size). O(1). */
RTM_API rtm_stats rtm_halffit_stats(const rtm_halffit *h);

/** Verifies every invariant: geometry, every header (order, natural
 *  alignment, inside the arena), blocks tiling the arena, no two free
 *  buddies, every free block in exactly its list with consistent links,
 *  the bitmap equal to the lists, counters equal to what the walk finds.
 *  Returns 0, or -1 (errno EFAULT when hosted) after reporting the first
 *  broken invariant. Validates every offset as an integer before forming a
 *  pointer: never reads outside the region, terminates on any corruption.
 *  O(blocks). */
RTM_API int rtm_halffit_check(const rtm_halffit *h);

/** Calls walker(ptr, usable, used, arg) for every block in address order
 *  (ptr is the payload). O(blocks). Undefined on a corrupted heap (run
 *  rtm_halffit_check() first). */
RTM_API void rtm_halffit_walk(const rtm_halffit *h,
                              void (*walker)(void *ptr, size_t usable, int used, void *arg),
                              void *arg);

/** Frees everything: the arena is cut into its initial blocks again and the
 *  counters restart. O(1) (one block per address bit). */
RTM_API void rtm_halffit_reset(rtm_halffit *h);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_HALFFIT_H */
