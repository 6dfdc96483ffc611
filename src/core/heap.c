/*
 * core/heap.c -- the generic heap API: dispatch by the kind word that starts
 * every algorithm's control structure (core/internal.h).
 *
 *   mem (rounded up to 8)
 *   +------------------------------------------+----------------------
 *   | algorithm control: kind word, then the   | pool: blocks ...
 *   | algorithm's own fields (rtm_tlsf, ...)   |
 *   +------------------------------------------+----------------------
 *
 * The handle is the control structure itself, so a generic call is a
 * compare and a direct tail call into the typed API (5 instructions on
 * x86-64), and a heap created through the typed API works through this one
 * too. A switch on the kind rather than a function pointer in the region:
 * the region may be mapped into another process, where a pointer into this
 * process's code means nothing.
 *
 * TLSF is tested first in every function, and the hot paths (rtm_alloc,
 * rtm_free) keep it at one compare and a tail call: every other algorithm
 * goes through a noinline "other" function, so adding algorithms adds no
 * instruction to the TLSF path (checked by build/rtmem-wcet: rtm_alloc costs
 * 5 instructions more than rtm_tlsf_alloc).
 */
#include <stdint.h>

#include "core/internal.h"
#include "rtmem.h"
#include "rtmem/pool.h"

/* What the generic layer knows of a control structure: its first word. */
struct rtm_heap {
    uint32_t kind;
};

static inline rtm_tlsf *as_tlsf(rtm_heap *h) { return (rtm_tlsf *)(void *)h; }
static inline rtm_pool *as_pool(rtm_heap *h) { return (rtm_pool *)(void *)h; }

/* The one check on every entry: catches NULL, a destroyed heap and most
 * pointers that are not heaps at all. */
static inline int is_tlsf(const rtm_heap *h) { return h != NULL && h->kind == RTM_KIND_TLSF; }
static inline int is_pool(const rtm_heap *h) { return h != NULL && h->kind == RTM_KIND_POOL; }
static inline int is_heap(const rtm_heap *h) { return is_tlsf(h) || is_pool(h); }

/* The pool's block size named by spec ("pool" alone: the default). */
static int pool_block_param(const rtm_algo_spec *spec, size_t *out)
{
    return rtm_algo_size_param(spec, RTM_POOL_DEFAULT_BLOCK, out);
}

size_t rtm_min_region(const char *algorithm)
{
    rtm_algo_spec spec;
    size_t block = 0;
    if (algorithm == NULL || rtm_algo_parse(algorithm, &spec) != 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    if (spec.kind == RTM_KIND_POOL) {
        size_t min = pool_block_param(&spec, &block) == 0 ? rtm_pool_min_region(block) : 0;
        if (min == 0)
            RTM_SET_ERRNO(RTM_EINVAL);
        return min; /* includes the 7 bytes of slack */
    }
    if (spec.param != NULL) { /* tlsf takes no parameter */
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    /* 7 bytes of slack: the region may start at any address. */
    return 7u + rtm_tlsf_min_region();
}

rtm_heap *rtm_heap_create(const char *algorithm, void *mem, size_t bytes)
{
    if (algorithm == NULL || mem == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    /* The documented minimum holds at every alignment: a region of
     * rtm_min_region() bytes always works and a smaller one never does.
     * rtm_min_region() also rejects unknown names and bad parameters. */
    size_t min = rtm_min_region(algorithm);
    if (min == 0 || bytes < min) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_algo_spec spec;
    (void)rtm_algo_parse(algorithm, &spec);
    if (spec.kind == RTM_KIND_POOL) {
        size_t block = 0;
        (void)pool_block_param(&spec, &block);
        return (rtm_heap *)(void *)rtm_pool_create(mem, bytes, block);
    }
    return (rtm_heap *)(void *)rtm_tlsf_create(mem, bytes); /* sets the kind word */
}

/* A pool heap is one region of fixed blocks: ENOTSUP. */
int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    if (is_pool(h) && mem != NULL) {
        RTM_SET_ERRNO(RTM_ENOTSUP);
        return -1;
    }
    if (!is_tlsf(h) || mem == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    return rtm_tlsf_add_pool(as_tlsf(h), mem, bytes);
}

void rtm_heap_destroy(rtm_heap *h)
{
    if (is_heap(h))
        h->kind = 0; /* later calls on this handle fail with EINVAL */
}

/* The non-TLSF halves of the hot paths, out of line so that the TLSF path
 * stays one compare and a tail call. */
static RTM_NOINLINE void *alloc_other(rtm_heap *h, size_t size)
{
    if (is_pool(h))
        return rtm_pool_alloc(as_pool(h), size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

static RTM_NOINLINE void free_other(rtm_heap *h, void *ptr)
{
    if (is_pool(h)) {
        (void)rtm_pool_free(as_pool(h), ptr);
        return;
    }
    if (ptr != NULL)
        RTM_SET_ERRNO(RTM_EINVAL);
}

/* Hot path: one compare and a tail call into the typed API. */
void *rtm_alloc(rtm_heap *h, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_alloc(as_tlsf(h), size);
    return alloc_other(h, size);
}

/* On a pool: the alignment must divide the pool's block alignment
 * (ENOTSUP otherwise: no block will ever have it). */
void *rtm_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_aligned_alloc(as_tlsf(h), alignment, size);
    if (is_pool(h))
        return rtm_pool_aligned_alloc(as_pool(h), alignment, size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* On a pool: in place up to the block size, ENOMEM beyond. */
void *rtm_realloc(rtm_heap *h, void *ptr, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_realloc(as_tlsf(h), ptr, size);
    if (is_pool(h))
        return rtm_pool_realloc(as_pool(h), ptr, size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* Hot path. */
void rtm_free(rtm_heap *h, void *ptr)
{
    if (RTM_LIKELY(is_tlsf(h))) {
        (void)rtm_tlsf_free(as_tlsf(h), ptr);
        return;
    }
    free_other(h, ptr);
}

size_t rtm_usable_size(rtm_heap *h, const void *ptr)
{
    if (is_tlsf(h))
        return rtm_tlsf_usable_size(ptr);
    if (is_pool(h))
        return rtm_pool_usable_size(as_pool(h), ptr);
    RTM_SET_ERRNO(RTM_EINVAL);
    return 0;
}

rtm_stats rtm_heap_stats(rtm_heap *h)
{
    if (is_tlsf(h))
        return rtm_tlsf_stats(as_tlsf(h));
    if (is_pool(h))
        return rtm_pool_stats(as_pool(h));
    rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
    RTM_SET_ERRNO(RTM_EINVAL);
    return none;
}

int rtm_heap_check(rtm_heap *h)
{
    if (is_tlsf(h))
        return rtm_tlsf_check(as_tlsf(h));
    if (is_pool(h))
        return rtm_pool_check(as_pool(h));
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

const char *rtm_heap_algorithm(rtm_heap *h)
{
    if (!is_heap(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    return rtm_algo_name(h->kind);
}

int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    if (!is_heap(h) || walker == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (is_tlsf(h))
        rtm_tlsf_walk(as_tlsf(h), walker, arg);
    else
        rtm_pool_walk(as_pool(h), walker, arg);
    return 0;
}

int rtm_heap_reset(rtm_heap *h)
{
    if (is_tlsf(h)) {
        rtm_tlsf_reset(as_tlsf(h));
        return 0;
    }
    if (is_pool(h)) {
        rtm_pool_reset(as_pool(h));
        return 0;
    }
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}
