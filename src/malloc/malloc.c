/*
 * malloc/malloc.c -- the allocator's API (include/rtmem/malloc.h):
 * initialisation and options, the large and aligned paths, realloc,
 * calloc, trim, the real-time arena and the fork handlers. The hot paths
 * are in fastpath.h; the drop-in names (malloc, free, ...) in dropin.c.
 *
 * Initialisation happens at the first allocation, from any thread, under
 * init_lock: options from the environment, the size-class table, the
 * real-time arena if asked for, the central lists, the thread-exit key.
 * Nothing in it calls malloc, so it cannot recurse. pthread_atfork, which
 * may allocate in glibc, is called after the lock is released.
 *
 * Before initialisation every fast path falls through to a slow path by
 * construction: the thread-cache pointer is NULL and the class table and
 * page map are all zero.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "malloc/fastpath.h"
#include "os/pages.h"

rtmm_options rtmm_opt = {1000, 0, 16, 0};
int rtmm_rt_mode;
atomic_size_t rtmm_failed_allocs, rtmm_foreign_frees;

enum { INIT_NONE, INIT_DONE };
static atomic_int init_state;
static atomic_int atfork_state;
static rtmm_lock init_lock;
static int init_errno;    /* non-zero: the real-time arena failed; every
                             allocation then fails (never a silent fallback) */
static int arena_by_call; /* rtm_malloc_arena() set the options */

/* --- options ---------------------------------------------------------------- */

extern char **environ;

/* getenv without libc's locale or allocation; environ may still be NULL
 * when the dynamic loader makes the first call. */
