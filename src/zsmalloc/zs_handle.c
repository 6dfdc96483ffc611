// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_handle.c -- handles: the table that names every object
 * wherever compaction puts it, and the four O(1) calls that go through it
 * (malloc, free, map, unmap).
 *
 * A handle is [ tag 14 | generation 21 | index 29 ] (zs_layout.h). The
 * index picks an entry of the table; the entry holds the object's slot and
 * the generation, odd while live and bumped on every free, so a handle
 * kept after its free (or after its entry was issued again) no longer
 * matches. The tag names the pool, so another pool's handle is refused
 * even when its index and generation happen to match here. Validation is
 * three compares and never reads beyond the table's issued part: entries
 * past the watermark were never issued, whatever their memory holds.
 *
 * Entries are issued from a free list first (LIFO), then from the
 * watermark, so create writes nothing into the table.
 */
#include "zsmalloc/zs_layout.h"

static rtm_zs_handle encode(const rtm_zspool *p, uint32_t idx, uint32_t gen)
{
    return ((uint64_t)p->tag << (ZS_IDX_BITS + ZS_GEN_BITS)) | ((uint64_t)gen << ZS_IDX_BITS) | idx;
}

/* What a refused call reports: the sentences per kind of badness. */
typedef struct zs_misuse {
    const char *foreign; /* 0, another pool's, never issued */
    const char *stale;   /* freed, or its entry issued again */
} zs_misuse;

static const zs_misuse misuse_free = {
    "rtm_zs_free: handle 0, of another pool, or never issued",
    "rtm_zs_free: handle already freed (or stale: its slot was reused)"};
static const zs_misuse misuse_map = {"rtm_zs_map: handle 0, of another pool, or never issued",
                                     "rtm_zs_map: handle freed (or stale: its slot was reused)"};
static const zs_misuse misuse_unmap = {
    "rtm_zs_unmap: handle 0, of another pool, or never issued",
    "rtm_zs_unmap: handle freed (or stale: its slot was reused)"};

