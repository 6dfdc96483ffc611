// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_tlsf_grow.c -- TLSF growth on demand (rtm_heap_set_grow,
 * rtm_tlsf_set_grow): what the heap asks for, where the memory goes, what
 * it refuses, and a model run of the randomized rig over a growing heap.
 *
 * Every grow function here hands out pieces of one 8-aligned arena owned by
 * the test, so where a piece lands is chosen: right after the heap's last
 * pool (it must extend that pool), after a gap (a new pool), at an odd
 * address (a new pool, start rounded up), over the heap itself (refused),
 * or nothing at all (NULL, or fewer bytes than asked). The arena is
 * malloc'd, so under ASan any byte the heap writes outside what it was
 * given is caught; the test also checks bytes it was refused stay as they
 * were.
 *
 * The model run (rig.h) drops the two promises growth changes on purpose:
 * an allocation above largest_free may now succeed, and freeing everything
 * leaves more free memory than at the start. Every other check of the rig
 * stays, and after the run the test checks the heap's pools against what
 * the grow function handed out.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "../model/rig.h"
#include "../model/rig_rtmem.h"
#include "heaps/tlsf_rebuild.h" /* rtm_tlsf_rebuild: the crash recovery's, internal */
#include "rtmem.h"

#define KiB      ((size_t)1024)
#define HDR      ((size_t)RTM_TLSF_HEADER_BYTES)
#define MIN_SPAN (RTM_TLSF_MIN_BLOCK + HDR)
/* A new pool's bookkeeping before its first payload (its record and the
 * first header: the pool overhead but the sentinel's header): 24 bytes
 * with 8-byte pointers, 16 with 4-byte ones. */
#define POOL_HEAD (rtm_tlsf_pool_overhead() - HDR)
/* What growth asks for beyond the block's span: a new pool's bookkeeping
 * and 8 bytes of alignment slack. */
#define GROW_SLOP (POOL_HEAD + (size_t)8)

static size_t span_for(size_t n)
{
    size_t s = (n + HDR + 7u) & ~(size_t)7u;
    return s < MIN_SPAN ? MIN_SPAN : s;
}

/* --- the test's grow functions -------------------------------------------------- */

enum grow_mode {
    GROW_NEXT,      /* right after the previous piece (contiguous)       */
    GROW_GAP,       /* 64 bytes after the previous piece (a new pool)     */
    GROW_ODD,       /* a gap and a start 3 bytes past 8-alignment         */
    GROW_NULL,      /* NULL                                              */
    GROW_SHORT,     /* a piece, but got = min_bytes - 1                   */
    GROW_OVERLAP,   /* memory inside the heap's first region             */
    GROW_RANDOM,    /* one of NEXT, GAP, ODD per call (model run)         */
    GROW_MODE_COUNT /* */
};

typedef struct grower {
    unsigned char *arena; /* 8-aligned; the heap's first region is its start */
    size_t bytes;
    size_t used;  /* arena bytes handed out (or skipped) so far          */
    size_t chunk; /* at least this much per call (0: exactly min_bytes) */
    enum grow_mode mode;
    rng r;        /* GROW_RANDOM                                          */
    size_t calls; /* calls so far                                         */
    size_t last_min;
    size_t handed; /* bytes handed out in accepted-looking pieces          */
    size_t pieces;
    size_t contiguous; /* pieces that started exactly where a pool ended */
    int end_exact;     /* the last piece (or the first region) ends where its pool does */
} grower;

