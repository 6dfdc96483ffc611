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
 *    or above exists, or if the largest block of the request's own class is
 *    big enough (see docs/TLSF.md: what remains of the good-fit gap).
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
size_t rtm_tlsf_control_size(void);

/** Bytes a pool loses to its bookkeeping when the region is 8-aligned. */
size_t rtm_tlsf_pool_overhead(void);

/** The smallest region rtm_tlsf_create() accepts. */
size_t rtm_tlsf_min_region(void);

/** The smallest 8-aligned region on which a fresh heap can allocate one
 *  block of `usable` bytes (control structure included); 0 if no region can.
 *  Use it to size a heap for a known largest request. */
size_t rtm_tlsf_region_for(size_t usable);

/** Creates a heap over [mem, mem + bytes): control structure first, the
 *  rest becomes the first pool. Returns the heap (mem rounded up to 8) or
 *  NULL (errno EINVAL when hosted) if mem is NULL or bytes <
 *  rtm_tlsf_min_region(). Regions beyond RTM_TLSF_MAX_BLOCK are split into
 *  several pools. O(1) per 4 GiB. */
rtm_tlsf *rtm_tlsf_create(void *mem, size_t bytes);

/** Adds [mem, mem + bytes) as another pool. 0 on success, -1 (errno EINVAL)
 *  for a NULL argument, a region too small to hold one block, or (debug
 *  builds) a region overlapping an existing pool. */
int rtm_tlsf_add_pool(rtm_tlsf *t, void *mem, size_t bytes);

/** O(1). NULL (errno ENOMEM) when nothing fits or size > RTM_TLSF_MAX_BLOCK.
 *  Size 0 gives a unique minimum block. Hot path. */
void *rtm_tlsf_alloc(rtm_tlsf *t, size_t size);

/** O(1). alignment must be a power of two (else NULL, errno EINVAL). */
void *rtm_tlsf_aligned_alloc(rtm_tlsf *t, size_t alignment, size_t size);

/** In place when possible (O(1)), else allocate-copy-free; a block from
 *  rtm_tlsf_aligned_alloc() keeps at least its alignment when it moves.
 *  realloc(NULL, n) allocates; realloc(p, 0) frees and returns NULL. On
 *  failure NULL (errno ENOMEM) and p unchanged. */
void *rtm_tlsf_realloc(rtm_tlsf *t, void *ptr, size_t size);

/** O(1). Returns 0, or -1 (errno EINVAL) for a detected double free or (debug
 *  builds) a foreign pointer or overwritten header, which is also reported to
 *  the error handler; the heap is left untouched then. NULL returns 0. */
int rtm_tlsf_free(rtm_tlsf *t, void *ptr);

/** Usable bytes of a live block (0 for NULL). O(1). */
size_t rtm_tlsf_usable_size(const void *ptr);

/** Exact statistics. O(1). */
rtm_stats rtm_tlsf_stats(const rtm_tlsf *t);

/** Verifies every invariant: headers, neighbour links, no two adjacent free
 *  blocks, every free block in exactly its list, bitmaps equal to the lists,
 *  spans summing to each pool, counters equal to what the walk finds.
 *  Returns 0 when all hold, else -1 (errno EFAULT when hosted) after reporting
 *  the first broken invariant to the error handler. Never follows a link out
 *  of the pools. O(blocks x pools). */
int rtm_tlsf_check(const rtm_tlsf *t);

/** Calls walker(ptr, usable, used, arg) for every block of every pool, in
 *  address order within a pool. */
void rtm_tlsf_walk(const rtm_tlsf *t, void (*walker)(void *ptr, size_t usable, int used, void *arg),
                   void *arg);

/** Frees everything: each pool becomes one free block again and the counters
 *  restart. Time bounded by the number of pools plus the fixed size of the
 *  control structure, whatever the number of blocks. */
void rtm_tlsf_reset(rtm_tlsf *t);

/** Number of internal steps (list, bitmap and split/merge operations) the
 *  last alloc/free/realloc took. Counted only in builds with
 *  RTM_TLSF_COUNT_STEPS=1 (the determinism test); 0 otherwise. */
size_t rtm_tlsf_last_steps(const rtm_tlsf *t);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_TLSF_H */
