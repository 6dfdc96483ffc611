// SPDX-License-Identifier: MIT
/*
 * malloc/stats.c -- the statistics of rtm_malloc_stats() and their human
 * printout, read from every layer below, and the stdio-free text helpers
 * the printout and the option messages use. It sits below initialisation
 * (options.c) and calls nothing above it: the API (malloc.c) and the
 * RTMEM_SHOW_STATS=1 printout at exit (options.c) initialise first, with
 * rtmm_init_for_stats(), and say whether there is anything to read.
 *
 * The printout uses write(2) and its own number formatting: stdio may
 * allocate, and at exit it may already be torn down. Its first line names
 * the program and the process, because the printout usually lands in a
 * log or a file shared by several processes (RTMEM_STATS_FILE with
 * O_APPEND, a shell pipeline, a test runner).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "malloc/internal.h"
#include "os/pages.h"

rtm_malloc_stats_t rtmm_stats(int ready)
{
    rtm_malloc_stats_t st;
    memset(&st, 0, sizeof st);
    if (!ready)
        return st;
    heap_totals h = rtmm_heap_totals();
    size_t span_bytes, out_bytes, xfer_bytes;
    rtmm_central_totals(&span_bytes, &out_bytes, &xfer_bytes);
    st.thread_cache_bytes = rtmm_tc_totals(&st.threads, &st.threads_reclaimed);
    st.metadata_bytes = rtmm_meta_bytes() + rtmm_pm_bytes();
    st.mapped_bytes = h.mapped + st.metadata_bytes;
    st.page_heap_free_bytes = h.free_pages << PAGE_SHIFT;
    st.page_heap_purged_bytes = (h.free_pages - h.dirty_pages) << PAGE_SHIFT;
    st.resident_bytes = st.mapped_bytes - st.page_heap_purged_bytes;
    st.small_span_bytes = h.small_pages << PAGE_SHIFT;
    st.central_cache_bytes = xfer_bytes;
    st.large_bytes = h.large_pages << PAGE_SHIFT;
    st.huge_bytes = h.huge_bytes;
    size_t small_in_use = out_bytes - xfer_bytes;
    small_in_use = small_in_use > st.thread_cache_bytes ? small_in_use - st.thread_cache_bytes : 0;
    st.in_use_bytes = small_in_use + st.large_bytes + st.huge_bytes;
    st.purges = h.purges;
    st.os_calls = (size_t)rtm_os_calls();
    st.failed_allocs = atomic_load_explicit(&rtmm_failed_allocs, memory_order_relaxed);
    st.foreign_frees = atomic_load_explicit(&rtmm_foreign_frees, memory_order_relaxed);
    st.arena_bytes = h.arena_bytes;
    st.arena_free_bytes = h.arena_bytes ? st.page_heap_free_bytes : 0u;
    st.arena_exhausted = h.arena_exhausted;
    st.arena_locked = h.arena_locked;
    st.decay_ms = rtmm_opt.decay_ms;
    return st;
}

/* --- printing without stdio ----------------------------------------------------- */

void rtmm_text_put(rtmm_text *t, const char *s)
{
    size_t k = strlen(s);
    if (k > t->cap - t->n)
        k = t->cap - t->n;
    memcpy(t->buf + t->n, s, k);
    t->n += k;
}

void rtmm_text_num(rtmm_text *t, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    tmp[--i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0 && i > 0);
    rtmm_text_put(t, tmp + i);
}

void rtmm_text_write(const rtmm_text *t, int fd)
{
    size_t off = 0;
    while (off < t->n) {
        ssize_t w = write(fd, t->buf + off, t->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

/* "name: 123456 (120 KiB)" style, in KiB when large. */
static void line(rtmm_text *o, const char *name, size_t v, int bytes)
{
    rtmm_text_put(o, "  ");
    rtmm_text_put(o, name);
    rtmm_text_put(o, ": ");
    rtmm_text_num(o, v);
    if (bytes && v >= 10240u) {
        rtmm_text_put(o, " (");
        rtmm_text_num(o, v >> 10);
        rtmm_text_put(o, " KiB)");
    }
    rtmm_text_put(o, "\n");
}

/* The program's short name: glibc's program_invocation_short_name (the
 * basename of argv[0], set before any constructor runs); elsewhere the
 * kernel's /proc/self/comm (cut to 15 bytes); "?" when neither is there.
 * Control characters become '?' (the line must stay one line). */
static void put_program(rtmm_text *o)
{
    char name[64];
    size_t n = 0;
#if defined(__GLIBC__)
    const char *p = program_invocation_short_name;
    for (; p != NULL && p[n] != '\0' && n < sizeof name - 1u; n++)
        name[n] = p[n];
#endif
    if (n == 0) {
        int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
        ssize_t r = fd >= 0 ? read(fd, name, sizeof name - 1u) : -1;
        if (fd >= 0)
            (void)close(fd);
        n = r > 0 ? (size_t)r : 0u;
        while (n > 0 && name[n - 1u] == '\n')
            n--;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20u || name[i] == 0x7f)
            name[i] = '?';
    name[n] = '\0';
    rtmm_text_put(o, n ? name : "?");
}

void rtmm_stats_print(rtm_malloc_stats_t st, int fd)
{
    char buf[4096];
    rtmm_text text = {buf, sizeof buf, 0}, *o = &text;
    rtmm_text_put(o, "rtmem-malloc stats: ");
    put_program(o);
    rtmm_text_put(o, " [pid ");
    rtmm_text_num(o, (uint64_t)getpid());
    rtmm_text_put(o, "]\n");
    line(o, "mapped bytes", st.mapped_bytes, 1);
    line(o, "resident bytes (upper bound)", st.resident_bytes, 1);
    line(o, "metadata bytes", st.metadata_bytes, 1);
    line(o, "in use bytes", st.in_use_bytes, 1);
    line(o, "small span bytes", st.small_span_bytes, 1);
    line(o, "thread cache bytes", st.thread_cache_bytes, 1);
    line(o, "central cache bytes", st.central_cache_bytes, 1);
    line(o, "large bytes", st.large_bytes, 1);
    line(o, "huge bytes", st.huge_bytes, 1);
    line(o, "page heap free bytes", st.page_heap_free_bytes, 1);
    line(o, "page heap purged bytes", st.page_heap_purged_bytes, 1);
    line(o, "purges (madvise)", st.purges, 0);
    line(o, "OS calls", st.os_calls, 0);
    line(o, "threads with a cache", st.threads, 0);
    line(o, "thread caches reclaimed", st.threads_reclaimed, 0);
    line(o, "failed allocations (ENOMEM)", st.failed_allocs, 0);
    line(o, "foreign frees ignored", st.foreign_frees, 0);
    if (st.arena_bytes) {
        line(o, "real-time arena bytes", st.arena_bytes, 1);
        line(o, "real-time arena free bytes", st.arena_free_bytes, 1);
        line(o, "real-time arena exhausted", st.arena_exhausted, 0);
        line(o, "real-time arena locked", (size_t)st.arena_locked, 0);
    }
    rtmm_text_put(o, "  decay ms: ");
    if (st.decay_ms < 0)
        rtmm_text_put(o, "never");
    else
        rtmm_text_num(o, (size_t)st.decay_ms);
    rtmm_text_put(o, "\n");
    rtmm_text_write(o, fd);
}