static void *grow_fn(void *ctx, size_t min_bytes, size_t *got)
{
    grower *g = ctx;
    g->calls++;
    g->last_min = min_bytes;
    enum grow_mode mode = g->mode;
    if (mode == GROW_RANDOM)
        mode = (enum grow_mode)rng_below(&g->r, 3);
    if (mode == GROW_NULL)
        return NULL;
    if (mode == GROW_OVERLAP) {
        *got = min_bytes;
        return g->arena + 64;
    }
    size_t skip = mode == GROW_GAP ? 64u : mode == GROW_ODD ? 67u : 0u;
    size_t n = min_bytes > g->chunk ? min_bytes : g->chunk;
    if (mode == GROW_RANDOM || g->mode == GROW_RANDOM)
        n += rng_below(&g->r, 4u) * 1000u; /* sizes that are not multiples of 8 too */
    if (g->used + skip + n > g->bytes)
        return NULL; /* the arena is spent: the heap must take NULL well */
    unsigned char *mem = g->arena + g->used + skip;
    g->used = (g->used + skip + n + 7u) & ~(size_t)7u; /* the next piece starts 8-aligned */
    if (mode == GROW_SHORT) {
        *got = min_bytes - 1u;
        return mem;
    }
    *got = n;
    g->handed += n;
    g->pieces++;
    g->contiguous += skip == 0 && g->end_exact;
    /* An odd start loses 5 bytes to alignment, so its pool ends 3 bytes
     * before the piece (sizes here are multiples of 8). */
    g->end_exact = mode != GROW_ODD;
    return mem;
}

/* The arena: bytes after a first region of `first` bytes, 8-aligned. */
static grower grower_make(size_t first, size_t bytes, enum grow_mode mode, size_t chunk)
{
    grower g;
    memset(&g, 0, sizeof g);
    g.arena = malloc(bytes); /* malloc's alignment is at least 8 */
    REQUIRE(g.arena != NULL && ((uintptr_t)g.arena & 7u) == 0);
    memset(g.arena, 0xA5, bytes);
    g.bytes = bytes;
    g.used = first;
    g.mode = mode;
    g.chunk = chunk;
    g.r.s = 0x5EEDull;
    g.end_exact = 1; /* the heap's first region: an 8-aligned multiple of 8 */
    return g;
}

/* A TLSF heap over the first `first` bytes of g's arena, growing through g. */
static rtm_heap *grower_heap(grower *g, size_t first)
{
    rtm_heap *h = rtm_heap_create("tlsf", g->arena, first);
    REQUIRE(h != NULL);
    REQUIRE(rtm_heap_set_grow(h, grow_fn, g) == 0);
    return h;
}

/* --- walking ------------------------------------------------------------------ */

typedef struct walk_sum {
    size_t blocks, free_blocks, used_blocks, free_bytes;
    void *last_free; /* the highest-addressed free block */
} walk_sum;

static void walk_visit(void *ptr, size_t usable, int used, void *arg)
{
    walk_sum *w = arg;
    w->blocks++;
    if (used) {
        w->used_blocks++;
        return;
    }
    w->free_blocks++;
    w->free_bytes += usable;
    if (w->last_free == NULL || (uintptr_t)ptr > (uintptr_t)w->last_free)
        w->last_free = ptr;
}

static walk_sum walk_of(rtm_heap *h)
{
    walk_sum w;
    memset(&w, 0, sizeof w);
    REQUIRE(rtm_heap_walk(h, walk_visit, &w) == 0);
    return w;
}

/* Everything but failed_allocs, which a refusal raises. */
static int same_but_failures(rtm_stats a, rtm_stats b)
{
    return a.arena_bytes == b.arena_bytes && a.used_bytes == b.used_bytes &&
           a.free_bytes == b.free_bytes && a.live_blocks == b.live_blocks &&
           a.peak_used_bytes == b.peak_used_bytes && a.largest_free == b.largest_free;
}

/* Fills the heap with blocks until nothing fits, growth off. Returns how
 * many blocks it took (kept in out[]). */
static size_t fill_up(rtm_heap *h, void **out, size_t max)
{
    size_t n = 0;
    for (rtm_stats st = rtm_heap_stats(h); st.largest_free > 0 && n < max; st = rtm_heap_stats(h)) {
        out[n] = rtm_alloc(h, st.largest_free);
        REQUIRE(out[n] != NULL);
        n++;
    }
    return n;
}

