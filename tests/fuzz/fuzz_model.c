// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_model.c -- the engine of fuzz_ops and fuzz_misuse (see
 * fuzz_model.h). The input picks an algorithm from rtm_algorithms() with
 * its parameter, a region size and start, then spells operations on that
 * heap through the generic API; a shadow model knows every live block.
 *
 * After every step the engine verifies what the headers promise:
 *  - every live block's contents (a pattern derived from the block's id,
 *    written over its whole usable size), usable size stable while live;
 *  - new blocks: aligned (8, or the requested alignment, kept by realloc),
 *    inside a region the heap was given (headers included), overlapping no
 *    live block (nor its header), usable >= requested;
 *  - stats exact: live_blocks, used_bytes = sum of usable sizes,
 *    failed_allocs = refusals with ENOMEM seen, peak_used_bytes within what
 *    the caller could observe, arena_bytes = bytes given, largest_free <=
 *    free_bytes, free + used <= arena;
 *  - rtm_heap_check() == 0;
 *  - largest_free honest: rtm_alloc(h, largest_free) succeeds (then freed),
 *    rtm_alloc(h, largest_free + 1) fails with ENOMEM; a plain request
 *    succeeds only if it is <= largest_free, and for every algorithm but
 *    slab (whose header promises less) always when it is;
 *  - freeing everything (or a reset) gives back the fresh heap's free_bytes
 *    and largest_free;
 *  - the error handler hears nothing, except exactly one report for each
 *    misuse call of fuzz_misuse, after which the stats are unchanged.
 * Reading the stats has an effect on one heap: tlsf_cached coalesces its
 * cache. For half its inputs the engine reads them every 2 to 14 steps
 * only (stats_every), so blocks stay cached across steps and misuse meets
 * cached blocks; the checks that need the stats from just before an
 * operation (honesty, the probe, unchanged stats) then run on the steps
 * after a read, the others after every step.
 *
 * Which misuse an algorithm is sent follows its header (table in
 * tests/fuzz/README.md): TLSF documents as undefined a pointer whose 4
 * bytes below pass its header checks, so it is sent stale pointers only
 * while no live block has covered their old header since, and other
 * pointers only when the word below them is a header no used block can
 * have (FREE set, or a span below the minimum or beyond all its memory);
 * half-fit reads a 16-byte header below a 16-aligned pointer and
 * documents "a header that is not a used block's (or an aligned payload's
 * shim)" as what it detects, so it is not sent pointers whose state word
 * (8 bytes below) holds the used-block or the shim mark.
 * xvmalloc, the same way: its used tag is a mark XOR the block's unit
 * offset in its page, so it is not sent pointers whose word below could be
 * any block's used tag (src/heaps/xvmalloc_layout.h).
 * Pool, buddy, slab and heapmem detect every pointer that is not a live
 * block start (bitmaps and page maps), so they get every kind.
 *
 * On the first broken promise the engine prints the algorithm, the step,
 * what broke and the last operations, then abort()s: libFuzzer saves the
 * input as crash-<sha1>, which replays the run exactly (addresses aside).
 */
#include "fuzz_model.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rtmem.h"

/* White-box constants, from the layouts the headers describe in words:
 * a TLSF header's FREE bit and span mask (src/heaps/tlsf_layout.h), the
 * half-fit used-block mark (src/heaps/halffit_layout.h). */
#include "heaps/halffit_layout.h"
#include "heaps/xvmalloc_layout.h"
#include "heaps/tlsf_layout.h"

#define MAX_LIVE   256u
#define MAX_STALE  64u
#define MAX_POOLS  4u /* regions: the first one and up to 3 added */
#define MAX_STEPS  4000u
#define TRACE_LEN  16u
#define OTHER_LIVE 4u

/* --- what each algorithm promises --------------------------------------- */

enum guard {
    GUARD_NONE,        /* every pointer that is not a live block start is detected */
    GUARD_TLSF,        /* see the file comment                                      */
    GUARD_TLSF_CACHED, /* as TLSF; and a recent free still cached (its header
                          says used, its first word holds the cache's tag) is a
                          double free the cache detects, so it is sent too     */
    GUARD_HALFFIT,     /* see the file comment                                      */
    GUARD_XV,          /* as half-fit; a used tag is XV_USED ^ the block's offset  */
};

typedef struct algo_caps {
    const char *name;
    int known;         /* a name this file knows; unknown: no misuse, basic checks */
    int exact_largest; /* a plain alloc(n) succeeds iff n <= largest_free          */
    int align_enotsup; /* an alignment never possible: ENOTSUP, not counted        */
    int add_pool;      /* rtm_heap_add_pool works (else ENOTSUP)                   */
    size_t overhead;   /* header bytes below each payload                          */
    enum guard guard;  /* misuse: which pointers may be sent                       */
    int reset_detects; /* blocks live at a reset are detected when freed later     */
} algo_caps;

/* Every algorithm validates free, realloc and usable_size alike (the
 * contract of include/rtmem.h), so a misuse pointer goes to any of them. */
static const algo_caps known_caps[] = {
    {"tlsf", 1, 1, 0, 1, RTM_TLSF_HEADER_BYTES, GUARD_TLSF, 0},
    /* TLSF's promises kept with the cache: stats coalesce it, a refusal
     * coalesces and retries, frees are validated by TLSF's checks */
    {"tlsf_cached", 1, 1, 0, 1, RTM_TLSF_HEADER_BYTES, GUARD_TLSF_CACHED, 0},
    {"pool", 1, 1, 1, 0, 0, GUARD_NONE, 1},
    {"buddy", 1, 1, 1, 0, 0, GUARD_NONE, 1},
    {"halffit", 1, 1, 1, 0, RTM_HALFFIT_HEADER_BYTES, GUARD_HALFFIT, 0},
    {"slab", 1, 0, 1, 0, 0, GUARD_NONE, 1},
    {"heapmem", 1, 1, 1, 0, 0, GUARD_NONE, 1},
    {"xvmalloc", 1, 1, 1, 0, XV_HDR, GUARD_XV, 1},
};

/* --- the error handler -------------------------------------------------- */

static struct {
    unsigned long count;
    rtm_error_kind kind;
    const void *heap, *ptr;
    const char *detail;
} rep;

static void on_error(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                     void *arg)
{
    (void)arg;
    rep.count++;
    rep.kind = kind;
    rep.heap = heap;
    rep.ptr = ptr;
    rep.detail = detail;
}

/* --- the model ---------------------------------------------------------- */

typedef struct live {
    unsigned char *p;
    size_t req, usable, align;
    uint64_t id;
} live;

