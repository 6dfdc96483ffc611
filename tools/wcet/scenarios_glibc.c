// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios_glibc.c -- glibc malloc's adversarial states, for
 * the "glibc" row: the same count as rtmem's, of the malloc and free this
 * executable links statically (glibc's ptmalloc2, main arena, tcache on).
 *
 * Why these states: ptmalloc's bounded fast paths (tcache, fastbins, an
 * exact small bin) hide paths whose length grows with the heap's history:
 *   - malloc_consolidate: a large request (or a free whose merged chunk
 *     reaches 64 KiB) first merges every chunk sitting in the fastbins, so
 *     its cost grows with n, the number of fastbin chunks;
 *   - the unsorted bin: a malloc that finds no exact fit sorts every chunk
 *     of the unsorted list into its bin before it serves the request;
 *   - the top chunk: a request the top cannot hold grows it with brk; a
 *     free that leaves the top above the trim threshold shrinks it with brk;
 *   - mmap'd chunks: requests above the mmap threshold (128 KiB at start,
 *     raised to the size of the last mmap'd chunk freed) are one mmap each,
 *     and their free one munmap;
 *   - free merging with free neighbours on both sides, or into the top.
 * A system call is one counted instruction (the `syscall`); its kernel time
 * is not in the count, so the report says which calls made one.
 *
 * Determinism: a glibc task's child is a fresh exec of this program with
 * address-space randomisation off (tracer.c), so malloc starts from the
 * same state and brk / mmap return the same addresses in both runs. A
 * warm-up malloc / free pair runs first, so the one-time initialisation
 * (tcache set-up, the first brk) is not measured.
 */
#include <stdio.h>
#include <stdlib.h>

#include "child.h"

#define KIB          ((size_t)1 << 10)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define V(c, p)      ((unsigned)(c) | (unsigned)(p) << 8)
#define MAX_N        4096u

static void *chunks[MAX_N + 8], *guards[MAX_N + 8];

static void *raw(wcet_heap *w, size_t n)
{
    void *p = wcet_raw_alloc(w, n);
    if (p == NULL) {
        (void)wcet_fail("malloc(%zu) failed", n);
        exit(1);
    }
    return p;
}

static int must_alloc(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void **out)
{
    *out = wcet_m_alloc(w, (unsigned)sc, v, n);
    REQUIRE(*out != NULL, "malloc(%zu) failed", n);
    return 0;
}

static void m_free(wcet_heap *w, enum wcet_scenario sc, unsigned v, size_t n, void *p)
{
    (void)wcet_m_free(w, (unsigned)sc, v, n, p);
}

/* n + 7 chunks of `size` bytes, each followed by a guard of gsize so that
 * none merges with another; all freed: the first 7 fill the tcache bin, the
 * other n go to a fastbin (size <= 120) or the unsorted bin. */
static void fill_bins(wcet_heap *w, unsigned n, size_t size, size_t gsize)
{
    for (unsigned i = 0; i < n + 7; i++) {
        chunks[i] = raw(w, size);
        guards[i] = raw(w, gsize);
    }
    for (unsigned i = 0; i < n + 7; i++)
        wcet_raw_free(w, chunks[i]);
}

static const unsigned counts_quick[] = {8, 64, 512}, counts_full[] = {8, 64, 512, 4096};

enum { FB_MALLOC, FB_FREE_UNSORTED, FB_FREE_TOP };

/* malloc(2000) is a large-bin request: with fastbin chunks present it runs
 * malloc_consolidate over all n, then sorts the n merged chunks. A free of
 * a 70 KiB chunk (>= FASTBIN_CONSOLIDATION_THRESHOLD) consolidates too,
 * and when it borders the top, may trim it. */
static int fastbins(wcet_heap *w, const wcet_config *cfg)
{
    const unsigned *ns = cfg->quick ? counts_quick : counts_full;
    size_t nn = cfg->quick ? ARRAY_LEN(counts_quick) : ARRAY_LEN(counts_full);
    for (size_t k = 0; k < nn; k++) {
        void *p, *x;
        fill_bins(w, ns[k], 24, 40);
        TRY(must_alloc(w, SC_G_FASTBINS, V(FB_MALLOC, ns[k]), 2000, &p));
        x = raw(w, 70 * KIB);
        (void)raw(w, 40);
        fill_bins(w, ns[k], 24, 40);
        m_free(w, SC_G_FASTBINS, V(FB_FREE_UNSORTED, ns[k]), 70 * KIB, x);
        (void)raw(w, 2000); /* consolidation again, so that the next fill is clean */
        x = raw(w, 70 * KIB);
        fill_bins(w, ns[k], 24, 40);
        m_free(w, SC_G_FASTBINS, V(FB_FREE_TOP, ns[k]), 70 * KIB, x);
    }
    return 0;
}

/* n chunks of 1100 bytes (above the tcache, not fastbin) freed with guards
 * between them: n separate chunks on the unsorted list. malloc(3000) fits
 * none, so it sorts them all into the large bins before cutting the top. */
static int unsorted(wcet_heap *w, const wcet_config *cfg)
{
    const unsigned *ns = cfg->quick ? counts_quick : counts_full;
    size_t nn = cfg->quick ? ARRAY_LEN(counts_quick) : ARRAY_LEN(counts_full);
    for (size_t k = 0; k < nn; k++) {
        void *p;
        fill_bins(w, ns[k], 1100, 24);
        TRY(must_alloc(w, SC_G_UNSORTED, V(0, ns[k]), 3000, &p));
    }
    return 0;
}

/* Requests of 64 and 100 KiB (below the mmap threshold) from the top; when
 * the top is too small, sysmalloc grows it with brk. */
