// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_api.c -- every public function of rtmem.h and rtmem/tlsf.h
 * against its written contract, bad inputs first: NULL and destroyed heaps,
 * unknown algorithms, regions one byte too small, alignments that are not
 * powers of two, sizes no heap can hold, NULL pointers. Each case asserts the
 * exact return value and the exact errno the header promises, and that a
 * refused call leaves the heap as it was (stats unchanged, check clean).
 *
 * The randomized behaviour lives in tests/model; TLSF-specific properties
 * (exact fit, in-place realloc, corruption detection) in test_tlsf.c.
 */
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/bytes.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "rtmem.h"

#define KiB ((size_t)1024)

/* A heap over a fresh malloc'd region; the region is returned for freeing. */
static rtm_heap *new_heap(test_region *r, size_t bytes, size_t misalign)
{
    *r = region_malloc(bytes, misalign);
    rtm_heap *h = rtm_heap_create("tlsf", r->mem, r->bytes);
    REQUIRE(h != NULL);
    return h;
}

static uintptr_t align_up(uintptr_t x, uintptr_t a) { return (x + a - 1u) & ~(a - 1u); }

/* --- registry ---------------------------------------------------------------- */

static void test_algorithms_list(void)
{
    const char *const *names = rtm_algorithms();
    REQUIRE(names != NULL);
    int has_tlsf = 0;
    size_t n = 0;
    for (; n < 64 && names[n] != NULL; n++) {
        CHECK(names[n][0] != '\0');
        CHECK_MSG(rtm_min_region(names[n]) > 0, "rtm_min_region(\"%s\") == 0", names[n]);
        if (strcmp(names[n], "tlsf") == 0)
            has_tlsf = 1;
    }
    CHECK_MSG(n < 64, "rtm_algorithms() is not NULL-terminated within 64 entries");
    CHECK(has_tlsf);
    CHECK_PTR_EQ(rtm_algorithms(), names); /* static: the same list every time */
}

static void test_min_region_names(void)
{
    static const char *const unknown[] = {"", "tls", "tlsfx", "xtlsf", "pool ", " tlsf", "nope"};
    CHECK(rtm_min_region("tlsf") > 0);
    errno = 0;
    CHECK_EQ(rtm_min_region(NULL), 0);
    CHECK_ERRNO(EINVAL);
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_min_region(unknown[i]) == 0, "rtm_min_region(\"%s\") != 0", unknown[i]);
        CHECK_ERRNO(EINVAL);
    }
}

/* rtmem.h: EINVAL for a "region smaller than rtm_min_region()", and the
 * minimum works wherever the region starts. */
static void test_min_region_boundary(void)
{
    size_t min = rtm_min_region("tlsf");
    for (size_t m = 0; m < 8; m++) {
        test_region r = region_malloc(min, m);
        rtm_heap *h = rtm_heap_create("tlsf", r.mem, min);
        CHECK_MSG(h != NULL, "rtm_heap_create(min = %zu) at address %% 8 == %zu failed, errno %d",
                  min, m, errno);
        if (h != NULL) {
            CHECK_PTR_EQ(h, (void *)align_up((uintptr_t)r.mem, 8));
            CHECK_EQ(rtm_heap_check(h), 0);
            rtm_stats st = rtm_heap_stats(h);
            CHECK_EQ(st.live_blocks, 0);
            CHECK(st.arena_bytes <= min);
            rtm_heap_destroy(h);
        }
        errno = 0;
        h = rtm_heap_create("tlsf", r.mem, min - 1u);
        CHECK_MSG(h == NULL, "rtm_heap_create(min - 1 = %zu) at address %% 8 == %zu succeeded",
                  min - 1u, m);
        CHECK_ERRNO(EINVAL);
        region_free(&r);
    }
}

/* --- create / destroy -------------------------------------------------------- */

static void test_create_bad_arguments(void)
{
    test_region r = region_malloc(64 * KiB, 0);
    static const char *const bad_names[] = {"",           "tls",   "tlsfx",  "TLSF ", "nope",
                                            "tlsf:param", "tlsf:", "tlsf:0", ":tlsf"};
    errno = 0;
    CHECK(rtm_heap_create(NULL, r.mem, r.bytes) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heap_create("tlsf", NULL, r.bytes) == NULL);
    CHECK_ERRNO(EINVAL);
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_heap_create(bad_names[i], r.mem, r.bytes) == NULL,
                  "rtm_heap_create(\"%s\") accepted", bad_names[i]);
        CHECK_ERRNO(EINVAL);
    }
    static const size_t small[] = {0, 1, 7, 8, 16, 64};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_heap_create("tlsf", r.mem, small[i]) == NULL, "%zu-byte region accepted",
                  small[i]);
        CHECK_ERRNO(EINVAL);
    }
    region_free(&r);
}

