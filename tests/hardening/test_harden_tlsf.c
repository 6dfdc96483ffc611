// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_tlsf.c -- issue 12, TLSF: bad input to a
 * release build of the TLSF heap, through its three front doors (the typed
 * API rtm_tlsf_*, the generic rtm_* on a "tlsf" heap, and a locked heap
 * over TLSF). Black box: public headers only.
 *
 *   overlap   rtm_*_add_pool of a region sharing bytes with the heap's
 *             control structure or one of its pools is refused (EINVAL, the
 *             heap unchanged). It used to be accepted outside debug builds,
 *             and the heap then handed out overlapping blocks.
 *   wrap      rtm_tlsf_create and rtm_*_add_pool of a size whose end wraps
 *             the address space (SIZE_MAX, SIZE_MAX - 1, UINTPTR_MAX - mem +
 *             1) are refused, never crash.
 *   foreign, interior, stale, header
 *             free, realloc and usable_size of an 8-aligned pointer that is
 *             not a live block: a stack, static or unmapped-neighbour
 *             address, another heap's block, the heap's own control or pool
 *             end (foreign); a pointer into a live or free block (interior);
 *             a freed block whose memory was merged and re-split (stale); a
 *             block whose header or neighbour was overwritten (header). Each
 *             used to crash or wrap the counters in release builds.
 *   pool      the same kinds of misuse in a second pool that does not touch
 *             the first (the path that searches the pools).
 *
 * Every refused call must (1) return -1 / NULL / 0 with errno EINVAL,
 * (2) send exactly one report of an expected kind to the error handler,
 * about that pointer, and (3) leave the heap as it was: stats equal, the
 * check clean, the blocks' contents intact, every block still freeing. Which
 * misuse cannot be detected (a word below the pointer that looks exactly
 * like a used header with consistent neighbours) is in include/rtmem/tlsf.h
 * and is not asserted here.
 *
 * Usage: test_harden_tlsf CASE API, CASE one of the above, API typed,
 * generic or locked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/bytes.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"
#include "../tracking/track_test.h"

#define KiB ((size_t)1024)
#define HDR ((size_t)RTM_TLSF_HEADER_BYTES)

/* ---------------------------------------------------------------------- */
/* One heap behind one of three APIs                                       */
/* ---------------------------------------------------------------------- */

typedef enum api { API_TYPED, API_GENERIC, API_LOCKED } api;
static const char *const api_names[] = {"typed", "generic", "locked"};
static api the_api;

typedef struct heap_ut {
    rtm_tlsf *t; /* typed */
    rtm_heap *h; /* generic or locked */
} heap_ut;

static int ut_create(heap_ut *u, void *mem, size_t bytes)
{
    u->t = NULL;
    u->h = NULL;
    if (the_api == API_TYPED)
        u->t = rtm_tlsf_create(mem, bytes);
    else if (the_api == API_GENERIC)
        u->h = rtm_heap_create("tlsf", mem, bytes);
    else
        u->h = rtm_locked_create("tlsf", mem, bytes);
    return u->t != NULL || u->h != NULL ? 0 : -1;
}

static void ut_destroy(heap_ut *u)
{
    if (u->h != NULL)
        rtm_heap_destroy(u->h);
}

static void *ut_alloc(heap_ut *u, size_t n)
{
    return u->t != NULL ? rtm_tlsf_alloc(u->t, n) : rtm_alloc(u->h, n);
}

/* -1 when refused. rtm_free returns nothing: errno EINVAL (cleared first)
 * is its refusal; the typed call must also set it. */
static int ut_free(heap_ut *u, void *p)
{
    errno = 0;
    if (u->t != NULL)
        return rtm_tlsf_free(u->t, p) == -1 && errno == EINVAL ? -1 : 0;
    rtm_free(u->h, p);
    return errno == EINVAL ? -1 : 0;
}

static void *ut_realloc(heap_ut *u, void *p, size_t n)
{
    return u->t != NULL ? rtm_tlsf_realloc(u->t, p, n) : rtm_realloc(u->h, p, n);
}

