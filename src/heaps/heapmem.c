// SPDX-License-Identifier: MIT
/*
 * heaps/heapmem.c -- rtmem's page-and-bucket heap after McKusick and Karels
 * (1988) as Xenomai's heapmem lays it out: create, alloc, aligned alloc,
 * realloc, free, stats, reset, check and walk. Contracts, the layout and
 * the design choice (segregated range lists instead of trees):
 * include/rtmem/heapmem.h.
 *
 * Page map: one entry per page, E bytes each:
 *
 *   type   FREE_HEAD  first page of a free range (len = its pages; on the
 *                     range list of class floor(log2 len))
 *          FREE_TAIL  last page of a free range of len > 1 (len repeated,
 *                     so a free finds its left neighbour's head in O(1))
 *          USED_HEAD  first page of a live range of len pages
 *          CONT       any other page of a range
 *          BUCKET     a page cut into slots of 16 << cls bytes; bits[] has
 *                     one bit per slot (1 = used; bits past the last slot
 *                     are 1), used counts live slots
 *   next/prev  list links as page index + 1 (0 = none): the range list of
 *              a FREE_HEAD, the partial list of a BUCKET with a free slot
 *
 * Free of a range [i, i+n) (the o1heap picture):
 *   [ free L ][ this ][ free R ]  =>  [ ----------- free ----------- ]
 * R is FREE_HEAD at i+n; L ends at i-1, a FREE_TAIL (or a 1-page
 * FREE_HEAD) whose len gives its head i-len.
 *
 * Invariants (rtm_heapmem_check() verifies each one):
 *  1. The entries tile the arena: heads and buckets in page order, each
 *     range's other pages CONT (a free range's last one FREE_TAIL).
 *  2. No two free ranges are adjacent (coalescing is complete).
 *  3. Each free range is on the list of its class exactly once; bit k of
 *     range_mask is set iff list k is non-empty.
 *  4. A bucket page has 1 <= used slots; it is on the partial list of its
 *     class iff used < slots; bit c of bucket_mask iff that list is
 *     non-empty. No empty bucket page exists (it goes back to the ranges).
 *  5. The counters equal the sums over the map.
 *
 * Freestanding: no libc (only __builtin_memcpy/memset). Not thread-safe.
 */
#include "core/internal.h"
#include "core/kind.h"
#include "rtmem/heapmem.h"

#define RANGE_CLASSES 32u
#define MAX_BUCKETS   16u
#define MIN_SHIFT     4u /* log2(RTM_HEAPMEM_MIN_BUCKET) */
#define NIL           0u

enum { T_CONT = 0, T_FREE_HEAD = 1, T_FREE_TAIL = 2, T_USED_HEAD = 3, T_BUCKET = 4 };

struct rtm_heapmem {
    uint32_t kind;        /* RTM_KIND_HEAPMEM                               */
    uint32_t shift;       /* log2(page size)                                */
    uint32_t words;       /* bitmap words per page entry                    */
    uint32_t stride;      /* bytes per page map entry                       */
    uint32_t pages;       /* pages in the arena                             */
    uint32_t classes;     /* bucket classes: 16 .. page / 2                 */
    uint32_t range_mask;  /* bit k: range list k non-empty                  */
    uint32_t bucket_mask; /* bit c: partial list c non-empty                */
    size_t arena_bytes;   /* bytes given by the caller                      */
    size_t used_bytes;    /* sum of usable sizes of live blocks             */
    size_t free_pages;    /* pages in free ranges                           */
    size_t slot_free;     /* bytes in free slots of bucket pages            */
    size_t live;          /* live blocks                                    */
    size_t peak_used;     /* highest used_bytes since create or reset       */
    size_t failed_allocs; /* ENOMEM refusals                                */
    ptrdiff_t map;        /* offset of the page map from the control        */
    ptrdiff_t arena;      /* offset of page 0 from the control              */
    uint32_t range_head[RANGE_CLASSES];
    uint32_t bucket_head[MAX_BUCKETS];
};

typedef struct pent {
    uint8_t type;
    uint8_t cls;
    uint16_t reserved;
    uint32_t len; /* range pages, or used slots of a bucket page */
    uint32_t next, prev;
    uint32_t spare;
    uint32_t bits[]; /* words entries */
} pent;