static void test_create_handle_and_name(void)
{
    for (size_t m = 0; m < 16; m++) {
        test_region r;
        rtm_heap *h = new_heap(&r, 16 * KiB, m);
        CHECK_PTR_EQ(h, (void *)align_up((uintptr_t)r.mem, 8));
        const char *name = rtm_heap_algorithm(h);
        CHECK(name != NULL && strcmp(name, "tlsf") == 0);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_stats st = rtm_heap_stats(h);
        CHECK(st.arena_bytes <= r.bytes);
        CHECK(st.arena_bytes + 16u + 7u >= r.bytes); /* the generic header and alignment only */
        CHECK(st.free_bytes > 0 && st.free_bytes == st.largest_free);
        CHECK_EQ(st.used_bytes, 0);
        CHECK_EQ(st.live_blocks, 0);
        CHECK_EQ(st.peak_used_bytes, 0);
        CHECK_EQ(st.failed_allocs, 0);
        rtm_heap_destroy(h);
        region_free(&r);
    }
}

/* Every entry point on NULL, on a buffer that is not a heap, and on a
 * destroyed heap: EINVAL and the documented "nothing" result. */
static void expect_rejected_everywhere(rtm_heap *h, void *some_block, const char *what)
{
    rtm_stats zero;
    memset(&zero, 0, sizeof zero);
    unsigned char pool[4096];

    errno = 0;
    CHECK_MSG(rtm_alloc(h, 16) == NULL, "%s: rtm_alloc", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_aligned_alloc(h, 64, 16) == NULL, "%s: rtm_aligned_alloc", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_realloc(h, some_block, 16) == NULL, "%s: rtm_realloc", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_realloc(h, NULL, 16) == NULL, "%s: rtm_realloc(NULL)", what);
    CHECK_ERRNO(EINVAL);
    if (some_block != NULL) {
        errno = 0;
        rtm_free(h, some_block);
        CHECK_ERRNO(EINVAL);
    }
    errno = 0;
    CHECK_MSG(rtm_usable_size(h, some_block) == 0, "%s: rtm_usable_size", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    rtm_stats st = rtm_heap_stats(h);
    CHECK_MSG(stats_equal(st, zero), "%s: rtm_heap_stats not all zero", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_heap_check(h) == -1, "%s: rtm_heap_check", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_heap_algorithm(h) == NULL, "%s: rtm_heap_algorithm", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_heap_walk(h, NULL, NULL) == -1, "%s: rtm_heap_walk", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_heap_reset(h) == -1, "%s: rtm_heap_reset", what);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_MSG(rtm_heap_add_pool(h, pool, sizeof pool) == -1, "%s: rtm_heap_add_pool", what);
    CHECK_ERRNO(EINVAL);
    rtm_heap_destroy(h); /* ignored, must not crash */
}

static void count_blocks(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    (void)used;
    ++*(size_t *)arg;
}

static void test_null_and_destroyed_heap(void)
{
    expect_rejected_everywhere(NULL, NULL, "NULL heap");

    /* Not a heap: zeros where the magic should be. */
    static _Alignas(16) unsigned char not_a_heap[256];
    expect_rejected_everywhere((rtm_heap *)(void *)not_a_heap, NULL, "zeroed buffer");

    test_region r;
    rtm_heap *h = new_heap(&r, 16 * KiB, 3);
    void *p = rtm_alloc(h, 100);
    REQUIRE(p != NULL);
    rtm_heap_destroy(h);
    expect_rejected_everywhere(h, p, "destroyed heap");

    /* The region belongs to the caller again: a new heap on it is fresh. */
    h = rtm_heap_create("tlsf", r.mem, r.bytes);
    REQUIRE(h != NULL);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    size_t blocks = 0;
    CHECK_EQ(rtm_heap_walk(h, count_blocks, &blocks), 0);
    CHECK_EQ(blocks, 1);
    errno = 0;
    CHECK_EQ(rtm_heap_walk(h, NULL, NULL), -1);
    CHECK_ERRNO(EINVAL);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* --- pools ------------------------------------------------------------------- */

static void test_add_pool(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 16 * KiB, 0);
    test_region extra = region_malloc(64 * KiB, 0);
    size_t overhead = rtm_tlsf_pool_overhead();
    size_t smallest = overhead + RTM_TLSF_MIN_BLOCK; /* holds exactly one minimum block */

    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(NULL, extra.mem, extra.bytes), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(h, NULL, extra.bytes), -1);
    CHECK_ERRNO(EINVAL);
    static const size_t tiny[] = {0, 1, 8, 16};
    for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_heap_add_pool(h, extra.mem, tiny[i]) == -1, "%zu-byte pool accepted",
                  tiny[i]);
        CHECK_ERRNO(EINVAL);
    }
    rtm_stats before = rtm_heap_stats(h);
    errno = 0;
    CHECK_MSG(rtm_heap_add_pool(h, extra.mem, smallest - 1u) == -1,
              "pool of pool_overhead + MIN_BLOCK - 1 = %zu bytes accepted", smallest - 1u);
    CHECK_ERRNO(EINVAL);
    CHECK(stats_equal(rtm_heap_stats(h), before));
    CHECK_EQ(rtm_heap_check(h), 0);

    /* The smallest pool: one minimum block of free space. */
    CHECK_EQ(rtm_heap_add_pool(h, extra.mem, smallest), 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.free_bytes, before.free_bytes + RTM_TLSF_MIN_BLOCK);
    CHECK_EQ(st.arena_bytes, before.arena_bytes + smallest);
    CHECK_EQ(rtm_heap_check(h), 0);

    /* A big pool: free space grows by the region minus the documented
     * overhead, and largest_free follows. */
    size_t big = 32 * KiB;
    before = rtm_heap_stats(h);
    CHECK_EQ(rtm_heap_add_pool(h, extra.mem + 4 * KiB, big), 0);
    st = rtm_heap_stats(h);
    CHECK_EQ(st.free_bytes, before.free_bytes + big - overhead);
    CHECK_EQ(st.arena_bytes, before.arena_bytes + big);
    CHECK_EQ(st.largest_free, big - overhead);
    CHECK_EQ(rtm_heap_check(h), 0);
    void *p = rtm_alloc(h, big - overhead);
    CHECK(p != NULL && (unsigned char *)p > extra.mem &&
          (unsigned char *)p < extra.mem + 4 * KiB + big);
    rtm_free(h, p);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    region_free(&extra);
    region_free(&r);
}

