// SPDX-License-Identifier: MIT
/*
 * rtmem/common.h -- what every rtmem header shares: the statistics struct,
 * the error handler, and the alignment every heap guarantees.
 *
 * Kept apart from rtmem.h so that a typed algorithm header (rtmem/tlsf.h)
 * stands alone: a firmware team can take one algorithm and this file.
 */
#ifndef RTMEM_COMMON_H
#define RTMEM_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * RTM_API marks the functions librtmem exports. The library is compiled with
 * hidden visibility (-fvisibility=hidden), so only what its public headers
 * declare with RTM_API is visible in librtmem.so; the internal cross-file
 * functions stay private to it (checked by the ctest exported_symbols.*).
 * The same declaration serves the library and its users: default visibility
 * is what a user's declaration has anyway. Define RTM_API yourself (for
 * example empty, when you compile rtmem's sources into a library of your own
 * and want nothing of it exported) before including any rtmem header.
 */
#ifndef RTM_API
#if defined(__GNUC__) && !defined(_WIN32) && !defined(__CYGWIN__)
#define RTM_API __attribute__((visibility("default")))
#else
#define RTM_API
#endif
#endif

/** Every pointer rtm_alloc() returns is aligned to this many bytes. */
#define RTM_ALIGN 8u

/** Heap statistics, returned by value. All fields are exact. */
typedef struct rtm_stats {
    size_t arena_bytes;     /* all bytes given to the heap (every pool)       */
    size_t used_bytes;      /* sum of rtm_usable_size() over live blocks      */
    size_t free_bytes;      /* bytes in free blocks (what they could hold)    */
    size_t largest_free;    /* largest size rtm_alloc() satisfies right now   */
    size_t live_blocks;     /* blocks allocated and not yet freed             */
    size_t peak_used_bytes; /* highest used_bytes since create or reset       */
    size_t failed_allocs;   /* requests refused with ENOMEM                   */
} rtm_stats;

/** Kinds of misuse the heaps detect and report to the error handler. */
typedef enum rtm_error_kind {
    RTM_ERR_DOUBLE_FREE = 1, /* free of a block that is already free      */
    RTM_ERR_FOREIGN_POINTER, /* pointer not inside any pool of this heap  */
    RTM_ERR_CORRUPT_HEADER,  /* header overwritten, or interior/stale ptr */
    RTM_ERR_CHECK_FAILED     /* rtm_heap_check() found a broken invariant */
} rtm_error_kind;

/**
 * Called on detected misuse. heap is the heap's control structure, ptr the
 * offending pointer (or the block that failed a check), detail a static
 * English sentence. It runs inside the allocator call: it may log or abort,
 * but must not call back into the same heap.
 */
typedef void (*rtm_error_handler)(rtm_error_kind kind, const void *heap, const void *ptr,
                                  const char *detail, void *arg);

/** Installs the process-wide error handler (NULL: none, the default).
 *  Not thread-safe: set it before heaps are used. */
RTM_API void rtm_set_error_handler(rtm_error_handler handler, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_COMMON_H */
