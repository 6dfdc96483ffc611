// SPDX-License-Identifier: MIT
/*
 * rtmem/tlsf.h -- the typed API of rtmem's TLSF heap (Two-Level Segregated
 * Fit), for users who choose the algorithm at compile time: direct calls,
 * no dispatch. The generic API (rtmem.h, algorithm "tlsf") calls these.
 *
 * Guarantees:
 *  - alloc, free, aligned_alloc and in-place realloc run in O(1): no loop
 *    whose trip count depends on heap contents. realloc copies O(size) only
 *    when the block must move.
 *  - A used block costs a 4-byte header (half a machine word on 64-bit, one
 *    on 32-bit); payloads are aligned to RTM_ALIGN (8) bytes.
 *  - A request is served if any free block of the request's good-fit class
 *    or above exists, or if the head of the request's own class (the block
 *    freed there last) is big enough (see docs/TLSF.md: what remains of the
 *    good-fit gap).
 *  - The tail rule: a block taken for a request keeps a tail shorter than
 *    three quarters of the request (and shorter than RTM_TLSF_TAIL_MAX,
 *    2 KiB) instead of splitting it off: a fragment few requests fit, which
 *    every later merge would unlink from a long list.
 *    rtm_tlsf_usable_size() reports what the block holds, and
 *    rtm_tlsf_realloc() to the size asked gives the tail back.
 *    RTM_TLSF_TAIL_MAX 0 (a build option) splits every tail that can stand
 *    alone; docs/TLSF.md, "Issue 29: the misses, counted and removed".
 *  - All metadata lives inside the regions; links are offsets from the
 *    control structure, so the heap is position independent.
 *
 * Not thread-safe: callers serialise access to one heap.
 */
#ifndef RTMEM_TLSF_H
#define RTMEM_TLSF_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_tlsf rtm_tlsf; /* opaque; lives at the start of a region */

/** Bytes of header a used block carries. */
#define RTM_TLSF_HEADER_BYTES 4u
/** Smallest usable size of a block: a free block must hold two links. */
#define RTM_TLSF_MIN_BLOCK ((size_t)(2u * sizeof(ptrdiff_t) + 4u))
/** Largest usable size of one block: the span is a 32-bit field (and on
 *  32-bit targets stays below 2 GiB so that size arithmetic cannot wrap). */
#define RTM_TLSF_MAX_BLOCK ((size_t)(sizeof(size_t) > 4u ? 0xFFFFFFF4u : 0x7FFFFFF4u))

/** Bytes of the control structure (placed at the start of the first region). */
RTM_API size_t rtm_tlsf_control_size(void);

/** Bytes a pool loses to its bookkeeping when the region is 8-aligned. */
RTM_API size_t rtm_tlsf_pool_overhead(void);

/** The smallest region rtm_tlsf_create() accepts. */
RTM_API size_t rtm_tlsf_min_region(void);

/** The smallest 8-aligned region on which a fresh heap can allocate one
 *  block of `usable` bytes (control structure included); 0 if no region can.
 *  Use it to size a heap for a known largest request. */
RTM_API size_t rtm_tlsf_region_for(size_t usable);

/** Creates a heap over [mem, mem + bytes): control structure first, the
 *  rest becomes the first pool. Returns the heap (mem rounded up to 8) or
 *  NULL (errno EINVAL when hosted) if mem is NULL, bytes <
 *  rtm_tlsf_min_region(), or mem + bytes wraps around the address space
 *  (bytes = SIZE_MAX, for instance). Regions beyond RTM_TLSF_MAX_BLOCK are
 *  split into several pools. O(1) per 4 GiB. Undefined: a region that is
 *  not the caller's memory. */
RTM_API rtm_tlsf *rtm_tlsf_create(void *mem, size_t bytes);

/** Adds [mem, mem + bytes) as another pool. 0 on success, -1 (errno EINVAL,
 *  the heap unchanged) for a NULL argument, a region too small to hold one
 *  block, a region whose end wraps around the address space, or a region
 *  sharing a byte with the heap's control structure or any of its pools
 *  (checked in every build). A region that starts where the heap's first
 *  pools end (within 8 bytes) joins the range free() checks in O(1); a
 *  pointer into any other added pool costs free() a search of the pools.
 *  O(pools). */
RTM_API int rtm_tlsf_add_pool(rtm_tlsf *t, void *mem, size_t bytes);

/** Sets the grow function (see rtm_grow_fn and rtm_heap_set_grow() in
 *  rtmem.h, spelled out here so this header stands alone): when no block
 *  fits, alloc, aligned_alloc and a moving realloc call grow(ctx, min_bytes,
 *  &got) once, with min_bytes = span + 32 (span: the request + 4 rounded up
 *  to 8, at least 24; for aligned_alloc, span + alignment + 24), add the
 *  memory (extending the pool it continues, else as a new pool) and retry.
 *  NULL turns growing off (the default). Kept across rtm_tlsf_reset().
 *  0, or -1 (errno EINVAL) for a NULL t. O(1). Not for a heap in shared
 *  memory (rtm_tlsf_check_region() fails on a heap with a grow function). */
RTM_API int rtm_tlsf_set_grow(rtm_tlsf *t,
                              void *(*grow)(void *ctx, size_t min_bytes, size_t *got_bytes),
                              void *ctx);

/** O(1). NULL (errno ENOMEM) when nothing fits or size > RTM_TLSF_MAX_BLOCK.
 *  Size 0 gives a unique minimum block. Hot path. */
RTM_API void *rtm_tlsf_alloc(rtm_tlsf *t, size_t size);