_Static_assert(sizeof(pent) == 20, "page map entry header is 20 bytes");
_Static_assert((RTM_HEAPMEM_MAX_PAGE >> MIN_SHIFT) / 32u <= 128u, "bitmap words bounded");

/* --- accessors --------------------------------------------------------- */

static inline char *base(const rtm_heapmem *h) { return (char *)(uintptr_t)h; }
static inline pent *ent(const rtm_heapmem *h, size_t i)
{
    return (pent *)(uintptr_t)(base(h) + h->map + (ptrdiff_t)(i * h->stride));
}
static inline char *arena(const rtm_heapmem *h) { return base(h) + h->arena; }
static inline size_t page(const rtm_heapmem *h) { return (size_t)1 << h->shift; }
static inline char *page_at(const rtm_heapmem *h, size_t i) { return arena(h) + (i << h->shift); }
static inline size_t bsize(unsigned c) { return (size_t)RTM_HEAPMEM_MIN_BUCKET << c; }
static inline uint32_t slots_of(const rtm_heapmem *h, unsigned c)
{
    return (uint32_t)(page(h) >> (MIN_SHIFT + c));
}
static inline size_t align_up(size_t x, size_t a) { return (x + a - 1u) & ~(a - 1u); }
static inline uint32_t rclass(uint32_t len) { return rtm_fls32(len); }

static size_t words_for(size_t pg)
{
    size_t w = (pg >> MIN_SHIFT) / 32u;
    return w == 0 ? 1u : w;
}

size_t rtm_heapmem_control_size(void) { return align_up(sizeof(rtm_heapmem), 8u); }

static int page_ok(size_t pg)
{
    return rtm_is_pow2(pg) && pg >= RTM_HEAPMEM_MIN_PAGE && pg <= RTM_HEAPMEM_MAX_PAGE;
}

size_t rtm_heapmem_entry_size(size_t pg)
{
    return page_ok(pg) ? align_up(sizeof(pent) + 4u * words_for(pg), 8u) : 0u;
}

