// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_large.c -- the large-block path of rtmem's
 * malloc (docs/MALLOC.md, "Large blocks"): freed page runs are a cache that
 * serves the next large request without an OS call, the cache is bounded
 * (after many large frees at most the cap of dirty pages stays, by the
 * statistics and by /proc/self/statm, and no less: only the excess is
 * purged), its idle runs are purged after the
 * decay time, realloc of a large block shrinks and grows in place,
 * keeping its contents, and realloc of a huge block moves its pages
 * (mremap) instead of copying them.
 *
 * RTMEM_DECAY_MS is set to 100 before the first allocation so the decay
 * test waits a fraction of a second. The cap's constant is the library's
 * default (RTM_DIRTY_MAX, src/malloc/internal.h): 64 MiB on 64-bit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#define MIB ((size_t)1 << 20)
/* Large blocks are page runs below RTM_HUGE_MIN (src/malloc/internal.h):
 * 256 MiB on 64-bit, 4 MiB on 32-bit, where a block from 4 MiB up has its
 * own mapping. So on 32-bit every size below shrinks by 4, to stay runs. */
#define UNIT (sizeof(void *) == 8 ? MIB : MIB / 4)
static const size_t cap_bytes = sizeof(void *) == 8 ? 64 * MIB : 16 * MIB;

static size_t dirty_bytes(void)
{
    rtm_malloc_stats_t st = rtm_malloc_stats();
    return st.page_heap_free_bytes - st.page_heap_purged_bytes;
}

/* Resident bytes of the process (/proc/self/statm), 0 when unreadable. */
static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lu %lu", &size, &res) != 2)
        res = 0;
    fclose(f);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

static void touch(char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4096)
        p[i] = (char)(seed + i / 4096);
}

static int touched_ok(const char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 4096)
        if (p[i] != (char)(seed + i / 4096))
            return 0;
    return 1;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Freeing a large block and asking for one of the same size again costs no
 * OS call: the freed run is reused, resident. */
static void test_reuse_without_os_call(void)
{
    char *p = rtm_malloc(8 * UNIT);
    REQUIRE(p != NULL);
    touch(p, 8 * UNIT, 1);
    rtm_malloc_free(p);
    size_t calls = rtm_malloc_stats().os_calls;
    for (unsigned i = 0; i < 50; i++) {
        char *q = rtm_malloc(5 * UNIT + i * (60000u / (MIB / UNIT))); /* all fit the run */
        REQUIRE(q != NULL);
        touch(q, 5 * UNIT, i);
        CHECK(touched_ok(q, 5 * UNIT, i));
        rtm_malloc_free(q);
    }
    CHECK_MSG(rtm_malloc_stats().os_calls == calls, "%zu OS calls for 50 cached large blocks",
              rtm_malloc_stats().os_calls - calls);
    CHECK_EQ(rtm_malloc_check(), 0);
}

/* 24 blocks of 4 MiB (96 MiB, every page touched) freed at once: the cache
 * keeps at most the cap dirty, the rest is purged at the frees. */
static void test_cache_bounded(void)
{
    enum { N = 24 };
    char *p[N];
    size_t rss0 = rss_bytes();
    for (int i = 0; i < N; i++) {
        p[i] = rtm_malloc(4 * MIB);
        REQUIRE(p[i] != NULL);
        touch(p[i], 4 * MIB, (unsigned)i);
    }
    size_t rss1 = rss_bytes();
    for (int i = 0; i < N; i++)
        rtm_malloc_free(p[i]);
    size_t dirty = dirty_bytes(), rss2 = rss_bytes();
    CHECK_MSG(dirty <= cap_bytes, "%zu MiB dirty after freeing %d MiB (cap %zu MiB)", dirty / MIB,
              N * 4, cap_bytes / MIB);
    /* Only the excess was purged: the freed blocks merged into one dirty
     * run, and purging it whole would have left about one block's worth
     * (on 32-bit these blocks are huge mappings, unmapped at free). */
    if (sizeof(void *) == 8)
        CHECK_MSG(dirty + MIB >= cap_bytes,
                  "%zu MiB dirty after freeing %d MiB: more than the "
                  "excess over the cap (%zu MiB) purged",
                  dirty / MIB, N * 4, cap_bytes / MIB);
    CHECK_MSG(rtm_malloc_stats().in_use_bytes < MIB, "%zu bytes in use",
              rtm_malloc_stats().in_use_bytes);
    if (rss0 != 0 && rss1 > rss0 + 64 * MIB) /* the pages were resident */
        CHECK_MSG(rss2 <= rss0 + cap_bytes + 8 * MIB, "RSS %zu MiB -> %zu -> %zu", rss0 / MIB,
                  rss1 / MIB, rss2 / MIB);
    CHECK_EQ(rtm_malloc_check(), 0);
}

/* Dirty runs are purged once idle for the decay time (100 ms here), on the
 * next page-heap operation. */
static void test_decay(void)
{
    char *p = rtm_malloc(8 * UNIT);
    REQUIRE(p != NULL);
    touch(p, 8 * UNIT, 3);
    rtm_malloc_free(p);
    CHECK(dirty_bytes() >= 8 * UNIT);
    size_t purges = rtm_malloc_stats().purges;
    sleep_ms(250);
    for (int i = 0; i < 20 && dirty_bytes() >= 8 * UNIT; i++) /* page-heap operations */
        rtm_malloc_free(rtm_malloc(100000));
    CHECK_MSG(dirty_bytes() < 8 * UNIT, "%zu KiB still dirty after the decay time",
              dirty_bytes() / 1024);
    CHECK(rtm_malloc_stats().purges > purges);
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 31u + i * 7u + (i >> 9));
}

