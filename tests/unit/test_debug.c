// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_debug.c -- what a debug build (RTM_DEBUG=1) of the TLSF
 * heap adds over a release build: rtm_tlsf_free and rtm_tlsf_realloc refuse
 * pointers outside every pool and blocks whose header was overwritten, and
 * add_pool refuses a region that overlaps the heap. This program links
 * rtmem_debug_variant (tests/CMakeLists.txt); the release behaviour of the
 * same calls is tested in test_tlsf.c.
 *
 * Every refused call must (1) return -1 / NULL with errno EINVAL, (2) send
 * exactly one report of the expected kind to the error handler, and (3)
 * leave the heap as it was: stats equal, rtm_tlsf_check clean, the blocks'
 * contents intact. (3) is what makes the debug checks worth having: a free
 * that reports and then corrupts the heap anyway would only move the crash.
 *
 * Which misuse O(1) checks cannot see, and this file therefore does not
 * expect to be caught: a pointer into a live block whose preceding word the
 * user filled with something that looks exactly like a used header, and a
 * header overwritten with a span that lands on such a word. rtm_tlsf_check
 * (O(heap)) finds those.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/bytes.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"

#define KiB ((size_t)1024)
#define HDR ((size_t)RTM_TLSF_HEADER_BYTES)

static void fill(void *p, size_t n, unsigned char v) { memset(p, v, n); }

/* A heap with a few live blocks (contents known) and a free one between
 * them, so the free lists are not trivial. */
typedef struct fixture {
    test_region r;
    rtm_tlsf *t;
    unsigned char *a, *b, *c; /* live, 256 bytes each, filled 0xA1/0xB2/0xC3 */
} fixture;

static fixture make_fixture(size_t misalign)
{
    fixture f;
    f.r = region_malloc(64 * KiB, misalign);
    f.t = rtm_tlsf_create(f.r.mem, f.r.bytes);
    REQUIRE(f.t != NULL);
    f.a = rtm_tlsf_alloc(f.t, 256);
    void *hole = rtm_tlsf_alloc(f.t, 100);
    f.b = rtm_tlsf_alloc(f.t, 256);
    f.c = rtm_tlsf_alloc(f.t, 256);
    REQUIRE(f.a && hole && f.b && f.c);
    REQUIRE(rtm_tlsf_free(f.t, hole) == 0);
    fill(f.a, 256, 0xA1);
    fill(f.b, 256, 0xB2);
    fill(f.c, 256, 0xC3);
    return f;
}

static int fixture_intact(const fixture *f)
{
    return all_bytes(f->a, 256, 0xA1) && all_bytes(f->b, 256, 0xB2) && all_bytes(f->c, 256, 0xC3);
}

/* The refused-call contract: -1/NULL and EINVAL from free, then from
 * realloc; one report per call, of kind `want` (or `alt` when not 0); the
 * heap unchanged. `what` names the case in failure messages. */
static void expect_refused(fixture *f, void *ptr, rtm_error_kind want, rtm_error_kind alt,
                           const char *what)
{
    rtm_stats st0 = rtm_tlsf_stats(f->t);
    recorder_install();
    errno = 0;
    int rc = rtm_tlsf_free(f->t, ptr);
    int e = errno;
    error_record rec = *recorder();
    CHECK_MSG(rc == -1 && e == EINVAL, "%s: free returned %d, errno %d (want -1, EINVAL)", what, rc,
              e);
    int kind_ok = rec.calls == 1 && (rec.last_kind == want || (alt != 0 && rec.last_kind == alt));
    CHECK_MSG(kind_ok, "%s: free made %u report(s), last %s (want one %s%s%s)", what, rec.calls,
              recorder_kind_name(rec.last_kind), recorder_kind_name(want), alt ? " or " : "",
              alt ? recorder_kind_name(alt) : "");
    if (rec.calls == 1)
        CHECK_PTR_EQ(rec.last_ptr, ptr);

    recorder_reset();
    errno = 0;
    void *q = rtm_tlsf_realloc(f->t, ptr, 64);
    e = errno;
    rec = *recorder();
    CHECK_MSG(q == NULL && e == EINVAL, "%s: realloc returned %p, errno %d (want NULL, EINVAL)",
              what, q, e);
    kind_ok = rec.calls == 1 && (rec.last_kind == want || (alt != 0 && rec.last_kind == alt));
    CHECK_MSG(kind_ok, "%s: realloc made %u report(s), last %s", what, rec.calls,
              recorder_kind_name(rec.last_kind));
    rtm_set_error_handler(NULL, NULL);

    rtm_stats st = rtm_tlsf_stats(f->t);
    CHECK_MSG(stats_equal(st, st0),
              "%s: stats changed: used %zu -> %zu, free %zu -> %zu, live %zu -> %zu", what,
              st0.used_bytes, st.used_bytes, st0.free_bytes, st.free_bytes, st0.live_blocks,
              st.live_blocks);
}

