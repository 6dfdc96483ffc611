// SPDX-License-Identifier: MIT
/*
 * replay_target.c -- the two kinds of replay target (replay.h).
 *
 * rtm heap: a private anonymous mapping, pre-faulted by default as a
 * real-time system locks its region in advance, so that the replay times
 * the allocator and not the kernel's first touch. Its footprint is the
 * region's high-water mark: the highest end of any block handed out, from
 * the region's start (what the region must at least be for this run's
 * layout); held bytes are the region minus what the heap reports free
 * (rtm_heap_stats), i.e. blocks with their headers and rounding.
 *
 * malloc: the process's own (glibc, or the peer LD_PRELOAD put in front);
 * held bytes are the resident set above the resident set at the start, the
 * only measure every malloc shares. Read with open/read, not stdio: a FILE
 * would allocate through the malloc being measured.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/region.h"
#include "trace/replay.h"
#include "rtmem.h"

/* --- rtm ------------------------------------------------------------------- */

static void *rtm_t_alloc(void *ctx, size_t size, size_t align)
{
    replay_rtm *h = ctx;
    return align > RTM_ALIGN ? rtm_aligned_alloc(h->heap, align, size) : rtm_alloc(h->heap, size);
}

static void *rtm_t_resize(void *ctx, void *p, size_t size)
{
    replay_rtm *h = ctx;
    return rtm_realloc(h->heap, p, size);
}

static void rtm_t_release(void *ctx, void *p)
{
    replay_rtm *h = ctx;
    rtm_free(h->heap, p);
}

static uint64_t rtm_t_held(void *ctx)
{
    replay_rtm *h = ctx;
    rtm_stats s = rtm_heap_stats(h->heap);
    return s.arena_bytes > s.free_bytes ? (uint64_t)(s.arena_bytes - s.free_bytes) : 0;
}

static void rtm_t_note(void *ctx, const void *p)
{
    replay_rtm *h = ctx;
    uint64_t end = (uint64_t)((const char *)p - (const char *)h->mem) + rtm_usable_size(h->heap, p);
    if (end > h->hwm)
        h->hwm = end;
}

int replay_rtm_open(replay_rtm *h, const char *algorithm, uint64_t bytes, int prefault, char *why,
                    size_t why_n)
{
    memset(h, 0, sizeof *h);
    /* Pre-faulting more than 1 GiB would test the machine's memory, not
     * the heap: larger regions fault as they are used. */
    if (bytes > (UINT64_C(1) << 30))
        prefault = 0;
    void *m = prefault ? region_prefaulted(bytes)
                       : mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == NULL || m == MAP_FAILED) {
        snprintf(why, why_n, "cannot map a region of %llu bytes", (unsigned long long)bytes);
        return -1;
    }
    h->mem = m;
    h->bytes = (size_t)bytes;
    h->heap = rtm_heap_create(algorithm, m, (size_t)bytes);
    if (h->heap == NULL) {
        snprintf(why, why_n, "rtm_heap_create(%s, %llu bytes) failed", algorithm,
                 (unsigned long long)bytes);
        munmap(m, (size_t)bytes);
        h->mem = NULL;
        return -1;
    }
    return 0;
}

void replay_rtm_close(replay_rtm *h)
{
    /* Destroyed before unmapped: a tracked build (ASan) keeps its poison on
     * the range otherwise, and the next region mapped there starts poisoned. */
    if (h->heap != NULL)
        rtm_heap_destroy(h->heap);
    if (h->mem != NULL)
        munmap(h->mem, h->bytes);
    h->mem = h->heap = NULL;
}

replay_target replay_rtm_target(replay_rtm *h, int track)
{
    replay_target t = {h,
                       rtm_t_alloc,
                       rtm_t_resize,
                       rtm_t_release,
                       track ? rtm_t_held : NULL,
                       track ? rtm_t_note : NULL,
                       NULL};
    return t;
}

/* --- malloc ------------------------------------------------------------------ */

static void *m_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    if (align <= sizeof(void *) * 2)
        return malloc(size);
    void *p = NULL;
    return posix_memalign(&p, align, size) == 0 ? p : NULL;
}

static void *m_resize(void *ctx, void *p, size_t size)
{
    (void)ctx;
    return realloc(p, size);
}

static void m_release(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static uint64_t m_held(void *ctx)
{
    uint64_t base = *(const uint64_t *)ctx, now = replay_rss_now();
    return now > base ? now - base : 0;
}

replay_target replay_malloc_target(uint64_t *base_rss)
{
    replay_target t = {base_rss, m_alloc, m_resize, m_release, m_held, NULL, NULL};
    return t;
}

/* Reads a small /proc file into buf without stdio. */
static size_t read_proc(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, buf, n - 1);
    close(fd);
    buf[k > 0 ? k : 0] = '\0';
    return k > 0 ? (size_t)k : 0;
}

uint64_t replay_rss_now(void)
{
    char buf[128];
    if (read_proc("/proc/self/statm", buf, sizeof buf) == 0)
        return 0;
    const char *p = strchr(buf, ' ');
    return p != NULL ? strtoull(p + 1, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

uint64_t replay_rss_peak(void)
{
    char buf[4096];
    if (read_proc("/proc/self/status", buf, sizeof buf) == 0)
        return 0;
    const char *p = strstr(buf, "VmHWM:");
    return p != NULL ? strtoull(p + 6, NULL, 10) * 1024u : 0;
}
