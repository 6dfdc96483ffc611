// SPDX-License-Identifier: MIT
/*
 * tests/model/rig.c -- the randomized model-based rig (contract in rig.h).
 *
 * Shadow record: the live blocks sit in a dense array (O(1) random pick and
 * swap-remove) plus an index sorted by address (O(log n) lookup, and overlap
 * needs only the two address neighbours of a new block). Insertion moves
 * 4-byte indices, not blocks, which keeps a step cheap at a few thousand
 * live blocks.
 *
 * Peak model: peak_used_bytes is checked against an interval, not a value.
 * A realloc that moves may count the old and the new block together for an
 * instant (allocate-copy-free); that instant is invisible to the caller, so
 * the rig accepts any peak between the highest used_bytes it could observe
 * (peak_lo) and that value including such instants (peak_hi).
 *
 * Failure path: the first broken promise prints a report and longjmps back
 * to rig_run(), which releases the shadow and returns 1. The allocator is
 * not touched again after a failure.
 */
#include "rig.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- random numbers: xoshiro256**, seeded through splitmix64 ----------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotl64(uint64_t x, unsigned k) { return (x << k) | (x >> (64u - k)); }

/* --- shadow record ------------------------------------------------------ */

typedef struct block {
    unsigned char *p;
    size_t req;    /* size asked for                             */
    size_t usable; /* rtm_usable_size() at allocation            */
    size_t align;  /* alignment the block must keep              */
    uint64_t token;
} block;

/* One recorded operation, formatted only when a failure is reported. */
typedef struct trace_entry {
    size_t step;
    char op; /* A alloc, L aligned, R realloc, F free, P probe */
    size_t a, b;
    const void *p, *q;
} trace_entry;

#define TRACE_LEN 16u

enum mode { MODE_FILL, MODE_DRAIN, MODE_STEADY };

struct rig {
    const rig_ops *ops;
    const rig_config *cfg;
    rig_result *res;
    uint64_t s[4];

    block *blocks;   /* dense, n used of cap                 */
    uint32_t *order; /* indices into blocks, by address      */
    unsigned char *seen;
    size_t n, cap;

    size_t step;
    size_t used;    /* sum of usable over live blocks      */
    size_t peak_lo; /* highest used the caller could see   */
    size_t peak_hi; /* ... including realloc's instants    */
    size_t failed;  /* refusals the heap must have counted */
    rtm_stats initial, last;
    int last_fresh; /* `last` was read after the latest operation */
    size_t max_request, max_alignment, sweep_every;
    enum mode mode;
    size_t mode_left;

    trace_entry trace[TRACE_LEN];
    size_t trace_count;
    jmp_buf on_fail;
};

static uint64_t rng_next(struct rig *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5u, 7) * 9u;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

/* Uniform in [0, n); the modulo bias is irrelevant for test input. */
static size_t rng_below(struct rig *r, size_t n) { return n ? (size_t)(rng_next(r) % n) : 0; }

static int rng_percent(struct rig *r, unsigned pct) { return rng_below(r, 100) < pct; }

static unsigned log2_floor(size_t x)
{
    unsigned k = 0;
    while (x > 1) {
        x >>= 1;
        k++;
    }
    return k;
}

/* --- failure reporting ---------------------------------------------------- */

static void trace(struct rig *r, char op, size_t a, size_t b, const void *p, const void *q)
{
    trace_entry *e = &r->trace[r->trace_count++ % TRACE_LEN];
    e->step = r->step;
    e->op = op;
    e->a = a;
    e->b = b;
    e->p = p;
    e->q = q;
}

static void print_trace(const struct rig *r)
{
    size_t first = r->trace_count > TRACE_LEN ? r->trace_count - TRACE_LEN : 0;
    fprintf(stderr, "  last operations, oldest first:\n");
    for (size_t i = first; i < r->trace_count; i++) {
        const trace_entry *e = &r->trace[i % TRACE_LEN];
        fprintf(stderr, "    step %zu: ", e->step);
        switch (e->op) {
        case 'A':
            fprintf(stderr, "alloc(%zu) -> %p", e->a, e->q);
            break;
        case 'L':
            fprintf(stderr, "aligned_alloc(%zu, %zu) -> %p", e->a, e->b, e->q);
            break;
        case 'R':
            fprintf(stderr, "realloc(%p, %zu) -> %p", e->p, e->a, e->q);
            break;
        case 'F':
            fprintf(stderr, "free(%p) [usable %zu]", e->p, e->a);
            break;
        case 'P':
            fprintf(stderr, "probe alloc(largest_free%s = %zu) -> %p", e->b ? " + 1" : "", e->a,
                    e->q);
            break;
        default:
            fprintf(stderr, "?");
        }
        fputc('\n', stderr);
    }
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static _Noreturn void
rig_fail(struct rig *r, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rig[%s] FAIL at step %zu of %zu (seed %llu, %zu live blocks): ", r->ops->name,
            r->step, r->cfg->steps, (unsigned long long)r->cfg->seed, r->n);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    print_trace(r);
    fprintf(stderr, "  replay: %s --seed %llu --steps %zu\n",
            r->cfg->replay ? r->cfg->replay : "(this test)", (unsigned long long)r->cfg->seed,
            r->cfg->steps);
    fflush(stderr);
    longjmp(r->on_fail, 1);
}

