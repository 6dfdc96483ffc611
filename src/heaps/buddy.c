// SPDX-License-Identifier: MIT
/*
 * heaps/buddy.c -- rtmem's binary buddy page allocator (Knowlton 1965; the
 * layout of Linux's mm/page_alloc.c): create, alloc (by order and by bytes),
 * free, realloc, stats, reset, check and walk. Contracts and the region
 * arithmetic: include/rtmem/buddy.h.
 *
 *   [kind|shift|nonempty|top|...|head[0..31]] [page map] [pad] [arena pages]
 *
 * Split (alloc of order 0 from a free block of order 2 at page 0): the
 * block is halved until it has the wanted order; each upper half (the
 * buddy) goes on the free list of its order:
 *
 *   order 2: [ ------------- free 4 ------------- ]
 *   order 1: [ ----- 2 ----- ][ ---- free 2 ----- ]   buddy 2 listed, order 1
 *   order 0: [ used ][ free ]  [ ---- free 2 ----- ]   buddy 1 listed, order 0
 *
 * Merge (free of block i of order k): its buddy is i ^ 2^k; when the map
 * says the buddy is a free block start of order k, it leaves its list and
 * the pair becomes one block of order k + 1 at min(i, buddy); repeat:
 *
 *   [ free ][ i  ]  [ ---- free 2 ----- ]   free page 1: buddy 0 is free, 0
 *   [ --- 2 ---- ]  [ ---- free 2 ----- ]   order-1 block 0: buddy 2 is free
 *   [ ------------- free 4 ------------- ]  listed on order 2
 *
 * Page map: one byte per page. A block's first page holds START, FREE if
 * the block is free, and its order; every other page holds 0:
 *
 *   page:   0    1    2    3    4    5    6    7    8    9    10   11   12
 *   map:  [S 2][ 0 ][ 0 ][ 0 ][SF1][ 0 ][S 0][SF0][SF2][ 0 ][ 0 ][ 0 ][SF0]
 *          used, 4 pages     free, 2   used free  free, 4 pages      free
 *
 * So free(ptr) finds the order in O(1) (page index = offset >> shift), and
 * refuses a pointer whose page is not a block start (interior, foreign) or
 * whose start is marked free (double free), without any block header.
 *
 * Invariants (rtm_buddy_check() verifies each one):
 *  1. The blocks tile the arena: from page 0, each block start's order says
 *     where the next block starts; interior pages are 0. A block of order k
 *     starts at a multiple of 2^k pages and ends inside the arena.
 *  2. A free block is on the list of its order, exactly once; the list is
 *     doubly linked through offsets in the block's first bytes.
 *  3. Bit k of `nonempty` is set iff list k is non-empty.
 *  4. No free block of order k < MAX_ORDER has a free buddy of order k
 *     (merging is complete, so freeing everything restores the initial
 *     decomposition: maximal blocks in decreasing size).
 *  5. used_pages + free_pages = pages; live = used block starts.
 *
 * Time bound: alloc is one ctz over `nonempty` plus at most top - k <=
 * RTM_BUDDY_MAX_ORDER splits; free is at most RTM_BUDDY_MAX_ORDER merges;
 * each step is a fixed number of map writes and list operations.
 *
 * Freestanding: no libc (only __builtin_memcpy/memset), like heaps/tlsf.c;
 * page arithmetic uses shifts only (no 64-bit division on 32-bit targets).
 * Not thread-safe; the caller serialises access to one heap.
 */
#include "core/internal.h"
#include "core/kind.h"
#include "heaps/buddy_internal.h"
#include "rtmem/buddy.h"

#define GRAN   ((size_t)RTM_ALIGN)
#define ORDERS (RTM_BUDDY_MAX_ORDER + 1u)

/* Page map entry bits. */
#define M_START 0x80u
#define M_FREE  0x40u
#define M_ORDER 0x3fu

struct rtm_buddy {
    uint32_t kind;          /* RTM_KIND_BUDDY (core/internal.h)            */
    uint32_t shift;         /* log2(page size)                             */
    uint32_t nonempty;      /* bit k set iff free list k is non-empty      */
    uint32_t top;           /* order of the largest block the arena has    */
    size_t pages;           /* pages in the arena                          */
    size_t arena_bytes;     /* bytes given by the caller                   */
    size_t used_pages;      /* pages in live blocks                        */
    size_t free_pages;      /* pages in free blocks                        */
    size_t live;            /* live blocks                                 */
    size_t peak_used;       /* highest used_pages since create or reset    */
    size_t failed_allocs;   /* ENOMEM refusals                             */
    ptrdiff_t map;          /* offset of the page map from the control     */
    ptrdiff_t arena;        /* offset of page 0 from the control           */
    ptrdiff_t head[ORDERS]; /* offset of each list's first block, 0 = none */
};