size_t rtm_heapmem_min_region(size_t pg)
{
    if (!page_ok(pg))
        return 0;
    return 7u + rtm_heapmem_control_size() + rtm_heapmem_entry_size(pg) + (pg - 1u) + pg;
}

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_heapmem *h, int err)
{
    if (err == RTM_ENOMEM)
        h->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_heapmem *h, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, h, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* --- doubly linked lists of page indices (+1) -------------------------- */

static void list_insert(rtm_heapmem *h, uint32_t *head, size_t i, int after_head)
{
    pent *e = ent(h, i);
    uint32_t self = (uint32_t)i + 1u;
    if (after_head && *head != NIL) {
        pent *hd = ent(h, *head - 1u);
        e->prev = *head;
        e->next = hd->next;
        if (hd->next != NIL)
            ent(h, hd->next - 1u)->prev = self;
        hd->next = self;
        return;
    }
    e->next = *head;
    e->prev = NIL;
    if (*head != NIL)
        ent(h, *head - 1u)->prev = self;
    *head = self;
}

static void list_unlink(rtm_heapmem *h, uint32_t *head, size_t i)
{
    pent *e = ent(h, i);
    if (e->prev != NIL)
        ent(h, e->prev - 1u)->next = e->next;
    else
        *head = e->next;
    if (e->next != NIL)
        ent(h, e->next - 1u)->prev = e->prev;
}

/* --- free page ranges (invariants 2 and 3) ----------------------------- */

/* Lists [i, i+len) as free. A range longer than its list's head goes
 * first, others right after the head: the head, whose length is
 * largest_free, only grows when ranges arrive. */
static void range_push(rtm_heapmem *h, size_t i, uint32_t len)
{
    uint32_t k = rclass(len);
    pent *e = ent(h, i);
    int after = h->range_head[k] != NIL && ent(h, h->range_head[k] - 1u)->len >= len;
    e->type = T_FREE_HEAD;
    e->len = len;
    if (len > 1u) {
        pent *t = ent(h, i + len - 1u);
        t->type = T_FREE_TAIL;
        t->len = len;
    }
    list_insert(h, &h->range_head[k], i, after);
    h->range_mask |= (uint32_t)1 << k;
}

static void range_remove(rtm_heapmem *h, size_t i)
{
    pent *e = ent(h, i);
    uint32_t len = e->len, k = rclass(len);
    list_unlink(h, &h->range_head[k], i);
    if (h->range_head[k] == NIL)
        h->range_mask &= ~((uint32_t)1 << k);
    e->type = T_CONT;
    ent(h, i + len - 1u)->type = T_CONT;
}

/* The first page of n free pages taken off the ranges, or pages when no
 * range is long enough. O(1): the head of class floor(log2 n) if long
 * enough, else the head of the first non-empty higher class (all of whose
 * ranges are >= 2^(k) > n). */
static size_t take_pages(rtm_heapmem *h, uint32_t n)
{
    uint32_t fl = rclass(n);
    size_t i;
    if (h->range_head[fl] != NIL && ent(h, h->range_head[fl] - 1u)->len >= n) {
        i = h->range_head[fl] - 1u;
    } else {
        uint32_t above = fl >= 31u ? 0u : h->range_mask & ~((((uint32_t)2) << fl) - 1u);
        if (above == 0)
            return h->pages;
        i = h->range_head[rtm_ctz32(above)] - 1u;
    }
    uint32_t len = ent(h, i)->len;
    range_remove(h, i);
    if (len > n)
        range_push(h, i + n, len - n);
    h->free_pages -= n;
    return i;
}

/* Returns [i, i+n) to the ranges, merged with free neighbours. O(1). */
static void give_pages(rtm_heapmem *h, size_t i, uint32_t n)
{
    h->free_pages += n;
    ent(h, i)->type = T_CONT;
    size_t r = i + n;
    if (r < h->pages && ent(h, r)->type == T_FREE_HEAD) {
        uint32_t rl = ent(h, r)->len;
        range_remove(h, r);
        n += rl;
    }
    if (i > 0) {
        pent *l = ent(h, i - 1u);
        if (l->type == T_FREE_TAIL || l->type == T_FREE_HEAD) {
            uint32_t ll = l->len;
            range_remove(h, i - ll);
            i -= ll;
            n += ll;
        }
    }
    range_push(h, i, n);
}

/* --- bucket pages (invariant 4) ---------------------------------------- */

static inline void count_used(rtm_heapmem *h, size_t bytes)
{
    h->used_bytes += bytes;
    h->live++;
    if (h->used_bytes > h->peak_used)
        h->peak_used = h->used_bytes;
}

static void bucket_init(rtm_heapmem *h, size_t i, unsigned c)
{
    pent *e = ent(h, i);
    uint32_t slots = slots_of(h, c);
    e->type = T_BUCKET;
    e->cls = (uint8_t)c;
    e->len = 0;
    for (uint32_t w = 0; w < h->words; w++) {
        uint32_t lo = w * 32u;
        if (lo + 32u <= slots)
            e->bits[w] = 0;
        else if (lo >= slots)
            e->bits[w] = ~(uint32_t)0;
        else
            e->bits[w] = ~(uint32_t)0 << (slots - lo);
    }
    h->slot_free += page(h);
    list_insert(h, &h->bucket_head[c], i, 0);
    h->bucket_mask |= (uint32_t)1 << c;
}

static void partial_remove(rtm_heapmem *h, size_t i, unsigned c)
{
    list_unlink(h, &h->bucket_head[c], i);
    if (h->bucket_head[c] == NIL)
        h->bucket_mask &= ~((uint32_t)1 << c);
}

/* Takes one slot of the partial page at the head of class c: a scan of at
 * most `words` (page / 512) bitmap words. */
static void *slot_take(rtm_heapmem *h, unsigned c)
{
    size_t i = h->bucket_head[c] - 1u;
    pent *e = ent(h, i);
    uint32_t w = 0;
    while (e->bits[w] == ~(uint32_t)0)
        w++;
    uint32_t bit = rtm_ctz32(~e->bits[w]);
    e->bits[w] |= (uint32_t)1 << bit;
    e->len++;
    if (e->len == slots_of(h, c))
        partial_remove(h, i, c);
    h->slot_free -= bsize(c);
    count_used(h, bsize(c));
    return page_at(h, i) + (((size_t)w * 32u + bit) << (MIN_SHIFT + c));
}

static void *bucket_alloc(rtm_heapmem *h, unsigned c)
{
    if (!(h->bucket_mask & ((uint32_t)1 << c))) {
        size_t i = take_pages(h, 1u);
        if (i < h->pages) {
            bucket_init(h, i, c);
        } else {
            /* No free page: a larger class with a free slot serves it. */
            uint32_t above = h->bucket_mask & ~(((uint32_t)1 << c) - 1u);
            if (above == 0)
                return refuse(h, RTM_ENOMEM);
            c = rtm_ctz32(above);
        }
    }
    return slot_take(h, c);
}

static void slot_give(rtm_heapmem *h, size_t i, unsigned c, uint32_t s)
{
    pent *e = ent(h, i);
    uint32_t slots = slots_of(h, c);
    e->bits[s / 32u] &= ~((uint32_t)1 << (s % 32u));
    if (e->len == slots)
        list_insert(h, &h->bucket_head[c], i, 0), h->bucket_mask |= (uint32_t)1 << c;
    e->len--;
    h->slot_free += bsize(c);
    h->used_bytes -= bsize(c);
    h->live--;
    if (e->len == 0) {
        partial_remove(h, i, c);
        h->slot_free -= page(h);
        give_pages(h, i, 1u);
    }
}

/* --- operations -------------------------------------------------------- */

/* The bucket class of n bytes (n <= page / 2). */
static inline unsigned class_of(size_t n)
{
    if (n <= RTM_HEAPMEM_MIN_BUCKET)
        return 0;
    return rtm_fls_size(n - 1u) + 1u - MIN_SHIFT;
}

static void *range_alloc(rtm_heapmem *h, size_t size)
{
    if (RTM_UNLIKELY(size > ((size_t)h->pages << h->shift)))
        return refuse(h, RTM_ENOMEM); /* also keeps the rounding below from wrapping */
    size_t n = (size + page(h) - 1u) >> h->shift;
    if (n == 0)
        n = 1;
    size_t i = take_pages(h, (uint32_t)n);
    if (RTM_UNLIKELY(i == h->pages))
        return refuse(h, RTM_ENOMEM);
    pent *e = ent(h, i);
    e->type = T_USED_HEAD;
    e->len = (uint32_t)n;
    count_used(h, n << h->shift);
    return page_at(h, i);
}

void *rtm_heapmem_alloc(rtm_heapmem *h, size_t size)
{
    if (size <= page(h) / 2u)
        return bucket_alloc(h, class_of(size));
    return range_alloc(h, size);
}

void *rtm_heapmem_aligned_alloc(rtm_heapmem *h, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(h, RTM_EINVAL);
    if (alignment > page(h))
        return refuse(h, RTM_ENOTSUP); /* buckets and ranges stop at a page */
    size_t need = size > alignment ? size : alignment;
    if (need <= page(h) / 2u)
        return bucket_alloc(h, class_of(need));
    return range_alloc(h, size);
}

/* Locates the live block ptr starts: its page i, and for a bucket the slot.
 * Returns 0, or -1 after reporting why ptr is not one. Integer arithmetic
 * only: the page map is read once i is known to be a page of the arena.
 * The one validation of free, realloc and usable_size. */
static int locate(const rtm_heapmem *h, const void *ptr, size_t *pi, uint32_t *slot)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)arena(h));
    size_t i = d >> h->shift;
    if (i >= h->pages)
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer outside this heap");
    size_t off = d & (page(h) - 1u);
    pent *e = ent(h, i);
    *pi = i;
    if (e->type == T_BUCKET) {
        unsigned sh = MIN_SHIFT + e->cls;
        uint32_t s = (uint32_t)(off >> sh);
        if ((off & (((size_t)1 << sh) - 1u)) != 0)
            return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer inside a bucket");
        if (!(e->bits[s / 32u] & ((uint32_t)1 << (s % 32u))))
            return reject(h, ptr, RTM_ERR_DOUBLE_FREE, "bucket is free (freed twice?)");
        *slot = s;
        return 0;
    }
    if (off != 0 || e->type == T_CONT || e->type == T_FREE_TAIL)
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block start");
    if (e->type == T_FREE_HEAD)
        return reject(h, ptr, RTM_ERR_DOUBLE_FREE, "range is free (freed twice?)");
    return 0;
}

