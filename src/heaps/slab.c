// SPDX-License-Identifier: MIT
/*
 * heaps/slab.c -- rtmem's slab heap: kmalloc-style size classes (8 .. P/8)
 * served from one-page slabs that a buddy page allocator (heaps/buddy.c,
 * through its public typed API and the one silent query of
 * heaps/buddy_internal.h) lends; larger requests go to the buddy
 * whole. The design of Bonwick's slab allocator as Linux's SLUB simplified
 * it: no per-object header, a slab's state in a per-page descriptor.
 * Contracts and the class table: include/rtmem/slab.h.
 *
 *   [ rtm_slab | desc[0] desc[1] ... desc[n-1] | buddy: ctrl map pad page0 page1 ... ]
 *                ^ one per buddy page (stride)                  ^ arena (page-aligned)
 *
 * A slab is one buddy page of class c: P/c objects from the page start, so
 * object j is at j*c and aligned to c. Its descriptor (desc[page index]):
 *
 *   [ cls+1 | list | used | free_head | fresh | next | prev | live bitmap ]
 *     0 = not a slab page (free or part of a large block)
 *
 * Objects are handed out from `free_head` (a list threaded through the free
 * objects' first 4 bytes as in-page offsets) and, when it is empty, from
 * `fresh` (the never-used tail, bumped by c), so a new slab costs O(1), not
 * O(P/c) to thread. The bitmap marks live objects: free() tells a double
 * free from a live object in O(1).
 *
 * Invariants (rtm_slab_check() verifies each one):
 *  1. A slab is on exactly one list of its class: partial (0 < used < cap),
 *     full (used == cap) or empty (used == 0; at most one per class, and
 *     bit c of `cached` is set iff class c has one).
 *  2. free_head's list holds cap - used - (P - fresh)/c objects, each below
 *     fresh, aligned to c, with its bitmap bit clear; bitmap count = used.
 *  3. Every slab page is a live order-0 buddy block; descriptors of other
 *     pages are 0.
 *  4. buddy used pages = slabs + large pages; buddy live = slabs + large
 *     blocks; used_bytes = live objects x class + large bytes.
 *  5. A cached empty slab in the buddy's largest initial blocks (the
 *     blocks of order top = min(log2 pages, RTM_BUDDY_MAX_ORDER) from page
 *     0, below top_end()) strands nothing: its buddy page (index ^ 1) is a
 *     live buddy block that is not itself a cached empty slab. So once
 *     nothing is live no slab is cached there, those blocks are whole
 *     again, and the heap's largest_free and what it grants are the fresh
 *     heap's. A cached slab in the smaller initial blocks at the arena's
 *     end may keep one of those from re-forming (as before: at most one
 *     page per class), never the largest.
 *
 *   in the largest blocks:  [ cached empty ][ live slab / large ]  kept
 *                           [ empty: freed ][ free page        ]  => merges up
 *                           [ empty: freed ][ cached of class d ]  => both freed
 *
 * largest_free is exact whatever the cache holds: an order >= 1 request is
 * served by the buddy alone, a request up to a page also by taking over a
 * cached empty slab (so largest_free is at least a page while one exists).
 *
 * Time bounds: alloc is O(1) plus at most one buddy alloc (RTM_BUDDY_MAX_ORDER
 * splits); when the buddy has no page, a cached empty slab of another class
 * is taken over in place (a bit scan and a list removal, no buddy call).
 * Free is O(1) plus at most two buddy frees: the emptied slab and a cached
 * slab on its buddy page (invariant 5); the first merges nothing when the
 * second happens (its buddy page is that cached slab, in use), so both
 * together merge at most RTM_BUDDY_MAX_ORDER times.
 *
 * Freestanding: no libc (only __builtin_memcpy/memset). Not thread-safe.
 */
#include "core/internal.h"
#include "core/kind.h"
#include "heaps/buddy_internal.h"
#include "rtmem/buddy.h"
#include "rtmem/slab.h"

#define GRAN      ((size_t)RTM_ALIGN)
#define MAX_CLASS 20u
#define NIL       UINT32_MAX
#define LISTS     3u

/* Per-page slab descriptor; the live bitmap (page/256 words) follows. */
typedef struct slab_desc {
    uint8_t cls;        /* class index + 1; 0 = not a slab page        */
    uint8_t list;       /* RTM_SLAB_PARTIAL / FULL / EMPTY             */
    uint16_t reserved;  /* zero                                        */
    uint32_t used;      /* live objects                                */
    uint32_t free_head; /* in-page offset of the first free object     */
    uint32_t fresh;     /* in-page offset of the never-used tail       */
    uint32_t next;      /* page index of the next slab on the list     */
    uint32_t prev;      /* page index of the previous slab on the list */
} slab_desc;

