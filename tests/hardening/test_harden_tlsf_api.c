// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_tlsf_api.c -- issue 12, TLSF: what the fixes
 * added. White box where it must read the control structure (the fast
 * range, src/heaps/tlsf_layout.h).
 *
 *   usable      rtm_tlsf_usable_size_in(t, p): the typed usable size that
 *               validates p as rtm_tlsf_free does (0, EINVAL, one report).
 *   region      rtm_tlsf_check_region(t, mem, bytes): fails when the heap
 *               reaches outside [mem, mem + bytes), and reads nothing
 *               outside it however the control structure is damaged (the
 *               heap sits between PROT_NONE pages; a read outside faults).
 *   fast_range  the range free() checks in O(1): the first pool, extended
 *               by pools that start less than 32 bytes after it; anything
 *               else is searched. The check rejects a range no pools cover;
 *               a control with the field 0 (an older layout) keeps working.
 *
 * Usage: test_harden_tlsf_api usable|region|fast_range
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
#include "heaps/tlsf_layout.h"
#include "rtmem.h"

#define KiB ((size_t)1024)

/* ---------------------------------------------------------------------- */
/* usable                                                                  */
/* ---------------------------------------------------------------------- */

static void expect_usable_refused(rtm_tlsf *t, const void *p, rtm_error_kind want,
                                  rtm_error_kind alt, const char *what)
{
    rtm_stats st0 = rtm_tlsf_stats(t);
    recorder_install();
    errno = 0;
    size_t n = rtm_tlsf_usable_size_in(t, p);
    int e = errno;
    error_record rec = *recorder();
    rtm_set_error_handler(NULL, NULL);
    CHECK_MSG(n == 0 && e == EINVAL, "%s: usable_size_in gave %zu, errno %d", what, n, e);
    CHECK_MSG(rec.calls == 1 && (rec.last_kind == want || rec.last_kind == alt),
              "%s: %u report(s), last %s", what, rec.calls, recorder_kind_name(rec.last_kind));
    CHECK(stats_equal(rtm_tlsf_stats(t), st0));
    CHECK_EQ(rtm_tlsf_check(t), 0);
}

static void test_usable(void)
{
    test_region r = region_malloc(64 * KiB, 5), r2 = region_malloc(16 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes), *other = rtm_tlsf_create(r2.mem, r2.bytes);
    REQUIRE(t != NULL && other != NULL);
    unsigned char *a = rtm_tlsf_alloc(t, 100), *b = rtm_tlsf_alloc(t, 300),
                  *o = rtm_tlsf_alloc(other, 64);
    REQUIRE(a && b && o);
    memset(b, 0, 300);
    /* Live blocks: the same number as the unchecked call, at least the
     * request; NULL: 0 without errno. */
    CHECK_EQ(rtm_tlsf_usable_size_in(t, a), rtm_tlsf_usable_size(a));
    CHECK(rtm_tlsf_usable_size_in(t, b) >= 300);
    errno = 0;
    CHECK_EQ(rtm_tlsf_usable_size_in(t, NULL), 0);
    CHECK_ERRNO(0);

    uint64_t stack[4] = {0};
    expect_usable_refused(t, &stack[2], RTM_ERR_FOREIGN_POINTER, RTM_ERR_FOREIGN_POINTER,
                          "stack address");
    expect_usable_refused(t, o, RTM_ERR_FOREIGN_POINTER, RTM_ERR_FOREIGN_POINTER,
                          "another heap's block");
    expect_usable_refused(t, a + 3, RTM_ERR_FOREIGN_POINTER, RTM_ERR_FOREIGN_POINTER, "misaligned");
    expect_usable_refused(t, b + 64, RTM_ERR_CORRUPT_HEADER, RTM_ERR_CORRUPT_HEADER,
                          "interior pointer (zeros below)");
    REQUIRE(rtm_tlsf_free(t, a) == 0);
    expect_usable_refused(t, a, RTM_ERR_DOUBLE_FREE, RTM_ERR_DOUBLE_FREE, "freed block");
    CHECK_EQ(rtm_tlsf_free(t, b), 0);
    CHECK_EQ(rtm_tlsf_stats(t).live_blocks, 0);
    region_free(&r);
    region_free(&r2);
}

