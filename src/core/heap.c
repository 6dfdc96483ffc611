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
 * Every function is a switch on the kind word. The hot paths (rtm_alloc,
 * rtm_free) test TLSF first with one compare and a tail call; every other
 * algorithm goes through a noinline "other" function, so adding algorithms
 * adds no instruction to the TLSF path (checked by build/rtmem-wcet:
 * rtm_alloc costs 5 instructions more than rtm_tlsf_alloc).
 *
 * The guarded kind (locked and process-shared heaps, src/shared/) is one
 * more case in each switch, out of line like the other algorithms; its
 * functions take the lock and call back into this API (or the typed TLSF
 * API) for the inner heap, which is never itself guarded.
 */
#include <stdint.h>

#include "core/internal.h"
#include "rtmem.h"
#include "rtmem/buddy.h"
#include "rtmem/halffit.h"
#include "rtmem/heapmem.h"
#include "rtmem/pool.h"
#include "rtmem/slab.h"

/* What the generic layer knows of a control structure: its first word. */
struct rtm_heap {
    uint32_t kind;
};

static inline rtm_tlsf *as_tlsf(rtm_heap *h) { return (rtm_tlsf *)(void *)h; }
static inline rtm_pool *as_pool(rtm_heap *h) { return (rtm_pool *)(void *)h; }
static inline rtm_buddy *as_buddy(rtm_heap *h) { return (rtm_buddy *)(void *)h; }
static inline rtm_halffit *as_halffit(rtm_heap *h) { return (rtm_halffit *)(void *)h; }
static inline rtm_slab *as_slab(rtm_heap *h) { return (rtm_slab *)(void *)h; }
static inline rtm_heapmem *as_heapmem(rtm_heap *h) { return (rtm_heapmem *)(void *)h; }

/* The one check on every entry: catches NULL, a destroyed heap and most
 * pointers that are not heaps at all. */
static inline int is_tlsf(const rtm_heap *h) { return h != NULL && h->kind == RTM_KIND_TLSF; }
/* The kind word of a heap handle, 0 for NULL (no kind is 0). */
static inline uint32_t kind_of(const rtm_heap *h) { return h != NULL ? h->kind : 0u; }

/* The pool's block size named by spec ("pool" alone: the default). */
static int pool_block_param(const rtm_algo_spec *spec, size_t *out)
{
    return rtm_algo_size_param(spec, RTM_POOL_DEFAULT_BLOCK, out);
}

/* The page size named by spec; "buddy" / "slab" alone: 4096, "heapmem"
 * alone: 512 (Xenomai's). */