typedef struct stale {
    unsigned char *p;
    int tainted; /* a live block covered its old header since it was freed */
    int reset;   /* the heap was reset since: no longer cached, header stale */
} stale;

typedef struct region {
    unsigned char *raw, *mem;
    size_t bytes;
} region;

typedef struct trace_entry {
    size_t step;
    const char *op;
    size_t a, b;
    const void *p, *q;
} trace_entry;

typedef struct model {
    fz_in in;
    int misuse;
    const algo_caps *caps;
    char spec[48];
    rtm_heap *h;
    region reg[MAX_POOLS];
    size_t nreg;
    size_t tail; /* bytes reserved after the first region for an adjacent pool */
    int tail_used;

    live blk[MAX_LIVE];
    size_t n;
    stale st[MAX_STALE];
    size_t nst, st_next, st_latest;

    size_t used, failed, peak_lo, peak_hi, arena;
    rtm_stats last;
    int last_fresh;       /* `last` was read after the latest operation   */
    unsigned stats_every; /* read the stats after every k-th step (1: each) */
    rtm_stats empty_ref;  /* free_bytes / largest_free of the empty heap */
    int empty_ref_valid;
    uint64_t next_id;
    size_t step;

    /* another heap whose blocks are foreign to this one (misuse) */
    rtm_heap *other;
    unsigned char *other_raw;
    live other_blk[OTHER_LIVE];

    trace_entry trace[TRACE_LEN];
    size_t ntrace;
} model;

static model *cur; /* for the failure report */

/* What the runs sent, by algorithm and misuse kind: printed at exit when
 * RTMEM_FUZZ_VERBOSE is set, to see that every kind is reached. */
#define CAPS_COUNT (sizeof known_caps / sizeof known_caps[0])
static unsigned long sent[CAPS_COUNT + 1u][4], inputs[CAPS_COUNT + 1u];

static size_t caps_index(const algo_caps *c)
{
    size_t i = (size_t)(c - known_caps);
    return i < CAPS_COUNT ? i : CAPS_COUNT;
}

static void print_counts(void)
{
    static const char *const kinds[4] = {"foreign", "arena", "interior", "stale"};
    for (size_t i = 0; i <= CAPS_COUNT; i++) {
        fprintf(stderr, "%-8s %8lu inputs", i < CAPS_COUNT ? known_caps[i].name : "other",
                inputs[i]);
        for (size_t k = 0; k < 4u; k++)
            fprintf(stderr, ", %s %lu", kinds[k], sent[i][k]);
        fputc('\n', stderr);
    }
}

static void trace(model *m, const char *op, size_t a, size_t b, const void *p, const void *q)
{
    trace_entry *e = &m->trace[m->ntrace++ % TRACE_LEN];
    e->step = m->step;
    e->op = op;
    e->a = a;
    e->b = b;
    e->p = p;
    e->q = q;
}

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static _Noreturn void
fail(const char *fmt, ...)
{
    model *m = cur;
    va_list ap;
    fprintf(stderr, "\nfuzz_model FAIL [%s%s] at step %zu (%zu live blocks): ", m->spec,
            m->misuse ? ", misuse" : "", m->step, m->n);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    for (size_t i = 0; i < m->nreg; i++)
        fprintf(stderr, "  region %zu: [%p, +%zu)\n", i, (void *)m->reg[i].mem, m->reg[i].bytes);
    fprintf(stderr, "  last operations, oldest first:\n");
    size_t first = m->ntrace > TRACE_LEN ? m->ntrace - TRACE_LEN : 0;
    for (size_t i = first; i < m->ntrace; i++) {
        const trace_entry *e = &m->trace[i % TRACE_LEN];
        fprintf(stderr, "    step %zu: %s(a=%zu, b=%zu, p=%p) -> %p\n", e->step, e->op, e->a, e->b,
                e->p, e->q);
    }
    if (rep.count != 0)
        fprintf(stderr, "  last report: kind %d, heap %p, ptr %p: %s\n", (int)rep.kind, rep.heap,
                rep.ptr, rep.detail ? rep.detail : "");
    fflush(stderr);
    abort();
}

/* --- contents ----------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

#define PATTERN_STEP 0x9E3779B97F4A7C15u

/* Derived from the block's id, not its address, so a block that realloc
 * moved still verifies at its new place. */
static void pattern_fill(unsigned char *dst, size_t n, uint64_t id)
{
    uint64_t w = mix(id);
    size_t i = 0;
    for (; i + 8u <= n; i += 8u, w += PATTERN_STEP)
        memcpy(dst + i, &w, 8u);
    for (; i < n; i++, w >>= 8)
        dst[i] = (unsigned char)w;
}

/* Offset of the first damaged byte, or SIZE_MAX. A prefix of a filled block
 * verifies too (little-endian: the tail bytes are the next word's low ones). */
static size_t pattern_damage(const unsigned char *src, size_t n, uint64_t id)
{
    uint64_t w = mix(id);
    size_t i = 0;
    for (; i + 8u <= n; i += 8u, w += PATTERN_STEP) {
        unsigned char want[8];
        memcpy(want, &w, 8u);
        if (memcmp(src + i, want, 8u) != 0) {
            size_t j = 0;
            while (src[i + j] == want[j])
                j++;
            return i + j;
        }
    }
    for (; i < n; i++, w >>= 8)
        if (src[i] != (unsigned char)w)
            return i;
    return SIZE_MAX;
}

static void verify_block(const live *b, const unsigned char *at, size_t n, const char *when)
{
    size_t bad = pattern_damage(at, n, b->id);
    if (bad != SIZE_MAX)
        fail("%s: block %p (requested %zu, usable %zu, align %zu, id %llu) damaged at offset "
             "%zu of %zu",
             when, (void *)b->p, b->req, b->usable, b->align, (unsigned long long)b->id, bad, n);
}

/* --- the shadow record -------------------------------------------------- */

static long find_live(const model *m, const void *p)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->blk[i].p == p)
            return (long)i;
    return -1;
}

static size_t extent(size_t usable) { return usable ? usable : 1u; }

static const region *region_of(const model *m, uintptr_t lo, uintptr_t hi)
{
    for (size_t i = 0; i < m->nreg; i++) {
        uintptr_t base = (uintptr_t)m->reg[i].mem;
        if (lo >= base && hi <= base + m->reg[i].bytes && lo <= hi)
            return &m->reg[i];
    }
    return NULL;
}

/* A block the heap just handed out (p, usable): inside a region with its
 * header, overlapping no live block or header. */