RTM_COLD static zs_entry *refuse(const rtm_zspool *p, rtm_zs_handle h, rtm_error_kind kind,
                                 const char *detail)
{
    rtm_report(kind, p, (const void *)(uintptr_t)h, detail);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* The live entry h names, or NULL (reported, errno EINVAL). */
static zs_entry *resolve(const rtm_zspool *p, rtm_zs_handle h, const zs_misuse *m)
{
    if (RTM_UNLIKELY(!zs_valid_pool(p))) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    uint32_t idx = (uint32_t)h & ZS_IDX_MASK;
    uint32_t gen = (uint32_t)(h >> ZS_IDX_BITS) & ZS_GEN_MASK;
    uint64_t tag = h >> (ZS_IDX_BITS + ZS_GEN_BITS);
    if (RTM_UNLIKELY(tag != p->tag || idx >= p->handles_fresh))
        return refuse(p, h, RTM_ERR_FOREIGN_POINTER, m->foreign);
    zs_entry *e = &zs_entries(p)[idx];
    if (RTM_UNLIKELY(e->gen != gen || (gen & 1u) == 0))
        return refuse(p, h, RTM_ERR_DOUBLE_FREE, m->stale);
    return e;
}

/* The span a live object's slot lies in. */
static uint32_t head_of(const rtm_zspool *p, uint32_t loc)
{
    return zs_pages(p)[zs_page_of_loc(loc)].head;
}

/* The same, and the slot's index there (one division). */
static uint32_t span_of(const rtm_zspool *p, uint32_t loc, uint32_t *slot)
{
    uint32_t head = head_of(p, loc);
    uint32_t size = p->cls[zs_pages(p)[head].cls].size;
    *slot = (uint32_t)(((size_t)loc * ZS_STEP - (size_t)head * RTM_ZS_PAGE) / size);
    return head;
}

/* A span of class c with a free slot: the head of the fullest partial list
 * (fills spans up, leaving sparse ones to drain), else a new span. */
static uint32_t span_for(rtm_zspool *p, uint32_t c)
{
    const zs_class *cl = &p->cls[c];
    for (uint32_t g = ZS_PARTIAL; g-- > 0;) {
        if (cl->list[g] != ZS_NONE)
            return cl->list[g];
    }
    return rtm_zsi_span_new(p, c);
}

/* Takes an entry (the caller checked one is available). */
static uint32_t entry_take(rtm_zspool *p)
{
    uint32_t idx = p->handle_free;
    if (idx != ZS_NONE) {
        p->handle_free = zs_entries(p)[idx].loc;
        return idx;
    }
    idx = p->handles_fresh++;
    zs_entries(p)[idx].gen = 0; /* never issued: generation 0, even */
    return idx;
}

rtm_zs_handle rtm_zs_malloc(rtm_zspool *p, size_t size)
{
    if (RTM_UNLIKELY(!zs_valid_pool(p) || size == 0)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    if (RTM_UNLIKELY(size > RTM_ZS_MAX_SIZE ||
                     (p->handle_free == ZS_NONE && p->handles_fresh >= p->nhandles))) {
        RTM_SET_ERRNO(RTM_ENOMEM);
        return 0;
    }
    uint32_t c = zs_class_of(size);
    uint32_t head = span_for(p, c);
    if (RTM_UNLIKELY(head == ZS_NONE)) {
        RTM_SET_ERRNO(RTM_ENOMEM);
        return 0;
    }
    uint32_t slot = rtm_zsi_slot_take(p, head);
    rtm_zsi_span_regroup(p, head);
    uint32_t idx = entry_take(p);
    zs_entry *e = &zs_entries(p)[idx];
    e->gen = (e->gen + 1u) & ZS_GEN_MASK; /* even -> odd: live */
    e->loc = zs_loc_of(head, slot, p->cls[c].size);
    zs_obj *o = zs_obj_at(p, e->loc);
    o->word = idx;
    o->size = (uint16_t)size;
    o->pins = 0;
    p->objects++;
    p->bytes_stored += size;
    return encode(p, idx, e->gen);
}

void rtm_zs_free(rtm_zspool *p, rtm_zs_handle h)
{
    zs_entry *e = resolve(p, h, &misuse_free);
    if (e == NULL)
        return;
    uint32_t slot, head = span_of(p, e->loc, &slot);
    zs_obj *o = zs_obj_at(p, e->loc);
    if (o->pins != 0) /* freeing a mapped object ends its mappings */
        zs_pages(p)[head].pins--;
    p->objects--;
    p->bytes_stored -= o->size;
    rtm_zsi_slot_put(p, head, slot);
    rtm_zsi_span_regroup(p, head);
    uint32_t idx = (uint32_t)h & ZS_IDX_MASK;
    e->gen = (e->gen + 1u) & ZS_GEN_MASK; /* odd -> even: free */
    e->loc = p->handle_free;
    p->handle_free = idx;
}

void *rtm_zs_map(rtm_zspool *p, rtm_zs_handle h)
{
    zs_entry *e = resolve(p, h, &misuse_map);
    if (e == NULL)
        return NULL;
    zs_obj *o = zs_obj_at(p, e->loc);
    if (RTM_UNLIKELY(o->pins == ZS_MAX_PINS)) {
        RTM_SET_ERRNO(RTM_ENOMEM);
        return NULL;
    }
    if (o->pins++ == 0) /* first pin: the span may not be emptied now */
        zs_pages(p)[head_of(p, e->loc)].pins++;
    return o + 1;
}

void rtm_zs_unmap(rtm_zspool *p, rtm_zs_handle h)
{
    zs_entry *e = resolve(p, h, &misuse_unmap);
    if (e == NULL)
        return;
    zs_obj *o = zs_obj_at(p, e->loc);
    if (RTM_UNLIKELY(o->pins == 0)) {
        refuse(p, h, RTM_ERR_DOUBLE_FREE, "rtm_zs_unmap: handle not mapped");
        return;
    }
    if (--o->pins == 0)
        zs_pages(p)[head_of(p, e->loc)].pins--;
}
