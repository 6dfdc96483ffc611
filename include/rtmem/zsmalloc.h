// SPDX-License-Identifier: MIT
/*
 * rtmem/zsmalloc.h -- a zsmalloc-style object store (after Linux's zram
 * allocator, mm/zsmalloc.c): objects named by handles, kept in size-classed
 * multi-page spans ("zspages"), and compacted without the handles changing.
 *
 * Why handles: an object is reached only through rtm_zs_map(), so the pool
 * may move it between calls. Compaction empties sparse spans into fuller
 * ones of the same class and gives their pages back; the handle follows the
 * object through a table inside the pool.
 *
 * Layout of the region (all metadata inside it; links are indices):
 *
 *   mem (8-aligned)
 *   [ control | handle table | page descriptors | pad | page 0 | page 1 | ... ]
 *                                                 16-aligned, RTM_ZS_PAGE each
 *
 *  - Size classes in 16-byte steps, 16 .. RTM_ZS_MAX_SIZE + 16. Every object
 *    carries an 8-byte header (its handle's slot, its size, its map count),
 *    as Linux's objects carry their handle, so a request of n bytes takes
 *    class round_up(n + 8, 16). The largest class covers a whole page:
 *    n = RTM_ZS_MAX_SIZE (4096) is accepted, n > 4096 is refused (ENOMEM).
 *  - A class's span is 1..4 contiguous pages, the count Linux picks
 *    (get_pages_per_zspage): the one with the highest used percentage of
 *    the span, the first such on ties. Objects straddle page boundaries
 *    inside a span; the pages of a span are contiguous in the region, so
 *    rtm_zs_map() returns the object's address itself (no copy buffer).
 *  - Pages come from a small buddy allocator of orders 0..2 (1, 2, 4
 *    pages); a span is given back as soon as its last object is freed.
 *  - Handles: 0 is never valid. A handle holds the pool's tag (distinct for
 *    the last 16383 pools created in this process), the slot's index and
 *    its generation (odd while live, bumped on free). Every call validates
 *    the handle in O(1) before touching anything: a handle that is 0, of
 *    another pool, never issued, freed, or stale (its slot freed and issued
 *    again) is refused and reported to the error handler (rtmem/common.h):
 *    RTM_ERR_FOREIGN_POINTER for 0 / foreign / never issued,
 *    RTM_ERR_DOUBLE_FREE for freed or stale ones (and for an unmap without a
 *    map). errno is EINVAL after a refusal (hosted builds). A pool argument
 *    that is NULL or not a pool is refused with EINVAL and not reported
 *    (there is no pool to name).
 *  - The handle table holds one handle per RTM_ZS_HANDLE_BYTES bytes of
 *    pages (default 128, overridable at build time): a pool of many tiny
 *    objects runs out of handles (ENOMEM) before it runs out of pages.
 *
 * Time bounds (all independent of the pool's size except create and check):
 *  - rtm_zs_malloc, rtm_zs_free, rtm_zs_map, rtm_zs_unmap: O(1). Malloc may
 *    take a span from the page buddy (at most 2 splits), free may give one
 *    back (at most 2 aligned blocks, 2 merges each).
 *  - rtm_zs_compact: empties at most ONE span per call (fixed bound, no
 *    budget argument): a scan of the 257 classes for one that can lose a
 *    span, then at most one span's objects moved (<= 256 objects, <= 16 KiB
 *    copied), then that span's pages given back. Call it until it returns 0
 *    to compact fully; each call is short enough to run between deadlines.
 *  - rtm_zs_create: O(pages) (every page descriptor written once).
 *  - rtm_zs_check: O(pages + handles issued).
 *
 * Mapping pins: a mapped object is never moved; maps nest (counted, at most
 * 65535 deep) and each needs its unmap. Freeing a mapped handle ends its
 * mappings. The mapped pointer is 8-aligned and valid for the object's size
 * until the handle's last unmap (or its free).
 *
 * Not thread-safe (like every plain rtmem heap): callers serialise access to
 * one pool. Builds freestanding (no libc; docs/FIRMWARE.md).
 */
