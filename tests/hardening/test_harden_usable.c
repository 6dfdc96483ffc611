// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_usable.c -- issue 32, item 1: rtm_usable_size
 * of a pointer the heap never gave out, on every algorithm rtm_algorithms()
 * lists and every kind of heap over it: plain (rtm_heap_create, and the
 * typed rtm_<algorithm>_usable_size on the same handle where there is a
 * typed API), locked (rtm_locked_create) and process-shared
 * (rtm_shared_create, TLSF only). Black box: public headers only.
 *
 * include/rtmem.h: "A pointer that is not a live block of this heap (when
 * detected, as for rtm_free) is reported to the error handler and gives 0
 * with errno EINVAL". Each pointer below must give exactly that, with one
 * report of a misuse kind (the one named below) about that pointer, from
 * a handle inside the heap's memory, and leave the heap as it was (stats
 * equal, the check clean, the live blocks' sizes and contents intact):
 *
 *   foreign   a malloc'ed block, stack and static addresses (words below
 *             them zero, all ones, text), another heap's live block, and
 *             pointers whose header would lie in a PROT_NONE page: the
 *             region of a plain or locked heap lies between two (its
 *             first byte, pointers into both), and the first bytes after a
 *             separate one.
 *             RTM_ERR_FOREIGN_POINTER. The guard-page cases run in a child
 *             so that a fault shows as a failure, not a lost run.
 *   interior  8, 16, 32... bytes into a live block (zeroed, then 0xA5),
 *             misaligned pointers into it, and a page inside a large block:
 *             any misuse kind (a header read inside user data may say
 *             anything: "not a block start", "damaged", "free").
 *   freed     a block freed between two live ones (no merge), and two
 *             neighbours freed left first (merged where the heap merges; a
 *             shared heap's owner tag then survives in the free block):
 *             RTM_ERR_DOUBLE_FREE, or RTM_ERR_FOREIGN_POINTER where the
 *             heap cannot tell a freed block from no block (a merged page
 *             of the buddy, a shared block whose tag the free overwrote).
 *   stale     two neighbours freed, the memory taken again by a larger
 *             block the user wrote: any misuse kind.
 *   NULL      0 with errno untouched and nothing reported.
 *
 * The live blocks themselves must give their size with errno untouched and
 * nothing reported, so a heap that refuses everything fails too.
 *
 * Usage: test_harden_usable ALGORITHM plain|locked|shared
 *        test_harden_usable --covers NAME...   (exit 0 iff the names are
 *        exactly rtm_algorithms(): the ctest list misses no algorithm)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/bytes.h"
#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"

#define KIND(k)    (1u << (unsigned)(k))
#define K_FOREIGN  KIND(RTM_ERR_FOREIGN_POINTER)
#define K_DOUBLE   KIND(RTM_ERR_DOUBLE_FREE)
#define K_CORRUPT  KIND(RTM_ERR_CORRUPT_HEADER)
#define K_MISUSE   (K_FOREIGN | K_DOUBLE | K_CORRUPT)
#define REGION_PGS 64u   /* pages of the plain and locked heaps' region */
#define SMALL      40u   /* fits every algorithm's smallest block (pool: 64) */
#define LARGE      9000u /* several pages of every paged heap; refused by the pool */
#define MAX_LIVE   8u

/* ---------------------------------------------------------------------- */
/* The heap under test                                                     */
/* ---------------------------------------------------------------------- */

typedef enum heap_kind { PLAIN, LOCKED, SHARED } heap_kind;
static const char *const kind_names[] = {"plain", "locked", "shared"};

/* The typed usable size of each algorithm with a typed API; the typed
 * handle is the generic one (core/heap.c: the handle is the control). */
static size_t typed_tlsf(rtm_heap *h, const void *p)
{
    return rtm_tlsf_usable_size_in((const rtm_tlsf *)(void *)h, p);
}
static size_t typed_pool(rtm_heap *h, const void *p)
{
    return rtm_pool_usable_size((const rtm_pool *)(void *)h, p);
}
static size_t typed_buddy(rtm_heap *h, const void *p)
{
    return rtm_buddy_usable_size((const rtm_buddy *)(void *)h, p);
}
static size_t typed_halffit(rtm_heap *h, const void *p)
{
    return rtm_halffit_usable_size((const rtm_halffit *)(void *)h, p);
}
static size_t typed_slab(rtm_heap *h, const void *p)
{
    return rtm_slab_usable_size((const rtm_slab *)(void *)h, p);
}
static size_t typed_heapmem(rtm_heap *h, const void *p)
{
    return rtm_heapmem_usable_size((const rtm_heapmem *)(void *)h, p);
}

typedef size_t (*usable_fn)(rtm_heap *h, const void *p);

static usable_fn typed_of(const char *algorithm)
{
    static const struct {
        const char *name;
        usable_fn fn;
    } typed[] = {{"tlsf", typed_tlsf},       {"pool", typed_pool}, {"buddy", typed_buddy},
                 {"halffit", typed_halffit}, {"slab", typed_slab}, {"heapmem", typed_heapmem}};
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        if (strcmp(algorithm, typed[i].name) == 0)
            return typed[i].fn;
    return NULL; /* xvmalloc, tlsf_cached: generic API only */
}

typedef struct heap_ut {
    const char *algorithm;
    heap_kind kind;
    rtm_heap *h;
    usable_fn typed;              /* NULL: none, or not a plain heap */
    const unsigned char *lo, *hi; /* the heap's memory: reports come from in here */
    guarded_region region;        /* plain and locked: guard pages on both sides */
    char shm_name[64];
    /* the live blocks the refusals must leave alone */
    unsigned char *live[MAX_LIVE];
    size_t live_size[MAX_LIVE], live_usable[MAX_LIVE];
    unsigned char live_fill[MAX_LIVE];
    size_t nlive;
} heap_ut;

static void ut_create(heap_ut *u, const char *algorithm, heap_kind kind)
{
    memset(u, 0, sizeof *u);
    u->algorithm = algorithm;
    u->kind = kind;
    if (kind == SHARED) {
        snprintf(u->shm_name, sizeof u->shm_name, "/rtmem-harden-usable-%ld", (long)getpid());
        (void)rtm_shared_unlink(u->shm_name);
        size_t bytes = 1024u * 1024u;
        u->h = rtm_shared_create(u->shm_name, bytes, algorithm);
        REQUIRE(u->h != NULL);
        u->lo = (const unsigned char *)u->h;
        u->hi = u->lo + bytes;
        return;
    }
    /* lead 0: the region's first byte follows a PROT_NONE page */
    u->region = region_map_guarded(REGION_PGS, 0);
    u->h = kind == PLAIN ? rtm_heap_create(algorithm, u->region.mem, u->region.bytes)
                         : rtm_locked_create(algorithm, u->region.mem, u->region.bytes);
    REQUIRE(u->h != NULL);
    u->typed = kind == PLAIN ? typed_of(algorithm) : NULL;
    u->lo = u->region.mem;
    u->hi = u->region.mem + u->region.bytes;
}

static void ut_destroy(heap_ut *u)
{
    if (u->kind == SHARED) {
        rtm_shared_close(u->h);
        (void)rtm_shared_unlink(u->shm_name);
        return;
    }
    rtm_heap_destroy(u->h);
    region_unmap_guarded(&u->region);
}

/* A live block of n bytes filled with `fill`, remembered; NULL when the
 * heap has no such block (the pool's blocks are 64 bytes). */
static unsigned char *ut_keep(heap_ut *u, size_t n, unsigned char fill)
{
    REQUIRE(u->nlive < MAX_LIVE);
    unsigned char *p = rtm_alloc(u->h, n);
    if (p == NULL)
        return NULL;
    memset(p, fill, n);
    size_t i = u->nlive++;
    u->live[i] = p;
    u->live_size[i] = n;
    u->live_fill[i] = fill;
    u->live_usable[i] = rtm_usable_size(u->h, p);
    REQUIRE(u->live_usable[i] >= n);
    return p;
}

/* ---------------------------------------------------------------------- */
/* The contract                                                            */
/* ---------------------------------------------------------------------- */

/* One call of `fn` on ptr: 0, errno EINVAL, one report of a kind in
 * `kinds` about ptr from inside the heap's memory. */
static void expect_refused_by(heap_ut *u, usable_fn fn, const char *api, const void *ptr,
                              unsigned kinds, const char *what)
{
    recorder_install();
    errno = 0;
    size_t n = fn(u->h, ptr);
    int e = errno;
    error_record rec = *recorder();
    rtm_set_error_handler(NULL, NULL);
    CHECK_MSG(n == 0 && e == EINVAL, "%s %s: %s usable_size(%p) = %zu, errno %d (want 0, EINVAL)",
              u->algorithm, kind_names[u->kind], api, ptr, n, e);
    CHECK_MSG(rec.calls == 1 && (KIND(rec.last_kind) & kinds) != 0,
              "%s %s: %s usable_size of %s: %u report(s), last %s", u->algorithm,
              kind_names[u->kind], api, what, rec.calls, recorder_kind_name(rec.last_kind));
    if (rec.calls == 1) {
        /* A shared block whose owner tag outlived it is refused by the
         * inner TLSF heap, about its own block (the tag's start), as
         * rtm_free reports it. */
        uintptr_t inner = (uintptr_t)ptr - RTM_SHARED_TAG_BYTES;
        CHECK_MSG(rec.last_ptr == ptr || (u->kind == SHARED && (uintptr_t)rec.last_ptr == inner),
                  "%s: %s reported %p, not the pointer %p", what, api, rec.last_ptr, ptr);
        const unsigned char *from = rec.last_heap;
        CHECK_MSG(from >= u->lo && from < u->hi, "%s: %s reported from %p, outside the heap", what,
                  api, rec.last_heap);
    }
}

static size_t generic_usable(rtm_heap *h, const void *p) { return rtm_usable_size(h, p); }

/* The heap is as it was: stats, check, every live block's size and bytes. */
static void expect_unchanged(heap_ut *u, rtm_stats before, const char *what)
{
    rtm_stats st = rtm_heap_stats(u->h);
    CHECK_MSG(stats_equal(st, before),
              "%s %s, %s: stats changed (used %zu -> %zu, live %zu -> %zu)", u->algorithm,
              kind_names[u->kind], what, before.used_bytes, st.used_bytes, before.live_blocks,
              st.live_blocks);
    CHECK_MSG(rtm_heap_check(u->h) == 0, "%s %s, %s: the heap's check fails", u->algorithm,
              kind_names[u->kind], what);
    for (size_t i = 0; i < u->nlive; i++) {
        errno = 0;
        CHECK_MSG(rtm_usable_size(u->h, u->live[i]) == u->live_usable[i] && errno == 0,
                  "%s: live block %zu's usable size changed", what, i);
        CHECK_MSG(all_bytes(u->live[i], u->live_size[i], u->live_fill[i]),
                  "%s: live block %zu's contents changed", what, i);
    }
}

/* Every API of the heap refuses ptr, and the heap stays as it was. */
static void expect_refused(heap_ut *u, const void *ptr, unsigned kinds, const char *what)
{
    rtm_stats before = rtm_heap_stats(u->h);
    expect_refused_by(u, generic_usable, "rtm", ptr, kinds, what);
    if (u->typed != NULL)
        expect_refused_by(u, u->typed, "typed", ptr, kinds, what);
    expect_unchanged(u, before, what);
}

/* A live block: its size, no error, no report. */
static void expect_live(heap_ut *u, const unsigned char *p, size_t n, const char *what)
{
    recorder_install();
    errno = 0;
    size_t got = rtm_usable_size(u->h, p);
    int e = errno;
    size_t typed = u->typed != NULL ? u->typed(u->h, p) : got;
    int e2 = errno;
    rtm_set_error_handler(NULL, NULL);
    CHECK_MSG(got >= n && typed == got && e == 0 && e2 == 0 && recorder()->calls == 0,
              "%s %s, %s: usable_size %zu / typed %zu, errno %d / %d, %u report(s) (want >= %zu)",
              u->algorithm, kind_names[u->kind], what, got, typed, e, e2, recorder()->calls, n);
}

/* ---------------------------------------------------------------------- */
/* The cases                                                               */
/* ---------------------------------------------------------------------- */

static void case_null(heap_ut *u)
{
    recorder_install();
    errno = 0;
    size_t n = rtm_usable_size(u->h, NULL);
    size_t t = u->typed != NULL ? u->typed(u->h, NULL) : 0;
    int e = errno;
    rtm_set_error_handler(NULL, NULL);
    CHECK_MSG(n == 0 && t == 0 && e == 0 && recorder()->calls == 0,
              "%s %s: usable_size(NULL) = %zu / typed %zu, errno %d, %u report(s)", u->algorithm,
              kind_names[u->kind], n, t, e, recorder()->calls);
}

static unsigned char static_area[512] __attribute__((aligned(64)));

static void case_foreign(heap_ut *u)
{
    /* malloc'ed: a libc header below it */
    unsigned char *m = malloc(256);
    REQUIRE(m != NULL);
    memset(m, 0, 256);
    expect_refused(u, m, K_FOREIGN, "a malloc'ed block");
    expect_refused(u, m + 64, K_FOREIGN, "inside a malloc'ed block");
    free(m);

    /* stack and static memory with several words below the pointer */
    static const unsigned char fills[] = {0x00, 0xff, 0x41};
    for (size_t i = 0; i < sizeof fills; i++) {
        unsigned char stack[256] __attribute__((aligned(64)));
        memset(stack, fills[i], sizeof stack);
        memset(static_area, fills[i], sizeof static_area);
        char what[64];
        snprintf(what, sizeof what, "a stack pointer (bytes 0x%02x)", fills[i]);
        expect_refused(u, stack + 128, K_FOREIGN, what);
        CHECK_MSG(all_bytes(stack, sizeof stack, fills[i]), "%s: the heap wrote there", what);
        snprintf(what, sizeof what, "a static pointer (bytes 0x%02x)", fills[i]);
        expect_refused(u, static_area + 256, K_FOREIGN, what);
    }

    /* another heap of the same algorithm: a perfectly valid block there */
    test_region r = region_malloc(256u * 1024u, 0);
    rtm_heap *other = rtm_heap_create(u->algorithm, r.mem, r.bytes);
    REQUIRE(other != NULL);
    unsigned char *theirs = rtm_alloc(other, SMALL);
    REQUIRE(theirs != NULL);
    expect_refused(u, theirs, K_FOREIGN, "another heap's live block");
    rtm_heap_destroy(other);
    region_free(&r);
}

/* In a child (a fault must not end the run): pointers whose header or
 * page would lie in a PROT_NONE page. */
static void guard_pointers(heap_ut *u)
{
    guarded_region g = region_map_guarded(1, 0);
    expect_refused(u, g.mem, K_FOREIGN, "the first byte after a PROT_NONE page");
    expect_refused(u, g.mem + 64, K_FOREIGN, "64 bytes after a PROT_NONE page");
    expect_refused(u, g.map + 64, K_FOREIGN, "a pointer into a PROT_NONE page");
    if (u->kind != SHARED) {
        /* The heap's own region starts right after its lower guard page. */
        expect_refused(u, u->region.mem, K_FOREIGN, "the region's first byte");
        expect_refused(u, u->region.mem - 64, K_FOREIGN, "the guard page below the region");
        expect_refused(u, u->region.mem + u->region.bytes, K_FOREIGN,
                       "the guard page above the region");
    }
    region_unmap_guarded(&g);
}

static void case_guard_pages(heap_ut *u)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        guard_pointers(u);
        _exit(*check_failure_count() == 0 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s %s: pointers next to PROT_NONE pages: the child %s %d", u->algorithm,
              kind_names[u->kind], WIFSIGNALED(status) ? "was killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void case_interior(heap_ut *u, unsigned char *p, size_t n, const char *which)
{
    static const unsigned char fills[] = {0x00, 0xa5};
    for (size_t f = 0; f < sizeof fills; f++) {
        memset(p, fills[f], n);
        for (size_t off = 8; off < n; off *= 2) {
            char what[96];
            snprintf(what, sizeof what, "%s + %zu (bytes 0x%02x)", which, off, fills[f]);
            expect_refused(u, p + off, K_MISUSE, what);
        }
        for (size_t off = 1; off < 8; off++)
            expect_refused(u, p + off, K_MISUSE, "a misaligned pointer into a live block");
    }
    memset(p, 0, n);
}

/* [x][k][w][y][l], all taken first (in address order where the heap hands
 * out fresh memory in order). x freed: its neighbours stay live, so nothing
 * merges. Then w freed before y: y merges into w where the heap merges, and
 * y's first bytes (a shared heap's owner tag) survive inside the free
 * block. */
static void case_freed(heap_ut *u)
{
    unsigned char *x = rtm_alloc(u->h, SMALL);
    REQUIRE(x != NULL && ut_keep(u, SMALL, 0x3c) != NULL);
    unsigned char *w = rtm_alloc(u->h, SMALL), *y = rtm_alloc(u->h, SMALL);
    REQUIRE(w != NULL && y != NULL && ut_keep(u, SMALL, 0x4b) != NULL);
    rtm_free(u->h, x);
    expect_refused(u, x, K_DOUBLE | K_FOREIGN, "a freed block");
    rtm_free(u->h, w);
    rtm_free(u->h, y);
    expect_refused(u, y, K_DOUBLE | K_FOREIGN, "a block freed after its left neighbour");
    expect_refused(u, w, K_DOUBLE | K_FOREIGN, "a freed block, merged with its right neighbour");
}

/* a and b freed, then a block twice their size taken and written: b's old
 * address is free again or inside the new block. */
static void case_stale(heap_ut *u)
{
    unsigned char *a = rtm_alloc(u->h, SMALL), *b = rtm_alloc(u->h, SMALL);
    REQUIRE(a != NULL && b != NULL);
    REQUIRE(ut_keep(u, SMALL, 0x5d) != NULL);
    rtm_free(u->h, b);
    rtm_free(u->h, a);
    unsigned char *m = rtm_alloc(u->h, 2u * SMALL + 32u);
    if (m == NULL)
        m = rtm_alloc(u->h, SMALL); /* the pool: one size only */
    REQUIRE(m != NULL);
    size_t n = rtm_usable_size(u->h, m);
    memset(m, 0, n);
    if (b != m)
        expect_refused(u, b, K_MISUSE,
                       b > m && b < m + n ? "a stale pointer into a reused block"
                                          : "a stale pointer");
    if (a != m)
        expect_refused(u, a, K_MISUSE, "a stale pointer");
    rtm_free(u->h, m);
}

static void run(const char *algorithm, heap_kind kind)
{
    heap_ut u;
    ut_create(&u, algorithm, kind);
    case_null(&u);
    unsigned char *small = ut_keep(&u, SMALL, 0x11);
    REQUIRE(small != NULL);
    unsigned char *large = ut_keep(&u, LARGE, 0x22); /* NULL on the pool */
    expect_live(&u, small, SMALL, "a live small block");
    if (large != NULL)
        expect_live(&u, large, LARGE, "a live large block");

    case_foreign(&u);
    case_guard_pages(&u);
    unsigned char *inner = rtm_alloc(u.h, SMALL);
    REQUIRE(inner != NULL);
    case_interior(&u, inner, SMALL, "a live small block");
    rtm_free(u.h, inner);
    if (large != NULL) {
        unsigned char *big = rtm_alloc(u.h, LARGE);
        REQUIRE(big != NULL);
        case_interior(&u, big, LARGE, "a live large block");
        rtm_free(u.h, big);
    }
    case_freed(&u);
    case_stale(&u);

    for (size_t i = 0; i < u.nlive; i++) {
        CHECK(all_bytes(u.live[i], u.live_size[i], u.live_fill[i]));
        rtm_free(u.h, u.live[i]);
    }
    CHECK_EQ(rtm_heap_stats(u.h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(u.h), 0);
    ut_destroy(&u);
}

static const char *the_algorithm;
static heap_kind the_kind;
static void run_chosen(void) { run(the_algorithm, the_kind); }

/* 0 iff names[0..n) is rtm_algorithms(), in its order. */
static int covers(char **names, int n)
{
    const char *const *a = rtm_algorithms();
    int i = 0;
    for (; a[i] != NULL; i++)
        if (i >= n || strcmp(a[i], names[i]) != 0) {
            fprintf(stderr, "rtm_algorithms()[%d] is %s, the test list says %s\n", i, a[i],
                    i < n ? names[i] : "nothing");
            return 1;
        }
    if (i != n) {
        fprintf(stderr, "the test list names %s, rtm_algorithms() has no more\n", names[i]);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--covers") == 0)
        return covers(argv + 2, argc - 2);
    if (argc != 3) {
        fprintf(stderr, "usage: %s ALGORITHM plain|locked|shared\n", argv[0]);
        return 2;
    }
    int known = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        known |= strcmp(*a, argv[1]) == 0;
    int kind = -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(argv[2], kind_names[k]) == 0)
            kind = k;
    if (!known || kind < 0) {
        fprintf(stderr, "unknown algorithm or heap kind: %s %s\n", argv[1], argv[2]);
        return 2;
    }
    the_algorithm = argv[1];
    the_kind = (heap_kind)kind;
    check_run(argv[2], run_chosen);
    return check_summary();
}
