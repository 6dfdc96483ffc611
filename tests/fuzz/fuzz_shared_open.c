// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_shared_open.c -- libFuzzer target: rtm_shared_open() of
 * a segment whose bytes the input wrote.
 *
 * Each input creates a process-shared heap under a name of its own
 * (/rtmem-fuzz-<pid>-<n>), makes a few correct allocations and frees in it
 * (so there are blocks, tags and free lists to damage), detaches, then
 * maps the object raw and applies the input's patches: bytes or chosen
 * integers over the frozen prefix, the rest of the guard, the intent
 * record, the inner TLSF control structure or the blocks; the object may
 * also be truncated or grown, or replaced by an object of raw input bytes.
 * Then:
 *  - rtm_shared_open() either refuses (NULL with errno EINVAL, EPROTO or
 *    EAGAIN, as rtmem/shared.h lists) or returns a heap;
 *  - rtm_heap_check() of that heap returns 0 or -1, without crashing;
 *  - only when it returned 0 (a consistent heap: operations on a corrupted
 *    one are undefined, TLSF's check being the one call that must survive
 *    anything): a few more correct operations, none of which may crash,
 *    and the heap still passes its check afterwards.
 * The name is always unlinked.
 *
 * The mutex inside the guard is never overwritten with input bytes: it is
 * the kernel's and glibc's state (a futex word naming an owner thread), and
 * a garbage owner makes pthread_mutex_lock wait forever, which no heap can
 * prevent. Instead, an input may mark it the way the kernel does when its
 * holder dies (FUTEX_OWNER_DIED, no owner; glibc layout), so that the next
 * lock gets EOWNERDEAD and runs the crash recovery (src/shared/recovery.c)
 * on the damaged intent record and heap: it must repair the heap or give
 * up with ENOTRECOVERABLE, not crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "rtmem.h"
#include "shared/guarded.h" /* the guard's layout: where to aim the patches */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUTEX_OWNER_DIED_BIT 0x40000000u /* linux/futex.h */

static unsigned long reports;

static void on_error(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                     void *arg)
{
    (void)kind;
    (void)heap;
    (void)ptr;
    (void)detail;
    (void)arg;
    reports++;
}

static char name[64];

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static _Noreturn void
fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\nfuzz_shared_open FAIL (%s): ", name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    (void)rtm_shared_unlink(name);
    abort();
}

/* What the runs did, printed at exit when RTMEM_FUZZ_VERBOSE is set. */
static unsigned long n_inputs, n_opened, n_clean, n_recovered, n_refused[4];

static void print_counts(void)
{
    fprintf(stderr,
            "shared: %lu inputs, %lu opened (%lu refused EINVAL, %lu EPROTO, %lu EAGAIN, %lu "
            "other), %lu passed the check, %lu recoveries\n",
            n_inputs, n_opened, n_refused[0], n_refused[1], n_refused[2], n_refused[3], n_clean,
            n_recovered);
}

/* --- building and damaging the segment --------------------------------- */

static void populate(rtm_heap *h, fz_in *in)
{
    void *keep[16];
    size_t n = 0;
    unsigned ops = fz_u8(in) % 24u;
    for (unsigned i = 0; i < ops; i++) {
        uint8_t op = fz_u8(in);
        if (op % 3u != 2u && n < 16u) {
            size_t size = fz_u16(in) % 2048u;
            void *p =
                op & 8u ? rtm_aligned_alloc(h, (size_t)8u << (op >> 4), size) : rtm_alloc(h, size);
            if (p != NULL) {
                memset(p, op, size);
                keep[n++] = p;
            }
        } else if (n > 0) {
            size_t k = fz_u8(in) % n;
            rtm_free(h, keep[k]);
            keep[k] = keep[--n];
        }
    }
}

typedef struct area {
    size_t lo, hi;
} area;

/* The part of the segment a patch aims at. Never the mutex. */
static area pick_area(uint8_t which, size_t bytes)
{
    size_t mutex_lo = offsetof(rtm_guard, mutex), mutex_hi = mutex_lo + sizeof(rtm_os_mutex);
    size_t inner = GUARD_BYTES, ctl = rtm_tlsf_control_size();
    area a;
    switch (which % 6u) {
    case 0:
        a.lo = 0, a.hi = 32; /* the frozen prefix */
        break;
    case 1:
        a.lo = 32, a.hi = mutex_lo; /* name, offsets, counters, intent */
        break;
    case 2:
        a.lo = offsetof(rtm_guard, intent), a.hi = a.lo + sizeof(guard_intent);
        break;
    case 3:
        a.lo = inner, a.hi = inner + ctl; /* TLSF control structure */
        break;
    case 4:
        a.lo = inner + ctl, a.hi = bytes; /* pools and blocks */
        break;
    default:
        a.lo = mutex_hi, a.hi = inner; /* what follows the mutex */
        break;
    }
    if (a.hi > bytes)
        a.hi = bytes;
    if (a.lo > a.hi)
        a.lo = a.hi;
    return a;
}

