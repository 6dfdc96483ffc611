// SPDX-License-Identifier: MIT
/*
 * malloc/options.c -- start-up of rtmem's malloc: the options (environment
 * variables, docs/MALLOC.md "Options"), initialisation, the real-time
 * arena's set-up, the fork handlers and the RTMEM_SHOW_STATS printout at
 * exit. The API and its slow paths are in malloc.c, the layer above; this
 * file calls only the layers below it (internal.h), the statistics
 * (stats.c) included.
 *
 * Initialisation happens at the first allocation, from any thread, under
 * init_lock: options from the environment, the size-class table, the
 * real-time arena if asked for, the central lists, the thread-exit key.
 * Nothing in it calls malloc, so it cannot recurse. pthread_atfork, which
 * may allocate in glibc, is called after the lock is released.
 *
 * Before initialisation every fast path falls through to a slow path by
 * construction: the thread-cache pointer is NULL and the class table and
 * page map are all zero. The allocation fast paths (fastpath.h) come here
 * through rtmm_alloc_first() when the thread has no cache yet, so the
 * layers below never call back up into initialisation.
 *
 * Options are parsed strictly: a value that is not exactly what the
 * documentation says gets one line on stderr naming the variable, the
 * value and what was expected, and then a documented behaviour:
 *  - RTMEM_ARENA / RTMEM_ARENA_THREADS (the real-time mode): the mode is
 *    not started and every allocation fails with ENOMEM. The user asked
 *    for "no system call, no page fault after start-up"; running on in
 *    normal mode would break that promise silently, in production, long
 *    after the typo. The same holds for an arena larger than the machine's
 *    memory: pre-faulting it would end in the OOM killer (a SIGKILL, no
 *    message), and a smaller arena than asked would fail allocations the
 *    user's budget did not plan for.
 *  - RTMEM_DECAY_MS, RTMEM_SHOW_STATS (no guarantee at stake): the default
 *    stays in force.
 *
 * Messages: initialisation may run before main, inside the dynamic
 * loader's first call into malloc, or in a program that closed stderr. A
 * message is therefore built in a stack buffer and written to fd 2 with one
 * write(2) -- no stdio, no allocation, no locale --, and a write error is
 * ignored. Initialisation runs once, so every message appears at most once.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "malloc/internal.h"
#include "os/pages.h"

rtmm_options rtmm_opt = {1000, 0, 16, 0};
int rtmm_rt_mode;

enum { INIT_NONE, INIT_DONE };
static atomic_int init_state;
static atomic_int atfork_state;
static rtmm_lock init_lock;
static int init_errno;    /* non-zero: the real-time mode was asked for and
                             could not start; every allocation then fails
                             (never a silent fallback to normal mode) */
static int arena_by_call; /* rtm_malloc_arena() set the options */

/* RTMEM_STATS_FILE, copied at initialisation (the environment may change
 * before exit); "" when unset: the statistics go to stderr. */
static char stats_path[4096];

#define ARENA_MIN         ((uint64_t)1 << 20)
#define ARENA_THREADS_MAX 65536u
#define DECAY_MS_MAX      2147483647u /* fits a 32-bit long: 24.8 days */

/* --- messages ------------------------------------------------------------- */

/* "rtmem-malloc: NAME="value": " -- the value cut to 64 bytes and anything
 * unprintable shown as '?', so a stray control character cannot garble the
 * terminal. */
static void msg_start(rtmm_text *m, const char *name, const char *value)
{
    rtmm_text_put(m, "rtmem-malloc: ");
    rtmm_text_put(m, name);
    rtmm_text_put(m, "=\"");
    char shown[68];
    size_t n = 0;
    for (; n < 64u && value[n] != '\0'; n++)
        shown[n] = (unsigned char)value[n] >= 0x20u && value[n] != 0x7f ? value[n] : '?';
    shown[n] = '\0';
    rtmm_text_put(m, shown);
    rtmm_text_put(m, value[n] != '\0' ? "...\": " : "\": ");
}

static void msg_send(rtmm_text *m)
{
    rtmm_text_put(m, "\n");
    rtmm_text_write(m, 2);
}