_Static_assert(sizeof(slab_desc) == 24u, "descriptor layout");

struct rtm_slab {
    uint32_t kind;    /* RTM_KIND_SLAB (core/internal.h)                 */
    uint32_t shift;   /* log2(page size)                                 */
    uint32_t classes; /* shift - 5                                       */
    uint32_t words;   /* bitmap words per descriptor (page / 256)        */
    size_t arena_bytes;
    size_t pages;       /* pages of the inner buddy (<= table entries)     */
    size_t table;       /* descriptor entries                              */
    size_t stride;      /* bytes per descriptor                            */
    ptrdiff_t desc;     /* offset of desc[0] from the control              */
    ptrdiff_t buddy;    /* offset of the inner buddy heap                  */
    ptrdiff_t arena;    /* offset of the buddy's page 0                    */
    size_t used_bytes;  /* live objects x class + large bytes              */
    size_t slot_free;   /* free object slots x class, over all slabs       */
    size_t objects;     /* live objects                                    */
    size_t large;       /* live large blocks                               */
    size_t large_bytes; /* bytes of live large blocks                      */
    size_t slabs;       /* slab pages                                      */
    size_t live;        /* objects + large                                 */
    size_t peak_used;
    size_t failed_allocs;
    uint32_t head[MAX_CLASS][LISTS]; /* first slab of each list, NIL = none */
    uint32_t count[MAX_CLASS][LISTS];
    uint32_t cached; /* bit c: class c has a cached empty slab          */
};

/* --- accessors --------------------------------------------------------- */

static inline char *base(const rtm_slab *s) { return (char *)(uintptr_t)s; }
static inline rtm_buddy *inner(const rtm_slab *s) { return (rtm_buddy *)(base(s) + s->buddy); }
static inline char *arena(const rtm_slab *s) { return base(s) + s->arena; }
static inline size_t page(const rtm_slab *s) { return (size_t)1 << s->shift; }
static inline slab_desc *desc(const rtm_slab *s, size_t i)
{
    return (slab_desc *)(uintptr_t)(base(s) + s->desc + (ptrdiff_t)(i * s->stride));
}
static inline uint32_t *bitmap(slab_desc *d) { return (uint32_t *)(d + 1); }
static inline char *page_at(const rtm_slab *s, size_t i) { return arena(s) + (i << s->shift); }
static inline size_t class_size(unsigned c) { return (size_t)RTM_SLAB_MIN_CLASS << c; }
static inline size_t largest_class(const rtm_slab *s) { return page(s) >> 3; }
static inline uint32_t capacity(const rtm_slab *s, unsigned c)
{
    return (uint32_t)(page(s) / class_size(c));
}
static inline uint32_t *link_at(const rtm_slab *s, size_t i, uint32_t off)
{
    return (uint32_t *)(uintptr_t)(page_at(s, i) + off);
}
static inline int bit_get(slab_desc *d, uint32_t j)
{
    return (int)((bitmap(d)[j >> 5] >> (j & 31u)) & 1u);
}
static inline void bit_flip(slab_desc *d, uint32_t j)
{
    bitmap(d)[j >> 5] ^= (uint32_t)1 << (j & 31u);
}

/* The class of n bytes (n <= largest class): 8 -> 0, 9..16 -> 1, ... */
static inline unsigned class_of(size_t n)
{
    return n <= RTM_SLAB_MIN_CLASS ? 0u : rtm_fls_size(n - 1u) + 1u - 3u;
}

/* --- slab lists (invariant 1) ------------------------------------------ */

static void list_push(rtm_slab *s, size_t i, unsigned c, unsigned l)
{
    slab_desc *d = desc(s, i);
    d->list = (uint8_t)l;
    d->prev = NIL;
    d->next = s->head[c][l];
    if (d->next != NIL)
        desc(s, d->next)->prev = (uint32_t)i;
    s->head[c][l] = (uint32_t)i;
    s->count[c][l]++;
}

static void list_remove(rtm_slab *s, size_t i, unsigned c)
{
    slab_desc *d = desc(s, i);
    if (d->prev != NIL)
        desc(s, d->prev)->next = d->next;
    else
        s->head[c][d->list] = d->next;
    if (d->next != NIL)
        desc(s, d->next)->prev = d->prev;
    s->count[c][d->list]--;
}