static rtm_stats ut_stats(heap_ut *u)
{
    return u->t != NULL ? rtm_tlsf_stats(u->t) : rtm_heap_stats(u->h);
}

static int ut_check(heap_ut *u)
{
    return u->t != NULL ? rtm_tlsf_check(u->t) : rtm_heap_check(u->h);
}

static int ut_add_pool(heap_ut *u, void *mem, size_t bytes)
{
    return u->t != NULL ? rtm_tlsf_add_pool(u->t, mem, bytes) : rtm_heap_add_pool(u->h, mem, bytes);
}

/* The span a request of n bytes gets (tlsf.c): header and rounding to 8. */
static size_t span_for(size_t n)
{
    size_t s = (n + HDR + 7u) & ~(size_t)7u;
    return s < RTM_TLSF_MIN_BLOCK + HDR ? RTM_TLSF_MIN_BLOCK + HDR : s;
}

/* ---------------------------------------------------------------------- */
/* The refused-call contract                                               */
/* ---------------------------------------------------------------------- */

#define KIND(k)     (1u << (unsigned)(k))
#define K_FOREIGN   KIND(RTM_ERR_FOREIGN_POINTER)
#define K_DOUBLE    KIND(RTM_ERR_DOUBLE_FREE)
#define K_CORRUPT   KIND(RTM_ERR_CORRUPT_HEADER)
#define K_NOT_BLOCK (K_CORRUPT | K_DOUBLE) /* a word below with FREE set reads as a freed block */

static int one_report_of(const error_record *rec, unsigned kinds)
{
    return rec->calls == 1 && (KIND(rec->last_kind) & kinds) != 0;
}

/* free, realloc and (generic, locked) usable_size of ptr are each refused
 * with EINVAL and one report of a kind in `kinds`; the heap is unchanged
 * (and, when the test has not damaged it on purpose, checks clean). */
static void expect_refused_in(heap_ut *u, void *ptr, unsigned kinds, int damaged, const char *what)
{
    rtm_stats st0 = ut_stats(u);
    recorder_install();
    int rc = ut_free(u, ptr);
    int e = errno;
    error_record rec = *recorder();
    CHECK_MSG(rc == -1, "%s: free not refused (errno %d)", what, e);
    CHECK_MSG(one_report_of(&rec, kinds), "%s: free made %u report(s), last %s", what, rec.calls,
              recorder_kind_name(rec.last_kind));
    if (rec.calls == 1)
        CHECK_PTR_EQ(rec.last_ptr, ptr);

    recorder_reset();
    errno = 0;
    void *q = ut_realloc(u, ptr, 64);
    e = errno;
    rec = *recorder();
    CHECK_MSG(q == NULL && e == EINVAL, "%s: realloc returned %p, errno %d (want NULL, EINVAL)",
              what, q, e);
    CHECK_MSG(one_report_of(&rec, kinds), "%s: realloc made %u report(s), last %s", what, rec.calls,
              recorder_kind_name(rec.last_kind));

    if (u->h != NULL) {
        recorder_reset();
        errno = 0;
        size_t n = rtm_usable_size(u->h, ptr);
        e = errno;
        rec = *recorder();
        CHECK_MSG(n == 0 && e == EINVAL, "%s: usable_size returned %zu, errno %d (want 0, EINVAL)",
                  what, n, e);
        CHECK_MSG(one_report_of(&rec, kinds), "%s: usable_size made %u report(s), last %s", what,
                  rec.calls, recorder_kind_name(rec.last_kind));
    }
    rtm_set_error_handler(NULL, NULL);
    rtm_stats st = ut_stats(u);
    CHECK_MSG(stats_equal(st, st0),
              "%s: stats changed: used %zu -> %zu, free %zu -> %zu, live %zu -> %zu", what,
              st0.used_bytes, st.used_bytes, st0.free_bytes, st.free_bytes, st0.live_blocks,
              st.live_blocks);
    if (!damaged)
        CHECK_MSG(ut_check(u) == 0, "%s: the heap's check fails after the refusals", what);
}