/* The message for a real-time option that stops the mode: `why` follows
 * the value, the consequence ends the line. Returns -1 for the caller. */
static int arena_refused(const char *name, const char *value, const char *why)
{
    char buf[512];
    rtmm_text m = {buf, sizeof buf, 0};
    msg_start(&m, name, value);
    rtmm_text_put(&m, why);
    rtmm_text_put(&m, "; real-time mode not started, every allocation fails with ENOMEM");
    msg_send(&m);
    return -1;
}

/* --- parsing ------------------------------------------------------------------ */

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

/* Decimal digits at *s (at least one), advancing *s; the value saturates
 * at UINT64_MAX (no wrap-around: 99999999999999999999 is not 7.7e18).
 * -1 when *s does not start with a digit. No sign, no space, no "0x". */
static int parse_digits(const char **s, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        v = v > (UINT64_MAX - d) / 10u ? UINT64_MAX : v * 10u + d;
    }
    *s = p;
    *out = v;
    return 0;
}

/* "<digits>" and nothing else. */
static int parse_count(const char *s, uint64_t *out)
{
    return parse_digits(&s, out) == 0 && *s == '\0' ? 0 : -1;
}

/* "<digits>[k|m|g]" (either case; binary multiples) and nothing else:
 * "64m", "1G", "4096". Saturates like parse_digits. */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v;
    if (parse_digits(&s, &v) != 0)
        return -1;
    unsigned shift = *s == 'k' || *s == 'K'   ? 10u
                     : *s == 'm' || *s == 'M' ? 20u
                     : *s == 'g' || *s == 'G' ? 30u
                                              : 0u;
    if (shift != 0)
        s++;
    if (*s != '\0')
        return -1;
    *out = v > (UINT64_MAX >> shift) ? UINT64_MAX : v << shift;
    return 0;
}

/* --- options ---------------------------------------------------------------------- */

/* RTMEM_DECAY_MS: "<digits>" up to DECAY_MS_MAX, or exactly "-1". */
static void read_decay(void)
{
    const char *v = env("RTMEM_DECAY_MS");
    uint64_t ms;
    if (v == NULL)
        return;
    if (strcmp(v, "-1") == 0) {
        rtmm_opt.decay_ms = -1;
    } else if (parse_count(v, &ms) == 0 && ms <= DECAY_MS_MAX) {
        rtmm_opt.decay_ms = (long)ms;
    } else {
        char buf[512];
        rtmm_text m = {buf, sizeof buf, 0};
        msg_start(&m, "RTMEM_DECAY_MS", v);
        rtmm_text_put(&m, "not a time (expected milliseconds, 0 to 2147483647, or -1 for "
                          "never); using the default, ");
        rtmm_text_num(&m, (uint64_t)rtmm_opt.decay_ms);
        msg_send(&m);
    }
}

/* RTMEM_SHOW_STATS: "0" or "1"; RTMEM_STATS_FILE: any path that fits. */
static void read_stats(void)
{
    const char *v = env("RTMEM_SHOW_STATS");
    if (v != NULL && (v[0] == '0' || v[0] == '1') && v[1] == '\0') {
        rtmm_opt.show_stats = v[0] == '1';
    } else if (v != NULL) {
        char buf[512];
        rtmm_text m = {buf, sizeof buf, 0};
        msg_start(&m, "RTMEM_SHOW_STATS", v);
        rtmm_text_put(&m, "expected 0 or 1; statistics not shown");
        msg_send(&m);
    }
    v = env("RTMEM_STATS_FILE");
    if (v != NULL && strlen(v) < sizeof stats_path) {
        memcpy(stats_path, v, strlen(v) + 1u);
    } else if (v != NULL) {
        char buf[512];
        rtmm_text m = {buf, sizeof buf, 0};
        msg_start(&m, "RTMEM_STATS_FILE", v);
        rtmm_text_put(&m, "longer than 4095 bytes; statistics go to stderr");
        msg_send(&m);
    }
}

/* --- real-time arena ------------------------------------------------------------- */

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* The metadata real-time mode reserves for an arena: span records for the
 * worst case of one span per page, the transfer caches, `threads` thread
 * caches and 1 MiB of slack (page-map leaves come from it). Saturates. */
