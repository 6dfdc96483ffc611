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
    RTM_ERR_CORRUPT_HEADER,  /* block header overwritten (debug builds)   */
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
void rtm_set_error_handler(rtm_error_handler handler, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_COMMON_H */