static inline void list_move(rtm_slab *s, size_t i, unsigned c, unsigned l)
{
    list_remove(s, i, c);
    list_push(s, i, c, l);
}

/* --- errors and counters ----------------------------------------------- */

static RTM_COLD void *refuse(rtm_slab *s, int err)
{
    if (err == RTM_ENOMEM)
        s->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_slab *s, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, s, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

static inline void count_alloc(rtm_slab *s, size_t bytes)
{
    s->used_bytes += bytes;
    s->live++;
    if (s->used_bytes > s->peak_used)
        s->peak_used = s->used_bytes;
}

static inline size_t buddy_failed(const rtm_slab *s)
{
    return rtm_buddy_stats(inner(s)).failed_allocs;
}

/* --- the empty-slab cache (invariants 1 and 5) ------------------------- */

static inline int is_cached(const rtm_slab *s, size_t i)
{
    const slab_desc *d = desc(s, i);
    return d->cls != 0 && d->list == RTM_SLAB_EMPTY;
}

static inline void cache_put(rtm_slab *s, size_t i, unsigned c)
{
    list_move(s, i, c, RTM_SLAB_EMPTY);
    s->cached |= (uint32_t)1 << c;
}

/* Takes class c's cached empty slab off its list; returns its page index. */
static inline size_t cache_take(rtm_slab *s, unsigned c)
{
    size_t i = s->head[c][RTM_SLAB_EMPTY];
    list_remove(s, i, c);
    s->cached &= ~((uint32_t)1 << c);
    return i;
}

/* The end of the buddy's largest initial blocks (invariant 5): pages below
 * it make up the fresh heap's largest_free. One bit scan. */
static inline size_t top_end(const rtm_slab *s)
{
    unsigned top = rtm_fls_size(s->pages);
    if (top > RTM_BUDDY_MAX_ORDER)
        top = RTM_BUDDY_MAX_ORDER;
    return (s->pages >> top) << top;
}

/* Whether empty slab i may stay cached (invariant 5): it lies beyond the
 * largest initial blocks, or its buddy page is live and not cached. That
 * page is always an order-0 block: a larger block holding it would hold
 * page i too; and it lies below top_end() when page i does. */
static int may_cache(const rtm_slab *s, size_t i)
{
    size_t j = i ^ 1u;
    if (i >= top_end(s))
        return 1;
    if (desc(s, j)->cls != 0)
        return desc(s, j)->list != RTM_SLAB_EMPTY;
    return rtm_buddy_live_bytes(inner(s), page_at(s, j)) != 0; /* a live large block */
}

/* --- slabs --------------------------------------------------------------- */

/* Page i stops being a slab of class c (it stays a live buddy page). */
static void unslab(rtm_slab *s, size_t i, unsigned c)
{
    if (desc(s, i)->list == RTM_SLAB_EMPTY)
        (void)cache_take(s, c);
    else
        list_remove(s, i, c);
    desc(s, i)->cls = 0;
    s->slabs--;
    s->slot_free -= page(s);
}

/* A new slab of class c, listed as partial-to-be (the caller pops an object
 * at once): one page from the buddy, or, when the buddy has none left,
 * another class's cached empty slab taken over in place (then the only free
 * pages there are). NIL when there is neither. */
static uint32_t slab_new(rtm_slab *s, unsigned c)
{
    char *p = rtm_buddy_alloc_pages(inner(s), 0);
    size_t i;
    if (RTM_LIKELY(p != NULL)) {
        i = (size_t)(p - arena(s)) >> s->shift;
        s->slabs++;
        s->slot_free += page(s);
    } else if (s->cached != 0) {
        i = cache_take(s, rtm_ctz32(s->cached)); /* still a whole free slab */
    } else {
        return NIL;
    }
    slab_desc *d = desc(s, i);
    __builtin_memset(d, 0, s->stride);
    d->cls = (uint8_t)(c + 1u);
    d->free_head = NIL;
    list_push(s, i, c, RTM_SLAB_PARTIAL);
    return (uint32_t)i;
}

/* Returns an empty slab's page to the buddy. */
static void slab_release(rtm_slab *s, size_t i, unsigned c)
{
    unslab(s, i, c);
    (void)rtm_buddy_free_pages(inner(s), page_at(s, i), 0);
}

/* Page i has just gone back to the buddy as an order-0 block. A cached
 * empty slab on its buddy page would now keep the pair from merging
 * (invariant 5): it goes back too, and the pair merges as far as it can.
 * No further slab can be affected: the merge creates no free order-0 block. */
static void unstrand(rtm_slab *s, size_t i)
{
    size_t j = i ^ 1u;
    if (j < top_end(s) && is_cached(s, j))
        slab_release(s, j, desc(s, j)->cls - 1u);
}

/* Slab i of class c has just become empty. It stays as the class's cached
 * empty slab (no buddy round trip for a class oscillating around a slab
 * boundary) when the class has none and caching strands nothing; otherwise
 * it goes back to the buddy, with a cached slab on its buddy page. */
static void retire(rtm_slab *s, size_t i, unsigned c)
{
    if ((s->cached & ((uint32_t)1 << c)) == 0 && may_cache(s, i)) {
        cache_put(s, i, c);
        return;
    }
    slab_release(s, i, c);
    unstrand(s, i);
}

/* Hot path budget: two list heads read, one pop or bump, one bitmap flip,
 * at most one list move; a new slab adds one buddy order-0 alloc. */
static void *alloc_small(rtm_slab *s, unsigned c)
{
    uint32_t i = s->head[c][RTM_SLAB_PARTIAL];
    if (RTM_UNLIKELY(i == NIL)) {
        if (s->head[c][RTM_SLAB_EMPTY] != NIL) {
            i = (uint32_t)cache_take(s, c);
            list_push(s, i, c, RTM_SLAB_PARTIAL);
        } else if ((i = slab_new(s, c)) == NIL) {
            return refuse(s, RTM_ENOMEM);
        }
    }
    slab_desc *d = desc(s, i);
    size_t cs = class_size(c);
    uint32_t off;
    if (d->free_head != NIL) {
        off = d->free_head;
        d->free_head = *link_at(s, i, off);
    } else {
        off = d->fresh;
        d->fresh += (uint32_t)cs;
    }
    bit_flip(d, off >> (c + 3u));
    if (++d->used == capacity(s, c))
        list_move(s, i, c, RTM_SLAB_FULL);
    s->objects++;
    s->slot_free -= cs;
    count_alloc(s, cs);
    return page_at(s, i) + off;
}

/* A one-page block when the buddy has no page: a cached empty slab's page
 * is a live order-0 buddy block already, so it becomes the large block in
 * place (a bit scan, a list removal, no buddy call). NULL when no slab is
 * cached. Larger or more aligned requests are the buddy's alone (and
 * largest_free says so): giving cached slabs back for them would cost one
 * buddy free per class in a single call. */
static void *adopt_page(rtm_slab *s, size_t alignment, size_t size)
{
    if (s->cached == 0 || size > page(s) || alignment > page(s))
        return NULL;
    unsigned c = rtm_ctz32(s->cached);
    size_t i = s->head[c][RTM_SLAB_EMPTY];
    unslab(s, i, c);
    return page_at(s, i);
}

static void *alloc_large(rtm_slab *s, size_t alignment, size_t size)
{
    size_t before = buddy_failed(s);
    void *p = alignment ? rtm_buddy_aligned_alloc(inner(s), alignment, size)
                        : rtm_buddy_alloc(inner(s), size);
    if (RTM_UNLIKELY(p == NULL)) {
        if (buddy_failed(s) == before)
            return NULL; /* EINVAL or ENOTSUP, set by the buddy, not counted */
        if ((p = adopt_page(s, alignment, size)) == NULL)
            return refuse(s, RTM_ENOMEM);
    }
    size_t n = rtm_buddy_live_bytes(inner(s), p);
    s->large++;
    s->large_bytes += n;
    count_alloc(s, n);
    return p;
}

/* --- pointer classification -------------------------------------------- */

/* What a pointer is: an object slot of slab page *page (>= 0 returned:
 * the object index), or -1: not inside a slab page. A pointer inside a
 * slab that is not an object start gives -2. Integer arithmetic only. */
static inline long locate(const rtm_slab *s, const void *ptr, size_t *pi)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)arena(s));
    size_t i = d >> s->shift;
    if (i >= s->pages || desc(s, i)->cls == 0)
        return -1;
    unsigned c = desc(s, i)->cls - 1u;
    size_t off = d & (page(s) - 1u);
    *pi = i;
    if (off & (class_size(c) - 1u))
        return -2;
    return (long)(off >> (c + 3u));
}