/* --- alloc ------------------------------------------------------------------- */

static void test_alloc_basic(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 64 * KiB, 5);
    void *a = rtm_alloc(h, 0), *b = rtm_alloc(h, 0);
    CHECK(a != NULL && b != NULL && a != b); /* unique minimum blocks */
    CHECK_EQ(rtm_usable_size(h, a), RTM_TLSF_MIN_BLOCK);
    for (size_t n = 1; n <= 600; n += 7) {
        unsigned char *p = rtm_alloc(h, n);
        REQUIRE(p != NULL);
        CHECK_EQ((uintptr_t)p % RTM_ALIGN, 0);
        CHECK(rtm_usable_size(h, p) >= n);
        memset(p, 0xAB, rtm_usable_size(h, p));
    }
    CHECK_EQ(rtm_heap_check(h), 0);
    errno = EDOM;
    CHECK_EQ(rtm_usable_size(h, NULL), 0);
    CHECK_EQ(rtm_tlsf_usable_size(NULL), 0);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* Sizes no heap can hold: NULL, ENOMEM, counted, and nothing else changes. */
static void test_alloc_impossible_sizes(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 64 * KiB, 0);
    /* A typed heap exactly as large as the generic one's TLSF part (the
     * generic header takes 16 bytes), so the same sizes fail. */
    test_region rt = region_malloc(64 * KiB - 16u, 0);
    rtm_tlsf *t = rtm_tlsf_create(rt.mem, rt.bytes);
    REQUIRE(t != NULL);
    rtm_stats st0 = rtm_heap_stats(h);
    const size_t sizes[] = {SIZE_MAX, SIZE_MAX - 1u, SIZE_MAX - 3u, SIZE_MAX - 4u, SIZE_MAX - 7u,
                            SIZE_MAX - 8u, SIZE_MAX - 15u, SIZE_MAX - 64u, SIZE_MAX / 2u,
                            SIZE_MAX / 2u + 1u, RTM_TLSF_MAX_BLOCK + 1u, RTM_TLSF_MAX_BLOCK + 4u,
                            RTM_TLSF_MAX_BLOCK + 8u, (size_t)UINT32_MAX,
                            /* 2^32 where size_t can hold it (it wraps to 0 on
                             * 32-bit targets, where alloc(0) must succeed) */
                            sizeof(size_t) > 4u ? (size_t)UINT32_MAX + 1u : SIZE_MAX - 1u,
                            RTM_TLSF_MAX_BLOCK, st0.largest_free + 1u, st0.arena_bytes};
    size_t n = sizeof sizes / sizeof sizes[0];
    for (size_t i = 0; i < n; i++) {
        errno = 0;
        void *p = rtm_alloc(h, sizes[i]);
        CHECK_MSG(p == NULL, "rtm_alloc(%zu) succeeded", sizes[i]);
        CHECK_ERRNO(ENOMEM);
        errno = 0;
        p = rtm_aligned_alloc(h, 64, sizes[i]);
        CHECK_MSG(p == NULL, "rtm_aligned_alloc(64, %zu) succeeded", sizes[i]);
        CHECK_ERRNO(ENOMEM);
        errno = 0;
        p = rtm_realloc(h, NULL, sizes[i]);
        CHECK_MSG(p == NULL, "rtm_realloc(NULL, %zu) succeeded", sizes[i]);
        CHECK_ERRNO(ENOMEM);
        errno = 0;
        p = rtm_tlsf_alloc(t, sizes[i]);
        CHECK_MSG(p == NULL, "rtm_tlsf_alloc(%zu) succeeded", sizes[i]);
        CHECK_ERRNO(ENOMEM);
        errno = 0;
        p = rtm_tlsf_aligned_alloc(t, 16, sizes[i]);
        CHECK_MSG(p == NULL, "rtm_tlsf_aligned_alloc(16, %zu) succeeded", sizes[i]);
        CHECK_ERRNO(ENOMEM);
    }
    CHECK_EQ(rtm_tlsf_stats(t).failed_allocs, 2u * n);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.failed_allocs, 3u * n);
    st.failed_allocs = 0;
    CHECK(stats_equal(st, st0));
    CHECK_EQ(rtm_heap_check(h), 0);
    /* The heap still works at its documented limit. */
    void *p = rtm_alloc(h, st0.largest_free);
    CHECK(p != NULL);
    rtm_free(h, p);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    region_free(&rt);
    region_free(&r);
}

