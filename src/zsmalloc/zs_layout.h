// SPDX-License-Identifier: MIT
/*
 * zsmalloc/zs_layout.h -- the in-region layout of a zsmalloc pool and the
 * table of contents of its files (the public contract is
 * include/rtmem/zsmalloc.h):
 *
 *   zs_pool.c     class table (Linux's pages-per-span choice), create,
 *                 minimum region, statistics
 *   zs_pages.c    the page buddy (orders 0..2), spans, class fullness lists
 *   zs_handle.c   the handle table and validation; malloc, free, map, unmap
 *   zs_compact.c  compaction: one sparse span emptied per call
 *   zs_check.c    the validator
 *
 * Everything is an index, never a pointer, so the pool is position
 * independent: page descriptors and handle entries are found from offsets
 * stored in the control structure.
 *
 * Invariants (zs_check.c verifies them all):
 *  - every page is either in a free buddy block (the block's first page is
 *    a ZS_PG_FREE head on free_head[order], the others ZS_PG_BODY) or in a
 *    span (ZS_PG_SPAN, `head` naming the span's first page);
 *  - a span head is on exactly one fullness list of its class, the one
 *    zs_group(inuse, objs) names; a span with no object does not exist;
 *  - slots [0, fresh) of a span hold a header each: size 0 = free (on the
 *    span's free-slot list through `word`), else live with `word` naming a
 *    handle entry whose loc names this slot, and whose generation is odd;
 *  - handle entries [0, handles_fresh) are either live (odd generation) or
 *    on the handle free list (even generation).
 */
#ifndef RTM_ZS_LAYOUT_H
#define RTM_ZS_LAYOUT_H

#include "core/internal.h"
#include "rtmem/zsmalloc.h"

/* Build-time option: bytes of pages per handle-table entry (a power of two
 * >= 16). Smaller gives more handles for tiny objects at 8 bytes each. */
#ifndef RTM_ZS_HANDLE_BYTES
#define RTM_ZS_HANDLE_BYTES 128u
#endif

#define ZS_MAGIC      0x314d535au /* "ZSM1": layout 1 */
#define ZS_STEP       16u         /* class granularity and slot alignment */
#define ZS_CLASSES    257u        /* 16 .. 4112: the last covers 4096 + header */
#define ZS_MAX_SPAN   4u          /* pages */
#define ZS_ORDERS     3u          /* buddy orders 0, 1, 2: 1, 2, 4 pages */
#define ZS_PARTIAL    4u          /* fullness groups of partly used spans */
#define ZS_FULL       ZS_PARTIAL  /* the group of full spans */
#define ZS_GROUPS     (ZS_PARTIAL + 1u)
#define ZS_NONE       UINT32_MAX
#define ZS_SLOT_NONE  UINT16_MAX
#define ZS_MAX_PINS   UINT16_MAX
#define ZS_SCAN_LIMIT 4u /* spans looked at per group for a compaction source */

/* Handle bits: [ tag 14 | generation 21 | index 29 ]. The generation is odd
 * while the slot is live, so a valid handle is never 0. */
#define ZS_IDX_BITS 29u
#define ZS_GEN_BITS 21u
#define ZS_TAG_BITS 14u
#define ZS_IDX_MASK (((uint32_t)1 << ZS_IDX_BITS) - 1u)
#define ZS_GEN_MASK (((uint32_t)1 << ZS_GEN_BITS) - 1u)
#define ZS_TAG_MASK (((uint32_t)1 << ZS_TAG_BITS) - 1u)

/* Handle entries per page, and the most pages a pool uses: a slot's loc
 * (16-byte units) must fit 32 bits (2^24 pages) and every handle index its
 * 29 bits (fewer pages when RTM_ZS_HANDLE_BYTES is small). */
#define ZS_HANDLES_PER_PAGE (RTM_ZS_PAGE / RTM_ZS_HANDLE_BYTES)
#define ZS_MAX_PAGES                                                                               \
    ((uint32_t)(ZS_IDX_MASK / ZS_HANDLES_PER_PAGE < 0xffffffu ? ZS_IDX_MASK / ZS_HANDLES_PER_PAGE  \
                                                              : 0xffffffu))

enum zs_page_state { ZS_PG_FREE = 1, ZS_PG_BODY = 2, ZS_PG_SPAN = 3 };

/* One per page, out of band (24 bytes). Links serve the buddy free list of
 * a free head and the class fullness list of a span head. */
typedef struct zs_page {
    uint32_t prev, next; /* list links (page indices), ZS_NONE at the ends  */
    uint32_t head;       /* span pages: the span's first page               */
    uint16_t cls;        /* span head: class index                          */
    uint8_t state;       /* enum zs_page_state                              */
    uint8_t rank;        /* free head: buddy order; span head: group        */
    uint16_t inuse;      /* span head: live objects                         */
    uint16_t pins;       /* span head: objects mapped at least once         */
    uint16_t free_slot;  /* span head: first free slot, ZS_SLOT_NONE        */
    uint16_t fresh;      /* span head: slots ever used (the watermark)      */
} zs_page;
_Static_assert(sizeof(zs_page) == 24, "page descriptor layout");

/* One per handle (8 bytes). */
typedef struct zs_entry {
    uint32_t loc; /* live: the object's slot in 16-byte units from page 0;
                     free: the next free entry (ZS_NONE at the end)        */
    uint32_t gen; /* generation, ZS_GEN_BITS wide: odd live, even free     */
} zs_entry;
_Static_assert(sizeof(zs_entry) == 8, "handle entry layout");

