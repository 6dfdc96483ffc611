// SPDX-License-Identifier: MIT
/*
 * tests/mt/test_mt_api.c -- the multi-threaded heap's public functions
 * (rtmem/mt.h) one by one, bad inputs included, on every algorithm it
 * takes: create and its refusals, the sizing helpers, attach and detach,
 * the block calls from attached and unattached threads, exact statistics
 * with remote frees pending, check, walk, reset, destroy, and the misuse
 * every heap refuses (double free from the same and another thread,
 * foreign, interior and stale pointers).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/recorder.h"
#include "rtmem.h"

static const char *const algorithms[] = {"tlsf",  "tlsf_cached", "halffit", "heapmem",
                                         "buddy", "slab",        "xvmalloc"};
#define N_ALGORITHMS (sizeof algorithms / sizeof algorithms[0])

#define REGION (8u << 20)
static unsigned char *region;

static rtm_heap *make(const char *algorithm, unsigned shards)
{
    rtm_heap *h = rtm_mt_create(algorithm, region, REGION, shards);
    CHECK_MSG(h != NULL, "%s: rtm_mt_create failed (errno %d)", algorithm, errno);
    return h;
}

/* ---- creation --------------------------------------------------------- */

static void expect_create_refused(const char *algorithm, void *mem, size_t bytes, unsigned shards)
{
    errno = 0;
    CHECK(rtm_mt_create(algorithm, mem, bytes, shards) == NULL);
    CHECK_ERRNO(EINVAL);
}

static void test_create_refusals(void)
{
    expect_create_refused("tlsf", region, REGION, 0);
    expect_create_refused("nosuch", region, REGION, 2);
    expect_create_refused("pool", region, REGION, 2);
    expect_create_refused("pool:64", region, REGION, 2);
    expect_create_refused("locked:tlsf", region, REGION, 2);
    expect_create_refused(NULL, region, REGION, 2);
    expect_create_refused("tlsf", NULL, REGION, 2);
    size_t min = rtm_mt_min_region("tlsf", 4);
    CHECK(min > 0);
    expect_create_refused("tlsf", region, min - 1u, 4);
    expect_create_refused("tlsf", region, SIZE_MAX, 2);
    expect_create_refused("tlsf", region + 1, UINTPTR_MAX - (uintptr_t)region, 2);
    /* Nothing written by a refusal. */
    memset(region, 0xa5, 256);
    expect_create_refused("tlsf", region, min - 1u, 4);
    for (unsigned i = 0; i < 256; i++)
        CHECK_EQ(region[i], 0xa5);
    /* The minimum works at every start offset. */
    for (unsigned off = 0; off < 64; off += 8) {
        rtm_heap *h = rtm_mt_create("tlsf", region + off, min, 4);
        CHECK_MSG(h != NULL, "offset %u: minimum region refused", off);
        rtm_heap_destroy(h);
    }
}

static void test_sizing(void)
{
    errno = 0;
    CHECK_EQ(rtm_mt_min_region("tlsf", 0), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_mt_min_region("pool", 2), 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_mt_region_size("tlsf", 2, SIZE_MAX / 2), 0);
    CHECK_ERRNO(EINVAL);
    for (size_t a = 0; a < N_ALGORITHMS; a++) {
        size_t want = 256u << 10;
        size_t bytes = rtm_mt_region_size(algorithms[a], 3, want);
        CHECK(bytes >= 4u * want);
        CHECK(rtm_mt_min_region(algorithms[a], 3) <= bytes);
        unsigned char *mem = malloc(bytes + 64);
        REQUIRE(mem != NULL);
        /* Each shard's heap gets at least want: the fallback's largest
         * block is at least a plain heap's of want bytes (less the word). */
        unsigned char *plain_mem = malloc(want);
        REQUIRE(plain_mem != NULL);
        size_t plain_largest =
            rtm_heap_stats(rtm_heap_create(algorithms[a], plain_mem, want)).largest_free;
        free(plain_mem);
        for (unsigned off = 0; off < 64; off += 24) {
            rtm_heap *h = rtm_mt_create(algorithms[a], mem + off, bytes, 3);
            CHECK_MSG(h != NULL, "%s: region_size refused", algorithms[a]);
            if (h == NULL)
                continue;
            rtm_stats st = rtm_heap_stats(h);
            CHECK_EQ(st.arena_bytes, bytes);
            CHECK_MSG(st.largest_free + RTM_MT_BLOCK_OVERHEAD >= plain_largest,
                      "%s: largest_free %zu, a plain heap's %zu", algorithms[a], st.largest_free,
                      plain_largest);
            rtm_heap_destroy(h);
        }
        free(mem);
    }
}