static uint64_t arena_meta(uint64_t bytes, uint64_t threads)
{
    uint64_t xfer = 0;
    for (unsigned c = 1; c < rtmm_nclass; c++)
        xfer += rtmm_class[c].xcap * sizeof(void *);
    uint64_t spans = sat_mul((bytes >> PAGE_SHIFT) + 16u, (sizeof(span) + 63u) & ~(size_t)63u);
    uint64_t caches = sat_mul(threads, rtmm_tc_bytes());
    return sat_add(sat_add(spans, caches), xfer + ((uint64_t)1 << 20));
}

/* How much real-time mode may pre-fault: the machine's physical memory
 * (sysinfo through sysconf: no allocation), and on 32-bit the address
 * space. *what names the bound for the message. */
static uint64_t memory_limit(const char **what)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    uint64_t phys = pages > 0 ? sat_mul((uint64_t)pages, rtm_os_page_size()) : UINT64_MAX;
    *what = "this machine's memory";
    if (phys > (uint64_t)SIZE_MAX) {
        *what = "the address space";
        return (uint64_t)SIZE_MAX;
    }
    return phys;
}

/* 1 when the arena and its metadata fit the memory limit; otherwise
 * prints why (when `name` is an environment variable) and returns 0. */
static int arena_fits(uint64_t bytes, uint64_t threads, const char *name, const char *value)
{
    const char *what;
    uint64_t limit = memory_limit(&what);
    if (sat_add(bytes, arena_meta(bytes, threads)) <= limit)
        return 1;
    if (name != NULL) {
        char why[160];
        rtmm_text m = {why, sizeof why, 0};
        rtmm_text_put(&m, "larger than ");
        rtmm_text_put(&m, what);
        rtmm_text_put(&m, " (the arena and its metadata must fit in ");
        rtmm_text_num(&m, limit >> 20);
        rtmm_text_put(&m, " MiB)");
        why[m.n < sizeof why ? m.n : sizeof why - 1u] = '\0';
        arena_refused(name, value, why);
    }
    return 0;
}

/* RTMEM_ARENA and RTMEM_ARENA_THREADS (read only with RTMEM_ARENA): 0 when
 * unset (normal mode), 1 with rtmm_opt set, -1 after a message. */
static int arena_from_env(void)
{
    const char *v = env("RTMEM_ARENA");
    const char *t = env("RTMEM_ARENA_THREADS");
    uint64_t bytes, threads = 16u;
    if (v == NULL)
        return 0;
    if (parse_size(v, &bytes) != 0)
        return arena_refused("RTMEM_ARENA", v, "not a size (expected <digits>[k|m|g], e.g. 256m)");
    if (bytes < ARENA_MIN)
        return arena_refused("RTMEM_ARENA", v, "too small (at least 1m)");
    if (t != NULL && (parse_count(t, &threads) != 0 || threads < 1u || threads > ARENA_THREADS_MAX))
        return arena_refused("RTMEM_ARENA_THREADS", t, "not a thread count (expected 1 to 65536)");
    if (!arena_fits(bytes, threads, "RTMEM_ARENA", v))
        return -1;
    rtmm_opt.arena_bytes = (size_t)bytes;
    rtmm_opt.arena_threads = (unsigned)threads;
    return 1;
}

/* The metadata region and the arena, both pre-faulted and locked. The
 * sizes were checked against the memory limit, so they fit a size_t. */
static int setup_arena(void)
{
    size_t meta = (size_t)arena_meta(rtmm_opt.arena_bytes, rtmm_opt.arena_threads);
    if (rtmm_meta_reserve(meta) != 0 || rtmm_heap_arena(rtmm_opt.arena_bytes) != 0)
        return -1;
    return 0;
}