static void expect_refused(heap_ut *u, void *ptr, unsigned kinds, const char *what)
{
    expect_refused_in(u, ptr, kinds, 0, what);
}

/* The same for a heap whose header the test overwrote (and will repair). */
static void expect_refused_damaged(heap_ut *u, void *ptr, unsigned kinds, const char *what)
{
    expect_refused_in(u, ptr, kinds, 1, what);
}

/* ---------------------------------------------------------------------- */
/* A heap with known contents                                              */
/* ---------------------------------------------------------------------- */

/* [a 256: 0xA1][hole 100: free, zeroed][b 256: 0xB2][c 256: 0xC3][rest free]
 * in the heap's first pool, or (in_added_pool) in a second pool that does
 * not touch the first. */
typedef struct fixture {
    test_region r;
    guarded_region r2; /* the added pool: its own mapping, never adjacent */
    heap_ut u;
    unsigned char *a, *hole, *b, *c;
} fixture;

static fixture make_fixture(size_t misalign, int in_added_pool)
{
    fixture f;
    f.r = region_malloc(64 * KiB, misalign);
    f.r2.map = NULL;
    REQUIRE(ut_create(&f.u, f.r.mem, f.r.bytes) == 0);
    if (in_added_pool) {
        /* Fill the first pool so that every block below comes from the
         * second one, which lies in another allocation. */
        REQUIRE(ut_alloc(&f.u, ut_stats(&f.u).largest_free) != NULL);
        f.r2 = region_map_guarded(8, 3);
        REQUIRE(ut_add_pool(&f.u, f.r2.mem, f.r2.bytes) == 0);
    }
    f.a = ut_alloc(&f.u, 256);
    f.hole = ut_alloc(&f.u, 100);
    f.b = ut_alloc(&f.u, 256);
    f.c = ut_alloc(&f.u, 256);
    REQUIRE(f.a && f.hole && f.b && f.c);
    REQUIRE(f.b == f.hole + span_for(100) && f.c == f.b + span_for(256)); /* layout assumed */
    memset(f.hole, 0, 100);
    REQUIRE(ut_free(&f.u, f.hole) == 0);
    memset(f.a, 0xA1, 256);
    memset(f.b, 0xB2, 256);
    memset(f.c, 0xC3, 256);
    /* The cases read and write these blocks' headers and the free rest's
     * header and links on purpose: open in tracked builds. */
    TRACK_OPEN(f.a - 2u * HDR, (size_t)(f.c + span_for(256) + 64u - (f.a - 2u * HDR)));
    return f;
}

static int fixture_intact(const fixture *f)
{
    return all_bytes(f->a, 256, 0xA1) && all_bytes(f->b, 256, 0xB2) && all_bytes(f->c, 256, 0xC3);
}

/* After the refusals the heap is whole: contents intact, every block frees,
 * the check is clean. Then the fixture is released. */
static void finish_fixture(fixture *f, const char *what)
{
    CHECK_MSG(fixture_intact(f), "%s: a live block's contents changed", what);
    CHECK_MSG(ut_free(&f->u, f->a) == 0 && ut_free(&f->u, f->b) == 0 && ut_free(&f->u, f->c) == 0,
              "%s: a live block no longer frees", what);
    CHECK_MSG(ut_check(&f->u) == 0, "%s: the heap's check fails at the end", what);
    ut_destroy(&f->u);
    region_free(&f->r);
    if (f->r2.map != NULL)
        region_unmap_guarded(&f->r2);
}

/* ---------------------------------------------------------------------- */
/* foreign: pointers outside every pool                                    */
/* ---------------------------------------------------------------------- */

static unsigned char static_area[256] __attribute__((aligned(16)));

/* In a child: a pointer to the first byte after a PROT_NONE page. Reading
 * the 4 bytes below it faults, so the pool test must come first. */
