// SPDX-License-Identifier: MIT
/*
 * tests/shared/test_locked.c -- the locked heap (include/rtmem/lock.h):
 *  - rtm_locked_create / rtm_locked_min_region bad inputs with exact errno;
 *    the minimum works at every start address, one byte less never does;
 *  - every generic call on a locked heap of every algorithm rtm_algorithms()
 *    lists: results, errno on bad input, the inner algorithm's name,
 *    add_pool (TLSF only; never over the lock's guard), reset, walk,
 *    destroy (later calls: EINVAL);
 *  - threads hammering one heap (tlsf, pool:64, buddy): each fills its
 *    blocks with an address-derived pattern, checks it before freeing,
 *    hands blocks to other threads through a slot table, frees theirs;
 *    afterwards every counter is exact: no block lost, failed allocations
 *    equal the refusals the threads saw, free bytes back to the start.
 * Labelled "threads" in ctest (the TSan stage runs it).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"

#define KiB ((size_t)1024)

static void test_create_bad_inputs(void)
{
    unsigned char *mem = malloc(64 * KiB);
    REQUIRE(mem != NULL);
    errno = 0;
    CHECK(rtm_locked_create(NULL, mem, 64 * KiB) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_locked_create("tlsf", NULL, 64 * KiB) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_locked_create("nosuch", mem, 64 * KiB) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_locked_create("pool:0", mem, 64 * KiB) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_locked_min_region("nosuch") == 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_locked_min_region(NULL) == 0);
    CHECK_ERRNO(EINVAL);
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++) {
        size_t min = rtm_locked_min_region(*a);
        CHECK(min > rtm_min_region(*a));
        for (size_t lead = 0; lead < 8; lead++) {
            errno = 0;
            CHECK_MSG(rtm_locked_create(*a, mem + lead, min - 1u) == NULL, "%s at +%zu", *a, lead);
            CHECK_ERRNO(EINVAL);
            rtm_heap *h = rtm_locked_create(*a, mem + lead, min);
            CHECK_MSG(h != NULL, "%s: minimum region at +%zu refused", *a, lead);
            if (h != NULL) {
                CHECK(rtm_heap_check(h) == 0);
                rtm_heap_destroy(h);
            }
        }
    }
    free(mem);
}

/* Counts blocks a walk reports. */
typedef struct walk_count {
    size_t used, free, used_bytes, free_bytes;
} walk_count;

static void count_block(void *ptr, size_t usable, int used, void *arg)
{
    walk_count *w = arg;
    (void)ptr;
    if (used) {
        w->used++;
        w->used_bytes += usable;
    } else {
        w->free++;
        w->free_bytes += usable;
    }
}

