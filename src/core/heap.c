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
 */
#include <stdint.h>

#include "core/internal.h"
#include "rtmem.h"

/* What the generic layer knows of a control structure: its first word. */
struct rtm_heap {
    uint32_t kind;
};

static inline rtm_tlsf *as_tlsf(rtm_heap *h) { return (rtm_tlsf *)(void *)h; }

/* The one check on every entry: catches NULL, a destroyed heap and most
 * pointers that are not heaps at all. */
static inline int is_tlsf(const rtm_heap *h) { return h != NULL && h->kind == RTM_KIND_TLSF; }

size_t rtm_min_region(const char *algorithm)
{
    rtm_algo_spec spec;
    if (algorithm == NULL || rtm_algo_parse(algorithm, &spec) != 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    /* 7 bytes of slack: the region may start at any address. */
    return 7u + rtm_tlsf_min_region();
}

rtm_heap *rtm_heap_create(const char *algorithm, void *mem, size_t bytes)
{
    rtm_algo_spec spec;
    if (algorithm == NULL || mem == NULL || rtm_algo_parse(algorithm, &spec) != 0 ||
        spec.param != NULL /* tlsf takes no parameter */) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    /* The documented minimum holds at every alignment: a region of
     * rtm_min_region() bytes always works and a smaller one never does. */
    if (bytes < rtm_min_region(spec.name)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    return (rtm_heap *)(void *)rtm_tlsf_create(mem, bytes); /* sets the kind word */
}

int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    if (!is_tlsf(h) || mem == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    return rtm_tlsf_add_pool(as_tlsf(h), mem, bytes);
}

void rtm_heap_destroy(rtm_heap *h)
{
    if (is_tlsf(h))
        h->kind = 0; /* later calls on this handle fail with EINVAL */
}

/* Hot path: one compare and a tail call into the typed API. */
void *rtm_alloc(rtm_heap *h, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_alloc(as_tlsf(h), size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

void *rtm_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_aligned_alloc(as_tlsf(h), alignment, size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

void *rtm_realloc(rtm_heap *h, void *ptr, size_t size)
{
    if (RTM_LIKELY(is_tlsf(h)))
        return rtm_tlsf_realloc(as_tlsf(h), ptr, size);
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
    if (ptr != NULL)
        RTM_SET_ERRNO(RTM_EINVAL);
}

size_t rtm_usable_size(rtm_heap *h, const void *ptr)
{
    if (!is_tlsf(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    return rtm_tlsf_usable_size(ptr);
}

rtm_stats rtm_heap_stats(rtm_heap *h)
{
    if (!is_tlsf(h)) {
        rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
        RTM_SET_ERRNO(RTM_EINVAL);
        return none;
    }
    return rtm_tlsf_stats(as_tlsf(h));
}

int rtm_heap_check(rtm_heap *h)
{
    if (!is_tlsf(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    return rtm_tlsf_check(as_tlsf(h));
}

const char *rtm_heap_algorithm(rtm_heap *h)
{
    if (!is_tlsf(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    return rtm_algo_name(h->kind);
}

int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    if (!is_tlsf(h) || walker == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    rtm_tlsf_walk(as_tlsf(h), walker, arg);
    return 0;
}

int rtm_heap_reset(rtm_heap *h)
{
    if (!is_tlsf(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    rtm_tlsf_reset(as_tlsf(h));
    return 0;
}
