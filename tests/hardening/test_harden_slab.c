// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_slab.c -- issue 12, case 1: a slab heap whose
 * objects are all freed must serve what the fresh heap served. Before the
 * fix every class kept one empty slab cached, and those pages stayed
 * stranded in the inner buddy: slab:4096 on 64 KiB, after 16 KiB, 8 KiB,
 * 4 KiB and one object of each class 8..512 were freed, refused 32 KiB.
 *
 *   scenario  the case above, through the generic API
 *   random    random alloc / realloc / free sequences over many page and
 *             region sizes, then everything freed in random order: the
 *             stats (free_bytes, largest_free) equal the fresh heap's and
 *             the largest request the fresh heap granted is granted again.
 *             Seeds are printed on failure; RTMEM_SEED replays one.
 *
 * Usage: test_harden_slab [scenario|random|all]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "rtmem.h"

/* The fields that must come back once nothing is live. */
static void check_like_fresh(const rtm_stats *now, const rtm_stats *fresh, unsigned long long seed)
{
    CHECK_MSG(now->used_bytes == 0 && now->live_blocks == 0, "seed %llu: used %zu, live %zu", seed,
              now->used_bytes, now->live_blocks);
    CHECK_MSG(now->free_bytes == fresh->free_bytes, "seed %llu: free_bytes %zu, fresh %zu", seed,
              now->free_bytes, fresh->free_bytes);
    CHECK_MSG(now->largest_free == fresh->largest_free, "seed %llu: largest_free %zu, fresh %zu",
              seed, now->largest_free, fresh->largest_free);
}