/* Every generic call on a locked heap of `algorithm`. */
static void exercise_every_call(const char *algorithm)
{
    const size_t bytes = 256 * KiB;
    unsigned char *mem = malloc(bytes);
    unsigned char *extra = malloc(64 * KiB);
    REQUIRE(mem != NULL && extra != NULL);
    rtm_heap *h = rtm_locked_create(algorithm, mem, bytes);
    REQUIRE(h != NULL);
    CHECK_PTR_EQ(h, mem); /* malloc memory is 8-aligned: the guard starts there */
    char base[32];
    snprintf(base, sizeof base, "%s", algorithm);
    char *colon = strchr(base, ':');
    if (colon != NULL)
        *colon = '\0';
    const char *name = rtm_heap_algorithm(h);
    CHECK_MSG(name != NULL && strcmp(name, base) == 0, "%s: algorithm name %s", algorithm,
              name ? name : "(null)");

    rtm_stats st0 = rtm_heap_stats(h);
    CHECK_MSG(st0.arena_bytes == bytes, "%s: arena %zu of %zu", algorithm, st0.arena_bytes, bytes);
    CHECK(st0.used_bytes == 0 && st0.live_blocks == 0 && st0.free_bytes > 0);

    char *a = rtm_alloc(h, 40);
    REQUIRE(a != NULL);
    memset(a, 0xa5, 40);
    CHECK(rtm_usable_size(h, a) >= 40);
    CHECK(rtm_usable_size(h, NULL) == 0);
    void *al = rtm_aligned_alloc(h, 32, 24);
    if (al != NULL)
        CHECK(((uintptr_t)al & 31u) == 0);
    else
        CHECK(errno == ENOTSUP || errno == ENOMEM);
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 24, 8) == NULL);
    CHECK(errno == EINVAL || errno == ENOTSUP);
    char *b = rtm_realloc(h, a, 32); /* shrink or stay */
    REQUIRE(b != NULL);
    CHECK(b[0] == (char)0xa5 && b[31] == (char)0xa5);
    errno = 0;
    CHECK(rtm_alloc(h, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    rtm_stats st1 = rtm_heap_stats(h);
    CHECK(st1.failed_allocs == st0.failed_allocs + 1u);
    CHECK(st1.live_blocks == (al != NULL ? 2u : 1u));
    walk_count w = {0, 0, 0, 0};
    CHECK(rtm_heap_walk(h, count_block, &w) == 0);
    CHECK(w.used == st1.live_blocks && w.used_bytes == st1.used_bytes);
    errno = 0;
    CHECK(rtm_heap_walk(h, NULL, NULL) == -1);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_heap_check(h) == 0);

    int add = rtm_heap_add_pool(h, extra, 64 * KiB);
    if (strcmp(base, "tlsf") == 0 || strcmp(base, "tlsf_cached") == 0) {
        CHECK(add == 0);
        CHECK(rtm_heap_stats(h).arena_bytes == bytes + 64 * KiB);
    } else {
        CHECK(add == -1 && errno == ENOTSUP);
    }
    errno = 0;
    CHECK(rtm_heap_add_pool(h, NULL, 64) == -1);
    CHECK_ERRNO(EINVAL);

    rtm_free(h, b);
    rtm_free(h, al);
    rtm_free(h, NULL);
    CHECK(rtm_heap_stats(h).live_blocks == 0);
    CHECK(rtm_alloc(h, 40) != NULL);
    CHECK(rtm_heap_reset(h) == 0);
    rtm_stats st2 = rtm_heap_stats(h);
    CHECK(st2.live_blocks == 0 && st2.used_bytes == 0);
    CHECK(rtm_heap_check(h) == 0);

    rtm_heap_destroy(h);
    errno = 0;
    CHECK(rtm_alloc(h, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heap_check(h) == -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_heap_algorithm(h) == NULL);
    CHECK_ERRNO(EINVAL);
    free(extra);
    free(mem);
}

static void test_every_call_every_algorithm(void)
{
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        exercise_every_call(*a);
    exercise_every_call("pool:64");
}

/* --- threads ------------------------------------------------------------- */

#define THREADS 4
#define SLOTS   64
#define HELD    64

typedef struct hammer {
    rtm_heap *h;
    _Atomic(uintptr_t) slots[SLOTS]; /* blocks handed between threads */
    atomic_size_t refusals;
    atomic_size_t bad_patterns;
    size_t ops;
    size_t max_size;
} hammer;

typedef struct hammer_thread {
    hammer *shared;
    unsigned id;
    pthread_t tid;
} hammer_thread;

/* Block layout: [size_t size][bytes derived from the address and size]. */
static unsigned char pattern_byte(uintptr_t block, size_t i)
{
    return (unsigned char)((block >> 3) * 31u + i * 7u + 1u);
}

static void fill(void *p, size_t size)
{
    unsigned char *c = p;
    memcpy(c, &size, sizeof size);
    for (size_t i = sizeof size; i < size; i++)
        c[i] = pattern_byte((uintptr_t)p, i);
}

static int intact(const void *p)
{
    const unsigned char *c = p;
    size_t size;
    memcpy(&size, c, sizeof size);
    for (size_t i = sizeof size; i < size; i++)
        if (c[i] != pattern_byte((uintptr_t)p, i))
            return 0;
    return 1;
}

static void drop(hammer *s, void *p)
{
    if (!intact(p))
        atomic_fetch_add(&s->bad_patterns, 1u);
    rtm_free(s->h, p);
}

static void *hammer_main(void *arg)
{
    hammer_thread *me = arg;
    hammer *s = me->shared;
    rng r = {0x1234u + me->id};
    void *held[HELD] = {NULL};
    for (size_t op = 0; op < s->ops; op++) {
        size_t k = rng_below(&r, HELD);
        unsigned what = (unsigned)rng_below(&r, 4u);
        if (held[k] != NULL && what == 0) { /* hand it to another thread */
            uintptr_t old = atomic_exchange(&s->slots[rng_below(&r, SLOTS)], (uintptr_t)held[k]);
            held[k] = NULL;
            if (old != 0)
                drop(s, (void *)old);
        } else if (held[k] != NULL && what == 1) {
            size_t size = sizeof(size_t) + rng_below(&r, s->max_size);
            void *q = rtm_realloc(s->h, held[k], size);
            if (q == NULL) {
                atomic_fetch_add(&s->refusals, 1u);
            } else {
                held[k] = q;
                fill(q, size);
            }
        } else if (held[k] != NULL) {
            drop(s, held[k]);
            held[k] = NULL;
        } else {
            size_t size = sizeof(size_t) + rng_below(&r, s->max_size);
            void *p = rtm_alloc(s->h, size);
            if (p == NULL) {
                atomic_fetch_add(&s->refusals, 1u);
                continue;
            }
            fill(p, size);
            held[k] = p;
        }
    }
    for (size_t k = 0; k < HELD; k++)
        if (held[k] != NULL)
            drop(s, held[k]);
    return NULL;
}

static void hammer_heap(const char *algorithm, size_t max_size)
{
    const size_t bytes = 512 * KiB;
    unsigned char *mem = malloc(bytes);
    REQUIRE(mem != NULL);
    static hammer s;
    memset(&s, 0, sizeof s);
    s.h = rtm_locked_create(algorithm, mem, bytes);
    REQUIRE(s.h != NULL);
    s.ops = 30000;
    s.max_size = max_size;
    rtm_stats st0 = rtm_heap_stats(s.h);
    hammer_thread t[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        t[i].shared = &s;
        t[i].id = i;
        REQUIRE(pthread_create(&t[i].tid, NULL, hammer_main, &t[i]) == 0);
    }
    for (unsigned i = 0; i < THREADS; i++)
        REQUIRE(pthread_join(t[i].tid, NULL) == 0);
    size_t parked = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        uintptr_t p = atomic_load(&s.slots[i]);
        if (p != 0) {
            parked++;
            CHECK(rtm_usable_size(s.h, (void *)p) > 0);
        }
    }
    rtm_stats mid = rtm_heap_stats(s.h);
    CHECK_MSG(mid.live_blocks == parked, "%s: %zu live blocks, %zu parked", algorithm,
              mid.live_blocks, parked);
    for (size_t i = 0; i < SLOTS; i++) {
        uintptr_t p = atomic_load(&s.slots[i]);
        if (p != 0)
            drop(&s, (void *)p);
    }
    rtm_stats st = rtm_heap_stats(s.h);
    CHECK(atomic_load(&s.bad_patterns) == 0);
    CHECK(st.live_blocks == 0 && st.used_bytes == 0);
    CHECK_MSG(st.free_bytes == st0.free_bytes, "%s: free %zu, was %zu", algorithm, st.free_bytes,
              st0.free_bytes);
    CHECK_MSG(st.failed_allocs == atomic_load(&s.refusals), "%s: %zu failures counted, %zu seen",
              algorithm, st.failed_allocs, atomic_load(&s.refusals));
    CHECK(st.peak_used_bytes > 0 && st.peak_used_bytes <= st.arena_bytes);
    CHECK(rtm_heap_check(s.h) == 0);
    rtm_heap_destroy(s.h);
    free(mem);
}