static void check_placement(model *m, const unsigned char *p, size_t usable, const char *what)
{
    size_t gap = m->caps->overhead;
    uintptr_t lo = (uintptr_t)p - gap, hi = (uintptr_t)p + usable;
    if (region_of(m, lo, hi) == NULL)
        fail("%s %p (usable %zu, %zu-byte header) is not inside a region of the heap", what,
             (const void *)p, usable, gap);
    for (size_t i = 0; i < m->n; i++) {
        const live *b = &m->blk[i];
        uintptr_t blo = (uintptr_t)b->p - gap, bhi = (uintptr_t)b->p + extent(b->usable);
        if (lo < bhi && blo < (uintptr_t)p + extent(usable))
            fail("%s %p (usable %zu) overlaps live block %p (usable %zu) or a header", what,
                 (const void *)p, usable, (void *)b->p, b->usable);
    }
}

/* TLSF: a stale pointer whose old header a live block covers is no longer
 * one the header promises to detect. */
static void taint_stale(model *m, const unsigned char *p, size_t usable)
{
    uintptr_t lo = (uintptr_t)p - m->caps->overhead, hi = (uintptr_t)p + extent(usable);
    for (size_t i = 0; i < m->nst; i++) {
        uintptr_t s = (uintptr_t)m->st[i].p;
        if (s - 4u < hi && lo < s)
            m->st[i].tainted = 1;
    }
}

static void push_stale(model *m, unsigned char *p)
{
    for (size_t i = 0; i < m->nst; i++)
        if (m->st[i].p == p) {
            m->st[i].tainted = 0;
            m->st[i].reset = 0;
            m->st_latest = i;
            return;
        }
    size_t at = m->nst < MAX_STALE ? m->nst++ : m->st_next++ % MAX_STALE;
    m->st[at].p = p;
    m->st[at].tainted = 0;
    m->st[at].reset = 0;
    m->st_latest = at;
}

static void note_peak(model *m, size_t used)
{
    if (used > m->peak_lo)
        m->peak_lo = used;
    if (used > m->peak_hi)
        m->peak_hi = used;
}

static void add_block(model *m, unsigned char *p, size_t req, size_t align, const char *what)
{
    size_t usable = rtm_usable_size(m->h, p);
    if (usable < req)
        fail("%s: usable_size(%p) = %zu < requested %zu", what, (void *)p, usable, req);
    if ((uintptr_t)p % align != 0)
        fail("%s: block %p (requested %zu) not aligned to %zu", what, (void *)p, req, align);
    if (find_live(m, p) >= 0)
        fail("%s: block %p handed out while live", what, (void *)p);
    check_placement(m, p, usable, what);
    taint_stale(m, p, usable);
    live *b = &m->blk[m->n++];
    b->p = p;
    b->req = req;
    b->usable = usable;
    b->align = align;
    b->id = ++m->next_id;
    m->used += usable;
    note_peak(m, m->used);
    pattern_fill(p, usable, b->id);
}

static void remove_block(model *m, size_t idx)
{
    m->used -= m->blk[idx].usable;
    m->blk[idx] = m->blk[--m->n];
}

/* --- verification after each step -------------------------------------- */

static void check_stats(model *m, const rtm_stats *st, size_t live_count, size_t used,
                        const char *when)
{
    if (st->live_blocks != live_count)
        fail("%s: stats.live_blocks %zu, shadow %zu", when, st->live_blocks, live_count);
    if (st->used_bytes != used)
        fail("%s: stats.used_bytes %zu, sum of usable sizes %zu", when, st->used_bytes, used);
    if (st->failed_allocs != m->failed)
        fail("%s: stats.failed_allocs %zu, refusals seen %zu", when, st->failed_allocs, m->failed);
    if (st->peak_used_bytes < m->peak_lo || st->peak_used_bytes > m->peak_hi)
        fail("%s: stats.peak_used_bytes %zu outside [%zu, %zu]", when, st->peak_used_bytes,
             m->peak_lo, m->peak_hi);
    if (st->arena_bytes != m->arena)
        fail("%s: stats.arena_bytes %zu, bytes given %zu", when, st->arena_bytes, m->arena);
    if (st->largest_free > st->free_bytes)
        fail("%s: largest_free %zu > free_bytes %zu", when, st->largest_free, st->free_bytes);
    if (st->free_bytes + st->used_bytes > st->arena_bytes)
        fail("%s: free %zu + used %zu > arena %zu", when, st->free_bytes, st->used_bytes,
             st->arena_bytes);
}

static void count_free_visit(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    *(size_t *)arg += used == 0;
}

/* An empty heap of several pools (add_pool), each one whole free block
 * again: which of them a TLSF list shows first depends on the order of the
 * frees (LIFO lists, docs/TLSF.md "What remains"), so largest_free may be
 * another pool's block. Never with a single free block. */
static int several_free_blocks(model *m)
{
    size_t n = 0;
    return rtm_heap_walk(m->h, count_free_visit, &n) == 0 && n >= 2;
}

static void check_empty_ref(model *m, const rtm_stats *st, const char *when)
{
    if (!m->empty_ref_valid) {
        m->empty_ref = *st;
        m->empty_ref_valid = 1;
        return;
    }
    if (st->free_bytes != m->empty_ref.free_bytes ||
        (st->largest_free != m->empty_ref.largest_free && !several_free_blocks(m)))
        fail("%s: empty heap has free_bytes %zu, largest_free %zu; the fresh one had %zu, %zu",
             when, st->free_bytes, st->largest_free, m->empty_ref.free_bytes,
             m->empty_ref.largest_free);
}

/* with_stats == 0 (a step between two reads of the stats): everything but
 * the stats. */
static void verify_some(model *m, const char *when, int with_stats)
{
    rtm_stats st;
    memset(&st, 0, sizeof st);
    if (with_stats) {
        st = rtm_heap_stats(m->h);
        check_stats(m, &st, m->n, m->used, when);
    }
    for (size_t i = 0; i < m->n; i++) {
        const live *b = &m->blk[i];
        size_t u = rtm_usable_size(m->h, b->p);
        if (u != b->usable)
            fail("%s: usable_size(%p) changed from %zu to %zu", when, (void *)b->p, b->usable, u);
        verify_block(b, b->p, b->usable, when);
    }
    if (rtm_heap_check(m->h) != 0)
        fail("%s: rtm_heap_check failed (errno %d)", when, errno);
    m->last_fresh = with_stats;
    if (!with_stats)
        return;
    if (m->n == 0)
        check_empty_ref(m, &st, when);
    m->last = st;
}

static void verify(model *m, const char *when) { verify_some(m, when, 1); }