/* --- contents: a pattern from the block's address and token ------------- */

static uint64_t pattern_start(const void *addr, uint64_t token)
{
    uint64_t x = (uint64_t)(uintptr_t)addr ^ token;
    return splitmix64(&x);
}

#define PATTERN_STEP 0x9E3779B97F4A7C15u

/* Every 8-byte word differs from its neighbours, so a shifted or partial
 * copy is caught, not only an overwrite. */
static void pattern_fill(unsigned char *dst, size_t n, const void *addr, uint64_t token)
{
    uint64_t w = pattern_start(addr, token);
    size_t i = 0;
    for (; i + 8u <= n; i += 8u, w += PATTERN_STEP)
        memcpy(dst + i, &w, 8u);
    /* The tail: the next word's first bytes in memory order, as the
     * whole-word memcpy above stores them (not its low bytes: on a
     * big-endian target those are the last ones). */
    unsigned char tail[8];
    memcpy(tail, &w, 8u);
    for (size_t j = 0; i < n; i++, j++)
        dst[i] = tail[j];
}

/* Returns the offset of the first byte that differs, or SIZE_MAX. A prefix
 * of a filled block verifies too: the tail bytes are the next word's first
 * bytes in memory order, which is what the whole-word copy stored there on
 * either byte order (s390x found the little-endian-only version). */
static size_t pattern_find_damage(const unsigned char *src, size_t n, const void *addr,
                                  uint64_t token)
{
    uint64_t w = pattern_start(addr, token);
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
    unsigned char tail[8];
    memcpy(tail, &w, 8u);
    for (size_t j = 0; i < n; i++, j++)
        if (src[i] != tail[j])
            return i;
    return SIZE_MAX;
}

static void verify_contents(struct rig *r, const block *b, const unsigned char *at, size_t n,
                            const char *when)
{
    size_t bad = pattern_find_damage(at, n, b->p, b->token);
    if (bad != SIZE_MAX)
        rig_fail(r,
                 "%s: contents of block %p (requested %zu, usable %zu, align %zu) damaged at "
                 "offset %zu of %zu (byte at %p)",
                 when, (const void *)b->p, b->req, b->usable, b->align, bad, n,
                 (const void *)(at + bad));
}

/* --- the sorted index ------------------------------------------------------ */

/* First position whose block starts at or after p. */
static size_t lower_bound(const struct rig *r, const void *p)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2u;
        if ((uintptr_t)r->blocks[r->order[mid]].p < (uintptr_t)p)
            lo = mid + 1u;
        else
            hi = mid;
    }
    return lo;
}

/* Zero-length blocks still occupy their address: two of them may not share
 * one, so overlap is tested with at least one byte. */
static size_t extent(const block *b) { return b->usable ? b->usable : 1u; }

static void check_inside_regions(struct rig *r, const void *p, size_t usable, const char *what)
{
    const rig_ops *ops = r->ops;
    if (ops->region_count == 0)
        return;
    uintptr_t lo = (uintptr_t)p - ops->block_overhead;
    uintptr_t hi = (uintptr_t)p + usable;
    for (size_t i = 0; i < ops->region_count; i++) {
        uintptr_t base = (uintptr_t)ops->regions[i].base;
        if (lo >= base && hi <= base + ops->regions[i].bytes && hi >= lo)
            return;
    }
    rig_fail(r, "%s %p (usable %zu, with its %zu-byte header) is not inside any region", what, p,
             usable, ops->block_overhead);
}

static void check_no_overlap_at(struct rig *r, size_t pos, const block *b)
{
    size_t gap = r->ops->block_overhead;
    if (pos > 0) {
        const block *prev = &r->blocks[r->order[pos - 1u]];
        if ((uintptr_t)prev->p + extent(prev) + gap > (uintptr_t)b->p)
            rig_fail(r,
                     "block %p (usable %zu) overlaps block %p (usable %zu) or its %zu-byte header",
                     (const void *)b->p, b->usable, (const void *)prev->p, prev->usable, gap);
    }
    if (pos < r->n) {
        const block *next = &r->blocks[r->order[pos]];
        if ((uintptr_t)b->p + extent(b) + gap > (uintptr_t)next->p)
            rig_fail(r,
                     "block %p (usable %zu) overlaps block %p (usable %zu) or its %zu-byte header",
                     (const void *)b->p, b->usable, (const void *)next->p, next->usable, gap);
    }
}