static const char *env(const char *name)
{
    size_t n = strlen(name);
    if (environ == NULL)
        return NULL;
    for (char **e = environ; *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* "123", "64k", "16m", "1g"; 0 when malformed. */
static size_t parse_size(const char *s)
{
    size_t v = 0;
    if (s == NULL || *s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10u + (size_t)(*s - '0');
    unsigned shift = *s == 'k' || *s == 'K'   ? 10u
                     : *s == 'm' || *s == 'M' ? 20u
                     : *s == 'g' || *s == 'G' ? 30u
                                              : 0u;
    if (shift && (v << shift) >> shift != v)
        return 0;
    return v << shift;
}

static void read_options(void)
{
    const char *v = env("RTMEM_DECAY_MS");
    if (v != NULL)
        rtmm_opt.decay_ms = v[0] == '-' ? -1 : (long)parse_size(v);
    v = env("RTMEM_SHOW_STATS");
    rtmm_opt.show_stats = v != NULL && v[0] == '1';
    if (!arena_by_call) {
        rtmm_opt.arena_bytes = parse_size(env("RTMEM_ARENA"));
        size_t t = parse_size(env("RTMEM_ARENA_THREADS"));
        if (t > 0 && t < 100000u)
            rtmm_opt.arena_threads = (unsigned)t;
    }
}

/* --- initialisation ------------------------------------------------------------ */

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* Real-time mode: the metadata region (span records for the worst case of
 * one span per page, the thread caches, the transfer caches) and the
 * arena, both pre-faulted and locked. */
static int setup_arena(void)
{
    size_t pages = rtmm_opt.arena_bytes >> PAGE_SHIFT;
    size_t xfer = 0;
    for (unsigned c = 1; c < rtmm_nclass; c++)
        xfer += rtmm_class[c].xcap * sizeof(void *);
    size_t meta = (pages + 16u) * ((sizeof(span) + 63u) & ~(size_t)63u) + xfer +
                  (size_t)rtmm_opt.arena_threads * rtmm_tc_bytes() + ((size_t)1 << 20);
    if (rtmm_meta_reserve(meta) != 0 || rtmm_heap_arena(rtmm_opt.arena_bytes) != 0)
        return -1;
    return 0;
}

static void init_locked(void)
{
    read_options();
    rtmm_sizeclass_init();
    if (rtmm_opt.arena_bytes != 0) {
        rtmm_rt_mode = 1;
        if (rtmm_opt.arena_bytes < ((size_t)1 << 20) || setup_arena() != 0)
            init_errno = ENOMEM;
    }
    if (init_errno == 0 && rtmm_central_init() != 0)
        init_errno = ENOMEM;
    if (init_errno == 0 && rtmm_rt_mode)
        rtmm_tc_prepare(rtmm_opt.arena_threads);
    rtmm_tc_init();
}

RTM_NOINLINE int rtmm_init(void)
{
    if (RTM_LIKELY(atomic_load_explicit(&init_state, memory_order_acquire) == INIT_DONE))
        return init_errno ? (errno = init_errno, -1) : 0;
    lock_take(&init_lock);
    if (atomic_load_explicit(&init_state, memory_order_relaxed) != INIT_DONE) {
        init_locked();
        atomic_store_explicit(&init_state, INIT_DONE, memory_order_release);
    }
    lock_give(&init_lock);
    /* Outside every lock: glibc's pthread_atfork may call malloc. */
    int expected = 0;
    if (atomic_compare_exchange_strong(&atfork_state, &expected, 1))
        (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
    return init_errno ? (errno = init_errno, -1) : 0;
}

int rtm_malloc_arena(size_t bytes, unsigned threads)
{
    lock_take(&init_lock);
    int busy = atomic_load_explicit(&init_state, memory_order_relaxed) == INIT_DONE;
    if (!busy) {
        arena_by_call = 1;
        rtmm_opt.arena_bytes = bytes;
        rtmm_opt.arena_threads = threads ? threads : 16u;
    }
    lock_give(&init_lock);
    if (busy) {
        errno = EBUSY;
        return -1;
    }
    if (bytes < ((size_t)1 << 20)) {
        arena_by_call = 0;
        rtmm_opt.arena_bytes = 0;
        errno = EINVAL;
        return -1;
    }
    return rtmm_init();
}

/* --- fork ------------------------------------------------------------------------ */

/* Every lock, in the global order, so that the child starts with none held
 * by a thread that does not exist there. */
static void fork_prepare(void)
{
    lock_take(&init_lock);
    rtmm_tc_fork_lock(1);
    rtmm_central_fork_lock(1);
    rtmm_heap_fork_lock(1);
    rtmm_meta_fork_lock(1);
}

static void fork_parent(void)
{
    rtmm_meta_fork_lock(0);
    rtmm_heap_fork_lock(0);
    rtmm_central_fork_lock(0);
    rtmm_tc_fork_lock(0);
    lock_give(&init_lock);
}

static void fork_child(void)
{
    rtmm_meta_fork_lock(-1);
    rtmm_heap_fork_lock(-1);
    rtmm_central_fork_lock(-1);
    rtmm_tc_fork_lock(-1);
    lock_reset(&init_lock);
    rtmm_tc_fork_child();
}

/* --- slow paths ------------------------------------------------------------------ */

RTM_COLD void *rtmm_fail(void)
{
    atomic_fetch_add_explicit(&rtmm_failed_allocs, 1, memory_order_relaxed);
    errno = ENOMEM;
    return NULL;
}

RTM_NOINLINE void *rtmm_alloc_large(size_t size, size_t align)
{
    if (rtmm_init() != 0)
        return rtmm_fail();
    span *s;
    if (size >= RTM_HUGE_MIN && !rtmm_rt_mode) {
        s = rtmm_huge_alloc(size, align);
    } else {
        size_t pages = (size >> PAGE_SHIFT) + ((size & (PAGE_BYTES - 1u)) != 0);
        if (pages == 0)
            pages = 1;
        s = rtmm_heap_alloc(pages, align > PAGE_BYTES ? align >> PAGE_SHIFT : 1u, SPAN_LARGE, 0);
    }
    return s ? (void *)s->start : rtmm_fail();
}

/* A page-map lookup for a block that is not small: large and huge blocks
 * (possibly an aligned pointer inside their first page run), or foreign. */
static span *large_span_of(const void *p)
{
    span *s = pm_span((uintptr_t)p);
    if (s == NULL || (s->state != SPAN_LARGE && s->state != SPAN_HUGE))
        return NULL;
    return s;
}

RTM_NOINLINE void rtmm_free_slow(void *p, unsigned cls)
{
    if (cls != 0) {
        rtmm_tc_free_slow(p, cls);
        return;
    }
    int saved = errno;
    span *s = large_span_of(p);
    if (s == NULL)
        atomic_fetch_add_explicit(&rtmm_foreign_frees, 1, memory_order_relaxed);
    else if (s->state == SPAN_HUGE)
        rtmm_huge_free(s);
    else
        rtmm_heap_free(s);
    errno = saved;
}

/* --- the API ----------------------------------------------------------------------- */

void *rtm_malloc(size_t size) { return fast_malloc(size); }

void rtm_malloc_free(void *ptr) { fast_free(ptr); }

size_t rtm_malloc_usable_size(const void *ptr)
{
    if (ptr == NULL)
        return 0;
    unsigned cls = pm_class((uintptr_t)ptr);
    if (cls != 0)
        return rtmm_class[cls].size;
    span *s = large_span_of(ptr);
    return s ? (size_t)(span_end(s) - (uintptr_t)ptr) : 0u;
}

void *rtm_malloc_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total))
        return rtmm_fail();
    void *p = fast_malloc(total);
    if (p == NULL)
        return NULL;
    if (total > SMALL_MAX) {
        span *s = large_span_of(p);
        if (s != NULL && s->zeroed) /* fresh or purged pages read as zero */
            return p;
    }
    memset(p, 0, total);
    return p;
}

void *rtm_malloc_aligned_alloc(size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    if (alignment <= MIN_ALIGN)
        return fast_malloc(size);
    if (alignment <= PAGE_BYTES && size <= SMALL_MAX) {
        if (rtmm_init() != 0)
            return rtmm_fail();
        unsigned cls = rtmm_class_for_aligned(size, alignment);
        if (cls != 0)
            return fast_alloc_class(cls, rtmm_class[cls].size);
    }
    return rtmm_alloc_large(size, alignment);
}

void *rtm_malloc_realloc(void *ptr, size_t size)
{
    if (ptr == NULL)
        return fast_malloc(size);
    if (size == 0) { /* glibc: frees and returns NULL */
        fast_free(ptr);
        return NULL;
    }
    size_t usable = rtm_malloc_usable_size(ptr);
    /* In place when it fits, unless a large block would waste over half. */
    if (size <= usable && (usable <= SMALL_MAX || size >= usable / 2u))
        return ptr;
    void *q = fast_malloc(size);
    if (q == NULL)
        return NULL;
    memcpy(q, ptr, size < usable ? size : usable);
    fast_free(ptr);
    return q;
}

size_t rtm_malloc_trim(void)
{
    if (rtmm_init() != 0 || rtmm_rt_mode)
        return 0;
    rtmm_tc_flush_self();
    rtmm_central_drain(1);
    return rtmm_heap_purge(1);
}

void rtm_malloc_thread_flush(void)
{
    if (atomic_load_explicit(&init_state, memory_order_acquire) == INIT_DONE)
        rtmm_tc_flush_self();
}

int rtm_malloc_check(void)
{
    if (rtmm_init() != 0)
        return -1;
    if (rtmm_tc_check() != 0 || rtmm_central_check() != 0 || rtmm_heap_check() != 0)
        return -1;
    return 0;
}