/* After the refusals the heap is whole: check clean, contents intact, and
 * every block still frees normally. */
static void expect_heap_whole(fixture *f, const char *what)
{
    CHECK_MSG(rtm_tlsf_check(f->t) == 0, "%s: check failed afterwards", what);
    CHECK_MSG(fixture_intact(f), "%s: a live block's contents changed", what);
    CHECK_EQ(rtm_tlsf_free(f->t, f->a), 0);
    CHECK_EQ(rtm_tlsf_free(f->t, f->b), 0);
    CHECK_EQ(rtm_tlsf_free(f->t, f->c), 0);
    CHECK_EQ(rtm_tlsf_stats(f->t).live_blocks, 0);
    CHECK_EQ(rtm_tlsf_check(f->t), 0);
}

/* --- pointers outside every pool -------------------------------------------------- */

/* A live block of another heap: its header is a perfectly valid used header,
 * so only the pool test can tell. */
static void test_pointer_into_other_heap(void)
{
    fixture f = make_fixture(0);
    fixture other = make_fixture(5);
    expect_refused(&f, other.b, RTM_ERR_FOREIGN_POINTER, 0, "live block of another heap");
    CHECK(fixture_intact(&other)); /* the other heap was not touched either */
    CHECK_EQ(rtm_tlsf_check(other.t), 0);
    CHECK_EQ(rtm_tlsf_stats(other.t).live_blocks, 3);
    expect_heap_whole(&f, "live block of another heap");
    region_free(&other.r);
    region_free(&f.r);
}

/* The first byte of another heap's free space: the word below it is that
 * heap's header of a free block (FREE bit set). It is still a pointer
 * outside every pool of this heap. */
static void test_pointer_into_other_heaps_free_block(void)
{
    fixture f = make_fixture(0);
    fixture other = make_fixture(0);
    /* the rest of the pool, free */
    unsigned char *free_space = other.c + rtm_tlsf_usable_size(other.c) + HDR;
    REQUIRE((get32(free_space - HDR) & 1u) != 0);
    expect_refused(&f, free_space, RTM_ERR_FOREIGN_POINTER, 0,
                   "free block of another heap (header has the FREE bit)");
    CHECK_EQ(rtm_tlsf_check(other.t), 0);
    expect_heap_whole(&f, "free block of another heap");
    region_free(&other.r);
    region_free(&f.r);
}

/* A stack address, 8-aligned, whose preceding word is whatever the stack
 * holds: zero, a plausible used header, or bytes with bit 0 set (which in a
 * heap would mean FREE). Outside every pool in all cases. */
static void test_stack_pointer(void)
{
    const uint32_t below[] = {0u, 0x100u, 0x7FFFFFF8u, 0xFFFFFFF0u, 0xFFFFFFFFu, 0x41414141u};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        fixture f = make_fixture(0);
        uint64_t stack[8] = {0};
        unsigned char *p = (unsigned char *)&stack[4]; /* the word below is inside stack[] */
        put32(p - HDR, below[i]);
        char what[96];
        snprintf(what, sizeof what, "stack pointer, word below = 0x%08x", (unsigned)below[i]);
        expect_refused(&f, p, RTM_ERR_FOREIGN_POINTER, 0, what);
        CHECK_MSG(get32(p - HDR) == below[i] && stack[5] == 0 && stack[6] == 0,
                  "%s: the heap wrote to the stack", what);
        expect_heap_whole(&f, what);
        region_free(&f.r);
    }
}