/* --- operations -------------------------------------------------------- */

void *rtm_slab_alloc(rtm_slab *s, size_t size)
{
    if (RTM_LIKELY(size <= largest_class(s)))
        return alloc_small(s, class_of(size));
    return alloc_large(s, 0, size);
}

void *rtm_slab_aligned_alloc(rtm_slab *s, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(s, RTM_EINVAL);
    size_t n = size > alignment ? size : alignment;
    if (n <= largest_class(s))
        return alloc_small(s, class_of(n));
    return alloc_large(s, alignment, size);
}

/* Whether a pointer locate() placed in a slab page with descriptor d (j:
 * its object index, or -2) is a live object: the one check free, realloc
 * and usable_size make of small objects; refuse_object() reports a
 * refusal. Split in two so that free's refusal is a tail call and its
 * fast path keeps nothing alive for the report. */
static inline int object_live(slab_desc *d, long j) { return j >= 0 && bit_get(d, (uint32_t)j); }

static RTM_COLD RTM_NOINLINE int refuse_object(const rtm_slab *s, const void *ptr, long j)
{
    if (j < 0)
        return reject(s, ptr, RTM_ERR_FOREIGN_POINTER, "pointer inside a slab is not an object");
    return reject(s, ptr, RTM_ERR_DOUBLE_FREE, "object is free (freed twice?)");
}