/** O(1). alignment must be a power of two (else NULL, errno EINVAL). */
RTM_API void *rtm_tlsf_aligned_alloc(rtm_tlsf *t, size_t alignment, size_t size);

/** In place when possible (O(1)), else allocate-copy-free; a block from
 *  rtm_tlsf_aligned_alloc() keeps at least its alignment when it moves.
 *  realloc(NULL, n) allocates; realloc(p, 0) frees and returns NULL. On
 *  failure NULL (errno ENOMEM) and p unchanged. A p that is not a live block
 *  is refused as rtm_tlsf_free() refuses it (NULL, errno EINVAL). */
RTM_API void *rtm_tlsf_realloc(rtm_tlsf *t, void *ptr, size_t size);

/** Frees ptr. NULL returns 0. Returns -1 with errno EINVAL, the heap left
 *  untouched and one report to the error handler, for a pointer it detects
 *  is not a live block of t (in every build):
 *   - not 8-aligned, or outside every pool of t (a stack or static address,
 *     a block of another heap): RTM_ERR_FOREIGN_POINTER, without reading
 *     the memory at ptr;
 *   - a free block, including one merged into a free neighbour whose header
 *     was not overwritten since: RTM_ERR_DOUBLE_FREE;
 *   - a header (the 4 bytes below ptr) that no used block can have: FREE
 *     clear but a span below the minimum or past the pool's end, a next
 *     block whose PREV_FREE bit is set, or a PREV_FREE bit whose footer does
 *     not lead to a free block of exactly that span: RTM_ERR_CORRUPT_HEADER
 *     (an interior pointer, a stale pointer into memory since reused, or an
 *     overwritten header).
 *  Not detectable without per-block metadata (undefined behaviour): a
 *  pointer whose 4 bytes below form a header that passes these checks -- a
 *  stale pointer at which the memory was re-split so that a live block
 *  starts exactly there (it frees that block), a stale pointer into memory
 *  rtm_tlsf_reset() made free (its old header is still there), an interior
 *  pointer below which the user stored such a word -- and a free neighbour
 *  whose header was forged too. rtm_tlsf_check() (O(heap)) finds what such
 *  a free broke. docs/TLSF.md, "Errors and misuse", has the exact checks.
 *  O(1) for a block in the heap's first pools (the fast range, see
 *  rtm_tlsf_add_pool); O(pools) in other added pools and for misuse. */
RTM_API int rtm_tlsf_free(rtm_tlsf *t, void *ptr);

/** Usable bytes of a live block (0 for NULL). O(1). Does not validate ptr
 *  (there is no heap to check it against): a pointer that is not a live
 *  block gives a meaningless number. Prefer rtm_tlsf_usable_size_in(). */
RTM_API size_t rtm_tlsf_usable_size(const void *ptr);

/** Usable bytes of live block ptr of heap t; 0 for NULL. A pointer that is
 *  not a live block of t (detected as by rtm_tlsf_free) gives 0 with errno
 *  EINVAL and one report to the error handler. O(1) as rtm_tlsf_free. */
RTM_API size_t rtm_tlsf_usable_size_in(const rtm_tlsf *t, const void *ptr);

/** Exact statistics. O(1). */
RTM_API rtm_stats rtm_tlsf_stats(const rtm_tlsf *t);

/** Verifies every invariant: pools that share no byte with each other or
 *  the control structure, headers, neighbour links, no two adjacent free
 *  blocks, every free block in exactly its list, bitmaps equal to the lists,
 *  spans summing to each pool, counters equal to what the walk finds.
 *  Returns 0 when all hold, else -1 (errno EFAULT when hosted) after reporting
 *  the first broken invariant to the error handler. Never follows a block
 *  span or a free-list link out of the pools. The pool records themselves
 *  are found through the control structure and may be anywhere: a pool link
 *  overwritten with another address is read there (it is checked for
 *  alignment, size and overlap first). For a heap whose control structure
 *  may hold anything, use rtm_tlsf_check_region(). O(blocks x pools +
 *  pools^2). */
RTM_API int rtm_tlsf_check(const rtm_tlsf *t);

/** rtm_tlsf_check() for a heap all of whose memory (control structure and
 *  pools) lies in [mem, mem + bytes): it also fails (EFAULT, reported) when
 *  any of it lies outside, and reads nothing outside that range however
 *  damaged the heap is, garbage in the control structure included. For a
 *  heap in shared memory or a memory image, which must have no grow
 *  function: one set (rtm_tlsf_set_grow) fails the check too (EFAULT). -1
 *  with errno EINVAL for a NULL t or mem or a range that wraps. */
RTM_API int rtm_tlsf_check_region(const rtm_tlsf *t, const void *mem, size_t bytes);

/** Calls walker(ptr, usable, used, arg) for every block of every pool, in
 *  address order within a pool. */
RTM_API void rtm_tlsf_walk(const rtm_tlsf *t,
                           void (*walker)(void *ptr, size_t usable, int used, void *arg),
                           void *arg);

/** Frees everything: each pool becomes one free block again and the counters
 *  restart. Time bounded by the number of pools plus the fixed size of the
 *  control structure, whatever the number of blocks. The blocks' old headers
 *  stay where they were: freeing a pointer from before the reset is not
 *  detected (undefined). */
RTM_API void rtm_tlsf_reset(rtm_tlsf *t);

/** Number of internal steps (list, bitmap and split/merge operations) the
 *  last alloc/free/realloc took. Counted only in builds with
 *  RTM_TLSF_COUNT_STEPS=1 (the determinism test); 0 otherwise. */
RTM_API size_t rtm_tlsf_last_steps(const rtm_tlsf *t);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_TLSF_H */