/* Records a new live block after verifying it, then fills it. */
static void add_block(struct rig *r, void *ptr, size_t req, size_t align)
{
    const rig_ops *ops = r->ops;
    block b;
    b.p = ptr;
    b.req = req;
    b.align = align;
    b.usable = ops->usable_size(ops->ctx, ptr);
    b.token = rng_next(r);
    if (b.usable < req)
        rig_fail(r, "usable_size(%p) = %zu < requested %zu", ptr, b.usable, req);
    if ((uintptr_t)ptr % align != 0)
        rig_fail(r, "block %p (requested %zu) is not aligned to %zu", ptr, req, align);
    check_inside_regions(r, ptr, b.usable, "block");
    size_t pos = lower_bound(r, ptr);
    if (pos < r->n && r->blocks[r->order[pos]].p == ptr)
        rig_fail(r, "block %p handed out twice (already live, usable %zu)", ptr,
                 r->blocks[r->order[pos]].usable);
    check_no_overlap_at(r, pos, &b);

    memmove(&r->order[pos + 1u], &r->order[pos], (r->n - pos) * sizeof r->order[0]);
    r->order[pos] = (uint32_t)r->n;
    r->blocks[r->n++] = b;
    r->used += b.usable;
    if (r->used > r->peak_lo)
        r->peak_lo = r->used;
    if (r->used > r->peak_hi)
        r->peak_hi = r->used;
    if (r->n > r->res->max_live)
        r->res->max_live = r->n;
    if (r->used > r->res->peak_used)
        r->res->peak_used = r->used;
    pattern_fill(b.p, b.usable, b.p, b.token);
}

/* Forgets block idx (already released by the allocator). */
static void remove_block(struct rig *r, size_t idx)
{
    size_t pos = lower_bound(r, r->blocks[idx].p);
    memmove(&r->order[pos], &r->order[pos + 1u], (r->n - pos - 1u) * sizeof r->order[0]);
    r->used -= r->blocks[idx].usable;
    size_t last = --r->n;
    if (idx != last) {
        r->blocks[idx] = r->blocks[last];
        r->order[lower_bound(r, r->blocks[idx].p)] = (uint32_t)idx;
    }
}

/* --- statistics ------------------------------------------------------------ */

static rtm_stats read_stats(struct rig *r)
{
    rtm_stats st;
    memset(&st, 0, sizeof st);
    r->ops->stats(r->ops->ctx, &st);
    return st;
}

static int promises(const struct rig *r, unsigned flag) { return (r->ops->flags & flag) != 0; }

static void check_stats(struct rig *r, const char *when)
{
    if (r->ops->stats == NULL)
        return;
    rtm_stats st = read_stats(r);
    r->last = st;
    r->last_fresh = 1;
    if (promises(r, RIG_STATS_EXACT)) {
        if (st.used_bytes != r->used)
            rig_fail(r, "%s: stats.used_bytes = %zu, shadow says %zu", when, st.used_bytes,
                     r->used);
        if (st.live_blocks != r->n)
            rig_fail(r, "%s: stats.live_blocks = %zu, shadow says %zu", when, st.live_blocks, r->n);
        if (st.failed_allocs != r->failed)
            rig_fail(r, "%s: stats.failed_allocs = %zu, shadow counted %zu refusals", when,
                     st.failed_allocs, r->failed);
        if (st.peak_used_bytes < r->peak_lo || st.peak_used_bytes > r->peak_hi)
            rig_fail(r,
                     "%s: stats.peak_used_bytes = %zu, shadow says %zu (up to %zu counting "
                     "realloc's moment with both blocks)",
                     when, st.peak_used_bytes, r->peak_lo, r->peak_hi);
    }
    if (promises(r, RIG_GROWS) ? st.arena_bytes < r->initial.arena_bytes
                               : st.arena_bytes != r->initial.arena_bytes)
        rig_fail(r, "%s: stats.arena_bytes changed from %zu to %zu", when, r->initial.arena_bytes,
                 st.arena_bytes);
    if (st.largest_free > st.free_bytes)
        rig_fail(r, "%s: stats.largest_free %zu > free_bytes %zu", when, st.largest_free,
                 st.free_bytes);
    if (st.free_bytes + st.used_bytes > st.arena_bytes)
        rig_fail(r, "%s: free_bytes %zu + used_bytes %zu > arena_bytes %zu", when, st.free_bytes,
                 st.used_bytes, st.arena_bytes);
}

static void run_check(struct rig *r, const char *when)
{
    if (r->ops->check == NULL)
        return;
    r->res->checks++;
    int rc = r->ops->check(r->ops->ctx);
    if (rc != 0)
        rig_fail(r, "%s: the allocator's check returned %d (errno %d)", when, rc, errno);
}

/* A refusal: counted, and errno must say why. */
static void note_refusal(struct rig *r, const char *what, size_t size)
{
    int e = errno;
    r->failed++;
    r->res->enomem++;
    if (promises(r, RIG_ERRNO_ENOMEM) && e != ENOMEM)
        rig_fail(r, "%s(%zu) returned NULL with errno %d (%s), expected ENOMEM", what, size, e,
                 strerror(e));
}

/* --- walking the heap ---------------------------------------------------- */

typedef struct walk_acc {
    struct rig *r;
    size_t used_count, used_sum, free_sum, free_max, blocks;
    char error[200];
} walk_acc;

