// SPDX-License-Identifier: MIT
/*
 * rtmem.h -- the generic heap API of rtmem, and the umbrella header.
 *
 * rtmem manages memory regions that the caller hands over. Every heap keeps
 * all of its metadata inside those regions (no hidden malloc), and every
 * metadata link is an offset, not an absolute pointer, so one heap can later
 * be mapped at different addresses in several processes.
 *
 * The generic API picks an algorithm by name at run time and dispatches to
 * that algorithm's typed API (rtmem/tlsf.h, ...) through a switch on an id
 * stored in the heap header: no function pointer lives inside the region,
 * because a function pointer is not valid in another process.
 *
 * Contracts common to every function below:
 *  - Errors: functions returning a pointer return NULL and set errno;
 *    functions returning int return -1 and set errno. EINVAL: bad argument
 *    (NULL heap or region, unknown algorithm, alignment not a power of two,
 *    region smaller than rtm_min_region()); ENOMEM: no block fits; ENOTSUP:
 *    the algorithm cannot do the operation.
 *  - Thread safety: a heap is not thread-safe; callers serialise access to
 *    one heap. Different heaps are independent. Exceptions: the locked heaps
 *    (rtmem/lock.h) and the process-shared heaps (rtmem/shared.h), whose
 *    every call below takes the heap's priority-inheritance mutex, and the
 *    multi-threaded heap (rtmem/mt.h), whose threads each own a shard.
 *  - The library never prints and never aborts on user input in a release
 *    build; misuse it can detect (double free, foreign pointer, overwritten
 *    header) goes to the error handler set with rtm_set_error_handler().
 */
#ifndef RTMEM_H
#define RTMEM_H

#include <stddef.h>

#include "rtmem/common.h"
#include "rtmem/buddy.h"
#include "rtmem/halffit.h"
#include "rtmem/heapmem.h"
#include "rtmem/lock.h"
#include "rtmem/mt.h"
#include "rtmem/pool.h"
#include "rtmem/shared.h"
#include "rtmem/slab.h"
#include "rtmem/tlsf.h"
#include "rtmem/version.h"
#include "rtmem/zsmalloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An opaque heap handle; it points at the start of the first region. */
typedef struct rtm_heap rtm_heap;

/** Returns the NULL-terminated list of algorithm names rtm_heap_create()
 *  accepts. The list is static; never NULL. O(1), thread-safe. */
RTM_API const char *const *rtm_algorithms(void);

/** The smallest region (bytes) rtm_heap_create(algorithm, ...) accepts, or 0
 *  with errno EINVAL for an unknown algorithm. O(1), thread-safe. */
RTM_API size_t rtm_min_region(const char *algorithm);

/** Creates a heap of the named algorithm over [mem, mem + bytes); the
 *  control structure is placed at the start of mem. Returns the handle (equal
 *  to mem rounded up to the heap's alignment) or NULL with errno EINVAL (NULL
 *  name or region, unknown name, region too small, mem + bytes wrapping the
 *  address space; nothing is written then). O(1) for TLSF. */
RTM_API rtm_heap *rtm_heap_create(const char *algorithm, void *mem, size_t bytes);

/** Adds another region to the heap. Returns 0, or -1 with errno EINVAL (NULL
 *  heap or region, region too small, region overlapping a pool) or ENOTSUP.
 *  O(1) for TLSF (O(pools) in debug builds, which check overlap). */
RTM_API int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes);

/** A grow function (rtm_heap_set_grow): returns memory of at least
 *  min_bytes bytes and stores its size in *got_bytes, or returns NULL. The
 *  memory then belongs to the heap until the caller takes it back after
 *  rtm_heap_destroy() (the heap never gives it back: growth is one-way). */
typedef void *(*rtm_grow_fn)(void *ctx, size_t min_bytes, size_t *got_bytes);

