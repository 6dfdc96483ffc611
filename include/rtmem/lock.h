// SPDX-License-Identifier: MIT
/*
 * rtmem/lock.h -- locked heaps: any rtmem algorithm made thread-safe by a
 * priority-inheritance mutex.
 *
 * Why a locked *variant* and not rtm_heap_set_lock(h, lock_fn, unlock_fn):
 *  - no function pointer goes into the region (the rule of rtmem.h: a
 *    region may be mapped by another process, where a pointer into this
 *    process's code means nothing), and the same control structure becomes
 *    the process-shared heap (rtmem/shared.h) by adding flags, not code;
 *  - the lock is chosen for real-time use once, here: PTHREAD_PRIO_INHERIT,
 *    so a high-priority thread waiting for the heap lends its priority to
 *    the holder (no unbounded priority inversion). A user-supplied lock
 *    would make that property the user's problem;
 *  - the unlocked heaps keep their hot paths: rtm_alloc on a TLSF heap
 *    stays one compare and a tail call; a locked heap is another kind word
 *    that the generic API dispatches out of line.
 *
 *   mem (rounded up to 8)
 *   +---------------------------------+-------------------------------------+
 *   | guard: kind word "GRD1", flags, | inner heap of `algorithm`           |
 *   | mutex (PI), offset of the inner | (its own control, then its blocks)  |
 *   +---------------------------------+-------------------------------------+
 *
 * Cost: an uncontended lock and unlock are two atomic instructions in user
 * space; contention enters the kernel (futex PI), which bounds the wait by
 * the holder's critical section, itself O(1) for TLSF.
 */
#ifndef RTMEM_LOCK_H
#define RTMEM_LOCK_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_heap rtm_heap; /* the same opaque handle as rtmem.h's */

/** Creates a heap of `algorithm` (any name rtm_heap_create() accepts) over
 *  [mem, mem + bytes) whose every generic call (rtm_alloc, rtm_free,
 *  rtm_realloc, rtm_aligned_alloc, rtm_usable_size, rtm_heap_stats,
 *  rtm_heap_check, rtm_heap_walk, rtm_heap_reset, rtm_heap_add_pool,
 *  rtm_heap_algorithm) takes a priority-inheritance mutex, so any number of
 *  threads of this process may share it. The lock's control lives at the
 *  start of the region, the inner heap after it. rtm_heap_algorithm()
 *  returns the inner algorithm's name. Destroy with rtm_heap_destroy()
 *  (no thread may be using the heap then). Returns the handle, or NULL with
 *  errno EINVAL (NULL name or region, unknown name, region smaller than
 *  rtm_locked_min_region(), mem + bytes wrapping the address space: nothing
 *  written) or the mutex's error (ENOTSUP: no PI futexes).
 *  O(1) plus the inner create. A walker or error handler runs with the lock
 *  held and must not call back into the same heap (it would deadlock). */
RTM_API rtm_heap *rtm_locked_create(const char *algorithm, void *mem, size_t bytes);

/** The smallest region rtm_locked_create(algorithm, ...) accepts at any
 *  start address, or 0 with errno EINVAL for an unknown name. O(1). */
RTM_API size_t rtm_locked_min_region(const char *algorithm);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_LOCK_H */