/* largest_free is what alloc grants: alloc(lf) works, alloc(lf + 1) not. */
static void probe(model *m)
{
    size_t lf = m->last.largest_free;
    if (lf > 0 && m->n < MAX_LIVE) {
        errno = 0;
        unsigned char *p = rtm_alloc(m->h, lf);
        trace(m, "probe_alloc", lf, 0, NULL, p);
        if (p == NULL)
            fail("alloc(largest_free = %zu) refused (errno %d)", lf, errno);
        size_t u = rtm_usable_size(m->h, p);
        if (u < lf || (uintptr_t)p % RTM_ALIGN != 0)
            fail("alloc(largest_free = %zu) gave %p with usable %zu", lf, (void *)p, u);
        check_placement(m, p, u, "probe block");
        taint_stale(m, p, u);
        memset(p, 0xA5, u < 16u ? u : 16u);
        memset(p + u - (u < 16u ? u : 16u), 0x5A, u < 16u ? u : 16u);
        note_peak(m, m->used + u);
        rtm_stats st = rtm_heap_stats(m->h);
        check_stats(m, &st, m->n + 1u, m->used + u, "with the probe block");
        rtm_free(m->h, p);
        trace(m, "probe_free", u, 0, p, NULL);
        /* Giving the block back may bring a larger block to a TLSF list's
         * head (docs/TLSF.md, "What remains"): largest_free may grow, and
         * the refusal below is checked against the new value. */
        size_t again = rtm_heap_stats(m->h).largest_free;
        if (again < lf)
            fail("largest_free shrank from %zu to %zu after alloc(largest_free) + free", lf, again);
        lf = again;
    }
    errno = 0;
    void *q = rtm_alloc(m->h, lf + 1u);
    trace(m, "probe_over", lf + 1u, 0, NULL, q);
    if (q != NULL)
        fail("alloc(largest_free + 1 = %zu) succeeded", lf + 1u);
    if (errno != ENOMEM)
        fail("alloc(largest_free + 1) refused with errno %d, not ENOMEM", errno);
    m->failed++;
    m->last = rtm_heap_stats(m->h);
    check_stats(m, &m->last, m->n, m->used, "after the probes");
}

/* --- drawing sizes ------------------------------------------------------ */

static size_t draw_size(model *m)
{
    fz_in *in = &m->in;
    size_t lf = m->last.largest_free;
    uint8_t mode = fz_u8(in);
    switch (mode % 10u) {
    case 0:
    case 1:
    case 2:
        return fz_u8(in) % 65u;
    case 3:
    case 4:
        return fz_u16(in) % 4096u;
    case 5:
        return (size_t)1 << (fz_u8(in) % 17u);
    case 6: {
        size_t p2 = (size_t)1 << (fz_u8(in) % 17u);
        size_t d = fz_u8(in) % 33u;
        return d < 16u ? (p2 > 16u - d ? p2 - (16u - d) : 0) : p2 + (d - 16u);
    }
    case 7: {
        size_t d = fz_u8(in) % 17u;
        return d < 8u ? (lf > 8u - d ? lf - (8u - d) : 0) : lf + (d - 8u);
    }
    case 8:
        return fz_u16(in);
    default:
        switch (fz_u8(in) % 6u) {
        case 0:
            return SIZE_MAX;
        case 1:
            return SIZE_MAX - 7u;
        case 2:
            return SIZE_MAX / 2u + 1u;
        case 3:
            return m->arena + 1u;
        case 4:
            return (size_t)0xFFFFFFF4u + 1u;
        default:
            return lf * 2u + 1u;
        }
    }
}

static size_t pick(model *m, size_t n) { return n ? fz_u16(&m->in) % n : 0; }

/* --- correct operations -------------------------------------------------- */

/* A refusal of a plain request: ENOMEM, counted, and justified. */
static void refused(model *m, const char *what, size_t size, const rtm_stats *pre)
{
    if (errno != ENOMEM)
        fail("%s(%zu) refused with errno %d, not ENOMEM", what, size, errno);
    m->failed++;
    if (m->last_fresh && m->caps->exact_largest && pre->largest_free > 0 &&
        size <= pre->largest_free)
        fail("%s(%zu) refused although largest_free was %zu", what, size, pre->largest_free);
}

static void granted(const model *m, const char *what, size_t size, const rtm_stats *pre)
{
    if (!m->last_fresh)
        return; /* no stats from just before the call */
    if (size > pre->largest_free || pre->largest_free == 0)
        fail("%s(%zu) succeeded although largest_free was %zu", what, size, pre->largest_free);
}

static void op_alloc(model *m)
{
    size_t size = draw_size(m);
    rtm_stats pre = m->last;
    errno = 0;
    unsigned char *p = rtm_alloc(m->h, size);
    trace(m, "alloc", size, 0, NULL, p);
    if (p == NULL) {
        refused(m, "alloc", size, &pre);
        return;
    }
    granted(m, "alloc", size, &pre);
    add_block(m, p, size, RTM_ALIGN, "alloc");
}

static void op_aligned(model *m)
{
    uint8_t a = fz_u8(&m->in);
    size_t size = draw_size(m);
    rtm_stats pre = m->last;
    int bad = (a & 0xE0u) == 0xE0u; /* one in eight: not a power of two */
    size_t align = bad ? (size_t)3u << (a % 20u) : (size_t)1 << (a % 24u);
    errno = 0;
    unsigned char *p = rtm_aligned_alloc(m->h, align, size);
    trace(m, "aligned_alloc", align, size, NULL, p);
    if (bad) {
        if (p != NULL || errno != EINVAL)
            fail("aligned_alloc(%zu, %zu): %p errno %d, expected NULL EINVAL", align, size,
                 (void *)p, errno);
        return;
    }
    if (p == NULL) {
        if (errno == ENOTSUP && m->caps->align_enotsup && align > RTM_ALIGN)
            return; /* an alignment this heap never gives: not counted */
        if (errno != ENOMEM)
            fail("aligned_alloc(%zu, %zu) refused with errno %d", align, size, errno);
        m->failed++;
        return;
    }
    granted(m, "aligned_alloc", size, &pre);
    add_block(m, p, size, align > RTM_ALIGN ? align : RTM_ALIGN, "aligned_alloc");
}

/* Forgets block idx, which the heap has just freed (its contents were
 * verified before the call). */
static void forget_live(model *m, size_t idx)
{
    unsigned char *p = m->blk[idx].p;
    remove_block(m, idx);
    push_stale(m, p);
}

static void op_realloc_null(model *m)
{
    size_t size = draw_size(m);
    rtm_stats pre = m->last;
    errno = 0;
    unsigned char *p = rtm_realloc(m->h, NULL, size);
    trace(m, "realloc_null", size, 0, NULL, p);
    if (p == NULL) {
        refused(m, "realloc(NULL, n)", size, &pre);
        return;
    }
    granted(m, "realloc(NULL, n)", size, &pre);
    add_block(m, p, size, RTM_ALIGN, "realloc(NULL, n)");
}