/* An integer worth writing into a header field: small offsets, the magic
 * words the code compares with, the edges of the ranges. */
static uint64_t pick_value(fz_in *in, size_t bytes)
{
    switch (fz_u8(in) % 8u) {
    case 0:
        return 0;
    case 1:
        return INTENT_ACTIVE;
    case 2:
        return GUARD_READY;
    case 3:
        return bytes + (uint64_t)(int8_t)fz_u8(in);
    case 4:
        return (uint64_t)fz_u16(in) * 8u;
    case 5:
        return RTM_KIND_TLSF;
    case 6:
        return (uint64_t)(int64_t)(int16_t)fz_u16(in);
    default:
        return fz_wide_size(in);
    }
}

static void patch(unsigned char *m, size_t bytes, fz_in *in)
{
    unsigned count = fz_u8(in) % 8u;
    for (unsigned i = 0; i < count && fz_left(in); i++) {
        uint8_t how = fz_u8(in);
        area a = pick_area(how, bytes);
        if (a.hi <= a.lo)
            continue;
        size_t span = a.hi - a.lo;
        size_t off = a.lo + (span > 65535u ? fz_u32(in) : fz_u16(in)) % span;
        if (how & 0x80u) { /* an integer, aligned to its size */
            size_t w = how & 0x40u ? 8u : 4u;
            off &= ~(w - 1u);
            if (off < a.lo || off + w > a.hi)
                continue;
            uint64_t v = pick_value(in, bytes);
            memcpy(m + off, &v, w); /* little-endian: the low half for w = 4 */
        } else {                    /* raw bytes */
            size_t len = 1u + fz_u8(in) % 16u;
            for (size_t k = 0; k < len && off + k < a.hi; k++)
                m[off + k] = fz_u8(in);
        }
    }
}

/* The state the kernel leaves in a robust PI mutex whose holder died
 * (glibc: the lock word is the first int of pthread_mutex_t). */
static void mark_holder_dead(unsigned char *m, fz_in *in)
{
#if defined(__GLIBC__)
    uint32_t word = FUTEX_OWNER_DIED_BIT;
    memcpy(m + offsetof(rtm_guard, mutex), &word, sizeof word);
    uint32_t holder = fz_u8(in) % 2u ? 0 : (uint32_t)getpid() + 1u + fz_u8(in);
    memcpy(m + offsetof(rtm_guard, holder), &holder, sizeof holder);
#else
    (void)m;
    (void)in;
#endif
}

static int map_object(size_t *bytes, unsigned char **m)
{
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        fail("shm_open of the heap just created: errno %d", errno);
    struct stat st;
    if (fstat(fd, &st) != 0)
        fail("fstat: errno %d", errno);
    *bytes = (size_t)st.st_size;
    *m = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (*m == MAP_FAILED)
        fail("mmap: errno %d", errno);
    return fd;
}

/* Writes an object of raw input bytes (no heap in it). */
static void raw_object(fz_in *in)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        fail("shm_open(O_CREAT): errno %d", errno);
    size_t bytes = fz_u16(in) % 8192u;
    if (ftruncate(fd, (off_t)bytes) != 0)
        fail("ftruncate: errno %d", errno);
    if (bytes > 0) {
        unsigned char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            fail("mmap: errno %d", errno);
        for (size_t i = 0; i < bytes && fz_left(in); i++)
            m[i] = fz_u8(in);
        munmap(m, bytes);
    }
    close(fd);
}

/* --- using what opened ----------------------------------------------------- */

typedef struct walk_pick {
    size_t k, seen;
    void *used;
} walk_pick;

static void pick_used(void *ptr, size_t usable, int used, void *arg)
{
    walk_pick *w = arg;
    (void)usable;
    if (used && w->seen++ == w->k)
        w->used = ptr;
}