/* ---- attach and detach ------------------------------------------------ */

static void test_attach_detach(void)
{
    rtm_heap *h = make("tlsf", 2);
    REQUIRE(h != NULL);
    errno = 0;
    CHECK_EQ(rtm_mt_detach(h), -1);
    CHECK_ERRNO(EINVAL);
    int i = rtm_mt_attach(h);
    CHECK(i == 0 || i == 1);
    CHECK_EQ(rtm_mt_attach(h), i); /* again: the same shard */
    CHECK_EQ(rtm_mt_detach(h), 0);
    errno = 0;
    CHECK_EQ(rtm_mt_detach(h), -1);
    CHECK_ERRNO(EINVAL);

    /* Not an mt heap. */
    static unsigned char other[1 << 16];
    rtm_heap *plain = rtm_heap_create("tlsf", other, sizeof other);
    errno = 0;
    CHECK_EQ(rtm_mt_attach(plain), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_mt_detach(plain), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_mt_attach(NULL), -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK_EQ(rtm_mt_detach(NULL), -1);
    CHECK_ERRNO(EINVAL);
    rtm_heap_destroy(h);
    /* A destroyed heap is no mt heap. */
    errno = 0;
    CHECK_EQ(rtm_mt_attach(h), -1);
    CHECK_ERRNO(EINVAL);
}

typedef struct attacher {
    rtm_heap *h;
    int index, err;
    void *block;
    int detach;
} attacher;

static void *attach_once(void *arg)
{
    attacher *a = arg;
    errno = 0;
    a->index = rtm_mt_attach(a->h);
    a->err = errno;
    if (a->index >= 0) {
        a->block = rtm_alloc(a->h, 100);
        if (a->detach)
            (void)rtm_mt_detach(a->h);
    }
    return NULL;
}

static attacher run_attacher(rtm_heap *h, int detach)
{
    attacher a = {h, -1, 0, NULL, detach};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, attach_once, &a) == 0);
    pthread_join(t, NULL);
    return a;
}

/* Every shard held: EBUSY; a thread that exits attached frees its shard,
 * whose blocks stay live and are found by the next thread. */
static void test_busy_and_exit(void)
{
    rtm_heap *h = make("tlsf", 1);
    REQUIRE(h != NULL);
    CHECK_EQ(rtm_mt_attach(h), 0);
    attacher a = run_attacher(h, 0);
    CHECK_EQ(a.index, -1);
    CHECK_EQ(a.err, EBUSY);
    CHECK_EQ(rtm_mt_detach(h), 0);

    attacher b = run_attacher(h, 0); /* exits holding shard 0 and a block */
    CHECK_EQ(b.index, 0);
    CHECK(b.block != NULL);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 1);
    CHECK_EQ(rtm_mt_attach(h), 0); /* the exit released it */
    CHECK_EQ(rtm_usable_size(h, b.block) >= 100, 1);
    rtm_free(h, b.block); /* now this thread's own block */
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_mt_detach(h), 0);

    attacher c = run_attacher(h, 1); /* detaches before exiting */
    CHECK_EQ(c.index, 0);
    rtm_free(h, c.block); /* unattached: a remote free into shard 0 */
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
}

/* A thread attached to RTM_MT_THREAD_HEAPS heaps gets ENOSPC for one more. */
static void test_thread_heap_limit(void)
{
    size_t bytes = rtm_mt_min_region("tlsf", 1);
    unsigned char *mem = malloc(bytes * (RTM_MT_THREAD_HEAPS + 1u));
    REQUIRE(mem != NULL);
    rtm_heap *hs[RTM_MT_THREAD_HEAPS + 1u];
    for (unsigned i = 0; i <= RTM_MT_THREAD_HEAPS; i++) {
        hs[i] = rtm_mt_create("tlsf", mem + i * bytes, bytes, 1);
        REQUIRE(hs[i] != NULL);
    }
    for (unsigned i = 0; i < RTM_MT_THREAD_HEAPS; i++)
        CHECK_EQ(rtm_mt_attach(hs[i]), 0);
    errno = 0;
    CHECK_EQ(rtm_mt_attach(hs[RTM_MT_THREAD_HEAPS]), -1);
    CHECK_ERRNO(ENOSPC);
    CHECK_EQ(rtm_mt_detach(hs[0]), 0);
    CHECK_EQ(rtm_mt_attach(hs[RTM_MT_THREAD_HEAPS]), 0);
    for (unsigned i = 1; i <= RTM_MT_THREAD_HEAPS; i++)
        CHECK_EQ(rtm_mt_detach(hs[i]), 0);
    for (unsigned i = 0; i <= RTM_MT_THREAD_HEAPS; i++)
        rtm_heap_destroy(hs[i]);
    free(mem);
}

