// SPDX-License-Identifier: MIT
/*
 * rtmem/mt.h -- the multi-threaded heap: one region split into per-thread
 * shards, each an rtm heap of a named algorithm, so that threads share one
 * heap without sharing a lock, and every call keeps a bound.
 *
 *   mem (rounded up to 64)
 *   +---------+----------+----------+-----+-------------+
 *   | control | shard 0  | shard 1  | ... | fallback    |
 *   |         | (thread) | (thread) |     | (PI locked) |
 *   +---------+----------+----------+-----+-------------+
 *
 * A thread attaches to a shard (rtm_mt_attach) and from then on:
 *  - Its own calls take no lock and make no system call: rtm_alloc,
 *    rtm_aligned_alloc, rtm_realloc and the rtm_free of a block of its own
 *    shard run on that shard's heap only, with plain loads and stores and
 *    two sequentially consistent accesses to the shard's "in a call" flag
 *    (which is how rtm_heap_check and friends know when they may look; see
 *    below).
 *  - A free of another shard's block is wait-free: a fixed number of
 *    instructions and atomic operations (one compare-and-swap on the
 *    block's check word, one atomic add to the owner's pending counter,
 *    one atomic exchange onto the owner's inbox), no retry loop, no lock,
 *    no wait for the owner. The block waits in the owner's inbox. (Where
 *    the processor has no atomic add or exchange instruction, as on 32-bit
 *    Arm, the compiler makes them load-linked/store-conditional loops:
 *    lock-free there, not wait-free.)
 *  - The owner takes blocks back from its inbox at most RTM_MT_BATCH at a
 *    time, inside its own alloc, aligned alloc, realloc and free: each of
 *    those calls costs at most its shard heap's own call plus
 *    RTM_MT_BATCH shard frees plus a fixed overhead. A request its shard
 *    would refuse first takes back everything pending, then retries: that
 *    call costs one shard free per pending block (at most the shard's
 *    capacity in minimum blocks), and is the one unbounded-by-K call,
 *    taken only on the way to ENOMEM.
 * A thread that holds no shard is served by the fallback shard behind a
 * priority-inheritance mutex (as rtm_locked_create's heaps are): correct
 * from any thread, bounded by the lock's hand-over, not lock-free. Blocks
 * of the fallback are freed into its inbox by every thread (wait-free), and
 * taken back by its next calls.
 *
 * Memory: the region is split into shards + 1 equal parts (the last is the
 * fallback), each at most 4 GiB (beyond, the rest of the region is unused). A shard's free memory
 * serves only the thread attached to it (and the fallback only unattached threads): what one shard
 * holds free, another cannot use, and a thread whose shard is full gets ENOMEM even if other shards
 * have room. Every block carries an 8-byte check word in front of it (16 bytes and more for
 * alignments above 8: the alignment). Size a heap with rtm_mt_region_size(): give it what one shard
 * must hold as an rtm heap of the algorithm (for half-fit, rtm_halffit_arena_size() of the live
 * bytes plus 8 per block).
 *
 * The check word (8 bytes below each block) holds the block's usable size,
 * the size of its prefix and its state (live, pending in an inbox, freed),
 * sealed with a key of its address and a per-heap salt: every free and
 * usable-size query validates it, so a double free (also from two threads
 * at once: the compare-and-swap lets one win), a foreign, interior or stale
 * pointer is reported to the error handler and refused, never followed.
 * A pointer freed twice after its shard took it back reads as a damaged
 * word (RTM_ERR_CORRUPT_HEADER), not as a double free.
 *
 * Calls that look at every shard: rtm_heap_stats, rtm_heap_check,
 * rtm_heap_walk and rtm_heap_reset pause each shard in turn (they wait
 * until its owner is outside a call; an owner that enters meanwhile waits
 * on the shard's priority-inheritance mutex, lending its priority). They
 * are not real-time: stats pauses each shard for one O(1) call of its heap
 * (TLSF), check and walk for O(blocks) each.
 *
 * Statistics: used_bytes and live_blocks are exact: a block freed remotely
 * counts as free from the moment its free returns, before its owner takes
 * it back. free_bytes counts pending blocks as free (their usable size).
 * largest_free is the largest block some shard could hand out now.
 * peak_used_bytes is the sum of each shard's own peak: it bounds the whole
 * heap's peak from above and equals it with one shard in use (an exact
 * global peak needs a counter written by every thread on every call, the
 * shared cache line this heap exists to avoid).
 *
 * Names in the lab and the C++ layer: "mt:<algorithm>" (e.g. "mt:tlsf"),
 * docs/MT.md. Not for firmware: it needs threads (pthreads, TLS, atomics).
 */
