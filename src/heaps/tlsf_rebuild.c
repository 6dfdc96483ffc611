// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_rebuild.c -- crash recovery for a TLSF heap (tlsf_rebuild.h):
 * the undo sets of alloc, free and realloc, and the rebuild of the free
 * lists, bitmaps, footers, flags and counters from a walk of the headers.
 *
 * Used by the process-shared heap (src/shared/), which saves an undo set in
 * shared memory before every operation; when the process doing the
 * operation dies, the next one restores the words and rebuilds. Nothing
 * here runs on the ordinary alloc/free paths, which stay as they are.
 *
 * Which header words an operation changes at blocks that exist before it
 * (tlsf.c; PREV_FREE-only changes are listed but the rebuild recomputes
 * them anyway):
 *   alloc          the block it takes: the head of the request's own list
 *                  (the probe) or the head of the first non-empty list at
 *                  or above the good-fit class, and the block after that
 *                  head (its back link); aligned alloc: the head of the
 *                  first list at or above the class of size + align +
 *                  MIN_SPAN, or the head of that size's own list. Split
 *                  tails and alignment gaps are written inside the block
 *                  taken.
 *   free           the block, its free predecessor (merge), its successor
 *                  and the block after a free successor (PREV_FREE).
 *   realloc        in place: the block, its successor, the one after it
 *                  (the tail is inside the block or the merged successor);
 *                  moving: an alloc, then a free of the block -- every
 *                  header the free touches is one of the above or lies
 *                  inside a block the alloc took.
 * So the candidate sets below mirror tlsf.c's search exactly. The pieces
 * they share with it are the same functions, from tlsf_layout.h: span_for
 * (request -> span), list_search (first non-empty list), alignment_of
 * (realloc of an aligned block), and list_insert for the rebuild; which
 * lists and blocks the search tries (find_free_block, the aligned search)
 * is mirrored here, so a change to it must change them too
 * (tests/shared/test_tlsf_rebuild.c replays random operations against them
 * and fails if one is missed).
 *
 * Freestanding: no libc.
 */
#include "heaps/tlsf_rebuild.h"

#include "heaps/tlsf_layout.h"

/* ---------------------------------------------------------------------- */
/* Bounds: never form a pointer outside the pools from untrusted data      */
/* ---------------------------------------------------------------------- */

/* The pool whose blocks may start at payload address a (integer compares
 * only), or NULL. */
static tlsf_pool *pool_holding(const rtm_tlsf *t, uintptr_t a)
{
    size_t pools = 0, limit = t->arena_bytes / (POOL_FIRST_PAYLOAD + MIN_SPAN) + 1u;
    if ((a & (GRAN - 1u)) != 0)
        return NULL;
    for (ptrdiff_t off = t->first_pool; off != 0 && pools++ < limit;) {
        tlsf_pool *pool = pool_at(t, off);
        uintptr_t first = (uintptr_t)pool_first(pool), end = (uintptr_t)at(t, pool->end);
        if (a >= first && a < end && end - a >= MIN_SPAN)
            return pool;
        off = pool->next;
    }
    return NULL;
}

int rtm_tlsf_in_pool(const rtm_tlsf *t, const void *ptr)
{
    return t != NULL && pool_holding(t, (uintptr_t)ptr) != NULL;
}

size_t rtm_tlsf_free_count(const rtm_tlsf *t) { return t->free_blocks; }

/* ---------------------------------------------------------------------- */
/* Undo sets                                                               */
/* ---------------------------------------------------------------------- */

/* Saves the header of the block at offset off, once, if it is in a pool. */
static void save(const rtm_tlsf *t, ptrdiff_t off, rtm_tlsf_undo *u)
{
    if (off == 0 || pool_holding(t, (uintptr_t)tlsf_base(t) + (uintptr_t)off) == NULL)
        return;
    for (uint32_t i = 0; i < u->count; i++)
        if (u->slot[i].off == (int64_t)off)
            return;
    if (u->count >= RTM_TLSF_UNDO_SLOTS)
        return; /* cannot happen: no operation touches more (see above) */
    u->slot[u->count].off = (int64_t)off;
    u->slot[u->count].word = hdr(at(t, off));
    u->slot[u->count].unused = 0;
    u->count++;
}

/* Saves the head of list idx and the block after it (list_take_head
 * rewrites the second's back link). */
static void save_head_and_second(const rtm_tlsf *t, unsigned idx, rtm_tlsf_undo *u)
{
    ptrdiff_t head = link_offset(t->heads[idx]);
    if (head == 0 || pool_holding(t, (uintptr_t)tlsf_base(t) + (uintptr_t)head) == NULL)
        return;
    save(t, head, u);
    save(t, link_offset(*link_next(at(t, head))), u);
}

