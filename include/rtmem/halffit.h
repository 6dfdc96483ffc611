// SPDX-License-Identifier: MIT
/*
 * rtmem/halffit.h -- the typed API of rtmem's half-fit heap: blocks of any
 * number of 32-byte units, one free list per class floor(log2 units), one
 * split per alloc and at most two neighbour merges per free (o1heap's
 * shape), with a proven worst-case memory bound: size the region with
 * rtm_halffit_arena_size() and no allocation within the stated limits ever
 * fails, whatever the order of requests and frees.
 *
 * Guarantees:
 *  - alloc, free, aligned_alloc and in-place realloc run in O(1) without a
 *    loop: one bit scan picks the list, then at most one split (alloc) or
 *    two merges (free). realloc copies O(size) only when the block must
 *    move.
 *  - A request of n bytes has the order r whose 2^r units hold
 *    n + RTM_HALFFIT_HEADER_BYTES: rtm_halffit_block_size(n) =
 *    RTM_HALFFIT_MIN_BLOCK << r. It is served from the smallest non-empty
 *    class >= r: split to exactly 2^r units when the class is above r, else
 *    the whole free block (2^r to 2^(r+1) - 1 units) is handed out.
 *  - Payloads are aligned to 16 bytes (max_align_t on x86-64 and AArch64);
 *    rtm_halffit_aligned_alloc() takes any power of two up to
 *    RTM_HALFFIT_MAX_ALIGN.
 *  - The bound (proof in src/heaps/halffit.c): let the live bytes be
 *    counted as ROUNDED block sizes, live = sum of rtm_halffit_block_size(n)
 *    over live blocks. If live never exceeds max_live_bytes (the block a
 *    request is about to take included) and no request exceeds max_request,
 *    a heap created over rtm_halffit_arena_size(max_live_bytes, max_request)
 *    bytes never refuses a request. That region holds an arena of
 *    2 (L + 1) M units (M = max_live in units, L the largest order):
 *    twice the binary buddy's (L + 1) M, the price of handing a whole
 *    fragment out instead of splitting below the request's class. Counted
 *    in requested bytes: rtm_halffit_block_size(n) <= max(2 * (n +
 *    RTM_HALFFIT_HEADER_BYTES), RTM_HALFFIT_MIN_BLOCK). An aligned request
 *    (alignment a > 16) counts as a request of n + a - 16 bytes.
 *  - All metadata lives inside the region; links are offsets from the
 *    control structure, so the heap is position independent (copy the
 *    region to another address with the same residue modulo 16 and keep
 *    using the copy).
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

/** Bytes of header every block (used or free) carries: its size, its left
 *  neighbour's size, its state and its order. */
#define RTM_HALFFIT_HEADER_BYTES 16u
/** The unit and smallest block (order 0), header included: a free block
 *  holds the header and two list links. */
#define RTM_HALFFIT_MIN_BLOCK ((size_t)32u)
/** The largest order: sizes fit the header's 32-bit unit counts (blocks
 *  up to 64 GiB, arenas below 128 GiB) on 64-bit targets; blocks and arena
 *  offsets stay below a quarter of the address space on 32-bit ones. */
#define RTM_HALFFIT_MAX_ORDER (sizeof(ptrdiff_t) > 4u ? 31u : 24u)
/** The largest alignment rtm_halffit_aligned_alloc() accepts. */
#define RTM_HALFFIT_MAX_ALIGN ((size_t)65536u)

/** Bytes of the control structure (placed at the start of the region). */
RTM_API size_t rtm_halffit_control_size(void);

/** The smallest region rtm_halffit_create() accepts at any start address
 *  (one minimum block and the one-unit end sentinel). O(1). */
RTM_API size_t rtm_halffit_min_region(void);

/** The block (header included, a power of two) a request of `size` bytes
 *  takes; 0 when no heap could serve it. O(1). */
RTM_API size_t rtm_halffit_block_size(size_t size);

/** The region (at any start address, control structure included) on which
 *  a heap never refuses a request while (a) every request is at most
 *  max_request bytes and (b) the live blocks' rtm_halffit_block_size() sum,
 *  the requested block included, stays at most max_live_bytes. It is
 *  2 (1 + log2(B / MIN_BLOCK)) * M + MIN_BLOCK + control + 15 with B =
 *  rtm_halffit_block_size(max_request) and M = max_live_bytes rounded down
 *  to MIN_BLOCK. Returns 0 (errno EINVAL when hosted) when max_live_bytes <
 *  B (not even the largest request could ever be live), max_request is too
 *  large, or the size overflows or exceeds the largest arena. O(1). */
