// SPDX-License-Identifier: MIT
/*
 * rtmem/slab.h -- the typed API of rtmem's slab heap: kmalloc-style size
 * classes on top of rtmem's binary buddy page allocator (rtmem/buddy.h).
 * The generic layer names it "slab:<page size>" (default 4096).
 *
 * Size classes (page size P, a power of two, 256 <= P <= RTM_SLAB_MAX_PAGE):
 *
 *   class:  8   16   32   64   ...   P/8        (log2(P) - 5 classes)
 *
 *   A request of n bytes (0 counts as 1) takes the smallest class >= n; a
 *   request above P/8 goes to the buddy as 2^k whole pages ("large block").
 *   Worst internal waste: a class-c object serves any n > c/2, so under 50 %
 *   of an object (n = c/2 + 1), and 8 bytes minimum; a large block wastes
 *   under half its pages plus the page rounding. A slab is one buddy page
 *   filled exactly with objects (P/c of them, no in-page header: the slab
 *   headers are a per-page descriptor table, 24 + P/64 bytes per page,
 *   e.g. 88 bytes = 2.1 % for 4 KiB pages).
 *
 * Guarantees:
 *  - Small alloc pops the first partial slab's free list or bumps its never
 *    used tail: O(1). With no partial slab it takes the cached empty slab or
 *    one page from the buddy: O(1) bounded by the buddy's bound
 *    (RTM_BUDDY_MAX_ORDER splits). Large alloc is one buddy alloc. When the
 *    buddy has no page left, another class's cached empty slab is taken
 *    over in place (a bit scan, no buddy call), for a new slab or a large
 *    request of up to one page.
 *  - Free finds the slab from the pointer (page index = offset >> log2 P,
 *    a descriptor lookup), pushes the object and moves the slab between its
 *    class's partial / full / empty lists (doubly linked by page index): O(1).
 *    A slab that becomes empty is kept as the class's one cached empty slab
 *    if the class has none and keeping it cannot strand the buddy's
 *    largest blocks (it lies beyond them, or its buddy page is in use);
 *    otherwise it goes back to the buddy, together with a cached slab on
 *    its buddy page that would now keep the pair from merging. At most two
 *    buddy frees per call, merging at most RTM_BUDDY_MAX_ORDER times
 *    together. So once every object and block is freed, the statistics are
 *    the fresh heap's and every request the fresh heap granted is granted
 *    (a cached slab may still split one of the smaller blocks at the
 *    arena's end, at most one page per class).
 *  - Objects of class c are aligned to c (the arena is page-aligned when the
 *    heap is created and slabs are pages); large blocks to the page size.
 *  - Misuse detected in O(1), every build (report, -1, errno EINVAL, heap
 *    untouched): a pointer into a slab that is not an object start, a free
 *    object (double free; a per-slab live bitmap), and for everything else
 *    whatever the buddy detects (not a block start, a free block: the report
 *    then comes from the inner buddy heap, whose handle is its `heap`).
 *  - All metadata lives inside the region; links are offsets and indices.
 *
 * Region layout:
 *
 *   [ control | descriptor table: n x stride | buddy heap (control, map, pages) ]
 *
 * Not thread-safe: callers serialise access to one heap.
 */
#ifndef RTMEM_SLAB_H
#define RTMEM_SLAB_H

#include <stddef.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_slab rtm_slab; /* opaque; lives at the start of a region */

/** Page size the generic API uses for "slab" without a parameter. */
#define RTM_SLAB_DEFAULT_PAGE 4096u
/** Smallest page size (at least 3 classes: 8, 16, 32). */
#define RTM_SLAB_MIN_PAGE 256u
/** Largest page size (2^24: 19 classes, in-page offsets fit 32 bits). */
#define RTM_SLAB_MAX_PAGE (1u << 24)
/** Smallest class. */
#define RTM_SLAB_MIN_CLASS 8u

/** The smallest region rtm_slab_create(mem, bytes, page_size) accepts at
 *  any start address, or 0 for a bad page size. O(1). */
RTM_API size_t rtm_slab_min_region(size_t page_size);

/** Creates a slab heap over [mem, mem + bytes). Returns the heap (mem
 *  rounded up to 8) or NULL (errno EINVAL when hosted, nothing written)
 *  when mem is NULL, page_size is not a power of two in [RTM_SLAB_MIN_PAGE,
 *  RTM_SLAB_MAX_PAGE], not one page fits, or mem + bytes wraps the address
 *  space. O(pages). */
