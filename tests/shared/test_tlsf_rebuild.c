// SPDX-License-Identifier: MIT
/*
 * tests/shared/test_tlsf_rebuild.c -- white-box tests of the TLSF crash
 * recovery (src/heaps/tlsf_rebuild.h), on private heaps in this process:
 *  - rebuild of a consistent heap changes nothing a walk or the counters
 *    can see, and is idempotent;
 *  - rebuild repairs everything derived: lists, heads, bitmaps, counters,
 *    PREV_FREE bits, footers, links (scrambled on purpose), and merges
 *    adjacent free blocks;
 *  - a broken walk (span out of range) is refused, not "repaired";
 *  - the undo sets are complete: for thousands of random states and every
 *    operation (alloc, aligned alloc, free with every merge, realloc in
 *    place and moving), applying the undo set after the operation and
 *    rebuilding gives back exactly the block layout before it. This is the
 *    end point of every crash; the ptrace test (test_shared_crash.c) covers
 *    every instruction in between.
 * Seeds: RTMEM_SEED overrides; printed on failure.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/rng.h"
#include "heaps/tlsf_layout.h"
#include "heaps/tlsf_rebuild.h"

#define HEAP_BYTES (64u * 1024u)
#define MAX_BLOCKS 2048u

typedef struct block_rec {
    uintptr_t ptr;
    size_t usable;
    int used;
} block_rec;

typedef struct layout {
    size_t n;
    block_rec b[MAX_BLOCKS];
} layout;

static void record_block(void *ptr, size_t usable, int used, void *arg)
{
    layout *l = arg;
    if (l->n < MAX_BLOCKS)
        l->b[l->n++] = (block_rec){(uintptr_t)ptr, usable, used};
}

static void take_layout(const rtm_tlsf *t, layout *l)
{
    l->n = 0;
    rtm_tlsf_walk(t, record_block, l);
}

static int layouts_equal(const layout *a, const layout *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->b[i].ptr != b->b[i].ptr || a->b[i].usable != b->b[i].usable ||
            a->b[i].used != b->b[i].used)
            return 0;
    return 1;
}

static uint64_t seed_base(void)
{
    const char *s = getenv("RTMEM_SEED");
    return s != NULL ? strtoull(s, NULL, 0) : 20240607u;
}

/* A heap in a random state: live blocks in `live` (count in *n). */
static rtm_tlsf *random_heap(void *mem, rng *r, void **live, size_t *n)
{
    rtm_tlsf *t = rtm_tlsf_create(mem, HEAP_BYTES);
    REQUIRE(t != NULL);
    *n = 0;
    size_t steps = 20u + rng_below(r, 300u);
    for (size_t i = 0; i < steps; i++) {
        if (*n > 0 && rng_below(r, 3u) == 0) {
            size_t k = rng_below(r, *n);
            REQUIRE(rtm_tlsf_free(t, live[k]) == 0);
            live[k] = live[--*n];
            continue;
        }
        size_t size = 1u + rng_below(r, rng_below(r, 4u) == 0 ? 3000u : 200u);
        void *p = rng_below(r, 5u) == 0
                      ? rtm_tlsf_aligned_alloc(t, (size_t)16 << rng_below(r, 5u), size)
                      : rtm_tlsf_alloc(t, size);
        if (p != NULL && *n < MAX_BLOCKS)
            live[(*n)++] = p;
    }
    REQUIRE(rtm_tlsf_check(t) == 0);
    return t;
}

static int stats_same(rtm_stats a, rtm_stats b)
{
    return a.used_bytes == b.used_bytes && a.free_bytes == b.free_bytes &&
           a.live_blocks == b.live_blocks && a.arena_bytes == b.arena_bytes &&
           a.peak_used_bytes == b.peak_used_bytes && a.failed_allocs == b.failed_allocs;
}

static void test_rebuild_consistent_is_noop(void)
{
    void *mem = malloc(HEAP_BYTES);
    void *live[MAX_BLOCKS];
    static layout before, after;
    rng r = {seed_base()};
    for (int round = 0; round < 200; round++) {
        size_t n;
        rtm_tlsf *t = random_heap(mem, &r, live, &n);
        rtm_stats st = rtm_tlsf_stats(t);
        take_layout(t, &before);
        CHECK(rtm_tlsf_rebuild(t) == 0);
        CHECK(rtm_tlsf_rebuild(t) == 0); /* idempotent */
        take_layout(t, &after);
        CHECK(layouts_equal(&before, &after));
        CHECK(stats_same(st, rtm_tlsf_stats(t)));
        CHECK(rtm_tlsf_stats(t).largest_free >= st.largest_free);
        CHECK(rtm_tlsf_check(t) == 0);
    }
    free(mem);
}

