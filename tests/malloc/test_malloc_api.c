// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_api.c -- the contracts of include/rtmem/malloc.h
 * one by one, in a single thread: every size-class boundary, calloc's
 * overflow check and zeroing (of reused blocks too), realloc's glibc
 * semantics, free(NULL) and errno preserved, aligned_alloc at every power
 * of two, large and huge blocks, foreign and double frees counted and
 * ignored, exact statistics in a quiescent process, the decay policy and
 * rtm_malloc_trim() giving pages back, rtm_malloc_check() clean throughout.
 *
 * RTMEM_DECAY_MS is set to 50 before the first allocation, so the decay
 * test waits a fraction of a second.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1u)) == 0; }

static void test_sizes(void)
{
    /* Every size up to 40 KiB: aligned, usable >= size, writable to the
     * last usable byte, and no two live blocks overlap (checked by
     * writing a distinct byte everywhere, then reading it back). */
    enum { N = 40 * 1024 + 1 };
    static unsigned char *blocks[N];
    for (size_t n = 0; n < N; n += (n < 2048 ? 1u : 7u)) {
        unsigned char *p = rtm_malloc(n);
        REQUIRE(p != NULL);
        CHECK(is_aligned(p, RTM_MALLOC_ALIGN));
        size_t u = rtm_malloc_usable_size(p);
        CHECK(u >= n);
        /* the documented worst waste: 15 bytes or 1/9 in classes, a page beyond */
        CHECK_MSG(n == 0 || u - n < (n <= RTM_MALLOC_SMALL_MAX ? n / 8u + 16u : 8192u),
                  "usable %zu for %zu", u, n);
        memset(p, (int)(n & 0xffu), u);
        blocks[n] = p;
    }
    for (size_t n = 0; n < N; n += (n < 2048 ? 1u : 7u)) {
        size_t u = rtm_malloc_usable_size(blocks[n]);
        for (size_t i = 0; i < u; i += 61)
            if (blocks[n][i] != (unsigned char)(n & 0xffu)) {
                CHECK_MSG(0, "block of size %zu overwritten at %zu", n, i);
                break;
            }
        rtm_malloc_free(blocks[n]);
    }
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void test_free_and_errno(void)
{
    errno = 1234;
    rtm_malloc_free(NULL);
    CHECK_EQ(errno, 1234);
    void *p = rtm_malloc(100), *q = rtm_malloc(100000), *h = rtm_malloc(8u << 20);
    REQUIRE(p && q && h);
    errno = 4321;
    rtm_malloc_free(p);
    rtm_malloc_free(q);
    rtm_malloc_free(h);
    CHECK_EQ(errno, 4321);
    /* Many frees, so that some take the slow paths (flushes). */
    void *many[2000];
    for (int i = 0; i < 2000; i++)
        many[i] = rtm_malloc(64);
    errno = 77;
    for (int i = 0; i < 2000; i++)
        rtm_malloc_free(many[i]);
    CHECK_EQ(errno, 77);
}

static void test_calloc(void)
{
    errno = 0;
    CHECK(rtm_malloc_calloc(SIZE_MAX / 2u, 3) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(rtm_malloc_calloc((size_t)1 << (sizeof(size_t) * 4u),
                            (size_t)1 << (sizeof(size_t) * 4u)) == NULL);
    CHECK_EQ(errno, ENOMEM);
    /* Reused blocks come back zeroed. */
    size_t sizes[] = {1, 24, 100, 1000, 5000, 40000, 300000, 5u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        unsigned char *p = rtm_malloc(sizes[k]);
        REQUIRE(p != NULL);
        memset(p, 0xab, sizes[k]);
        rtm_malloc_free(p);
        unsigned char *z = rtm_malloc_calloc(1, sizes[k]);
        REQUIRE(z != NULL);
        size_t bad = 0;
        for (size_t i = 0; i < sizes[k]; i++)
            bad += z[i] != 0;
        CHECK_MSG(bad == 0, "calloc(%zu): %zu non-zero bytes", sizes[k], bad);
        rtm_malloc_free(z);
    }
    unsigned char *z = rtm_malloc_calloc(0, 10);
    CHECK(z != NULL);
    rtm_malloc_free(z);
}

static void test_realloc(void)
{
    unsigned char *p = rtm_malloc_realloc(NULL, 10);
    REQUIRE(p != NULL);
    for (int i = 0; i < 10; i++)
        p[i] = (unsigned char)i;
    /* grow through every regime: class, large run, huge mapping */
    size_t steps[] = {100, 4000, 30000, 70000, 1u << 20, 6u << 20, 50, 5};
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        p = rtm_malloc_realloc(p, steps[k]);
        REQUIRE(p != NULL);
        for (int i = 0; i < 5; i++)
            CHECK_EQ(p[i], (unsigned char)i);
    }
    /* shrink within a small block keeps the address */
    unsigned char *q = rtm_malloc(200);
    CHECK(rtm_malloc_realloc(q, 150) == q);
    errno = 55;
    CHECK(rtm_malloc_realloc(q, 0) == NULL); /* frees */
    CHECK_EQ(errno, 55);
    /* failure keeps the block */
    errno = 0;
    CHECK(rtm_malloc_realloc(p, SIZE_MAX - 4096u) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(p[0], 0);
    rtm_malloc_free(p);
}

static void test_aligned(void)
{
    for (size_t a = 1; a <= ((size_t)1 << 22); a <<= 1) {
        size_t sizes[] = {1, 17, a, a + 1, 3 * a, 100000};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            unsigned char *p = rtm_malloc_aligned_alloc(a, sizes[k]);
            REQUIRE(p != NULL);
            CHECK_MSG(is_aligned(p, a), "aligned_alloc(%zu, %zu) = %p", a, sizes[k], (void *)p);
            CHECK(rtm_malloc_usable_size(p) >= sizes[k]);
            memset(p, 1, sizes[k]);
            rtm_malloc_free(p);
        }
    }
    errno = 0;
    CHECK(rtm_malloc_aligned_alloc(24, 10) == NULL);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK(rtm_malloc_aligned_alloc(0, 10) == NULL);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void test_huge_and_foreign(void)
{
    /* above the own-mapping threshold (256 MiB on 64-bit, 4 MiB on 32):
     * address space only, nothing is touched */
    const size_t huge = sizeof(void *) == 8 ? (size_t)300 << 20 : (size_t)20 << 20;
    rtm_malloc_stats_t s0 = rtm_malloc_stats();
    void *h = rtm_malloc(huge);
    REQUIRE(h != NULL);
    rtm_malloc_stats_t s1 = rtm_malloc_stats();
    CHECK(s1.huge_bytes >= s0.huge_bytes + huge);
    CHECK(rtm_malloc_usable_size(h) >= huge);
    rtm_malloc_free(h);
    rtm_malloc_stats_t s2 = rtm_malloc_stats();
    CHECK_EQ(s2.huge_bytes, s0.huge_bytes);
    /* a huge free is an munmap: the mapping is gone */
    CHECK(s2.mapped_bytes < s1.mapped_bytes);

    int on_stack = 0;
    static int in_data;
    rtm_malloc_free(&on_stack);
    rtm_malloc_free(&in_data);
    void *l = rtm_malloc(100000);
    rtm_malloc_free(l);
    rtm_malloc_free(l); /* double free of a large block: its run is free now */
    rtm_malloc_stats_t s3 = rtm_malloc_stats();
    CHECK(s3.foreign_frees >= s2.foreign_frees + 3u);
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void test_stats_exact(void)
{
    rtm_malloc_thread_flush();
    rtm_malloc_stats_t s0 = rtm_malloc_stats();
    CHECK_EQ(s0.in_use_bytes, 0);
    void *p[100];
    size_t expect = 0;
    for (int i = 0; i < 100; i++) {
        p[i] = rtm_malloc((size_t)i * 300u + 1u);
        expect += rtm_malloc_usable_size(p[i]);
    }
    rtm_malloc_stats_t s1 = rtm_malloc_stats();
    CHECK_EQ(s1.in_use_bytes, expect);
    CHECK_EQ(s1.threads, 1);
    for (int i = 0; i < 100; i++)
        rtm_malloc_free(p[i]);
    rtm_malloc_stats_t s2 = rtm_malloc_stats();
    CHECK_EQ(s2.in_use_bytes, 0);
    CHECK(s2.thread_cache_bytes > 0);
    rtm_malloc_thread_flush();
    CHECK_EQ(rtm_malloc_stats().thread_cache_bytes, 0);
    CHECK(rtm_malloc_stats().mapped_bytes >= rtm_malloc_stats().resident_bytes);
    CHECK_EQ(rtm_malloc_stats().decay_ms, 50);
    CHECK_EQ(rtm_malloc_stats().failed_allocs, s0.failed_allocs);
    errno = 0;
    CHECK(rtm_malloc(SIZE_MAX) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(rtm_malloc_stats().failed_allocs, s0.failed_allocs + 1u);
}

static void test_decay_and_trim(void)
{
    /* 8 MiB in 64 KiB runs, written, then freed: dirty pages. */
    enum { N = 128 };
    void *p[N];
    for (int i = 0; i < N; i++) {
        p[i] = rtm_malloc(64u << 10);
        REQUIRE(p[i] != NULL);
        memset(p[i], 7, 64u << 10);
    }
    rtm_malloc_stats_t s0 = rtm_malloc_stats();
    for (int i = 0; i < N; i++)
        rtm_malloc_free(p[i]);
    rtm_malloc_stats_t s1 = rtm_malloc_stats();
    CHECK(s1.page_heap_free_bytes - s1.page_heap_purged_bytes >= (size_t)N * (64u << 10) / 2u);
    /* Decay: after 50 ms, later heap activity purges the idle runs. */
    sleep_ms(120);
    for (int i = 0; i < 4; i++)
        rtm_malloc_free(rtm_malloc(100000));
    rtm_malloc_stats_t s2 = rtm_malloc_stats();
    CHECK_MSG(s2.purges > s0.purges, "no purge after the decay period (%zu purges)", s2.purges);
    CHECK(s2.page_heap_purged_bytes > s1.page_heap_purged_bytes);
    /* Trim: everything free is purged now. */
    for (int i = 0; i < N; i++)
        p[i] = rtm_malloc(64u << 10);
    for (int i = 0; i < N; i++)
        rtm_malloc_free(p[i]);
    size_t purged = rtm_malloc_trim();
    rtm_malloc_stats_t s3 = rtm_malloc_stats();
    CHECK(purged > 0);
    CHECK_EQ(s3.page_heap_free_bytes, s3.page_heap_purged_bytes);
    CHECK_EQ(s3.central_cache_bytes, 0);
    CHECK_EQ(rtm_malloc_check(), 0);
    /* not possible any more: the allocator is in use */
    errno = 0;
    CHECK_EQ(rtm_malloc_arena(64u << 20, 0), -1);
    CHECK_EQ(errno, EBUSY);
}

int main(void)
{
    setenv("RTMEM_DECAY_MS", "50", 1); /* before the first rtm_ allocation */
    RUN_TEST(test_sizes);
    RUN_TEST(test_free_and_errno);
    RUN_TEST(test_calloc);
    RUN_TEST(test_realloc);
    RUN_TEST(test_aligned);
    RUN_TEST(test_huge_and_foreign);
    RUN_TEST(test_stats_exact);
    RUN_TEST(test_decay_and_trim);
    return check_summary();
}