static void test_aligned_alloc(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 1024 * KiB, 1);
    test_region rt = region_malloc(16 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(rt.mem, rt.bytes);
    REQUIRE(t != NULL);
    const size_t bad[] = {0,
                          3,
                          5,
                          6,
                          7,
                          12,
                          24,
                          48,
                          96,
                          100,
                          1000,
                          4097,
                          65535,
                          SIZE_MAX,
                          SIZE_MAX - 1u,
                          (SIZE_MAX >> 1) + 2u};
    rtm_stats st0 = rtm_heap_stats(h);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_aligned_alloc(h, bad[i], 16) == NULL, "alignment %zu accepted", bad[i]);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK_MSG(rtm_tlsf_aligned_alloc(t, bad[i], 16) == NULL, "typed: alignment %zu accepted",
                  bad[i]);
        CHECK_ERRNO(EINVAL);
    }
    /* EINVAL is not a refusal for lack of memory: failed_allocs unchanged. */
    CHECK(stats_equal(rtm_heap_stats(h), st0));

    for (unsigned k = 0; k <= 16; k++) {
        size_t a = (size_t)1 << k;
        const size_t sizes[] = {0, 1, 8, 24, 100, 4096};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            unsigned char *p = rtm_aligned_alloc(h, a, sizes[i]);
            CHECK_MSG(p != NULL, "aligned_alloc(%zu, %zu) failed", a, sizes[i]);
            if (p == NULL)
                continue;
            size_t want = a > RTM_ALIGN ? a : RTM_ALIGN;
            CHECK_MSG((uintptr_t)p % want == 0, "aligned_alloc(%zu, %zu) = %p", a, sizes[i],
                      (void *)p);
            CHECK(rtm_usable_size(h, p) >= sizes[i]);
            memset(p, 0x5A, rtm_usable_size(h, p));
        }
    }
    CHECK_EQ(rtm_heap_check(h), 0);
    /* A power of two larger than the heap: valid, but nothing fits. */
    const size_t huge[] = {(size_t)1 << 30, (SIZE_MAX >> 2) + 1u, (SIZE_MAX >> 1) + 1u};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_aligned_alloc(h, huge[i], 16) == NULL, "alignment %zu served", huge[i]);
        CHECK_ERRNO(ENOMEM);
    }
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_tlsf_stats(t).failed_allocs, 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    rtm_heap_destroy(h);
    region_free(&rt);
    region_free(&r);
}

/* --- realloc ----------------------------------------------------------------- */