static void walk_visit(void *ptr, size_t usable, int used, void *arg)
{
    walk_acc *acc = arg;
    struct rig *r = acc->r;
    acc->blocks++;
    if (acc->error[0] != '\0')
        return;
    if (!used) {
        acc->free_sum += usable;
        if (usable > acc->free_max)
            acc->free_max = usable;
        return;
    }
    acc->used_count++;
    acc->used_sum += usable;
    size_t pos = lower_bound(r, ptr);
    if (pos >= r->n || r->blocks[r->order[pos]].p != ptr) {
        snprintf(acc->error, sizeof acc->error,
                 "walk reports a used block %p (usable %zu) that is not live", ptr, usable);
        return;
    }
    size_t idx = r->order[pos];
    if (r->seen[idx]++)
        snprintf(acc->error, sizeof acc->error, "walk reports block %p twice", ptr);
    else if (usable != r->blocks[idx].usable)
        snprintf(acc->error, sizeof acc->error,
                 "walk reports block %p with usable %zu, usable_size said %zu", ptr, usable,
                 r->blocks[idx].usable);
}

static void walk_and_compare(struct rig *r)
{
    if (r->ops->walk == NULL)
        return;
    walk_acc acc;
    memset(&acc, 0, sizeof acc);
    acc.r = r;
    memset(r->seen, 0, r->n);
    if (r->ops->walk(r->ops->ctx, walk_visit, &acc) != 0)
        rig_fail(r, "walk failed (errno %d)", errno);
    if (acc.error[0] != '\0')
        rig_fail(r, "%s", acc.error);
    if (acc.used_count != r->n)
        rig_fail(r, "walk found %zu used blocks, %zu are live", acc.used_count, r->n);
    if (r->ops->stats == NULL || !promises(r, RIG_WALK_EXACT))
        return;
    rtm_stats st = read_stats(r);
    if (acc.free_sum != st.free_bytes)
        rig_fail(r, "free blocks walked sum to %zu usable bytes, stats.free_bytes = %zu",
                 acc.free_sum, st.free_bytes);
    if (acc.used_sum != st.used_bytes)
        rig_fail(r, "used blocks walked sum to %zu, stats.used_bytes = %zu", acc.used_sum,
                 st.used_bytes);
    /* Never overstated, by any allocator: a promise alloc cannot keep. */
    if (st.largest_free > acc.free_max)
        rig_fail(r, "stats.largest_free = %zu exceeds the largest free block walked, %zu",
                 st.largest_free, acc.free_max);
    if (acc.free_max != st.largest_free) {
        if (promises(r, RIG_LARGEST_IS_BIGGEST))
            rig_fail(r, "largest free block walked is %zu, stats.largest_free = %zu", acc.free_max,
                     st.largest_free);
        r->res->stale_largest++;
    }
}

/* Everything, O(live bytes): usable sizes, contents, order, the walk. */
static void sweep(struct rig *r)
{
    const rig_ops *ops = r->ops;
    for (size_t i = 0; i < r->n; i++) {
        const block *b = &r->blocks[r->order[i]];
        size_t usable = ops->usable_size(ops->ctx, b->p);
        if (usable != b->usable)
            rig_fail(r, "usable_size(%p) changed from %zu to %zu while live", (const void *)b->p,
                     b->usable, usable);
        verify_contents(r, b, b->p, b->usable, "sweep");
        const block *next = i + 1u < r->n ? &r->blocks[r->order[i + 1u]] : NULL;
        if (next != NULL && (uintptr_t)b->p + extent(b) + ops->block_overhead > (uintptr_t)next->p)
            rig_fail(r, "sweep: block %p (usable %zu) overlaps block %p", (const void *)b->p,
                     b->usable, (const void *)next->p);
    }
    walk_and_compare(r);
}

/* --- sizes and alignments -------------------------------------------------- */

/* The size mix: tiny, small, large (log-uniform up to a big share of the
 * heap), powers of two, sizes just around powers of two (where rounding
 * and class boundaries live), sizes around largest_free (where honesty is
 * decided), and absurd sizes that must fail cleanly. */
static size_t draw_size(struct rig *r)
{
    size_t roll = rng_below(r, 100);
    size_t top = r->max_request;
    unsigned top_log = log2_floor(top);
    if (roll < 30)
        return rng_below(r, 65);
    if (roll < 56)
        return 65u + rng_below(r, 4096u - 64u);
    if (roll < 70) {
        if (top <= 4096u)
            return rng_below(r, top + 1u);
        unsigned k = 12u + (unsigned)rng_below(r, top_log - 12u + 1u);
        size_t lo = (size_t)1 << k, hi = k >= top_log ? top : lo * 2u;
        return lo + rng_below(r, hi - lo + 1u);
    }
    if (roll < 80)
        return (size_t)1 << rng_below(r, top_log + 1u);
    if (roll < 94) {
        size_t p2 = (size_t)1 << rng_below(r, top_log + 1u);
        size_t delta = rng_below(r, 33);
        return delta < 16u ? (p2 > 16u - delta ? p2 - (16u - delta) : 0) : p2 + (delta - 16u);
    }
    if (roll < 98 && r->ops->stats != NULL) {
        size_t lf = r->last.largest_free;
        size_t delta = rng_below(r, 17);
        return delta < 8u ? (lf > 8u - delta ? lf - (8u - delta) : 0) : lf + (delta - 8u);
    }
    switch (rng_below(r, 6)) {
    case 0:
        return SIZE_MAX;
    case 1:
        return SIZE_MAX - 7u;
    case 2:
        return SIZE_MAX / 2u + 1u;
    case 3:
        return r->initial.arena_bytes + 1u;
    case 4:
        return (size_t)0xFFFFFFF4u + 1u; /* beyond a 32-bit span */
    default:
        return top * 2u + 1u;
    }
}