static int free_small(rtm_slab *s, void *ptr, size_t i, long j)
{
    slab_desc *d = desc(s, i);
    unsigned c = d->cls - 1u;
    if (RTM_UNLIKELY(!object_live(d, j)))
        return refuse_object(s, ptr, j);
    bit_flip(d, (uint32_t)j);
    uint32_t off = (uint32_t)j << (c + 3u);
    *link_at(s, i, off) = d->free_head;
    d->free_head = off;
    size_t cs = class_size(c);
    s->objects--;
    s->live--;
    s->used_bytes -= cs;
    s->slot_free += cs;
    if (d->used-- == capacity(s, c))
        list_move(s, i, c, RTM_SLAB_PARTIAL);
    if (d->used == 0)
        retire(s, i, c);
    return 0;
}

/* The page index of a large block (a buddy block start). */
static inline size_t page_index(const rtm_slab *s, const void *ptr)
{
    return (size_t)((const char *)ptr - arena(s)) >> s->shift;
}

static int free_large(rtm_slab *s, void *ptr)
{
    size_t n = rtm_buddy_live_bytes(inner(s), ptr);
    if (rtm_buddy_free(inner(s), ptr) != 0)
        return -1; /* reported by the buddy: foreign or double free */
    s->large--;
    s->large_bytes -= n;
    s->live--;
    s->used_bytes -= n;
    if (n == page(s))
        unstrand(s, page_index(s, ptr)); /* an order-0 block went back */
    return 0;
}

int rtm_slab_free(rtm_slab *s, void *ptr)
{
    if (ptr == NULL)
        return 0;
    size_t i = 0;
    long j = locate(s, ptr, &i);
    if (RTM_LIKELY(j != -1))
        return free_small(s, ptr, i, j);
    return free_large(s, ptr);
}

/* Validated as free() validates, reporting: a small object by
 * object_live() and refuse_object(), anything outside the slab pages by the buddy (a large
 * block, or no block: rtm_buddy_usable_size reports as rtm_buddy_free). A
 * live block is never 0 bytes, so 0 means refused (realloc relies on it). */
size_t rtm_slab_usable_size(const rtm_slab *s, const void *ptr)
{
    if (ptr == NULL)
        return 0;
    size_t i = 0;
    long j = locate(s, ptr, &i);
    if (j == -1)
        return rtm_buddy_usable_size(inner(s), ptr);
    if (!object_live(desc(s, i), j)) {
        (void)refuse_object(s, ptr, j);
        return 0;
    }
    return class_size(desc(s, i)->cls - 1u);
}

void *rtm_slab_realloc(rtm_slab *s, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_slab_alloc(s, size);
    size_t old = rtm_slab_usable_size(s, ptr); /* 0: refused and reported */
    if (old == 0)
        return NULL;
    if (size == 0) {
        (void)rtm_slab_free(s, ptr);
        return NULL;
    }
    if (size <= old)
        return ptr;
    size_t i = 0;
    if (locate(s, ptr, &i) == -1) {
        /* A large block grows in the buddy (in place or moved, keeping its
         * alignment); the counters follow the usable size. */
        size_t before = buddy_failed(s);
        void *q = rtm_buddy_realloc(inner(s), ptr, size);
        if (q == NULL) {
            if (buddy_failed(s) != before)
                s->failed_allocs++;
            return NULL;
        }
        size_t n = rtm_buddy_live_bytes(inner(s), q);
        s->large_bytes += n - old;
        s->used_bytes -= old;
        count_alloc(s, n);
        s->live--;
        if (q != ptr && old == page(s))
            unstrand(s, page_index(s, ptr)); /* the old one-page block went back */
        return q;
    }
    void *q = rtm_slab_alloc(s, size);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, old);
    (void)rtm_slab_free(s, ptr);
    return q;
}

