// SPDX-License-Identifier: MIT
/*
 * tools/wcet/child.c -- the traced child's toolbox: the region, a heap
 * driven through the generic or the typed API, the measured calls, and the
 * builders scenarios.c composes into adversarial heap states.
 *
 * A measured call is exactly: wcet_marker(row, ...) then the API call. The
 * marker is an opaque assembly function, so the compiler cannot move the
 * call before it; the tracer counts from the call's first instruction to
 * its return, so the wrapper's own instructions are never counted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "child.h"

const char *wcet_current = "?";

int wcet_fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rtmem-wcet: %s: ", wcet_current);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* --- region ------------------------------------------------------------- */

static unsigned char *region;
static size_t region_len;

int wcet_region_reserve(size_t bytes)
{
    if (bytes <= region_len)
        return 0;
    if (region != NULL)
        munmap(region, region_len);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    region = m == MAP_FAILED ? NULL : m;
    region_len = region ? bytes : 0;
    REQUIRE(region != NULL, "cannot map %zu bytes of address space", bytes);
    return 0;
}

unsigned char *wcet_region(void) { return region; }

/* --- heap --------------------------------------------------------------- */

/* Creates the heap; 0, or -1 without a message when the API refuses. */
static int heap_try(wcet_heap *w, size_t offset, size_t bytes)
{
    TRY(wcet_region_reserve(offset + bytes));
    void *mem = region + offset;
    if (w->api == API_GENERIC) {
        w->h = rtm_heap_create(wcet_allocators[w->al].spec, mem, bytes);
        return w->h != NULL ? 0 : -1;
    }
    w->t = rtm_tlsf_create(mem, bytes);
    return w->t != NULL ? 0 : -1;
}

int wcet_heap_new(wcet_heap *w, size_t offset, size_t bytes)
{
    int rc = heap_try(w, offset, bytes);
    REQUIRE(rc == 0, "creating a heap over %zu bytes failed", bytes);
    return 0;
}

/* rtm_tlsf_region_for() sizes a typed heap on an 8-aligned region; the
 * generic header needs more, and rtm_heap_create() insists on
 * rtm_min_region() bytes, which counts 7 bytes of misalignment slack. So
 * try sizes a little above the typed one, first at an aligned start, then at
 * starts 1..7 bytes past it (where the slack is really lost), and keep the
 * first heap whose only free block has exactly `usable` bytes. */
int wcet_heap_exact(wcet_heap *w, size_t usable)
{
    size_t base = rtm_tlsf_region_for(usable);
    REQUIRE(base != 0, "no region holds a %zu-byte block", usable);
    for (size_t off = 0; off < 8; off++) {
        for (size_t extra = 0; extra <= 64; extra++) {
            int rc = heap_try(w, off, base + extra);
            if (rc > 0)
                return rc; /* no address space: already reported */
            if (rc < 0)
                continue; /* too small for the generic header */
            rtm_stats st = wcet_raw_stats(w);
            if (st.free_bytes == usable && st.largest_free == usable)
                return 0;
            if (st.free_bytes > usable)
                break;
        }
    }
    return wcet_fail("cannot make a heap whose only free block holds exactly %zu bytes", usable);
}

int wcet_heap_with_free(wcet_heap *w, size_t free_bytes)
{
    size_t lo = rtm_min_region(wcet_allocators[w->al].spec), hi = lo;
    /* Doubling to an upper bound, then bisection: the smallest size whose
     * fresh heap has at least free_bytes free. */
    for (;;) {
        REQUIRE(hi < ((size_t)1 << 40), "no region gives %zu free bytes", free_bytes);
        if (heap_try(w, 0, hi) == 0 && wcet_raw_stats(w).free_bytes >= free_bytes)
            break;
        lo = hi;
        hi = hi < free_bytes ? free_bytes : 2 * hi;
    }
    while (lo + 1 < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (heap_try(w, 0, mid) == 0 && wcet_raw_stats(w).free_bytes >= free_bytes)
            hi = mid;
        else
            lo = mid;
    }
    TRY(wcet_heap_new(w, 0, hi));
    rtm_stats st = wcet_raw_stats(w);
    REQUIRE(st.free_bytes == free_bytes,
            "no region gives exactly %zu free bytes (%zu bytes give %zu)", free_bytes, hi,
            st.free_bytes);
    return 0;
}

int wcet_heap_add_pool(wcet_heap *w, void *mem, size_t bytes)
{
    int rc = w->api == API_GENERIC ? rtm_heap_add_pool(w->h, mem, bytes)
                                   : rtm_tlsf_add_pool(w->t, mem, bytes);
    REQUIRE(rc == 0, "add_pool(%zu bytes) failed", bytes);
    return 0;
}

void *wcet_raw_alloc(wcet_heap *w, size_t n)
{
    if (w->al == AL_GLIBC)
        return malloc(n);
    return w->api == API_GENERIC ? rtm_alloc(w->h, n) : rtm_tlsf_alloc(w->t, n);
}

void wcet_raw_free(wcet_heap *w, void *p)
{
    if (w->al == AL_GLIBC)
        free(p);
    else if (w->api == API_GENERIC)
        rtm_free(w->h, p);
    else
        (void)rtm_tlsf_free(w->t, p);
}

rtm_stats wcet_raw_stats(wcet_heap *w)
{
    return w->api == API_GENERIC ? rtm_heap_stats(w->h) : rtm_tlsf_stats(w->t);
}

