// SPDX-License-Identifier: MIT
/*
 * heaps/halffit_check.c -- the half-fit heap's consistency check and block
 * walker. The invariants are listed at the top of heaps/halffit.c.
 *
 * The check trusts nothing it reads: the geometry is recomputed from the
 * region size first, every header's order and offset are validated as
 * integers before the next header is read, every list link is validated as
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

/* What the address-order walk found. */
typedef struct walk_sums {
    size_t free_count[HF_ORDERS];
    size_t free_units, free_blocks, used_units, live_blocks;
} walk_sums;

static int check_geometry(const rtm_halffit *h)
{
    if (h->kind != RTM_KIND_HALFFIT)
        return FAIL(h, "kind word is not a half-fit heap's");
    if (h->lost > 7u || h->region_bytes < rtm_halffit_min_region() ||
        h->arena_units != hf_units_for(h->region_bytes, h->lost) || h->arena_units == 0)
        return FAIL(h, "arena geometry differs from the region size");
    return 0;
}

/* Invariants 1 and 3, and the sums for 2 and 4. Each header is validated
 * (order, natural alignment, inside the arena, state) before the walk steps
 * over it, so the next offset read is always a unit inside the arena. */
static int walk_blocks(const rtm_halffit *h, walk_sums *s)
{
    size_t u = 0, prev_u = 0, prev_free = 0;
    unsigned prev_k = 0;
    while (u < h->arena_units) {
        const hf_header *b = hf_block(h, u << HF_LOG2U);
        unsigned k = b->order;
        if (k > HF_MAX_ORDER || (u & (((size_t)1 << k) - 1u)) != 0 ||
            ((size_t)1 << k) > h->arena_units - u)
            return FAIL(b, "block order or alignment damaged");
        if (b->state == HF_FREE) {
            if (prev_free && prev_k == k && (prev_u & ((size_t)1 << k)) == 0 &&
                prev_u + ((size_t)1 << k) == u)
                return FAIL(b, "two free buddies not merged");
            s->free_count[k]++;
            s->free_units += (size_t)1 << k;
            s->free_blocks++;
        } else if (b->state == HF_USED) {
            s->used_units += (size_t)1 << k;
            s->live_blocks++;
        } else {
            return FAIL(b, "block header state damaged");
        }
        prev_free = b->state == HF_FREE;
        prev_u = u;
        prev_k = k;
        u += (size_t)1 << k;
    }
    return 0;
}

/* Whether a block of order k starts at unit x: descend the buddy tree from
 * the initial block holding x. Along the way, the header at a chunk's start
 * is the chunk itself (order equal: a leaf) or its first sub-block (order
 * below: split). Only called after walk_blocks() validated every header, so
 * every read is a block start. O(orders). */
static int is_block(const rtm_halffit *h, size_t x, unsigned k)
{
    size_t start = 0;
    unsigned c = HF_MAX_ORDER + 1u;
    while (c-- > 0) { /* the initial block holding x */
        if (((h->arena_units >> c) & 1u) == 0)
            continue;
        if (x < start + ((size_t)1 << c))
            break;
        start += (size_t)1 << c;
    }
    for (;;) {
        unsigned order = hf_block(h, start << HF_LOG2U)->order;
        if (order >= c)
            return start == x && c == k;
        c--; /* split: go to the half holding x */
        if (x >= start + ((size_t)1 << c))
            start += (size_t)1 << c;
    }
}

/* Invariant 2: list k, followed link by link (each validated as an integer
 * first), holds exactly the walk's order-k free blocks, back links agree. */
static int check_list(const rtm_halffit *h, unsigned k, size_t expected)
{
    ptrdiff_t link = h->heads[k], prev = 0;
    size_t ctrl = hf_ctrl_bytes(), span = h->arena_units << HF_LOG2U;
    for (size_t n = 0; n < expected; n++) {
        size_t o = (size_t)link - ctrl; /* wraps for a link below the arena */
        if (link == 0)
            return FAIL(h, "free list shorter than its blocks");
        if (o >= span || (o & (HF_UNIT - 1u)) != 0)
            return FAIL(h, "free link outside the arena or misaligned");
        if (!is_block(h, o >> HF_LOG2U, k))
            return FAIL(hf_block(h, o), "free link is not a block of its order");
        if (hf_block(h, o)->state != HF_FREE)
            return FAIL(hf_block(h, o), "listed block is not free");
        if (hf_link(h, o)->prev != prev)
            return FAIL(hf_block(h, o), "free list back link wrong");
        prev = link;
        link = hf_link(h, o)->next;
    }
    if (link != 0)
        return FAIL(h, "free list longer than its blocks (or a cycle)");
    if ((expected != 0) != (((h->bitmap >> k) & 1u) != 0))
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
    if ((h->bitmap >> HF_MAX_ORDER >> 1) != 0)
        return FAIL(h, "bitmap bit above the largest order");
    for (unsigned k = 0; k <= HF_MAX_ORDER; k++)
        if (check_list(h, k, s.free_count[k]) != 0)
            return -1;
    for (unsigned k = HF_MAX_ORDER + 1u; k < HF_ORDERS; k++)
        if (h->heads[k] != 0)
            return FAIL(h, "list head above the largest order");
    if (s.free_units != h->free_units || s.free_blocks != h->free_blocks)
        return FAIL(h, "free counters differ from the blocks");
    if (s.used_units != h->used_units || s.live_blocks != h->live_blocks)
        return FAIL(h, "used counters differ from the blocks");
    if (h->peak_used < hf_used_bytes(h))
        return FAIL(h, "peak below the used bytes");
    return 0;
}

void rtm_halffit_walk(const rtm_halffit *h,
                      void (*walker)(void *ptr, size_t usable, int used, void *arg), void *arg)
{
    for (size_t u = 0; u < h->arena_units;) {
        hf_header *b = hf_block(h, u << HF_LOG2U);
        walker((char *)b + HF_HDR, (HF_UNIT << b->order) - HF_HDR, b->state == HF_USED, arg);
        u += (size_t)1 << b->order;
    }
}
