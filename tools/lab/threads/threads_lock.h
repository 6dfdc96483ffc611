// SPDX-License-Identifier: MIT
/*
 * threads_lock.h -- the rtm heaps that `bench threads` shares between its
 * threads in the child process:
 *   "locked:<heap>"  one rtm heap behind a priority-inheritance mutex
 *                    (rtm_locked_create(), include/rtmem/lock.h);
 *   "mt:<algorithm>" the multi-threaded heap of per-thread shards
 *                    (rtm_mt_create(), include/rtmem/mt.h), one shard per
 *                    thread of the run: each measured thread attaches at its
 *                    start (tr_heap_enter) and detaches at its end
 *                    (tr_heap_leave); a thread that cannot attach is served
 *                    by the heap's fallback shard behind its lock, and the
 *                    child reports how many did (result field "unattached").
 * Both are ordinary rtm_heap handles: the calls below are the generic ones.
 */
#ifndef RTM_LAB_THREADS_LOCK_H
#define RTM_LAB_THREADS_LOCK_H

#include <stddef.h>

#include "common/aut.h"
#include "rtmem.h"

typedef struct tr_heap tr_heap;

/* Creates the shared heap a names (AUT_LOCKED or AUT_MT) over
 * [mem, mem + bytes); an mt heap gets `threads` shards. Returns NULL with
 * why filled on failure. */
tr_heap *tr_heap_create(const aut *a, unsigned threads, void *mem, size_t bytes, char *why,
                        size_t why_n);
/* The region an mt heap of `threads` shards needs so that each shard holds
 * shard_bytes (rtm_mt_region_size); for a locked heap, shard_bytes * threads.
 * 0 on overflow or a refused name. */
size_t tr_heap_region(const aut *a, unsigned threads, size_t shard_bytes);

static inline void *tr_heap_alloc(tr_heap *h, size_t size)
{
    return rtm_alloc((rtm_heap *)h, size);
}
static inline void tr_heap_free(tr_heap *h, void *p) { rtm_free((rtm_heap *)h, p); }

/* At a measured thread's start: attaches it to a shard of an mt heap.
 * Returns 1 when the thread is served as the heap promises its threads
 * (attached, or any thread of a locked heap), 0 when an mt heap refused the
 * attach and the fallback serves it. At the thread's end, tr_heap_leave. */
int tr_heap_enter(tr_heap *h, int mt);
void tr_heap_leave(tr_heap *h, int mt);

/* The heap check and statistics (each heap stops its threads as it must). */
int tr_heap_check(tr_heap *h);
rtm_stats tr_heap_stats(tr_heap *h);
void tr_heap_destroy(tr_heap *h);
/* One line: which implementation the locked and mt rows measure. */
const char *tr_locked_impl(void);
const char *tr_mt_impl(void);

#endif /* RTM_LAB_THREADS_LOCK_H */