/* The links a free block holds in its first bytes. */
typedef struct free_links {
    ptrdiff_t next, prev; /* offsets from the control, 0 = none */
} free_links;

_Static_assert(sizeof(free_links) <= RTM_BUDDY_MIN_PAGE, "a free block holds its links");
_Static_assert(ORDERS <= 32u, "the order bitmap is one 32-bit word");
_Static_assert(RTM_BUDDY_MAX_ORDER <= M_ORDER, "an order fits in a map entry");

/* --- accessors --------------------------------------------------------- */

static inline char *base(const rtm_buddy *b) { return (char *)(uintptr_t)b; }
static inline uint8_t *map(const rtm_buddy *b) { return (uint8_t *)(base(b) + b->map); }
static inline char *arena(const rtm_buddy *b) { return base(b) + b->arena; }
static inline size_t page(const rtm_buddy *b) { return (size_t)1 << b->shift; }
static inline char *page_at(const rtm_buddy *b, size_t i) { return arena(b) + (i << b->shift); }
static inline ptrdiff_t page_off(const rtm_buddy *b, size_t i)
{
    return b->arena + (ptrdiff_t)(i << b->shift);
}
static inline size_t page_index(const rtm_buddy *b, ptrdiff_t off)
{
    return (size_t)(off - b->arena) >> b->shift;
}
static inline free_links *links(const rtm_buddy *b, ptrdiff_t off)
{
    return (free_links *)(uintptr_t)(base(b) + off);
}
static inline size_t lowest_bit(uintptr_t x) { return (size_t)(x & (~x + 1u)); }

static inline uint8_t entry_used(unsigned k) { return (uint8_t)(M_START | k); }
static inline uint8_t entry_free(unsigned k) { return (uint8_t)(M_START | M_FREE | k); }

/* --- free lists (invariants 2 and 3) ----------------------------------- */

static void list_push(rtm_buddy *b, size_t i, unsigned k)
{
    ptrdiff_t off = page_off(b, i);
    free_links *l = links(b, off);
    RTM_ASSERT(k < ORDERS && (i & (((size_t)1 << k) - 1u)) == 0); /* natural alignment */
    l->next = b->head[k];
    l->prev = 0;
    if (b->head[k] != 0)
        links(b, b->head[k])->prev = off;
    b->head[k] = off;
    b->nonempty |= (uint32_t)1 << k;
    map(b)[i] = entry_free(k);
}

/* O(1) removal from anywhere in the list: why the list is doubly linked
 * (a merge takes the buddy out of the middle of its list). */
static void list_remove(rtm_buddy *b, size_t i, unsigned k)
{
    free_links *l = links(b, page_off(b, i));
    RTM_ASSERT(k < ORDERS && map(b)[i] == entry_free(k));
    if (l->prev != 0)
        links(b, l->prev)->next = l->next;
    else
        b->head[k] = l->next;
    if (l->next != 0)
        links(b, l->next)->prev = l->prev;
    if (b->head[k] == 0)
        b->nonempty &= ~((uint32_t)1 << k);
}

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_buddy *b, int err)
{
    if (err == RTM_ENOMEM)
        b->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_buddy *b, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, b, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* The page index of a block start ptr, or pages when it is not one. Integer
 * arithmetic only: a pointer below the arena wraps past the arena size. */
static inline size_t start_index(const rtm_buddy *b, const void *ptr)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)arena(b));
    size_t i = d >> b->shift;
    if (i >= b->pages || (d & (page(b) - 1u)) != 0 || !(map(b)[i] & M_START))
        return b->pages;
    return i;
}

