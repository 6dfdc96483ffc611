// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_check.c -- the TLSF validator and block walker.
 *
 * rtm_tlsf_check() trusts nothing it reads: every pool record, span and link
 * is bounded before it is followed, and list walks stop after as many steps
 * as there are free blocks, so a corrupted heap yields -1, never a crash.
 * It works in release builds (like tlsf_check / sys_heap_validate) because
 * users run it in the field after a suspected overwrite.
 *
 * The root of everything is the pool list in the control structure. Its
 * records are checked against the memory the check may read: everything
 * for rtm_tlsf_check() (the heap's regions may be anywhere, so a pool link
 * overwritten with an address of mapped memory is read), the caller's region
 * for rtm_tlsf_check_region() (a heap in one region: a shared segment, an
 * image), which then reads nothing outside that region whatever the control
 * structure holds.
 *
 * Invariants verified (see heaps/tlsf_layout.h for the layout):
 *  0. pool list: each record 8-aligned and inside the readable memory, its
 *     end after its first payload by MIN_SPAN to MAX_SPAN; no pool shares a
 *     byte with another or with the control structure (which also ends a
 *     list that loops); the fast range is covered by pools that follow one
 *     another from the first pool, gaps under FAST_GAP bytes;
 *  1. pool walk: every span >= MIN_SPAN, 8-granular, inside the pool; the
 *     walk ends exactly on the sentinel; spans sum to the pool's span;
 *  2. PREV_FREE of each header equals the FREE state of its predecessor, and
 *     a free block's footer equals its span; no two adjacent free blocks;
 *  3. lists: every member is a free block inside a pool whose span maps to
 *     that list, back links mirror next links, members total the free blocks
 *     the pool walk found; bitmaps are set exactly for non-empty lists;
 *  4. counters: used bytes, live and free block counts equal the walk's.
 */
#include "heaps/tlsf_layout.h"

int rtm_tlsf_check_fail(const rtm_tlsf *t, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, t, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

typedef struct walk_totals {
    size_t used_bytes, live_blocks, free_blocks, span;
} walk_totals;

/* The memory a check may read: [lo, hi). */
typedef struct check_bounds {
    uintptr_t lo, hi;
} check_bounds;

/* Is [a, a + n) inside the bounds? Integer compares only. */
static int inside(const check_bounds *m, uintptr_t a, size_t n)
{
    return a >= m->lo && a <= m->hi && m->hi - a >= n;
}

/* A pool record's address and end (its sentinel's payload address), as
 * integers: a garbage offset never forms an out-of-range pointer. */
typedef struct pool_span {
    uintptr_t rec, end;
} pool_span;

/* Invariant 0 for the record at offset off: 0 and its extent, or -1. Reads
 * the record only once it is known to be inside the bounds. */
static int pool_record_ok(const rtm_tlsf *t, const check_bounds *m, ptrdiff_t off, pool_span *out)
{
    uintptr_t rec = (uintptr_t)tlsf_base(t) + (uintptr_t)off;
    if ((rec & (GRAN - 1u)) != 0 || !inside(m, rec, sizeof(tlsf_pool)))
        return -1;
    uintptr_t first = rec + POOL_FIRST_PAYLOAD;
    uintptr_t end = (uintptr_t)tlsf_base(t) + (uintptr_t)pool_at(t, off)->end;
    if ((end & (GRAN - 1u)) != 0 || end < first || end - first < MIN_SPAN ||
        end - first > MAX_SPAN || !inside(m, rec, (size_t)(end - rec)))
        return -1;
    out->rec = rec;
    out->end = end;
    return 0;
}

static int spans_overlap(pool_span a, uintptr_t lo, uintptr_t hi)
{
    return a.rec < hi && lo < a.end;
}

/* Does pool number k of the list (records before it already checked)
 * overlap the control structure or an earlier pool? O(k). */
static int pool_overlaps(const rtm_tlsf *t, pool_span p, size_t k)
{
    uintptr_t ctrl = (uintptr_t)tlsf_base(t);
    if (spans_overlap(p, ctrl, ctrl + sizeof(rtm_tlsf)))
        return 1;
    ptrdiff_t off = t->first_pool;
    for (size_t i = 0; i < k; i++) {
        pool_span q = {(uintptr_t)tlsf_base(t) + (uintptr_t)off, 0};
        q.end = (uintptr_t)at(t, pool_at(t, off)->end);
        if (spans_overlap(p, q.rec, q.end))
            return 1;
        off = pool_at(t, off)->next;
    }
    return 0;
}

/* Invariant 0 over the whole list. O(pools^2); a list that loops meets a
 * pool it already holds, which overlaps. */
static int check_pool_list(const rtm_tlsf *t, const check_bounds *m)
{
    size_t k = 0;
    for (ptrdiff_t off = t->first_pool; off != 0; k++) {
        pool_span p;
        if (pool_record_ok(t, m, off, &p) != 0)
            return rtm_tlsf_check_fail(t, t, "pool record outside the heap's memory or damaged");
        if (pool_overlaps(t, p, k))
            return rtm_tlsf_check_fail(t, (const void *)p.rec,
                                       "pools overlap (or the pool list loops)");
        off = pool_at(t, off)->next;
    }
    if (k == 0)
        return rtm_tlsf_check_fail(t, t, "the heap has no pool");
    return 0;
}

/* The pool (checked list) whose record starts in [lo, hi), or end 0. */
static pool_span pool_starting_in(const rtm_tlsf *t, uintptr_t lo, uintptr_t hi)
{
    pool_span none = {0, 0};
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next) {
        uintptr_t rec = (uintptr_t)tlsf_base(t) + (uintptr_t)off;
        if (rec >= lo && rec < hi) {
            pool_span p = {rec, (uintptr_t)at(t, pool_at(t, off)->end)};
            return p;
        }
    }
    return none;
}