/* --- where the memory goes ---------------------------------------------------- */

/* Memory that starts at the end of the heap's only pool, whose last block
 * is free, becomes part of that block: largest_free grows by exactly the
 * bytes added, and the pool stays one block. */
static void test_contiguous_merges(void)
{
    const size_t first = 4 * KiB, chunk = 8 * KiB;
    grower g = grower_make(first, 64 * KiB, GROW_NEXT, chunk);
    rtm_heap *h = grower_heap(&g, first);
    void *small = rtm_alloc(h, 100); /* the pool: [small][free ...........] */
    REQUIRE(small != NULL);
    rtm_stats before = rtm_heap_stats(h);
    size_t want = before.largest_free + 1u;
    void *p = rtm_alloc(h, want);
    CHECK(p != NULL);
    CHECK_EQ(g.calls, 1);
    CHECK_EQ(g.last_min, span_for(want) + GROW_SLOP);
    CHECK_EQ(g.contiguous, 1);
    CHECK_PTR_EQ(p, (char *)small + span_for(100)); /* the old last block, grown */
    rtm_free(h, p);
    rtm_stats after = rtm_heap_stats(h);
    CHECK_EQ(after.largest_free, before.largest_free + chunk);
    CHECK_EQ(after.free_bytes, before.free_bytes + chunk);
    CHECK_EQ(after.arena_bytes, before.arena_bytes + chunk);
    CHECK_EQ(after.failed_allocs, 0);
    walk_sum w = walk_of(h);
    CHECK_EQ(w.blocks, 2); /* small and one free block: no new pool */
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(g.arena);
}

/* The same when the pool's last block is used: the new memory becomes one
 * free block of its own, starting at the old pool end, so the request that
 * caused the growth lands exactly there. */
static void test_contiguous_after_used_block(void)
{
    const size_t first = 2 * KiB, chunk = 4 * KiB;
    grower g = grower_make(first, 64 * KiB, GROW_NEXT, chunk);
    rtm_heap *h = grower_heap(&g, first);
    REQUIRE(rtm_heap_set_grow(h, NULL, NULL) == 0);
    void *blocks[64];
    size_t n = fill_up(h, blocks, 64);
    CHECK(n > 0);
    REQUIRE(rtm_heap_set_grow(h, grow_fn, &g) == 0);
    rtm_stats before = rtm_heap_stats(h);
    void *p = rtm_alloc(h, 200);
    CHECK_PTR_EQ(p, g.arena + first); /* the old end: the old sentinel's payload */
    rtm_stats after = rtm_heap_stats(h);
    CHECK_EQ(after.arena_bytes, before.arena_bytes + chunk);
    /* the rest of the chunk is one free block after p */
    CHECK_EQ(after.free_bytes, chunk - span_for(200) - HDR);
    CHECK_EQ(after.largest_free, chunk - span_for(200) - HDR);
    CHECK_EQ(rtm_heap_check(h), 0);
    for (size_t i = 0; i < n; i++)
        rtm_free(h, blocks[i]);
    rtm_free(h, p);
    walk_sum w = walk_of(h);
    CHECK_EQ(w.blocks, 1); /* one pool, one free block */
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(g.arena);
}

/* Memory elsewhere becomes a new pool (as rtm_heap_add_pool makes it), at
 * an aligned or an odd start; the heap's check and walk see it. */