static void op_realloc_zero(model *m, size_t idx)
{
    live b = m->blk[idx];
    verify_block(&b, b.p, b.usable, "before realloc(p, 0)");
    errno = EDOM; /* a value realloc has no reason to write */
    void *q = rtm_realloc(m->h, b.p, 0);
    trace(m, "realloc_zero", 0, 0, b.p, q);
    if (q != NULL || errno != EDOM)
        fail("realloc(%p, 0) = %p, errno %d: expected NULL, errno untouched", (void *)b.p, q,
             errno);
    forget_live(m, idx);
}

static size_t draw_realloc_size(model *m, const live *b)
{
    uint8_t mode = fz_u8(&m->in);
    switch (mode % 6u) {
    case 0:
        return fz_u16(&m->in) % (b->usable + 1u);
    case 1:
        return b->usable;
    case 2:
        return b->usable + 1u + fz_u8(&m->in);
    case 3:
        return b->usable * 2u + fz_u16(&m->in) % 64u;
    default:
        return draw_size(m);
    }
}

static void op_realloc(model *m)
{
    if (m->n == 0) {
        op_realloc_null(m);
        return;
    }
    size_t idx = pick(m, m->n);
    live b = m->blk[idx];
    size_t size = draw_realloc_size(m, &b);
    if (size == 0) {
        op_realloc_zero(m, idx);
        return;
    }
    verify_block(&b, b.p, b.usable, "before realloc");
    rtm_stats pre = m->last;
    errno = 0;
    unsigned char *q = rtm_realloc(m->h, b.p, size);
    trace(m, "realloc", size, b.usable, b.p, q);
    if (q == NULL) {
        if (errno != ENOMEM)
            fail("realloc(%p, %zu) refused with errno %d", (void *)b.p, size, errno);
        m->failed++;
        if (m->last_fresh && m->caps->exact_largest && b.align <= RTM_ALIGN &&
            pre.largest_free > 0 && size <= pre.largest_free)
            fail("realloc(%p, %zu) refused although largest_free was %zu", (void *)b.p, size,
                 pre.largest_free);
        if (rtm_usable_size(m->h, b.p) != b.usable)
            fail("failed realloc changed usable_size of %p", (void *)b.p);
        verify_block(&b, b.p, b.usable, "after a failed realloc");
        return;
    }
    if ((uintptr_t)q % b.align != 0)
        fail("realloc(%p [align %zu], %zu) = %p: alignment lost", (void *)b.p, b.align, size,
             (void *)q);
    if (size <= b.usable && q != b.p)
        fail("realloc(%p, %zu) shrinking a block of usable %zu moved it to %p", (void *)b.p, size,
             b.usable, (void *)q);
    size_t keep = size < b.usable ? size : b.usable;
    verify_block(&b, q, keep, q == b.p ? "realloc in place" : "realloc moved");
    remove_block(m, idx);
    if (q != b.p) {
        size_t both = m->used + b.usable + rtm_usable_size(m->h, q);
        if (both > m->peak_hi)
            m->peak_hi = both; /* the instant both blocks existed */
        push_stale(m, b.p);
    }
    add_block(m, q, size, b.align, "realloc");
}

static void op_free(model *m)
{
    if (m->n == 0) {
        rtm_free(m->h, NULL);
        trace(m, "free_null", 0, 0, NULL, NULL);
        return;
    }
    size_t idx = pick(m, m->n);
    live b = m->blk[idx];
    verify_block(&b, b.p, b.usable, "before free");
    rtm_free(m->h, b.p);
    trace(m, "free", b.usable, 0, b.p, NULL);
    forget_live(m, idx);
}

static void op_usable(model *m)
{
    if (rtm_usable_size(m->h, NULL) != 0)
        fail("usable_size(NULL) != 0");
    if (m->n == 0)
        return;
    const live *b = &m->blk[pick(m, m->n)];
    if (rtm_usable_size(m->h, b->p) != b->usable)
        fail("usable_size(%p) changed", (void *)b->p);
}

static void op_reset(model *m)
{
    int rc = rtm_heap_reset(m->h);
    trace(m, "reset", (size_t)rc, m->n, NULL, NULL);
    if (rc != 0)
        fail("rtm_heap_reset = %d (errno %d)", rc, errno);
    for (size_t i = 0; i < m->nst; i++)
        m->st[i].reset = 1;
    for (size_t i = 0; i < m->n; i++)
        if (m->caps->reset_detects)
            push_stale(m, m->blk[i].p);
    m->n = 0;
    m->used = 0;
    m->failed = 0;
    m->peak_lo = m->peak_hi = 0;
}

static unsigned char *new_region(model *m, size_t bytes, size_t misalign)
{
    region *r = &m->reg[m->nreg];
    r->raw = malloc(bytes + misalign);
    if (r->raw == NULL)
        abort();
    r->mem = r->raw + misalign;
    r->bytes = bytes;
    return r->mem;
}

static void op_add_pool(model *m)
{
    uint8_t mode = fz_u8(&m->in);
    size_t bytes = (mode & 1u) ? fz_u8(&m->in) % 96u : 96u + fz_u16(&m->in) % 16384u;
    int adjacent = (mode & 2u) != 0 && m->tail != 0 && !m->tail_used;
    if (m->nreg == MAX_POOLS)
        return;
    unsigned char *mem;
    if (adjacent) {
        /* Right after the first region (0-15 bytes later): the pool joins
         * TLSF's fast range. */
        size_t gap = (mode >> 2) % 16u;
        if (gap + bytes > m->tail)
            bytes = m->tail - gap;
        mem = m->reg[0].mem + m->reg[0].bytes + gap;
    } else {
        mem = new_region(m, bytes, (mode >> 2) % 8u);
    }
    errno = 0;
    int rc = rtm_heap_add_pool(m->h, mem, bytes);
    trace(m, "add_pool", bytes, (size_t)adjacent, mem, (void *)(intptr_t)rc);
    if (!m->caps->add_pool) {
        if (rc != -1 || errno != ENOTSUP)
            fail("add_pool on %s: %d errno %d, expected -1 ENOTSUP", m->spec, rc, errno);
    } else if (rc != 0 && (bytes >= 96u || errno != EINVAL)) {
        fail("add_pool(%p, %zu) = %d errno %d", (void *)mem, bytes, rc, errno);
    }
    if (rc != 0) {
        if (!adjacent)
            free(m->reg[m->nreg].raw);
        return;
    }
    if (adjacent) {
        m->tail_used = 1;
        m->reg[m->nreg].raw = NULL;
        m->reg[m->nreg].mem = mem;
        m->reg[m->nreg].bytes = bytes;
    }
    m->nreg++;
    m->arena += bytes;
    m->empty_ref_valid = 0; /* the fresh heap is another one now */
}