/* ---------------------------------------------------------------------- */
/* region                                                                  */
/* ---------------------------------------------------------------------- */

static int fails_with(int rc, int err, unsigned reports)
{
    return rc == -1 && errno == err && recorder()->calls == reports;
}

static void test_region_bounds(void)
{
    test_region buf = region_malloc(128 * KiB, 0);
    unsigned char *m = buf.mem;
    rtm_tlsf *t = rtm_tlsf_create(m, 32 * KiB);
    REQUIRE(t != NULL);
    REQUIRE(rtm_tlsf_alloc(t, 1000) != NULL);
    CHECK_EQ(rtm_tlsf_check_region(t, m, 32 * KiB), 0);
    REQUIRE(rtm_tlsf_add_pool(t, m + 64 * KiB, 16 * KiB) == 0);
    CHECK_EQ(rtm_tlsf_check_region(t, m, 80 * KiB), 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);

    recorder_install();
    errno = 0;
    CHECK_MSG(fails_with(rtm_tlsf_check_region(t, m, 48 * KiB), EFAULT, 1),
              "a pool outside the range: not -1/EFAULT with one report");
    recorder_reset();
    errno = 0;
    CHECK_MSG(fails_with(rtm_tlsf_check_region(t, m, 80 * KiB - 8), EFAULT, 1),
              "a pool ending past the range: not -1/EFAULT with one report");
    recorder_reset();
    errno = 0;
    CHECK_MSG(fails_with(rtm_tlsf_check_region(t, (unsigned char *)t + 8, 100 * KiB), EFAULT, 1),
              "the control structure outside the range: not -1/EFAULT with one report");
    recorder_reset();
    errno = 0;
    CHECK(fails_with(rtm_tlsf_check_region(NULL, m, 80 * KiB), EINVAL, 0));
    errno = 0;
    CHECK(fails_with(rtm_tlsf_check_region(t, NULL, 80 * KiB), EINVAL, 0));
    errno = 0;
    CHECK(fails_with(rtm_tlsf_check_region(t, m, SIZE_MAX), EINVAL, 0));
    rtm_set_error_handler(NULL, NULL);
    region_free(&buf);
}

/* In a child: a heap in a mapping between PROT_NONE pages, its control
 * structure after the kind word scrambled (all of it, or just the pool
 * link aimed into the guard pages); the bounded check must return -1 with
 * EFAULT and one report without touching the guards. */
static int garbage_child(uint64_t seed, int aim_at_guard)
{
    guarded_region g = region_map_guarded(16, 0);
    rtm_tlsf *t = rtm_tlsf_create(g.mem, g.bytes);
    if (t == NULL || rtm_tlsf_alloc(t, 500) == NULL)
        return 2;
    rng r = {seed};
    unsigned char *c = (unsigned char *)t;
    if (aim_at_guard) {
        /* Just below the mapping's start, or just past its end. */
        ptrdiff_t below = -(ptrdiff_t)(64 + 8 * rng_below(&r, 16));
        ptrdiff_t above = (ptrdiff_t)(g.bytes + 8 * rng_below(&r, 16));
        t->first_pool = (seed & 1u) ? below : above;
    } else {
        for (size_t i = 4; i < rtm_tlsf_control_size(); i++)
            c[i] = (unsigned char)rng_next(&r);
    }
    recorder_install();
    errno = 0;
    int rc = rtm_tlsf_check_region(t, g.mem, g.bytes);
    return fails_with(rc, EFAULT, 1) && recorder()->last_kind == RTM_ERR_CHECK_FAILED ? 0 : 3;
}

