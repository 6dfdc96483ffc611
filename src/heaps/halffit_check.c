// SPDX-License-Identifier: MIT
/*
 * heaps/halffit_check.c -- the half-fit heap's consistency check and block
 * walker. The invariants are listed at the top of heaps/halffit.c.
 *
 * The check trusts nothing it reads: the geometry is recomputed from the
 * region size first, every header's size is validated as an integer before
 * the next header is read, every list link is validated as
 * an integer before it is followed, and every loop is bounded by the arena's
 * unit count or the list lengths the walk found. So a corrupted heap gives
 * -1 and a report, never a crash or a hang.
 *
 * Freestanding: no libc. Cold code: not on any hot path.
 */
#include "heaps/halffit_layout.h"

static RTM_COLD int check_fail(const rtm_halffit *h, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, h, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

#define FAIL(where, what) check_fail(h, (where), (what))

/* What the address-order walk found, per class: count, and the sum and xor
 * of the free blocks' offsets (compared with the lists'). */
typedef struct walk_sums {
    size_t free_count[HF_CLASSES];
    size_t free_sum[HF_CLASSES];
    size_t free_xor[HF_CLASSES];
    size_t free_blocks, used_units, live_blocks, shim_bytes;
} walk_sums;

static int check_geometry(const rtm_halffit *h)
{
    if (h->kind != RTM_KIND_HALFFIT)
        return FAIL(h, "kind word is not a half-fit heap's");
    if (h->lost > 15u || h->region_bytes < rtm_halffit_min_region() ||
        h->arena_units != hf_units_for(h->region_bytes, h->lost) || h->arena_units == 0)
        return FAIL(h, "arena geometry differs from the region size");
    return 0;
}

/* A list link as an arena offset, or SIZE_MAX when it is not a unit
 * boundary inside the arena (checked as an integer, nothing read). */
static size_t link_offset(const rtm_halffit *h, ptrdiff_t link)
{
    size_t o = hf_off_in_arena(link); /* wraps for a link below the arena */
    if (o >= (h->arena_units << HF_LOG2U) || (o & (HF_UNIT - 1u)) != 0)
        return SIZE_MAX;
    return o;
}

/* The links of a list-c node: the node's predecessor and successor, each a
 * block (validated as an integer before it is read) or list c's sentinel. */
static const hf_links *neighbour_links(const rtm_halffit *h, ptrdiff_t link, unsigned c)
{
    if (link == hf_sentinel(c))
        return &h->lists[c];
    size_t o = link_offset(h, link);
    return o == SIZE_MAX ? NULL : hf_link(h, o);
}

/* A free block's own links agree with its neighbours on its circular list:
 * its predecessor points to it, its successor back to it. */
static int check_free_links(const rtm_halffit *h, size_t o, unsigned c)
{
    const hf_links *l = hf_link(h, o);
    ptrdiff_t me = hf_link_of(o);
    const hf_links *p = neighbour_links(h, l->prev, c);
    if (p == NULL || p->next != me)
        return FAIL(hf_block(h, o), "free block's predecessor does not point to it");
    const hf_links *n = neighbour_links(h, l->next, c);
    if (n == NULL || n->prev != me)
        return FAIL(hf_block(h, o), "free block's successor does not point back");
    return 0;
}

/* Invariants 1, 3 and 4, and the sums for 2 and 5. Each header is
 * validated (size inside the arena, left size, state) before the walk
 * steps over it, so the next header read is always inside the arena. */
static int walk_blocks(const rtm_halffit *h, walk_sums *s)
{
    size_t u = 0, prev_units = 0;
    int prev_free = 0;
    while (u < h->arena_units) {
        const hf_header *b = hf_block(h, u << HF_LOG2U);
        size_t n = b->units;
        if (n == 0 || n > h->arena_units - u)
            return FAIL(b, "block size damaged");
        if (b->prev_units != prev_units)
            return FAIL(b, "left neighbour's size damaged");
        if (b->state == HF_FREE) {
            unsigned c = hf_class((uint32_t)n);
            if (prev_free)
                return FAIL(b, "two free neighbours not merged");
            if (check_free_links(h, u << HF_LOG2U, c) != 0)
                return -1;
            s->free_count[c]++;
            s->free_sum[c] += u;
            s->free_xor[c] ^= u;
            s->free_blocks++;
        } else if (b->state == HF_USED) {
            if (hf_live_order(b) > HF_MAX_ORDER || hf_class((uint32_t)n) != hf_live_order(b) ||
                hf_live_shift(b) >= (n << HF_LOG2U) - HF_HDR)
                return FAIL(b, "live block's size is not of its order's class");
            s->used_units += n;
            s->shim_bytes += hf_live_shift(b);
            s->live_blocks++;
        } else {
            return FAIL(b, "block header state damaged");
        }
        prev_free = b->state == HF_FREE;
        prev_units = n;
        u += n;
    }
    const hf_header *end = hf_block(h, u << HF_LOG2U);
    if (end->state != HF_END || end->units != 1u || end->prev_units != prev_units)
        return FAIL(end, "end sentinel damaged");
    return 0;
}

/* Invariant 2: list c, followed link by link (each validated as an integer
 * first), has exactly the walk's class-c free blocks: as many, free, of
 * class c, back links agreeing, the same offset sum and xor. */
static int check_list(const rtm_halffit *h, unsigned c, const walk_sums *s)
{
    ptrdiff_t sentinel = hf_sentinel(c), link = h->lists[c].next, prev = sentinel;
    size_t sum = 0, x = 0;
    for (size_t n = 0; n < s->free_count[c]; n++) {
        if (link == sentinel)
            return FAIL(h, "free list shorter than its blocks");
        size_t o = link_offset(h, link);
        if (o == SIZE_MAX)
            return FAIL(h, "free link outside the arena or misaligned");
        const hf_header *b = hf_block(h, o);
        if (b->state != HF_FREE || b->units == 0 || hf_class(b->units) != c)
            return FAIL(b, "listed block is not a free block of its class");
        if (hf_link(h, o)->prev != prev)
            return FAIL(b, "free list back link wrong");
        sum += o >> HF_LOG2U;
        x ^= o >> HF_LOG2U;
        prev = link;
        link = hf_link(h, o)->next;
    }
    if (link != sentinel || h->lists[c].prev != prev)
        return FAIL(h, "free list longer than its blocks (or not closed)");
    if (sum != s->free_sum[c] || x != s->free_xor[c])
        return FAIL(h, "free list holds other blocks than the walk's");
    if ((s->free_count[c] != 0) != (((h->bitmap >> c) & 1u) != 0))
        return FAIL(h, "bitmap bit differs from its list");
    return 0;
}

int rtm_halffit_check(const rtm_halffit *h)
{
    if (h == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (check_geometry(h) != 0)
        return -1;
    walk_sums s;
    __builtin_memset(&s, 0, sizeof s);
    if (walk_blocks(h, &s) != 0)
        return -1;
    if (HF_MAX_ORDER + 1u < 32u && (h->bitmap >> HF_MAX_ORDER >> 1) != 0)
        return FAIL(h, "bitmap bit above the largest order");
    for (unsigned c = 0; c < HF_CLASSES; c++)
        if (check_list(h, c, &s) != 0)
            return -1;
    if (s.free_blocks != hf_free_blocks(h))
        return FAIL(h, "free counters differ from the blocks");
    if ((s.used_units << HF_LOG2U) - s.live_blocks * HF_HDR != h->raw_used ||
        s.live_blocks != h->live_blocks || s.shim_bytes != h->shim_bytes ||
        h->peak_mark < h->shim_bytes)
        return FAIL(h, "used counters differ from the blocks");
    if (hf_peak_used(h) < hf_used_bytes(h))
        return FAIL(h, "peak below the used bytes");
    return 0;
}

void rtm_halffit_walk(const rtm_halffit *h,
                      void (*walker)(void *ptr, size_t usable, int used, void *arg), void *arg)
{
    for (size_t u = 0; u < h->arena_units;) {
        hf_header *b = hf_block(h, u << HF_LOG2U);
        size_t shift = b->state == HF_USED ? hf_live_shift(b) : 0;
        walker((char *)b + HF_HDR + shift, ((size_t)b->units << HF_LOG2U) - HF_HDR - shift,
               b->state == HF_USED, arg);
        u += b->units;
    }
}
