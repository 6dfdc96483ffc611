// SPDX-License-Identifier: MIT
/*
 * rtmem/malloc.h -- rtmem's thread-caching malloc: the allocator's own API,
 * its statistics and its real-time mode. docs/MALLOC.md has the design.
 *
 * The same allocator is the drop-in malloc of build/librtmem-malloc.so
 * (LD_PRELOAD) and build/librtmem-malloc.a (link it to replace malloc, free,
 * calloc, realloc, the aligned family and C++ new/delete). This header is
 * for programs that want to call it by name, read statistics or enable the
 * real-time mode; it is not part of librtmem, and linking librtmem never
 * replaces a program's malloc.
 *
 * Every name here starts with rtm_malloc (RTM_MALLOC_ for macros), so none
 * is one of the heap API's names in rtmem.h (rtm_free(h, p) there,
 * rtm_malloc_free(p) here): a program can include both headers, link
 * librtmem.a with librtmem-malloc.a, or run a librtmem.so program with
 * librtmem-malloc.so preloaded, and each call reaches its own library
 * (tests/malloc/test_malloc_coexist*.c).
 *
 * Every function is thread-safe. Time: the allocation and free fast paths
 * (a thread-cache hit) are O(1) and take no lock (about 20 instructions);
 * a cache miss moves a bounded batch under one per-size-class lock; only a
 * request the page heap cannot serve calls the OS (never in real-time mode).
 *
 * Options, all read once at the first allocation (docs/MALLOC.md, "Options"):
 *   RTMEM_ARENA=<digits>[k|m|g] real-time mode with an arena of that size
 *                               (K, M, G too; at least 1m; arena and its
 *                               metadata at most the machine's memory)
 *   RTMEM_ARENA_THREADS=<n>     thread caches prepared in the arena (16;
 *                               1 to 65536; read only with RTMEM_ARENA)
 *   RTMEM_DECAY_MS=<ms>         free pages returned to the OS after this
 *                               long unused (1000; 0 = at once; -1 = never;
 *                               at most 2147483647)
 *   RTMEM_SHOW_STATS=0|1        1: print rtm_malloc_print_stats() at exit
 *   RTMEM_STATS_FILE=<path>     ... appended to this file instead of stderr
 *                               (%p = the pid, %% = %)
 * Values are parsed strictly (no sign, space, 0x, fraction or other
 * suffix). A bad value gets one line on stderr (write(2), once). A bad or
 * too large RTMEM_ARENA or RTMEM_ARENA_THREADS does not start real-time
 * mode and makes every allocation fail with ENOMEM (never a silent
 * fallback to normal mode); a bad RTMEM_DECAY_MS or RTMEM_SHOW_STATS
 * leaves the default in force.
 */
#ifndef RTMEM_MALLOC_H
#define RTMEM_MALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; these are its exports. */
#if defined(__GNUC__)
#define RTM_MALLOC_EXPORT __attribute__((visibility("default")))
#else
#define RTM_MALLOC_EXPORT
#endif

/** Every pointer rtm_malloc() returns is aligned to this (the x86-64 and
 *  AArch64 ABIs' max_align_t; 16 on 32-bit too, as glibc does). */
#define RTM_MALLOC_ALIGN 16u

/** Largest request served by the size classes and thread caches; larger
 *  ones are page runs from the page heap. */
#define RTM_MALLOC_SMALL_MAX 32768u

/** Returns a block of at least `size` bytes (size 0 gives a unique
 *  minimal block), or NULL with errno = ENOMEM. */
RTM_MALLOC_EXPORT void *rtm_malloc(size_t size);

/** n * size zeroed bytes; NULL with errno = ENOMEM when the product
 *  overflows or memory is exhausted. */
RTM_MALLOC_EXPORT void *rtm_malloc_calloc(size_t n, size_t size);

/** glibc's realloc: realloc(NULL, n) = malloc(n); realloc(p, 0) frees p and
 *  returns NULL; shrinking within the usable size keeps the address; on
 *  failure returns NULL with ENOMEM and p stays valid. */
RTM_MALLOC_EXPORT void *rtm_malloc_realloc(void *ptr, size_t size);

/** Frees a block from any rtm_malloc_ allocation function (from any thread).
 *  NULL is ignored; errno is preserved. A pointer this allocator never
 *  returned is ignored and counted (rtm_malloc_stats.foreign_frees). */
RTM_MALLOC_EXPORT void rtm_malloc_free(void *ptr);

/** A block aligned to `alignment` (a power of two; anything up to 1 GiB).
 *  NULL with EINVAL for a bad alignment, ENOMEM when memory is exhausted. */
