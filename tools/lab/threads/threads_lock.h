// SPDX-License-Identifier: MIT
/*
 * threads_lock.h -- the "rtm heap behind a lock" that `bench threads`
 * measures as allocator "locked:<heap name>": one rtm heap shared by every
 * thread, each call serialised by a priority-inheritance mutex.
 *
 * When the build has include/rtmem/lock.h (rtm_locked_create(), the locked
 * heap of the library), that is what is measured: the heap users get. A
 * build without it measures a local stand-in of the same shape (a
 * PTHREAD_PRIO_INHERIT mutex around rtm_alloc/rtm_free) and says so in the
 * report (tr_locked_impl()), so a figure is never credited to the wrong code.
 */
#ifndef RTM_LAB_THREADS_LOCK_H
#define RTM_LAB_THREADS_LOCK_H

#include <stddef.h>

#include "rtmem.h"

typedef struct tr_heap tr_heap;

/* Creates the locked heap of algorithm (an rtm heap name) over
 * [mem, mem + bytes). Returns NULL with why filled on failure. */
tr_heap *tr_locked_create(const char *algorithm, void *mem, size_t bytes, char *why, size_t why_n);
void *tr_locked_alloc(tr_heap *h, size_t size);
void tr_locked_free(tr_heap *h, void *p);
/* The heap check and statistics, under the lock. */
int tr_locked_check(tr_heap *h);
rtm_stats tr_locked_stats(tr_heap *h);
void tr_locked_destroy(tr_heap *h);
/* One line: which implementation this build measures. */
const char *tr_locked_impl(void);

#endif /* RTM_LAB_THREADS_LOCK_H */