typedef struct walk_acc {
    model *m;
    size_t used_count, used_sum, free_sum, free_max;
    unsigned char seen[MAX_LIVE];
    const char *error;
    const void *at;
} walk_acc;

static void walk_visit(void *ptr, size_t usable, int used, void *arg)
{
    walk_acc *acc = arg;
    if (acc->error != NULL)
        return;
    if (!used) {
        acc->free_sum += usable;
        if (usable > acc->free_max)
            acc->free_max = usable;
        return;
    }
    acc->used_count++;
    acc->used_sum += usable;
    long i = find_live(acc->m, ptr);
    acc->at = ptr;
    if (i < 0)
        acc->error = "a used block that is not live";
    else if (acc->seen[i]++)
        acc->error = "a block twice";
    else if (acc->m->blk[i].usable != usable)
        acc->error = "a usable size other than usable_size's";
}

static void op_walk(model *m)
{
    walk_acc acc;
    memset(&acc, 0, sizeof acc);
    acc.m = m;
    int rc = rtm_heap_walk(m->h, walk_visit, &acc);
    trace(m, "walk", (size_t)rc, 0, NULL, NULL);
    if (rc != 0)
        fail("rtm_heap_walk = %d (errno %d)", rc, errno);
    if (acc.error != NULL)
        fail("walk reports %s: %p", acc.error, acc.at);
    if (acc.used_count != m->n)
        fail("walk found %zu used blocks, %zu live", acc.used_count, m->n);
    rtm_stats st = rtm_heap_stats(m->h);
    if (acc.free_sum != st.free_bytes || acc.used_sum != st.used_bytes)
        fail("walk sums: free %zu used %zu; stats: free %zu used %zu", acc.free_sum, acc.used_sum,
             st.free_bytes, st.used_bytes);
    if (st.largest_free > acc.free_max)
        fail("largest_free %zu > the largest free block walked, %zu", st.largest_free,
             acc.free_max);
}

/* --- misuse ------------------------------------------------------------- */

static uint64_t static_buf[64]; /* "a pointer into a static array" */

/* May this pointer be sent to the heap as a misuse? See the file comment. */
static int may_send(const model *m, const unsigned char *t)
{
    if (find_live(m, t) >= 0)
        return 0; /* not misuse: a live block */
    uintptr_t a = (uintptr_t)t;
    const region *r = region_of(m, a, a);
    if (r == NULL || a < (uintptr_t)r->mem + 8u)
        return 1; /* outside (or at the very start of) the heap's memory: never read */
    uint32_t w;
    memcpy(&w, t - 4, sizeof w);
    switch (m->caps->guard) {
    case GUARD_TLSF:
    case GUARD_TLSF_CACHED: {
        if (a % 8u != 0)
            return 1;
        /* Beyond every byte the heap has: past the end of any pool, also
         * of TLSF's fast range, which spans adjacent pools. */
        size_t span = w & SPAN_MASK;
        return (w & BLOCK_FREE) != 0 || span < MIN_SPAN || span > m->arena + 64u;
    }
    case GUARD_HALFFIT: /* the state word, 8 bytes below */
        if (a < (uintptr_t)r->mem + 16u)
            return 1;
        memcpy(&w, t - 8, sizeof w);
        return w != HF_USED && w != HF_SHIM;
    case GUARD_XV: /* any used tag: XV_USED ^ an offset below 8192 units */
        return ((w ^ XV_USED) >> 13) != 0;
    default:
        return 1;
    }
}

/* A pointer outside every region of the heap. */
static unsigned char *foreign_pointer(model *m, unsigned char *stack_buf, size_t stack_bytes)
{
    uint8_t src = fz_u8(&m->in);
    size_t off = fz_u8(&m->in);
    switch (src % 4u) {
    case 0:
        return stack_buf + off % stack_bytes;
    case 1:
        return (unsigned char *)static_buf + off % sizeof static_buf;
    case 2: {
        live *b = &m->other_blk[src / 4u % OTHER_LIVE];
        return b->p + (off % 2u ? off % (b->usable + 1u) : 0);
    }
    default: /* unused bytes of the other heap's region */
        return m->other_raw + off;
    }
}

enum { MIS_FOREIGN, MIS_ARENA, MIS_INTERIOR, MIS_STALE, MIS_KINDS };

/* A misuse pointer of the kind the input names, or NULL when that kind has
 * no candidate the algorithm documents it detects. *outside: the pointer is
 * outside the heap's memory (then the report must say FOREIGN_POINTER). */
static unsigned char *misuse_pointer(model *m, unsigned kind, unsigned char *stack_buf,
                                     size_t stack_bytes, int *outside)
{
    unsigned char *t = NULL;
    *outside = 0;
    switch (kind) {
    case MIS_FOREIGN:
        t = foreign_pointer(m, stack_buf, stack_bytes);
        *outside = region_of(m, (uintptr_t)t, (uintptr_t)t) == NULL;
        break;
    case MIS_ARENA: {
        const region *r = &m->reg[pick(m, m->nreg)];
        t = r->mem + fz_u16(&m->in) % r->bytes;
        break;
    }
    case MIS_INTERIOR:
        if (m->n != 0) {
            const live *b = &m->blk[pick(m, m->n)];
            t = b->p + 1u + fz_u16(&m->in) % (b->usable + 8u);
        }
        break;
    default:
        if (m->nst != 0) {
            uint8_t which = fz_u8(&m->in);
            /* Half the time the latest free: a double free. */
            const stale *s = &m->st[(which & 1u) ? (which >> 1) % m->nst : m->st_latest];
            int tlsf = m->caps->guard == GUARD_TLSF || m->caps->guard == GUARD_TLSF_CACHED;
            if (tlsf && s->tainted)
                return NULL;
            /* Untainted, not reset since, with a used header: the block is
             * still cached (evicted or coalesced, TLSF marks its header
             * free; handed out again, it would be live). */
            if (m->caps->guard == GUARD_TLSF_CACHED && !s->reset && find_live(m, s->p) < 0)
                return s->p;
            t = s->p;
        }
        break;
    }
    if (t == NULL || !may_send(m, t))
        return NULL;
    return t;
}

static int stats_equal(const rtm_stats *a, const rtm_stats *b)
{
    return a->arena_bytes == b->arena_bytes && a->used_bytes == b->used_bytes &&
           a->free_bytes == b->free_bytes && a->largest_free == b->largest_free &&
           a->live_blocks == b->live_blocks && a->peak_used_bytes == b->peak_used_bytes &&
           a->failed_allocs == b->failed_allocs;
}

