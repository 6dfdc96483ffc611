// SPDX-License-Identifier: MIT
/*
 * record.c -- librtmem-record.so, the LD_PRELOAD allocation recorder behind
 * `rtmem record` (tools/lab/trace/record.c). It wraps malloc, calloc, realloc,
 * free, aligned_alloc, posix_memalign, memalign, valloc, pvalloc and the C++
 * operators new and delete (plain, array, nothrow, sized, aligned) and
 * appends one trace_record (tools/lab/trace/trace_format.h, docs/TRACE.md) per call
 * to the file named by $RTMEM_RECORD_FILE.
 *
 * Rules this file keeps, and why:
 *  - It never calls the traced program's malloc: its own memory (the address
 *    -> id table, the per-thread buffers) comes from mmap, and the trace goes
 *    out with write(2). A recorder that allocated through malloc would record
 *    itself and could recurse.
 *  - Addresses never reach the file: a block gets the next id (1, 2, ...)
 *    when it is handed out and keeps it until freed. The table is an
 *    open-addressing hash table with linear probing and backward-shift
 *    deletion (no tombstones, so it never degrades), behind one mutex,
 *    doubled when 3/4 full (from 4 Ki up to 16 Mi slots).
 *  - Order: the id table's mutex also hands out the sequence number, and a
 *    block leaves the table *before* the real free runs and enters it
 *    *after* the real malloc returned. So an address is in the table exactly
 *    while it is live, and the sequence numbers order every free before any
 *    later allocation that reuses its address, across threads.
 *  - Records are buffered per thread (64 KiB each, a record is 40 bytes) and
 *    written whole under a write mutex; a buffer goes to a free list when its
 *    thread exits (pthread key destructor) and everything left is written at
 *    exit (library destructor). A process that ends with _exit or a signal
 *    loses its unwritten buffers: docs/TRACE.md says so.
 *  - dlsym() may call calloc before the real calloc is known: while the real
 *    functions are being looked up, allocations come from a small static
 *    arena and are never recorded or really freed (the usual bootstrap).
 *  - Calls made by the real functions themselves (libstdc++'s operator new
 *    calls malloc) are not recorded twice: a per-thread depth counter marks
 *    the outermost wrapped call; the cleanup attribute restores it when an
 *    exception (std::bad_alloc) leaves operator new (built with -fexceptions).
 *  - fork(): the child stops recording (its buffers hold the parent's
 *    records, which the parent writes). exec() keeps the trace: which file a
 *    process writes, and how the next image of the same process goes on
 *    with it, is record_process.c's part (record_internal.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "record_internal.h"
#include "trace/trace_format.h"

#define EXPORT         __attribute__((visibility("default")))
#define TABLE_LOG2_MIN 12u   /* 4 Ki slots (64 KiB) to start with                 */
#define TABLE_LOG2_MAX 24u   /* 16 Mi slots (256 MiB): 12 Mi live blocks at most  */
#define BUF_RECORDS    1638u /* 64 KiB / 40 bytes               */
#define BOOT_BYTES     (64u * 1024u)

/* --- the real functions ---------------------------------------------------- */

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*pmemalign_fn)(void **, size_t, size_t);
typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void (*del_fn)(void *);

static struct {
    malloc_fn malloc;
    calloc_fn calloc;
    realloc_fn realloc;
    free_fn free;
    memalign_fn aligned_alloc, memalign;
    pmemalign_fn posix_memalign;
    malloc_fn valloc, pvalloc;
} real;

/* --- state ------------------------------------------------------------------ */

typedef struct slot {
    uintptr_t addr; /* 0: empty */
    uint32_t id;
    uint32_t pad;
} slot;

typedef struct tbuf {
    struct tbuf *next_free;
    uint32_t n;
    uint16_t thread;
    trace_record rec[BUF_RECORDS];
} tbuf;

enum { ST_NONE, ST_RESOLVING, ST_ON, ST_OFF };

static _Atomic int state = ST_NONE;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static slot *table; /* 1 << table_log2 slots, grown when 3/4 full */
static unsigned table_log2;
static uint32_t table_mask;
static uint32_t table_used;
static uint32_t next_id = 1;
static uint64_t next_seq;
static uint64_t start_ns;
static int out_fd = -1;
static _Atomic unsigned next_thread;
static _Atomic int finished; /* after the exit flush: every record is written at once */
static pid_t owner;          /* the process that opened out_fd (not a vforked child)   */
static pthread_key_t buf_key;
static int have_key;
static tbuf *free_bufs;     /* under write_lock */
static tbuf *all_bufs[256]; /* every live buffer, for the exit flush; under write_lock */
static unsigned nall;