#ifndef RTMEM_MT_H
#define RTMEM_MT_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_heap rtm_heap; /* the same opaque handle as rtmem.h's */

/** How many remote frees an owner takes back inside one of its calls. */
#define RTM_MT_BATCH 4u

/** How many mt heaps one thread may be attached to at once. */
#define RTM_MT_THREAD_HEAPS 4u

/** Bytes each block carries in front of it (the check word). */
#define RTM_MT_BLOCK_OVERHEAD 8u

/** Creates a multi-threaded heap over [mem, mem + bytes): `shards` shards
 *  for attached threads and one fallback shard, each a heap of `algorithm`
 *  ("tlsf", "tlsf_cached", "halffit", "heapmem", "buddy", "slab",
 *  "xvmalloc": every algorithm of rtm_algorithms() that serves mixed sizes;
 *  "pool" is refused) over an equal part of the region. Returns a handle
 *  for every generic call of rtmem.h from any thread, or NULL with errno
 *  EINVAL (NULL name or region, 0 shards, an unknown or refused algorithm,
 *  a region smaller than rtm_mt_min_region(), mem + bytes wrapping the
 *  address space: nothing written then) or the mutex's error (ENOTSUP: no
 *  PI futexes). rtm_heap_add_pool and rtm_heap_set_grow: ENOTSUP.
 *  rtm_heap_destroy and rtm_heap_reset need every other thread to be out
 *  of the heap. O(shards) plus the shards' creates. Not real-time. */
RTM_API rtm_heap *rtm_mt_create(const char *algorithm, void *mem, size_t bytes, unsigned shards);

/** The smallest region rtm_mt_create(algorithm, ..., shards) accepts at any
 *  start address, or 0 with errno EINVAL (unknown or refused algorithm, 0
 *  shards, overflow). O(1). */
RTM_API size_t rtm_mt_min_region(const char *algorithm, unsigned shards);

/** The region that gives each of `shards` shards, and the fallback, a heap
 *  of `algorithm` over at least shard_bytes bytes (shard_bytes below
 *  rtm_min_region(algorithm) counts as that minimum). 0 with errno EINVAL
 *  as rtm_mt_min_region, or on overflow. O(1). */
RTM_API size_t rtm_mt_region_size(const char *algorithm, unsigned shards, size_t shard_bytes);

/** Binds the calling thread to a free shard of h and returns the shard's
 *  index (0 .. shards - 1); a thread already attached to h gets its index
 *  again. -1 with errno EBUSY when every shard is held, EINVAL when h is no
 *  mt heap, ENOSPC when the thread is attached to RTM_MT_THREAD_HEAPS mt
 *  heaps already. A shard keeps its blocks across owners: the next thread
 *  to attach carries on with them. A thread that exits attached is
 *  detached then. O(shards). Not real-time (the first attach of a thread
 *  registers its exit hook). */
RTM_API int rtm_mt_attach(rtm_heap *h);

/** Releases the calling thread's shard of h (its blocks stay live and may
 *  be freed from any thread). 0, or -1 with errno EINVAL when h is no mt
 *  heap or the thread holds none of its shards. O(1). */
RTM_API int rtm_mt_detach(rtm_heap *h);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_MT_H */
