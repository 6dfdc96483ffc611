// SPDX-License-Identifier: MIT
/*
 * core/track.h -- tells valgrind memcheck or AddressSanitizer where the
 * blocks of an rtm heap are, so that a user's overflow past an rtm block, a
 * read of a freed block and (valgrind) a leaked block are reported in the
 * user's own program (issue 17.3; docs/TESTING.md "Heaps valgrind and ASan
 * see into").
 *
 * Off by default and then nothing: RTM_TRACK is 0 and the generic API in
 * core/heap.c compiles to exactly the code it had before (build/rtmem-wcet
 * counts the same instructions). On with
 *   RTM_TRACK_VALGRIND=1  (CMake -DRTMEM_VALGRIND=ON): client requests from
 *                         <valgrind/memcheck.h>; each heap is a valgrind
 *                         mempool anchored at its handle;
 *   RTM_TRACK_ASAN=1      (CMake: RTMEM_SANITIZE with "address", unless
 *                         -DRTMEM_ASAN_TRACKING=OFF):
 *                         manual poisoning, <sanitizer/asan_interface.h>.
 *
 * Why the generic layer and not each allocator: every rtm_alloc, rtm_free,
 * realloc, aligned_alloc, add_pool, reset and destroy passes through
 * core/heap.c, so one file covers every algorithm, present and future,
 * without touching the allocator cores (which others own and which must stay
 * freestanding). The cost: heaps used through a typed API (rtm_tlsf_alloc...)
 * are not tracked; a heap created with rtm_heap_create must be used through
 * the generic API (docs/TESTING.md says so).
 *
 * The allocators themselves read and write headers and free-list links
 * inside memory that is marked inaccessible. Under valgrind each tracked
 * operation runs with error reporting disabled (rtm_track_quiet_*), which
 * also makes memcheck treat what the heap loads as defined. Under ASan the
 * allocator sources and core/heap.c are compiled without ASan
 * instrumentation (CMakeLists.txt: RTMEM_UNINSTRUMENTED_SOURCES), and their
 * __builtin_memcpy/memset become the uninstrumented copies below (a forced
 * include), because ASan's memcpy/memset interceptors would otherwise check
 * poisoned headers and free blocks.
 */
#ifndef RTM_CORE_TRACK_H
#define RTM_CORE_TRACK_H

#include <stddef.h>

#ifndef RTM_TRACK_VALGRIND
#define RTM_TRACK_VALGRIND 0
#endif
#ifndef RTM_TRACK_ASAN
#define RTM_TRACK_ASAN 0
#endif
#if RTM_TRACK_VALGRIND && RTM_TRACK_ASAN
#error "RTM_TRACK_VALGRIND and RTM_TRACK_ASAN exclude each other (valgrind does not run ASan code)"
#endif
#define RTM_TRACK (RTM_TRACK_VALGRIND || RTM_TRACK_ASAN)

/* How core/heap.c hands a call to its tracked twin: the first statement of
 * each generic function. Nothing at all when tracking is off. */
#if RTM_TRACK
#define RTM_TRACKED(call)                                                                          \
    do {                                                                                           \
        return call;                                                                               \
    } while (0)
#define RTM_TRACKED_VOID(call)                                                                     \
    do {                                                                                           \
        call;                                                                                      \
        return;                                                                                    \
    } while (0)
#else
#define RTM_TRACKED(call)      ((void)0)
#define RTM_TRACKED_VOID(call) ((void)0)
#endif

#if RTM_TRACK
#include "core/kind.h"

/* The tracked twins of the generic API (core/track.c): same contracts as
 * the functions of rtmem.h they stand in for; they find the kind, annotate
 * around its operation and keep errno as the untracked call would. Only
 * named algorithms (descriptors with a create) are annotated: a layer over
 * another heap (the guarded kind) reaches its inner heap through the
 * generic API again, and that call annotates. */
rtm_heap *rtm_tracked_create(const rtm_heap_kind *k, void *mem, size_t bytes, size_t param);
int rtm_tracked_add_pool(rtm_heap *h, void *mem, size_t bytes);
void rtm_tracked_destroy(rtm_heap *h);
void *rtm_tracked_alloc(rtm_heap *h, size_t size);
void rtm_tracked_free(rtm_heap *h, void *ptr);
void *rtm_tracked_aligned_alloc(rtm_heap *h, size_t alignment, size_t size);
void *rtm_tracked_realloc(rtm_heap *h, void *ptr, size_t size);
size_t rtm_tracked_usable_size(rtm_heap *h, const void *ptr);
rtm_stats rtm_tracked_stats(rtm_heap *h);
int rtm_tracked_check(rtm_heap *h);
const char *rtm_tracked_algorithm(rtm_heap *h);
int rtm_tracked_walk(rtm_heap *h, rtm_walker walker, void *arg);
int rtm_tracked_reset(rtm_heap *h);
int rtm_tracked_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx);
#endif

#endif /* RTM_CORE_TRACK_H */