/* ---- blocks, stats, walk ----------------------------------------------- */

typedef struct walk_sum {
    size_t used_bytes, used_blocks, free_blocks;
} walk_sum;

static void sum_blocks(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    walk_sum *w = arg;
    if (used) {
        w->used_bytes += usable;
        w->used_blocks++;
    } else {
        w->free_blocks++;
    }
}

static void expect_exact(rtm_heap *h, void *const *blocks, size_t n, const char *algorithm)
{
    size_t used = 0, live = 0;
    for (size_t i = 0; i < n; i++)
        if (blocks[i] != NULL) {
            used += rtm_usable_size(h, blocks[i]);
            live++;
        }
    rtm_stats st = rtm_heap_stats(h);
    CHECK_MSG(st.used_bytes == used, "%s: used %zu, blocks say %zu", algorithm, st.used_bytes,
              used);
    CHECK_MSG(st.live_blocks == live, "%s: live %zu, blocks say %zu", algorithm, st.live_blocks,
              live);
    CHECK(st.peak_used_bytes >= st.used_bytes);
    CHECK(st.used_bytes + st.free_bytes <= st.arena_bytes);
    walk_sum w = {0, 0, 0};
    CHECK_EQ(rtm_heap_walk(h, sum_blocks, &w), 0);
    CHECK_MSG(w.used_bytes == used && w.used_blocks == live, "%s: walk %zu bytes in %zu blocks",
              algorithm, w.used_bytes, w.used_blocks);
    CHECK_MSG(rtm_heap_check(h) == 0, "%s: check failed", algorithm);
}

typedef struct freer {
    rtm_heap *h;
    void **blocks;
    size_t n;
    int attach;
} freer;

static void *free_all(void *arg)
{
    freer *f = arg;
    if (f->attach)
        CHECK(rtm_mt_attach(f->h) >= 0);
    for (size_t i = 0; i < f->n; i++)
        rtm_free(f->h, f->blocks[i]);
    return NULL;
}

static void free_in_thread(rtm_heap *h, void **blocks, size_t n, int attach)
{
    freer f = {h, blocks, n, attach};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, free_all, &f) == 0);
    pthread_join(t, NULL);
}

#define BLOCKS 64

/* Whether the algorithm has an aligned alloc (xvmalloc has none: ENOTSUP,
 * which the mt heap passes on). */
static int has_aligned_alloc(const char *algorithm)
{
    static unsigned char mem[1 << 20];
    rtm_heap *plain = rtm_heap_create(algorithm, mem, sizeof mem);
    errno = 0;
    void *p = rtm_aligned_alloc(plain, 64, 100);
    int ok = p != NULL || errno != ENOTSUP;
    rtm_heap_destroy(plain);
    return ok;
}