static void undo_plain_alloc(const rtm_tlsf *t, size_t size, rtm_tlsf_undo *u)
{
    if (size - 1u >= RTM_TLSF_MAX_BLOCK) {
        if (size != 0)
            return; /* refused before touching anything */
        size = 1;
    }
    size_t s = span_for(size);
    unsigned f = rtm_fls_size(s);
    save(t, link_offset(t->heads[list_index_f(s, f)]), u); /* exact-fit probe */
    int idx = list_search(t, list_index_fit_f(s, f));
    if (idx >= 0)
        save_head_and_second(t, (unsigned)idx, u);
}

void rtm_tlsf_undo_alloc(const rtm_tlsf *t, size_t align, size_t size, rtm_tlsf_undo *u)
{
    if (align <= GRAN) {
        undo_plain_alloc(t, size, u);
        return;
    }
    if (!rtm_is_pow2(align) || size > RTM_TLSF_MAX_BLOCK || align > MAX_SPAN)
        return;
    size_t worst = span_for(size) + align + MIN_SPAN;
    if (worst > MAX_SPAN)
        return;
    int idx = list_search(t, list_index_fit_f(worst, rtm_fls_size(worst)));
    if (idx >= 0)
        save_head_and_second(t, (unsigned)idx, u);
    save(t, link_offset(t->heads[list_index(worst)]), u);
}

void rtm_tlsf_undo_free(const rtm_tlsf *t, const void *ptr, rtm_tlsf_undo *u)
{
    const char *p = (const char *)ptr;
    tlsf_pool *pool = pool_holding(t, (uintptr_t)p);
    if (pool == NULL)
        return;
    uintptr_t first = (uintptr_t)pool_first(pool), end = (uintptr_t)at(t, pool->end);
    uint32_t h = hdr(p);
    save(t, off_of(t, p), u);
    if ((h & BLOCK_PREV_FREE) != 0) {
        size_t ps = prev_span(p);
        if (ps >= MIN_SPAN && (ps & (GRAN - 1u)) == 0 && ps <= (uintptr_t)p - first)
            save(t, off_of(t, p) - (ptrdiff_t)ps, u);
    }
    size_t s = h & SPAN_MASK;
    if (s < MIN_SPAN || s >= end - (uintptr_t)p)
        return; /* the successor is the sentinel (flags only) or p is bad */
    ptrdiff_t next = off_of(t, p) + (ptrdiff_t)s;
    save(t, next, u);
    uint32_t nh = hdr(at(t, next));
    size_t ns = nh & SPAN_MASK;
    if ((nh & BLOCK_FREE) != 0 && ns >= MIN_SPAN && ns < end - (uintptr_t)at(t, next))
        save(t, next + (ptrdiff_t)ns, u);
}

void rtm_tlsf_undo_realloc(const rtm_tlsf *t, const void *ptr, size_t size, rtm_tlsf_undo *u)
{
    if (ptr == NULL) {
        undo_plain_alloc(t, size, u);
        return;
    }
    rtm_tlsf_undo_free(t, ptr, u);
    if (size == 0 || pool_holding(t, (uintptr_t)ptr) == NULL)
        return;
    const char *p = (const char *)ptr;
    size_t align = (hdr(p) & BLOCK_ALIGNED) != 0 ? alignment_of(t, p) : GRAN;
    rtm_tlsf_undo_alloc(t, align, size, u);
}

void rtm_tlsf_undo_apply(rtm_tlsf *t, const rtm_tlsf_undo *u)
{
    uint32_t n = u->count < RTM_TLSF_UNDO_SLOTS ? u->count : RTM_TLSF_UNDO_SLOTS;
    for (uint32_t i = 0; i < n; i++) {
        int64_t off = u->slot[i].off;
        if (off <= 0 || (uint64_t)off > (uint64_t)PTRDIFF_MAX)
            continue;
        uintptr_t a = (uintptr_t)tlsf_base(t) + (uintptr_t)off;
        if (pool_holding(t, a) != NULL)
            set_hdr(at(t, (ptrdiff_t)off), u->slot[i].word);
    }
}

/* ---------------------------------------------------------------------- */
/* Rebuild                                                                 */
/* ---------------------------------------------------------------------- */

/* Is every span of the pool in range, ending exactly on the sentinel? */
static int pool_walkable(const rtm_tlsf *t, tlsf_pool *pool)
{
    char *p = pool_first(pool), *end = at(t, pool->end);
    if (end < p || (size_t)(end - p) < MIN_SPAN || (size_t)(end - p) > MAX_SPAN)
        return 0;
    while (p < end) {
        size_t s = span_of(p);
        if (s < MIN_SPAN || s > (size_t)(end - p))
            return 0;
        p += s;
    }
    return p == end;
}

typedef struct rebuild_totals {
    size_t used_bytes, live_blocks, free_blocks, span;
} rebuild_totals;