static void test_realloc_contract(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 64 * KiB, 0);
    rtm_stats st0 = rtm_heap_stats(h);

    unsigned char *p = rtm_realloc(h, NULL, 100); /* = rtm_alloc */
    REQUIRE(p != NULL);
    CHECK(rtm_usable_size(h, p) >= 100);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 1);
    void *z = rtm_realloc(h, NULL, 0); /* = rtm_alloc(0): a minimum block */
    CHECK(z != NULL && z != p);
    rtm_free(h, z);

    /* realloc(p, 0) frees p, returns NULL and leaves errno alone. */
    errno = EDOM;
    CHECK(rtm_realloc(h, p, 0) == NULL);
    CHECK_ERRNO(EDOM);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.free_bytes, st0.free_bytes);
    CHECK_EQ(rtm_heap_check(h), 0);

    /* A failed realloc leaves the block valid and unchanged. */
    p = rtm_alloc(h, 300);
    REQUIRE(p != NULL);
    size_t usable = rtm_usable_size(h, p);
    for (size_t i = 0; i < usable; i++)
        p[i] = (unsigned char)(i * 7u + 1u);
    const size_t too_big[] = {SIZE_MAX, RTM_TLSF_MAX_BLOCK + 1u, st0.arena_bytes,
                              st0.largest_free + 1u};
    for (size_t k = 0; k < sizeof too_big / sizeof too_big[0]; k++) {
        size_t failed = rtm_heap_stats(h).failed_allocs;
        errno = 0;
        CHECK_MSG(rtm_realloc(h, p, too_big[k]) == NULL, "realloc(p, %zu) succeeded", too_big[k]);
        CHECK_ERRNO(ENOMEM);
        CHECK_EQ(rtm_heap_stats(h).failed_allocs, failed + 1u);
        CHECK_EQ(rtm_usable_size(h, p), usable);
        int intact = 1;
        for (size_t i = 0; i < usable; i++)
            intact &= p[i] == (unsigned char)(i * 7u + 1u);
        CHECK_MSG(intact, "realloc(p, %zu) failed but changed p's contents", too_big[k]);
        CHECK_EQ(rtm_heap_check(h), 0);
    }
    rtm_free(h, p);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* --- free -------------------------------------------------------------------- */

static void test_free_null(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 16 * KiB, 0);
    void *keep = rtm_alloc(h, 40);
    rtm_stats st0 = rtm_heap_stats(h);
    recorder_install();
    errno = EDOM;
    rtm_free(h, NULL);
    CHECK_ERRNO(EDOM);
    test_region rt = region_malloc(16 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(rt.mem, rt.bytes);
    REQUIRE(t != NULL);
    rtm_stats tst0 = rtm_tlsf_stats(t);
    errno = EDOM;
    CHECK_EQ(rtm_tlsf_free(t, NULL), 0);
    CHECK_ERRNO(EDOM);
    CHECK(stats_equal(rtm_tlsf_stats(t), tst0));
    region_free(&rt);
    CHECK(stats_equal(rtm_heap_stats(h), st0));
    CHECK_EQ(recorder()->calls, 0);
    rtm_free(NULL, NULL); /* NULL heap and NULL pointer: nothing at all */
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_free(h, keep);
    rtm_set_error_handler(NULL, NULL);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* The handler hears about misuse; without one, misuse is still harmless. */
static void test_error_handler(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 16 * KiB, 0);
    void *a = rtm_alloc(h, 64), *b = rtm_alloc(h, 64), *c = rtm_alloc(h, 64);
    REQUIRE(a && b && c);
    rtm_free(h, b);
    recorder_install();
    errno = 0;
    rtm_free(h, b);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, 1);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_DOUBLE_FREE);
    CHECK_PTR_EQ(recorder()->last_ptr, b);
    CHECK(recorder()->last_detail != NULL && recorder()->last_detail[0] != '\0');
    CHECK(recorder()->last_heap != NULL);
    rtm_set_error_handler(NULL, NULL);
    recorder_reset();
    errno = 0;
    rtm_free(h, b);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(recorder()->calls, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* --- walk, reset, check ------------------------------------------------------ */

typedef struct walked {
    size_t n;
    void *ptr[16];
    size_t usable[16];
    int used[16];
} walked;

static void record_block(void *ptr, size_t usable, int used, void *arg)
{
    walked *w = arg;
    if (w->n < 16) {
        w->ptr[w->n] = ptr;
        w->usable[w->n] = usable;
        w->used[w->n] = used;
    }
    w->n++;
}

static void test_walk(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 16 * KiB, 0);
    rtm_stats st0 = rtm_heap_stats(h);
    walked w;
    memset(&w, 0, sizeof w);
    CHECK_EQ(rtm_heap_walk(h, record_block, &w), 0);
    CHECK_EQ(w.n, 1);
    CHECK(!w.used[0]);
    CHECK_EQ(w.usable[0], st0.free_bytes);

    void *a = rtm_alloc(h, 100), *b = rtm_alloc(h, 200), *c = rtm_alloc(h, 300),
         *d = rtm_alloc(h, 1);
    REQUIRE(a && b && c && d);
    rtm_free(h, b);
    memset(&w, 0, sizeof w);
    CHECK_EQ(rtm_heap_walk(h, record_block, &w), 0);
    /* a, b (free), c, d, then the rest of the pool (free). */
    REQUIRE(w.n == 5);
    void *expect_ptr[4] = {a, b, c, d};
    int expect_used[5] = {1, 0, 1, 1, 0};
    for (size_t i = 0; i < 5; i++) {
        CHECK_EQ(w.used[i], expect_used[i]);
        if (i < 4)
            CHECK_PTR_EQ(w.ptr[i], expect_ptr[i]);
        if (i > 0)
            CHECK((uintptr_t)w.ptr[i] > (uintptr_t)w.ptr[i - 1]); /* address order */
    }
    CHECK_EQ(w.usable[0], rtm_usable_size(h, a));
    CHECK_EQ(w.usable[2], rtm_usable_size(h, c));
    CHECK_EQ(w.usable[3], rtm_usable_size(h, d));
    /* Blocks tile the pool: payload plus header, summed, is the fresh free
     * block plus its header, and each block starts where the last ended. */
    size_t total = 0;
    for (size_t i = 0; i < 5; i++) {
        total += w.usable[i] + RTM_TLSF_HEADER_BYTES;
        if (i > 0)
            CHECK_EQ((uintptr_t)w.ptr[i],
                     (uintptr_t)w.ptr[i - 1] + w.usable[i - 1] + RTM_TLSF_HEADER_BYTES);
    }
    CHECK_EQ(total, st0.free_bytes + RTM_TLSF_HEADER_BYTES);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.free_bytes, w.usable[1] + w.usable[4]);
    CHECK_EQ(st.used_bytes, w.usable[0] + w.usable[2] + w.usable[3]);
    rtm_heap_destroy(h);
    region_free(&r);
}