/* The report a refused misuse must have produced. */
static void expect_one_report(model *m, unsigned long before, const void *t, int outside,
                              const char *what)
{
    unsigned long got = rep.count - before;
    if (got != 1)
        fail("%s(%p): %lu reports to the error handler, expected 1", what, t, got);
    if (outside && rep.kind != RTM_ERR_FOREIGN_POINTER)
        fail("%s(%p) of a foreign pointer reported kind %d", what, t, (int)rep.kind);
    if (rep.kind != RTM_ERR_FOREIGN_POINTER && rep.kind != RTM_ERR_DOUBLE_FREE &&
        rep.kind != RTM_ERR_CORRUPT_HEADER)
        fail("%s(%p) reported kind %d", what, t, (int)rep.kind);
    if (region_of(m, (uintptr_t)rep.heap, (uintptr_t)rep.heap) == NULL)
        fail("%s(%p): the report names heap %p, not inside this heap's regions", what, t, rep.heap);
    (void)m;
}

static void op_misuse(model *m, unsigned char *stack_buf, size_t stack_bytes)
{
    if (!m->caps->known)
        return;
    uint8_t how = fz_u8(&m->in);
    unsigned kind = how % MIS_KINDS;
    unsigned call = (how / MIS_KINDS) % 4u; /* free, realloc, realloc(0), usable_size */
    int outside = 0;
    unsigned char *t = misuse_pointer(m, kind, stack_buf, stack_bytes, &outside);
    if (t == NULL)
        return;
    sent[caps_index(m->caps)][kind]++;
    /* The stats before, without reading them now (that would empty a
     * cache the misuse should meet); without a fresh read, the shadow. */
    rtm_stats pre = m->last;
    unsigned long before = rep.count;
    errno = 0;
    switch (call) {
    case 0:
        rtm_free(m->h, t);
        trace(m, "misuse_free", kind, 0, t, NULL);
        if (errno != EINVAL)
            fail("free(%p) of a misuse pointer (kind %u): errno %d, expected EINVAL", (void *)t,
                 kind, errno);
        expect_one_report(m, before, t, outside, "free");
        break;
    case 1:
    case 2: {
        size_t size = call == 2u ? 0 : 1u + fz_u16(&m->in) % 512u;
        void *q = rtm_realloc(m->h, t, size);
        trace(m, "misuse_realloc", kind, size, t, q);
        if (q != NULL)
            fail("realloc(%p, %zu) of a misuse pointer (kind %u) returned %p", (void *)t, size,
                 kind, q);
        if (size != 0 && errno != EINVAL)
            fail("realloc(%p, %zu) of a misuse pointer: errno %d, expected EINVAL", (void *)t, size,
                 errno);
        expect_one_report(m, before, t, outside, "realloc");
        break;
    }
    default: {
        size_t u = rtm_usable_size(m->h, t);
        trace(m, "misuse_usable", kind, u, t, NULL);
        if (u != 0)
            fail("usable_size(%p) of a misuse pointer (kind %u) = %zu", (void *)t, kind, u);
        if (errno != EINVAL)
            fail("usable_size(%p) of a misuse pointer: errno %d", (void *)t, errno);
        expect_one_report(m, before, t, outside, "usable_size");
        break;
    }
    }
    rtm_stats post = rtm_heap_stats(m->h);
    if (!m->last_fresh)
        check_stats(m, &post, m->n, m->used, "after a refused misuse call");
    else if (!stats_equal(&pre, &post))
        fail("a refused misuse call changed the stats (used %zu -> %zu, live %zu -> %zu, free "
             "%zu -> %zu, failed %zu -> %zu)",
             pre.used_bytes, post.used_bytes, pre.live_blocks, post.live_blocks, pre.free_bytes,
             post.free_bytes, pre.failed_allocs, post.failed_allocs);
    m->last = post;
    m->last_fresh = 1;
}

/* add_pool over memory the heap already has: refused (TLSF: EINVAL, in
 * every build; the others: ENOTSUP), the heap unchanged. */
static void op_add_pool_overlap(model *m)
{
    const region *r = &m->reg[pick(m, m->nreg)];
    size_t at = fz_u16(&m->in) % r->bytes;
    size_t len = r->bytes - at;
    len = len > 96u ? 96u + fz_u16(&m->in) % (len - 95u) : len;
    rtm_stats pre = rtm_heap_stats(m->h);
    unsigned long before = rep.count;
    errno = 0;
    int rc = rtm_heap_add_pool(m->h, r->mem + at, len);
    trace(m, "add_pool_overlap", at, len, r->mem, (void *)(intptr_t)rc);
    int want = m->caps->add_pool ? EINVAL : ENOTSUP;
    if (rc != -1 || errno != want)
        fail("add_pool over [%p, +%zu) inside a pool: %d errno %d, expected -1 errno %d",
             (void *)(r->mem + at), len, rc, errno, want);
    rtm_stats post = rtm_heap_stats(m->h);
    if (!stats_equal(&pre, &post))
        fail("a refused add_pool changed the stats");
    rep.count = before; /* a report is allowed, not promised */
}

/* --- setup -------------------------------------------------------------- */

static const algo_caps *caps_of(const char *name)
{
    static algo_caps unknown;
    for (size_t i = 0; i < sizeof known_caps / sizeof known_caps[0]; i++)
        if (strcmp(known_caps[i].name, name) == 0)
            return &known_caps[i];
    /* An algorithm added after this file: only what every heap promises. */
    unknown.name = name;
    unknown.align_enotsup = 1;
    return &unknown;
}

/* The algorithm's name with a parameter drawn from the input. */
static void choose_spec(model *m, const char *name)
{
    uint8_t sel = fz_u8(&m->in);
    int dflt = sel % 8u == 7u;
    unsigned param = 0;
    if (strcmp(name, "pool") == 0)
        param = 1u + fz_u16(&m->in) % 2048u;
    else if (strcmp(name, "buddy") == 0)
        param = 64u << (sel % 7u);
    else if (strcmp(name, "slab") == 0)
        param = 256u << (sel % 5u);
    else if (strcmp(name, "heapmem") == 0)
        param = 64u << (sel % 7u);
    else if (strcmp(name, "xvmalloc") == 0)
        param = 256u << (sel % 9u);
    else if (strcmp(name, "tlsf_cached") == 0) {
        static const unsigned limits[4] = {4, 16, 128, 352};
        param = limits[(sel >> 3) % 4u];
        /* Its stats coalesce the cache: read them every 2 to 14 steps. */
        m->stats_every = (sel & 0x20u) != 0 ? 2u + (sel >> 6) * 4u : 1u;
    }
    if (param == 0 || dflt)
        snprintf(m->spec, sizeof m->spec, "%s", name);
    else
        snprintf(m->spec, sizeof m->spec, "%s:%u", name, param);
}