size_t rtm_slab_page_size(const rtm_slab *s) { return page(s); }
unsigned rtm_slab_class_count(const rtm_slab *s) { return s->classes; }

size_t rtm_slab_slab_count(const rtm_slab *s, unsigned cls, int list)
{
    if (cls >= s->classes || list < 0 || list >= (int)LISTS)
        return 0;
    return s->count[cls][list];
}

rtm_stats rtm_slab_stats(const rtm_slab *s)
{
    rtm_stats b = rtm_buddy_stats(inner(s));
    rtm_stats st;
    st.arena_bytes = s->arena_bytes;
    st.used_bytes = s->used_bytes;
    st.free_bytes = b.free_bytes + s->slot_free;
    st.largest_free = b.largest_free;
    if (st.largest_free == 0 && s->cached != 0)
        st.largest_free = page(s); /* a cached slab's page serves up to a page */
    for (unsigned c = s->classes; st.largest_free == 0 && c-- > 0;)
        if (s->head[c][RTM_SLAB_PARTIAL] != NIL || s->head[c][RTM_SLAB_EMPTY] != NIL)
            st.largest_free = class_size(c);
    st.live_blocks = s->live;
    st.peak_used_bytes = s->peak_used;
    st.failed_allocs = s->failed_allocs;
    return st;
}

static void clear_state(rtm_slab *s)
{
    __builtin_memset(base(s) + s->desc, 0, s->table * s->stride);
    for (unsigned c = 0; c < MAX_CLASS; c++)
        for (unsigned l = 0; l < LISTS; l++) {
            s->head[c][l] = NIL;
            s->count[c][l] = 0;
        }
    s->used_bytes = s->slot_free = s->objects = s->large = s->large_bytes = 0;
    s->slabs = s->live = s->peak_used = s->failed_allocs = 0;
    s->cached = 0;
}

void rtm_slab_reset(rtm_slab *s)
{
    rtm_buddy_reset(inner(s));
    clear_state(s);
}

/* --- creation ------------------------------------------------------------ */

static size_t control_size(void) { return (sizeof(rtm_slab) + GRAN - 1u) & ~(GRAN - 1u); }
static size_t stride_for(size_t page_size)
{
    return (sizeof(slab_desc) + 4u * (page_size >> 8) + GRAN - 1u) & ~(GRAN - 1u);
}
static int good_page(size_t p)
{
    return rtm_is_pow2(p) && p >= RTM_SLAB_MIN_PAGE && p <= RTM_SLAB_MAX_PAGE;
}

/* Worst start (7), control, one descriptor, the buddy's own minimum; the
 * table-sizing loop of create always finds n = 1 workable then. */
size_t rtm_slab_min_region(size_t page_size)
{
    if (!good_page(page_size))
        return 0;
    return GRAN - 1u + control_size() + stride_for(page_size) + rtm_buddy_min_region(page_size);
}

static void first_block(void *ptr, size_t usable, int used, void *arg)
{
    (void)usable;
    (void)used;
    char **first = arg;
    if (*first == NULL)
        *first = ptr;
}

/* The table needs one descriptor per buddy page, and the buddy gets what
 * the table leaves: start from n = rest / (page + stride) entries; if the
 * buddy then has more pages than entries, give the table that many (the
 * buddy shrinks); if the buddy does not fit, take one entry away. Each step
 * moves n by the small overhead difference, so a few creates suffice. */
