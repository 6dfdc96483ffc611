// SPDX-License-Identifier: MIT
/*
 * shared/guarded.c -- the guarded heaps' lock and their kind of the generic
 * API: rtm_locked_create(), and every rtm_* call on a heap whose kind word
 * is RTM_KIND_GUARDED, through the descriptor at the end of this file, which
 * every function handing out a guarded handle registers with the core
 * (rtm_guarded_register): the core never names this layer.
 *
 * Each call is lock, operate, unlock. On a locked heap the operation is the
 * generic call on the inner heap (any algorithm); on a shared heap it goes
 * through pshared_ops.c (owner tags, intent record). The lock is the one
 * place where a dead holder is noticed: rtm_guard_lock() gets
 * RTM_OS_OWNER_DEAD, repairs (recovery.c), marks the mutex consistent, and
 * the caller's operation proceeds on a verified heap. If the repair fails,
 * the mutex is released without being marked consistent, so every later
 * call fails with ENOTRECOVERABLE instead of touching a broken heap.
 *
 * Lock order: one lock per heap, never two at once (the inner heap of a
 * guarded heap is never guarded). Walkers and error handlers run with the
 * lock held and must not call back into the heap.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "core/kind.h"
#include "os/shm.h"
#include "rtmem.h"
#include "shared/guarded.h"

/* ---------------------------------------------------------------------- */
/* The lock                                                                */
/* ---------------------------------------------------------------------- */

/* After EOWNERDEAD: this thread owns the mutex; repair, then declare it
 * consistent. The dead holder is whoever the guard names (written right
 * after each lock, cleared before each unlock: 0 when it died between the
 * lock and that store, and then nothing had been changed). */
static int take_over(rtm_guard *g, uint32_t me)
{
    uint32_t dead = g->holder;
    g->holder = me;
    if (rtm_pshared_recover(g, dead) != 0 || rtm_os_mutex_consistent(&g->mutex) != 0) {
        g->holder = 0;
        (void)rtm_os_mutex_unlock(&g->mutex); /* not consistent: unusable from now on */
        errno = ENOTRECOVERABLE;
        return -1;
    }
    return 0;
}

int rtm_guard_lock(rtm_guard *g)
{
    int rc = rtm_os_mutex_lock(&g->mutex);
    if (rc == 0) {
        if (guard_is_shared(g))
            g->holder = rtm_os_pid();
        return 0;
    }
    if (rc == RTM_OS_OWNER_DEAD && guard_is_shared(g))
        return take_over(g, rtm_os_pid());
    errno = rc;
    return -1;
}

void rtm_guard_unlock(rtm_guard *g)
{
    int saved = errno;
    g->holder = 0;
    atomic_signal_fence(memory_order_seq_cst); /* holder cleared before the release */
    (void)rtm_os_mutex_unlock(&g->mutex);
    errno = saved;
}

/* ---------------------------------------------------------------------- */
/* Creation                                                                */
/* ---------------------------------------------------------------------- */

static uintptr_t align_up(uintptr_t x, uintptr_t a) { return (x + a - 1u) & ~(a - 1u); }

size_t rtm_locked_min_region(const char *algorithm)
{
    size_t inner = rtm_min_region(algorithm); /* EINVAL for unknown names */
    if (inner == 0)
        return 0;
    return GUARD_ALIGN - 1u + GUARD_BYTES + inner;
}

rtm_heap *rtm_locked_create(const char *algorithm, void *mem, size_t bytes)
{
    size_t min = algorithm != NULL ? rtm_locked_min_region(algorithm) : 0;
    /* A size wrapping the address space is refused before the guard is
     * written (the inner create would refuse it only after). */
    if (mem == NULL || min == 0 || bytes < min || bytes > UINTPTR_MAX - (uintptr_t)mem) {
        errno = EINVAL;
        return NULL;
    }
    if (rtm_guarded_register() != 0)
        return NULL;
    rtm_guard *g = (rtm_guard *)align_up((uintptr_t)mem, GUARD_ALIGN);
    size_t lead = (size_t)((uintptr_t)g - (uintptr_t)mem);
    memset(g, 0, sizeof *g);
    rtm_heap *inner =
        rtm_heap_create(algorithm, (char *)g + GUARD_BYTES, bytes - lead - GUARD_BYTES);
    if (inner == NULL)
        return NULL; /* errno from rtm_heap_create */
    int rc = rtm_os_mutex_init(&g->mutex, 0u);
    if (rc != 0) {
        rtm_heap_destroy(inner);
        errno = rc;
        return NULL;
    }
    const char *name = rtm_heap_algorithm(inner);
    strncpy(g->algorithm, name, sizeof g->algorithm - 1u);
    g->magic = GUARD_MAGIC;
    g->version = GUARD_VERSION;
    g->abi = GUARD_ABI;
    g->bytes = bytes - lead;
    g->inner = (int64_t)((char *)inner - (char *)g);
    g->overhead = lead + GUARD_BYTES;
    g->ready = GUARD_READY;
    g->kind = RTM_KIND_GUARDED; /* last: only now may the generic API use it */
    return (rtm_heap *)(void *)g;
}

static void guarded_destroy(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (guard_is_shared(g)) {
        rtm_shared_close(h);
        return;
    }
    (void)rtm_os_mutex_destroy(&g->mutex);
    rtm_heap_destroy(guard_inner(g));
    g->kind = 0; /* later calls on the handle fail with EINVAL */
}

/* ---------------------------------------------------------------------- */
/* The generic API, locked                                                 */
/* ---------------------------------------------------------------------- */