static int top(wcet_heap *w)
{
    static const size_t sizes[] = {64 * KIB, 100 * KIB};
    for (size_t s = 0; s < ARRAY_LEN(sizes); s++)
        for (unsigned i = 0; i < 8; i++) {
            void *p;
            TRY(must_alloc(w, SC_G_TOP, V(s, i), sizes[s], &p));
        }
    return 0;
}

enum { MM_MAP, MM_UNMAP, MM_HEAP, MM_HEAP_FREE, MM_MAP2, MM_UNMAP2 };
static const char *const mmap_cases[] = {
    "malloc above the mmap threshold: a chunk of its own (mmap)",
    "free of an mmap'd chunk (munmap; raises the threshold to its size)",
    "same-size-class request below the raised threshold: from the heap",
    "free of that chunk (into the top)",
    "malloc above the raised threshold (mmap)",
    "free of it (munmap)"};

static int mmapped(wcet_heap *w)
{
    void *p;
    TRY(must_alloc(w, SC_G_MMAP, MM_MAP, 1024 * KIB, &p));
    m_free(w, SC_G_MMAP, MM_UNMAP, 1024 * KIB, p);
    TRY(must_alloc(w, SC_G_MMAP, MM_HEAP, 200 * KIB, &p));
    m_free(w, SC_G_MMAP, MM_HEAP_FREE, 200 * KIB, p);
    TRY(must_alloc(w, SC_G_MMAP, MM_MAP2, 4096 * KIB, &p));
    m_free(w, SC_G_MMAP, MM_UNMAP2, 4096 * KIB, p);
    return 0;
}

enum { FR_BOTH, FR_TOP, FR_TCACHE, FR_FASTBIN, FR_SMALL_BOTH, FR_TRIM };
static const char *const free_cases[] = {
    "free between two free chunks (merged both sides)",
    "free next to the top chunk (merged into it)",
    "free into the tcache",
    "free into a fastbin (its tcache bin full)",
    "small chunk, tcache bin full, between two free chunks",
    "free merged into the top, top above the trim threshold (brk shrinks)"};

/* [A][B][C][guard]: A and C freed, then B measured. A tcache-sized n gets
 * its tcache bin filled first (after A, B, C exist: they would otherwise
 * come from it), so that A, B and C really reach the bins. */
static void free_both(wcet_heap *w, size_t n, unsigned v)
{
    void *a = raw(w, n), *b = raw(w, n), *c = raw(w, n);
    (void)raw(w, 24);
    if (n <= 1032)
        fill_bins(w, 0, n, 24);
    wcet_raw_free(w, a);
    wcet_raw_free(w, c);
    m_free(w, SC_G_FREE, v, n, b);
}

static int frees(wcet_heap *w)
{
    free_both(w, 2000, FR_BOTH);
    void *p = raw(w, 2000);
    m_free(w, SC_G_FREE, FR_TOP, 2000, p);
    p = raw(w, 200);
    (void)raw(w, 24);
    m_free(w, SC_G_FREE, FR_TCACHE, 200, p);
    p = raw(w, 56);
    (void)raw(w, 24);
    fill_bins(w, 0, 56, 24); /* fills the tcache bin of 56-byte requests */
    m_free(w, SC_G_FREE, FR_FASTBIN, 56, p);
    free_both(w, 200, FR_SMALL_BOTH);
    void *a = raw(w, 100 * KIB), *b = raw(w, 100 * KIB), *c = raw(w, 100 * KIB);
    wcet_raw_free(w, a);
    wcet_raw_free(w, b);
    m_free(w, SC_G_FREE, FR_TRIM, 100 * KIB, c);
    return 0;
}

int wcet_glibc_scenario(const wcet_config *cfg, enum wcet_scenario sc)
{
    wcet_heap w = {API_GENERIC, NULL, NULL, AL_GLIBC};
    wcet_raw_free(&w, raw(&w, 100)); /* initialisation: tcache, first brk */
    switch (sc) {
    case SC_G_FASTBINS:
        return fastbins(&w, cfg);
    case SC_G_UNSORTED:
        return unsorted(&w, cfg);
    case SC_G_TOP:
        return top(&w);
    case SC_G_MMAP:
        return mmapped(&w);
    case SC_G_FREE:
        return frees(&w);
    default:
        return wcet_fail("scenario %d is not a glibc scenario", (int)sc);
    }
}

int wcet_glibc_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned c = v & 0xffu, p = v >> 8;
    unsigned long long n = (unsigned long long)size;
    switch (sc) {
    case SC_G_FASTBINS:
        if (c == FB_MALLOC)
            snprintf(buf, len, "malloc %llu with %u chunks in a fastbin (consolidated, sorted)", n,
                     p);
        else
            snprintf(buf, len, "free %llu with %u chunks in a fastbin (consolidated)%s", n, p,
                     c == FB_FREE_TOP ? ", merged into the top" : "");
        return 1;
    case SC_G_UNSORTED:
        snprintf(buf, len, "malloc %llu with %u chunks on the unsorted list (all sorted)", n, p);
        return 1;
    case SC_G_TOP:
        snprintf(buf, len, "malloc %llu from the top, request %u of 8", n, p + 1);
        return 1;
    case SC_G_MMAP:
        snprintf(buf, len, "%s (%llu bytes)", v < ARRAY_LEN(mmap_cases) ? mmap_cases[v] : "?", n);
        return 1;
    case SC_G_FREE:
        snprintf(buf, len, "%s (%llu bytes)", v < ARRAY_LEN(free_cases) ? free_cases[v] : "?", n);
        return 1;
    default:
        return 0;
    }
}