static void foreign_after_guard_page(void)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        fixture f = make_fixture(0, 0);
        guarded_region g = region_map_guarded(1, 0);
        rtm_stats st0 = ut_stats(&f.u);
        recorder_install();
        int ok = ut_free(&f.u, g.mem) == -1 && one_report_of(recorder(), K_FOREIGN) &&
                 stats_equal(ut_stats(&f.u), st0) && ut_check(&f.u) == 0;
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "free(first byte after a PROT_NONE page): child %s %d",
              WIFSIGNALED(status) ? "killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void test_foreign(void)
{
    /* Stack addresses whose word below is zero, a plausible used header, or
     * bytes with the FREE bit. */
    const uint32_t below[] = {0u,          0x40u,       0x100u,     0x7FFFFFF8u,
                              0xFFFFFFF0u, 0xFFFFFFFFu, 0x41414141u};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        fixture f = make_fixture(0, 0);
        uint64_t stack[8] = {0};
        unsigned char *p = (unsigned char *)&stack[4];
        put32(p - HDR, below[i]);
        char what[96];
        snprintf(what, sizeof what, "stack pointer, word below 0x%08x", (unsigned)below[i]);
        expect_refused(&f.u, p, K_FOREIGN, what);
        CHECK_MSG(get32(p - HDR) == below[i] && stack[5] == 0 && stack[6] == 0,
                  "%s: the heap wrote to the stack", what);
        finish_fixture(&f, what);
    }

    fixture f = make_fixture(0, 0);
    put32(static_area + 124, 0x40u);
    expect_refused(&f.u, static_area + 128, K_FOREIGN, "static address");

    /* Another TLSF heap's live block (a perfectly valid used header) and
     * the start of its free space (a valid free header). */
    fixture other = make_fixture(5, 0);
    expect_refused(&f.u, other.b, K_FOREIGN, "live block of another heap");
    unsigned char *other_free = other.c + span_for(256);
    REQUIRE((get32(other_free - HDR) & 1u) != 0);
    expect_refused(&f.u, other_free, K_FOREIGN, "free block of another heap");
    finish_fixture(&other, "the other heap");

    /* The heap's own bookkeeping: its handle (the control structure), and
     * the end of its pool (the sentinel's payload address). */
    unsigned char *handle = f.u.t != NULL ? (unsigned char *)f.u.t : (unsigned char *)f.u.h;
    expect_refused(&f.u, handle + 64, K_FOREIGN, "inside the control structure");
    unsigned char *end = f.c + span_for(256) + ut_stats(&f.u).largest_free + HDR;
    expect_refused(&f.u, end, K_FOREIGN, "the pool's end (its sentinel)");

    /* Misaligned pointers into a live block. */
    for (size_t k = 1; k < 8; k++)
        expect_refused(&f.u, f.b + k, K_FOREIGN, "misaligned pointer into a live block");
    finish_fixture(&f, "foreign");

    foreign_after_guard_page();
}

/* ---------------------------------------------------------------------- */
/* interior: pointers into blocks                                          */
/* ---------------------------------------------------------------------- */

/* Fills n bytes the way user data might look; none of them forms a used
 * header with consistent neighbours (the undetectable case). */
static void fill_pattern(unsigned char *p, size_t n, unsigned which)
{
    rng r = {0x5eed0000u + which};
    for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t w = 0;
        switch (which) {
        case 0:
            w = 0;
            break; /* zeros            */
        case 1:
            w = 0xFFFFFFFFu;
            break; /* all ones         */
        case 2:
            w = 0x5A5A5A5Au;
            break; /* a byte fill      */
        case 3:
            w = (uint32_t)(i / 4u);
            break; /* small counters   */
        case 4:
            memcpy(&w, "text", 4);
            break; /* ASCII            */
        default:
            w = (uint32_t)rng_next(&r);
            break; /* random words     */
        }
        put32(p + i, w);
    }
}