static size_t usable_at(const rtm_heapmem *h, size_t i)
{
    pent *e = ent(h, i);
    return e->type == T_BUCKET ? bsize(e->cls) : (size_t)e->len << h->shift;
}

static void release(rtm_heapmem *h, size_t i, uint32_t slot)
{
    pent *e = ent(h, i);
    if (e->type == T_BUCKET) {
        slot_give(h, i, e->cls, slot);
        return;
    }
    uint32_t n = e->len;
    h->used_bytes -= (size_t)n << h->shift;
    h->live--;
    give_pages(h, i, n);
}

int rtm_heapmem_free(rtm_heapmem *h, void *ptr)
{
    if (RTM_UNLIKELY(ptr == NULL))
        return 0;
    size_t i = 0;
    uint32_t slot = 0;
    if (RTM_UNLIKELY(locate(h, ptr, &i, &slot) != 0))
        return -1;
    release(h, i, slot);
    return 0;
}

size_t rtm_heapmem_usable_size(const rtm_heapmem *h, const void *ptr)
{
    size_t i = 0;
    uint32_t slot = 0;
    if (ptr == NULL || locate(h, ptr, &i, &slot) != 0)
        return 0;
    return usable_at(h, i);
}

void *rtm_heapmem_realloc(rtm_heapmem *h, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_heapmem_alloc(h, size);
    if (size == 0) {
        (void)rtm_heapmem_free(h, ptr);
        return NULL;
    }
    size_t i = 0;
    uint32_t slot = 0;
    if (locate(h, ptr, &i, &slot) != 0)
        return NULL;
    size_t have = usable_at(h, i);
    if (size <= have)
        return ptr; /* the bucket or range holds it: usable and alignment stay */
    void *q = rtm_heapmem_alloc(h, size);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, have);
    release(h, i, slot);
    return q;
}