static void operate(rtm_heap *h, fz_in *in)
{
    void *mine[8];
    size_t n = 0;
    unsigned ops = fz_u8(in) % 32u;
    for (unsigned i = 0; i < ops && fz_left(in); i++) {
        uint8_t op = fz_u8(in);
        switch (op % 10u) {
        case 0:
        case 1:
            if (n < 8u) {
                size_t size = op % 20u == 0 ? fz_wide_size(in) : fz_u16(in) % 4096u;
                void *p = op & 0x40u ? rtm_aligned_alloc(h, (size_t)1 << (fz_u8(in) % 14u), size)
                                     : rtm_alloc(h, size);
                if (p != NULL) {
                    memset(p, 0x77, size);
                    mine[n++] = p;
                }
            }
            break;
        case 2:
            if (n > 0) {
                size_t k = fz_u8(in) % n;
                rtm_free(h, mine[k]);
                mine[k] = mine[--n];
            }
            break;
        case 3:
            if (n > 0) {
                size_t k = fz_u8(in) % n;
                size_t size = fz_u16(in) % 8192u;
                void *q = rtm_realloc(h, mine[k], size);
                if (q != NULL || size == 0)
                    mine[k] = q;
                if (mine[k] == NULL)
                    mine[k] = mine[--n];
            }
            break;
        case 4: { /* free a block some (maybe dead) process allocated */
            walk_pick w = {fz_u8(in), 0, NULL};
            (void)rtm_heap_walk(h, pick_used, &w);
            int ours = 0;
            for (size_t k = 0; k < n; k++)
                ours |= mine[k] == w.used;
            if (w.used != NULL && !ours)
                rtm_free(h, w.used);
            break;
        }
        case 5: {
            rtm_stats st = rtm_heap_stats(h);
            if (st.used_bytes > st.arena_bytes || st.largest_free > st.free_bytes)
                fail("stats of a checked heap: used %zu, free %zu, largest %zu, arena %zu",
                     st.used_bytes, st.free_bytes, st.largest_free, st.arena_bytes);
            break;
        }
        case 6: {
            rtm_shared_info info;
            rtm_shared_usage u;
            (void)rtm_shared_info_get(h, &info);
            (void)rtm_shared_owned(h, op & 0x10u ? 0 : (long)getpid(), &u);
            break;
        }
        case 7:
            (void)rtm_shared_reclaim(h, (long)getpid());
            n = 0; /* ours are gone */
            break;
        case 8: {
            rtm_offset off = (rtm_offset)fz_wide_size(in);
            void *p = rtm_shared_pointer(h, off);
            if (p != NULL && rtm_shared_offset(h, p) != off)
                fail("rtm_shared_offset(rtm_shared_pointer(%llu)) differs",
                     (unsigned long long)off);
            break;
        }
        default:
            if (op & 0x80u) {
                (void)rtm_heap_reset(h);
                n = 0;
            } else if (n > 0) {
                (void)rtm_usable_size(h, mine[fz_u8(in) % n]);
            }
            break;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned long counter;
    static int registered;
    if (!registered) {
        registered = 1;
        if (getenv("RTMEM_FUZZ_VERBOSE") != NULL)
            atexit(print_counts);
    }
    fz_in in = {data, size};
    snprintf(name, sizeof name, "/rtmem-fuzz-%ld-%lu", (long)getpid(), ++counter);
    (void)rtm_shared_unlink(name);
    rtm_set_error_handler(on_error, NULL);
    n_inputs++;

    uint8_t mode = fz_u8(&in);
    if (mode % 8u == 7u) {
        raw_object(&in);
    } else {
        size_t bytes = rtm_shared_min_size() + (size_t)fz_u16(&in) * 2u;
        rtm_heap *h = rtm_shared_create(name, bytes, "tlsf");
        if (h == NULL)
            fail("rtm_shared_create(%zu) failed: errno %d", bytes, errno);
        populate(h, &in);
        if (rtm_heap_check(h) != 0)
            fail("a heap after correct operations fails its check");
        rtm_shared_close(h);
        unsigned char *m;
        size_t mb;
        int fd = map_object(&mb, &m);
        patch(m, mb, &in);
        if (mode & 0x10u)
            mark_holder_dead(m, &in);
        munmap(m, mb);
        if (mode & 0x20u) { /* truncated or grown */
            size_t to = mode & 0x40u ? mb + fz_u16(&in) % 4096u : fz_u16(&in) % (mb + 1u);
            if (ftruncate(fd, (off_t)to) != 0)
                fail("ftruncate: errno %d", errno);
        }
        close(fd);
    }

    errno = 0;
    rtm_heap *h = rtm_shared_open(name);
    if (h == NULL) {
        int e = errno;
        if (e != EINVAL && e != EPROTO && e != EAGAIN)
            fail("rtm_shared_open refused with errno %d (%s), not one rtmem/shared.h lists", e,
                 strerror(e));
        n_refused[e == EINVAL ? 0 : e == EPROTO ? 1 : 2]++;
    } else {
        n_opened++;
        rtm_shared_info info;
        int rc = rtm_heap_check(h);
        if (rc != 0 && rc != -1)
            fail("rtm_heap_check returned %d", rc);
        if (rtm_shared_info_get(h, &info) == 0 && info.recoveries != 0)
            n_recovered++;
        if (rc == 0) {
            n_clean++;
            operate(h, &in);
            if (rtm_heap_check(h) != 0)
                fail("a heap that passed its check fails it after correct operations "
                     "(errno %d)",
                     errno);
        }
        rtm_shared_close(h);
    }
    if (rtm_shared_unlink(name) != 0)
        fail("rtm_shared_unlink: errno %d", errno);
    rtm_set_error_handler(NULL, NULL);
    return 0;
}