/* In front of every slot's data (8 bytes; slots are 16-aligned, so the data
 * is 8-aligned):
 *
 *   slot: [ word | size | pins ][ data: size bytes ... ][ class tail ]
 *           u32    u16    u16
 */
typedef struct zs_obj {
    uint32_t word; /* live: handle entry index; free: next free slot      */
    uint16_t size; /* live: bytes asked for (1..4096); 0: the slot is free */
    uint16_t pins; /* live: nested maps                                    */
} zs_obj;
_Static_assert(sizeof(zs_obj) == RTM_ZS_HEADER_BYTES, "object header layout");

typedef struct zs_class {
    uint32_t list[ZS_GROUPS]; /* span heads by fullness group            */
    uint32_t spans;           /* spans of this class                     */
    uint32_t inuse;           /* live objects of this class              */
    uint16_t size;            /* slot bytes, header included             */
    uint16_t objs;            /* slots per span                          */
    uint16_t pages;           /* pages per span (1..4)                   */
    uint16_t reserved;
} zs_class;

struct rtm_zspool {
    uint32_t magic; /* ZS_MAGIC: refuses what is not a pool              */
    uint32_t tag;   /* in every handle: refuses other pools' handles      */
    uint32_t npages;
    uint32_t nhandles;               /* table capacity                    */
    uint32_t handles_fresh;          /* entries ever issued (watermark)   */
    uint32_t handle_free;            /* free entry list head              */
    uint32_t compact_cursor;         /* class where compaction looks next */
    uint32_t free_head[ZS_ORDERS];   /* buddy free lists                  */
    uint32_t pages_used;             /* pages in spans                    */
    uint32_t objects;                /* live handles                      */
    uint64_t bytes_stored;           /* sum of live sizes                 */
    uint64_t handles_off, pages_off; /* from the control structure        */
    uint64_t area_off;               /* page 0, 16-aligned                */
    zs_class cls[ZS_CLASSES];
};

/* --- accessors: offsets to addresses ------------------------------------ */

static inline zs_entry *zs_entries(const rtm_zspool *p)
{
    return (zs_entry *)(void *)((char *)(uintptr_t)p + p->handles_off);
}
static inline zs_page *zs_pages(const rtm_zspool *p)
{
    return (zs_page *)(void *)((char *)(uintptr_t)p + p->pages_off);
}
static inline char *zs_area(const rtm_zspool *p) { return (char *)(uintptr_t)p + p->area_off; }
/* A slot's header from its loc (16-byte units from page 0). */
static inline zs_obj *zs_obj_at(const rtm_zspool *p, uint32_t loc)
{
    return (zs_obj *)(void *)(zs_area(p) + (size_t)loc * ZS_STEP);
}
static inline uint32_t zs_loc_of(uint32_t page, uint32_t slot, uint32_t slot_size)
{
    return (uint32_t)(((size_t)page * RTM_ZS_PAGE + (size_t)slot * slot_size) / ZS_STEP);
}
static inline uint32_t zs_page_of_loc(uint32_t loc)
{
    return (uint32_t)(((size_t)loc * ZS_STEP) / RTM_ZS_PAGE);
}
/* The fullness group of a span with inuse of objs slots used (inuse > 0). */
static inline uint8_t zs_group(uint32_t inuse, uint32_t objs)
{
    return (uint8_t)(inuse >= objs ? ZS_FULL : inuse * ZS_PARTIAL / objs);
}
static inline int zs_valid_pool(const rtm_zspool *p) { return p != NULL && p->magic == ZS_MAGIC; }

/* --- zs_pool.c ----------------------------------------------------------- */

/* The class of a request (size 1..RTM_ZS_MAX_SIZE). */
static inline uint32_t zs_class_of(size_t size)
{
    return (uint32_t)((size + RTM_ZS_HEADER_BYTES + ZS_STEP - 1u) / ZS_STEP - 1u);
}
/* Pages per span for slot size `size` as Linux chooses them. */
uint32_t rtm_zsi_span_pages(uint32_t size);

/* --- zs_pages.c ---------------------------------------------------------- */

/* Doubly linked lists over page descriptors. */
void rtm_zsi_list_push(rtm_zspool *p, uint32_t *head, uint32_t idx);
void rtm_zsi_list_unlink(rtm_zspool *p, uint32_t *head, uint32_t idx);
/* Gives the aligned block of 2^order pages at idx back to the buddy,
 * merging with free buddies (at most two merges). */
void rtm_zsi_block_free(rtm_zspool *p, uint32_t idx, uint32_t order);
/* A new, empty span of class c, on no list yet (rtm_zsi_span_regroup links
 * it once it holds an object). Returns its head page, or ZS_NONE when no
 * buddy block of enough pages is free. */
uint32_t rtm_zsi_span_new(rtm_zspool *p, uint32_t c);
/* Gives the pages of an empty span (already off its class list) back. */
void rtm_zsi_span_release(rtm_zspool *p, uint32_t head);
/* Takes a slot of span head (which has one free): its index. */
uint32_t rtm_zsi_slot_take(rtm_zspool *p, uint32_t head);
/* Returns slot `slot` of span head to its free-slot list. */
void rtm_zsi_slot_put(rtm_zspool *p, uint32_t head, uint32_t slot);
/* Moves span head to the fullness list its inuse count calls for (or off
 * every list and back to the buddy when empty: returns pages given back). */
uint32_t rtm_zsi_span_regroup(rtm_zspool *p, uint32_t head);

#endif /* RTM_ZS_LAYOUT_H */