int wcet_raw_check(wcet_heap *w)
{
    return w->api == API_GENERIC ? rtm_heap_check(w->h) : rtm_tlsf_check(w->t);
}

static size_t usable_of(wcet_heap *w, const void *p)
{
    return w->api == API_GENERIC ? rtm_usable_size(w->h, p) : rtm_tlsf_usable_size(p);
}

/* What lies between one block's last usable byte and the next block: TLSF's
 * header, and for tlsf_cached the check word below every block too. The mt
 * heap's usable size is the request rounded to 8 (u), and it asks TLSF for
 * u + 8 (its check word), which TLSF's span rounds up to u + 16: 16 between
 * u and the next block's payload. */
static size_t between_blocks(const wcet_heap *w)
{
    if (w->al == AL_MT_TLSF)
        return (HDR + 8u + 7u) & ~(size_t)7u;
    return HDR + (w->al == AL_TLSF_CACHED ? 8u : 0u);
}

int wcet_adjacent(wcet_heap *w, const void *p, const void *q)
{
    return (const char *)q == (const char *)p + usable_of(w, p) + between_blocks(w);
}

int wcet_carve_fenced(wcet_heap *w, size_t n, void **out)
{
    void *p = wcet_raw_alloc(w, n);
    void *fence = wcet_raw_alloc(w, 0);
    REQUIRE(p != NULL && fence != NULL, "cannot allocate %zu bytes and a fence", n);
    REQUIRE(wcet_adjacent(w, p, fence),
            "the heap did not carve consecutive allocations from one block; "
            "this scenario needs that to place neighbours");
    *out = p;
    return 0;
}

int wcet_consume_largest(wcet_heap *w)
{
    rtm_stats st = wcet_raw_stats(w);
    if (st.largest_free == 0)
        return 0;
    REQUIRE(wcet_raw_alloc(w, st.largest_free) != NULL,
            "cannot allocate the largest free block (%zu bytes)", st.largest_free);
    return 0;
}

/* --- measured calls ----------------------------------------------------- */

/* glibc's entry points, called through volatile pointers: the compiler
 * knows malloc and free, and could otherwise drop a pair whose block is
 * never used or move the call away from its marker. */
static void *(*volatile glibc_malloc)(size_t) = malloc;
static void (*volatile glibc_free)(void *) = free;

void *wcet_m_alloc(wcet_heap *w, unsigned sc, unsigned variant, size_t n)
{
    if (w->al == AL_GLIBC) {
        void *(*fn)(size_t) = glibc_malloc;
        wcet_marker(ROW_MALLOC, sc, variant, n);
        return fn(n);
    }
    if (w->api == API_GENERIC) {
        wcet_marker(ROW_ALLOC, sc, variant, n);
        return rtm_alloc(w->h, n);
    }
    wcet_marker(ROW_TLSF_ALLOC, sc, variant, n);
    return rtm_tlsf_alloc(w->t, n);
}

int wcet_m_free(wcet_heap *w, unsigned sc, unsigned variant, size_t size, void *p)
{
    if (w->al == AL_GLIBC) {
        void (*fn)(void *) = glibc_free;
        wcet_marker(ROW_MFREE, sc, variant, size);
        fn(p);
        return 0;
    }
    if (w->api == API_GENERIC) {
        errno = 0; /* rtm_free returns nothing; a rejection sets EINVAL */
        wcet_marker(ROW_FREE, sc, variant, size);
        rtm_free(w->h, p);
        return errno == EINVAL ? -1 : 0;
    }
    wcet_marker(ROW_TLSF_FREE, sc, variant, size);
    return rtm_tlsf_free(w->t, p);
}

void *wcet_m_aligned(wcet_heap *w, unsigned sc, unsigned variant, size_t align, size_t n)
{
    wcet_marker(align == 64 ? ROW_ALIGNED_64 : ROW_ALIGNED_4096, sc, variant, n);
    return rtm_aligned_alloc(w->h, align, n);
}

void *wcet_m_realloc(wcet_heap *w, enum wcet_row row, unsigned sc, unsigned variant, void *p,
                     size_t n)
{
    wcet_marker(row, sc, variant, n);
    return rtm_realloc(w->h, p, n);
}

/* --- list shapes -------------------------------------------------------- */

const char *const wcet_shape_names[SHAPE_COUNT] = {"alone", "head", "middle", "tail"};

static void plan(wcet_companions *c, size_t size)
{
    if (c->n < MAX_COMPANIONS)
        c->size[c->n++] = size;
}

void wcet_plan_shape(wcet_companions *c, enum wcet_shape sh, size_t u)
{
    switch (sh) {
    case SHAPE_ALONE:
        break;
    case SHAPE_HEAD:
        plan(c, u - 8);
        plan(c, u - 8);
        break;
    case SHAPE_MIDDLE:
        plan(c, u + 8);
        plan(c, u - 8);
        break;
    case SHAPE_TAIL:
        plan(c, u + 8);
        break;
    case SHAPE_COUNT:
        break;
    }
}

int wcet_carve_companions(wcet_heap *w, wcet_companions *c)
{
    for (size_t i = 0; i < c->n; i++)
        TRY(wcet_carve_fenced(w, c->size[i], &c->p[i]));
    return 0;
}

void wcet_free_companions(wcet_heap *w, wcet_companions *c)
{
    for (size_t i = 0; i < c->n; i++)
        wcet_raw_free(w, c->p[i]);
}