static void test_region_garbage(void)
{
    for (uint64_t seed = 1; seed <= 40; seed++) {
        int aim = seed > 24;
        fflush(NULL);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
            _exit(garbage_child(seed, aim));
        int status = 0;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "check_region of a garbage control (%s, seed %llu): child %s %d",
                  aim ? "pool link into a guard page" : "all bytes", (unsigned long long)seed,
                  WIFSIGNALED(status) ? "killed by signal" : "exited with",
                  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
}

static void test_check_region(void)
{
    test_region_bounds();
    test_region_garbage();
}

/* ---------------------------------------------------------------------- */
/* fast_range                                                              */
/* ---------------------------------------------------------------------- */

/* The end of the fast range (its last pool's end), as an address. */
static uintptr_t fast_end(const rtm_tlsf *t)
{
    return (uintptr_t)t + FAST_FIRST + t->fast_last + MIN_SPAN;
}

/* Allocates from the pool [lo, hi) until it is full, frees every block,
 * checks after each step; also frees an interior pointer (refused). Returns
 * the number of blocks that landed there. */
static size_t exercise_pool(rtm_tlsf *t, uintptr_t lo, uintptr_t hi)
{
    void *got[512];
    size_t n = 0, in_pool = 0;
    while (n < 512 && (got[n] = rtm_tlsf_alloc(t, 200)) != NULL)
        n++;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)got[i];
        if (a >= lo && a < hi) {
            in_pool++;
            memset(got[i], 0, 200);
            recorder_install();
            CHECK_EQ(rtm_tlsf_free(t, (char *)got[i] + 64), -1);
            CHECK_EQ(recorder()->calls, 1);
            rtm_set_error_handler(NULL, NULL);
        }
    }
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(rtm_tlsf_free(t, got[i]), 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    CHECK_EQ(rtm_tlsf_stats(t).live_blocks, 0);
    return in_pool;
}

static void test_fast_range(void)
{
    test_region buf = region_malloc(256 * KiB, 0);
    unsigned char *m = buf.mem;
    rtm_tlsf *t = rtm_tlsf_create(m, 16 * KiB);
    REQUIRE(t != NULL);
    /* The first pool ends at the region's end (8-aligned here). */
    CHECK_EQ(fast_end(t), (uintptr_t)(m + 16 * KiB));

    /* Touching, 8 bytes after (the wcet class grid) and 24 after: each
     * joins the range. 32 after and beyond: searched. */
    const size_t gap[] = {0, 8, 24, 32, 4096};
    const int joins[] = {1, 1, 1, 0, 0};
    uintptr_t at = (uintptr_t)(m + 16 * KiB);
    for (size_t i = 0; i < sizeof gap / sizeof gap[0]; i++) {
        uintptr_t before = fast_end(t), lo = at + gap[i];
        REQUIRE(rtm_tlsf_add_pool(t, (void *)lo, 8 * KiB) == 0);
        at = lo + 8 * KiB;
        CHECK_MSG((fast_end(t) == at) == joins[i] && (joins[i] || fast_end(t) == before),
                  "a pool %zu bytes after the fast range: range end %p, pool end %p", gap[i],
                  (void *)fast_end(t), (void *)at);
        CHECK_EQ(rtm_tlsf_check(t), 0);
        CHECK_MSG(exercise_pool(t, lo, at) > 0, "no block from the pool %zu bytes after", gap[i]);
    }

    /* A range no pools cover fails the check: one granule past the pools
     * (now ending in a gap that is not the caller's), or far past. */
    size_t saved = t->fast_last;
    t->fast_last = saved + (size_t)(at - fast_end(t)) + 8u;
    recorder_install();
    errno = 0;
    CHECK_MSG(fails_with(rtm_tlsf_check(t), EFAULT, 1), "fast range past its pools: check passed");
    t->fast_last = SIZE_MAX - 64u;
    recorder_reset();
    errno = 0;
    CHECK_MSG(fails_with(rtm_tlsf_check(t), EFAULT, 1), "fast range of 2^64: check passed");
    rtm_set_error_handler(NULL, NULL);

    /* 0, as a control written before the field existed: still consistent,
     * and every pool still frees (searched). */
    t->fast_last = 0;
    CHECK_EQ(rtm_tlsf_check(t), 0);
    CHECK(exercise_pool(t, (uintptr_t)m, at) > 0);
    t->fast_last = saved;
    CHECK_EQ(rtm_tlsf_check(t), 0);
    region_free(&buf);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "usable") == 0)
        RUN_TEST(test_usable);
    else if (argc == 2 && strcmp(argv[1], "region") == 0)
        RUN_TEST(test_check_region);
    else if (argc == 2 && strcmp(argv[1], "fast_range") == 0)
        RUN_TEST(test_fast_range);
    else {
        fprintf(stderr, "usage: %s usable|region|fast_range\n", argv[0]);
        return 2;
    }
    return check_summary();
}
