// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_lines.c -- the cache-line rule of rtmem's malloc
 * (docs/MALLOC.md, "False sharing"): blocks that two threads get from the
 * central lists' spans never share a 64-byte line. The scenario that broke
 * it: thread A holds blocks and frees every other one; the freed ones go
 * back to their spans (trim flushes A's cache and the transfer caches);
 * thread B then allocates the same class. Before the rule, B received the
 * holes between A's live blocks, and both threads wrote the same lines.
 * Checked for every class below 64 bytes and a few above whose sizes are
 * not multiples of 64 (48, 80, 96, 112, 144, 160, 208, 288).
 *
 * And Hoard's cache-scratch (tcache.c, "False sharing"): the main thread
 * allocates neighbouring blocks and hands one to a worker, which frees it
 * and then allocates and frees in a loop. Before the span owner tags the
 * worker got the handed block straight back from its own cache, on a line
 * the main thread's live blocks share.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

enum { N = 3000 };

typedef struct job {
    size_t size;
    void *blocks[N];
} job;

static uintptr_t line_of(const void *p) { return (uintptr_t)p / 64u; }

/* Thread A: N blocks, every other one freed and pushed back to the spans. */
static void *holder(void *arg)
{
    job *j = arg;
    for (int i = 0; i < N; i++)
        j->blocks[i] = rtm_malloc(j->size);
    for (int i = 1; i < N; i += 2) {
        rtm_malloc_free(j->blocks[i]);
        j->blocks[i] = NULL;
    }
    (void)rtm_malloc_trim(); /* own cache and transfer caches to the spans */
    return NULL;
}

/* Thread B: N blocks of the same size, from a fresh cache. */
static void *taker(void *arg)
{
    job *j = arg;
    for (int i = 0; i < N; i++)
        j->blocks[i] = rtm_malloc(j->size);
    return NULL;
}

static int cmp_uptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Lines where a block of a and a block of b (each [p, p + size)) meet. */
static size_t shared_lines(const job *a, const job *b)
{
    static uintptr_t lines[4 * N];
    size_t n = 0, shared = 0;
    for (int i = 0; i < N; i++)
        if (a->blocks[i])
            for (uintptr_t l = line_of(a->blocks[i]);
                 l <= line_of((const char *)a->blocks[i] + a->size - 1); l++)
                lines[n++] = l;
    qsort(lines, n, sizeof lines[0], cmp_uptr);
    for (int i = 0; i < N; i++) {
        if (b->blocks[i] == NULL)
            continue;
        for (uintptr_t l = line_of(b->blocks[i]);
             l <= line_of((const char *)b->blocks[i] + b->size - 1); l++)
            shared += bsearch(&l, lines, n, sizeof lines[0], cmp_uptr) != NULL;
    }
    return shared;
}

static void run_size(size_t size)
{
    static job a, b;
    pthread_t t;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.size = b.size = size;
    REQUIRE(pthread_create(&t, NULL, holder, &a) == 0);
    pthread_join(t, NULL);
    REQUIRE(pthread_create(&t, NULL, taker, &b) == 0);
    pthread_join(t, NULL);
    size_t shared = shared_lines(&a, &b);
    CHECK_MSG(shared == 0, "size %zu: %zu lines shared by two threads' blocks", size, shared);
    for (int i = 0; i < N; i++) {
        rtm_malloc_free(a.blocks[i]);
        rtm_malloc_free(b.blocks[i]);
    }
    (void)rtm_malloc_trim();
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void test_two_threads_never_share_a_line(void)
{
    static const size_t sizes[] = {8, 16, 24, 32, 48, 64, 80, 96, 112, 144, 160, 208, 288};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        run_size(sizes[i]);
}

/* A thread's own blocks still come back to it densely: N blocks of 16
 * bytes from a fresh span fill whole lines (no padding between them). */
static void test_dense_within_a_thread(void)
{
    static job a;
    a.size = 16;
    taker(&a);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < N; i++) {
        uintptr_t p = (uintptr_t)a.blocks[i];
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
    }
    CHECK_MSG(hi - lo < (uintptr_t)N * 16u * 2u, "%d blocks of 16 spread over %zu bytes", N,
              (size_t)(hi - lo));
    for (int i = 0; i < N; i++)
        rtm_malloc_free(a.blocks[i]);
}

/* cache-scratch: a worker frees the main thread's block, then allocates. */
typedef struct scratch {
    size_t size;
    void *handed;
    const job *held; /* the main thread's live blocks */
    size_t reused, shared;
} scratch;

static void *scratcher(void *arg)
{
    scratch *s = arg;
    rtm_malloc_free(s->handed);
    for (int r = 0; r < 1000; r++) {
        unsigned char *p = rtm_malloc(s->size);
        REQUIRE(p != NULL);
        memset(p, r, s->size);
        s->reused += p == s->handed;
        job mine = {.size = s->size, .blocks = {p}};
        s->shared += shared_lines(s->held, &mine);
        rtm_malloc_free(p);
    }
    return NULL;
}

static void test_scratch_no_line_with_the_main_thread(void)
{
    static const size_t sizes[] = {8, 16, 24, 48, 80, 112};
    static job held;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(&held, 0, sizeof held);
        held.size = sizes[i];
        for (int k = 0; k < 8; k++)
            held.blocks[k] = rtm_malloc(sizes[i]);
        REQUIRE(held.blocks[0] != NULL);
        scratch s = {.size = sizes[i], .handed = held.blocks[0], .held = &held};
        held.blocks[0] = NULL; /* the worker's now */
        pthread_t t;
        REQUIRE(pthread_create(&t, NULL, scratcher, &s) == 0);
        pthread_join(t, NULL);
        CHECK_MSG(s.reused == 0, "size %zu: the handed block came back %zu times", sizes[i],
                  s.reused);
        CHECK_MSG(s.shared == 0, "size %zu: %zu lines shared with the main thread's blocks",
                  sizes[i], s.shared);
        for (int k = 1; k < 8; k++)
            rtm_malloc_free(held.blocks[k]);
    }
    (void)rtm_malloc_trim();
    CHECK_EQ(rtm_malloc_check(), 0);
}

int main(void)
{
    RUN_TEST(test_two_threads_never_share_a_line);
    RUN_TEST(test_scratch_no_line_with_the_main_thread);
    RUN_TEST(test_dense_within_a_thread);
    return check_summary();
}