static int buddy_page_param(const rtm_algo_spec *spec, size_t *out)
{
    return rtm_algo_size_param(spec, RTM_BUDDY_DEFAULT_PAGE, out);
}
static int slab_page_param(const rtm_algo_spec *spec, size_t *out)
{
    return rtm_algo_size_param(spec, RTM_SLAB_DEFAULT_PAGE, out);
}
static int heapmem_page_param(const rtm_algo_spec *spec, size_t *out)
{
    return rtm_algo_size_param(spec, RTM_HEAPMEM_DEFAULT_PAGE, out);
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
    if (spec.kind == RTM_KIND_BUDDY || spec.kind == RTM_KIND_SLAB ||
        spec.kind == RTM_KIND_HEAPMEM) {
        size_t page = 0, min = 0;
        if (spec.kind == RTM_KIND_BUDDY && buddy_page_param(&spec, &page) == 0)
            min = rtm_buddy_min_region(page);
        else if (spec.kind == RTM_KIND_SLAB && slab_page_param(&spec, &page) == 0)
            min = rtm_slab_min_region(page);
        else if (spec.kind == RTM_KIND_HEAPMEM && heapmem_page_param(&spec, &page) == 0)
            min = rtm_heapmem_min_region(page);
        if (min == 0)
            RTM_SET_ERRNO(RTM_EINVAL);
        return min; /* valid at any start address */
    }
    if (spec.param != NULL) { /* tlsf and halffit take no parameter */
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    if (spec.kind == RTM_KIND_HALFFIT)
        return rtm_halffit_min_region(); /* valid at any start address */
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
    if (spec.kind == RTM_KIND_BUDDY) {
        size_t page = 0;
        (void)buddy_page_param(&spec, &page);
        return (rtm_heap *)(void *)rtm_buddy_create(mem, bytes, page);
    }
    if (spec.kind == RTM_KIND_SLAB) {
        size_t page = 0;
        (void)slab_page_param(&spec, &page);
        return (rtm_heap *)(void *)rtm_slab_create(mem, bytes, page);
    }
    if (spec.kind == RTM_KIND_HEAPMEM) {
        size_t page = 0;
        (void)heapmem_page_param(&spec, &page);
        return (rtm_heap *)(void *)rtm_heapmem_create(mem, bytes, page);
    }
    if (spec.kind == RTM_KIND_HALFFIT)
        return (rtm_heap *)(void *)rtm_halffit_create(mem, bytes);
    return (rtm_heap *)(void *)rtm_tlsf_create(mem, bytes); /* sets the kind word */
}

/* Only TLSF takes more regions; every other heap manages one: ENOTSUP. */
int rtm_heap_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    if (kind_of(h) == RTM_KIND_GUARDED)
        return rtm_guarded_add_pool(h, mem, bytes);
    if (kind_of(h) != RTM_KIND_TLSF && rtm_algo_name(kind_of(h)) != NULL && mem != NULL) {
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
    if (kind_of(h) == RTM_KIND_GUARDED) {
        rtm_guarded_destroy(h); /* a shared heap is only detached */
        return;
    }
    if (rtm_algo_name(kind_of(h)) != NULL)
        h->kind = 0; /* later calls on this handle fail with EINVAL */
}

static RTM_COLD void *bad_heap(void)
{
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* The non-TLSF halves of the hot paths, out of line so that the TLSF path
 * stays one compare and a tail call. */
static RTM_NOINLINE void *alloc_other(rtm_heap *h, size_t size)
{
    switch (kind_of(h)) {
    case RTM_KIND_POOL:
        return rtm_pool_alloc(as_pool(h), size);
    case RTM_KIND_BUDDY:
        return rtm_buddy_alloc(as_buddy(h), size);
    case RTM_KIND_HALFFIT:
        return rtm_halffit_alloc(as_halffit(h), size);
    case RTM_KIND_SLAB:
        return rtm_slab_alloc(as_slab(h), size);
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_alloc(as_heapmem(h), size);
    case RTM_KIND_GUARDED:
        return rtm_guarded_alloc(h, size);
    }
    return bad_heap();
}

static RTM_NOINLINE void free_other(rtm_heap *h, void *ptr)
{
    switch (kind_of(h)) {
    case RTM_KIND_POOL:
        (void)rtm_pool_free(as_pool(h), ptr);
        return;
    case RTM_KIND_BUDDY:
        (void)rtm_buddy_free(as_buddy(h), ptr);
        return;
    case RTM_KIND_HALFFIT:
        (void)rtm_halffit_free(as_halffit(h), ptr);
        return;
    case RTM_KIND_SLAB:
        (void)rtm_slab_free(as_slab(h), ptr);
        return;
    case RTM_KIND_HEAPMEM:
        (void)rtm_heapmem_free(as_heapmem(h), ptr);
        return;
    case RTM_KIND_GUARDED:
        rtm_guarded_free(h, ptr);
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

/* Hot path. */
void rtm_free(rtm_heap *h, void *ptr)
{
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
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        return rtm_tlsf_aligned_alloc(as_tlsf(h), alignment, size);
    case RTM_KIND_POOL:
        return rtm_pool_aligned_alloc(as_pool(h), alignment, size);
    case RTM_KIND_BUDDY:
        return rtm_buddy_aligned_alloc(as_buddy(h), alignment, size);
    case RTM_KIND_HALFFIT:
        return rtm_halffit_aligned_alloc(as_halffit(h), alignment, size);
    case RTM_KIND_SLAB:
        return rtm_slab_aligned_alloc(as_slab(h), alignment, size);
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_aligned_alloc(as_heapmem(h), alignment, size);
    case RTM_KIND_GUARDED:
        return rtm_guarded_aligned_alloc(h, alignment, size);
    }
    return bad_heap();
}

/* On a pool: in place up to the block size, ENOMEM beyond. */
void *rtm_realloc(rtm_heap *h, void *ptr, size_t size)
{
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        return rtm_tlsf_realloc(as_tlsf(h), ptr, size);
    case RTM_KIND_POOL:
        return rtm_pool_realloc(as_pool(h), ptr, size);
    case RTM_KIND_BUDDY:
        return rtm_buddy_realloc(as_buddy(h), ptr, size);
    case RTM_KIND_HALFFIT:
        return rtm_halffit_realloc(as_halffit(h), ptr, size);
    case RTM_KIND_SLAB:
        return rtm_slab_realloc(as_slab(h), ptr, size);
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_realloc(as_heapmem(h), ptr, size);
    case RTM_KIND_GUARDED:
        return rtm_guarded_realloc(h, ptr, size);
    }
    return bad_heap();
}

size_t rtm_usable_size(rtm_heap *h, const void *ptr)
{
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        return rtm_tlsf_usable_size(ptr);
    case RTM_KIND_POOL:
        return rtm_pool_usable_size(as_pool(h), ptr);
    case RTM_KIND_BUDDY:
        return rtm_buddy_usable_size(as_buddy(h), ptr);
    case RTM_KIND_HALFFIT:
        return rtm_halffit_usable_size(as_halffit(h), ptr);
    case RTM_KIND_SLAB:
        return rtm_slab_usable_size(as_slab(h), ptr);
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_usable_size(as_heapmem(h), ptr);
    case RTM_KIND_GUARDED:
        return rtm_guarded_usable_size(h, ptr);
    }
    RTM_SET_ERRNO(RTM_EINVAL);
    return 0;
}

rtm_stats rtm_heap_stats(rtm_heap *h)
{
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        return rtm_tlsf_stats(as_tlsf(h));
    case RTM_KIND_POOL:
        return rtm_pool_stats(as_pool(h));
    case RTM_KIND_BUDDY:
        return rtm_buddy_stats(as_buddy(h));
    case RTM_KIND_HALFFIT:
        return rtm_halffit_stats(as_halffit(h));
    case RTM_KIND_SLAB:
        return rtm_slab_stats(as_slab(h));
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_stats(as_heapmem(h));
    case RTM_KIND_GUARDED:
        return rtm_guarded_stats(h);
    }
    rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
    RTM_SET_ERRNO(RTM_EINVAL);
    return none;
}