rtm_slab *rtm_slab_create(void *mem, size_t bytes, size_t page_size)
{
    uintptr_t start = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    size_t ctrl = control_size(), stride = stride_for(page_size);
    /* mem + bytes must not wrap (the inner buddy checks it too, but the
     * table sizing below would work on a region that is not one). */
    if (mem == NULL || !good_page(page_size) || bytes > UINTPTR_MAX - (uintptr_t)mem ||
        bytes < lost || bytes - lost < ctrl) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t rest = bytes - lost - ctrl;
    size_t n = rest / (page_size + stride);
    rtm_buddy *b = NULL;
    for (unsigned tries = 0; tries < 64u && n > 0; tries++) {
        b = rtm_buddy_create((char *)start + ctrl + n * stride, rest - n * stride, page_size);
        if (b == NULL) {
            n--;
            continue;
        }
        if (rtm_buddy_page_count(b) <= n && rtm_buddy_page_count(b) < NIL)
            break;
        n = rtm_buddy_page_count(b);
        b = NULL;
    }
    if (b == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_slab *s = (rtm_slab *)start;
    s->kind = RTM_KIND_SLAB;
    s->shift = rtm_fls_size(page_size);
    s->classes = s->shift - 5u;
    s->words = (uint32_t)(page_size >> 8);
    s->arena_bytes = bytes;
    s->pages = rtm_buddy_page_count(b);
    s->table = n;
    s->stride = stride;
    s->desc = (ptrdiff_t)ctrl;
    s->buddy = (char *)b - base(s);
    char *first = NULL;
    rtm_buddy_walk(b, first_block, &first);
    s->arena = first - base(s);
    clear_state(s);
    return s;
}

/* --- walk -------------------------------------------------------------- */

typedef struct walk_ctx {
    const rtm_slab *s;
    void (*walker)(void *ptr, size_t usable, int used, void *arg);
    void *arg;
} walk_ctx;

static void walk_block(void *ptr, size_t usable, int used, void *arg)
{
    walk_ctx *w = arg;
    const rtm_slab *s = w->s;
    size_t i = (size_t)((char *)ptr - arena(s)) >> s->shift;
    slab_desc *d = used && i < s->pages ? desc(s, i) : NULL;
    if (d == NULL || d->cls == 0 || d->cls > s->classes) {
        w->walker(ptr, usable, used, w->arg);
        return;
    }
    if (d->list == RTM_SLAB_EMPTY) {
        /* A cached empty slab is one free page: any request up to a page
         * takes it over (adopt_page, slab_new), so largest_free counts it. */
        w->walker(ptr, usable, 0, w->arg);
        return;
    }
    unsigned c = d->cls - 1u;
    for (uint32_t j = 0; j < capacity(s, c); j++)
        w->walker((char *)ptr + ((size_t)j << (c + 3u)), class_size(c), bit_get(d, j), w->arg);
}

void rtm_slab_walk(const rtm_slab *s, void (*walker)(void *ptr, size_t usable, int used, void *arg),
                   void *arg)
{
    walk_ctx w = {s, walker, arg};
    rtm_buddy_walk(inner(s), walk_block, &w);
}

/* --- check ------------------------------------------------------------- */

static RTM_COLD int check_fail(const rtm_slab *s, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, s, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

static int check_header(const rtm_slab *s)
{
    if (s->kind != RTM_KIND_SLAB)
        return check_fail(s, s, "kind word is not a slab heap's");
    if (s->shift < 8u || s->shift > 24u || s->classes != s->shift - 5u ||
        s->words != (page(s) >> 8) || s->stride != stride_for(page(s)))
        return check_fail(s, s, "page size, classes or descriptor stride inconsistent");
    if (s->desc != (ptrdiff_t)control_size() || s->pages > s->table ||
        s->buddy != s->desc + (ptrdiff_t)(s->table * s->stride) || s->arena <= s->buddy ||
        ((size_t)s->arena + (s->pages << s->shift)) > s->arena_bytes)
        return check_fail(s, s, "region geometry inconsistent");
    return 0;
}

/* SWAR popcount: the builtin calls libgcc (__popcountdi2) without -mpopcnt,
 * which a freestanding build may not link. */
static uint32_t popcount32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0fu;
    return (x * 0x01010101u) >> 24;
}

static int popcount_ok(const rtm_slab *s, slab_desc *d)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < s->words; w++)
        n += popcount32(bitmap(d)[w]);
    return n == d->used;
}