RTM_MALLOC_EXPORT void *rtm_malloc_aligned_alloc(size_t alignment, size_t size);

/** Bytes usable in a live block (>= the request); 0 for NULL. */
RTM_MALLOC_EXPORT size_t rtm_malloc_usable_size(const void *ptr);

/** Returns memory to the OS now: flushes the calling thread's cache and the
 *  central caches to their spans and purges (madvise) every free page run.
 *  Returns the number of bytes purged. Not in real-time mode (returns 0). */
RTM_MALLOC_EXPORT size_t rtm_malloc_trim(void);

/** Moves the calling thread's cached blocks to the central lists (a thread
 *  about to sleep for long can call it; thread exit does it by itself). */
RTM_MALLOC_EXPORT void rtm_malloc_thread_flush(void);

/**
 * Real-time mode. Before the first allocation, reserves `bytes` of address
 * space, pre-faults it (every page written), mlocks it, and prepares the
 * metadata of `threads` thread caches (0: 16) inside it. From then on no
 * allocation or free makes a system call or takes a page fault, except a
 * contended central lock's spinning, which never sleeps. A request the arena
 * cannot serve fails with ENOMEM and counts in arena_exhausted; nothing ever
 * falls back to the OS. Returns 0, or -1 with errno: EBUSY when the
 * allocator is already in use (or already in real-time mode), EINVAL for a
 * size too small (< 1 MiB), ENOMEM when the arena and its metadata exceed
 * the machine's physical memory (refused before anything is mapped) or the
 * arena cannot be mapped; after ENOMEM every allocation fails. When
 * mlock fails (RLIMIT_MEMLOCK) the arena is still pre-faulted, arena_locked
 * is 0 and the call succeeds: the kernel may then swap it out.
 * RTMEM_ARENA=<size> in the environment does the same at the first
 * allocation.
 */
RTM_MALLOC_EXPORT int rtm_malloc_arena(size_t bytes, unsigned threads);

/** Statistics, returned by value. Counters are exact; byte totals over
 *  other threads' caches are read without stopping them (approximate
 *  while they run). */
typedef struct rtm_malloc_stats_t {
    size_t mapped_bytes;           /* address space from the OS: heap, huge, metadata  */
    size_t resident_bytes;         /* mapped minus purged: an upper bound on RSS      */
    size_t metadata_bytes;         /* spans, thread caches, page map                  */
    size_t in_use_bytes;           /* handed out to the program (size-class rounded)  */
    size_t small_span_bytes;       /* pages carved into size classes                  */
    size_t thread_cache_bytes;     /* free blocks held by thread caches            */
    size_t central_cache_bytes;    /* free blocks in central transfer caches       */
    size_t large_bytes;            /* page runs handed out for large requests      */
    size_t huge_bytes;             /* direct OS mappings for huge requests         */
    size_t page_heap_free_bytes;   /* free page runs (dirty and purged)         */
    size_t page_heap_purged_bytes; /* of which returned to the OS               */
    size_t purges;                 /* madvise calls made by the decay or trim   */
    size_t os_calls;               /* every mmap/munmap/madvise/mlock so far    */
    size_t threads;                /* live thread caches                        */
    size_t threads_reclaimed;      /* caches of exited threads taken back       */
    size_t failed_allocs;          /* requests refused with ENOMEM              */
    size_t foreign_frees;          /* frees of pointers not from this allocator */
    size_t arena_bytes;            /* real-time arena size (0: not in RT mode)  */
    size_t arena_free_bytes;       /* arena pages not yet carved or freed back  */
    size_t arena_exhausted;        /* requests the arena could not serve        */
    int arena_locked;              /* 1 when mlock succeeded                    */
    long decay_ms;                 /* the decay option in force (-1: never)     */
} rtm_malloc_stats_t;

RTM_MALLOC_EXPORT rtm_malloc_stats_t rtm_malloc_stats(void);

/** Writes a human-readable summary of rtm_malloc_stats() to the file
 *  descriptor (write(2) only: safe where stdio is not). The first line is
 *  "rtmem-malloc stats: <program> [pid <n>]". */
RTM_MALLOC_EXPORT void rtm_malloc_print_stats(int fd);

/** Validates the allocator's structures that the calling thread can see
 *  consistently: its own cache (every block maps to a span of its class),
 *  the central lists and the page heap (free runs coalesced, page map
 *  agreeing with every span). Returns 0 when clean, -1 otherwise. O(heap);
 *  takes every lock in turn: for tests. */
RTM_MALLOC_EXPORT int rtm_malloc_check(void);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_MALLOC_H */