static int filled_ok(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed * 31u + i * 7u + (i >> 9)))
            return 0;
    return 1;
}

/* realloc of a large block: shrinking keeps the address and gives the tail
 * back; growing into the free pages after it keeps the address too; when
 * the pages after it are taken it moves; contents are kept every time. */
static void test_realloc_in_place(void)
{
    (void)rtm_malloc_trim();
    unsigned char *p = rtm_malloc(MIB);
    REQUIRE(p != NULL);
    fill(p, MIB, 1);
    unsigned char *q = rtm_malloc_realloc(p, 200000);
    CHECK(q == p);
    CHECK(rtm_malloc_usable_size(q) < 200000 + 8192);
    CHECK(filled_ok(q, 200000, 1));
    /* the tail just freed follows the block: growing takes it back */
    q = rtm_malloc_realloc(p, 3 * MIB);
    CHECK(q == p);
    CHECK(rtm_malloc_usable_size(q) >= 3 * MIB);
    CHECK(filled_ok(q, 200000, 1));
    fill(q, 3 * MIB, 2);
    /* block the pages right after it, then grow: a move, contents kept */
    unsigned char *after = rtm_malloc(3 * MIB);
    REQUIRE(after != NULL);
    int adjacent = after == q + rtm_malloc_usable_size(q);
    unsigned char *r = rtm_malloc_realloc(q, 6 * MIB);
    REQUIRE(r != NULL);
    if (adjacent)
        CHECK(r != q);
    CHECK(filled_ok(r, 3 * MIB, 2));
    CHECK_EQ(rtm_malloc_check(), 0);
    /* a growth sequence (a vector doubling) stays in place when alone */
    rtm_malloc_free(after);
    size_t n = 64 * 1024;
    unsigned char *v = rtm_malloc(n);
    REQUIRE(v != NULL);
    fill(v, n, 9);
    unsigned moves = 0, doublings = 0;
    for (; n < 32 * UNIT / (MIB / UNIT); n *= 2, doublings++) { /* 32 MiB, 2 MiB on 32-bit */
        unsigned char *w = rtm_malloc_realloc(v, n * 2);
        REQUIRE(w != NULL);
        moves += w != v;
        CHECK(filled_ok(w, 64 * 1024, 9));
        v = w;
    }
    CHECK_MSG(moves <= 3, "%u moves in %u doublings", moves, doublings);
    rtm_malloc_free(v);
    rtm_malloc_free(r);
    CHECK_EQ(rtm_malloc_check(), 0);
}

/* realloc of a huge block (its own mapping: 256 MiB and up on 64-bit, 4 MiB
 * on 32-bit) moves its pages and never copies them (mremap): a copy would
 * write every page of the new block and raise the resident size by the
 * whole block. Growing in place or by a move, then shrinking in place,
 * keeps the touched pages' contents and the statistics exact. */
static void test_realloc_huge_no_copy(void)
{
    const size_t huge = sizeof(void *) == 8 ? 300 * MIB : 8 * MIB;
    rtm_malloc_stats_t s0 = rtm_malloc_stats();
    char *h = rtm_malloc(huge);
    REQUIRE(h != NULL);
    for (size_t i = 0; i < huge; i += MIB) /* one page per MiB */
        h[i] = (char)(i / MIB + 1);
    size_t rss0 = rss_bytes();
    char *g = rtm_malloc_realloc(h, 2 * huge);
    REQUIRE(g != NULL);
    size_t rss1 = rss_bytes();
    CHECK(rtm_malloc_usable_size(g) >= 2 * huge);
    for (size_t i = 0; i < huge; i += MIB)
        CHECK(g[i] == (char)(i / MIB + 1));
    CHECK_MSG(rss1 < rss0 + huge / 4, "resident %zu -> %zu KiB over realloc: copied?", rss0 >> 10,
              rss1 >> 10);
    g[2 * huge - 1] = 7; /* the grown part is writable */
    rtm_malloc_stats_t s1 = rtm_malloc_stats();
    CHECK(s1.huge_bytes >= s0.huge_bytes + 2 * huge);
    /* shrinking to a huge size stays in place and gives the tail back */
    char *k = rtm_malloc_realloc(g, huge + huge / 2);
    CHECK(k == g);
    for (size_t i = 0; i < huge; i += MIB)
        CHECK(k[i] == (char)(i / MIB + 1));
    rtm_malloc_stats_t s2 = rtm_malloc_stats();
    CHECK(s2.huge_bytes < s1.huge_bytes);
    CHECK_EQ(rtm_malloc_check(), 0);
    rtm_malloc_free(k);
    CHECK_EQ(rtm_malloc_stats().huge_bytes, s0.huge_bytes);
}

/* No argument: the large-block cache and in-place realloc. "huge-realloc":
 * only the huge realloc (its own ctest, malloc_large_huge_realloc, so that
 * the cross runs can leave it out where qemu-user cannot run it). */
int main(int argc, char **argv)
{
    setenv("RTMEM_DECAY_MS", "100", 1); /* before the first rtm_ allocation */
    if (argc == 2 && strcmp(argv[1], "huge-realloc") == 0) {
        RUN_TEST(test_realloc_huge_no_copy);
        return check_summary();
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [huge-realloc]\n", argv[0]);
        return 2;
    }
    RUN_TEST(test_reuse_without_os_call);
    RUN_TEST(test_cache_bounded);
    RUN_TEST(test_decay);
    RUN_TEST(test_realloc_in_place);
    return check_summary();
}