/* Invariant 0, fast range: free() reads headers in it without searching the
 * pools, so it must lie in pools that follow one another from the first one
 * (tlsf.c, fast_range_extend), each record less than FAST_GAP bytes after
 * the previous pool's end. O(pools^2). */
static int check_fast_range(const rtm_tlsf *t)
{
    uintptr_t base = (uintptr_t)tlsf_base(t);
    size_t need = FAST_FIRST + MIN_SPAN; /* bytes from the control it spans */
    if (t->fast_last > UINTPTR_MAX - base - need)
        return rtm_tlsf_check_fail(t, t, "fast range past the end of the address space");
    uintptr_t want = base + need + t->fast_last;
    pool_span p = pool_starting_in(t, base + CONTROL_BYTES, base + CONTROL_BYTES + 1u);
    while (p.end != 0 && p.end < want)
        p = pool_starting_in(t, p.end, p.end + FAST_GAP);
    if (p.end == 0)
        return rtm_tlsf_check_fail(t, t, "fast range not covered by the first pools");
    return 0;
}

/* Does a link name a plausible block: 8-aligned, with [p - HDR, p +
 * MIN_SPAN) inside a pool of t? Works on integers, so a garbage link never
 * forms an out-of-range pointer (undefined behaviour even unread). */
static int link_in_a_pool(const rtm_tlsf *t, ptrdiff_t link)
{
    uintptr_t a = (uintptr_t)tlsf_base(t) + (uintptr_t)link - 1u;
    if ((a & (GRAN - 1u)) != 0)
        return 0;
    for (ptrdiff_t p_off = t->first_pool; p_off != 0;) {
        tlsf_pool *pool = pool_at(t, p_off);
        uintptr_t first = (uintptr_t)pool_first(pool), end = (uintptr_t)at(t, pool->end);
        if (a >= first && a < end && end - a >= MIN_SPAN)
            return 1;
        p_off = pool->next;
    }
    return 0;
}

/* Walks one pool's blocks (invariants 1 and 2), adding to the totals. */
static int check_pool(const rtm_tlsf *t, tlsf_pool *pool, walk_totals *sum)
{
    char *p = pool_first(pool), *end = at(t, pool->end);
    int prev_free = 0;
    sum->span += (size_t)(end - p);
    while (p < end) {
        uint32_t h = hdr(p);
        size_t s = h & SPAN_MASK;
        if (s < MIN_SPAN || s > (size_t)(end - p))
            return rtm_tlsf_check_fail(t, p, "block span out of range");
        if (((h & BLOCK_PREV_FREE) != 0) != prev_free)
            return rtm_tlsf_check_fail(t, p, "PREV_FREE flag disagrees with the neighbour");
        int is_free = (h & BLOCK_FREE) != 0;
        if (is_free && prev_free)
            return rtm_tlsf_check_fail(t, p, "two adjacent free blocks");
        if (is_free && prev_span(p + s) != s)
            return rtm_tlsf_check_fail(t, p, "free block footer differs from its span");
        if (is_free) {
            sum->free_blocks++;
        } else {
            sum->live_blocks++;
            sum->used_bytes += s - HDR_BYTES;
        }
        prev_free = is_free;
        p += s;
    }
    if (p != end || (hdr(end) & SPAN_MASK) != 0 || (hdr(end) & BLOCK_FREE) != 0)
        return rtm_tlsf_check_fail(t, end, "pool does not end on its sentinel");
    if (((hdr(end) & BLOCK_PREV_FREE) != 0) != prev_free)
        return rtm_tlsf_check_fail(t, end, "sentinel PREV_FREE flag wrong");
    return 0;
}