size_t rtm_heapmem_page_size(const rtm_heapmem *h) { return page(h); }
size_t rtm_heapmem_page_count(const rtm_heapmem *h) { return h->pages; }

rtm_stats rtm_heapmem_stats(const rtm_heapmem *h)
{
    rtm_stats s;
    __builtin_memset(&s, 0, sizeof s);
    s.arena_bytes = h->arena_bytes;
    s.used_bytes = h->used_bytes;
    s.free_bytes = (h->free_pages << h->shift) + h->slot_free;
    if (h->range_mask != 0) {
        uint32_t k = rtm_fls32(h->range_mask);
        s.largest_free = (size_t)ent(h, h->range_head[k] - 1u)->len << h->shift;
    } else if (h->bucket_mask != 0) {
        s.largest_free = bsize(rtm_fls32(h->bucket_mask));
    }
    s.live_blocks = h->live;
    s.peak_used_bytes = h->peak_used;
    s.failed_allocs = h->failed_allocs;
    return s;
}

void rtm_heapmem_reset(rtm_heapmem *h)
{
    h->range_mask = 0;
    h->bucket_mask = 0;
    for (unsigned k = 0; k < RANGE_CLASSES; k++)
        h->range_head[k] = NIL;
    for (unsigned c = 0; c < MAX_BUCKETS; c++)
        h->bucket_head[c] = NIL;
    __builtin_memset(base(h) + h->map, 0, (size_t)h->pages * h->stride);
    h->used_bytes = 0;
    h->slot_free = 0;
    h->live = 0;
    h->peak_used = 0;
    h->failed_allocs = 0;
    h->free_pages = h->pages;
    range_push(h, 0, h->pages);
}