/* Scrambles everything rebuild must recompute. */
static void scramble_derived(rtm_tlsf *t, rng *r)
{
    for (unsigned i = 0; i < LIST_COUNT; i++)
        t->heads[i] = (ptrdiff_t)rng_below(r, 1000u) * 8;
    t->list_bits[0] = rng_next(r);
    t->list_bits[1] = rng_next(r);
    t->used_bytes = rng_below(r, 100000u);
    t->live_blocks = rng_below(r, 100u);
    t->free_blocks = rng_below(r, 100u);
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next) {
        tlsf_pool *pool = pool_at(t, off);
        char *end = at(t, pool->end);
        for (char *p = pool_first(pool); p < end; p += span_of(p)) {
            uint32_t h = hdr(p) ^ (rng_below(r, 2u) ? BLOCK_PREV_FREE : 0u);
            set_hdr(p, h);
            if ((h & BLOCK_FREE) != 0) {
                *link_next(p) = (ptrdiff_t)rng_next(r);
                *link_pprev(p) = (ptrdiff_t)rng_next(r);
                *(uint32_t *)(void *)(p + span_of(p) - 8u) = (uint32_t)rng_next(r); /* footer */
            }
        }
        set_hdr(end, (uint32_t)rng_below(r, 2u) * BLOCK_PREV_FREE);
    }
}

static void test_rebuild_repairs_derived(void)
{
    void *mem = malloc(HEAP_BYTES);
    void *live[MAX_BLOCKS];
    static layout before, after;
    rng r = {seed_base() + 1u};
    recorder_install();
    for (int round = 0; round < 200; round++) {
        size_t n;
        rtm_tlsf *t = random_heap(mem, &r, live, &n);
        rtm_stats st = rtm_tlsf_stats(t);
        take_layout(t, &before);
        scramble_derived(t, &r);
        CHECK(rtm_tlsf_rebuild(t) == 0);
        take_layout(t, &after);
        CHECK(layouts_equal(&before, &after));
        CHECK(stats_same(st, rtm_tlsf_stats(t)));
        CHECK(rtm_tlsf_check(t) == 0);
        /* The heap works on: free everything, one block again. */
        for (size_t i = 0; i < n; i++)
            CHECK(rtm_tlsf_free(t, live[i]) == 0);
        CHECK(rtm_tlsf_stats(t).live_blocks == 0);
        CHECK(rtm_tlsf_check(t) == 0);
    }
    CHECK(recorder()->calls == 0);
    rtm_set_error_handler(NULL, NULL);
    free(mem);
}

/* Two adjacent free blocks (a used block's FREE bit set, as free() does to
 * a block merged into its predecessor) become one. */
static void test_rebuild_merges(void)
{
    static unsigned char mem[HEAP_BYTES];
    rtm_tlsf *t = rtm_tlsf_create(mem, sizeof mem);
    char *a = rtm_tlsf_alloc(t, 100), *b = rtm_tlsf_alloc(t, 200), *c = rtm_tlsf_alloc(t, 300);
    REQUIRE(a && b && c);
    size_t free_before = rtm_tlsf_stats(t).free_bytes;
    set_hdr(b, hdr(b) | BLOCK_FREE); /* b free, next to the free tail? no: c is used */
    set_hdr(a, hdr(a) | BLOCK_FREE); /* a and b: adjacent free blocks */
    CHECK(rtm_tlsf_rebuild(t) == 0);
    CHECK(rtm_tlsf_check(t) == 0);
    rtm_stats st = rtm_tlsf_stats(t);
    CHECK(st.live_blocks == 1);
    CHECK(st.free_bytes > free_before + 300u);
    CHECK(rtm_tlsf_alloc(t, 300) == a); /* the merged block, from the start */
}

static void test_rebuild_refuses_broken_walk(void)
{
    static unsigned char mem[HEAP_BYTES];
    rtm_tlsf *t = rtm_tlsf_create(mem, sizeof mem);
    char *a = rtm_tlsf_alloc(t, 100);
    REQUIRE(a != NULL);
    uint32_t saved = hdr(a);
    set_hdr(a, 0x7ffffff0u); /* span past the pool */
    errno = 0;
    CHECK(rtm_tlsf_rebuild(t) == -1);
    CHECK_ERRNO(EFAULT);
    set_hdr(a, 4u); /* span below the minimum */
    CHECK(rtm_tlsf_rebuild(t) == -1);
    set_hdr(a, saved);
    CHECK(rtm_tlsf_rebuild(t) == 0);
    CHECK(rtm_tlsf_check(t) == 0);
    errno = 0;
    CHECK(rtm_tlsf_rebuild(NULL) == -1);
    CHECK_ERRNO(EINVAL);
}