static void test_interior(void)
{
    for (unsigned which = 0; which < 8; which++) {
        fixture f = make_fixture(3, 0);
        fill_pattern(f.b, 256, which);
        unsigned char saved[256];
        memcpy(saved, f.b, 256);
        for (size_t off = 8; off < 256; off += 8) {
            char what[96];
            snprintf(what, sizeof what, "b + %zu, fill %u", off, which);
            expect_refused(&f.u, f.b + off, K_NOT_BLOCK, what);
        }
        CHECK_MSG(memcmp(saved, f.b, 256) == 0, "fill %u: the block's contents changed", which);
        memset(f.b, 0xB2, 256);
        finish_fixture(&f, "interior of a live block");
    }
    /* Inside the free hole: its links, zeroed data, footer. */
    fixture f = make_fixture(0, 0);
    for (unsigned char *p = f.hole + 8; p < f.b; p += 8)
        expect_refused(&f.u, p, K_NOT_BLOCK, "interior of a free block");
    finish_fixture(&f, "interior of a free block");
}

/* ---------------------------------------------------------------------- */
/* stale: freed, merged and re-split                                       */
/* ---------------------------------------------------------------------- */

/* [a 200][x 200][c 200][sep]: x is freed and merged with a (which is freed
 * before or after it), then the merged block is allocated again as one
 * block m that covers x's old header, and the user writes m. */
static void stale_case(int a_first, unsigned which)
{
    test_region r = region_malloc(64 * KiB, 0);
    heap_ut u;
    REQUIRE(ut_create(&u, r.mem, r.bytes) == 0);
    unsigned char *a = ut_alloc(&u, 200), *x = ut_alloc(&u, 200), *c = ut_alloc(&u, 200),
                  *sep = ut_alloc(&u, 40);
    REQUIRE(a && x && c && sep && x == a + span_for(200) && c == x + span_for(200));
    if (a_first)
        REQUIRE(ut_free(&u, a) == 0 && ut_free(&u, x) == 0);
    else
        REQUIRE(ut_free(&u, x) == 0 && ut_free(&u, a) == 0);
    char what[96];
    snprintf(what, sizeof what, "stale x (merged %s), not reallocated",
             a_first ? "into a" : "with a");
    expect_refused(&u, x, K_DOUBLE, what); /* its old header says FREE */

    unsigned char *m = ut_alloc(&u, 400);
    REQUIRE(m == a); /* the merged block again, x's header now user data */
    fill_pattern(m, 400, which);
    snprintf(what, sizeof what, "stale x (merged %s), memory reallocated, fill %u",
             a_first ? "into a" : "with a", which);
    expect_refused(&u, x, K_NOT_BLOCK, what);
    CHECK(ut_free(&u, m) == 0 && ut_free(&u, c) == 0 && ut_free(&u, sep) == 0);
    CHECK_EQ(ut_stats(&u).live_blocks, 0);
    CHECK_EQ(ut_check(&u), 0);
    ut_destroy(&u);
    region_free(&r);
}

static void test_stale(void)
{
    for (unsigned which = 0; which < 8; which++) {
        stale_case(0, which);
        stale_case(1, which);
    }
}

/* ---------------------------------------------------------------------- */
/* header: overwritten headers and neighbours                              */
/* ---------------------------------------------------------------------- */