static int setup(model *m)
{
    const char *const *names = rtm_algorithms();
    size_t count = 0;
    while (names[count] != NULL)
        count++;
    const char *name = names[fz_u8(&m->in) % count];
    m->caps = caps_of(name);
    choose_spec(m, name);
    size_t min = rtm_min_region(m->spec);
    if (min == 0)
        fail("rtm_min_region(\"%s\") = 0 for a listed algorithm", m->spec);
    size_t bytes = min + fz_u16(&m->in);
    uint8_t shape = fz_u8(&m->in);
    size_t misalign = shape % 64u;
    m->tail = (shape & 0x40u) && m->caps->add_pool ? 4096u : 0;
    region *r = &m->reg[0];
    r->raw = malloc(misalign + bytes + m->tail);
    if (r->raw == NULL)
        abort();
    r->mem = r->raw + misalign;
    r->bytes = bytes;
    m->nreg = 1;
    m->h = rtm_heap_create(m->spec, r->mem, bytes);
    if (m->h == NULL)
        fail("rtm_heap_create(\"%s\", %p, %zu) failed (errno %d), min region %zu", m->spec,
             (void *)r->mem, bytes, errno, min);
    m->arena = bytes;
    return 0;
}

/* Another heap, whose blocks are foreign pointers to the one under test. */
static void setup_other(model *m)
{
    m->other_raw = malloc(4096);
    if (m->other_raw == NULL)
        abort();
    m->other = rtm_heap_create("tlsf", m->other_raw + 512, 4096 - 512);
    if (m->other == NULL)
        abort();
    for (size_t i = 0; i < OTHER_LIVE; i++) {
        live *b = &m->other_blk[i];
        b->p = rtm_alloc(m->other, 40u * (i + 1u));
        if (b->p == NULL)
            abort();
        b->usable = rtm_usable_size(m->other, b->p);
        b->id = 1000000u + i;
        pattern_fill(b->p, b->usable, b->id);
    }
}

static void teardown(model *m)
{
    if (m->other != NULL) {
        for (size_t i = 0; i < OTHER_LIVE; i++)
            verify_block(&m->other_blk[i], m->other_blk[i].p, m->other_blk[i].usable,
                         "the other heap's block");
        if (rtm_heap_check(m->other) != 0)
            fail("the other heap's check failed");
        free(m->other_raw);
    }
    rtm_heap_destroy(m->h);
    for (size_t i = 0; i < m->nreg; i++)
        free(m->reg[i].raw);
}

/* Frees every block (in the order the shadow holds them) at the end, so
 * the empty heap is compared with the fresh one once more. */
static void free_all(model *m)
{
    while (m->n > 0) {
        live b = m->blk[m->n - 1u];
        verify_block(&b, b.p, b.usable, "before the final free");
        rtm_free(m->h, b.p);
        trace(m, "final_free", b.usable, 0, b.p, NULL);
        forget_live(m, m->n - 1u);
    }
    verify(m, "after freeing everything");
}

enum {
    OP_ALLOC,
    OP_ALIGNED,
    OP_REALLOC,
    OP_REALLOC_NULL,
    OP_REALLOC_ZERO,
    OP_FREE,
    OP_FREE2,
    OP_USABLE,
    OP_RESET,
    OP_ADD_POOL,
    OP_WALK,
    OP_CORRECT_COUNT, /* misuse ops follow */
    OP_MISUSE = OP_CORRECT_COUNT,
    OP_MISUSE2,
    OP_MISUSE3,
    OP_ADD_POOL_OVERLAP,
    OP_ALL_COUNT
};

int fz_model_run(const uint8_t *data, size_t size, int misuse)
{
    static model mdl;
    model *m = &mdl;
    memset(m, 0, sizeof *m);
    cur = m;
    memset(&rep, 0, sizeof rep);
    rtm_set_error_handler(on_error, NULL);
    m->in.p = data;
    m->in.n = size;
    m->misuse = misuse;
    uint64_t stack_buf[16]; /* "a stack address" */
    memset(stack_buf, 0x11, sizeof stack_buf);

    static int registered;
    if (!registered && getenv("RTMEM_FUZZ_VERBOSE") != NULL)
        registered = atexit(print_counts) == 0;
    setup(m);
    inputs[caps_index(m->caps)]++;
    if (misuse)
        setup_other(m);
    verify(m, "fresh heap");
    probe(m);
    unsigned nops = misuse ? OP_ALL_COUNT : OP_CORRECT_COUNT;
    for (m->step = 1; fz_left(&m->in) && m->step <= MAX_STEPS; m->step++) {
        unsigned op = fz_u8(&m->in) % nops;
        unsigned long before = rep.count;
        if (m->n == MAX_LIVE && op <= OP_REALLOC_NULL)
            op = OP_FREE;
        switch (op) {
        case OP_ALLOC:
            op_alloc(m);
            break;
        case OP_ALIGNED:
            op_aligned(m);
            break;
        case OP_REALLOC:
            op_realloc(m);
            break;
        case OP_REALLOC_NULL:
            op_realloc_null(m);
            break;
        case OP_REALLOC_ZERO:
            if (m->n != 0)
                op_realloc_zero(m, pick(m, m->n));
            break;
        case OP_FREE:
        case OP_FREE2:
            op_free(m);
            break;
        case OP_USABLE:
            op_usable(m);
            break;
        case OP_RESET:
            op_reset(m);
            break;
        case OP_ADD_POOL:
            op_add_pool(m);
            break;
        case OP_WALK:
            op_walk(m);
            break;
        case OP_ADD_POOL_OVERLAP:
            op_add_pool_overlap(m);
            break;
        default:
            op_misuse(m, (unsigned char *)stack_buf, sizeof stack_buf);
            before = rep.count; /* op_misuse checked its own report */
            break;
        }
        int with_stats = m->stats_every <= 1u || m->step % m->stats_every == 0;
        verify_some(m, "after the step", with_stats);
        if (rep.count != before)
            fail("%lu unexpected report(s) to the error handler", rep.count - before);
        if (with_stats)
            probe(m);
        if (rep.count != before)
            fail("%lu unexpected report(s) during the largest_free probe", rep.count - before);
    }
    free_all(m);
    if (misuse)
        op_walk(m);
    teardown(m);
    rtm_set_error_handler(NULL, NULL);
    return 0;
}