#ifndef RTMEM_ZSMALLOC_H
#define RTMEM_ZSMALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_zspool rtm_zspool; /* opaque; lives at the start of a region */
typedef uint64_t rtm_zs_handle;       /* 0 is never a valid handle */

/** Bytes of a page: spans are 1..4 of them. */
#define RTM_ZS_PAGE 4096u
/** Largest object size rtm_zs_malloc() accepts (one page). */
#define RTM_ZS_MAX_SIZE RTM_ZS_PAGE
/** Bytes every object carries in front of its data (not counted in size). */
#define RTM_ZS_HEADER_BYTES 8u

typedef struct {
    size_t pages_total;  /* pages of the region                            */
    size_t pages_used;   /* pages held by spans                            */
    size_t objects;      /* live handles                                   */
    size_t bytes_stored; /* sum of the sizes asked for by live objects     */
} rtm_zs_stats;

/** The smallest region rtm_zs_create() accepts: control, handles, and four
 *  pages, so that an empty pool can hold one object of every size. O(1). */
RTM_API size_t rtm_zs_min_region(void);

/** Creates a pool over [mem, mem + bytes). Returns it (at mem) or NULL with
 *  errno EINVAL, nothing written, when mem is NULL or not 8-aligned, bytes <
 *  rtm_zs_min_region(), or mem + bytes wraps the address space. Regions
 *  beyond 2^24 - 1 pages (64 GiB) use the first 2^24 - 1 pages. O(pages). */
RTM_API rtm_zspool *rtm_zs_create(void *mem, size_t bytes);

/** Stores an object of `size` bytes (contents undefined). Returns its
 *  handle, or 0 with errno EINVAL (p NULL or not a pool, size 0) or ENOMEM
 *  (size > RTM_ZS_MAX_SIZE, no page for a new span, no free handle). O(1). */
RTM_API rtm_zs_handle rtm_zs_malloc(rtm_zspool *p, size_t size);

/** Frees the object; a bad handle is refused and reported (above), the pool
 *  untouched. Ends the object's mappings. O(1). */
RTM_API void rtm_zs_free(rtm_zspool *p, rtm_zs_handle h);

/** Pins the object and returns a pointer to its `size` contiguous bytes
 *  (8-aligned), or NULL after a refused handle (reported, errno EINVAL) or
 *  65535 nested maps (errno ENOMEM, not reported). O(1). */
RTM_API void *rtm_zs_map(rtm_zspool *p, rtm_zs_handle h);

/** Ends one rtm_zs_map() of the object; at the last one compaction may move
 *  it again. A bad handle or one not mapped is refused and reported. O(1). */
RTM_API void rtm_zs_unmap(rtm_zspool *p, rtm_zs_handle h);

/** Moves the objects of at most one sparse, unpinned span into other spans
 *  of its class and gives its pages back. Returns the pages given back (0:
 *  nothing left to compact, or p is not a pool, errno EINVAL). Handles stay
 *  valid. Bounded per call (above). */
RTM_API size_t rtm_zs_compact(rtm_zspool *p);

/** Exact statistics (all zero for NULL or a non-pool). O(1). */
RTM_API rtm_zs_stats rtm_zs_stats_get(const rtm_zspool *p);

/** Verifies every invariant: page buddy lists, spans and their class lists,
 *  every object header against its handle, the handle free list, counters.
 *  Returns 0, or -1 (errno EFAULT; EINVAL for NULL) after reporting the
 *  first broken invariant as RTM_ERR_CHECK_FAILED. Never follows an index
 *  out of the pool. O(pages + handles). */
RTM_API int rtm_zs_check(rtm_zspool *p);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_ZSMALLOC_H */