static void *guarded_alloc(rtm_heap *h, size_t size)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return NULL;
    void *p = guard_is_shared(g) ? rtm_pshared_alloc(g, RTM_ALIGN, size)
                                 : rtm_alloc(guard_inner(g), size);
    rtm_guard_unlock(g);
    return p;
}

static void *guarded_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return NULL;
    void *p = guard_is_shared(g) ? rtm_pshared_alloc(g, alignment, size)
                                 : rtm_aligned_alloc(guard_inner(g), alignment, size);
    rtm_guard_unlock(g);
    return p;
}

static void *guarded_realloc(rtm_heap *h, void *ptr, size_t size)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return NULL;
    void *p = guard_is_shared(g) ? rtm_pshared_realloc(g, ptr, size)
                                 : rtm_realloc(guard_inner(g), ptr, size);
    rtm_guard_unlock(g);
    return p;
}

static void guarded_free(rtm_heap *h, void *ptr)
{
    rtm_guard *g = as_guard(h);
    if (ptr == NULL || rtm_guard_lock(g) != 0)
        return;
    if (guard_is_shared(g))
        (void)rtm_pshared_free(g, ptr);
    else
        rtm_free(guard_inner(g), ptr);
    rtm_guard_unlock(g);
}

static size_t guarded_usable_size(rtm_heap *h, const void *ptr)
{
    rtm_guard *g = as_guard(h);
    if (ptr == NULL || rtm_guard_lock(g) != 0)
        return 0;
    size_t n =
        guard_is_shared(g) ? rtm_pshared_usable(g, ptr) : rtm_usable_size(guard_inner(g), ptr);
    rtm_guard_unlock(g);
    return n;
}

static rtm_stats guarded_stats(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    rtm_stats st = {0, 0, 0, 0, 0, 0, 0};
    if (rtm_guard_lock(g) != 0)
        return st;
    if (guard_is_shared(g)) {
        st = rtm_pshared_stats(g);
    } else {
        st = rtm_heap_stats(guard_inner(g));
        st.arena_bytes += (size_t)g->overhead; /* the guard is part of the region */
    }
    rtm_guard_unlock(g);
    return st;
}

static int guarded_check(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return -1;
    int rc = guard_is_shared(g) ? rtm_pshared_check(g) : rtm_heap_check(guard_inner(g));
    rtm_guard_unlock(g);
    return rc;
}

/* The name lives in the guard (copied at creation), so it stays valid
 * after the lock is released, in every process. */
static const char *guarded_algorithm(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return NULL;
    rtm_guard_unlock(g);
    return g->algorithm;
}

static int guarded_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return -1;
    int rc = guard_is_shared(g) ? rtm_pshared_walk(g, walker, arg)
                                : rtm_heap_walk(guard_inner(g), walker, arg);
    rtm_guard_unlock(g);
    return rc;
}

static int guarded_reset(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (rtm_guard_lock(g) != 0)
        return -1;
    int rc = guard_is_shared(g) ? rtm_pshared_reset(g) : rtm_heap_reset(guard_inner(g));
    rtm_guard_unlock(g);
    return rc;
}

/* A shared heap is its segment: memory of one process cannot join it. */
static int guarded_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    rtm_guard *g = as_guard(h);
    if (mem == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (guard_is_shared(g)) {
        errno = ENOTSUP;
        return -1;
    }
    /* The inner heap refuses overlap with itself, but not with the guard in
     * front of it, which it does not know: a pool over the guard would be
     * handed out and the next lock would read user data as the mutex. */
    uintptr_t start = (uintptr_t)mem, guard = (uintptr_t)g;
    uintptr_t inner = (uintptr_t)guard_inner(g);
    if (start < inner && (start >= guard || bytes > guard - start)) {
        errno = EINVAL;
        return -1;
    }
    if (rtm_guard_lock(g) != 0)
        return -1;
    int rc = rtm_heap_add_pool(guard_inner(g), mem, bytes);
    rtm_guard_unlock(g);
    return rc;
}

/* A locked heap forwards it to its inner heap (ENOTSUP unless TLSF); grow
 * then runs with the lock held. A shared heap refuses it: the function
 * pointer would sit in the segment, where another process would call it. */
static int guarded_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx)
{
    rtm_guard *g = as_guard(h);
    if (guard_is_shared(g)) {
        errno = ENOTSUP;
        return -1;
    }
    if (rtm_guard_lock(g) != 0)
        return -1;
    int rc = rtm_heap_set_grow(guard_inner(g), grow, ctx);
    rtm_guard_unlock(g);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* The descriptor                                                          */
/* ---------------------------------------------------------------------- */

/* Not created by name (rtm_locked_create, rtm_shared_create), so no
 * min_region or create; destroy unlocks nothing and detaches a shared heap. */
static const rtm_heap_kind guarded_kind = {
    .kind = RTM_KIND_GUARDED,
    .alloc = guarded_alloc,
    .free = guarded_free,
    .aligned_alloc = guarded_aligned_alloc,
    .realloc = guarded_realloc,
    .usable_size = guarded_usable_size,
    .stats = guarded_stats,
    .check = guarded_check,
    .walk = guarded_walk,
    .reset = guarded_reset,
    .add_pool = guarded_add_pool,
    .set_grow = guarded_set_grow,
    .destroy = guarded_destroy,
    .algorithm = guarded_algorithm,
};

int rtm_guarded_register(void)
{
    if (rtm_kind_register(&guarded_kind) == 0)
        return 0;
    errno = ENOSPC; /* its slot taken by another kind: never with rtmem's own */
    return -1;
}
