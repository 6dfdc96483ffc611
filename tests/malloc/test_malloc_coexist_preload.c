// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_coexist_preload.c -- a heap-API program linked
 * against librtmem.so, run with librtmem-malloc.so preloaded.
 *
 * A preloaded library comes first in the dynamic linker's search order, so
 * when the malloc exported rtm_free(void *), rtm_realloc(void *, size_t) and
 * rtm_aligned_alloc(size_t, size_t), this program's heap calls
 * rtm_free(h, p) ... were bound to them: frees went to the malloc (which
 * ignored h as a foreign pointer), reallocs and aligned allocations came
 * from the malloc or failed, and nothing crashed. Now the malloc's API is
 * rtm_malloc_*, and every heap call must reach librtmem.
 *
 * Checks: the heap functions resolve to librtmem.so (dladdr); with
 * --preloaded, the preload took effect (malloc is the rtmem malloc), so the
 * test cannot pass by running without it; on a TLSF heap and a heap of every
 * other algorithm rtm_algorithms() lists, rounds of random allocations,
 * aligned allocations, reallocations and frees: every block inside the
 * heap's region, aligned, contents intact across realloc, live_blocks exact,
 * and at the end live_blocks == 0 and rtm_heap_check() == 0.
 *
 * Usage: test_malloc_coexist_preload [--preloaded] [seed]
 * ctest runs it under LD_PRELOAD=librtmem-malloc.so with --preloaded
 * (malloc_coexist_preload), and plainly (malloc_coexist_shared).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/rng.h"
#include "rtmem.h"

#define REGION_BYTES ((size_t)1 << 20)
#define SLOTS        128u
#define ROUNDS       6u

static _Alignas(64) unsigned char region[REGION_BYTES];
static uint64_t seed = 0x5EED0C0Eu;

static int in_region(const void *p)
{
    return (const unsigned char *)p >= region && (const unsigned char *)p < region + REGION_BYTES;
}

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1u)) == 0; }

static unsigned char token(const void *tag, size_t i)
{
    return (unsigned char)(((uintptr_t)tag >> 3) * 131u + i * 7u + 1u);
}

/* Blocks are stamped with a token of their slot's tag (not their address:
 * realloc moves them, and the contents must follow). */
typedef struct slot {
    unsigned char *p;
    size_t n, align;
    const void *tag;
} slot;

static void stamp(slot *s)
{
    for (size_t i = 0; i < s->n; i++)
        s->p[i] = token(s->tag, i);
}

static size_t damaged(const slot *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s->p[i] != token(s->tag, i))
            return i + 1u;
    return 0;
}

/* The file that defines `symbol` for this program (the first in lookup
 * order, as the calls above bind). */
static const char *defining_file(const char *symbol)
{
    void *f = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (f == NULL || dladdr(f, &info) == 0 || info.dli_fname == NULL)
        return "(none)";
    return info.dli_fname;
}

static void test_heap_calls_reach_librtmem(void)
{
    static const char *const heap_api[] = {"rtm_alloc",         "rtm_free",       "rtm_realloc",
                                           "rtm_aligned_alloc", "rtm_heap_stats", NULL};
    for (const char *const *f = heap_api; *f != NULL; f++) {
        const char *file = defining_file(*f);
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        CHECK_MSG(strncmp(base, "librtmem.so", 11) == 0, "%s is defined by %s, not librtmem.so", *f,
                  file);
    }
}

/* The preload is in force: malloc's blocks are the rtmem malloc's. */
static void require_preloaded(void)
{
    size_t (*usable)(const void *) = 0;
    void *sym = dlsym(RTLD_DEFAULT, "rtm_malloc_usable_size");
    REQUIRE(sym != NULL); /* else LD_PRELOAD=librtmem-malloc.so did not take effect */
    memcpy(&usable, &sym, sizeof usable);
    void *p = malloc(100);
    REQUIRE(p != NULL);
    CHECK(usable(p) >= 100u);
    free(p);
}

/* One heap of `algorithm` over the whole region: ROUNDS rounds that fill
 * every slot (plain or aligned), reallocate every other one, and free them
 * all in random order. TLSF must serve every request; another algorithm
 * may refuse one it cannot do (ENOMEM, ENOTSUP), but only with the block it
 * was asked to resize left valid. */