/* A foreign pointer at the start of a mapping, preceded by an inaccessible
 * page (a pointer from mmap freed into the heap by mistake): a debug build
 * must refuse it, not fault reading a header that does not exist. Run in a
 * child process so that a fault is a failed check, not a dead test run. */
static void test_foreign_pointer_at_page_start(void)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        fixture f = make_fixture(0);
        guarded_region g = region_map_guarded(1, 0); /* g.mem: first byte after a guard page */
        rtm_stats st0 = rtm_tlsf_stats(f.t);
        recorder_install();
        errno = 0;
        int rc = rtm_tlsf_free(f.t, g.mem);
        int ok = rc == -1 && errno == EINVAL && recorder()->calls == 1 &&
                 recorder()->last_kind == RTM_ERR_FOREIGN_POINTER &&
                 stats_equal(rtm_tlsf_stats(f.t), st0) && rtm_tlsf_check(f.t) == 0;
        _exit(ok ? 0 : 3);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "free(page-aligned pointer after a PROT_NONE page): child %s %d (signal 11 = it "
              "read the 4 bytes below the pointer before checking the pools)",
              WIFSIGNALED(status) ? "killed by signal" : "exited with",
              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* --- pointers inside a live block ------------------------------------------------- */

/* A pointer into the middle of a live block: the word below it is user data.
 * Zeros (a span of 0) and a fill whose words have bit 0 clear and a span
 * beyond the pool must be refused; either kind of report is a fair name for
 * it. The block's contents must survive. */
static void test_interior_pointer(void)
{
    const unsigned char fills[] = {0x00, 0x5A, 0xF8};
    const size_t offsets[] = {8, 16, 64, 248};
    for (size_t fi = 0; fi < sizeof fills; fi++) {
        for (size_t oi = 0; oi < sizeof offsets / sizeof offsets[0]; oi++) {
            fixture f = make_fixture(3);
            fill(f.b, 256, fills[fi]);
            char what[96];
            snprintf(what, sizeof what, "interior pointer b + %zu, block filled 0x%02x",
                     offsets[oi], fills[fi]);
            expect_refused(&f, f.b + offsets[oi], RTM_ERR_FOREIGN_POINTER, RTM_ERR_CORRUPT_HEADER,
                           what);
            CHECK_MSG(all_bytes(f.b, 256, fills[fi]), "%s: the block's contents changed", what);
            fill(f.b, 256, 0xB2);
            expect_heap_whole(&f, what);
            region_free(&f.r);
        }
    }
}

/* --- overwritten headers ---------------------------------------------------------- */

/* The user writes the 4 bytes just below their block (an underrun, or an
 * overrun of the block before it) with a value that changes the span: the
 * free must be refused as CORRUPT_HEADER, and nothing else change. Values:
 * zeros (memset), a span below the minimum, spans beyond the pool, and text
 * (an overrun of a string in the previous block). */
static void test_overwritten_header(void)
{
    const uint32_t garbage[] = {0x00000000u, 0x00000008u, 0x00000010u, 0x7FFFFFF8u,
                                0xFFFFFFF8u, 0x40404040u, 0x41414141u, 0x20202020u};
    for (size_t gi = 0; gi < sizeof garbage / sizeof garbage[0]; gi++) {
        fixture f = make_fixture(0);
        uint32_t saved = get32(f.b - HDR);
        REQUIRE((saved & ~(uint32_t)7u) != (garbage[gi] & ~(uint32_t)7u)); /* span changes */
        put32(f.b - HDR, garbage[gi]);
        char what[96];
        snprintf(what, sizeof what, "header of a live block overwritten with 0x%08x",
                 (unsigned)garbage[gi]);
        expect_refused(&f, f.b, RTM_ERR_CORRUPT_HEADER, 0, what);
        CHECK_MSG(get32(f.b - HDR) == garbage[gi], "%s: the heap rewrote the header", what);
        /* The user repairs it: the heap is exactly as before. */
        put32(f.b - HDR, saved);
        expect_heap_whole(&f, what);
        region_free(&f.r);
    }
}

/* The same with the block's left neighbour free, so the header carries
 * PREV_FREE and the footer of that neighbour is consulted too. */