static size_t draw_alignment(struct rig *r)
{
    unsigned top = log2_floor(r->max_alignment);
    size_t roll = rng_below(r, 100);
    unsigned k;
    if (roll < 20)
        k = (unsigned)rng_below(r, 4); /* 1..8: at most the default */
    else if (roll < 60)
        k = 4u + (unsigned)rng_below(r, 3); /* 16..64: cache lines */
    else
        k = 7u + (unsigned)rng_below(r, top > 7u ? top - 7u + 1u : 1u); /* up to the maximum */
    if (k > top)
        k = top;
    return (size_t)1 << k;
}

static size_t draw_realloc_size(struct rig *r, const block *b)
{
    switch (rng_below(r, 10)) {
    case 0:
    case 1:
    case 2:
        return b->usable + 1u + rng_below(r, 64); /* just past the block: in-place growth */
    case 3:
        return b->req / 2u;
    case 4:
        return rng_below(r, b->req + 1u);
    case 5:
        return b->req;
    case 6:
        return b->usable;
    default:
        return draw_size(r);
    }
}

/* --- operations ------------------------------------------------------------ */

/* What a plain allocation of `size` must do given the stats before it. */
static void check_plain_honesty(struct rig *r, const rtm_stats *pre, size_t size, int got,
                                const char *what)
{
    int fits = pre->largest_free > 0 && size <= pre->largest_free;
    if (got && !fits)
        rig_fail(r,
                 "%s(%zu) succeeded although stats.largest_free was %zu: largest_free is not "
                 "the largest size that succeeds",
                 what, size, pre->largest_free);
    if (!got && fits)
        rig_fail(r, "%s(%zu) refused (ENOMEM) although stats.largest_free was %zu", what, size,
                 pre->largest_free);
}

/* The honesty checks compare an operation with the stats read just before
 * it (cfg->stats_every above 1 leaves steps without). */
static int exact_largest(const struct rig *r)
{
    return r->ops->stats != NULL && promises(r, RIG_LARGEST_FREE_EXACT) && r->last_fresh;
}

static void op_alloc(struct rig *r)
{
    const rig_ops *ops = r->ops;
    size_t size = draw_size(r);
    rtm_stats pre = r->last;
    errno = 0;
    void *p = ops->alloc(ops->ctx, size);
    trace(r, 'A', size, 0, NULL, p);
    r->res->allocs++;
    if (p == NULL)
        note_refusal(r, "alloc", size);
    if (exact_largest(r))
        check_plain_honesty(r, &pre, size, p != NULL, "alloc");
    if (p != NULL)
        add_block(r, p, size, ops->alignment);
}

static void op_aligned_alloc(struct rig *r)
{
    const rig_ops *ops = r->ops;
    size_t align = draw_alignment(r);
    size_t size = draw_size(r);
    rtm_stats pre = r->last;
    errno = 0;
    void *p = ops->aligned_alloc(ops->ctx, align, size);
    trace(r, 'L', align, size, NULL, p);
    r->res->aligned_allocs++;
    if (p == NULL && promises(r, RIG_ALIGN_ENOTSUP) && errno == ENOTSUP) {
        r->res->unsupported++; /* an alignment this allocator never gives */
        return;
    }
    if (p == NULL) {
        note_refusal(r, "aligned_alloc", size);
        return;
    }
    if (exact_largest(r) && size > pre.largest_free)
        rig_fail(r, "aligned_alloc(%zu, %zu) succeeded although stats.largest_free was %zu", align,
                 size, pre.largest_free);
    add_block(r, p, size, align > ops->alignment ? align : ops->alignment);
}

/* realloc(NULL, n) is alloc(n), with the same honesty. */
static void op_realloc_null(struct rig *r)
{
    const rig_ops *ops = r->ops;
    size_t size = draw_size(r);
    rtm_stats pre = r->last;
    errno = 0;
    void *p = ops->realloc(ops->ctx, NULL, size);
    trace(r, 'R', size, 0, NULL, p);
    r->res->reallocs++;
    if (p == NULL)
        note_refusal(r, "realloc(NULL, n)", size);
    if (exact_largest(r))
        check_plain_honesty(r, &pre, size, p != NULL, "realloc(NULL, n)");
    if (p != NULL)
        add_block(r, p, size, ops->alignment);
}

static void op_realloc_zero(struct rig *r, size_t idx)
{
    const rig_ops *ops = r->ops;
    block b = r->blocks[idx];
    verify_contents(r, &b, b.p, b.usable, "before realloc(p, 0)");
    errno = EDOM; /* a value realloc has no reason to write */
    void *q = ops->realloc(ops->ctx, b.p, 0);
    trace(r, 'R', 0, 0, b.p, q);
    r->res->reallocs++;
    if (q != NULL)
        rig_fail(r, "realloc(%p, 0) returned %p, expected NULL (it frees)", (void *)b.p, q);
    if (errno != EDOM)
        rig_fail(r, "realloc(%p, 0) changed errno to %d", (void *)b.p, errno);
    remove_block(r, idx);
}