RTM_API size_t rtm_halffit_arena_size(size_t max_live_bytes, size_t max_request);

/** Creates a heap over [mem, mem + bytes): the control structure first,
 *  the rest (whole units, at most 2^(MAX_ORDER + 1) - 1 of them) one free
 *  block, then a one-unit end sentinel. Returns the heap (mem rounded up to
 *  16) or NULL (errno EINVAL when hosted, nothing written) when mem is
 *  NULL, bytes < rtm_halffit_min_region(), or mem + bytes wraps the address
 *  space. O(1). */
RTM_API rtm_halffit *rtm_halffit_create(void *mem, size_t bytes);

/** A block holding `size` bytes, 16-aligned, or NULL (errno ENOMEM,
 *  counted in failed_allocs) when no free block of the needed order's class
 *  or above exists. Size 0 gives a unique minimum block. O(1). Hot path. */
RTM_API void *rtm_halffit_alloc(rtm_halffit *h, size_t size);

/** As rtm_halffit_alloc(), aligned to `alignment`: any power of two up to
 *  RTM_HALFFIT_MAX_ALIGN. Up to 16 it is rtm_halffit_alloc(); above, a
 *  request of size + alignment - 16 bytes whose payload is moved up to the
 *  aligned address (a 16-byte shim in front of it leads free back to the
 *  block). NULL with errno EINVAL when alignment is 0 or not a power of
 *  two, ENOTSUP when it is above RTM_HALFFIT_MAX_ALIGN (neither counted as
 *  a failed alloc); ENOMEM as rtm_halffit_alloc(). O(1). */
RTM_API void *rtm_halffit_aligned_alloc(rtm_halffit *h, size_t alignment, size_t size);

/** In place (same pointer, O(1)) when the block already holds size from
 *  ptr on (a shrink keeps the whole block), else allocate-copy-free, with
 *  the alignment an rtm_halffit_aligned_alloc() block was given. realloc(NULL,
 *  n) allocates; realloc(p, 0) frees and returns NULL (errno untouched). On
 *  failure NULL (errno ENOMEM) and p unchanged; a pointer free would refuse
 *  is refused the same way (NULL, EINVAL). */
RTM_API void *rtm_halffit_realloc(rtm_halffit *h, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL (heap untouched) after reporting to
 *  the error handler: RTM_ERR_DOUBLE_FREE for a block that is free, also
 *  one that has merged into a free neighbour since (its header stays
 *  marked free inside the merged block, until a split reuses that start),
 *  RTM_ERR_FOREIGN_POINTER for a pointer outside the arena, misaligned, or
 *  whose header is not a used block's (or an aligned payload's shim),
 *  RTM_ERR_CORRUPT_HEADER for a used header whose sizes disagree with its
 *  neighbours. NULL returns 0. O(1), every build. */
RTM_API int rtm_halffit_free(rtm_halffit *h, void *ptr);

/** Usable bytes of a live block: from ptr to the end of the block it holds
 *  (block minus header for rtm_halffit_alloc()'s pointers); 0 for NULL. A
 *  pointer that is not a live block is refused as rtm_halffit_free()
 *  refuses it (same checks and report; a header is read only once its
 *  offset lies inside the arena) and gives 0 with errno EINVAL. O(1). */
RTM_API size_t rtm_halffit_usable_size(const rtm_halffit *h, const void *ptr);

/** Exact statistics: used_bytes and free_bytes sum usable sizes (block minus
 *  header), largest_free is exactly the largest size rtm_halffit_alloc()
 *  grants now: (MIN_BLOCK << c) - header for the highest non-empty class c
 *  (a free block may hold more, but only requests up to its class are
 *  served from it). O(1). */
RTM_API rtm_stats rtm_halffit_stats(const rtm_halffit *h);

/** Verifies every invariant: geometry, every header (size inside the
 *  arena, left-neighbour size, state, a live block's order against its
 *  size), blocks tiling the arena up to the sentinel, no two free
 *  neighbours, every free block in its class's list with consistent links
 *  and every list as long as its class's free blocks, the bitmap equal to
 *  the lists, counters equal to what the walk finds.
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

/** Frees everything: the arena is one free block again and the counters
 *  restart. O(1). */
RTM_API void rtm_halffit_reset(rtm_halffit *h);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_HALFFIT_H */
