// SPDX-License-Identifier: MIT
/*
 * threads_lock.c -- the locked rtm heap measured by `bench threads`
 * (threads_lock.h): the library's rtm_locked_create() when the build has
 * include/rtmem/lock.h, else a local stand-in of the same shape.
 *
 * The choice is made at compile time with __has_include, so the lab builds
 * whether or not the locked heap has landed yet, and switches to the real
 * one by itself when it does; tr_locked_impl() names the one compiled in,
 * and the report prints it beside every locked row.
 *
 * The stand-in: a PTHREAD_PRIO_INHERIT mutex (what lock.h promises) held
 * around each generic call. Its control block (mutex + handle) lives in a
 * static array, outside the heap's region, because the region belongs to
 * the heap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "threads/threads_lock.h"

#if defined(__has_include)
#if __has_include(<rtmem/lock.h>)
#include <rtmem/lock.h>
#define HAVE_RTM_LOCKED 1
#endif
#endif
#ifndef HAVE_RTM_LOCKED
#define HAVE_RTM_LOCKED 0
#endif

#if HAVE_RTM_LOCKED

/* tr_heap is the library's locked heap itself: its generic calls lock. */
tr_heap *tr_locked_create(const char *algorithm, void *mem, size_t bytes, char *why, size_t why_n)
{
    rtm_heap *h = rtm_locked_create(algorithm, mem, bytes);
    if (h == NULL)
        snprintf(why, why_n, "rtm_locked_create(\"%s\", %zu bytes) failed: %s", algorithm, bytes,
                 strerror(errno));
    return (tr_heap *)h;
}

void *tr_locked_alloc(tr_heap *h, size_t size) { return rtm_alloc((rtm_heap *)h, size); }
void tr_locked_free(tr_heap *h, void *p) { rtm_free((rtm_heap *)h, p); }
int tr_locked_check(tr_heap *h) { return rtm_heap_check((rtm_heap *)h); }
rtm_stats tr_locked_stats(tr_heap *h) { return rtm_heap_stats((rtm_heap *)h); }
void tr_locked_destroy(tr_heap *h) { rtm_heap_destroy((rtm_heap *)h); }

const char *tr_locked_impl(void)
{
    return "rtm_locked_create() from include/rtmem/lock.h (the library's locked heap)";
}

#else /* the stand-in */

struct tr_heap {
    pthread_mutex_t lock;
    rtm_heap *heap;
};

static struct tr_heap standin; /* one locked heap per child process */

tr_heap *tr_locked_create(const char *algorithm, void *mem, size_t bytes, char *why, size_t why_n)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    int err = pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
    if (err == 0)
        err = pthread_mutex_init(&standin.lock, &a);
    pthread_mutexattr_destroy(&a);
    if (err != 0) {
        snprintf(why, why_n, "priority-inheritance mutex: %s", strerror(err));
        return NULL;
    }
    standin.heap = rtm_heap_create(algorithm, mem, bytes);
    if (standin.heap == NULL) {
        snprintf(why, why_n, "rtm_heap_create(\"%s\", %zu bytes) failed: %s", algorithm, bytes,
                 strerror(errno));
        pthread_mutex_destroy(&standin.lock);
        return NULL;
    }
    return &standin;
}

void *tr_locked_alloc(tr_heap *h, size_t size)
{
    pthread_mutex_lock(&h->lock);
    void *p = rtm_alloc(h->heap, size);
    pthread_mutex_unlock(&h->lock);
    return p;
}

void tr_locked_free(tr_heap *h, void *p)
{
    pthread_mutex_lock(&h->lock);
    rtm_free(h->heap, p);
    pthread_mutex_unlock(&h->lock);
}

int tr_locked_check(tr_heap *h)
{
    pthread_mutex_lock(&h->lock);
    int rc = rtm_heap_check(h->heap);
    pthread_mutex_unlock(&h->lock);
    return rc;
}

rtm_stats tr_locked_stats(tr_heap *h)
{
    pthread_mutex_lock(&h->lock);
    rtm_stats s = rtm_heap_stats(h->heap);
    pthread_mutex_unlock(&h->lock);
    return s;
}

void tr_locked_destroy(tr_heap *h)
{
    rtm_heap_destroy(h->heap);
    pthread_mutex_destroy(&h->lock);
}

const char *tr_locked_impl(void)
{
    return "local stand-in (include/rtmem/lock.h absent from this build): a "
           "PTHREAD_PRIO_INHERIT mutex around rtm_alloc/rtm_free";
}

#endif
