// SPDX-License-Identifier: MIT
/*
 * os/pages.h -- the operating-system calls rtmem's malloc makes: address
 * space (mmap, munmap), returning pages (madvise), pinning (mlock), and the
 * one scheduling call a contended spin lock makes (sched_yield). Every such
 * call in src/malloc goes through here, so that
 *  - a port to another OS replaces pages.c and nothing else;
 *  - each call is counted (rtm_os_calls()), which is how the real-time mode
 *    proves "no system call after start-up" in its test;
 *  - none of them allocates with malloc: the allocator sits below malloc.
 *
 * Sizes are multiples of rtm_os_page_size(); functions return NULL / -1 on
 * failure with errno from the kernel. Thread-safe (the counters are atomic).
 */
#ifndef RTM_OS_PAGES_H
#define RTM_OS_PAGES_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's page size (4096 on x86); read once, then cached. */
size_t rtm_os_page_size(void);

/* Fresh zeroed read-write anonymous memory, lazily backed (no page is
 * resident until touched; MAP_NORESERVE). NULL on failure. */
void *rtm_os_map(size_t bytes);

/* Like rtm_os_map, aligned to `align` (a power of two, a multiple of the
 * page size): maps bytes + align and unmaps the two ends. */
void *rtm_os_map_aligned(size_t bytes, size_t align);

/* Resizes the mapping at old (old_bytes) to new_bytes, moving its pages
 * without copying them (Linux mremap). target NULL: only in place (grows
 * into free address space right after it, or shrinks); else the pages move
 * onto target, a mapping of new_bytes the caller made, which they replace.
 * Returns the new address, or NULL (errno; the old mapping unchanged; also
 * on systems without mremap: ENOSYS). */
void *rtm_os_remap(void *old, size_t old_bytes, size_t new_bytes, void *target);

/* Gives a whole mapping (or a page-aligned part of one) back. */
int rtm_os_unmap(void *p, size_t bytes);

/* Tells the kernel the contents are no longer needed (MADV_DONTNEED): the
 * pages stop counting in RSS and read back as zeros when touched again. */
int rtm_os_purge(void *p, size_t bytes);

/* Makes every page resident (writes one byte per page, which also defeats
 * the zero-page sharing of reads) and then locks the range (mlock). Returns
 * 0 when locked, -1 when only pre-faulted (errno from mlock: EPERM or
 * ENOMEM under RLIMIT_MEMLOCK). */
int rtm_os_prefault_lock(void *p, size_t bytes);

/* Gives the CPU to another thread (sched_yield). */
void rtm_os_yield(void);

/* A monotonic clock in milliseconds (clock_gettime through the vDSO: no
 * system call on Linux x86/arm; not counted). */
uint64_t rtm_os_now_ms(void);

/* Calls made so far through this layer (all kinds, yield excepted), and the
 * part of them that were madvise. */
uint64_t rtm_os_calls(void);
uint64_t rtm_os_purge_calls(void);

#endif /* RTM_OS_PAGES_H */
