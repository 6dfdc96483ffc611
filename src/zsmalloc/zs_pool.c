// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_pool.c -- a pool's shape: the class table, the region's
 * layout (control, handle table, page descriptors, pages), create, the
 * minimum region, statistics.
 *
 * The class table is computed into the control structure at create (257
 * entries, a few instructions each) rather than kept as a global, so the
 * pool needs no initialisation order and no writable global but the tag
 * counter.
 *
 * Pages per span follow Linux's get_pages_per_zspage(): for k in 1..4 the
 * span of k pages wastes `k * page % size` bytes at its tail; the k whose
 * used share (in whole percent) is highest wins, the smallest k on ties.
 * Class 16 takes 1 page (0 waste), class 48 takes 3 (12288 = 256 x 48),
 * class 4112 (a 4096-byte object and its header) takes 4 (3 objects, 24 %
 * waste: the price of accepting a whole page).
 */
#include "zsmalloc/zs_layout.h"

/* Control rounded up so the handle table after it is 16-aligned. */
#define ZS_CTRL_BYTES ((sizeof(rtm_zspool) + ZS_STEP - 1u) & ~(size_t)(ZS_STEP - 1u))
/* What one page costs in the region: itself, its descriptor, its handles. */
#define ZS_BYTES_PER_PAGE (RTM_ZS_PAGE + sizeof(zs_page) + ZS_HANDLES_PER_PAGE * sizeof(zs_entry))
_Static_assert(RTM_ZS_HANDLE_BYTES >= ZS_STEP &&
                   (RTM_ZS_HANDLE_BYTES & (RTM_ZS_HANDLE_BYTES - 1u)) == 0,
               "RTM_ZS_HANDLE_BYTES: a power of two >= 16");
_Static_assert((uint64_t)ZS_MAX_PAGES *ZS_HANDLES_PER_PAGE <= ZS_IDX_MASK,
               "every handle index fits the handle's index bits");

uint32_t rtm_zsi_span_pages(uint32_t size)
{
    uint32_t best = 1, best_used = 0;
    for (uint32_t k = 1; k <= ZS_MAX_SPAN; k++) {
        uint32_t span = k * RTM_ZS_PAGE;
        uint32_t used = (span - span % size) * 100u / span;
        if (used > best_used) {
            best_used = used;
            best = k;
        }
    }
    return best;
}

static void classes_init(rtm_zspool *p)
{
    for (uint32_t c = 0; c < ZS_CLASSES; c++) {
        zs_class *cl = &p->cls[c];
        uint32_t size = (c + 1u) * ZS_STEP;
        uint32_t k = rtm_zsi_span_pages(size);
        for (uint32_t g = 0; g < ZS_GROUPS; g++)
            cl->list[g] = ZS_NONE;
        cl->spans = 0;
        cl->inuse = 0;
        cl->size = (uint16_t)size;
        cl->pages = (uint16_t)k;
        cl->objs = (uint16_t)(k * RTM_ZS_PAGE / size);
        cl->reserved = 0;
    }
}

/* Pages a region of `bytes` holds (0 when not even the control fits). The
 * 15 bytes cover aligning page 0 to 16 wherever the descriptors end. */
static size_t pages_for(size_t bytes)
{
    if (bytes < ZS_CTRL_BYTES + ZS_STEP - 1u)
        return 0;
    size_t n = (bytes - ZS_CTRL_BYTES - (ZS_STEP - 1u)) / ZS_BYTES_PER_PAGE;
    return n > ZS_MAX_PAGES ? ZS_MAX_PAGES : n;
}

size_t rtm_zs_min_region(void)
{
    return ZS_CTRL_BYTES + (ZS_STEP - 1u) + ZS_MAX_SPAN * ZS_BYTES_PER_PAGE;
}

/* Distinct for the last ZS_TAG_MASK pools created in this process, never
 * 0. A plain global: create is not thread-safe with another create (a race
 * could give two pools one tag, which only weakens foreign-handle
 * detection to the generation check). */
static uint32_t next_tag(void)
{
    static uint32_t last;
    last = last % ZS_TAG_MASK + 1u;
    return last;
}

static void layout(rtm_zspool *p, uintptr_t base, uint32_t npages)
{
    p->npages = npages;
    p->nhandles = npages * (uint32_t)ZS_HANDLES_PER_PAGE;
    p->handles_off = ZS_CTRL_BYTES;
    p->pages_off = p->handles_off + (uint64_t)p->nhandles * sizeof(zs_entry);
    uintptr_t end = base + (uintptr_t)p->pages_off + (uintptr_t)npages * sizeof(zs_page);
    p->area_off = (uint64_t)(((end + ZS_STEP - 1u) & ~(uintptr_t)(ZS_STEP - 1u)) - base);
}

rtm_zspool *rtm_zs_create(void *mem, size_t bytes)
{
    uintptr_t base = (uintptr_t)mem;
    if (mem == NULL || (base & (RTM_ALIGN - 1u)) != 0 || bytes < rtm_zs_min_region() ||
        base + bytes < base) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_zspool *p = mem;
    layout(p, base, (uint32_t)pages_for(bytes));
    p->handles_fresh = 0;
    p->handle_free = ZS_NONE;
    p->compact_cursor = 0;
    p->pages_used = 0;
    p->objects = 0;
    p->bytes_stored = 0;
    classes_init(p);
    for (uint32_t o = 0; o < ZS_ORDERS; o++)
        p->free_head[o] = ZS_NONE;
    /* Every descriptor first marked in use, then every page freed: the
     * merges build the largest aligned blocks, and the tail (npages not a
     * multiple of 4) ends in smaller ones. */
    zs_page *pg = zs_pages(p);
    for (uint32_t i = 0; i < p->npages; i++)
        pg[i] = (zs_page){.prev = ZS_NONE, .next = ZS_NONE, .head = i, .state = ZS_PG_SPAN};
    for (uint32_t i = 0; i < p->npages; i++)
        rtm_zsi_block_free(p, i, 0);
    p->tag = next_tag();
    p->magic = ZS_MAGIC;
    return p;
}

rtm_zs_stats rtm_zs_stats_get(const rtm_zspool *p)
{
    rtm_zs_stats st = {0, 0, 0, 0};
    if (!zs_valid_pool(p))
        return st;
    st.pages_total = p->npages;
    st.pages_used = p->pages_used;
    st.objects = p->objects;
    st.bytes_stored = (size_t)p->bytes_stored;
    return st;
}