/* The index of live block ptr, or -1 after reporting why it is not one. */
static inline int live_index(const rtm_buddy *b, const void *ptr, size_t *out)
{
    size_t i = start_index(b, ptr);
    if (RTM_UNLIKELY(i == b->pages))
        return reject(b, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block start of this heap");
    if (RTM_UNLIKELY(map(b)[i] & M_FREE))
        return reject(b, ptr, RTM_ERR_DOUBLE_FREE, "block is free (freed twice?)");
    *out = i;
    return 0;
}

/* --- split and merge --------------------------------------------------- */

static inline void count_used(rtm_buddy *b, size_t n)
{
    b->used_pages += n;
    b->free_pages -= n;
    b->live++;
    if (b->used_pages > b->peak_used)
        b->peak_used = b->used_pages;
}

/* Hot path: one bit scan finds the smallest non-empty order j >= k; its
 * first block is split j - k times (<= RTM_BUDDY_MAX_ORDER), each upper half
 * listed on its order. */
static void *take(rtm_buddy *b, unsigned k)
{
    uint32_t avail = b->nonempty & ~(((uint32_t)1 << k) - 1u);
    if (RTM_UNLIKELY(avail == 0))
        return refuse(b, RTM_ENOMEM);
    unsigned j = rtm_ctz32(avail);
    size_t i = page_index(b, b->head[j]);
    list_remove(b, i, j);
    while (j > k) {
        j--;
        list_push(b, i + ((size_t)1 << j), j);
    }
    map(b)[i] = entry_used(k);
    count_used(b, (size_t)1 << k);
    return page_at(b, i);
}

/* Frees block i of order k: merges with free buddies of equal order (at
 * most RTM_BUDDY_MAX_ORDER times), then lists the result. A buddy beyond the
 * arena's end does not exist (the tail of a region that is not a power of
 * two of pages): the block stays maximal there. */
static void give(rtm_buddy *b, size_t i, unsigned k)
{
    b->used_pages -= (size_t)1 << k;
    b->free_pages += (size_t)1 << k;
    b->live--;
    map(b)[i] = 0;
    while (k < RTM_BUDDY_MAX_ORDER) {
        size_t bud = i ^ ((size_t)1 << k);
        if (bud >= b->pages || map(b)[bud] != entry_free(k))
            break;
        list_remove(b, bud, k);
        map(b)[bud] = 0;
        i &= ~((size_t)1 << k);
        k++;
    }
    list_push(b, i, k);
}

/* --- operations -------------------------------------------------------- */

void *rtm_buddy_alloc_pages(rtm_buddy *b, unsigned order)
{
    if (RTM_UNLIKELY(order > RTM_BUDDY_MAX_ORDER))
        return refuse(b, RTM_EINVAL);
    return take(b, order);
}

int rtm_buddy_free_pages(rtm_buddy *b, void *ptr, unsigned order)
{
    if (ptr == NULL)
        return 0;
    size_t i = 0;
    if (RTM_UNLIKELY(live_index(b, ptr, &i) != 0))
        return -1;
    unsigned k = map(b)[i] & M_ORDER;
    if (RTM_UNLIKELY(k != order))
        return reject(b, ptr, RTM_ERR_FOREIGN_POINTER, "order differs from the block's order");
    give(b, i, k);
    return 0;
}

/* The least k with page << k >= size; order 0 for size 0; -1 above the
 * largest order. Shifts only. */
static inline int order_of(const rtm_buddy *b, size_t size)
{
    size_t pm1 = size == 0 ? 0 : (size - 1u) >> b->shift; /* pages - 1 */
    if (pm1 == 0)
        return 0;
    unsigned k = rtm_fls_size(pm1) + 1u;
    return k > RTM_BUDDY_MAX_ORDER ? -1 : (int)k;
}

int rtm_buddy_order_for(const rtm_buddy *b, size_t size) { return order_of(b, size); }

void *rtm_buddy_alloc(rtm_buddy *b, size_t size)
{
    int k = order_of(b, size);
    if (RTM_UNLIKELY(k < 0))
        return refuse(b, RTM_ENOMEM);
    return take(b, (unsigned)k);
}

/* A block of order k is at page_at(b, m << k): aligned to page << k
 * relative to the arena, and absolutely as far as the arena start is. */
void *rtm_buddy_aligned_alloc(rtm_buddy *b, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(b, RTM_EINVAL);
    if (alignment <= page(b))
        return rtm_buddy_alloc(b, size);
    unsigned ka = rtm_fls_size(alignment) - b->shift;
    if (alignment > lowest_bit((uintptr_t)arena(b)) || ka > b->top)
        return refuse(b, RTM_ENOTSUP); /* no block will ever have it */
    int k = order_of(b, size);
    if (k < 0)
        return refuse(b, RTM_ENOMEM);
    return take(b, (unsigned)k > ka ? (unsigned)k : ka);
}

int rtm_buddy_free(rtm_buddy *b, void *ptr)
{
    if (RTM_UNLIKELY(ptr == NULL))
        return 0;
    size_t i = 0;
    if (RTM_UNLIKELY(live_index(b, ptr, &i) != 0))
        return -1;
    give(b, i, map(b)[i] & M_ORDER);
    return 0;
}

/* realloc keeps a block's order when the new size fits it, shrinking
 * included: a block from rtm_buddy_aligned_alloc() owes its alignment to
 * its order, and a later growth moves to a block of a larger order, which is
 * aligned at least as well. Splitting on shrink would give pages back but
 * lose that guarantee. */
void *rtm_buddy_realloc(rtm_buddy *b, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_buddy_alloc(b, size);
    if (size == 0) {
        (void)rtm_buddy_free(b, ptr);
        return NULL;
    }
    size_t i = 0;
    if (live_index(b, ptr, &i) != 0)
        return NULL;
    unsigned k = map(b)[i] & M_ORDER;
    int n = order_of(b, size);
    if (n < 0)
        return refuse(b, RTM_ENOMEM);
    if ((unsigned)n <= k)
        return ptr; /* the order holds it: in place */
    /* A larger order is naturally aligned at least as well as this one. */
    void *q = take(b, (unsigned)n);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, page(b) << k);
    give(b, i, k);
    return q;
}