rtm_heapmem *rtm_heapmem_create(void *mem, size_t bytes, size_t pg)
{
    if (mem == NULL || !page_ok(pg)) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    /* The rule every heap applies: mem + bytes must not wrap. */
    if (bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    uintptr_t start = (uintptr_t)mem, end = start + bytes;
    uintptr_t ctrl = (start + 7u) & ~(uintptr_t)7u;
    size_t stride = rtm_heapmem_entry_size(pg);
    uintptr_t mapat = ctrl + rtm_heapmem_control_size();
    if (ctrl > end || mapat > end) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t n = (size_t)(end - mapat) / (stride + pg);
    if (n > 0xfffffffeu)
        n = 0xfffffffeu;
    while (n > 0 && align_up(mapat + n * stride, pg) + n * pg > end)
        n--;
    if (n == 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_heapmem *h = (rtm_heapmem *)ctrl;
    __builtin_memset(h, 0, sizeof *h);
    h->kind = RTM_KIND_HEAPMEM;
    h->shift = rtm_fls_size(pg);
    h->words = (uint32_t)words_for(pg);
    h->stride = (uint32_t)stride;
    h->pages = (uint32_t)n;
    h->classes = h->shift - MIN_SHIFT;
    h->arena_bytes = bytes;
    h->map = (ptrdiff_t)(mapat - ctrl);
    h->arena = (ptrdiff_t)(align_up(mapat + n * stride, pg) - ctrl);
    rtm_heapmem_reset(h);
    return h;
}

/* --- walk -------------------------------------------------------------- */

void rtm_heapmem_walk(const rtm_heapmem *h,
                      void (*walker)(void *ptr, size_t usable, int used, void *arg), void *arg)
{
    size_t i = 0;
    while (i < h->pages) {
        pent *e = ent(h, i);
        if (e->type == T_BUCKET) {
            uint32_t slots = slots_of(h, e->cls);
            for (uint32_t s = 0; s < slots; s++)
                walker(page_at(h, i) + ((size_t)s << (MIN_SHIFT + e->cls)), bsize(e->cls),
                       (e->bits[s / 32u] >> (s % 32u)) & 1u ? 1 : 0, arg);
            i++;
            continue;
        }
        if (e->len == 0 || (e->type != T_FREE_HEAD && e->type != T_USED_HEAD))
            return; /* corrupted: rtm_heapmem_check() says where */
        walker(page_at(h, i), (size_t)e->len << h->shift, e->type == T_USED_HEAD, arg);
        i += e->len;
    }
}

/* --- check ------------------------------------------------------------- */

static RTM_COLD int broken(const rtm_heapmem *h, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, h, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

/* SWAR popcount: __builtin_popcount would call libgcc (__popcountdi2),
 * which a freestanding build may not link. */
static int popcount32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0fu;
    return (int)((x * 0x01010101u) >> 24);
}

typedef struct tally {
    size_t free_pages, slot_free, used, live;
    size_t ranges[RANGE_CLASSES], partial[MAX_BUCKETS];
} tally;

static int check_bucket(const rtm_heapmem *h, size_t i, tally *t)
{
    pent *e = ent(h, i);
    if (e->cls >= h->classes)
        return broken(h, page_at(h, i), "bucket page class out of range");
    uint32_t slots = slots_of(h, e->cls), set = 0;
    for (uint32_t w = 0; w < h->words; w++) {
        uint32_t lo = w * 32u, pad = ~(uint32_t)0;
        if (lo + 32u <= slots)
            pad = 0;
        else if (lo < slots)
            pad = ~(uint32_t)0 << (slots - lo);
        if ((e->bits[w] & pad) != pad)
            return broken(h, page_at(h, i), "bucket bitmap has bits past the last slot clear");
        set += (uint32_t)popcount32(e->bits[w] & ~pad);
    }
    if (set != e->len || set == 0)
        return broken(h, page_at(h, i), "bucket used count differs from its bitmap (or is 0)");
    if (set < slots)
        t->partial[e->cls]++;
    t->slot_free += (size_t)(slots - set) * bsize(e->cls);
    t->used += (size_t)set * bsize(e->cls);
    t->live += set;
    return 0;
}

static int check_map(const rtm_heapmem *h, tally *t)
{
    size_t i = 0;
    int prev_free = 0;
    while (i < h->pages) {
        pent *e = ent(h, i);
        if (e->type == T_BUCKET) {
            if (check_bucket(h, i, t) != 0)
                return -1;
            i++;
            prev_free = 0;
            continue;
        }
        if (e->type != T_FREE_HEAD && e->type != T_USED_HEAD)
            return broken(h, page_at(h, i), "page map: expected a block start");
        uint32_t len = e->len;
        if (len == 0 || len > h->pages - i)
            return broken(h, page_at(h, i), "page map: range length out of the arena");
        int is_free = e->type == T_FREE_HEAD;
        if (is_free && prev_free)
            return broken(h, page_at(h, i), "two adjacent free ranges (not coalesced)");
        for (size_t j = i + 1u; j < i + len; j++) {
            uint8_t want = (is_free && j == i + len - 1u) ? T_FREE_TAIL : T_CONT;
            if (ent(h, j)->type != want || (want == T_FREE_TAIL && ent(h, j)->len != len))
                return broken(h, page_at(h, j), "page map: bad interior or tail entry");
        }
        if (is_free) {
            t->free_pages += len;
            t->ranges[rclass(len)]++;
        } else {
            t->used += (size_t)len << h->shift;
            t->live++;
        }
        prev_free = is_free;
        i += len;
    }
    return 0;
}

/* Walks one list: at most `count` links, each a valid index whose entry
 * `ok` accepts, prev links consistent, exactly `count` long. */
static int check_list(const rtm_heapmem *h, uint32_t head, size_t count, int bucket, unsigned c)
{
    uint32_t prev = NIL, cur = head;
    size_t n = 0;
    while (cur != NIL) {
        if (cur > h->pages || n >= count)
            return broken(h, h, "free list link out of range or list too long");
        pent *e = ent(h, cur - 1u);
        int ok = bucket ? (e->type == T_BUCKET && e->cls == c)
                        : (e->type == T_FREE_HEAD && e->len != 0 && rclass(e->len) == c);
        if (!ok || e->prev != prev)
            return broken(h, page_at(h, cur - 1u), "free list entry of the wrong kind or link");
        prev = cur;
        cur = e->next;
        n++;
    }
    if (n != count)
        return broken(h, h, "free list shorter than the page map says");
    return 0;
}

int rtm_heapmem_check(const rtm_heapmem *h)
{
    if (h == NULL || h->kind != RTM_KIND_HEAPMEM)
        return broken(h, h, "not a heapmem heap");
    if (h->shift < 6u || h->shift > 16u || h->words != words_for(page(h)) ||
        h->stride != rtm_heapmem_entry_size(page(h)) || h->classes != h->shift - MIN_SHIFT)
        return broken(h, h, "geometry fields corrupted");
    if (h->map != (ptrdiff_t)rtm_heapmem_control_size() || h->pages == 0 ||
        h->arena < h->map + (ptrdiff_t)((size_t)h->pages * h->stride) ||
        (size_t)h->arena + ((size_t)h->pages << h->shift) > h->arena_bytes)
        return broken(h, h, "geometry outside the region");
    static tally zero;
    tally t = zero;
    if (check_map(h, &t) != 0)
        return -1;
    for (unsigned k = 0; k < RANGE_CLASSES; k++) {
        if (((h->range_mask >> k) & 1u) != (t.ranges[k] != 0))
            return broken(h, h, "range bitmap differs from the lists");
        if (check_list(h, h->range_head[k], t.ranges[k], 0, k) != 0)
            return -1;
    }
    for (unsigned c = 0; c < MAX_BUCKETS; c++) {
        if (((h->bucket_mask >> c) & 1u) != (t.partial[c] != 0))
            return broken(h, h, "bucket bitmap differs from the partial lists");
        if (check_list(h, h->bucket_head[c], t.partial[c], 1, c) != 0)
            return -1;
    }
    if (t.free_pages != h->free_pages || t.slot_free != h->slot_free || t.used != h->used_bytes ||
        t.live != h->live || h->peak_used < h->used_bytes)
        return broken(h, h, "counters differ from the page map");
    return 0;
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

RTM_KIND_ADAPTERS(heapmem, rtm_heapmem)

/* Valid at any start address. */
static size_t heapmem_kind_min_region(size_t page) { return rtm_heapmem_min_region(page); }
static rtm_heap *heapmem_kind_create(void *mem, size_t bytes, size_t page)
{
    return (rtm_heap *)(void *)rtm_heapmem_create(mem, bytes, page);
}

const rtm_heap_kind rtm_kind_heapmem = {
    .kind = RTM_KIND_HEAPMEM,
    .default_param = RTM_HEAPMEM_DEFAULT_PAGE, /* "heapmem:<page size>" */
    .min_region = heapmem_kind_min_region,
    .create = heapmem_kind_create,
    RTM_KIND_OPERATIONS(heapmem),
};