static void test_header(void)
{
    /* b's header (its left neighbour, the hole, is free: PREV_FREE set)
     * overwritten: zeros, spans below the minimum, beyond the pool, text,
     * and the PREV_FREE bit with spans that would merge wrongly. */
    const uint32_t garbage[] = {0x00000000u, 0x00000008u, 0x00000010u, 0x00000002u, 0x7FFFFFF8u,
                                0xFFFFFFF8u, 0x40404040u, 0x20202020u, 0x7FFFFFFAu, 0x0000000Au};
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        fixture f = make_fixture(0, 0);
        uint32_t saved = get32(f.b - HDR);
        REQUIRE((saved & 2u) != 0);
        put32(f.b - HDR, garbage[i]);
        char what[96];
        snprintf(what, sizeof what, "b's header overwritten with 0x%08x", (unsigned)garbage[i]);
        expect_refused_damaged(&f.u, f.b, K_CORRUPT, what);
        CHECK_MSG(get32(f.b - HDR) == garbage[i], "%s: the heap rewrote the header", what);
        put32(f.b - HDR, saved);
        finish_fixture(&f, what);
    }

    /* The free neighbour's footer (the word below b's header): off by a
     * granule, past the pool's start, zero. */
    const uint32_t footer_delta[] = {8u, 64u, 0x10000000u};
    for (size_t i = 0; i < 4; i++) {
        fixture f = make_fixture(0, 0);
        uint32_t saved = get32(f.b - 2u * HDR);
        put32(f.b - 2u * HDR, i < 3 ? saved + footer_delta[i] : 0u);
        expect_refused_damaged(&f.u, f.b, K_CORRUPT, "footer of b's free neighbour overwritten");
        put32(f.b - 2u * HDR, saved);
        finish_fixture(&f, "footer");
    }

    /* c's left neighbour b is used: setting PREV_FREE in c's header makes
     * the merge read b's user data as a footer. */
    fixture f = make_fixture(0, 0);
    uint32_t saved = get32(f.c - HDR);
    REQUIRE((saved & 2u) == 0);
    put32(f.c - HDR, saved | 2u);
    expect_refused_damaged(&f.u, f.c, K_CORRUPT, "PREV_FREE set in c's header, b used");
    put32(f.c - HDR, saved);

    /* The block after b says its predecessor is free: b's own header is
     * fine but disagrees with its neighbour. */
    put32(f.c - HDR, saved | 2u);
    expect_refused_damaged(&f.u, f.b, K_CORRUPT, "PREV_FREE set in the header after b");
    put32(f.c - HDR, saved);
    finish_fixture(&f, "neighbour flags");
}

/* ---------------------------------------------------------------------- */
/* pool: misuse in a pool that is searched                                 */
/* ---------------------------------------------------------------------- */

static void test_pool(void)
{
    for (unsigned which = 0; which < 3; which++) {
        fixture f = make_fixture(0, 1);
        fill_pattern(f.b, 256, which);
        for (size_t off = 8; off < 256; off += 8)
            expect_refused(&f.u, f.b + off, K_NOT_BLOCK, "interior pointer, added pool");
        memset(f.b, 0xB2, 256);
        uint32_t saved = get32(f.b - HDR);
        put32(f.b - HDR, 0);
        expect_refused_damaged(&f.u, f.b, K_CORRUPT, "header zeroed, added pool");
        put32(f.b - HDR, saved);
        /* The free rest after c: a header word read inside its links is a
         * link's odd low half (FREE) or its high half (span 0), on every
         * byte order and word size (links, tlsf_layout.h); +16 on 32-bit
         * reads the rest's untouched bytes (zero). */
        expect_refused(&f.u, f.c + span_for(256) + 8, K_NOT_BLOCK, "free space, added pool");
        expect_refused(&f.u, f.c + span_for(256) + 16, K_NOT_BLOCK, "free space, added pool");
        finish_fixture(&f, "added pool");
    }
    /* A pointer between the two pools' allocations is in neither. */
    fixture f = make_fixture(0, 1);
    unsigned char gap[64] __attribute__((aligned(8))) = {0};
    expect_refused(&f.u, gap + 32, K_FOREIGN, "stack pointer, heap of two pools");
    finish_fixture(&f, "two pools");
}

/* ---------------------------------------------------------------------- */
/* overlap: add_pool over the heap itself                                  */
/* ---------------------------------------------------------------------- */

typedef struct overlap_case {
    const char *what;
    size_t start; /* offset in the buffer */
    size_t bytes;
    int guard_only; /* for a locked heap it may touch only the guard (below) */
} overlap_case;

/* Buffer offsets: [8K, 72K) the heap's first region (handle and control
 * first), [96K, 128K) an added pool. Each case overlaps one of them. A
 * locked heap's region starts with its guard, which is not TLSF's to
 * protect (shared/guarded.c): cases that may touch only the guard are left
 * out there. */