/* The bytes of the block starting at page i. */
static inline size_t block_bytes(const rtm_buddy *b, size_t i)
{
    return page(b) << (map(b)[i] & M_ORDER);
}

/* Validated as free() validates (live_index, reporting): a pointer that is
 * not a live block start gives 0 with errno EINVAL. */
size_t rtm_buddy_usable_size(const rtm_buddy *b, const void *ptr)
{
    size_t i = 0;
    if (ptr == NULL || live_index(b, ptr, &i) != 0)
        return 0;
    return block_bytes(b, i);
}

/* The same lookup, silent (heaps/buddy_internal.h: the slab's question). */
size_t rtm_buddy_live_bytes(const rtm_buddy *b, const void *ptr)
{
    size_t i = start_index(b, ptr);
    if (i == b->pages || (map(b)[i] & M_FREE))
        return 0;
    return block_bytes(b, i);
}

size_t rtm_buddy_page_size(const rtm_buddy *b) { return page(b); }
size_t rtm_buddy_page_count(const rtm_buddy *b) { return b->pages; }

rtm_stats rtm_buddy_stats(const rtm_buddy *b)
{
    rtm_stats st;
    st.arena_bytes = b->arena_bytes;
    st.used_bytes = b->used_pages << b->shift;
    st.free_bytes = b->free_pages << b->shift;
    st.largest_free = b->nonempty == 0 ? 0 : page(b) << rtm_fls32(b->nonempty);
    st.live_blocks = b->live;
    st.peak_used_bytes = b->peak_used << b->shift;
    st.failed_allocs = b->failed_allocs;
    return st;
}

/* The initial decomposition: maximal blocks in decreasing size (each at a
 * multiple of its own size, since every earlier block is larger). */
void rtm_buddy_reset(rtm_buddy *b)
{
    __builtin_memset(map(b), 0, b->pages);
    for (unsigned k = 0; k < ORDERS; k++)
        b->head[k] = 0;
    b->nonempty = 0;
    size_t i = 0;
    while (i < b->pages) {
        unsigned k = rtm_fls_size(b->pages - i);
        if (k > RTM_BUDDY_MAX_ORDER)
            k = RTM_BUDDY_MAX_ORDER;
        list_push(b, i, k);
        i += (size_t)1 << k;
    }
    b->used_pages = b->live = b->peak_used = b->failed_allocs = 0;
    b->free_pages = b->pages;
}

/* --- creation and sizing ----------------------------------------------- */

size_t rtm_buddy_control_size(void) { return (sizeof(rtm_buddy) + GRAN - 1u) & ~(GRAN - 1u); }

static int good_page(size_t page_size)
{
    return rtm_is_pow2(page_size) && page_size >= RTM_BUDDY_MIN_PAGE &&
           page_size <= ((size_t)1 << (sizeof(size_t) * 8u - 4u));
}

/* 7 bytes for the worst start, control, one map byte and one page per page,
 * page - 1 bytes of padding before the page-aligned arena. */