/* Closes a run of free blocks [b, b + s) into one listed free block whose
 * predecessor is used (or the pool start). */
static void close_free_run(rtm_tlsf *t, char *b, size_t s, rebuild_totals *sum)
{
    set_hdr(b, s | BLOCK_FREE);
    set_footer(b, s);
    list_insert(t, b, s);
    sum->free_blocks++;
}

/* One pool: merges free runs, rewrites flags, footers and the sentinel. */
static void rebuild_pool(rtm_tlsf *t, tlsf_pool *pool, rebuild_totals *sum)
{
    char *p = pool_first(pool), *end = at(t, pool->end);
    char *run = NULL; /* start of the current run of free blocks */
    size_t run_span = 0;
    sum->span += (size_t)(end - p);
    while (p < end) {
        uint32_t h = hdr(p);
        size_t s = h & SPAN_MASK;
        if ((h & BLOCK_FREE) != 0) {
            if (run == NULL) {
                run = p;
                run_span = 0;
            }
            run_span += s;
        } else {
            set_hdr(p, s | (h & BLOCK_ALIGNED) | (run != NULL ? BLOCK_PREV_FREE : 0u));
            if (run != NULL)
                close_free_run(t, run, run_span, sum);
            run = NULL;
            sum->used_bytes += s - HDR_BYTES;
            sum->live_blocks++;
        }
        p += s;
    }
    set_hdr(end, run != NULL ? BLOCK_PREV_FREE : 0u); /* sentinel: used, span 0 */
    if (run != NULL)
        close_free_run(t, run, run_span, sum);
}

/* Moves each list's largest block to its head, so that the probe and
 * largest_free see it (the lists are LIFO: after the walk each head is the
 * block at the highest address). O(free blocks), as the walk. */
static void largest_first(rtm_tlsf *t)
{
    for (unsigned idx = 0; idx < LIST_COUNT; idx++) {
        char *best = NULL;
        for (ptrdiff_t link = t->heads[idx]; link != 0; link = *link_next(link_at(t, link))) {
            char *b = link_at(t, link);
            if (best == NULL || span_of(b) > span_of(best))
                best = b;
        }
        if (best != NULL && link_to(t, best) != t->heads[idx]) {
            list_remove(t, best);
            list_insert(t, best, span_of(best));
        }
    }
}

int rtm_tlsf_pools_within(const rtm_tlsf *t, size_t bytes)
{
    size_t pools = 0, limit = bytes / (POOL_FIRST_PAYLOAD + MIN_SPAN) + 1u;
    for (ptrdiff_t off = t->first_pool; off != 0;) {
        /* Integer checks first: no pointer is formed from an offset that
         * has not been bounded by the region, nor read at an address the
         * record's type cannot have (a damaged offset: fuzz_shared_open
         * found the misaligned read). The control is GRAN-aligned, so an
         * offset of a multiple of GRAN gives an aligned record. */
        if (off < 0 || (size_t)off > bytes || bytes - (size_t)off < sizeof(tlsf_pool) ||
            ((size_t)off & (GRAN - 1u)) != 0 || ++pools > limit)
            return 0;
        const tlsf_pool *pool = pool_at(t, off);
        ptrdiff_t end = pool->end;
        if (end <= off || (size_t)end > bytes || (size_t)(end - off) < POOL_FIRST_PAYLOAD ||
            ((size_t)end & (GRAN - 1u)) != 0)
            return 0;
        off = pool->next;
    }
    return 1;
}

int rtm_tlsf_rebuild(rtm_tlsf *t)
{
    if (t == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    size_t pools = 0, limit = t->arena_bytes / (POOL_FIRST_PAYLOAD + MIN_SPAN) + 1u;
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next)
        if (++pools > limit || !pool_walkable(t, pool_at(t, off))) {
            RTM_SET_ERRNO(RTM_EFAULT);
            return -1;
        }
    for (unsigned w = 0; w < WORD_COUNT; w++)
        t->list_bits[w] = 0;
    for (unsigned idx = 0; idx < LIST_COUNT; idx++)
        t->heads[idx] = 0;
    rebuild_totals sum = {0, 0, 0, 0};
    for (ptrdiff_t off = t->first_pool; off != 0; off = pool_at(t, off)->next)
        rebuild_pool(t, pool_at(t, off), &sum);
    largest_first(t);
    t->used_bytes = sum.used_bytes;
    t->live_blocks = sum.live_blocks;
    t->free_blocks = sum.free_blocks;
    t->total_span = sum.span;
    if (t->peak_used < t->used_bytes)
        t->peak_used = t->used_bytes;
    /* Rebuilt heaps are shared ones, whose grow function is always NULL:
     * whatever a dead process left there is never called. */
    t->grow = NULL;
    t->grow_ctx = NULL;
    STEPS_RESET(t);
    return 0;
}
