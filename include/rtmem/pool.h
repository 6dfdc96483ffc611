// SPDX-License-Identifier: MIT
/*
 * rtmem/pool.h -- the typed API of rtmem's fixed-size block pool (an RTOS
 * "partition", like Zephyr's k_mem_slab or RTEMS partitions), for users who
 * choose the algorithm at compile time. The generic API (rtmem.h, algorithm
 * "pool:<block size>") calls these.
 *
 * Guarantees:
 *  - alloc, free, aligned_alloc and realloc run in O(1): a list pop or push,
 *    one bitmap bit and one division (the block index). create and reset are
 *    O(1) too: blocks never handed out yet are taken in address order from a
 *    watermark, so nothing is formatted up front.
 *  - No per-block header: every block is `block` bytes (the requested size
 *    rounded up to RTM_ALIGN, at least sizeof(ptrdiff_t)) and blocks are laid
 *    back to back, so exactly floor(usable / block) blocks fit, where usable
 *    is what is left after the control structure and the bitmap:
 *
 *      mem (rounded up to 8)
 *      [ control | bitmap | block 0 | block 1 | ... | block count-1 | tail ]
 *        CTRL      BITMAP   <------- usable = bytes - lost - CTRL - BITMAP -->
 *
 *      lost   = mem rounded up to 8, minus mem (0..7)
 *      CTRL   = rtm_pool_control_size()
 *      n0     = floor((bytes - lost - CTRL) / block)   (an upper bound)
 *      BITMAP = 8 * ceil(n0 / 64)   (one bit per block, in 64-bit units)
 *      count  = floor(usable / block)
 *
 *  - Reuse is LIFO: free pushes the block on the free list and alloc pops the
 *    most recently freed block (cache-warm); when the list is empty, alloc
 *    takes the lowest never-used block.
 *  - free detects, in every build and in O(1), a pointer that is not a block
 *    start of this pool (outside it, interior, misaligned) and a double free
 *    (the bitmap holds one "free" bit per block).
 *  - All metadata lives inside the region; free-list links are offsets from
 *    the control structure, so the pool is position independent.
 *
 * Not thread-safe: callers serialise access to one pool.
 */
#ifndef RTMEM_POOL_H
#define RTMEM_POOL_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_pool rtm_pool; /* opaque; lives at the start of a region */

/** Bytes of header a block carries: none. */
#define RTM_POOL_HEADER_BYTES 0u
/** Block size the generic API uses for "pool" without a parameter. */
#define RTM_POOL_DEFAULT_BLOCK 64u
/** Largest block size accepted (keeps the region arithmetic from wrapping). */
#define RTM_POOL_MAX_BLOCK ((size_t)1 << (sizeof(size_t) * 8u - 4u))

/** Bytes of the control structure (placed at the start of the region). */
RTM_API size_t rtm_pool_control_size(void);

/** The block size (stride and usable size) a pool created with block_size
 *  uses: block_size rounded up to RTM_ALIGN, at least sizeof(ptrdiff_t); 0
 *  when block_size is 0 or above RTM_POOL_MAX_BLOCK. O(1). */
RTM_API size_t rtm_pool_block_size_for(size_t block_size);

/** The smallest region rtm_pool_create(mem, bytes, block_size) accepts at
 *  any start address (one block), or 0 for a bad block_size. O(1). */
RTM_API size_t rtm_pool_min_region(size_t block_size);

/** The smallest 8-aligned region holding `count` blocks of block_size
 *  bytes (control and bitmap included), or 0 when count is 0, block_size is
 *  bad or the size would not fit in a size_t. O(1) (at most a few rounds
 *  of the bitmap arithmetic). */
RTM_API size_t rtm_pool_region_for(size_t count, size_t block_size);

/** Creates a pool over [mem, mem + bytes) (arithmetic above). Returns the
 *  pool (mem rounded up to 8) or NULL (errno EINVAL when hosted, nothing
 *  written) when mem is NULL, block_size is 0 or above RTM_POOL_MAX_BLOCK,
 *  not one block fits, or mem + bytes wraps the address space. O(1). */
RTM_API rtm_pool *rtm_pool_create(void *mem, size_t bytes, size_t block_size);

/** A block of rtm_pool_usable_size() bytes, or NULL with errno ENOMEM (and
 *  failed_allocs counted) when size > the block size or no block is free.
 *  Size 0 gives a whole block. O(1). Hot path. */
RTM_API void *rtm_pool_alloc(rtm_pool *p, size_t size);

/** As rtm_pool_alloc() when `alignment` divides the alignment every block of
 *  this pool has (rtm_pool_block_alignment()). NULL with errno EINVAL when
 *  alignment is not a power of two, ENOTSUP (not counted as a failed alloc)
 *  when it is larger than the pool can ever give, ENOMEM as rtm_pool_alloc()
 *  otherwise. O(1). */
RTM_API void *rtm_pool_aligned_alloc(rtm_pool *p, size_t alignment, size_t size);

/** Blocks do not grow: returns ptr when size <= the block size (in place),
 *  else NULL with errno ENOMEM (counted) and ptr unchanged. realloc(NULL, n)
 *  allocates; realloc(p, 0) frees and returns NULL (errno untouched). A
 *  pointer free would refuse is refused the same way (NULL, EINVAL). O(1). */
RTM_API void *rtm_pool_realloc(rtm_pool *p, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL (pool left untouched) after reporting
 *  to the error handler: RTM_ERR_FOREIGN_POINTER for a pointer that is not a
 *  block start of this pool, RTM_ERR_DOUBLE_FREE for a block that is free.
 *  NULL returns 0. O(1), every build. Hot path. */
RTM_API int rtm_pool_free(rtm_pool *p, void *ptr);

/** The block size for a live block, 0 for NULL. A pointer that is not a
 *  live block start of this pool is refused as rtm_pool_free() refuses it
 *  (same checks and report) and gives 0 with errno EINVAL. O(1). */
RTM_API size_t rtm_pool_usable_size(const rtm_pool *p, const void *ptr);

/** The block size: what every block holds. O(1). */
RTM_API size_t rtm_pool_block(const rtm_pool *p);

/** The number of blocks of the pool. O(1). */
RTM_API size_t rtm_pool_block_count(const rtm_pool *p);

/** The largest power of two every block address is a multiple of (the
 *  first block's alignment, capped by the block stride's). O(1). */
RTM_API size_t rtm_pool_block_alignment(const rtm_pool *p);

/** Exact statistics: used_bytes = live blocks x block, free_bytes = free
 *  blocks x block, largest_free = block when one is free, else 0. O(1). */
RTM_API rtm_stats rtm_pool_stats(const rtm_pool *p);

/** Verifies every invariant: geometry inside the region, counters, each
 *  free-list link a block start below the watermark whose bitmap bit says
 *  free, the list exactly as long as the free count, the bitmap's free bits
 *  equal to the list. Returns 0, or -1 (errno EFAULT when hosted) after
 *  reporting the first broken invariant. Never follows a link out of the
 *  pool. O(blocks). */
RTM_API int rtm_pool_check(const rtm_pool *p);

/** Calls walker(ptr, block, used, arg) for every block, in address order.
 *  O(blocks). */
RTM_API void rtm_pool_walk(const rtm_pool *p,
                           void (*walker)(void *ptr, size_t usable, int used, void *arg),
                           void *arg);

/** Frees every block at once and restarts the counters. O(1). */
RTM_API void rtm_pool_reset(rtm_pool *p);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_POOL_H */