/* Real-time mode's start: 0, or -1 (every allocation will fail). */
static int start_arena(int from_env)
{
    rtmm_rt_mode = 1;
    if (from_env < 0)
        return -1;
    if (!arena_fits(rtmm_opt.arena_bytes, rtmm_opt.arena_threads, NULL, NULL) ||
        setup_arena() != 0) {
        if (from_env) {
            int e = errno;
            char why[160];
            rtmm_text m = {why, sizeof why, 0};
            rtmm_text_put(&m, "the arena or its metadata could not be mapped (errno ");
            rtmm_text_num(&m, (uint64_t)e);
            rtmm_text_put(&m, ")");
            why[m.n < sizeof why ? m.n : sizeof why - 1u] = '\0';
            arena_refused("RTMEM_ARENA", env("RTMEM_ARENA"), why);
        }
        return -1;
    }
    return 0;
}

/* --- initialisation ------------------------------------------------------------ */

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void init_locked(void)
{
    read_decay();
    read_stats();
    rtmm_sizeclass_init();
    int from_env = arena_by_call ? 0 : arena_from_env();
    if ((arena_by_call || from_env != 0) && start_arena(from_env) != 0)
        init_errno = ENOMEM;
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

int rtmm_init_for_stats(void) { return rtmm_init() == 0 || rtmm_rt_mode; }

RTM_NOINLINE void *rtmm_alloc_first(size_t size)
{
    if (rtmm_init() != 0)
        return NULL;
    return rtmm_tc_alloc_slow(size);
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
    if (bytes < ARENA_MIN) {
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

/* --- RTMEM_SHOW_STATS at exit ------------------------------------------------------ */

/* The file name with %p replaced by the pid and %% by %; 0, or -1 when the
 * result does not fit. */
static int expand_path(char *out, size_t cap)
{
    rtmm_text t = {out, cap, 0};
    for (const char *s = stats_path; *s != '\0'; s++) {
        char one[2] = {*s, '\0'};
        if (s[0] == '%' && (s[1] == 'p' || s[1] == '%')) {
            if (*++s == 'p')
                rtmm_text_num(&t, (uint64_t)getpid());
            else
                rtmm_text_put(&t, "%");
        } else {
            rtmm_text_put(&t, one);
        }
    }
    if (t.n >= cap)
        return -1;
    out[t.n] = '\0';
    return 0;
}

/* Common errno values of open(2) in words; strerror may allocate (its
 * locale machinery) and is avoided. */
static const char *open_error(int e)
{
    switch (e) {
    case ENOENT:
        return "No such file or directory";
    case EACCES:
        return "Permission denied";
    case ENOTDIR:
        return "Not a directory";
    case EISDIR:
        return "Is a directory";
    case EROFS:
        return "Read-only file system";
    case ENAMETOOLONG:
        return "File name too long";
    case EMFILE:
        return "Too many open files";
    case ENOSPC:
        return "No space left on device";
    default:
        return NULL;
    }
}

/* Opens the statistics file (append, created 0644), or says on stderr why
 * not and returns 2 (stderr), so that the statistics are never lost
 * silently. */
static int open_stats_file(void)
{
    char path[sizeof stats_path];
    int fd = -1;
    errno = ENAMETOOLONG;
    if (expand_path(path, sizeof path) == 0)
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0)
        return fd;
    int e = errno;
    char buf[512];
    rtmm_text m = {buf, sizeof buf, 0};
    msg_start(&m, "RTMEM_STATS_FILE", stats_path);
    rtmm_text_put(&m, "cannot open it (");
    if (open_error(e) != NULL) {
        rtmm_text_put(&m, open_error(e));
    } else {
        rtmm_text_put(&m, "errno ");
        rtmm_text_num(&m, (uint64_t)e);
    }
    rtmm_text_put(&m, "); the statistics follow on stderr");
    msg_send(&m);
    return 2;
}

/* A destructor, not atexit(): registering with atexit may allocate. Here,
 * in the file every program links, so that a static link with
 * librtmem-malloc.a prints too (stats.o alone would not be pulled in; this
 * call pulls it). The same statistics as rtm_malloc_print_stats(), whose
 * file (malloc.c) is a layer above this one. */
__attribute__((destructor)) static void show_stats_at_exit(void)
{
    if (!rtmm_opt.show_stats)
        return;
    int saved = errno;
    int fd = stats_path[0] != '\0' ? open_stats_file() : 2;
    rtmm_stats_print(rtmm_stats(rtmm_init_for_stats()), fd);
    if (fd != 2)
        (void)close(fd);
    errno = saved;
}
