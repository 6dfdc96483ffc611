/*
 * heaps/tlsf_check.c -- the TLSF validator and block walker.
 *
 * rtm_tlsf_check() trusts nothing it reads: every span and link is bounded
 * by a pool before it is followed, and list walks stop after as many steps
 * as there are free blocks, so a corrupted heap yields -1, never a crash.
 * It works in release builds (like tlsf_check / sys_heap_validate) because
 * users run it in the field after a suspected overwrite.
 *
 * Invariants verified (see heaps/tlsf_layout.h for the layout):
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

/* Is a link offset a plausible block: 8-aligned, with [p - HDR, p +
 * MIN_SPAN) inside a pool of t? Works on integers, so a garbage offset never
 * forms an out-of-range pointer (undefined behaviour even unread). */
static int link_in_a_pool(const rtm_tlsf *t, ptrdiff_t off)
{
    uintptr_t a = (uintptr_t)tlsf_base(t) + (uintptr_t)off;
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
    if (end < p || (size_t)(end - p) < MIN_SPAN || (size_t)(end - p) > MAX_SPAN)
        return rtm_tlsf_check_fail(t, pool, "pool record damaged");
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
    ptrdiff_t prev = off_of(t, (const char *)&t->heads[idx]);
    for (ptrdiff_t off = t->heads[idx]; off != 0;) {
        if (*budget == 0)
            return rtm_tlsf_check_fail(t, t, "free lists hold more blocks than counted");
        (*budget)--;
        if (!link_in_a_pool(t, off))
            return rtm_tlsf_check_fail(t, t, "free-list link points outside the pools");
        char *b = at(t, off);
        if ((hdr(b) & BLOCK_FREE) == 0)
            return rtm_tlsf_check_fail(t, b, "used block on a free list");
        if (list_index(span_of(b)) != idx)
            return rtm_tlsf_check_fail(t, b, "free block on the wrong list");
        if (*link_pprev(b) != prev)
            return rtm_tlsf_check_fail(t, b, "free-list back link broken");
        (*members)++;
        prev = off;
        off = *link_next(b);
    }
    return 0;
}

static int check_lists(const rtm_tlsf *t, size_t free_blocks)
{
    size_t budget = free_blocks, members = 0;
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

int rtm_tlsf_check(const rtm_tlsf *t)
{
    if (t == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    walk_totals sum = {0, 0, 0, 0};
    size_t pools = 0;
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next) {
        if (++pools > t->arena_bytes / (POOL_FIRST_PAYLOAD + MIN_SPAN))
            return rtm_tlsf_check_fail(t, t, "pool list loops");
        if (check_pool(t, pool_at(t, off), &sum) != 0)
            return -1;
    }
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