int rtm_heap_check(rtm_heap *h)
{
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        return rtm_tlsf_check(as_tlsf(h));
    case RTM_KIND_POOL:
        return rtm_pool_check(as_pool(h));
    case RTM_KIND_BUDDY:
        return rtm_buddy_check(as_buddy(h));
    case RTM_KIND_HALFFIT:
        return rtm_halffit_check(as_halffit(h));
    case RTM_KIND_SLAB:
        return rtm_slab_check(as_slab(h));
    case RTM_KIND_HEAPMEM:
        return rtm_heapmem_check(as_heapmem(h));
    case RTM_KIND_GUARDED:
        return rtm_guarded_check(h);
    }
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

const char *rtm_heap_algorithm(rtm_heap *h)
{
    if (kind_of(h) == RTM_KIND_GUARDED)
        return rtm_guarded_algorithm(h); /* the inner heap's */
    const char *name = rtm_algo_name(kind_of(h));
    if (name == NULL)
        RTM_SET_ERRNO(RTM_EINVAL);
    return name;
}

int rtm_heap_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    if (walker == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        rtm_tlsf_walk(as_tlsf(h), walker, arg);
        return 0;
    case RTM_KIND_POOL:
        rtm_pool_walk(as_pool(h), walker, arg);
        return 0;
    case RTM_KIND_BUDDY:
        rtm_buddy_walk(as_buddy(h), walker, arg);
        return 0;
    case RTM_KIND_HALFFIT:
        rtm_halffit_walk(as_halffit(h), walker, arg);
        return 0;
    case RTM_KIND_SLAB:
        rtm_slab_walk(as_slab(h), walker, arg);
        return 0;
    case RTM_KIND_HEAPMEM:
        rtm_heapmem_walk(as_heapmem(h), walker, arg);
        return 0;
    case RTM_KIND_GUARDED:
        return rtm_guarded_walk(h, walker, arg);
    }
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

int rtm_heap_reset(rtm_heap *h)
{
    switch (kind_of(h)) {
    case RTM_KIND_TLSF:
        rtm_tlsf_reset(as_tlsf(h));
        return 0;
    case RTM_KIND_POOL:
        rtm_pool_reset(as_pool(h));
        return 0;
    case RTM_KIND_BUDDY:
        rtm_buddy_reset(as_buddy(h));
        return 0;
    case RTM_KIND_HALFFIT:
        rtm_halffit_reset(as_halffit(h));
        return 0;
    case RTM_KIND_SLAB:
        rtm_slab_reset(as_slab(h));
        return 0;
    case RTM_KIND_HEAPMEM:
        rtm_heapmem_reset(as_heapmem(h));
        return 0;
    case RTM_KIND_GUARDED:
        return rtm_guarded_reset(h);
    }
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}
