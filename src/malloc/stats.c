/*
 * malloc/stats.c -- rtm_malloc_stats() and its human printout, which
 * RTMEM_SHOW_STATS=1 prints at exit.
 *
 * The printout uses write(2) and its own number formatting: stdio may
 * allocate, and at exit it may already be torn down.
 */
#include <string.h>
#include <unistd.h>

#include "malloc/internal.h"
#include "os/pages.h"

rtm_malloc_stats_t rtm_malloc_stats(void)
{
    rtm_malloc_stats_t st;
    memset(&st, 0, sizeof st);
    if (rtmm_init() != 0 && !rtmm_rt_mode)
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

typedef struct out {
    char buf[2048];
    size_t n;
} out;

static void put(out *o, const char *s)
{
    size_t k = strlen(s);
    if (k > sizeof o->buf - o->n)
        k = sizeof o->buf - o->n;
    memcpy(o->buf + o->n, s, k);
    o->n += k;
}

static void put_num(out *o, size_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    tmp[--i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0 && i > 0);
    put(o, tmp + i);
}

/* "name: 123456 B (120.5 MiB)" style, in KiB when large. */
static void line(out *o, const char *name, size_t v, int bytes)
{
    put(o, "  ");
    put(o, name);
    put(o, ": ");
    put_num(o, v);
    if (bytes && v >= 10240u) {
        put(o, " (");
        put_num(o, v >> 10);
        put(o, " KiB)");
    }
    put(o, "\n");
}

void rtm_malloc_print_stats(int fd)
{
    rtm_malloc_stats_t st = rtm_malloc_stats();
    out o;
    o.n = 0;
    put(&o, "rtmem malloc statistics\n");
    line(&o, "mapped bytes", st.mapped_bytes, 1);
    line(&o, "resident bytes (upper bound)", st.resident_bytes, 1);
    line(&o, "metadata bytes", st.metadata_bytes, 1);
    line(&o, "in use bytes", st.in_use_bytes, 1);
    line(&o, "small span bytes", st.small_span_bytes, 1);
    line(&o, "thread cache bytes", st.thread_cache_bytes, 1);
    line(&o, "central cache bytes", st.central_cache_bytes, 1);
    line(&o, "large bytes", st.large_bytes, 1);
    line(&o, "huge bytes", st.huge_bytes, 1);
    line(&o, "page heap free bytes", st.page_heap_free_bytes, 1);
    line(&o, "page heap purged bytes", st.page_heap_purged_bytes, 1);
    line(&o, "purges (madvise)", st.purges, 0);
    line(&o, "OS calls", st.os_calls, 0);
    line(&o, "threads with a cache", st.threads, 0);
    line(&o, "thread caches reclaimed", st.threads_reclaimed, 0);
    line(&o, "failed allocations (ENOMEM)", st.failed_allocs, 0);
    line(&o, "foreign frees ignored", st.foreign_frees, 0);
    if (st.arena_bytes) {
        line(&o, "real-time arena bytes", st.arena_bytes, 1);
        line(&o, "real-time arena free bytes", st.arena_free_bytes, 1);
        line(&o, "real-time arena exhausted", st.arena_exhausted, 0);
        line(&o, "real-time arena locked", (size_t)st.arena_locked, 0);
    }
    put(&o, "  decay ms: ");
    if (st.decay_ms < 0)
        put(&o, "never");
    else
        put_num(&o, (size_t)st.decay_ms);
    put(&o, "\n");
    size_t off = 0;
    while (off < o.n) {
        ssize_t w = write(fd, o.buf + off, o.n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

/* RTMEM_SHOW_STATS=1: the printout at exit, to stderr. A destructor, not
 * atexit(): registering with atexit may allocate. */
__attribute__((destructor)) static void show_stats_at_exit(void)
{
    if (rtmm_opt.show_stats)
        rtm_malloc_print_stats(2);
}
