// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_check.c -- rtm_zs_check(): every invariant of zs_layout.h,
 * in O(pages + handles issued), in every build.
 *
 * Order: the control's own numbers, then one walk over the pages (free
 * blocks and spans, and inside each span its slots against the handle
 * table), then every list walked with a step bound (a cycle or a link out
 * of the pool fails instead of looping or reading outside), then the
 * handle table, then the counters against what the walks counted. An index
 * is range-checked before it is followed.
 */
#include "zsmalloc/zs_layout.h"

/* What the walks add up, to compare with the counters and the lists. */
typedef struct zs_tally {
    uint64_t bytes;
    uint32_t pages_used, objects, free_blocks[ZS_ORDERS];
    uint32_t spans[ZS_CLASSES], inuse[ZS_CLASSES];
} zs_tally;

RTM_COLD static int fail(rtm_zspool *p, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, p, NULL, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

static int check_control(rtm_zspool *p)
{
    if (p->npages == 0 || p->npages > ZS_MAX_PAGES || p->handles_fresh > p->nhandles ||
        p->pages_off < p->handles_off + (uint64_t)p->nhandles * sizeof(zs_entry) ||
        p->area_off < p->pages_off + (uint64_t)p->npages * sizeof(zs_page) ||
        p->compact_cursor >= ZS_CLASSES)
        return fail(p, "rtm_zs_check: control structure out of range");
    for (uint32_t c = 0; c < ZS_CLASSES; c++) {
        const zs_class *cl = &p->cls[c];
        if (cl->size != (c + 1u) * ZS_STEP || cl->pages != rtm_zsi_span_pages(cl->size) ||
            cl->objs != cl->pages * RTM_ZS_PAGE / cl->size)
            return fail(p, "rtm_zs_check: class table damaged");
    }
    return 0;
}

/* A free buddy block at page i: aligned, inside the pool, body pages
 * marked, not mergeable with its buddy. */
static int check_free_block(rtm_zspool *p, uint32_t i, zs_tally *t)
{
    const zs_page *pg = zs_pages(p);
    uint32_t order = pg[i].rank, n = (uint32_t)1 << order;
    if (order >= ZS_ORDERS || (i & (n - 1u)) != 0 || n > p->npages - i)
        return fail(p, "rtm_zs_check: free block misplaced");
    for (uint32_t j = 1; j < n; j++) {
        if (pg[i + j].state != ZS_PG_BODY)
            return fail(p, "rtm_zs_check: free block's page not marked free");
    }
    uint32_t buddy = i ^ n;
    if (order + 1u < ZS_ORDERS && buddy < p->npages && pg[buddy].state == ZS_PG_FREE &&
        pg[buddy].rank == order)
        return fail(p, "rtm_zs_check: two free buddies not merged");
    t->free_blocks[order]++;
    return 0;
}

/* Slot `slot` of span head: free (counted in *free) or a live object whose
 * handle entry names it back. */
static int check_slot(rtm_zspool *p, uint32_t head, uint32_t slot, zs_tally *t, uint32_t *live,
                      uint32_t *pinned)
{
    const zs_class *cl = &p->cls[zs_pages(p)[head].cls];
    uint32_t loc = zs_loc_of(head, slot, cl->size);
    const zs_obj *o = zs_obj_at(p, loc);
    if (o->size == 0)
        return 0;
    if (o->size > RTM_ZS_MAX_SIZE || zs_class_of(o->size) != zs_pages(p)[head].cls)
        return fail(p, "rtm_zs_check: object header's size not of its class");
    if (o->word >= p->handles_fresh)
        return fail(p, "rtm_zs_check: object header names no issued handle");
    const zs_entry *e = &zs_entries(p)[o->word];
    if ((e->gen & 1u) == 0 || e->loc != loc)
        return fail(p, "rtm_zs_check: object's handle does not name it");
    (*live)++;
    *pinned += o->pins != 0;
    t->bytes += o->size;
    return 0;
}

/* The free-slot list of span head: inside [0, fresh), each slot free,
 * exactly fresh - inuse long. */
static int check_free_slots(rtm_zspool *p, uint32_t head)
{
    const zs_page *sp = &zs_pages(p)[head];
    const zs_class *cl = &p->cls[sp->cls];
    uint32_t n = 0, slot = sp->free_slot;
    for (; slot != ZS_SLOT_NONE; n++) {
        if (n >= sp->fresh || slot >= sp->fresh)
            return fail(p, "rtm_zs_check: span's free-slot list broken");
        const zs_obj *o = zs_obj_at(p, zs_loc_of(head, slot, cl->size));
        if (o->size != 0)
            return fail(p, "rtm_zs_check: live object on a free-slot list");
        slot = o->word;
    }
    if (n != (uint32_t)sp->fresh - sp->inuse)
        return fail(p, "rtm_zs_check: span's free-slot count wrong");
    return 0;
}

static int check_span(rtm_zspool *p, uint32_t i, zs_tally *t)
{
    const zs_page *pg = zs_pages(p);
    const zs_page *sp = &pg[i];
    if (sp->cls >= ZS_CLASSES)
        return fail(p, "rtm_zs_check: span of no class");
    const zs_class *cl = &p->cls[sp->cls];
    if (cl->pages > p->npages - i)
        return fail(p, "rtm_zs_check: span beyond the pool");
    for (uint32_t j = 1; j < cl->pages; j++) {
        if (pg[i + j].state != ZS_PG_SPAN || pg[i + j].head != i)
            return fail(p, "rtm_zs_check: span's page not marked as its own");
    }
    if (sp->fresh > cl->objs || sp->inuse > sp->fresh || sp->inuse == 0 ||
        sp->rank != zs_group(sp->inuse, cl->objs))
        return fail(p, "rtm_zs_check: span counters or fullness group wrong");
    uint32_t live = 0, pinned = 0;
    for (uint32_t s = 0; s < sp->fresh; s++) {
        if (check_slot(p, i, s, t, &live, &pinned) != 0)
            return -1;
    }
    if (live != sp->inuse || pinned != sp->pins)
        return fail(p, "rtm_zs_check: span's live or pinned count wrong");
    if (check_free_slots(p, i) != 0)
        return -1;
    t->spans[sp->cls]++;
    t->inuse[sp->cls] += live;
    t->objects += live;
    t->pages_used += cl->pages;
    return 0;
}

static int check_pages(rtm_zspool *p, zs_tally *t)
{
    const zs_page *pg = zs_pages(p);
    for (uint32_t i = 0; i < p->npages;) {
        if (pg[i].state == ZS_PG_FREE) {
            if (check_free_block(p, i, t) != 0)
                return -1;
            i += (uint32_t)1 << pg[i].rank;
        } else if (pg[i].state == ZS_PG_SPAN && pg[i].head == i) {
            if (check_span(p, i, t) != 0)
                return -1;
            i += p->cls[pg[i].cls].pages;
        } else {
            return fail(p, "rtm_zs_check: page neither free block nor span start");
        }
    }
    return 0;
}

/* Walks a list of page descriptors: at most `bound` members, each
 * satisfying is_member, prev links consistent; *count gets its length. */
static int walk_list(rtm_zspool *p, uint32_t head, uint32_t bound,
                     int (*is_member)(const zs_page *, uint32_t), uint32_t key, uint32_t *count)
{
    const zs_page *pg = zs_pages(p);
    uint32_t n = 0, prev = ZS_NONE;
    for (uint32_t idx = head; idx != ZS_NONE; prev = idx, idx = pg[idx].next, n++) {
        if (n >= bound || idx >= p->npages || pg[idx].prev != prev || !is_member(&pg[idx], key))
            return fail(p, "rtm_zs_check: list broken, too long, or with a wrong member");
    }
    *count = n;
    return 0;
}

static int is_free_of_order(const zs_page *pg, uint32_t order)
{
    return pg->state == ZS_PG_FREE && pg->rank == order;
}
/* key: class * ZS_GROUPS + group */
static int is_span_of(const zs_page *pg, uint32_t key)
{
    return pg->state == ZS_PG_SPAN && pg->cls == key / ZS_GROUPS && pg->rank == key % ZS_GROUPS;
}

static int check_lists(rtm_zspool *p, const zs_tally *t)
{
    uint32_t n = 0;
    for (uint32_t o = 0; o < ZS_ORDERS; o++) {
        if (walk_list(p, p->free_head[o], t->free_blocks[o], is_free_of_order, o, &n) != 0)
            return -1;
        if (n != t->free_blocks[o])
            return fail(p, "rtm_zs_check: free block missing from its list");
    }
    for (uint32_t c = 0; c < ZS_CLASSES; c++) {
        const zs_class *cl = &p->cls[c];
        if (cl->spans != t->spans[c] || cl->inuse != t->inuse[c])
            return fail(p, "rtm_zs_check: class counters wrong");
        /* Each member is pinned to its group by is_span_of; together the
         * groups must hold every span of the class exactly once. */
        uint32_t left = cl->spans;
        for (uint32_t g = 0; g < ZS_GROUPS; g++) {
            if (walk_list(p, cl->list[g], left, is_span_of, c * ZS_GROUPS + g, &n) != 0)
                return -1;
            left -= n;
        }
        if (left != 0)
            return fail(p, "rtm_zs_check: span on no list of its class");
    }
    return 0;
}

/* The handle table: free list of even entries, the rest live. */
static int check_handles(rtm_zspool *p, const zs_tally *t)
{
    const zs_entry *e = zs_entries(p);
    uint32_t live = 0, n = 0;
    for (uint32_t i = 0; i < p->handles_fresh; i++)
        live += e[i].gen & 1u;
    uint32_t free_entries = p->handles_fresh - live;
    for (uint32_t idx = p->handle_free; idx != ZS_NONE; idx = e[idx].loc, n++) {
        if (n >= free_entries || idx >= p->handles_fresh || (e[idx].gen & 1u) != 0 ||
            e[idx].gen > ZS_GEN_MASK)
            return fail(p, "rtm_zs_check: handle free list broken");
    }
    if (n != free_entries || live != t->objects)
        return fail(p, "rtm_zs_check: live handles and live objects differ");
    return 0;
}

int rtm_zs_check(rtm_zspool *p)
{
    if (p == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (p->magic != ZS_MAGIC)
        return fail(p, "rtm_zs_check: not a zsmalloc pool");
    static const zs_tally zero;
    zs_tally t = zero;
    if (check_control(p) != 0 || check_pages(p, &t) != 0 || check_lists(p, &t) != 0 ||
        check_handles(p, &t) != 0)
        return -1;
    if (t.pages_used != p->pages_used || t.objects != p->objects || t.bytes != p->bytes_stored)
        return fail(p, "rtm_zs_check: statistics differ from the pool's contents");
    return 0;
}
