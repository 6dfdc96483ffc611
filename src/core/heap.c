/*
 * core/heap.c -- the generic heap API: a small header at the start of the
 * first region, then the algorithm's own control structure.
 *
 *   mem (rounded up to 8)
 *   +-----------------------+------------------------------+---------------
 *   | rtm_heap: magic, algo | algorithm control (rtm_tlsf) | pool ...
 *   +-----------------------+------------------------------+---------------
 *
 * Dispatch is a switch on the algorithm id kept in the header: the header
 * lives in the caller's region (and, later, in shared memory), where a
 * function pointer would be meaningless to another process. The switch
 * compiles to a compare and a direct call, so the generic path adds a few
 * instructions to the typed one.
 */
#include <stdint.h>

#include "core/internal.h"
#include "rtmem.h"

#define HEAP_MAGIC 0x72746d68u /* "rtmh" */
#define HEAP_LAYOUT_VERSION 1u

struct rtm_heap {
    uint32_t magic;          /* HEAP_MAGIC while alive; destroy clears it   */
    uint16_t algo;           /* enum rtm_algo_id                            */
    uint16_t layout_version; /* HEAP_LAYOUT_VERSION                         */
    uint64_t prefix_bytes;   /* region bytes before the algorithm control   */
};

_Static_assert(sizeof(struct rtm_heap) == 16, "generic header layout is fixed");

static inline rtm_tlsf *as_tlsf(rtm_heap *h) { return (rtm_tlsf *)(void *)(h + 1); }

/* Cheap validity check on every entry: catches NULL, a destroyed heap and a
 * pointer that is not a heap at all (most of the time). */
static inline int heap_ok(const rtm_heap *h) { return h != NULL && h->magic == HEAP_MAGIC; }

static inline uintptr_t align_up8(uintptr_t x) { return (x + 7u) & ~(uintptr_t)7u; }

size_t rtm_min_region(const char *algorithm)
{
    rtm_algo_spec spec;
    if (algorithm == NULL || rtm_algo_parse(algorithm, &spec) != 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    /* 7 bytes of slack: the region may start at any address. */
    return 7u + sizeof(struct rtm_heap) + rtm_tlsf_min_region();
}

rtm_heap *rtm_heap_create(const char *algorithm, void *mem, size_t bytes)
{
    rtm_algo_spec spec;
    if (algorithm == NULL || mem == NULL || rtm_algo_parse(algorithm, &spec) != 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    if (spec.param != NULL) { /* tlsf takes no parameter */
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    uintptr_t start = align_up8((uintptr_t)mem);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    /* The documented minimum holds at every alignment: a region of
     * rtm_min_region() bytes always works and a smaller one never does. */
    if (bytes < rtm_min_region(spec.name) || bytes - lost < sizeof(struct rtm_heap)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_heap *h = (rtm_heap *)start;
    if (rtm_tlsf_create(h + 1, bytes - lost - sizeof *h) == NULL)
        return NULL; /* errno set by the algorithm */
    h->algo = (uint16_t)spec.id;
    h->layout_version = HEAP_LAYOUT_VERSION;
    h->prefix_bytes = lost + sizeof *h;
    h->magic = HEAP_MAGIC;
    return h;
}

int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    if (!heap_ok(h) || mem == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    switch (h->algo) {
    case RTM_ALGO_TLSF:
        return rtm_tlsf_add_pool(as_tlsf(h), mem, bytes);
    }
    RTM_SET_ERRNO(RTM_ENOTSUP);
    return -1;
}

void rtm_heap_destroy(rtm_heap *h)
{
    if (heap_ok(h))
        h->magic = 0; /* later calls on this handle fail with EINVAL */
}

/* Hot path: one compare and a direct call on top of the typed API. */
void *rtm_alloc(rtm_heap *h, size_t size)
{
    if (RTM_LIKELY(heap_ok(h) && h->algo == RTM_ALGO_TLSF))
        return rtm_tlsf_alloc(as_tlsf(h), size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

void *rtm_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    if (RTM_LIKELY(heap_ok(h) && h->algo == RTM_ALGO_TLSF))
        return rtm_tlsf_aligned_alloc(as_tlsf(h), alignment, size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

void *rtm_realloc(rtm_heap *h, void *ptr, size_t size)
{
    if (RTM_LIKELY(heap_ok(h) && h->algo == RTM_ALGO_TLSF))
        return rtm_tlsf_realloc(as_tlsf(h), ptr, size);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* Hot path. */
void rtm_free(rtm_heap *h, void *ptr)
{
    if (RTM_LIKELY(heap_ok(h) && h->algo == RTM_ALGO_TLSF)) {
        (void)rtm_tlsf_free(as_tlsf(h), ptr);
        return;
    }
    if (ptr != NULL)
        RTM_SET_ERRNO(RTM_EINVAL);
}

size_t rtm_usable_size(rtm_heap *h, const void *ptr)
{
    if (!heap_ok(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    return rtm_tlsf_usable_size(ptr);
}

rtm_stats rtm_heap_stats(rtm_heap *h)
{
    if (!heap_ok(h)) {
        rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
        RTM_SET_ERRNO(RTM_EINVAL);
        return none;
    }
    rtm_stats st = rtm_tlsf_stats(as_tlsf(h));
    st.arena_bytes += (size_t)h->prefix_bytes; /* "every byte given" */
    return st;
}

int rtm_heap_check(rtm_heap *h)
{
    if (!heap_ok(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    return rtm_tlsf_check(as_tlsf(h));
}

const char *rtm_heap_algorithm(rtm_heap *h)
{
    if (!heap_ok(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    return rtm_algo_name((enum rtm_algo_id)h->algo);
}

int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    if (!heap_ok(h) || walker == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    rtm_tlsf_walk(as_tlsf(h), walker, arg);
    return 0;
}

int rtm_heap_reset(rtm_heap *h)
{
    if (!heap_ok(h)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    rtm_tlsf_reset(as_tlsf(h));
    return 0;
}
