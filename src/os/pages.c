// SPDX-License-Identifier: MIT
/*
 * os/pages.c -- the POSIX (Linux) implementation of os/pages.h.
 *
 * Why MAP_NORESERVE: the page heap maps address space in large chunks and
 * touches it gradually; with overcommit heuristics (the Linux default) the
 * flag keeps untouched address space from counting against the commit
 * limit. Why MADV_DONTNEED rather than MADV_FREE: DONTNEED drops the pages
 * at once, so RSS falls when the decay policy says so and the drop is
 * visible to tests and to users reading RSS; MADV_FREE lets the kernel keep
 * them until memory pressure, which makes "peak RSS forever" look the same.
 */

#include "os/pages.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static _Atomic uint64_t calls;
static _Atomic uint64_t purge_calls;
static size_t page_size_cache;

static void count(void) { atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed); }

size_t rtm_os_page_size(void)
{
    if (page_size_cache == 0) {
        long ps = sysconf(_SC_PAGESIZE);
        page_size_cache = ps > 0 ? (size_t)ps : 4096u;
    }
    return page_size_cache;
}

void *rtm_os_map(size_t bytes)
{
    count();
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *rtm_os_map_aligned(size_t bytes, size_t align)
{
    if (bytes + align < bytes) {
        errno = ENOMEM;
        return NULL;
    }
    char *raw = rtm_os_map(bytes + align);
    if (raw == NULL)
        return NULL;
    uintptr_t a = ((uintptr_t)raw + align - 1u) & ~(uintptr_t)(align - 1u);
    size_t head = (size_t)(a - (uintptr_t)raw), tail = align - head;
    if (head != 0)
        rtm_os_unmap(raw, head);
    if (tail != 0)
        rtm_os_unmap((char *)a + bytes, tail);
    return (void *)a;
}

void *rtm_os_remap(void *old, size_t old_bytes, size_t new_bytes, void *target)
{
#if defined(__linux__) && defined(MREMAP_FIXED)
    count();
    void *p = target == NULL
                  ? mremap(old, old_bytes, new_bytes, 0)
                  : mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
    return p == MAP_FAILED ? NULL : p;
#else
    (void)old, (void)old_bytes, (void)new_bytes, (void)target;
    errno = ENOSYS;
    return NULL;
#endif
}

int rtm_os_unmap(void *p, size_t bytes)
{
    count();
    return munmap(p, bytes);
}

int rtm_os_purge(void *p, size_t bytes)
{
    count();
    atomic_fetch_add_explicit(&purge_calls, 1, memory_order_relaxed);
    return madvise(p, bytes, MADV_DONTNEED);
}

int rtm_os_prefault_lock(void *p, size_t bytes)
{
    size_t ps = rtm_os_page_size();
    volatile char *c = p;
    for (size_t off = 0; off < bytes; off += ps)
        c[off] = 0; /* a write: a read would map the shared zero page */
    count();
    return mlock(p, bytes);
}

void rtm_os_yield(void) { sched_yield(); }

uint64_t rtm_os_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t rtm_os_calls(void) { return atomic_load_explicit(&calls, memory_order_relaxed); }
uint64_t rtm_os_purge_calls(void)
{
    return atomic_load_explicit(&purge_calls, memory_order_relaxed);
}