static void test_new_pool(void)
{
    for (int odd = 0; odd <= 1; odd++) {
        const size_t first = 4 * KiB, chunk = 8 * KiB;
        grower g = grower_make(first, 64 * KiB, odd ? GROW_ODD : GROW_GAP, chunk);
        rtm_heap *h = grower_heap(&g, first);
        rtm_stats before = rtm_heap_stats(h);
        void *p = rtm_alloc(h, before.largest_free + 1u);
        CHECK(p != NULL);
        CHECK_EQ(g.calls, 1);
        unsigned char *piece = g.arena + first + (odd ? 67u : 64u);
        CHECK((unsigned char *)p >= piece && (unsigned char *)p < piece + chunk);
        CHECK_EQ((uintptr_t)p % RTM_ALIGN, 0);
        rtm_free(h, p);
        rtm_stats after = rtm_heap_stats(h);
        CHECK_EQ(after.arena_bytes, before.arena_bytes + chunk);
        /* the pool loses its bookkeeping, and an odd start 5 more bytes
         * rounded to 8 (the end then too) */
        size_t pool_free =
            odd ? ((chunk - 5u - POOL_HEAD) & ~(size_t)7u) - HDR : chunk - rtm_tlsf_pool_overhead();
        CHECK_EQ(after.free_bytes, before.free_bytes + pool_free);
        CHECK_EQ(after.largest_free, pool_free);
        walk_sum w = walk_of(h);
        CHECK_EQ(w.blocks, 2); /* each pool one free block */
        CHECK_EQ(rtm_heap_check(h), 0);
        /* bytes of the arena the heap was not given are untouched */
        CHECK(piece[-1] == 0xA5 && g.arena[first] == 0xA5);
        rtm_heap_destroy(h);
        free(g.arena);
    }
}

/* --- refusals ----------------------------------------------------------------- */

/* NULL, too few bytes, memory over the heap: ENOMEM, one failed_allocs,
 * grow called exactly once, and the heap otherwise unchanged (stats, walk,
 * check), the refused memory not written. */
static void test_refusals_leave_heap_unchanged(void)
{
    const enum grow_mode modes[] = {GROW_NULL, GROW_SHORT, GROW_OVERLAP};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        const size_t first = 4 * KiB;
        grower g = grower_make(first, 64 * KiB, modes[m], 0);
        rtm_heap *h = grower_heap(&g, first);
        void *keep = rtm_alloc(h, 500);
        REQUIRE(keep != NULL);
        rtm_stats before = rtm_heap_stats(h);
        walk_sum wb = walk_of(h);
        errno = 0;
        void *p = rtm_alloc(h, before.largest_free + 1u);
        CHECK_MSG(p == NULL, "mode %d", (int)modes[m]);
        CHECK_ERRNO(ENOMEM);
        CHECK_EQ(g.calls, 1);
        rtm_stats after = rtm_heap_stats(h);
        CHECK_MSG(same_but_failures(before, after), "mode %d: stats changed", (int)modes[m]);
        CHECK_EQ(after.failed_allocs, before.failed_allocs + 1u);
        walk_sum wa = walk_of(h);
        CHECK(wa.blocks == wb.blocks && wa.free_bytes == wb.free_bytes);
        CHECK_EQ(rtm_heap_check(h), 0);
        if (modes[m] == GROW_SHORT) {
            size_t untouched = 0;
            for (size_t i = first; i < g.used; i++)
                untouched += g.arena[i] == 0xA5;
            CHECK_EQ(untouched, g.used - first); /* refused memory not written */
        }
        /* aligned_alloc and realloc take the same path */
        errno = 0;
        CHECK(rtm_aligned_alloc(h, 256, before.largest_free) == NULL);
        CHECK_ERRNO(ENOMEM);
        errno = 0;
        CHECK(rtm_realloc(h, keep, before.largest_free + 600u) == NULL);
        CHECK_ERRNO(ENOMEM);
        CHECK_EQ(g.calls, 3);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
        free(g.arena);
    }
}

/* grow is called only when nothing fits: never while requests fit, never
 * for a size no block can have, never once turned off. */