/* One slab: its class, counts, free list (bounded, integers first). */
static int check_slab(const rtm_slab *s, size_t i, unsigned c, unsigned l)
{
    slab_desc *d = desc(s, i);
    uint32_t cap = capacity(s, c), cs = (uint32_t)class_size(c);
    if (d->cls != c + 1u || d->list != l || d->reserved != 0)
        return check_fail(s, d, "slab descriptor on the wrong class or list");
    if (d->used > cap || (l == RTM_SLAB_FULL) != (d->used == cap) ||
        (l == RTM_SLAB_EMPTY) != (d->used == 0))
        return check_fail(s, d, "slab's live count does not match its list");
    if (d->fresh > page(s) || (d->fresh & (cs - 1u)) != 0 || !popcount_ok(s, d))
        return check_fail(s, d, "slab's tail or live bitmap inconsistent");
    for (uint32_t j = d->fresh / cs; j < cap; j++)
        if (bit_get(d, j))
            return check_fail(s, d, "never-used object marked live");
    uint32_t expect = cap - d->used - (uint32_t)((page(s) - d->fresh) / cs), k = 0;
    for (uint32_t off = d->free_head; off != NIL; off = *link_at(s, i, off)) {
        if (k++ == expect || off >= d->fresh || (off & (cs - 1u)) != 0 || bit_get(d, off / cs))
            return check_fail(s, page_at(s, i), "slab free list broken");
    }
    if (k != expect)
        return check_fail(s, page_at(s, i), "slab free list shorter than its free count");
    if (rtm_buddy_live_bytes(inner(s), page_at(s, i)) != page(s))
        return check_fail(s, page_at(s, i), "slab page is not a live one-page buddy block");
    if (l == RTM_SLAB_EMPTY && !may_cache(s, i))
        return check_fail(s, page_at(s, i), "cached empty slab strands its buddy page");
    return 0;
}

typedef struct census {
    size_t slabs, objects, bytes, slot_free;
} census;

static int check_list(const rtm_slab *s, unsigned c, unsigned l, census *k)
{
    uint32_t prev = NIL;
    size_t n = 0;
    for (uint32_t i = s->head[c][l]; i != NIL; i = desc(s, i)->next) {
        if (i >= s->pages || n++ >= s->pages)
            return check_fail(s, s, "slab list link out of range or cyclic");
        if (desc(s, i)->prev != prev)
            return check_fail(s, desc(s, i), "slab list prev link broken");
        if (check_slab(s, i, c, l) != 0)
            return -1;
        k->slabs++;
        k->objects += desc(s, i)->used;
        k->bytes += desc(s, i)->used * class_size(c);
        k->slot_free += (capacity(s, c) - desc(s, i)->used) * class_size(c);
        prev = i;
    }
    if (n != s->count[c][l] || (l == RTM_SLAB_EMPTY && n > 1u))
        return check_fail(s, s, "slab list count wrong (or more than one empty slab)");
    if (l == RTM_SLAB_EMPTY && ((s->cached >> c) & 1u) != n)
        return check_fail(s, s, "cached-slab bit disagrees with the empty list");
    return 0;
}

int rtm_slab_check(const rtm_slab *s)
{
    if (check_header(s) != 0)
        return -1;
    census k = {0, 0, 0, 0};
    if ((s->cached >> s->classes) != 0)
        return check_fail(s, s, "cached-slab bit of a class the page size does not have");
    for (unsigned c = 0; c < MAX_CLASS; c++)
        for (unsigned l = 0; l < LISTS; l++) {
            if (c >= s->classes && (s->head[c][l] != NIL || s->count[c][l] != 0))
                return check_fail(s, s, "list of a class the page size does not have");
            if (c < s->classes && check_list(s, c, l, &k) != 0)
                return -1;
        }
    size_t tagged = 0;
    for (size_t i = 0; i < s->pages; i++)
        tagged += desc(s, i)->cls != 0;
    if (tagged != k.slabs || k.slabs != s->slabs)
        return check_fail(s, s, "a slab page is on no list");
    if (rtm_buddy_check(inner(s)) != 0)
        return -1;
    rtm_stats b = rtm_buddy_stats(inner(s));
    if (k.objects != s->objects || k.slot_free != s->slot_free ||
        k.bytes + s->large_bytes != s->used_bytes || s->objects + s->large != s->live ||
        b.used_bytes != (s->slabs << s->shift) + s->large_bytes ||
        b.live_blocks != s->slabs + s->large || s->used_bytes > s->peak_used)
        return check_fail(s, s, "counters disagree with the slabs or the buddy");
    return 0;
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

RTM_KIND_ADAPTERS(slab, rtm_slab)

/* Valid at any start address. */
static size_t slab_kind_min_region(size_t page) { return rtm_slab_min_region(page); }
static rtm_heap *slab_kind_create(void *mem, size_t bytes, size_t page)
{
    return (rtm_heap *)(void *)rtm_slab_create(mem, bytes, page);
}

const rtm_heap_kind rtm_kind_slab = {
    .kind = RTM_KIND_SLAB,
    .default_param = RTM_SLAB_DEFAULT_PAGE, /* "slab:<page size>" */
    .min_region = slab_kind_min_region,
    .create = slab_kind_create,
    RTM_KIND_OPERATIONS(slab),
};
