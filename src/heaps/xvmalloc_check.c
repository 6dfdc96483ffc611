// SPDX-License-Identifier: MIT
/*
 * heaps/xvmalloc_check.c -- the xvmalloc heap's consistency check and block
 * walker. The invariants are listed at the top of heaps/xvmalloc.c.
 *
 * The check trusts nothing it reads: the geometry is recomputed from the
 * region size first; every header's size and back size are validated as
 * integers against its page before the walk steps over it; every list or
 * stack link is validated as an index inside the used pages, and shown to
 * be a real block start (by walking its page from the first block) before
 * its fields are used; every loop is bounded by a count the walk found. So
 * a corrupted heap gives -1 and a report, never a crash or a hang.
 *
 * Cost: one pass over the used pages, plus for each listed block a walk
 * of its page up to it (at most a page's blocks). Cold code.
 * Freestanding: no libc.
 */
#include "heaps/xvmalloc_layout.h"

static RTM_COLD int check_fail(const rtm_xvmalloc *h, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, h, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

#define FAIL(where, what) check_fail(h, (where), (what))

/* What the page walk found. */
typedef struct walk_sums {
    size_t list_count[XV_LISTS];
    size_t free_units, free_blocks, used_units, live_blocks, empty_pages;
} walk_sums;

static size_t page_first(const rtm_xvmalloc *h, size_t page)
{
    return page << (h->page_shift - XV_LOG2U);
}

static int check_geometry(const rtm_xvmalloc *h)
{
    if (h->kind != RTM_KIND_XVMALLOC)
        return FAIL(h, "kind word is not an xvmalloc heap's");
    if (h->lost > 7u || h->page_shift < XV_MIN_SHIFT || h->page_shift > XV_MAX_SHIFT ||
        h->page_units != (1u << (h->page_shift - XV_LOG2U)) ||
        h->region_bytes < 7u + xv_ctrl_bytes() + ((size_t)1 << h->page_shift) ||
        h->pages != xv_pages_for(h->region_bytes, h->lost, h->page_shift) || h->pages == 0)
        return FAIL(h, "page geometry differs from the region size");
    if (h->fresh > h->pages || h->empty_count > h->fresh)
        return FAIL(h, "page counters out of range");
    return 0;
}

/* Whether header b at page offset off may be stepped over: a used or free
 * tag of its own offset, a size that stays in the page, and the back size
 * the walk expects. */
static int header_ok(const rtm_xvmalloc *h, const xv_hdr *b, uint32_t off, uint32_t prev)
{
    int tagged = b->tag == xv_tag(XV_USED, off) || b->tag == xv_tag(XV_FREE, off);
    return tagged && b->units >= XV_MIN_UNITS && b->units <= h->page_units - off && b->prev == prev;
}

/* Invariants 1 and 2 for one page in use, and its sums. */
static int walk_page(const rtm_xvmalloc *h, size_t first, walk_sums *s)
{
    uint32_t off = 0, prev = 0;
    int prev_free = 0;
    while (off < h->page_units) {
        const xv_hdr *b = xv_at(h, first + off);
        if (!header_ok(h, b, off, prev))
            return FAIL(b, "block header damaged (tag, size or back size)");
        int is_free = b->tag == xv_tag(XV_FREE, off);
        if (is_free && prev_free)
            return FAIL(b, "two free neighbours not merged");
        if (is_free && b->units == h->page_units)
            return FAIL(b, "an empty page was not given back");
        if (is_free) {
            s->list_count[xv_list_of(b->units)]++;
            s->free_units += b->units;
            s->free_blocks++;
        } else {
            s->used_units += b->units;
            s->live_blocks++;
        }
        prev_free = is_free;
        prev = b->units;
        off += b->units;
    }
    return 0;
}

static int walk_pages(const rtm_xvmalloc *h, walk_sums *s)
{
    for (size_t page = 0; page < h->fresh; page++) {
        const xv_hdr *b = xv_at(h, page_first(h, page));
        if (b->tag == XV_EMPTY) {
            if (b->units != h->page_units || b->prev != 0)
                return FAIL(b, "empty page header damaged");
            s->empty_pages++;
        } else if (walk_page(h, page_first(h, page), s) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The empty-page stack holds exactly the EMPTY pages: as many links as
 * the walk found such pages, each one of them, then the end. A chain that
 * ends after exactly that many distinct steps has no repeat. */
static int check_stack(const rtm_xvmalloc *h, const walk_sums *s)
{
    if (s->empty_pages != h->empty_count)
        return FAIL(h, "empty-page count differs from the empty pages");
    uint32_t link = h->empty_top;
    for (size_t n = 0; n < s->empty_pages; n++) {
        if (link == 0 || link - 1u >= h->fresh)
            return FAIL(h, "empty-page link outside the used pages");
        size_t first = page_first(h, link - 1u);
        if (xv_at(h, first)->tag != XV_EMPTY)
            return FAIL(xv_at(h, first), "empty-page stack holds a page in use");
        link = xv_links_at(h, first)->next;
    }
    if (link != 0)
        return FAIL(h, "empty-page stack longer than the empty pages (or a cycle)");
    return 0;
}

/* Whether a block starts at unit g: its page walked from the first block
 * (headers already validated by walk_pages). O(blocks of the page). */
static int is_block(const rtm_xvmalloc *h, size_t g)
{
    size_t first = g & ~(size_t)(h->page_units - 1u);
    if (xv_at(h, first)->tag == XV_EMPTY)
        return 0;
    size_t at = first;
    while (at < g)
        at += xv_at(h, at)->units;
    return at == g;
}

/* Invariant 3 for list i: followed link by link (each checked as an index,
 * a block start, free, of this list's size, with the right back link),
 * it holds exactly the walk's count, then ends. */
static int check_list(const rtm_xvmalloc *h, unsigned i, size_t expected)
{
    size_t span = (size_t)h->fresh * h->page_units;
    uint32_t link = h->heads[i], prev = 0;
    for (size_t n = 0; n < expected; n++) {
        if (link == 0)
            return FAIL(h, "free list shorter than its blocks");
        size_t g = link - 1u;
        if (g >= span || !is_block(h, g))
            return FAIL(h, "free link is not a block of this heap");
        const xv_hdr *b = xv_at(h, g);
        if (b->tag != xv_tag(XV_FREE, xv_offset(h, g)))
            return FAIL(b, "listed block is not free");
        if (xv_list_of(b->units) != i)
            return FAIL(b, "block on the list of another size");
        if (xv_links_at(h, g)->prev != prev)
            return FAIL(b, "free list back link wrong");
        prev = link;
        link = xv_links_at(h, g)->next;
    }
    if (link != 0)
        return FAIL(h, "free list longer than its blocks (or a cycle)");
    return 0;
}

static int check_bits(const rtm_xvmalloc *h)
{
    if ((h->fl_bits >> XV_FL) != 0)
        return FAIL(h, "first-level bit above the last class");
    for (unsigned f = 0; f < XV_FL; f++) {
        if ((h->sl_bits[f] >> XV_SL) != 0)
            return FAIL(h, "second-level bit above the last list");
        if ((h->sl_bits[f] != 0) != (((h->fl_bits >> f) & 1u) != 0))
            return FAIL(h, "first-level bit differs from its word");
        for (unsigned s = 0; s < XV_SL; s++)
            if ((h->heads[(f << XV_SL_LOG2) + s] != 0) != (((h->sl_bits[f] >> s) & 1u) != 0))
                return FAIL(h, "second-level bit differs from its list");
    }
    return 0;
}

int rtm_xv_check(const rtm_xvmalloc *h)
{
    if (h == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (check_geometry(h) != 0)
        return -1;
    walk_sums s;
    __builtin_memset(&s, 0, sizeof s);
    if (walk_pages(h, &s) != 0 || check_stack(h, &s) != 0 || check_bits(h) != 0)
        return -1;
    for (unsigned i = 0; i < XV_LISTS; i++)
        if (check_list(h, i, s.list_count[i]) != 0)
            return -1;
    if (s.free_units != h->free_units || s.free_blocks != h->free_blocks)
        return FAIL(h, "free counters differ from the blocks");
    if (s.used_units != h->used_units || s.live_blocks != h->live_blocks)
        return FAIL(h, "used counters differ from the blocks");
    if (h->peak_used < xv_used_bytes(h))
        return FAIL(h, "peak below the used bytes");
    return 0;
}

/* Stops (EFAULT) at a header that would lead outside its page; never
 * reads a page from `fresh` on (untouched memory: one free block each). */
int rtm_xv_walk(const rtm_xvmalloc *h, rtm_walker walker, void *arg)
{
    size_t payload = xv_page_payload(h);
    for (size_t page = 0; page < h->pages; page++) {
        size_t first = page_first(h, page);
        xv_hdr *b = xv_at(h, first);
        if (page >= h->fresh || b->tag == XV_EMPTY) {
            walker((char *)b + XV_HDR, payload, 0, arg);
            continue;
        }
        for (uint32_t off = 0; off < h->page_units;) {
            b = xv_at(h, first + off);
            if (b->units < XV_MIN_UNITS || b->units > h->page_units - off) {
                RTM_SET_ERRNO(RTM_EFAULT);
                return -1;
            }
            walker((char *)b + XV_HDR, ((size_t)b->units << XV_LOG2U) - XV_HDR,
                   b->tag == xv_tag(XV_USED, off), arg);
            off += b->units;
        }
    }
    return 0;
}