static void test_reset(void)
{
    test_region r;
    rtm_heap *h = new_heap(&r, 64 * KiB, 2);
    rtm_stats st0 = rtm_heap_stats(h);
    CHECK_EQ(rtm_heap_check(h), 0);
    void *first = rtm_alloc(h, 48);
    for (int i = 0; i < 200; i++)
        (void)rtm_alloc(h, (size_t)(i * 13 % 700));
    (void)rtm_alloc(h, SIZE_MAX); /* a failure, so the counter is non-zero */
    rtm_stats st = rtm_heap_stats(h);
    CHECK(st.live_blocks > 0 && st.failed_allocs > 0 && st.peak_used_bytes > 0);
    CHECK_EQ(rtm_heap_reset(h), 0);
    st = rtm_heap_stats(h);
    CHECK_MSG(stats_equal(st, st0),
              "after reset: arena %zu used %zu free %zu largest %zu live %zu peak %zu failed %zu",
              st.arena_bytes, st.used_bytes, st.free_bytes, st.largest_free, st.live_blocks,
              st.peak_used_bytes, st.failed_allocs);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_PTR_EQ(rtm_alloc(h, 48), first); /* as fresh as a new heap */
    errno = 0;
    CHECK_EQ(rtm_heap_reset(NULL), -1);
    CHECK_ERRNO(EINVAL);
    rtm_heap_destroy(h);
    region_free(&r);
}

/* --- the typed API's own entry points ---------------------------------------- */

static void test_tlsf_sizes(void)
{
    size_t control = rtm_tlsf_control_size(), overhead = rtm_tlsf_pool_overhead();
    size_t min = rtm_tlsf_min_region();
    CHECK(control > 0);
    CHECK(overhead >= RTM_TLSF_HEADER_BYTES);
    CHECK(min >= control + overhead);
    CHECK_EQ(RTM_TLSF_MIN_BLOCK, 2u * sizeof(ptrdiff_t) + 4u);
    /* The generic handle is the TLSF control itself (its first word is the
     * kind the generic API dispatches on): only the alignment slack is added. */
    CHECK_EQ(rtm_min_region("tlsf"), 7u + min);
    printf("  control %zu B, pool overhead %zu B, min region %zu B, generic min %zu B\n", control,
           overhead, min, rtm_min_region("tlsf"));

    /* A fresh typed heap over an 8-aligned region of B bytes (B % 8 == 0):
     * arena = B, and the free space is B minus control and pool overhead. */
    const size_t sizes[] = {4 * KiB, 16 * KiB, 64 * KiB + 8u, 1024 * KiB};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        test_region r = region_malloc(sizes[i], 0);
        rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
        REQUIRE(t != NULL);
        CHECK_PTR_EQ(t, r.mem);
        rtm_stats st = rtm_tlsf_stats(t);
        CHECK_EQ(st.arena_bytes, sizes[i]);
        CHECK_EQ(st.free_bytes, sizes[i] - control - overhead);
        CHECK_EQ(st.largest_free, st.free_bytes);
        CHECK_EQ(rtm_tlsf_check(t), 0);
        region_free(&r);
    }
}