/* Walks one free list (invariant 3); *budget bounds the steps overall. */
static int check_list(const rtm_tlsf *t, unsigned idx, size_t *budget, size_t *members)
{
    /* The head's back link names its head slot; every other block's names
     * the previous block (whose next link points here). */
    ptrdiff_t prev = head_slot(t, idx);
    for (ptrdiff_t link = t->heads[idx]; link != 0;) {
        if (*budget == 0)
            return rtm_tlsf_check_fail(t, t, "free lists hold more blocks than counted");
        (*budget)--;
        if (!link_in_a_pool(t, link))
            return rtm_tlsf_check_fail(t, t, "free-list link points outside the pools");
        char *b = link_at(t, link);
        if ((hdr(b) & BLOCK_FREE) == 0)
            return rtm_tlsf_check_fail(t, b, "used block on a free list");
        if (list_index(span_of(b)) != idx)
            return rtm_tlsf_check_fail(t, b, "free block on the wrong list");
        if (*link_pprev(b) != prev)
            return rtm_tlsf_check_fail(t, b, "free-list back link broken");
        (*members)++;
        prev = link;
        link = *link_next(b);
    }
    return 0;
}

static int check_lists(const rtm_tlsf *t, size_t free_blocks)
{
    size_t budget = free_blocks, members = 0;
    /* The bits past the last list must be clear: stats takes the highest
     * set bit for a list index (fuzz_shared_open found a recovery reading
     * heads[127] of 124). */
    if ((t->list_bits[WORD_COUNT - 1u] >> (LIST_COUNT - 64u * (WORD_COUNT - 1u))) != 0)
        return rtm_tlsf_check_fail(t, t, "list bitmap has bits past the last list");
    for (unsigned idx = 0; idx < LIST_COUNT; idx++) {
        if (((t->list_bits[idx >> 6] >> (idx & 63u)) & 1u) != (t->heads[idx] != 0))
            return rtm_tlsf_check_fail(t, t, "list bitmap differs from the lists");
        if (check_list(t, idx, &budget, &members) != 0)
            return -1;
    }
    if (members != free_blocks)
        return rtm_tlsf_check_fail(t, t, "a free block is on no list");
    return 0;
}

/* Everything, reading only inside the bounds. */
static int check_within(const rtm_tlsf *t, const check_bounds *m)
{
    if (!inside(m, (uintptr_t)t, sizeof(rtm_tlsf)))
        return rtm_tlsf_check_fail(t, t, "control structure outside the heap's memory");
    if (check_pool_list(t, m) != 0 || check_fast_range(t) != 0)
        return -1;
    walk_totals sum = {0, 0, 0, 0};
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next)
        if (check_pool(t, pool_at(t, off), &sum) != 0)
            return -1;
    if (sum.span != t->total_span)
        return rtm_tlsf_check_fail(t, t, "pool spans differ from the recorded total");
    if (sum.used_bytes != t->used_bytes || sum.live_blocks != t->live_blocks)
        return rtm_tlsf_check_fail(t, t, "used-bytes or live-block counter wrong");
    if (sum.free_blocks != t->free_blocks)
        return rtm_tlsf_check_fail(t, t, "free-block counter wrong");
    if (t->peak_used < t->used_bytes)
        return rtm_tlsf_check_fail(t, t, "peak below current use");
    return check_lists(t, sum.free_blocks);
}

int rtm_tlsf_check(const rtm_tlsf *t)
{
    if (t == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    check_bounds all = {0, UINTPTR_MAX};
    return check_within(t, &all);
}

int rtm_tlsf_check_region(const rtm_tlsf *t, const void *mem, size_t bytes)
{
    if (t == NULL || mem == NULL || (uintptr_t)bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    check_bounds region = {(uintptr_t)mem, (uintptr_t)mem + bytes};
    if (check_within(t, &region) != 0)
        return -1;
    /* A heap in one region (a shared segment, an image) may be read by
     * another process: a grow function, a pointer into one process's code,
     * must not be there (and the shared heaps never set one). */
    if (t->grow != NULL || t->grow_ctx != NULL)
        return rtm_tlsf_check_fail(t, t, "a heap checked as one region has a grow function");
    return 0;
}

void rtm_tlsf_walk(const rtm_tlsf *t, void (*walker)(void *ptr, size_t usable, int used, void *arg),
                   void *arg)
{
    if (t == NULL || walker == NULL)
        return;
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next) {
        tlsf_pool *pool = pool_at(t, off);
        char *end = at(t, pool->end);
        for (char *p = pool_first(pool); p < end; p += span_of(p))
            walker(p, span_of(p) - HDR_BYTES, (hdr(p) & BLOCK_FREE) == 0, arg);
    }
}