static void op_realloc(struct rig *r)
{
    const rig_ops *ops = r->ops;
    if (r->n == 0 || rng_percent(r, 5)) {
        op_realloc_null(r);
        return;
    }
    size_t idx = rng_below(r, r->n);
    if (promises(r, RIG_REALLOC_ZERO_FREES) && rng_percent(r, 4)) {
        op_realloc_zero(r, idx);
        return;
    }
    block b = r->blocks[idx];
    size_t size = draw_realloc_size(r, &b);
    if (size == 0) { /* the draw may land on 0: that is the freeing form */
        if (promises(r, RIG_REALLOC_ZERO_FREES)) {
            op_realloc_zero(r, idx);
            return;
        }
        size = 1;
    }
    verify_contents(r, &b, b.p, b.usable, "before realloc");
    rtm_stats pre = r->last;
    errno = 0;
    unsigned char *q = ops->realloc(ops->ctx, b.p, size);
    trace(r, 'R', size, 0, b.p, q);
    r->res->reallocs++;
    if (q == NULL) {
        note_refusal(r, "realloc", size);
        size_t usable = ops->usable_size(ops->ctx, b.p);
        if (usable != b.usable)
            rig_fail(r, "failed realloc(%p, %zu) changed usable_size from %zu to %zu", (void *)b.p,
                     size, b.usable, usable);
        verify_contents(r, &b, b.p, b.usable, "after a failed realloc");
        /* allocate-copy-free would have worked if alloc(size) would have. */
        if (exact_largest(r) && b.align <= ops->alignment && pre.largest_free > 0 &&
            size <= pre.largest_free)
            rig_fail(r, "realloc(%p, %zu) refused although stats.largest_free was %zu", (void *)b.p,
                     size, pre.largest_free);
        return;
    }
    if ((uintptr_t)q % b.align != 0)
        rig_fail(r, "realloc(%p [aligned %zu], %zu) returned %p: alignment lost", (void *)b.p,
                 b.align, size, (void *)q);
    if (promises(r, RIG_SHRINK_IN_PLACE) && size <= b.usable && q != b.p)
        rig_fail(r, "realloc(%p, %zu) shrinking a block of usable %zu moved it to %p", (void *)b.p,
                 size, b.usable, (void *)q);
    size_t keep = size < b.usable ? size : b.usable;
    verify_contents(r, &b, q, keep, q == b.p ? "realloc in place" : "realloc moved");
    if (q != b.p) {
        r->res->realloc_moved++;
        /* The moment both blocks existed, if the heap counts it. */
        size_t both = r->used + ops->usable_size(ops->ctx, q);
        if (both > r->peak_hi)
            r->peak_hi = both;
    } else {
        r->res->realloc_inplace++;
    }
    remove_block(r, idx);
    add_block(r, q, size, b.align);
}

static void op_free(struct rig *r)
{
    size_t idx = rng_below(r, r->n);
    block b = r->blocks[idx];
    verify_contents(r, &b, b.p, b.usable, "before free");
    trace(r, 'F', b.usable, 0, b.p, NULL);
    int rc = r->ops->free(r->ops->ctx, b.p);
    if (rc != 0)
        rig_fail(r, "free(%p) of a live block (usable %zu) was rejected (%d, errno %d)",
                 (void *)b.p, b.usable, rc, errno);
    r->res->frees++;
    remove_block(r, idx);
}

/* largest_free is exact: alloc(largest_free) works and gives the space
 * back, alloc(largest_free + 1) is refused. */
static void op_probe(struct rig *r)
{
    const rig_ops *ops = r->ops;
    size_t lf = read_stats(r).largest_free;
    r->res->probes++;
    if (lf > 0 && r->n < r->cap) {
        errno = 0;
        void *p = ops->alloc(ops->ctx, lf);
        trace(r, 'P', lf, 0, NULL, p);
        if (p == NULL)
            rig_fail(r, "alloc(stats.largest_free = %zu) refused (errno %d)", lf, errno);
        add_block(r, p, lf, ops->alignment);
        check_stats(r, "after alloc(largest_free)");
        size_t idx = r->order[lower_bound(r, p)];
        verify_contents(r, &r->blocks[idx], p, r->blocks[idx].usable, "probe block");
        if (ops->free(ops->ctx, p) != 0)
            rig_fail(r, "free(%p) of the probe block was rejected", p);
        trace(r, 'F', r->blocks[idx].usable, 0, p, NULL);
        remove_block(r, idx);
        check_stats(r, "after freeing the probe block");
        /* Freeing the probe block gives its space back, so largest_free
         * must not shrink. It may grow: a TLSF list keeps its largest block
         * at the head only until a merge removes that head (documented in
         * docs/TLSF.md), and re-inserting the probe block can bring a larger
         * block of the same list to the head. Counted, so the report shows
         * how often the head was stale. */
        if (promises(r, RIG_COALESCES) && r->last.largest_free < lf)
            rig_fail(r, "largest_free shrank from %zu to %zu after alloc(%zu) + free", lf,
                     r->last.largest_free, lf);
        if (r->last.largest_free > lf)
            r->res->probe_grew++;
        lf = r->last.largest_free;
    }
    size_t over = lf + 1u;
    errno = 0;
    void *p = ops->alloc(ops->ctx, over);
    trace(r, 'P', over, 1, NULL, p);
    if (p != NULL)
        rig_fail(r, "alloc(stats.largest_free + 1 = %zu) succeeded: largest_free not exact", over);
    note_refusal(r, "alloc(largest_free + 1)", over);
    if (lf == 0) {
        errno = 0;
        p = ops->alloc(ops->ctx, 0);
        trace(r, 'A', 0, 0, NULL, p);
        if (p != NULL)
            rig_fail(r, "alloc(0) succeeded although stats.largest_free was 0");
        note_refusal(r, "alloc", 0);
    }
    check_stats(r, "after the probes");
}