static void test_tlsf_create_boundary(void)
{
    size_t min = rtm_tlsf_min_region();
    for (size_t m = 0; m < 8; m++) {
        test_region r = region_malloc(min + 8u, m);
        errno = 0;
        CHECK_MSG(rtm_tlsf_create(r.mem, min - 1u) == NULL,
                  "rtm_tlsf_create(min - 1) accepted at address %% 8 == %zu", m);
        CHECK_ERRNO(EINVAL);
        if (m == 0) {
            rtm_tlsf *t = rtm_tlsf_create(r.mem, min);
            CHECK_MSG(t != NULL, "rtm_tlsf_create(min = %zu) refused, errno %d", min, errno);
            if (t != NULL)
                CHECK_EQ(rtm_tlsf_check(t), 0);
        } else {
            rtm_tlsf *t = rtm_tlsf_create(r.mem, min + 8u);
            CHECK(t != NULL);
            CHECK_PTR_EQ(t, (void *)align_up((uintptr_t)r.mem, 8));
        }
        region_free(&r);
    }
    errno = 0;
    CHECK(rtm_tlsf_create(NULL, 1u << 20) == NULL);
    CHECK_ERRNO(EINVAL);
}

/* region_for(n) is the smallest 8-aligned region on which alloc(n) works. */
static void test_tlsf_region_for(void)
{
    CHECK_EQ(rtm_tlsf_region_for(RTM_TLSF_MAX_BLOCK + 1u), 0);
    CHECK_EQ(rtm_tlsf_region_for(SIZE_MAX), 0);
    CHECK(rtm_tlsf_region_for(RTM_TLSF_MAX_BLOCK) > RTM_TLSF_MAX_BLOCK);
    CHECK(rtm_tlsf_region_for(0) >= rtm_tlsf_min_region());
    size_t sizes[200];
    size_t n = 0;
    for (size_t s = 0; s <= 80; s++)
        sizes[n++] = s;
    for (size_t s = 100; n < 200; s = s * 9u / 8u + 1u) /* spread over classes to ~MiB */
        sizes[n++] = s;
    test_region r = region_malloc(rtm_tlsf_region_for(sizes[n - 1u]) + 64u, 0);
    for (size_t i = 0; i < n; i++) {
        size_t need = rtm_tlsf_region_for(sizes[i]);
        REQUIRE(need > 0 && need <= r.bytes);
        rtm_tlsf *t = rtm_tlsf_create(r.mem, need);
        CHECK_MSG(t != NULL && rtm_tlsf_alloc(t, sizes[i]) != NULL,
                  "region_for(%zu) = %zu: alloc(%zu) fails on that region", sizes[i], need,
                  sizes[i]);
        t = rtm_tlsf_create(r.mem, need - 1u);
        CHECK_MSG(t == NULL || rtm_tlsf_alloc(t, sizes[i]) == NULL,
                  "region_for(%zu) = %zu is not the smallest: %zu bytes suffice", sizes[i], need,
                  need - 1u);
    }
    region_free(&r);
}