size_t rtm_buddy_region_for(size_t pages, size_t page_size)
{
    if (!good_page(page_size) || pages == 0)
        return 0;
    size_t fixed = GRAN - 1u + rtm_buddy_control_size() + page_size - 1u;
    if (pages > (SIZE_MAX - fixed) / (page_size + 1u))
        return 0;
    return fixed + pages * (page_size + 1u);
}

size_t rtm_buddy_min_region(size_t page_size) { return rtm_buddy_region_for(1, page_size); }

/* The largest n with align_up(s + ctrl + n, page) + n * page <= end. n0 =
 * avail / (page + 1) bounds it (no padding); n0 - 1 always fits, because
 * the padding is below one page, so one test decides. */
rtm_buddy *rtm_buddy_create(void *mem, size_t bytes, size_t page_size)
{
    uintptr_t start = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    size_t ctrl = rtm_buddy_control_size();
    /* mem + bytes must not wrap: the arena end below is computed from it. */
    if (mem == NULL || !good_page(page_size) || bytes > UINTPTR_MAX - (uintptr_t)mem ||
        bytes < lost || bytes - lost < ctrl) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t avail = bytes - lost - ctrl;
    uintptr_t end = start + ctrl + avail;
    unsigned shift = rtm_fls_size(page_size);
    size_t n = avail / (page_size + 1u);
    uintptr_t a = (start + ctrl + n + page_size - 1u) & ~(uintptr_t)(page_size - 1u);
    if (n != 0 && (a > end || (end - a) >> shift < n))
        n--;
    if (n == 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_buddy *b = (rtm_buddy *)start;
    b->kind = RTM_KIND_BUDDY;
    b->shift = shift;
    b->pages = n;
    b->arena_bytes = bytes;
    b->map = (ptrdiff_t)ctrl;
    b->arena =
        (ptrdiff_t)(((start + ctrl + n + page_size - 1u) & ~(uintptr_t)(page_size - 1u)) - start);
    b->top = rtm_fls_size(n) > RTM_BUDDY_MAX_ORDER ? RTM_BUDDY_MAX_ORDER : rtm_fls_size(n);
    rtm_buddy_reset(b);
    return b;
}

/* --- walk -------------------------------------------------------------- */

/* Steps by each block's size; a page that is not a start (a corrupted map)
 * is reported as one used page, so the walk always ends. */
void rtm_buddy_walk(const rtm_buddy *b,
                    void (*walker)(void *ptr, size_t usable, int used, void *arg), void *arg)
{
    size_t i = 0;
    while (i < b->pages) {
        uint8_t e = map(b)[i];
        unsigned k = (e & M_START) ? (e & M_ORDER) : 0u;
        if (k > b->top || ((b->pages - i) >> k) == 0)
            k = 0;
        walker(page_at(b, i), page(b) << k, !(e & M_FREE), arg);
        i += (size_t)1 << k;
    }
}

/* --- check ------------------------------------------------------------- */

static RTM_COLD int check_fail(const rtm_buddy *b, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, b, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

/* The geometry and counters, before anything is read through them. */
static int check_header(const rtm_buddy *b)
{
    size_t ctrl = rtm_buddy_control_size();
    if (b->kind != RTM_KIND_BUDDY)
        return check_fail(b, b, "kind word is not a buddy heap's");
    if (b->shift < 6u || b->shift > sizeof(size_t) * 8u - 4u)
        return check_fail(b, b, "page shift damaged");
    if (b->map != (ptrdiff_t)ctrl || b->pages == 0 || b->arena < 0 ||
        (size_t)b->arena < ctrl + b->pages || (size_t)b->arena > b->arena_bytes)
        return check_fail(b, b, "page map or arena offset damaged");
    if (b->pages > (b->arena_bytes - (size_t)b->arena) >> b->shift)
        return check_fail(b, b, "page count exceeds the region");
    unsigned top = rtm_fls_size(b->pages);
    if (b->top != (top > RTM_BUDDY_MAX_ORDER ? RTM_BUDDY_MAX_ORDER : top))
        return check_fail(b, b, "top order damaged");
    if (b->used_pages > b->pages || b->used_pages + b->free_pages != b->pages)
        return check_fail(b, b, "used + free pages differ from the page count");
    if (b->peak_used < b->used_pages || b->peak_used > b->pages)
        return check_fail(b, b, "peak below used pages or above the page count");
    return 0;
}

typedef struct map_census {
    size_t free_blocks[ORDERS];
    size_t free_pages, used_pages, live;
} map_census;

/* One block start at page i (invariants 1 and 4). */
static int check_block(const rtm_buddy *b, size_t i, map_census *c)
{
    const uint8_t *m = map(b);
    uint8_t e = m[i];
    unsigned k = e & M_ORDER;
    if (!(e & M_START))
        return check_fail(b, page_at(b, i), "page map: page inside no block");
    if (k > b->top)
        return check_fail(b, page_at(b, i), "page map: order above the arena's largest");
    if ((i & (((size_t)1 << k) - 1u)) != 0 || ((b->pages - i) >> k) == 0)
        return check_fail(b, page_at(b, i), "page map: block misaligned or past the arena");
    for (size_t j = 1; j < ((size_t)1 << k); j++)
        if (m[i + j] != 0)
            return check_fail(b, page_at(b, i + j), "page map: interior page not zero");
    if (!(e & M_FREE)) {
        c->live++;
        c->used_pages += (size_t)1 << k;
        return 0;
    }
    c->free_blocks[k]++;
    c->free_pages += (size_t)1 << k;
    size_t bud = i ^ ((size_t)1 << k);
    if (k < RTM_BUDDY_MAX_ORDER && bud < b->pages && m[bud] == entry_free(k))
        return check_fail(b, page_at(b, i), "two free buddies left unmerged");
    return 0;
}

static int check_map(const rtm_buddy *b, map_census *c)
{
    for (size_t i = 0; i < b->pages; i += (size_t)1 << (map(b)[i] & M_ORDER))
        if (check_block(b, i, c) != 0)
            return -1;
    if (c->free_pages != b->free_pages || c->used_pages != b->used_pages || c->live != b->live)
        return check_fail(b, b, "counters differ from the page map");
    return 0;
}

/* Invariants 2 and 3: list k holds exactly the map's free blocks of order
 * k. Each link is validated as an integer (inside the arena, page aligned,
 * a free start of order k) before it is followed, and the walk stops after
 * the expected length, so a cycle or a wild link ends it. */
static int check_list(const rtm_buddy *b, unsigned k, size_t expected)
{
    ptrdiff_t off = b->head[k], prev = 0;
    size_t span = b->pages << b->shift;
    for (size_t n = 0; n < expected; n++) {
        size_t d = (size_t)off - (size_t)b->arena; /* wraps for a link below page 0 */
        if (off == 0)
            return check_fail(b, b, "free list shorter than the page map's count");
        if (d >= span || (d & (page(b) - 1u)) != 0)
            return check_fail(b, b, "free link outside the arena or not page aligned");
        if (map(b)[d >> b->shift] != entry_free(k))
            return check_fail(b, page_at(b, d >> b->shift),
                              "listed block is not a free block of the list's order");
        const free_links *l = links(b, off);
        if (l->prev != prev)
            return check_fail(b, l, "free list prev link inconsistent");
        prev = off;
        off = l->next;
    }
    if (off != 0)
        return check_fail(b, b, "free list longer than the page map's count (or a cycle)");
    if (((b->nonempty >> k) & 1u) != (expected != 0))
        return check_fail(b, b, "order bitmap differs from the free lists");
    return 0;
}

int rtm_buddy_check(const rtm_buddy *b)
{
    if (b == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (check_header(b) != 0)
        return -1;
    map_census c;
    __builtin_memset(&c, 0, sizeof c);
    if (check_map(b, &c) != 0)
        return -1;
    for (unsigned k = 0; k < ORDERS; k++)
        if (check_list(b, k, c.free_blocks[k]) != 0)
            return -1;
    return 0;
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

RTM_KIND_ADAPTERS(buddy, rtm_buddy)

/* Valid at any start address. */
static size_t buddy_kind_min_region(size_t page) { return rtm_buddy_min_region(page); }
static rtm_heap *buddy_kind_create(void *mem, size_t bytes, size_t page)
{
    return (rtm_heap *)(void *)rtm_buddy_create(mem, bytes, page);
}

const rtm_heap_kind rtm_kind_buddy = {
    .kind = RTM_KIND_BUDDY,
    .default_param = RTM_BUDDY_DEFAULT_PAGE, /* "buddy:<page size>" */
    .min_region = buddy_kind_min_region,
    .create = buddy_kind_create,
    RTM_KIND_OPERATIONS(buddy),
};