static void count_free_visit(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    *(size_t *)arg += used == 0;
}

/* After a free-all: 1 when largest_free may differ from the start's because
 * the heap has several pools, each one free block again, and the one its
 * list shows first depends on the order of the frees (TLSF's lists are
 * LIFO: the head is the block freed last). Never for a heap promising
 * largest_free = the biggest free block, nor with a single free block;
 * walk_and_compare still checks it is no more than the biggest one. */
static int largest_of_another_pool(struct rig *r)
{
    size_t free_blocks = 0;
    if (promises(r, RIG_LARGEST_IS_BIGGEST) || r->ops->walk == NULL ||
        r->ops->walk(r->ops->ctx, count_free_visit, &free_blocks) != 0 || free_blocks < 2)
        return 0;
    r->res->stale_largest++;
    return 1;
}

/* Frees every block in random order, then verifies the heap is as new. */
static void free_all(struct rig *r, const char *when)
{
    while (r->n > 0)
        op_free(r);
    r->res->free_alls++;
    check_stats(r, when);
    run_check(r, when);
    if (r->ops->stats == NULL)
        return;
    rtm_stats st = r->last;
    if (st.used_bytes != 0 || st.live_blocks != 0)
        rig_fail(r, "%s: used_bytes %zu, live_blocks %zu (expected 0, 0)", when, st.used_bytes,
                 st.live_blocks);
    if (promises(r, RIG_COALESCES) &&
        (st.free_bytes != r->initial.free_bytes ||
         (st.largest_free != r->initial.largest_free && !largest_of_another_pool(r))))
        rig_fail(r, "%s: free_bytes %zu, largest_free %zu; at the start they were %zu, %zu", when,
                 st.free_bytes, st.largest_free, r->initial.free_bytes, r->initial.largest_free);
    walk_and_compare(r);
}

/* Phases push the heap to full and to empty, instead of hovering. */
static void next_mode(struct rig *r)
{
    r->mode = (enum mode)rng_below(r, 3);
    r->mode_left = 20u + rng_below(r, 600);
}

static void one_step(struct rig *r)
{
    if (r->mode_left-- == 0)
        next_mode(r);
    if (exact_largest(r) && rng_percent(r, 1)) {
        op_probe(r);
        return;
    }
    if (rng_below(r, 3000) == 0) {
        free_all(r, "free everything (mid-run)");
        return;
    }
    static const unsigned alloc_pct[] = {60, 20, 40}, realloc_pct[] = {20, 15, 20};
    size_t roll = rng_below(r, 100);
    int want_alloc = roll < alloc_pct[r->mode];
    int want_realloc = !want_alloc && roll < alloc_pct[r->mode] + realloc_pct[r->mode];
    if (r->n == r->cap) {
        want_alloc = 0;
        want_realloc = 0;
    } else if (r->n == 0 && !want_realloc) {
        want_alloc = 1;
    }
    if (want_alloc) {
        if (r->ops->aligned_alloc != NULL && rng_percent(r, 25))
            op_aligned_alloc(r);
        else
            op_alloc(r);
    } else if (want_realloc) {
        op_realloc(r);
    } else {
        op_free(r);
    }
}

/* --- the run --------------------------------------------------------------- */

static int run_steps(struct rig *r)
{
    if (setjmp(r->on_fail) != 0)
        return 1;
    const rig_config *cfg = r->cfg;
    if (r->ops->stats != NULL) {
        r->initial = read_stats(r);
        r->last = r->initial;
        r->last_fresh = 1;
        if (r->initial.live_blocks != 0 || r->initial.used_bytes != 0)
            rig_fail(r, "the heap is not empty at the start (%zu live blocks)",
                     r->initial.live_blocks);
        r->peak_lo = r->peak_hi = r->initial.peak_used_bytes;
        r->failed = r->initial.failed_allocs;
    }
    if (r->max_request == 0) {
        for (size_t i = 0; i < r->ops->region_count; i++)
            if (r->ops->regions[i].bytes > r->max_request)
                r->max_request = r->ops->regions[i].bytes;
        if (r->max_request == 0)
            r->max_request = r->initial.arena_bytes ? r->initial.arena_bytes : (1u << 20);
    }
    run_check(r, "at the start");
    next_mode(r);
    for (r->step = 1; r->step <= cfg->steps; r->step++) {
        one_step(r);
        if (cfg->stats_every <= 1 || r->step % cfg->stats_every == 0)
            check_stats(r, "after the step");
        else
            r->last_fresh = 0;
        if (cfg->check_every != 0 && r->step % cfg->check_every == 0)
            run_check(r, "after the step");
        if (r->step % r->sweep_every == 0)
            sweep(r);
    }
    sweep(r);
    free_all(r, "after freeing everything at the end");
    r->res->steps = cfg->steps;
    return 0;
}

