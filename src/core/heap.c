// SPDX-License-Identifier: MIT
/*
 * core/heap.c -- the generic heap API: each call finds the descriptor of the
 * heap's kind word (core/kind.h, core/registry.c) and calls its operation.
 *
 *   mem (rounded up to 8)
 *   +------------------------------------------+----------------------
 *   | algorithm control: kind word, then the   | pool: blocks ...
 *   | algorithm's own fields (rtm_tlsf, ...)   |
 *   +------------------------------------------+----------------------
 *
 * The handle is the control structure itself, so a heap created through a
 * typed API works through this one too. The descriptor is found from the
 * kind word rather than stored in the region: the region may be mapped into
 * another process, where a pointer into this process's data means nothing.
 *
 * Hot paths: rtm_alloc and rtm_free test for TLSF first, with one compare
 * and a tail call into the typed API (5 instructions above rtm_tlsf_alloc on
 * x86-64, checked by build/rtmem-wcet); every other kind goes through a
 * noinline function that looks its descriptor up, so adding kinds adds no
 * instruction to the TLSF path.
 *
 * Nothing here names a particular algorithm but TLSF's kind word, nor the
 * guarded heaps of src/shared/: they register their descriptor themselves,
 * so this file and every plain heap link without them (firmware).
 *
 * Valgrind/ASan tracking (core/track.h): each function below first hands
 * its call to a tracked twin when the build tracks (RTM_TRACKED), and the
 * macro is nothing otherwise, so the untracked code, TLSF's hot path
 * included, is the same instruction for instruction.
 */
#include <stdint.h>

#include "core/algorithms.h"
#include "core/kind.h"
#include "core/track.h"

/* What the generic layer knows of a control structure: its first word. */
struct rtm_heap {
    uint32_t kind;
};

static inline rtm_tlsf *as_tlsf(rtm_heap *h) { return (rtm_tlsf *)(void *)h; }

/* The one check on every hot entry: catches NULL, a destroyed heap and most
 * pointers that are not heaps at all. */
/* 1 when TLSF is among the heaps built in (RTM_ALGORITHMS). A firmware
 * build of other heaps alone then has no TLSF fast path, and the generic
 * API links without TLSF's sources (the call below is dead code). */
#define TLSF_IF_LISTED(name, word) +((word) == RTM_KIND_TLSF)
enum { tlsf_built_in = 0 RTM_ALGORITHMS(TLSF_IF_LISTED) };

static inline int is_tlsf(const rtm_heap *h)
{
    return tlsf_built_in && h != NULL && h->kind == RTM_KIND_TLSF;
}

/* The descriptor of a handle, NULL for NULL, a destroyed heap or a pointer
 * whose first word is no known kind. */
static inline const rtm_heap_kind *kind_of(const rtm_heap *h)
{
    return h != NULL ? rtm_kind_find(h->kind) : NULL;
}

static RTM_COLD void *bad_heap(void)
{
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

static RTM_COLD int bad_heap_int(void)
{
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* The descriptor named by "name" or "name:param", with the parameter (the
 * kind's default when absent, 0 for kinds that take none). NULL for an
 * unknown name, a parameter a kind does not take, or a malformed one. */
static const rtm_heap_kind *named_kind(const char *algorithm, size_t *param)
{
    rtm_algo_spec spec;
    if (algorithm == NULL || rtm_algo_parse(algorithm, &spec) != 0)
        return NULL;
    *param = 0;
    if (spec.ops->default_param == 0)
        return spec.param == NULL ? spec.ops : NULL;
    return rtm_algo_size_param(&spec, spec.ops->default_param, param) == 0 ? spec.ops : NULL;
}

size_t rtm_min_region(const char *algorithm)
{
    size_t param = 0;
    const rtm_heap_kind *k = named_kind(algorithm, &param);
    size_t min = k != NULL ? k->min_region(param) : 0;
    if (min == 0)
        RTM_SET_ERRNO(RTM_EINVAL);
    return min;
}

rtm_heap *rtm_heap_create(const char *algorithm, void *mem, size_t bytes)
{
    size_t param = 0;
    const rtm_heap_kind *k = mem != NULL ? named_kind(algorithm, &param) : NULL;
    /* The documented minimum holds at every alignment: a region of
     * rtm_min_region() bytes always works and a smaller one never does. */
    size_t min = k != NULL ? k->min_region(param) : 0;
    if (min == 0 || bytes < min)
        return bad_heap();
    /* A region that wraps the address space is no region: refused here for
     * every kind (each typed create checks it too), before anything is
     * written. mem + bytes may end exactly at the top. */
    if (bytes > UINTPTR_MAX - (uintptr_t)mem)
        return bad_heap();
    RTM_TRACKED(rtm_tracked_create(k, mem, bytes, param));
    return k->create(mem, bytes, param);
}

/* Only some kinds take more regions (TLSF); the others: ENOTSUP. */
int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    RTM_TRACKED(rtm_tracked_add_pool(h, mem, bytes));
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL || mem == NULL)
        return bad_heap_int();
    if (k->add_pool == NULL) {
        RTM_SET_ERRNO(RTM_ENOTSUP);
        return -1;
    }
    return k->add_pool(h, mem, bytes);
}

/* Only TLSF grows (and a locked heap over it); the others: ENOTSUP. */
int rtm_heap_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx)
{
    RTM_TRACKED(rtm_tracked_set_grow(h, grow, ctx));
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap_int();
    if (k->set_grow == NULL) {
        RTM_SET_ERRNO(RTM_ENOTSUP);
        return -1;
    }
    return k->set_grow(h, grow, ctx);
}