static __thread tbuf *my_buf __attribute__((tls_model("initial-exec")));
static __thread int depth __attribute__((tls_model("initial-exec")));

static _Alignas(64) unsigned char boot[BOOT_BYTES];
static size_t boot_used;

uint64_t rec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- output ----------------------------------------------------------------- */

static void write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n > 0 && out_fd >= 0) {
        ssize_t w = write(out_fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        c += w;
        n -= (size_t)w;
    }
}

/* Writes a buffer's records; caller holds write_lock. */
static void flush_locked(tbuf *b)
{
    if (b->n > 0)
        write_all(b->rec, (size_t)b->n * sizeof b->rec[0]);
    b->n = 0;
}

/* Thread exit: the buffer is written and kept for the next thread. */
static void buf_release(void *arg)
{
    tbuf *b = arg;
    int e = errno;
    pthread_mutex_lock(&write_lock);
    flush_locked(b);
    b->next_free = free_bufs;
    free_bufs = b;
    pthread_mutex_unlock(&write_lock);
    my_buf = NULL;
    errno = e;
}

static tbuf *buf_get(void)
{
    if (my_buf != NULL)
        return my_buf;
    pthread_mutex_lock(&write_lock);
    tbuf *b = free_bufs;
    if (b != NULL) {
        free_bufs = b->next_free;
    } else if (nall < sizeof all_bufs / sizeof all_bufs[0]) {
        void *m = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            b = m;
            all_bufs[nall++] = b;
        }
    }
    pthread_mutex_unlock(&write_lock);
    if (b == NULL)
        return NULL; /* more than 256 threads at once: this one goes unrecorded */
    b->n = 0;
    b->next_free = NULL;
    b->thread = (uint16_t)atomic_fetch_add(&next_thread, 1u);
    my_buf = b;
    if (have_key)
        pthread_setspecific(buf_key, b);
    return b;
}

/* --- the address -> id table ---------------------------------------------- */

static uint32_t slot_of(uintptr_t a)
{
    uint64_t h = (uint64_t)a * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> (64u - table_log2));
}