static void test_threads_tlsf(void) { hammer_heap("tlsf", 3000); }
static void test_threads_pool(void) { hammer_heap("pool:64", 56); }
static void test_threads_buddy(void) { hammer_heap("buddy:256", 2000); }

/* A pool over the lock's guard (which the inner heap does not know) is
 * refused; one that ends right where the guard starts is fine. */
static void test_add_pool_over_guard(void)
{
    const size_t before = 64 * KiB, bytes = 256 * KiB;
    unsigned char *mem = malloc(before + bytes);
    REQUIRE(mem != NULL);
    rtm_heap *h = rtm_locked_create("tlsf", mem + before, bytes);
    REQUIRE(h != NULL);
    unsigned char *guard = mem + before;
    struct {
        void *at;
        size_t bytes;
    } overlapping[] = {{mem, before + 8}, {guard, 4 * KiB}, {guard + 8, 64}, {mem + 8, before}};
    for (size_t i = 0; i < sizeof overlapping / sizeof overlapping[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_heap_add_pool(h, overlapping[i].at, overlapping[i].bytes) == -1,
                  "pool %zu over the guard accepted", i);
        CHECK_ERRNO(EINVAL);
        CHECK(rtm_heap_check(h) == 0);
    }
    CHECK(rtm_heap_stats(h).arena_bytes == bytes);
    CHECK(rtm_heap_add_pool(h, mem, before) == 0);
    CHECK(rtm_heap_stats(h).arena_bytes == bytes + before);
    void *p = rtm_alloc(h, 1024);
    CHECK(p != NULL);
    rtm_free(h, p);
    CHECK(rtm_heap_check(h) == 0);
    rtm_heap_destroy(h);
    free(mem);
}

int main(void)
{
    RUN_TEST(test_create_bad_inputs);
    RUN_TEST(test_every_call_every_algorithm);
    RUN_TEST(test_add_pool_over_guard);
    RUN_TEST(test_threads_tlsf);
    RUN_TEST(test_threads_pool);
    RUN_TEST(test_threads_buddy);
    return check_summary();
}