/** Lets the heap grow on demand: when no free block fits a request
 *  (rtm_alloc, rtm_aligned_alloc, a moving rtm_realloc), the heap calls
 *  grow(ctx, min_bytes, &got) once, adds the memory and retries.
 *  min_bytes = the block the request needs + a new pool's bookkeeping and 8
 *  bytes of alignment slack (TLSF: the block's span, request + 4 rounded up
 *  to 8 and at least 24, + 32; see rtm_tlsf_set_grow for aligned requests),
 *  so that memory at any address holds the block. Memory that starts
 *  exactly where one of the heap's pools ends extends that pool (one free
 *  block, merged with the pool's last block if that is free); other memory
 *  becomes a new pool, with rtm_heap_add_pool()'s checks. The request fails
 *  with ENOMEM (counted in failed_allocs) if grow returns NULL, reports
 *  got < min_bytes, or returns memory that rtm_heap_add_pool() would refuse
 *  (overlapping the heap, wrapping the address space): such memory is not
 *  used and stays the grow function's. grow == NULL turns growing off.
 *  Grown pools are pools like any other: rtm_heap_check and rtm_heap_walk see
 *  them, the stats count them (arena_bytes += got), rtm_heap_reset keeps
 *  them (as free pools). grow runs inside the allocation call (on a locked
 *  heap, with the lock held): it must not call into the same heap. The
 *  function pointer is kept in the heap's control structure, so it is valid
 *  in this process only. Returns 0, or -1 with errno EINVAL (NULL heap) or
 *  ENOTSUP (every algorithm but TLSF, locked heaps over them, and
 *  process-shared heaps, where a pointer into one process's code would be
 *  called by another). O(1); the grow call is on the refusal path only and
 *  costs what grow costs plus O(pools). */
RTM_API int rtm_heap_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx);

/** Forgets the heap. The regions belong to the caller again; no memory is
 *  released because none was acquired. NULL is ignored. O(1). */
RTM_API void rtm_heap_destroy(rtm_heap *h);

/** Returns a block of at least size bytes aligned to RTM_ALIGN, or NULL with
 *  errno ENOMEM (nothing fits, or size beyond the algorithm's maximum) or
 *  EINVAL (NULL heap). rtm_alloc(h, 0) returns a unique minimum-size block.
 *  Bounded time: O(1) for TLSF. */
RTM_API void *rtm_alloc(rtm_heap *h, size_t size);

/** As rtm_alloc(), aligned to alignment (any power of two). EINVAL when the
 *  alignment is not a power of two. O(1) for TLSF. */
RTM_API void *rtm_aligned_alloc(rtm_heap *h, size_t alignment, size_t size);

/** Resizes a block, in place when possible (growing into a free neighbour or
 *  shrinking), else by allocate-copy-free, keeping the alignment the block was
 *  allocated with. rtm_realloc(h, NULL, n) is rtm_alloc(h, n);
 *  rtm_realloc(h, p, 0) frees p and returns NULL (errno untouched). On
 *  failure returns NULL with errno ENOMEM and p stays valid and unchanged.
 *  O(1) in place; O(size) when the data is copied. */
RTM_API void *rtm_realloc(rtm_heap *h, void *ptr, size_t size);

/** Frees a block. NULL is ignored. A pointer that is not a live block of this
 *  heap (when detected) is reported to the error handler and otherwise
 *  ignored, with errno EINVAL. O(1) for TLSF. */
RTM_API void rtm_free(rtm_heap *h, void *ptr);

/** The usable size of a live block (>= the size requested), or 0 for NULL.
 *  A pointer that is not a live block of this heap (when detected, as for
 *  rtm_free) is reported to the error handler and gives 0 with errno
 *  EINVAL. O(1). */
RTM_API size_t rtm_usable_size(rtm_heap *h, const void *ptr);

/** The heap's statistics; all zero with errno EINVAL for a NULL heap. O(1)
 *  for TLSF. */
RTM_API rtm_stats rtm_heap_stats(rtm_heap *h);

/** Verifies every invariant of the heap (works in release builds). Returns 0
 *  when all hold, -1 with errno EINVAL for a NULL heap and EFAULT (reported
 *  to the error handler with what failed) for a corrupted heap. O(heap). */
RTM_API int rtm_heap_check(rtm_heap *h);

/** The name of the algorithm the heap was created with (base name, without
 *  parameters), or NULL with errno EINVAL. O(1). */
RTM_API const char *rtm_heap_algorithm(rtm_heap *h);

/** Visitor for rtm_heap_walk(): called once per block in address order. */
typedef void (*rtm_walker)(void *ptr, size_t usable, int used, void *arg);

/** Visits every block of every pool. Returns 0, or -1 with errno EINVAL or
 *  ENOTSUP. O(blocks). */
RTM_API int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg);

/** Frees every block at once and returns each pool to one free block.
 *  Time is bounded by the number of pools and the size of the control
 *  structure, not by the number of blocks. Peak and failure counters are
 *  reset too. Returns 0, or -1 with errno EINVAL or ENOTSUP. */
RTM_API int rtm_heap_reset(rtm_heap *h);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_H */