static void test_called_only_when_needed(void)
{
    const size_t first = 16 * KiB;
    grower g = grower_make(first, 256 * KiB, GROW_GAP, 4 * KiB);
    rtm_heap *h = grower_heap(&g, first);
    rng r = {42};
    void *live[256];
    size_t n = 0;
    for (int i = 0; i < 2000; i++) {
        size_t size = rng_size(&r, 9);
        rtm_stats st = rtm_heap_stats(h);
        size_t calls = g.calls;
        if (n < 256 && (n == 0 || rng_below(&r, 3) != 0)) {
            int fits = size <= st.largest_free;
            live[n] = rtm_alloc(h, size);
            CHECK(live[n] != NULL);
            CHECK_MSG(g.calls == calls + (fits ? 0u : 1u), "step %d: size %zu largest %zu", i, size,
                      st.largest_free);
            n++;
        } else {
            size_t k = rng_below(&r, n);
            rtm_free(h, live[k]);
            live[k] = live[--n];
            CHECK_EQ(g.calls, calls);
        }
    }
    size_t calls = g.calls;
    CHECK(calls > 0);
    errno = 0;
    CHECK(rtm_alloc(h, RTM_TLSF_MAX_BLOCK + 1u) == NULL); /* no block can be that big */
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(g.calls, calls);
    REQUIRE(rtm_heap_set_grow(h, NULL, &g) == 0); /* off: ctx ignored */
    errno = 0;
    CHECK(rtm_alloc(h, rtm_heap_stats(h).largest_free + 1u) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(g.calls, calls);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(g.arena);
}

/* aligned_alloc asks for room for the alignment too, and a moving realloc
 * grows as alloc does, keeping the contents. */
static void test_aligned_and_realloc(void)
{
    const size_t first = 4 * KiB;
    grower g = grower_make(first, 128 * KiB, GROW_GAP, 0);
    rtm_heap *h = grower_heap(&g, first);
    size_t big = rtm_heap_stats(h).largest_free + 8u;
    void *a = rtm_aligned_alloc(h, 4096, big);
    CHECK(a != NULL && (uintptr_t)a % 4096u == 0);
    CHECK_EQ(g.calls, 1);
    CHECK_EQ(g.last_min, span_for(big) + 4096u + MIN_SPAN + GROW_SLOP);
    unsigned char *p = rtm_alloc(h, 64);
    REQUIRE(p != NULL);
    for (unsigned i = 0; i < 64; i++)
        p[i] = (unsigned char)(i * 3u);
    size_t calls = g.calls;
    unsigned char *q = rtm_realloc(h, p, rtm_heap_stats(h).largest_free + 100u);
    CHECK(q != NULL);
    CHECK_EQ(g.calls, calls + 1u);
    if (q != NULL)
        for (unsigned i = 0; i < 64; i++)
            CHECK(q[i] == (unsigned char)(i * 3u));
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(g.arena);
}

/* Reset keeps the grown pools (each one free block again) and the grow
 * function; the stats count all of them. */
static void test_reset_keeps_grown_pools(void)
{
    const size_t first = 4 * KiB;
    grower g = grower_make(first, 128 * KiB, GROW_GAP, 8 * KiB);
    rtm_heap *h = grower_heap(&g, first);
    size_t start_free = rtm_heap_stats(h).free_bytes;
    for (int i = 0; i < 6; i++)
        CHECK(rtm_alloc(h, 3000) != NULL);
    CHECK(g.calls >= 2);
    rtm_stats grown = rtm_heap_stats(h);
    CHECK_EQ(rtm_heap_reset(h), 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_EQ(st.arena_bytes, grown.arena_bytes);
    CHECK_EQ(st.used_bytes, 0);
    CHECK_EQ(st.live_blocks, 0);
    CHECK_EQ(st.free_bytes, start_free + g.pieces * (8 * KiB - rtm_tlsf_pool_overhead()));
    walk_sum w = walk_of(h);
    CHECK_EQ(w.blocks, 1u + g.pieces);
    CHECK_EQ(w.used_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    size_t calls = g.calls;
    CHECK(rtm_alloc(h, 9 * KiB) != NULL); /* larger than any pool: grows again */
    CHECK_EQ(g.calls, calls + 1u);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    free(g.arena);
}

/* Contiguous memory that would make its pool longer than one block can be
 * (RTM_TLSF_MAX_BLOCK + header) becomes a new pool instead. Needs a sparse
 * reservation of 4 GiB + 1 MiB (64-bit only; skipped where refused). */
static void test_extension_capped(void)
{
    if (sizeof(size_t) < 8)
        return;
    /* A pool as long as a pool can be but 64 KiB, ending exactly at first. */
    const size_t first = ((size_t)RTM_TLSF_MAX_BLOCK - 64u * KiB) & ~(size_t)7u;
    const size_t bytes = first + 64u * KiB + 1024u * KiB;
    unsigned char *mem = region_map_sparse(bytes);
    if (mem == NULL) {
        printf("  (skipped: no sparse reservation of %zu bytes)\n", bytes);
        return;
    }
    grower g;
    memset(&g, 0, sizeof g);
    g.arena = mem;
    g.bytes = bytes;
    g.used = first;
    g.mode = GROW_NEXT;
    g.chunk = 512u * KiB;
    g.end_exact = 1;
    rtm_heap *h = rtm_heap_create("tlsf", mem, first);
    REQUIRE(h != NULL);
    REQUIRE(rtm_heap_set_grow(h, grow_fn, &g) == 0);
    /* Most of the pool used, 100 KiB free at its end: 200 KiB must grow. */
    void *most = rtm_alloc(h, rtm_heap_stats(h).largest_free - 100u * KiB);
    REQUIRE(most != NULL);
    void *p = rtm_alloc(h, 200u * KiB);
    CHECK(p != NULL);
    CHECK_EQ(g.calls, 1);
    CHECK_EQ(g.contiguous, 1);
    CHECK((unsigned char *)p >= mem + first); /* not merged: a pool of its own */
    rtm_free(h, p);
    CHECK_EQ(rtm_heap_stats(h).largest_free, g.chunk - rtm_tlsf_pool_overhead());
    CHECK_EQ(walk_of(h).blocks, 3); /* most, its free tail, the new pool */
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    region_unmap(mem, bytes);
}

/* --- the API around it -------------------------------------------------------- */

/* Every algorithm but TLSF (with or without the cache) refuses with
 * ENOTSUP; a locked heap forwards to
 * its inner heap (and grows under its lock); bad handles are EINVAL. */
static void test_algorithms_and_bad_args(void)
{
    grower g = grower_make(0, 256 * KiB, GROW_GAP, 0);
    for (const char *const *name = rtm_algorithms(); *name != NULL; name++) {
        size_t bytes = rtm_min_region(*name) + 64 * KiB;
        unsigned char *mem = malloc(bytes);
        REQUIRE(mem != NULL);
        rtm_heap *h = rtm_heap_create(*name, mem, bytes);
        REQUIRE(h != NULL);
        /* TLSF and TLSF with the cache (which passes growth to its TLSF) */
        int tlsf = strcmp(*name, "tlsf") == 0 || strcmp(*name, "tlsf_cached") == 0;
        errno = 0;
        int rc = rtm_heap_set_grow(h, grow_fn, &g);
        CHECK_MSG(rc == (tlsf ? 0 : -1), "%s: rc %d", *name, rc);
        if (!tlsf)
            CHECK_ERRNO(ENOTSUP);
        rtm_heap_destroy(h);
        errno = 0;
        CHECK(rtm_heap_set_grow(h, grow_fn, &g) == -1); /* destroyed */
        CHECK_ERRNO(EINVAL);

        size_t lbytes = rtm_locked_min_region(*name) + 16 * KiB;
        unsigned char *lmem = malloc(lbytes);
        REQUIRE(lmem != NULL);
        rtm_heap *l = rtm_locked_create(*name, lmem, lbytes);
        REQUIRE(l != NULL);
        errno = 0;
        rc = rtm_heap_set_grow(l, grow_fn, &g);
        CHECK_MSG(rc == (tlsf ? 0 : -1), "locked %s: rc %d", *name, rc);
        if (!tlsf)
            CHECK_ERRNO(ENOTSUP);
        if (tlsf) {
            size_t calls = g.calls;
            void *p = rtm_alloc(l, rtm_heap_stats(l).largest_free + 1u);
            CHECK(p != NULL);
            CHECK_EQ(g.calls, calls + 1u);
            CHECK_EQ(rtm_heap_check(l), 0);
        }
        rtm_heap_destroy(l);
        free(lmem);
        free(mem);
    }
    errno = 0;
    CHECK(rtm_heap_set_grow(NULL, grow_fn, &g) == -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_tlsf_set_grow(NULL, grow_fn, &g) == -1);
    CHECK_ERRNO(EINVAL);
    free(g.arena);
}

/* A shared heap refuses: its control is in a segment other processes map. */
static void test_shared_refuses(void)
{
    char name[64];
    snprintf(name, sizeof name, "/rtmem-grow-test-%ld", (long)getpid());
    rtm_heap *h = rtm_shared_create(name, 256 * KiB, "tlsf");
    if (h == NULL) {
        printf("  (skipped: no shared memory: %s)\n", strerror(errno));
        return;
    }
    grower g = grower_make(0, 4 * KiB, GROW_GAP, 0);
    errno = 0;
    CHECK(rtm_heap_set_grow(h, grow_fn, &g) == -1);
    CHECK_ERRNO(ENOTSUP);
    CHECK(rtm_alloc(h, 300 * KiB) == NULL); /* nothing set, nothing called */
    CHECK_EQ(g.calls, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
    (void)rtm_shared_unlink(name);
    free(g.arena);
}

/* A heap checked as one region (a segment, an image) must not carry a
 * grow function: rtm_tlsf_check_region fails on one, rtm_tlsf_check not. */
static void test_check_region_refuses_grow(void)
{
    grower g = grower_make(8 * KiB, 16 * KiB, GROW_GAP, 0);
    rtm_tlsf *t = rtm_tlsf_create(g.arena, 8 * KiB);
    REQUIRE(t != NULL);
    CHECK_EQ(rtm_tlsf_check_region(t, g.arena, 8 * KiB), 0);
    REQUIRE(rtm_tlsf_set_grow(t, grow_fn, &g) == 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    errno = 0;
    CHECK_EQ(rtm_tlsf_check_region(t, g.arena, 8 * KiB), -1);
    CHECK_ERRNO(EFAULT);
    REQUIRE(rtm_tlsf_set_grow(t, NULL, &g) == 0);
    CHECK_EQ(rtm_tlsf_check_region(t, g.arena, 8 * KiB), 0);
    free(g.arena);
}

/* The crash recovery's rebuild (a shared heap's) clears a grow function:
 * whatever a dead process left in a segment is never called. */
static void test_rebuild_clears_grow(void)
{
    grower g = grower_make(8 * KiB, 64 * KiB, GROW_GAP, 0);
    rtm_tlsf *t = rtm_tlsf_create(g.arena, 8 * KiB);
    REQUIRE(t != NULL);
    REQUIRE(rtm_tlsf_set_grow(t, grow_fn, &g) == 0);
    CHECK_EQ(rtm_tlsf_rebuild(t), 0);
    CHECK_EQ(rtm_tlsf_check_region(t, g.arena, 8 * KiB), 0); /* no grow function left */
    errno = 0;
    CHECK(rtm_tlsf_alloc(t, 16 * KiB) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(g.calls, 0);
    free(g.arena);
}

/* --- the model run ------------------------------------------------------------ */

/* The rig over a small heap that grows by pieces at random places of a
 * 2 MiB arena (contiguous, after a gap, at odd starts, sizes not multiples
 * of 8) until the arena runs out and growth fails; checked every 16 steps.
 * Then the pools must be exactly what was handed out. */
static void run_model(uint64_t seed, int typed)
{
    const size_t first = 8 * KiB, arena = 2048 * KiB;
    grower g = grower_make(first, arena, GROW_RANDOM, 2 * KiB);
    g.r.s = seed;
    void *heap = typed ? (void *)rtm_tlsf_create(g.arena, first)
                       : (void *)rtm_heap_create("tlsf", g.arena, first);
    REQUIRE(heap != NULL);
    size_t arena0 = rtm_heap_stats(heap).arena_bytes;
    REQUIRE((typed ? rtm_tlsf_set_grow(heap, grow_fn, &g) : rtm_heap_set_grow(heap, grow_fn, &g)) ==
            0);
    rig_ops ops = typed ? rig_ops_tlsf(heap) : rig_ops_heap(heap);
    ops.flags &= ~(unsigned)(RIG_LARGEST_FREE_EXACT | RIG_COALESCES);
    ops.flags |= RIG_GROWS;
    ops.region_count = 1;
    ops.regions[0].base = g.arena;
    ops.regions[0].bytes = arena;
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = 30000;
    cfg.max_live = 600;
    cfg.max_request = 6 * KiB;
    cfg.max_alignment = 1024;
    cfg.check_every = 16;
    char replay[128];
    snprintf(replay, sizeof replay, "test_tlsf_grow (model, typed %d)", typed);
    cfg.replay = replay;
    rig_result res;
    CHECK_MSG(rig_run(&ops, &cfg, &res) == 0, "seed %llu typed %d", (unsigned long long)seed,
              typed);
    CHECK_MSG(g.pieces > 10 && g.contiguous > 0 && g.contiguous < g.pieces,
              "seed %llu: %zu pieces, %zu contiguous: not the mix the test needs",
              (unsigned long long)seed, g.pieces, g.contiguous);
    CHECK_MSG(res.enomem > 0, "seed %llu: the arena never ran out", (unsigned long long)seed);
    /* every piece handed out was taken, whole */
    rtm_stats st = rtm_heap_stats(heap);
    CHECK_EQ(st.arena_bytes, arena0 + g.handed);
    CHECK_EQ(st.live_blocks, 0);
    walk_sum w = walk_of(heap);
    CHECK_EQ(w.free_bytes, st.free_bytes);
    CHECK_EQ(w.used_blocks, 0);
    /* each pool is one free block once all is freed: the first pool plus
     * one per piece that did not continue a pool */
    CHECK_EQ(w.blocks, 1u + g.pieces - g.contiguous);
    CHECK_EQ(rtm_heap_check(heap), 0);
    free(g.arena);
}

static void test_model_generic(void)
{
    for (uint64_t seed = 1; seed <= 3; seed++)
        run_model(seed, 0);
}

static void test_model_typed(void)
{
    for (uint64_t seed = 11; seed <= 12; seed++)
        run_model(seed, 1);
}

int main(void)
{
    RUN_TEST(test_contiguous_merges);
    RUN_TEST(test_contiguous_after_used_block);
    RUN_TEST(test_new_pool);
    RUN_TEST(test_refusals_leave_heap_unchanged);
    RUN_TEST(test_called_only_when_needed);
    RUN_TEST(test_aligned_and_realloc);
    RUN_TEST(test_reset_keeps_grown_pools);
    RUN_TEST(test_extension_capped);
    RUN_TEST(test_algorithms_and_bad_args);
    RUN_TEST(test_shared_refuses);
    RUN_TEST(test_check_region_refuses_grow);
    RUN_TEST(test_rebuild_clears_grow);
    RUN_TEST(test_model_generic);
    RUN_TEST(test_model_typed);
    return check_summary();
}