int rig_run(const rig_ops *ops, const rig_config *cfg, rig_result *out)
{
    rig_result local;
    if (out == NULL)
        out = &local;
    memset(out, 0, sizeof *out);
    struct rig *r = calloc(1, sizeof *r);
    if (r == NULL)
        return 1;
    r->ops = ops;
    r->cfg = cfg;
    r->res = out;
    r->cap = cfg->max_live ? cfg->max_live : 4096u;
    r->max_request = cfg->max_request;
    r->max_alignment = cfg->max_alignment ? cfg->max_alignment : 4096u;
    r->sweep_every = cfg->sweep_every ? cfg->sweep_every : 1000u;
    uint64_t x = cfg->seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
    r->blocks = calloc(r->cap, sizeof *r->blocks);
    r->order = calloc(r->cap, sizeof *r->order);
    r->seen = calloc(r->cap, 1);
    int rc = 1;
    if (r->blocks != NULL && r->order != NULL && r->seen != NULL)
        rc = run_steps(r);
    free(r->blocks);
    free(r->order);
    free(r->seen);
    free(r);
    return rc;
}

/* --- command line ---------------------------------------------------------- */

static int parse_u64(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int rig_parse_args(int argc, char **argv, rig_args *out)
{
    memset(out, 0, sizeof *out);
    out->case_index = -1;
    uint64_t v;
    const char *env = getenv("RTMEM_SEED");
    if (env != NULL && *env != '\0' && parse_u64(env, &v) == 0) {
        out->has_seed = 1;
        out->seed = v;
    }
    env = getenv("RTMEM_STEPS");
    if (env != NULL && *env != '\0' && parse_u64(env, &v) == 0) {
        out->has_steps = 1;
        out->steps = (size_t)v;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(arg, "-v") == 0) {
            out->verbose = 1;
            continue;
        }
        if (val == NULL)
            goto usage;
        if (strcmp(arg, "--seed") == 0 && parse_u64(val, &v) == 0) {
            out->has_seed = 1;
            out->seed = v;
        } else if (strcmp(arg, "--steps") == 0 && parse_u64(val, &v) == 0) {
            out->has_steps = 1;
            out->steps = (size_t)v;
        } else if (strcmp(arg, "--case") == 0 && parse_u64(val, &v) == 0) {
            out->case_index = (long)v;
        } else if (strcmp(arg, "--band") == 0) {
            out->band = val;
        } else {
            goto usage;
        }
        i++;
    }
    return 0;
usage:
    fprintf(stderr,
            "usage: %s [--band NAME] [--case K] [--seed N] [--steps N] [-v]\n"
            "  environment: RTMEM_SEED, RTMEM_STEPS (the command line wins)\n",
            argv[0]);
    return -1;
}

void rig_print_result(const char *label, const rig_result *res)
{
    printf("%s: %zu steps, %zu alloc, %zu aligned, %zu realloc (%zu moved, %zu in place), "
           "%zu free, %zu ENOMEM, %zu ENOTSUP, %zu probes (%zu found a stale list head), %zu "
           "free-alls, "
           "max %zu live, peak %zu B, %zu checks (%zu walks: largest_free below the "
           "biggest free block)\n",
           label, res->steps, res->allocs, res->aligned_allocs, res->reallocs, res->realloc_moved,
           res->realloc_inplace, res->frees, res->enomem, res->unsupported, res->probes,
           res->probe_grew, res->free_alls, res->max_live, res->peak_used, res->checks,
           res->stale_largest);
}

int rig_main(int argc, char **argv, const rig_suite *suite)
{
    rig_args args;
    if (rig_parse_args(argc, argv, &args) != 0)
        return 2;
    int failures = 0, ran = 0;
    for (size_t i = 0; i < suite->count; i++) {
        rig_case_info c = suite->info(i);
        if (args.band != NULL && strcmp(args.band, c.band) != 0)
            continue;
        if (args.case_index >= 0 && (size_t)args.case_index != i)
            continue;
        size_t steps = args.has_steps ? args.steps : c.steps;
        unsigned seeds = args.has_seed ? 1u : c.seeds;
        for (unsigned k = 0; k < seeds; k++) {
            uint64_t seed =
                args.has_seed ? args.seed : suite->seed_base + 1000u * (uint64_t)i + k + 1u;
            failures += suite->run(i, seed, steps, argv[0], args.verbose) != 0;
            ran++;
        }
    }
    if (ran == 0) {
        fprintf(stderr, "no case matched the selection\n");
        return 2;
    }
    printf("%d run(s), %d failed\n", ran, failures);
    return failures ? 1 : 0;
}