static slot *table_map(unsigned log2)
{
    void *m = mmap(NULL, sizeof(slot) << log2, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void put(uintptr_t a, uint32_t id)
{
    uint32_t i = slot_of(a);
    while (table[i].addr != 0)
        i = (i + 1u) & table_mask;
    table[i].addr = a;
    table[i].id = id;
    table_used++;
}

/* Doubles the table and re-inserts every entry. Why grow rather than map
 * the largest table at once: hashing spreads even a few thousand blocks
 * over every page of the table, and each page touched is a fault and 4 KiB
 * zeroed; a table kept at most 3/4 full stays as small as the live blocks. */
static int table_grow(void)
{
    if (table_log2 == TABLE_LOG2_MAX)
        return -1;
    slot *old = table, *bigger = table_map(table_log2 + 1u);
    if (bigger == NULL)
        return -1;
    uint32_t n = table_mask + 1u;
    table = bigger;
    table_log2++;
    table_mask = (table_mask << 1) | 1u;
    table_used = 0;
    for (uint32_t i = 0; i < n; i++)
        if (old[i].addr != 0)
            put(old[i].addr, old[i].id);
    munmap(old, sizeof(slot) * n);
    return 0;
}

/* Caller holds table_lock. Returns 0 when there is room for one more. */
static int table_room(void)
{
    uint32_t slots = table_mask + 1u;
    return table_used + 1u <= slots / 4u * 3u || table_grow() == 0 ? 0 : -1;
}

/* Caller holds table_lock. Returns the new id, or 0 when the table is full. */
static uint32_t table_insert(uintptr_t a)
{
    if (next_id == UINT32_MAX || table_room() != 0)
        return 0;
    put(a, next_id);
    return next_id++;
}

/* Caller holds table_lock. Removes a and returns its id, or 0 when a is not
 * a recorded block (allocated before recording started, or by the bootstrap).
 * Backward-shift deletion: later members of the probe run move up into the
 * hole when their home slot allows it. */
static uint32_t table_remove(uintptr_t a)
{
    uint32_t i = slot_of(a);
    while (table[i].addr != a) {
        if (table[i].addr == 0)
            return 0;
        i = (i + 1u) & table_mask;
    }
    uint32_t id = table[i].id;
    uint32_t hole = i;
    for (uint32_t j = (i + 1u) & table_mask; table[j].addr != 0; j = (j + 1u) & table_mask) {
        uint32_t home = slot_of(table[j].addr);
        /* j may fill the hole when its home is not in (hole, j] (cyclically) */
        int in_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_between) {
            table[hole] = table[j];
            hole = j;
        }
    }
    table[hole].addr = 0;
    table_used--;
    return id;
}

/* --- recording -------------------------------------------------------------- */

typedef struct call {
    uint8_t op, align_log2;
    uint64_t size;
} call;

static uint8_t log2_of(size_t align)
{
    return align == 0 ? 0 : (uint8_t)__builtin_ctzll((unsigned long long)align);
}

/* Records one call: old is the block given back (0: none), now the block
 * handed out (0: none), both as addresses; the table turns them into ids
 * under one lock with one sequence number. A free's removal runs in
 * record_free() before the real free, so here old is already an id. */
static void emit(const call *c, uint32_t old_id, uintptr_t now)
{
    tbuf *b = buf_get();
    if (b == NULL)
        return;
    trace_record r;
    memset(&r, 0, sizeof r);
    r.op = c->op;
    r.align_log2 = c->align_log2;
    r.thread = b->thread;
    r.size = c->size;
    r.old_id = old_id;
    pthread_mutex_lock(&table_lock);
    r.id = now != 0 ? table_insert(now) : 0;
    r.seq = next_seq++;
    r.t_ns = rec_now_ns() - start_ns;
    pthread_mutex_unlock(&table_lock);
    b->rec[b->n++] = r;
    if (b->n == BUF_RECORDS || atomic_load(&finished)) {
        pthread_mutex_lock(&write_lock);
        flush_locked(b);
        pthread_mutex_unlock(&write_lock);
    }
}

static uint32_t take_id(const void *p)
{
    pthread_mutex_lock(&table_lock);
    uint32_t id = table_remove((uintptr_t)p);
    pthread_mutex_unlock(&table_lock);
    return id;
}

/* Puts a block back under its old id (a realloc that failed). */
static void restore_id(const void *p, uint32_t id)
{
    pthread_mutex_lock(&table_lock);
    if (table_room() == 0) /* the id was just removed: room unless grown since */
        put((uintptr_t)p, id);
    pthread_mutex_unlock(&table_lock);
}

/* --- setup ------------------------------------------------------------------ */

static void resolve(void)
{
    LOAD(real.malloc, "malloc");
    LOAD(real.calloc, "calloc");
    LOAD(real.realloc, "realloc");
    LOAD(real.free, "free");
    LOAD(real.aligned_alloc, "aligned_alloc");
    LOAD(real.memalign, "memalign");
    LOAD(real.posix_memalign, "posix_memalign");
    LOAD(real.valloc, "valloc");
    LOAD(real.pvalloc, "pvalloc");
    rec_resolve_exec();
}

static void stop_in_child(void)
{
    /* The buffers hold the parent's records: the parent writes them. */
    out_fd = -1;
    atomic_store(&state, ST_OFF);
}

static void start(void)
{
    slot *t = table_map(TABLE_LOG2_MIN);
    if (t == NULL)
        return;
    rec_counters c = {0, 1, 0, 0};
    int fd = rec_open_output(&c);
    if (fd < 0) {
        munmap(t, sizeof(slot) << TABLE_LOG2_MIN);
        return;
    }
    table = t;
    table_log2 = TABLE_LOG2_MIN;
    table_mask = (1u << TABLE_LOG2_MIN) - 1u;
    out_fd = fd;
    owner = getpid();
    start_ns = c.start_ns;
    next_seq = c.seq;
    next_id = c.id;
    atomic_store(&next_thread, c.thread);
    have_key = pthread_key_create(&buf_key, buf_release) == 0;
    pthread_atfork(NULL, NULL, stop_in_child);
    atomic_store(&state, ST_ON);
}

/* Resolves the real functions once; returns 1 when calls are recorded. */
static int ready(void)
{
    int s = atomic_load(&state);
    if (s == ST_ON || s == ST_OFF)
        return s == ST_ON;
    if (s == ST_RESOLVING)
        return 0; /* dlsym's own allocations: the bootstrap serves them */
    pthread_mutex_lock(&init_lock);
    if (atomic_load(&state) == ST_NONE) {
        atomic_store(&state, ST_RESOLVING);
        resolve();
        atomic_store(&state, ST_OFF);
        depth++;
        start();
        depth--;
    }
    pthread_mutex_unlock(&init_lock);
    return atomic_load(&state) == ST_ON;
}

__attribute__((constructor)) static void record_init(void) { ready(); }

/* Writes every thread's buffer; caller holds write_lock. A thread that is
 * storing a record at this moment may lose it (docs/TRACE.md). */
static void flush_all_locked(void)
{
    for (unsigned i = 0; i < nall; i++)
        flush_locked(all_bufs[i]);
}

/* A vforked child shares the parent's memory while state is ST_ON: it must
 * neither write the parent's buffers nor mark them finished. */
static int recording_here(void) { return atomic_load(&state) == ST_ON && getpid() == owner; }

__attribute__((destructor)) static void record_fini(void)
{
    if (!recording_here())
        return;
    pthread_mutex_lock(&write_lock);
    flush_all_locked();
    atomic_store(&finished, 1);
    pthread_mutex_unlock(&write_lock);
}

/* The table lock is held across the exec: a call another thread makes
 * meanwhile waits (and vanishes with the image), so the counters handed to
 * the next image are the last ones used. The depth keeps any allocation the
 * real exec makes unrecorded (recording it would wait for that lock). An
 * exec from a signal handler that interrupted a wrapped call (depth > 0)
 * might find this thread holding the locks: it hands nothing on (the next
 * image records as a child) rather than wait forever. */
int rec_exec_begin(rec_counters *c)
{
    if (!ready() || !recording_here() || depth > 0)
        return 0;
    depth++;
    pthread_mutex_lock(&table_lock);
    pthread_mutex_lock(&write_lock);
    flush_all_locked();
    pthread_mutex_unlock(&write_lock);
    c->seq = next_seq;
    c->id = next_id;
    c->thread = atomic_load(&next_thread);
    c->start_ns = start_ns;
    return 1;
}

void rec_exec_end(void)
{
    pthread_mutex_unlock(&table_lock);
    depth--;
}

/* A process that ends with _exit() (dash does) skips the destructors: the
 * wrapper writes the buffers first. */
EXPORT void _exit(int status);
EXPORT void _exit(int status)
{
    record_fini();
    void (*next)(int);
    LOAD(next, "_exit");
    next(status);
    __builtin_unreachable();
}

/* --- the bootstrap arena ----------------------------------------------------- */

static void *boot_alloc(size_t n)
{
    size_t at = (boot_used + 15u) & ~(size_t)15u;
    if (n > BOOT_BYTES - at)
        return NULL;
    boot_used = at + n;
    return boot + at; /* zeroed: static storage, never reused */
}

static int is_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + BOOT_BYTES;
}