static void test_overwritten_header_after_free_block(void)
{
    const uint32_t garbage[] = {0x00000002u, 0x7FFFFFFAu, 0x00000008u};
    for (size_t gi = 0; gi < sizeof garbage / sizeof garbage[0]; gi++) {
        fixture f = make_fixture(0);
        /* The fixture's hole is just before b: b's header has PREV_FREE. */
        uint32_t saved = get32(f.b - HDR);
        REQUIRE((saved & 2u) != 0);
        put32(f.b - HDR, garbage[gi]);
        char what[96];
        snprintf(what, sizeof what, "header after a free block overwritten with 0x%08x",
                 (unsigned)garbage[gi]);
        expect_refused(&f, f.b, RTM_ERR_CORRUPT_HEADER, 0, what);
        put32(f.b - HDR, saved);
        expect_heap_whole(&f, what);
        region_free(&f.r);
    }
    /* The free neighbour's footer (the word below b's header) overwritten:
     * b's header is intact but the merge would use a wrong span. */
    fixture f = make_fixture(0);
    uint32_t saved = get32(f.b - 2u * HDR);
    put32(f.b - 2u * HDR, saved + 64u);
    expect_refused(&f, f.b, RTM_ERR_CORRUPT_HEADER, 0, "footer of b's free neighbour + 64");
    put32(f.b - 2u * HDR, saved);
    expect_heap_whole(&f, "footer of b's free neighbour");
    region_free(&f.r);
}

/* A double free of a block that merged into a free neighbour leaves the
 * block's old header in place (without the FREE bit); the release build
 * cannot see it (test_tlsf.c), the debug build's neighbour check must. */
static void test_double_free_after_merge(void)
{
    for (unsigned cfg = 1; cfg < 4; cfg++) {
        test_region r = region_malloc(64 * KiB, 0);
        rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
        REQUIRE(t != NULL);
        unsigned char *a = rtm_tlsf_alloc(t, 200), *x = rtm_tlsf_alloc(t, 200),
                      *c = rtm_tlsf_alloc(t, 200), *sep = rtm_tlsf_alloc(t, 40);
        REQUIRE(a && x && c && sep);
        if (cfg & 1u)
            REQUIRE(rtm_tlsf_free(t, a) == 0);
        if (cfg & 2u)
            REQUIRE(rtm_tlsf_free(t, c) == 0);
        REQUIRE(rtm_tlsf_free(t, x) == 0);
        rtm_stats st0 = rtm_tlsf_stats(t);
        recorder_install();
        errno = 0;
        int rc = rtm_tlsf_free(t, x);
        int e = errno;
        error_record rec = *recorder();
        rtm_set_error_handler(NULL, NULL);
        CHECK_MSG(
            rc == -1 && e == EINVAL && rec.calls == 1 &&
                (rec.last_kind == RTM_ERR_DOUBLE_FREE || rec.last_kind == RTM_ERR_CORRUPT_HEADER),
            "double free, left %s right %s: returned %d errno %d, %u report(s) %s",
            (cfg & 1u) ? "free" : "used", (cfg & 2u) ? "free" : "used", rc, e, rec.calls,
            recorder_kind_name(rec.last_kind));
        CHECK(stats_equal(rtm_tlsf_stats(t), st0));
        CHECK_EQ(rtm_tlsf_check(t), 0);
        region_free(&r);
    }
}

/* --- add_pool overlap ------------------------------------------------------------- */

typedef struct overlap_case {
    const char *what;
    size_t start; /* offset in the buffer */
    size_t bytes;
} overlap_case;

/* Layout in one buffer (offsets): [8K .. 72K) the heap's first region,
 * [96K .. 128K) an added pool. Each case overlaps one of them. */
