// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_compact.c -- compaction: empty one sparse span of a class into
 * the fuller spans of the same class and give its pages back, with every
 * handle still naming its object (the entry's slot is re-pointed).
 *
 * Bound per call (no budget argument): one scan over the 257 classes,
 * starting where the last call stopped (round robin, so every class gets
 * its turn), for a class that can lose a span; then at most one span
 * emptied: <= 256 objects moved, each a copy of its header and data (<= 16
 * KiB in all, the span's size), plus O(1) list work per move; then the
 * span's <= 4 pages given back to the buddy.
 *
 * A class can lose a span when its free slots add up to at least one whole
 * span (free = spans x objs - inuse >= objs): then the slots of the other
 * spans hold the source's objects wherever they are. The source is the
 * first unpinned span among the first ZS_SCAN_LIMIT spans of the sparsest
 * non-empty partial lists (a mapped object is never moved, so a span with
 * a pin is never a source; it may be a destination). Destinations are the
 * fullest partial spans, as Linux's zs_compact takes them.
 */
#include "zsmalloc/zs_layout.h"

/* The first unpinned span of the sparsest partial lists, looking at no
 * more than ZS_SCAN_LIMIT spans per list. ZS_NONE when all are pinned. */
static uint32_t pick_source(const rtm_zspool *p, const zs_class *cl)
{
    const zs_page *pg = zs_pages(p);
    for (uint32_t g = 0; g < ZS_PARTIAL; g++) {
        uint32_t idx = cl->list[g];
        for (uint32_t n = 0; n < ZS_SCAN_LIMIT && idx != ZS_NONE; n++, idx = pg[idx].next) {
            if (pg[idx].pins == 0)
                return idx;
        }
    }
    return ZS_NONE;
}

/* The fullest partial span (the source is on no list, so never this). */
static uint32_t pick_destination(const zs_class *cl)
{
    for (uint32_t g = ZS_PARTIAL; g-- > 0;) {
        if (cl->list[g] != ZS_NONE)
            return cl->list[g];
    }
    return ZS_NONE;
}

/* Moves the live object in slot `slot` of span src into span dst. */
static void move_object(rtm_zspool *p, const zs_class *cl, uint32_t src, uint32_t slot,
                        uint32_t dst)
{
    zs_obj *from = zs_obj_at(p, zs_loc_of(src, slot, cl->size));
    uint32_t to_slot = rtm_zsi_slot_take(p, dst);
    uint32_t to_loc = zs_loc_of(dst, to_slot, cl->size);
    zs_obj *to = zs_obj_at(p, to_loc);
    RTM_ASSERT(from->pins == 0 && from->size != 0);
    __builtin_memcpy(to, from, RTM_ZS_HEADER_BYTES + (size_t)from->size);
    zs_entries(p)[to->word].loc = to_loc;
    rtm_zsi_slot_put(p, src, slot);
    rtm_zsi_span_regroup(p, dst);
}

/* Empties a span of class c if the class can lose one; the pages given
 * back (0: nothing to do in this class). */
static uint32_t compact_class(rtm_zspool *p, uint32_t c)
{
    zs_class *cl = &p->cls[c];
    zs_page *pg = zs_pages(p);
    if (cl->spans < 2u || (uint64_t)cl->spans * cl->objs - cl->inuse < cl->objs)
        return 0;
    uint32_t src = pick_source(p, cl);
    if (src == ZS_NONE)
        return 0;
    /* Off its list while it drains, so it is never its own destination. */
    rtm_zsi_list_unlink(p, &cl->list[pg[src].rank], src);
    pg[src].rank = ZS_GROUPS;
    for (uint32_t slot = 0; pg[src].inuse != 0; slot++) {
        if (zs_obj_at(p, zs_loc_of(src, slot, cl->size))->size == 0)
            continue; /* a free slot */
        uint32_t dst = pick_destination(cl);
        RTM_ASSERT(dst != ZS_NONE && slot < pg[src].fresh);
        move_object(p, cl, src, slot, dst);
    }
    return rtm_zsi_span_regroup(p, src); /* empty: back to the buddy */
}

size_t rtm_zs_compact(rtm_zspool *p)
{
    if (!zs_valid_pool(p)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    for (uint32_t n = 0; n < ZS_CLASSES; n++) {
        uint32_t c = (p->compact_cursor + n) % ZS_CLASSES;
        uint32_t got = compact_class(p, c);
        if (got != 0) {
            p->compact_cursor = (c + 1u) % ZS_CLASSES;
            return got;
        }
    }
    return 0;
}
