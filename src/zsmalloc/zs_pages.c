// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_pages.c -- where spans come from and which list they sit on:
 * a buddy allocator over the pool's pages with orders 0..2 (1, 2, 4
 * pages), the spans cut from it, their free slots, and the per-class
 * fullness lists.
 *
 * Why a buddy of three orders: a span needs 1..4 *contiguous* pages (so
 * that an object straddling a page boundary is still one run of bytes and
 * map needs no copy), and the largest request is 4 pages. Three orders keep
 * every take and give-back O(1): at most two splits, and a span goes back
 * as the (at most two) aligned blocks it was cut from, each merging at most
 * twice. A 3-page span takes a 4-page block and gives its last page
 * straight back.
 *
 *   split (take 1 page from a 4-block):   [ ---- 4 ---- ]
 *                                     =>  [ 1 ][ 1 ][ -- 2 -- ]
 *                                          use  free   free
 *
 * Fullness lists (as Linux's fullness groups): a span with inuse of objs
 * slots used is on list zs_group(inuse, objs) of its class: four partial
 * quarters and one full list. Malloc takes from the fullest partial list,
 * which leaves sparse spans to empty by themselves or by compaction.
 */
#include "zsmalloc/zs_layout.h"

void rtm_zsi_list_push(rtm_zspool *p, uint32_t *head, uint32_t idx)
{
    zs_page *pg = zs_pages(p);
    pg[idx].prev = ZS_NONE;
    pg[idx].next = *head;
    if (*head != ZS_NONE)
        pg[*head].prev = idx;
    *head = idx;
}

void rtm_zsi_list_unlink(rtm_zspool *p, uint32_t *head, uint32_t idx)
{
    zs_page *pg = zs_pages(p);
    uint32_t prev = pg[idx].prev, next = pg[idx].next;
    if (prev != ZS_NONE)
        pg[prev].next = next;
    else
        *head = next;
    if (next != ZS_NONE)
        pg[next].prev = prev;
}

/* Whether page b heads a free block of exactly `order`. */
static int free_head_of_order(const rtm_zspool *p, uint32_t b, uint32_t order)
{
    const zs_page *pg = zs_pages(p);
    return b < p->npages && pg[b].state == ZS_PG_FREE && pg[b].rank == order;
}

void rtm_zsi_block_free(rtm_zspool *p, uint32_t idx, uint32_t order)
{
    zs_page *pg = zs_pages(p);
    for (uint32_t i = 0; i < ((uint32_t)1 << order); i++)
        pg[idx + i].state = ZS_PG_BODY;
    /* Merge while the buddy is a free block of the same order: the lower
     * of the two becomes the head, the other its body. At most two steps. */
    while (order + 1u < ZS_ORDERS) {
        uint32_t buddy = idx ^ ((uint32_t)1 << order);
        if (!free_head_of_order(p, buddy, order))
            break;
        rtm_zsi_list_unlink(p, &p->free_head[order], buddy);
        pg[buddy].state = ZS_PG_BODY;
        idx &= ~((uint32_t)1 << order);
        order++;
    }
    pg[idx].state = ZS_PG_FREE;
    pg[idx].rank = (uint8_t)order;
    rtm_zsi_list_push(p, &p->free_head[order], idx);
}

/* The buddy order that holds k pages (1 -> 0, 2 -> 1, 3 and 4 -> 2). */
static uint32_t order_for(uint32_t k) { return k <= 1u ? 0u : k <= 2u ? 1u : 2u; }

/* Takes a free block of exactly `need` order, splitting a larger one (the
 * upper halves go back on their lists). ZS_NONE when none is free. */
static uint32_t block_take(rtm_zspool *p, uint32_t need)
{
    zs_page *pg = zs_pages(p);
    uint32_t order = need;
    while (order < ZS_ORDERS && p->free_head[order] == ZS_NONE)
        order++;
    if (order >= ZS_ORDERS)
        return ZS_NONE;
    uint32_t idx = p->free_head[order];
    rtm_zsi_list_unlink(p, &p->free_head[order], idx);
    while (order > need) {
        order--;
        uint32_t half = idx + ((uint32_t)1 << order);
        pg[half].state = ZS_PG_FREE;
        pg[half].rank = (uint8_t)order;
        rtm_zsi_list_push(p, &p->free_head[order], half);
    }
    return idx;
}

uint32_t rtm_zsi_span_new(rtm_zspool *p, uint32_t c)
{
    zs_page *pg = zs_pages(p);
    zs_class *cl = &p->cls[c];
    uint32_t k = cl->pages, need = order_for(k);
    uint32_t head = block_take(p, need);
    if (head == ZS_NONE)
        return ZS_NONE;
    for (uint32_t i = 0; i < k; i++) {
        pg[head + i].state = ZS_PG_SPAN;
        pg[head + i].head = head;
    }
    /* A 3-page span gives the block's fourth page straight back, as an
     * order-0 block: its buddy is the span's third page, so no merge. */
    if (k == 3u) {
        pg[head + 3u].state = ZS_PG_FREE;
        pg[head + 3u].rank = 0;
        rtm_zsi_list_push(p, &p->free_head[0], head + 3u);
    }
    pg[head].cls = (uint16_t)c;
    pg[head].rank = ZS_GROUPS; /* on no list until its first object */
    pg[head].inuse = 0;
    pg[head].pins = 0;
    pg[head].free_slot = ZS_SLOT_NONE;
    pg[head].fresh = 0;
    cl->spans++;
    p->pages_used += k;
    return head;
}

void rtm_zsi_span_release(rtm_zspool *p, uint32_t head)
{
    zs_class *cl = &p->cls[zs_pages(p)[head].cls];
    uint32_t k = cl->pages;
    cl->spans--;
    p->pages_used -= k;
    /* As the aligned blocks it was cut from (a 3-page span: 2 + 1 pages),
     * each merging with what is free beside it: <= 2 blocks x 2 merges. */
    if (k == 3u) {
        rtm_zsi_block_free(p, head, 1);
        rtm_zsi_block_free(p, head + 2u, 0);
    } else {
        rtm_zsi_block_free(p, head, order_for(k));
    }
}

uint32_t rtm_zsi_slot_take(rtm_zspool *p, uint32_t head)
{
    zs_page *sp = &zs_pages(p)[head];
    zs_class *cl = &p->cls[sp->cls];
    uint32_t slot = sp->free_slot;
    if (slot != ZS_SLOT_NONE)
        sp->free_slot = (uint16_t)zs_obj_at(p, zs_loc_of(head, slot, cl->size))->word;
    else
        slot = sp->fresh++; /* never used before: nothing to unlink */
    sp->inuse++;
    cl->inuse++;
    return slot;
}

void rtm_zsi_slot_put(rtm_zspool *p, uint32_t head, uint32_t slot)
{
    zs_page *sp = &zs_pages(p)[head];
    zs_class *cl = &p->cls[sp->cls];
    zs_obj *o = zs_obj_at(p, zs_loc_of(head, slot, cl->size));
    o->word = sp->free_slot;
    o->size = 0;
    o->pins = 0;
    sp->free_slot = (uint16_t)slot;
    sp->inuse--;
    cl->inuse--;
}

uint32_t rtm_zsi_span_regroup(rtm_zspool *p, uint32_t head)
{
    zs_page *sp = &zs_pages(p)[head];
    zs_class *cl = &p->cls[sp->cls];
    if (sp->inuse == 0) {
        if (sp->rank < ZS_GROUPS)
            rtm_zsi_list_unlink(p, &cl->list[sp->rank], head);
        uint32_t k = cl->pages;
        rtm_zsi_span_release(p, head);
        return k;
    }
    uint8_t g = zs_group(sp->inuse, cl->objs);
    if (g == sp->rank)
        return 0;
    if (sp->rank < ZS_GROUPS)
        rtm_zsi_list_unlink(p, &cl->list[sp->rank], head);
    sp->rank = g;
    rtm_zsi_list_push(p, &cl->list[g], head);
    return 0;
}