/* --- wrapping: the depth guard --------------------------------------------- */

static void leave(int *d) { depth = *d; }

/* Declares the guard: `rec` is 1 when this is the outermost wrapped call of
 * the thread and recording is on; the depth is restored on every way out. */
#define ENTER(rec)                                                                                 \
    int rec = ready() && depth == 0;                                                               \
    int saved_depth __attribute__((cleanup(leave))) = depth;                                       \
    depth = saved_depth + 1

static void *after_alloc(uint8_t op, size_t align, uint64_t size, void *p, int rec)
{
    if (rec) {
        call c = {op, log2_of(align), size};
        emit(&c, 0, (uintptr_t)p);
    }
    return p;
}

static void record_free(uint8_t op, void *p, uint64_t size, int rec)
{
    if (!rec || p == NULL)
        return;
    uint32_t id = take_id(p);
    if (id == 0)
        return; /* not a block we saw handed out */
    call c = {op, 0, size};
    emit(&c, id, 0);
}

/* --- C ------------------------------------------------------------------------ */

/* Not declared by <stdlib.h> in every libc (obsolete, but still called). */
EXPORT void *memalign(size_t a, size_t n);
EXPORT void *pvalloc(size_t n);

EXPORT void *malloc(size_t n)
{
    if (atomic_load(&state) == ST_RESOLVING)
        return boot_alloc(n);
    ENTER(rec);
    return after_alloc(TOP_MALLOC, 0, n, real.malloc(n), rec);
}