static void test_blocks(const char *algorithm)
{
    rtm_heap *h = make(algorithm, 2);
    REQUIRE(h != NULL);
    CHECK(strcmp(rtm_heap_algorithm(h), algorithm) == 0);
    CHECK(rtm_mt_attach(h) >= 0);
    int aligned = has_aligned_alloc(algorithm);
    if (!aligned) {
        errno = 0;
        CHECK(rtm_aligned_alloc(h, 64, 100) == NULL);
        CHECK_ERRNO(ENOTSUP);
        CHECK_EQ(rtm_heap_stats(h).failed_allocs, 0);
    }
    void *b[BLOCKS] = {0};
    for (size_t i = 0; i < BLOCKS; i++) {
        size_t size = (i * 37u) % 900u;
        b[i] = i % 5 == 4 && aligned ? rtm_aligned_alloc(h, (size_t)16 << (i % 4), size)
                                     : rtm_alloc(h, size);
        CHECK_MSG(b[i] != NULL, "%s: block %zu of %zu bytes refused", algorithm, i, size);
        if (b[i] == NULL)
            return;
        if (i % 5 == 4 && aligned)
            CHECK(((uintptr_t)b[i] & ((16u << (i % 4)) - 1u)) == 0);
        CHECK((uintptr_t)b[i] % RTM_ALIGN == 0);
        CHECK(rtm_usable_size(h, b[i]) >= size);
        memset(b[i], (int)i, size);
    }
    expect_exact(h, b, BLOCKS, algorithm);

    /* realloc keeps the data and the alignment. */
    for (size_t i = 0; i < BLOCKS; i += 7) {
        size_t old = (i * 37u) % 900u;
        void *n = rtm_realloc(h, b[i], old + 300u);
        REQUIRE(n != NULL);
        for (size_t k = 0; k < old; k++)
            if (((unsigned char *)n)[k] != (unsigned char)i) {
                CHECK_MSG(0, "%s: realloc lost byte %zu of block %zu", algorithm, k, i);
                break;
            }
        if (i % 5 == 4 && aligned)
            CHECK(((uintptr_t)n & ((16u << (i % 4)) - 1u)) == 0);
        b[i] = n;
    }
    expect_exact(h, b, BLOCKS, algorithm);

    /* Half freed by another attached thread: pending in this shard's inbox,
     * yet counted free at once. */
    free_in_thread(h, b, BLOCKS / 2, 1);
    for (size_t i = 0; i < BLOCKS / 2; i++)
        b[i] = NULL;
    expect_exact(h, b, BLOCKS, algorithm);
    /* The rest by an unattached thread, then nothing is live before any
     * call of the owner. */
    free_in_thread(h, b + BLOCKS / 2, BLOCKS / 2, 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    /* The owner's calls take the pending blocks back. */
    for (unsigned i = 0; i < BLOCKS; i++) {
        void *p = rtm_alloc(h, 8);
        rtm_free(h, p);
    }
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);

    /* realloc corner cases. */
    void *p = rtm_realloc(h, NULL, 40);
    REQUIRE(p != NULL);
    errno = 0;
    CHECK(rtm_realloc(h, p, 0) == NULL);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    p = rtm_alloc(h, 0);
    CHECK(p != NULL);
    CHECK(rtm_usable_size(h, p) >= 8);
    rtm_free(h, p);
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 24, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_alloc(h, SIZE_MAX - 4) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK(rtm_heap_stats(h).failed_allocs >= 1);
    errno = 0;
    CHECK_EQ(rtm_heap_add_pool(h, region, 4096), -1);
    CHECK_ERRNO(ENOTSUP);
    CHECK_EQ(rtm_usable_size(h, NULL), 0);
    rtm_free(h, NULL);
    CHECK_EQ(rtm_mt_detach(h), 0);
    rtm_heap_destroy(h);
}

static void test_every_algorithm(void)
{
    for (size_t a = 0; a < N_ALGORITHMS; a++)
        test_blocks(algorithms[a]);
}

/* A full shard takes back everything pending before it refuses. */
static void test_full_shard_takes_back(void)
{
    size_t bytes = rtm_mt_region_size("tlsf", 1, 64u << 10);
    unsigned char *mem = malloc(bytes);
    REQUIRE(mem != NULL);
    rtm_heap *h = rtm_mt_create("tlsf", mem, bytes, 1);
    REQUIRE(h != NULL);
    CHECK_EQ(rtm_mt_attach(h), 0);
    void *b[4096];
    size_t n = 0;
    while (n < 4096 && (b[n] = rtm_alloc(h, 200)) != NULL)
        n++;
    CHECK(n > 100 && n < 4096);
    free_in_thread(h, b, n, 0); /* all pending */
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.live_blocks, 0);
    /* A request only the whole shard holds: all n pending frees first. */
    void *big = rtm_alloc(h, 32u << 10);
    CHECK(big != NULL);
    rtm_free(h, big);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(mem);
}

/* ---- misuse ------------------------------------------------------------ */

/* kind2: a second kind that is also right (0: none). */
static void expect_refused2(rtm_heap *h, void *ptr, rtm_error_kind kind, rtm_error_kind kind2,
                            const char *what)
{
    rtm_stats before = rtm_heap_stats(h);
    recorder_reset();
    errno = 0;
    rtm_free(h, ptr);
    CHECK_MSG(errno == EINVAL, "%s: free errno %d", what, errno);
    CHECK_MSG(recorder()->calls == 1 &&
                  (recorder()->last_kind == kind || recorder()->last_kind == kind2),
              "%s: free reported %u times, kind %d (expected %d)", what, recorder()->calls,
              (int)recorder()->last_kind, (int)kind);
    recorder_reset();
    errno = 0;
    CHECK_MSG(rtm_usable_size(h, ptr) == 0 && errno == EINVAL, "%s: usable_size accepted", what);
    CHECK_EQ(recorder()->calls, 1);
    recorder_reset();
    errno = 0;
    CHECK_MSG(rtm_realloc(h, ptr, 64) == NULL && errno == EINVAL, "%s: realloc accepted", what);
    CHECK_EQ(recorder()->calls, 1);
    rtm_stats after = rtm_heap_stats(h);
    CHECK_MSG(after.used_bytes == before.used_bytes && after.live_blocks == before.live_blocks,
              "%s: the heap changed", what);
    CHECK_MSG(rtm_heap_check(h) == 0, "%s: check fails after", what);
}