static void exercise(const char *algorithm, rng *r)
{
    memset(region, 0, sizeof region);
    rtm_heap *h = rtm_heap_create(algorithm, region, sizeof region);
    REQUIRE(h != NULL);
    int must = strcmp(algorithm, "tlsf") == 0;
    static slot s[SLOTS];
    size_t live = 0, served = 0, moved = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        for (size_t k = 0; k < SLOTS; k++) {
            s[k].tag = &s[k];
            s[k].n = 1u + rng_size(r, 10);
            s[k].align = (k % 3u == 0) ? (size_t)8 << rng_below(r, 7) : 0; /* 8 .. 512 */
            errno = 0;
            s[k].p = s[k].align ? rtm_aligned_alloc(h, s[k].align, s[k].n) : rtm_alloc(h, s[k].n);
            if (s[k].p == NULL) {
                CHECK_MSG(!must, "%s round %u slot %zu: %zu bytes (align %zu) refused", algorithm,
                          round, k, s[k].n, s[k].align);
                CHECK_MSG(errno == ENOMEM || errno == ENOTSUP, "%s: errno %d", algorithm, errno);
                continue;
            }
            live++;
            served++;
            CHECK_MSG(in_region(s[k].p), "%s: block %p outside the heap's region", algorithm,
                      (void *)s[k].p);
            CHECK_MSG(is_aligned(s[k].p, s[k].align ? s[k].align : 8u), "%s: %p not %zu-aligned",
                      algorithm, (void *)s[k].p, s[k].align);
            CHECK(rtm_usable_size(h, s[k].p) >= s[k].n);
            stamp(&s[k]);
        }
        CHECK_MSG(rtm_heap_stats(h).live_blocks == live, "%s: live_blocks %zu, expected %zu",
                  algorithm, rtm_heap_stats(h).live_blocks, live);
        CHECK_EQ(rtm_heap_check(h), 0);

        /* Reallocate every other block, growing or shrinking. */
        for (size_t k = round & 1u; k < SLOTS; k += 2) {
            if (s[k].p == NULL)
                continue;
            size_t n = 1u + rng_size(r, 11);
            errno = 0;
            unsigned char *q = rtm_realloc(h, s[k].p, n);
            if (q == NULL) {
                CHECK_MSG(!must, "%s: realloc of %zu to %zu bytes refused", algorithm, s[k].n, n);
                CHECK_MSG(errno == ENOMEM || errno == ENOTSUP, "%s: errno %d", algorithm, errno);
                CHECK_MSG(damaged(&s[k], s[k].n) == 0, "%s: block changed by a failed realloc",
                          algorithm);
                continue;
            }
            moved++;
            CHECK_MSG(in_region(q), "%s: realloc gave %p outside the region", algorithm, (void *)q);
            size_t keep = n < s[k].n ? n : s[k].n;
            s[k].p = q;
            size_t bad = damaged(&s[k], keep);
            CHECK_MSG(bad == 0, "%s: realloc %zu -> %zu lost byte %zu", algorithm, s[k].n, n,
                      bad - 1u);
            if (s[k].align != 0 && must)
                CHECK_MSG(is_aligned(q, s[k].align), "tlsf: realloc lost the %zu alignment",
                          s[k].align);
            CHECK(rtm_usable_size(h, q) >= n);
            s[k].n = n;
            stamp(&s[k]);
        }
        CHECK_MSG(rtm_heap_stats(h).live_blocks == live, "%s: live_blocks %zu after realloc",
                  algorithm, rtm_heap_stats(h).live_blocks);

        /* Free everything in random order, checking contents first. */
        for (size_t left = SLOTS; left > 0; left--) {
            size_t k = rng_below(r, left);
            slot tmp = s[k];
            s[k] = s[left - 1u];
            s[left - 1u] = tmp;
            slot *f = &s[left - 1u];
            if (f->p == NULL)
                continue;
            CHECK_MSG(damaged(f, f->n) == 0, "%s: block overwritten before free", algorithm);
            rtm_free(h, f->p);
            f->p = NULL;
            live--;
        }
        rtm_stats st = rtm_heap_stats(h);
        CHECK_MSG(st.live_blocks == 0, "%s round %u: live_blocks %zu after freeing everything",
                  algorithm, round, st.live_blocks);
        CHECK_MSG(st.used_bytes == 0, "%s round %u: used_bytes %zu", algorithm, round,
                  st.used_bytes);
        CHECK_MSG(rtm_heap_check(h) == 0, "%s round %u: rtm_heap_check failed", algorithm, round);
    }
    CHECK_MSG(served > 0, "%s served nothing", algorithm);
    CHECK_MSG(!must || moved > 0, "%s resized nothing", algorithm);
    CHECK_EQ(rtm_heap_stats(h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(h), 0);
    rtm_heap_destroy(h);
}

static void test_tlsf(void)
{
    rng r = {seed};
    exercise("tlsf", &r);
}

static void test_every_other_algorithm(void)
{
    rng r = {seed + 1u};
    size_t others = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++) {
        if (strcmp(*a, "tlsf") == 0)
            continue;
        exercise(*a, &r);
        others++;
    }
    CHECK(others > 0);
}

int main(int argc, char **argv)
{
    int preloaded = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--preloaded") == 0)
            preloaded = 1;
        else
            seed = strtoull(argv[i], NULL, 0);
    }
    printf("seed 0x%llx%s\n", (unsigned long long)seed, preloaded ? ", preloaded" : "");
    if (preloaded)
        RUN_TEST(require_preloaded);
    RUN_TEST(test_heap_calls_reach_librtmem);
    RUN_TEST(test_tlsf);
    RUN_TEST(test_every_other_algorithm);
    return check_summary();
}