EXPORT void *calloc(size_t n, size_t m)
{
    if (atomic_load(&state) == ST_RESOLVING || real.calloc == NULL) {
        size_t total;
        return __builtin_mul_overflow(n, m, &total) ? NULL : boot_alloc(total);
    }
    ENTER(rec);
    size_t total;
    uint64_t size = __builtin_mul_overflow(n, m, &total) ? UINT64_MAX : total;
    return after_alloc(TOP_CALLOC, 0, size, real.calloc(n, m), rec);
}

EXPORT void free(void *p)
{
    if (p == NULL || is_boot(p))
        return;
    ENTER(rec);
    record_free(TOP_FREE, p, 0, rec);
    real.free(p);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (is_boot(p) || atomic_load(&state) == ST_RESOLVING) {
        void *q = boot_alloc(n);
        if (q != NULL && p != NULL)
            memcpy(q, p,
                   n < (size_t)(boot + BOOT_BYTES - (unsigned char *)p)
                       ? n
                       : (size_t)(boot + BOOT_BYTES - (unsigned char *)p));
        return q;
    }
    ENTER(rec);
    uint32_t old = rec && p != NULL ? take_id(p) : 0;
    void *q = real.realloc(p, n);
    if (!rec)
        return q;
    if (q == NULL && n != 0) {
        if (old != 0)
            restore_id(p, old); /* failed: p is still live, under its id */
        call c = {TOP_REALLOC, 0, n};
        emit(&c, 0, 0);
        return q;
    }
    if (p != NULL && old == 0) /* resized a block we never saw: an allocation */
        return after_alloc(TOP_REALLOC, 0, n, q, rec);
    call c = {TOP_REALLOC, 0, n};
    emit(&c, old, (uintptr_t)q);
    return q;
}

EXPORT void *aligned_alloc(size_t a, size_t n)
{
    ENTER(rec);
    return after_alloc(TOP_ALIGNED_ALLOC, a, n, real.aligned_alloc(a, n), rec);
}

EXPORT void *memalign(size_t a, size_t n)
{
    ENTER(rec);
    return after_alloc(TOP_MEMALIGN, a, n, real.memalign(a, n), rec);
}

EXPORT int posix_memalign(void **out, size_t a, size_t n)
{
    ENTER(rec);
    int r = real.posix_memalign(out, a, n);
    after_alloc(TOP_POSIX_MEMALIGN, a, n, r == 0 ? *out : NULL, rec);
    return r;
}

EXPORT void *valloc(size_t n)
{
    ENTER(rec);
    return after_alloc(TOP_VALLOC, (size_t)sysconf(_SC_PAGESIZE), n, real.valloc(n), rec);
}

EXPORT void *pvalloc(size_t n)
{
    ENTER(rec);
    return after_alloc(TOP_PVALLOC, (size_t)sysconf(_SC_PAGESIZE), n, real.pvalloc(n), rec);
}

/* --- C++ ---------------------------------------------------------------------
 * Each operator forwards to the next definition (libstdc++'s, which keeps
 * the new_handler and bad_alloc semantics) and records the outermost call.
 * A program without libstdc++ never calls these; if one does, the nearest
 * C function stands in. */

typedef void *(*nt_new_fn)(size_t, const void *);
typedef void *(*al_nt_new_fn)(size_t, size_t, const void *);
typedef void (*sized_del_fn)(void *, size_t);
typedef void (*al_del_fn)(void *, size_t);
typedef void (*sized_al_del_fn)(void *, size_t, size_t);

#define NEXT(type, name)                                                                           \
    static type next;                                                                              \
    if (next == NULL)                                                                              \
    LOAD(next, name)

static void *new_common(uint8_t op, size_t align, size_t n, void *p, int rec)
{
    return after_alloc(op, align, n, p, rec);
}