static void expect_refused(rtm_heap *h, void *ptr, rtm_error_kind kind, const char *what)
{
    expect_refused2(h, ptr, kind, kind, what);
}

static void test_misuse(void)
{
    rtm_set_error_handler(recorder_handler, recorder());
    rtm_heap *h = make("tlsf", 2);
    REQUIRE(h != NULL);
    CHECK(rtm_mt_attach(h) >= 0);
    unsigned char *a = rtm_alloc(h, 100);
    unsigned char *b = rtm_alloc(h, 100);
    REQUIRE(a != NULL && b != NULL);
    static unsigned char outside[64];
    expect_refused(h, outside + 8, RTM_ERR_FOREIGN_POINTER, "static address");
    expect_refused(h, region + REGION + 64, RTM_ERR_FOREIGN_POINTER, "past the region");
    expect_refused(h, (unsigned char *)h + 8, RTM_ERR_FOREIGN_POINTER, "the control structure");
    expect_refused(h, a + 16, RTM_ERR_CORRUPT_HEADER, "interior pointer");
    expect_refused(h, a + 3, RTM_ERR_FOREIGN_POINTER, "misaligned pointer");
    /* Double free by the owner: the block is back in the shard's heap,
     * whose free-list links may have overwritten the word (rtmem/mt.h:
     * then a damaged word, still refused). */
    rtm_free(h, a);
    expect_refused2(h, a, RTM_ERR_DOUBLE_FREE, RTM_ERR_CORRUPT_HEADER, "double free (owner)");
    /* Double free across threads: pending in the inbox, then again. */
    free_in_thread(h, (void **)&b, 1, 1);
    expect_refused(h, b, RTM_ERR_DOUBLE_FREE, "double free (remote, pending)");
    /* A stale pointer from before a reset. */
    unsigned char *c = rtm_alloc(h, 100);
    REQUIRE(c != NULL);
    CHECK_EQ(rtm_heap_reset(h), 0);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    expect_refused(h, c, RTM_ERR_CORRUPT_HEADER, "stale pointer after reset");
    /* The heap still works. */
    void *d = rtm_alloc(h, 100);
    CHECK(d != NULL);
    rtm_free(h, d);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_mt_detach(h), 0);
    rtm_heap_destroy(h);
    /* Calls on a destroyed heap fail with EINVAL. */
    errno = 0;
    CHECK(rtm_alloc(h, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    rtm_set_error_handler(NULL, NULL);
}

/* A check word damaged by an overflow from the block below is found by
 * rtm_heap_check and refused by free. */
static void test_damaged_word(void)
{
    rtm_set_error_handler(recorder_handler, recorder());
    rtm_heap *h = make("tlsf", 1);
    REQUIRE(h != NULL);
    CHECK_EQ(rtm_mt_attach(h), 0);
    unsigned char *a = rtm_alloc(h, 64);
    REQUIRE(a != NULL);
    a[-3] ^= 0x10;
    recorder_reset();
    CHECK_EQ(rtm_heap_check(h), -1);
    CHECK_ERRNO(EFAULT);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_CHECK_FAILED);
    recorder_reset();
    rtm_free(h, a);
    CHECK_EQ(recorder()->last_kind, RTM_ERR_CORRUPT_HEADER);
    a[-3] ^= 0x10;
    rtm_free(h, a);
    CHECK_EQ(rtm_heap_check(h), 0);
    CHECK_EQ(rtm_mt_detach(h), 0);
    rtm_heap_destroy(h);
    rtm_set_error_handler(NULL, NULL);
}

int main(void)
{
    region = aligned_alloc(64, REGION);
    REQUIRE(region != NULL);
    RUN_TEST(test_create_refusals);
    RUN_TEST(test_sizing);
    RUN_TEST(test_attach_detach);
    RUN_TEST(test_busy_and_exit);
    RUN_TEST(test_thread_heap_limit);
    RUN_TEST(test_every_algorithm);
    RUN_TEST(test_full_shard_takes_back);
    RUN_TEST(test_misuse);
    RUN_TEST(test_damaged_word);
    free(region);
    return check_summary();
}