static void test_tlsf_add_pool_bad(void)
{
    test_region r = region_malloc(16 * KiB, 0), extra = region_malloc(4 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
    REQUIRE(t != NULL);
    errno = 0;
    CHECK_EQ(rtm_tlsf_add_pool(NULL, extra.mem, extra.bytes), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_tlsf_add_pool(t, NULL, extra.bytes), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_tlsf_add_pool(t, extra.mem, rtm_tlsf_pool_overhead() + RTM_TLSF_MIN_BLOCK - 1u),
             -1);
    CHECK_ERRNO(EINVAL);
    CHECK_EQ(rtm_tlsf_add_pool(t, extra.mem, extra.bytes), 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    region_free(&extra);
    region_free(&r);
}

static void test_tlsf_misc(void)
{
    test_region r = region_malloc(64 * KiB, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, r.bytes);
    REQUIRE(t != NULL);
    rtm_stats st0 = rtm_tlsf_stats(t);
    void *p = rtm_tlsf_alloc(t, 100);
    REQUIRE(p != NULL);
    /* Counted only in RTM_TLSF_COUNT_STEPS builds (test_determinism). */
    CHECK_EQ(rtm_tlsf_last_steps(t), 0);
    CHECK(rtm_tlsf_usable_size(p) >= 100);
    walked w;
    memset(&w, 0, sizeof w);
    rtm_tlsf_walk(t, record_block, &w);
    CHECK_EQ(w.n, 2);
    CHECK_PTR_EQ(w.ptr[0], p);
    CHECK(w.used[0] && !w.used[1]);
    size_t usable = rtm_tlsf_usable_size(p);
    CHECK_EQ(rtm_tlsf_free(t, p), 0);
    rtm_stats st = rtm_tlsf_stats(t);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.free_bytes, st0.free_bytes);
    CHECK_EQ(st.largest_free, st0.largest_free);
    CHECK_EQ(st.peak_used_bytes, usable);
    CHECK(rtm_tlsf_alloc(t, SIZE_MAX) == NULL);
    CHECK_EQ(rtm_tlsf_stats(t).failed_allocs, 1);
    rtm_tlsf_reset(t);
    CHECK(stats_equal(rtm_tlsf_stats(t), st0));
    CHECK_EQ(rtm_tlsf_check(t), 0);
    region_free(&r);
}

/* Every name rtm_algorithms() lists works end to end through the generic
 * API with its default parameter: create at the documented minimum and on a
 * roomy region, allocate, check, walk, free, reset, destroy. */
static void walk_count(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    *(size_t *)arg += used != 0;
}

static void test_every_algorithm_generic(void)
{
    for (const char *const *name = rtm_algorithms(); *name != NULL; name++) {
        size_t min = rtm_min_region(*name);
        CHECK_MSG(min != 0, "rtm_min_region(\"%s\") = 0", *name);
        size_t bytes = 1u << 20;
        char *mem = malloc(bytes);
        REQUIRE(mem != NULL);
        rtm_heap *small = rtm_heap_create(*name, mem + 1, min);
        CHECK_MSG(small != NULL, "%s: the documented minimum region was refused", *name);
        rtm_heap *h = rtm_heap_create(*name, mem, bytes);
        REQUIRE(h != NULL);
        CHECK(strcmp(rtm_heap_algorithm(h), *name) == 0);
        void *p[8];
        for (int i = 0; i < 8; i++) {
            p[i] = rtm_alloc(h, 24);
            CHECK_MSG(p[i] != NULL, "%s: rtm_alloc(24) failed", *name);
            if (p[i] != NULL)
                memset(p[i], 0xA5, 24);
        }
        rtm_stats st = rtm_heap_stats(h);
        CHECK_EQ(st.live_blocks, 8u);
        CHECK(st.used_bytes >= 8u * 24u);
        size_t used = 0;
        CHECK_EQ(rtm_heap_walk(h, walk_count, &used), 0);
        CHECK_EQ(used, 8u);
        CHECK_EQ(rtm_heap_check(h), 0);
        for (int i = 0; i < 8; i++)
            rtm_free(h, p[i]);
        CHECK_EQ(rtm_heap_stats(h).live_blocks, 0u);
        CHECK_EQ(rtm_heap_reset(h), 0);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
        errno = 0;
        CHECK(rtm_alloc(h, 1) == NULL);
        CHECK_ERRNO(EINVAL);
        free(mem);
    }
}

int main(void)
{
    RUN_TEST(test_algorithms_list);
    RUN_TEST(test_every_algorithm_generic);
    RUN_TEST(test_min_region_names);
    RUN_TEST(test_min_region_boundary);
    RUN_TEST(test_create_bad_arguments);
    RUN_TEST(test_create_handle_and_name);
    RUN_TEST(test_null_and_destroyed_heap);
    RUN_TEST(test_add_pool);
    RUN_TEST(test_alloc_basic);
    RUN_TEST(test_alloc_impossible_sizes);
    RUN_TEST(test_aligned_alloc);
    RUN_TEST(test_realloc_contract);
    RUN_TEST(test_free_null);
    RUN_TEST(test_error_handler);
    RUN_TEST(test_walk);
    RUN_TEST(test_reset);
    RUN_TEST(test_tlsf_sizes);
    RUN_TEST(test_tlsf_create_boundary);
    RUN_TEST(test_tlsf_region_for);
    RUN_TEST(test_tlsf_add_pool_bad);
    RUN_TEST(test_tlsf_misc);
    return check_summary();
}