static void test_scenario(void)
{
    test_region r = region_malloc(64 * 1024, 0);
    rtm_heap *h = rtm_heap_create("slab:4096", r.mem, r.bytes);
    REQUIRE(h != NULL);
    rtm_stats fresh = rtm_heap_stats(h);
    REQUIRE(fresh.largest_free >= 32768); /* the fresh heap grants 32 KiB */

    void *p[16];
    size_t n = 0;
    static const size_t big[] = {16384, 8192, 4096};
    for (size_t i = 0; i < 3; i++)
        REQUIRE((p[n++] = rtm_alloc(h, big[i])) != NULL);
    for (size_t c = 8; c <= 512; c <<= 1)
        REQUIRE((p[n++] = rtm_alloc(h, c)) != NULL);
    CHECK(rtm_heap_check(h) == 0);
    for (size_t i = 0; i < n; i++)
        rtm_free(h, p[i]);
    CHECK(rtm_heap_check(h) == 0);

    rtm_stats st = rtm_heap_stats(h);
    check_like_fresh(&st, &fresh, 0);
    /* The refusal agrees with largest_free and with the fresh heap. */
    void *q = rtm_alloc(h, 32768);
    CHECK_MSG(q != NULL, "32 KiB refused after freeing everything (largest_free %zu)",
              st.largest_free);
    rtm_free(h, q);
    void *whole = rtm_alloc(h, fresh.largest_free);
    CHECK(whole != NULL);
    rtm_free(h, whole);
    errno = 0;
    CHECK(rtm_alloc(h, fresh.largest_free + 1) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK(rtm_heap_check(h) == 0);
    region_free(&r);
}

/* --- randomized -------------------------------------------------------- */

#define LIVE_MAX 512

typedef struct live_set {
    void *p[LIVE_MAX];
    size_t n;
} live_set;

/* A request: mostly small objects of every class, sometimes whole pages. */
static size_t draw_size(rng *g, size_t page)
{
    if (rng_below(g, 8) == 0)
        return 1 + rng_below(g, 4 * page);
    return rng_below(g, page / 8 + 1);
}

static void drop(live_set *l, size_t i) { l->p[i] = l->p[--l->n]; }

/* Whether the heap grants n bytes now (the block is given back at once). */
static int grants(rtm_heap *h, size_t n)
{
    void *p = rtm_alloc(h, n);
    rtm_free(h, p);
    return p != NULL;
}

/* One random life of a heap: a random sequence, then every block freed in
 * random order; the heap must then look and behave like the fresh one. */
static void random_life(unsigned long long seed, size_t page, size_t bytes, size_t misalign,
                        unsigned steps)
{
    rng g = {seed};
    test_region r = region_malloc(bytes, misalign);
    char name[32];
    snprintf(name, sizeof name, "slab:%zu", page);
    rtm_heap *h = rtm_heap_create(name, r.mem, r.bytes);
    REQUIRE(h != NULL);
    rtm_stats fresh = rtm_heap_stats(h);
    int fresh_grants_more = grants(h, fresh.largest_free + 1);
    live_set l = {.n = 0};
    for (unsigned s = 0; s < steps; s++) {
        unsigned op = (unsigned)rng_below(&g, 10);
        if (l.n > 0 && (op < 4 || l.n == LIVE_MAX)) {
            size_t i = rng_below(&g, l.n);
            rtm_free(h, l.p[i]);
            drop(&l, i);
        } else if (l.n > 0 && op == 4) {
            size_t i = rng_below(&g, l.n);
            void *q = rtm_realloc(h, l.p[i], 1 + draw_size(&g, page));
            if (q != NULL)
                l.p[i] = q;
        } else {
            size_t n = draw_size(&g, page);
            void *q =
                op == 5 ? rtm_aligned_alloc(h, (size_t)8 << rng_below(&g, 12), n) : rtm_alloc(h, n);
            if (q != NULL)
                l.p[l.n++] = q;
        }
    }
    if (rtm_heap_check(h) != 0)
        CHECK_MSG(0, "seed %llu: check failed before the final frees", seed);
    while (l.n > 0) {
        size_t i = rng_below(&g, l.n);
        rtm_free(h, l.p[i]);
        drop(&l, i);
    }
    CHECK_MSG(rtm_heap_check(h) == 0, "seed %llu: check failed after freeing everything", seed);
    rtm_stats st = rtm_heap_stats(h);
    check_like_fresh(&st, &fresh, seed);
    CHECK_MSG(grants(h, fresh.largest_free), "seed %llu: %zu (the fresh heap's largest) refused",
              seed, fresh.largest_free);
    CHECK_MSG(grants(h, fresh.largest_free + 1) == fresh_grants_more,
              "seed %llu: largest + 1 granted by one of the fresh and the emptied heap only", seed);
    CHECK_MSG(rtm_heap_check(h) == 0, "seed %llu: check failed after the probes", seed);
    region_free(&r);
}

static unsigned long long env_seed(void)
{
    const char *s = getenv("RTMEM_SEED");
    return s != NULL ? strtoull(s, NULL, 10) : 0;
}

static void test_random(void)
{
    static const size_t pages[] = {256, 512, 1024, 4096, 8192};
    unsigned long long only = env_seed();
    unsigned long long first = only != 0 ? only : 12001, last = only != 0 ? only : 13000;
    for (unsigned long long seed = first; seed <= last; seed++) {
        rng g = {seed * 7919u};
        size_t page = pages[rng_below(&g, sizeof pages / sizeof pages[0])];
        char name[32];
        snprintf(name, sizeof name, "slab:%zu", page);
        size_t bytes = rtm_min_region(name) + page * rng_below(&g, 64) + rng_below(&g, page);
        size_t misalign = rng_below(&g, 64);
        unsigned long before = *check_failure_count();
        random_life(seed, page, bytes, misalign, 2000);
        if (*check_failure_count() != before) {
            fprintf(stderr,
                    "replay: RTMEM_SEED=%llu build/tests/test_harden_slab random "
                    "(page %zu, bytes %zu, misalign %zu)\n",
                    seed, page, bytes, misalign);
            break;
        }
    }
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int all = strcmp(which, "all") == 0;
    if (all || strcmp(which, "scenario") == 0)
        RUN_TEST(test_scenario);
    if (all || strcmp(which, "random") == 0)
        RUN_TEST(test_random);
    return check_summary();
}
