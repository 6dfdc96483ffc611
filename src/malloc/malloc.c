// SPDX-License-Identifier: MIT
/*
 * malloc/malloc.c -- the allocator's API (include/rtmem/malloc.h): the
 * large and aligned paths, realloc, calloc, trim, check, statistics. The
 * hot paths are in fastpath.h; the drop-in names (malloc, free, ...) in
 * dropin.c; initialisation, options, the real-time arena's set-up, the
 * fork handlers and the printout at exit in options.c; the statistics
 * themselves in stats.c. The top layer (internal.h): it calls down into
 * every other file and nothing calls up into it.
 */
#include <errno.h>
#include <string.h>

#include "malloc/fastpath.h"

atomic_size_t rtmm_failed_allocs, rtmm_foreign_frees;

/* --- slow paths ------------------------------------------------------------------ */

RTM_COLD void *rtmm_fail(void)
{
    atomic_fetch_add_explicit(&rtmm_failed_allocs, 1, memory_order_relaxed);
    errno = ENOMEM;
    return NULL;
}

RTM_NOINLINE void *rtmm_alloc_small_slow(size_t size)
{
    void *p = rtmm_tc_self != NULL ? rtmm_tc_alloc_slow(size) : rtmm_alloc_first(size);
    return RTM_LIKELY(p != NULL) ? p : rtmm_fail();
}

RTM_NOINLINE void *rtmm_alloc_large(size_t size, size_t align)
{
    if (rtmm_init() != 0)
        return rtmm_fail();
    span *s;
    if (size >= RTM_HUGE_MIN && !rtmm_rt_mode) {
        s = rtmm_huge_alloc(size, align);
    } else {
        size_t pages = (size >> PAGE_SHIFT) + ((size & (PAGE_BYTES - 1u)) != 0);
        if (pages == 0)
            pages = 1;
        s = rtmm_heap_alloc(pages, align > PAGE_BYTES ? align >> PAGE_SHIFT : 1u, SPAN_LARGE, 0);
    }
    return s ? (void *)s->start : rtmm_fail();
}

/* A page-map lookup for a block that is not small: large and huge blocks
 * (possibly an aligned pointer inside their first page run), or foreign. */
static span *large_span_of(const void *p)
{
    span *s = pm_span((uintptr_t)p);
    if (s == NULL || (s->state != SPAN_LARGE && s->state != SPAN_HUGE))
        return NULL;
    return s;
}

RTM_NOINLINE void rtmm_free_slow(void *p, unsigned cls)
{
    if (cls != 0) {
        rtmm_tc_free_slow(p, cls);
        return;
    }
    int saved = errno;
    span *s = large_span_of(p);
    if (s == NULL)
        atomic_fetch_add_explicit(&rtmm_foreign_frees, 1, memory_order_relaxed);
    else if (s->state == SPAN_HUGE)
        rtmm_huge_free(s);
    else
        rtmm_heap_free(s);
    errno = saved;
}

/* --- the API ----------------------------------------------------------------------- */

void *rtm_malloc(size_t size) { return fast_malloc(size); }

void rtm_malloc_free(void *ptr) { fast_free(ptr); }

size_t rtm_malloc_usable_size(const void *ptr)
{
    if (ptr == NULL)
        return 0;
    unsigned cls = pm_class((uintptr_t)ptr);
    if (cls != 0)
        return rtmm_class[cls].size;
    span *s = large_span_of(ptr);
    return s ? (size_t)(span_end(s) - (uintptr_t)ptr) : 0u;
}

/* realloc of a page run to another page-run size, in place: the tail
 * goes back to the page heap, or the free run right after the block is
 * taken (no copy, no OS call; also in real-time mode). -1 when the block
 * is not a page run starting at ptr, the new size belongs to the huge
 * mappings, or the pages after it are not free. */
static int resize_large(void *ptr, size_t size)
{
    span *s = large_span_of(ptr);
    if (s == NULL || s->state != SPAN_LARGE || s->start != (uintptr_t)ptr)
        return -1;
    if (size >= RTM_HUGE_MIN && !rtmm_rt_mode)
        return -1;
    size_t pages = (size >> PAGE_SHIFT) + ((size & (PAGE_BYTES - 1u)) != 0);
    return rtmm_heap_resize(s, pages);
}

/* realloc of a huge mapping to another huge size: its pages move (mremap),
 * never copied. NULL when ptr is not a huge block or the move failed (the
 * caller copies then). */
static void *resize_huge(void *ptr, size_t size)
{
    span *s = large_span_of(ptr);
    if (s == NULL || s->state != SPAN_HUGE || s->start != (uintptr_t)ptr || size < RTM_HUGE_MIN)
        return NULL;
    return rtmm_huge_resize(s, size);
}

void *rtm_malloc_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return rtmm_fail();
    void *p = fast_malloc(total);
    if (p == NULL)
        return NULL;
    if (total > SMALL_MAX) {
        span *s = large_span_of(p);
        if (s != NULL && s->zeroed) /* fresh or purged pages read as zero */
            return p;
    }
    memset(p, 0, total);
    return p;
}

void *rtm_malloc_aligned_alloc(size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    if (alignment <= MIN_ALIGN)
        return fast_malloc(size);
    if (alignment <= PAGE_BYTES && size <= SMALL_MAX) {
        if (rtmm_init() != 0)
            return rtmm_fail();
        unsigned cls = rtmm_class_for_aligned(size, alignment);
        if (cls != 0)
            return fast_alloc_class(cls, rtmm_class[cls].size);
    }
    return rtmm_alloc_large(size, alignment);
}

void *rtm_malloc_realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return fast_malloc(size);
    if (size == 0) { /* glibc: frees and returns NULL */
        fast_free(ptr);
        return NULL;
    }
    size_t usable = rtm_malloc_usable_size(ptr);
    if (size > SMALL_MAX) {
        if (resize_large(ptr, size) == 0)
            return ptr;
        void *moved = resize_huge(ptr, size);
        if (moved != NULL)
            return moved;
    }
    /* In place when it fits, unless a large block would waste over half. */
    if (size <= usable && (usable <= SMALL_MAX || size >= usable / 2u))
        return ptr;
    void *q = fast_malloc(size);
    if (q == NULL)
        return NULL;
    memcpy(q, ptr, size < usable ? size : usable);
    fast_free(ptr);
    return q;
}

size_t rtm_malloc_trim(void)
{
    if (rtmm_init() != 0 || rtmm_rt_mode)
        return 0;
    rtmm_tc_flush_self();
    rtmm_central_drain(1);
    return rtmm_heap_purge(1);
}

/* A thread with a cache went through initialisation; one without has
 * nothing to flush. */
void rtm_malloc_thread_flush(void) { rtmm_tc_flush_self(); }

rtm_malloc_stats_t rtm_malloc_stats(void) { return rtmm_stats(rtmm_init_for_stats()); }

void rtm_malloc_print_stats(int fd) { rtmm_stats_print(rtm_malloc_stats(), fd); }

int rtm_malloc_check(void)
{
    if (rtmm_init() != 0)
        return -1;
    if (rtmm_tc_check() != 0 || rtmm_central_check() != 0 || rtmm_heap_check() != 0)
        return -1;
    return 0;
}