RTM_API rtm_slab *rtm_slab_create(void *mem, size_t bytes, size_t page_size);

/** An object of the smallest class >= size (size 0: class 8), or a large
 *  block of whole pages above the largest class. NULL with errno ENOMEM
 *  (counted in failed_allocs). O(1) (bounded by the buddy's bound). */
RTM_API void *rtm_slab_alloc(rtm_slab *s, size_t size);

/** As rtm_slab_alloc(), aligned to `alignment` (a power of two, else NULL
 *  EINVAL): up to the largest class it takes the class max(size,
 *  alignment); above it a buddy block (rtm_buddy_aligned_alloc: ENOTSUP,
 *  not counted, for an alignment the arena can never give). O(1). */
RTM_API void *rtm_slab_aligned_alloc(rtm_slab *s, size_t alignment, size_t size);

/** Returns ptr (O(1)) when size <= its usable size; otherwise a large
 *  block grows through rtm_buddy_realloc, an object moves (alloc, O(size)
 *  copy, free). realloc(NULL, n) allocates; realloc(p, 0) frees and returns
 *  NULL. ENOMEM: NULL, counted, ptr unchanged. A pointer free would refuse
 *  is refused the same way (NULL, EINVAL). */
RTM_API void *rtm_slab_realloc(rtm_slab *s, void *ptr, size_t size);

/** Returns 0, or -1 with errno EINVAL after reporting (see the header
 *  comment for what is detected). NULL returns 0. O(1). */
RTM_API int rtm_slab_free(rtm_slab *s, void *ptr);

/** The class size of a live object, the page-rounded size of a live large
 *  block, 0 for NULL. Anything else is refused as rtm_slab_free() refuses
 *  it (same checks and report, a large block's from the inner buddy heap)
 *  and gives 0 with errno EINVAL. O(1). */
RTM_API size_t rtm_slab_usable_size(const rtm_slab *s, const void *ptr);

/** The page size. O(1). */
RTM_API size_t rtm_slab_page_size(const rtm_slab *s);

/** The number of size classes (log2(page) - 5); class i holds 8 << i. */
RTM_API unsigned rtm_slab_class_count(const rtm_slab *s);

/** Slabs of class i on its partial, full and empty lists (white-box
 *  introspection for tests and tuning); 0 for a bad class. O(slabs). */
RTM_API size_t rtm_slab_slab_count(const rtm_slab *s, unsigned cls, int list);
#define RTM_SLAB_PARTIAL 0
#define RTM_SLAB_FULL    1
#define RTM_SLAB_EMPTY   2

/** Exact statistics: used_bytes = class sizes of live objects + pages of
 *  live large blocks; free_bytes = free object slots (x class) in slabs +
 *  free buddy pages (so freeing everything restores it, cached empty slabs
 *  included); largest_free = the largest request alloc grants now: the
 *  buddy's largest free block when it has one (every request up to it
 *  succeeds), else one page when a class caches an empty slab (any request
 *  up to a page takes it over), else the largest class with a free slot
 *  (smaller classes may then be exhausted). O(classes). */
RTM_API rtm_stats rtm_slab_stats(const rtm_slab *s);

/** Verifies the control structure, every class's lists (bounded walks,
 *  indices validated as integers first; each slab's descriptor: its class,
 *  list, free count, free list inside the page, aligned, on free slots only
 *  and as long as the free count says; live bitmap count), that every slab
 *  page is a live order-0 buddy block, the counters against the buddy's,
 *  then rtm_buddy_check() of the inner heap. Returns 0, or -1 (errno EFAULT
 *  when hosted) after reporting the first broken invariant. O(pages +
 *  objects). */
RTM_API int rtm_slab_check(const rtm_slab *s);

/** Calls walker(ptr, usable, used, arg) for every object slot (used or
 *  free, class size) of a slab in use, every cached empty slab (one free
 *  page), every large block and every free buddy block, in address order.
 *  O(blocks + objects). */
RTM_API void rtm_slab_walk(const rtm_slab *s,
                           void (*walker)(void *ptr, size_t usable, int used, void *arg),
                           void *arg);

/** Frees everything at once and restarts the counters. O(pages). */
RTM_API void rtm_slab_reset(rtm_slab *s);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_SLAB_H */