#define DEFINE_NEW(mangled, op)                                                                    \
    EXPORT void *mangled(size_t n);                                                                \
    EXPORT void *mangled##RKSt9nothrow_t(size_t n, const void *tag);                               \
    EXPORT void *mangled##St11align_val_t(size_t n, size_t al);                                    \
    EXPORT void *mangled##St11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *tag);     \
    EXPORT void *mangled(size_t n)                                                                 \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(new_fn, #mangled);                                                                    \
        void *p = next != NULL ? next(n) : real.malloc(n);                                         \
        return new_common(op, 0, n, p, rec);                                                       \
    }                                                                                              \
    EXPORT void *mangled##RKSt9nothrow_t(size_t n, const void *tag)                                \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(nt_new_fn, #mangled "RKSt9nothrow_t");                                                \
        void *p = next != NULL ? next(n, tag) : real.malloc(n);                                    \
        return new_common(op, 0, n, p, rec);                                                       \
    }                                                                                              \
    EXPORT void *mangled##St11align_val_t(size_t n, size_t al)                                     \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(new_al_fn, #mangled "St11align_val_t");                                               \
        void *p = next != NULL ? next(n, al) : real.aligned_alloc(al, n);                          \
        return new_common(op, al, n, p, rec);                                                      \
    }                                                                                              \
    EXPORT void *mangled##St11align_val_tRKSt9nothrow_t(size_t n, size_t al, const void *tag)      \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(al_nt_new_fn, #mangled "St11align_val_tRKSt9nothrow_t");                              \
        void *p = next != NULL ? next(n, al, tag) : real.aligned_alloc(al, n);                     \
        return new_common(op, al, n, p, rec);                                                      \
    }

DEFINE_NEW(_Znwm, TOP_NEW)
DEFINE_NEW(_Znam, TOP_NEW_ARRAY)

/* Deletes: the block leaves the table before the real delete runs. */
#define DEFINE_DELETE(mangled, op)                                                                 \
    EXPORT void mangled(void *p);                                                                  \
    EXPORT void mangled##RKSt9nothrow_t(void *p, const void *tag);                                 \
    EXPORT void mangled##m(void *p, size_t n);                                                     \
    EXPORT void mangled##St11align_val_t(void *p, size_t al);                                      \
    EXPORT void mangled##St11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *tag);       \
    EXPORT void mangled##mSt11align_val_t(void *p, size_t n, size_t al);                           \
    EXPORT void mangled(void *p)                                                                   \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(del_fn, #mangled);                                                                    \
        record_free(op, p, 0, rec);                                                                \
        next != NULL ? next(p) : real.free(p);                                                     \
    }                                                                                              \
    EXPORT void mangled##RKSt9nothrow_t(void *p, const void *tag)                                  \
    {                                                                                              \
        (void)tag;                                                                                 \
        ENTER(rec);                                                                                \
        NEXT(del_fn, #mangled);                                                                    \
        record_free(op, p, 0, rec);                                                                \
        next != NULL ? next(p) : real.free(p);                                                     \
    }                                                                                              \
    EXPORT void mangled##m(void *p, size_t n)                                                      \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(sized_del_fn, #mangled "m");                                                          \
        record_free(op, p, n, rec);                                                                \
        next != NULL ? next(p, n) : real.free(p);                                                  \
    }                                                                                              \
    EXPORT void mangled##St11align_val_t(void *p, size_t al)                                       \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(al_del_fn, #mangled "St11align_val_t");                                               \
        record_free(op, p, 0, rec);                                                                \
        next != NULL ? next(p, al) : real.free(p);                                                 \
    }                                                                                              \
    EXPORT void mangled##St11align_val_tRKSt9nothrow_t(void *p, size_t al, const void *tag)        \
    {                                                                                              \
        (void)tag;                                                                                 \
        ENTER(rec);                                                                                \
        NEXT(al_del_fn, #mangled "St11align_val_t");                                               \
        record_free(op, p, 0, rec);                                                                \
        next != NULL ? next(p, al) : real.free(p);                                                 \
    }                                                                                              \
    EXPORT void mangled##mSt11align_val_t(void *p, size_t n, size_t al)                            \
    {                                                                                              \
        ENTER(rec);                                                                                \
        NEXT(sized_al_del_fn, #mangled "mSt11align_val_t");                                        \
        record_free(op, p, n, rec);                                                                \
        next != NULL ? next(p, n, al) : real.free(p);                                              \
    }

DEFINE_DELETE(_ZdlPv, TOP_DELETE)
DEFINE_DELETE(_ZdaPv, TOP_DELETE_ARRAY)