static void overlap_cases(int generic)
{
    test_region buf = region_malloc(256 * KiB, 0);
    unsigned char *base = buf.mem;
    rtm_heap *h = NULL;
    rtm_tlsf *t = NULL;
    if (generic) {
        h = rtm_heap_create("tlsf", base + 8 * KiB, 64 * KiB);
        REQUIRE(h != NULL);
        REQUIRE(rtm_heap_add_pool(h, base + 96 * KiB, 32 * KiB) == 0);
    } else {
        t = rtm_tlsf_create(base + 8 * KiB, 64 * KiB);
        REQUIRE(t != NULL);
        REQUIRE(rtm_tlsf_add_pool(t, base + 96 * KiB, 32 * KiB) == 0);
    }
    void *live = generic ? rtm_alloc(h, 1000) : rtm_tlsf_alloc(t, 1000);
    REQUIRE(live != NULL);
    const overlap_case cases[] = {
        {"the first region itself", 8 * KiB, 64 * KiB},
        {"the start of the first region (handle, control)", 4 * KiB, 4 * KiB + 64},
        {"the first 8 bytes of the first region", 4 * KiB, 4 * KiB + 8},
        {"the middle of the first pool", 20 * KiB, 8 * KiB},
        {"the end of the first pool", 70 * KiB, 8 * KiB},
        {"the added pool itself", 96 * KiB, 32 * KiB},
        {"the start of the added pool", 90 * KiB, 6 * KiB + 8},
        {"the end of the added pool", 128 * KiB - 8, 8 * KiB},
        {"both pools", 0, 160 * KiB},
        {"strictly inside the added pool", 100 * KiB, 4 * KiB},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rtm_stats st0 = generic ? rtm_heap_stats(h) : rtm_tlsf_stats(t);
        errno = 0;
        int rc = generic ? rtm_heap_add_pool(h, base + cases[i].start, cases[i].bytes)
                         : rtm_tlsf_add_pool(t, base + cases[i].start, cases[i].bytes);
        int e = errno;
        CHECK_MSG(rc == -1 && e == EINVAL,
                  "%s add_pool over %s ([%zu, %zu) vs heap [8192, 73728) + [98304, 131072)): "
                  "returned %d, errno %d",
                  generic ? "generic" : "typed", cases[i].what, cases[i].start,
                  cases[i].start + cases[i].bytes, rc, e);
        if (rc == 0) { /* accepted: say whether the heap survived, then stop */
            errno = 0;
            int chk = generic ? rtm_heap_check(h) : rtm_tlsf_check(t);
            CHECK_MSG(chk == 0,
                      "  ... and after that add_pool the heap's check returns %d, "
                      "errno %d",
                      chk, errno);
            goto out;
        }
        rtm_stats st = generic ? rtm_heap_stats(h) : rtm_tlsf_stats(t);
        CHECK_MSG(stats_equal(st, st0), "%s: refused add_pool changed the stats", cases[i].what);
        CHECK_EQ(generic ? rtm_heap_check(h) : rtm_tlsf_check(t), 0);
    }
    /* Regions that touch but do not overlap are fine: right after the first
     * region and right after the added pool. */
    CHECK_EQ(generic ? rtm_heap_add_pool(h, base + 72 * KiB, 16 * KiB)
                     : rtm_tlsf_add_pool(t, base + 72 * KiB, 16 * KiB),
             0);
    CHECK_EQ(generic ? rtm_heap_add_pool(h, base + 128 * KiB, 16 * KiB)
                     : rtm_tlsf_add_pool(t, base + 128 * KiB, 16 * KiB),
             0);
    CHECK_EQ(generic ? rtm_heap_check(h) : rtm_tlsf_check(t), 0);
    if (generic)
        rtm_free(h, live);
    else
        CHECK_EQ(rtm_tlsf_free(t, live), 0);
    CHECK_EQ(generic ? rtm_heap_check(h) : rtm_tlsf_check(t), 0);
out:
    region_free(&buf);
}

static void test_add_pool_overlap_typed(void) { overlap_cases(0); }

static void test_add_pool_overlap_generic(void) { overlap_cases(1); }

int main(void)
{
    RUN_TEST(test_pointer_into_other_heap);
    RUN_TEST(test_pointer_into_other_heaps_free_block);
    RUN_TEST(test_stack_pointer);
    RUN_TEST(test_foreign_pointer_at_page_start);
    RUN_TEST(test_interior_pointer);
    RUN_TEST(test_overwritten_header);
    RUN_TEST(test_overwritten_header_after_free_block);
    RUN_TEST(test_double_free_after_merge);
    RUN_TEST(test_add_pool_overlap_typed);
    RUN_TEST(test_add_pool_overlap_generic);
    return check_summary();
}