/* --- undo sets ----------------------------------------------------------- */

enum op_kind { OP_ALLOC, OP_ALIGNED, OP_FREE, OP_REALLOC, OP_COUNT };
static const char *const op_names[] = {"alloc", "aligned_alloc", "free", "realloc"};

/* Runs one random operation after saving its undo set; then restores and
 * rebuilds and compares the layout with the one before. Returns 1 when the
 * operation changed the layout (so the case tested something). */
static int undo_round(rtm_tlsf *t, rng *r, void **live, size_t n, enum op_kind op, uint64_t seed)
{
    static layout before, mid, after;
    rtm_tlsf_undo u;
    u.count = 0;
    take_layout(t, &before);
    size_t size = 1u + rng_below(r, rng_below(r, 3u) == 0 ? 4000u : 300u);
    size_t align = (size_t)16 << rng_below(r, 6u);
    void *victim = n > 0 ? live[rng_below(r, n)] : NULL;
    if ((op == OP_FREE || op == OP_REALLOC) && victim == NULL)
        return 0;
    switch (op) {
    case OP_ALLOC:
        rtm_tlsf_undo_alloc(t, 8, size, &u);
        (void)rtm_tlsf_alloc(t, size);
        break;
    case OP_ALIGNED:
        rtm_tlsf_undo_alloc(t, align, size, &u);
        (void)rtm_tlsf_aligned_alloc(t, align, size);
        break;
    case OP_FREE:
        rtm_tlsf_undo_free(t, victim, &u);
        REQUIRE(rtm_tlsf_free(t, victim) == 0);
        break;
    case OP_REALLOC:
        rtm_tlsf_undo_realloc(t, victim, size, &u);
        (void)rtm_tlsf_realloc(t, victim, size);
        break;
    case OP_COUNT:
        break;
    }
    CHECK(u.count <= RTM_TLSF_UNDO_SLOTS);
    take_layout(t, &mid);
    rtm_tlsf_undo_apply(t, &u);
    CHECK(rtm_tlsf_rebuild(t) == 0);
    take_layout(t, &after);
    int same = layouts_equal(&before, &after);
    CHECK_MSG(same, "seed %llu: %s (size %zu, align %zu): undo set of %u words misses a change",
              (unsigned long long)seed, op_names[op], size, align, (unsigned)u.count);
    CHECK(rtm_tlsf_check(t) == 0);
    return !layouts_equal(&before, &mid);
}

static void test_undo_sets_complete(void)
{
    void *mem = malloc(HEAP_BYTES);
    void *live[MAX_BLOCKS];
    unsigned changed[OP_COUNT] = {0};
    uint64_t base = seed_base() + 2u;
    for (uint64_t round = 0; round < 4000; round++) {
        rng r = {base + round};
        size_t n;
        rtm_tlsf *t = random_heap(mem, &r, live, &n);
        enum op_kind op = (enum op_kind)(round % OP_COUNT);
        changed[op] += (unsigned)undo_round(t, &r, live, n, op, base + round);
    }
    for (int op = 0; op < OP_COUNT; op++)
        CHECK_MSG(changed[op] > 500, "%s changed the layout only %u times", op_names[op],
                  changed[op]);
    free(mem);
}

/* Bad pointers give smaller undo sets, never a fault. */
static void test_undo_bad_pointers(void)
{
    static unsigned char mem[HEAP_BYTES];
    rtm_tlsf *t = rtm_tlsf_create(mem, sizeof mem);
    rtm_tlsf_undo u;
    u.count = 0;
    int local;
    rtm_tlsf_undo_free(t, &local, &u);
    rtm_tlsf_undo_free(t, (void *)((uintptr_t)mem + sizeof mem + 4096u), &u);
    rtm_tlsf_undo_free(t, (char *)t + 3, &u);
    rtm_tlsf_undo_realloc(t, &local, 10, &u);
    CHECK(u.count == 0);
    CHECK(rtm_tlsf_in_pool(t, &local) == 0);
    CHECK(rtm_tlsf_in_pool(NULL, mem) == 0);
    u.count = 1;
    u.slot[0].off = -64;
    u.slot[0].word = 0xdeadbeefu;
    rtm_tlsf_undo_apply(t, &u); /* outside the pools: skipped */
    CHECK(rtm_tlsf_check(t) == 0);
}

int main(void)
{
    RUN_TEST(test_rebuild_consistent_is_noop);
    RUN_TEST(test_rebuild_repairs_derived);
    RUN_TEST(test_rebuild_merges);
    RUN_TEST(test_rebuild_refuses_broken_walk);
    RUN_TEST(test_undo_sets_complete);
    RUN_TEST(test_undo_bad_pointers);
    return check_summary();
}