static void test_overlap(void)
{
    test_region buf = region_malloc(256 * KiB, 0);
    unsigned char *base = buf.mem;
    heap_ut u;
    REQUIRE(ut_create(&u, base + 8 * KiB, 64 * KiB) == 0);
    REQUIRE(ut_add_pool(&u, base + 96 * KiB, 32 * KiB) == 0);
    unsigned char *live = ut_alloc(&u, 1000);
    REQUIRE(live != NULL);
    memset(live, 0x7E, 1000);
    const overlap_case cases[] = {
        {"the first region itself", 8 * KiB, 64 * KiB, 0},
        {"the start of the first region (handle, control)", 4 * KiB, 4 * KiB + 64, 1},
        {"the first 8 bytes of the first region", 4 * KiB, 4 * KiB + 8, 1},
        {"the control structure only", 8 * KiB + 64, 512, 1},
        {"the live block", (size_t)(live - base) - 64, 2 * KiB, 0},
        {"the middle of the first pool", 20 * KiB, 8 * KiB, 0},
        {"the end of the first pool", 70 * KiB, 8 * KiB, 0},
        {"the added pool itself", 96 * KiB, 32 * KiB, 0},
        {"the start of the added pool", 90 * KiB, 6 * KiB + 8, 0},
        {"the end of the added pool", 128 * KiB - 8, 8 * KiB, 0},
        {"both pools", 0, 160 * KiB, 0},
        {"strictly inside the added pool", 100 * KiB, 4 * KiB, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (the_api == API_LOCKED && cases[i].guard_only)
            continue;
        rtm_stats st0 = ut_stats(&u);
        errno = 0;
        int rc = ut_add_pool(&u, base + cases[i].start, cases[i].bytes);
        int e = errno;
        CHECK_MSG(rc == -1 && e == EINVAL,
                  "add_pool over %s ([%zu, %zu) vs heap [8192, 73728) + [98304, 131072)): "
                  "returned %d, errno %d",
                  cases[i].what, cases[i].start, cases[i].start + cases[i].bytes, rc, e);
        if (rc == 0) {
            /* Accepted: show what that does, then stop (the heap is bad). */
            unsigned char *q = ut_alloc(&u, 2 * KiB);
            int overlaps = q != NULL && q < live + 1000 && live < q + 2 * KiB;
            CHECK_MSG(0, "  ... after it the heap's check returns %d; alloc(2K) = %p %s",
                      ut_check(&u), (void *)q,
                      overlaps ? "overlaps the live block" : "does not overlap the live block");
            goto out;
        }
        CHECK_MSG(stats_equal(ut_stats(&u), st0), "%s: refused add_pool changed the stats",
                  cases[i].what);
        CHECK_EQ(ut_check(&u), 0);
    }
    CHECK(all_bytes(live, 1000, 0x7E));
    /* Regions that touch the heap without sharing a byte are fine. */
    CHECK_EQ(ut_add_pool(&u, base + 72 * KiB, 16 * KiB), 0);
    CHECK_EQ(ut_add_pool(&u, base + 128 * KiB, 16 * KiB), 0);
    CHECK_EQ(ut_add_pool(&u, base + 0, 8 * KiB - 64), 0);
    CHECK_EQ(ut_check(&u), 0);
    CHECK_EQ(ut_free(&u, live), 0);
    CHECK_EQ(ut_stats(&u).live_blocks, 0);
out:
    ut_destroy(&u);
    region_free(&buf);
}

/* ---------------------------------------------------------------------- */
/* wrap: sizes whose end wraps the address space                           */
/* ---------------------------------------------------------------------- */

#define WRAP_REGION (64u * 1024u)
#define WRAP_FILL   0xc3

/* In a child: create over (mem, bytes) must be refused, the region
 * untouched; then an add_pool of the same size to a real heap must be
 * refused, the heap unchanged. Exit status 0 when both hold. */
static int wrap_child(unsigned char *buf, unsigned char *mem, size_t bytes)
{
    int bad = 0;
    memset(buf, WRAP_FILL, 2 * WRAP_REGION);
    errno = 0;
    heap_ut u;
    if (the_api == API_TYPED) {
        rtm_tlsf *t = rtm_tlsf_create(mem, bytes);
        if (t != NULL || errno != EINVAL) {
            fprintf(stderr, "    create: %p, errno %d\n", (void *)t, errno);
            bad = 1;
        }
        for (size_t i = 0; i < 2 * WRAP_REGION; i++)
            if (buf[i] != WRAP_FILL) {
                fprintf(stderr, "    create wrote the region at byte %zu\n", i);
                bad = 1;
                break;
            }
    }
    /* A heap in the buffer's second half; the wrapping region starts in
     * the first. */
    if (ut_create(&u, buf + WRAP_REGION, WRAP_REGION) != 0)
        return 2;
    rtm_stats st0 = ut_stats(&u);
    errno = 0;
    int rc = ut_add_pool(&u, mem, bytes);
    if (rc != -1 || errno != EINVAL) {
        fprintf(stderr, "    add_pool: %d, errno %d\n", rc, errno);
        bad = 1;
    }
    if (!stats_equal(ut_stats(&u), st0) || ut_check(&u) != 0) {
        fprintf(stderr, "    add_pool changed the heap\n");
        bad = 1;
    }
    for (size_t i = 0; i < WRAP_REGION; i++)
        if (buf[i] != WRAP_FILL) {
            fprintf(stderr, "    add_pool wrote the region at byte %zu\n", i);
            bad = 1;
            break;
        }
    return bad;
}

static void expect_wrap_refused(unsigned char *buf, unsigned char *mem, size_t bytes,
                                const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(wrap_child(buf, mem, bytes));
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        CHECK_MSG(0, "bytes = %s (%zu) at mem %p: crashed with signal %d", what, bytes, (void *)mem,
                  WTERMSIG(status));
    else
        CHECK_MSG(WEXITSTATUS(status) == 0, "bytes = %s (%zu) at mem %p: not refused cleanly", what,
                  bytes, (void *)mem);
}

static void test_wrap(void)
{
    test_region r = region_malloc(2 * WRAP_REGION + 64, 0);
    static const size_t offsets[] = {0, 1, 3, 7};
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        unsigned char *mem = r.mem + offsets[o];
        size_t wrap = (size_t)(UINTPTR_MAX - (uintptr_t)mem) + 1u;
        expect_wrap_refused(r.mem, mem, SIZE_MAX, "SIZE_MAX");
        expect_wrap_refused(r.mem, mem, SIZE_MAX - 1u, "SIZE_MAX - 1");
        expect_wrap_refused(r.mem, mem, wrap, "UINTPTR_MAX - mem + 1");
    }
    /* The same memory with real sizes works, so refusing everything fails. */
    heap_ut u;
    REQUIRE(ut_create(&u, r.mem + WRAP_REGION, WRAP_REGION) == 0);
    CHECK_EQ(ut_add_pool(&u, r.mem + 1, WRAP_REGION - 64), 0);
    CHECK_EQ(ut_check(&u), 0);
    ut_destroy(&u);
    region_free(&r);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {{"overlap", test_overlap},   {"wrap", test_wrap},   {"foreign", test_foreign},
                 {"interior", test_interior}, {"stale", test_stale}, {"header", test_header},
                 {"pool", test_pool}};
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASE typed|generic|locked\n", argv[0]);
        return 2;
    }
    int api_ok = 0;
    for (int a = 0; a < 3; a++)
        if (strcmp(argv[2], api_names[a]) == 0) {
            the_api = (api)a;
            api_ok = 1;
        }
    for (size_t i = 0; api_ok && i < sizeof cases / sizeof cases[0]; i++)
        if (strcmp(argv[1], cases[i].name) == 0) {
            check_run(cases[i].name, cases[i].fn);
            return check_summary();
        }
    fprintf(stderr, "unknown case or API: %s %s\n", argv[1], argv[2]);
    return 2;
}