void rtm_heap_destroy(rtm_heap *h)
{
    RTM_TRACKED_VOID(rtm_tracked_destroy(h));
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return;
    if (k->destroy != NULL)
        k->destroy(h); /* a shared heap is only detached */
    else
        h->kind = 0; /* later calls on this handle fail with EINVAL */
}

/* The non-TLSF halves of the hot paths, out of line so that the TLSF path
 * stays one compare and a tail call. */
static RTM_NOINLINE void *alloc_other(rtm_heap *h, size_t size)
{
    const rtm_heap_kind *k = kind_of(h);
    return k != NULL ? k->alloc(h, size) : bad_heap();
}

static RTM_NOINLINE void free_other(rtm_heap *h, void *ptr)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k != NULL)
        k->free(h, ptr);
    else if (ptr != NULL)
        RTM_SET_ERRNO(RTM_EINVAL);
}

/* Hot path: one compare and a tail call into the typed API. */
void *rtm_alloc(rtm_heap *h, size_t size)
{
    RTM_TRACKED(rtm_tracked_alloc(h, size));
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_alloc(as_tlsf(h), size);
    return alloc_other(h, size);
}

/* Hot path. */
void rtm_free(rtm_heap *h, void *ptr)
{
    RTM_TRACKED_VOID(rtm_tracked_free(h, ptr));
    if (RTM_LIKELY(is_tlsf(h))) {
        (void)rtm_tlsf_free(as_tlsf(h), ptr);
        return;
    }
    free_other(h, ptr);
}

/* On a pool: the alignment must divide the pool's block alignment
 * (ENOTSUP otherwise: no block will ever have it). */
void *rtm_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    RTM_TRACKED(rtm_tracked_aligned_alloc(h, alignment, size));
    const rtm_heap_kind *k = kind_of(h);
    return k != NULL ? k->aligned_alloc(h, alignment, size) : bad_heap();
}

/* On a pool: in place up to the block size, ENOMEM beyond. */
void *rtm_realloc(rtm_heap *h, void *ptr, size_t size)
{
    RTM_TRACKED(rtm_tracked_realloc(h, ptr, size));
    const rtm_heap_kind *k = kind_of(h);
    return k != NULL ? k->realloc(h, ptr, size) : bad_heap();
}

size_t rtm_usable_size(rtm_heap *h, const void *ptr)
{
    RTM_TRACKED(rtm_tracked_usable_size(h, ptr));
    const rtm_heap_kind *k = kind_of(h);
    if (k != NULL)
        return k->usable_size(h, ptr);
    RTM_SET_ERRNO(RTM_EINVAL);
    return 0;
}

rtm_stats rtm_heap_stats(rtm_heap *h)
{
    RTM_TRACKED(rtm_tracked_stats(h));
    const rtm_heap_kind *k = kind_of(h);
    if (k != NULL)
        return k->stats(h);
    rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
    RTM_SET_ERRNO(RTM_EINVAL);
    return none;
}

int rtm_heap_check(rtm_heap *h)
{
    RTM_TRACKED(rtm_tracked_check(h));
    const rtm_heap_kind *k = kind_of(h);
    return k != NULL ? k->check(h) : bad_heap_int();
}

const char *rtm_heap_algorithm(rtm_heap *h)
{
    RTM_TRACKED(rtm_tracked_algorithm(h));
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap();
    return k->algorithm != NULL ? k->algorithm(h) : rtm_kind_name(h->kind);
}

int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    RTM_TRACKED(rtm_tracked_walk(h, walker, arg));
    const rtm_heap_kind *k = walker != NULL ? kind_of(h) : NULL;
    return k != NULL ? k->walk(h, walker, arg) : bad_heap_int();
}

int rtm_heap_reset(rtm_heap *h)
{
    RTM_TRACKED(rtm_tracked_reset(h));
    const rtm_heap_kind *k = kind_of(h);
    return k != NULL ? k->reset(h) : bad_heap_int();
}
