// SPDX-License-Identifier: MIT
/*
 * heaps/xvmalloc.c -- rtmem's xvmalloc heap ("xvmalloc:<page>"), after the
 * allocator of Linux's early zram (drivers/staging/zram/xvmalloc.c): the
 * region is cut into pages and every page is a small TLSF of its own --
 * block headers inside the page, free blocks on two-level segregated lists
 * that all pages share, neighbours merged only within their page. A block
 * never crosses a page, so a request above a page's payload fails (ENOMEM)
 * however much memory is free; that is the price of pages that can be given
 * back whole. Checker and walker: heaps/xvmalloc_check.c; layout and class
 * mapping: heaps/xvmalloc_layout.h. Reached through the generic API only.
 *
 *   region: [ control | page 0 | page 1 | ... | page P-1 ] (P << shift bytes)
 *
 *   a page in use (units of 8 bytes; offsets count from the page start):
 *
 *     [ hdr | payload ... ][ hdr | links | stale ][ hdr | payload ... ]
 *       used                free (on a list)        used
 *     hdr = units (16) | prev block's units (16, 0 for the first) | tag (32)
 *
 *   alloc of n units from a free block of m (split when m - n >= 2):
 *     [ ------- free m ------- ] => [ used n ][ free m - n ]
 *
 *   free merges with the free neighbours in the same page:
 *     [ free L ][ this ][ free R ] => [ --------- free --------- ]
 *   and when the result is the whole page, the page goes back to the
 *   empty-page stack instead of a list.
 *
 * Pages: [fresh, P) were never used (create writes nothing in them, so it
 * is O(1) whatever the region); returned pages are on a stack linked
 * through their first header. Taking a page pops the stack, else takes
 * page `fresh`: O(1) either way.
 *
 * Invariants (heaps/xvmalloc_check.c verifies each one):
 *  1. Pages below `fresh` are either empty (EMPTY tag, on the stack, which
 *     holds exactly these) or tiled by blocks whose `prev` fields name the
 *     block before; pages from `fresh` on are untouched.
 *  2. No two free blocks are neighbours; no free block is a whole page.
 *  3. Free blocks are exactly the members of the lists, each on the list of
 *     its size; a bitmap bit is set iff its list (or word) is non-empty.
 *  4. Counters equal what a walk finds.
 *
 * Class choice (as TLSF): the head of the request's own list is tried
 * first (the insert keeps a list's largest block at its head when it is
 * inserted), then the first non-empty list at or above the request rounded
 * up to its next class boundary, any of whose blocks fits; then a page.
 * So alloc(n) succeeds iff n <= stats.largest_free, which is a whole page's
 * payload while an empty page remains and the highest list's head after.
 *
 * Time: alloc is two bit scans, one list removal, one insertion; free is at
 * most two removals and one insertion or a stack push. No loop.
 *
 * Freestanding: no libc (__builtin_memcpy only). Not thread-safe: the
 * caller (or the locked heap) serialises access to one heap.
 */
#include "core/kind.h"
#include "heaps/xvmalloc_layout.h"

/* --- free lists -------------------------------------------------------- */

static inline void bits_set(rtm_xvmalloc *h, unsigned list)
{
    h->sl_bits[list >> XV_SL_LOG2] |= 1u << (list & (XV_SL - 1u));
    h->fl_bits |= 1u << (list >> XV_SL_LOG2);
}

static inline void bits_clear(rtm_xvmalloc *h, unsigned list)
{
    unsigned f = list >> XV_SL_LOG2;
    h->sl_bits[f] &= ~(1u << (list & (XV_SL - 1u)));
    if (h->sl_bits[f] == 0)
        h->fl_bits &= ~(1u << f);
}

/* Marks block g (n units, in its page) free and puts it on its list: at
 * the head when it is at least as large as the head, else second, so a
 * list's head is its largest block whenever it was inserted last or was
 * largest on insertion (what stats.largest_free reads). */
static void list_insert(rtm_xvmalloc *h, size_t g, size_t n)
{
    unsigned list = xv_list_of(n);
    xv_hdr *b = xv_at(h, g);
    xv_links *l = xv_links_at(h, g);
    uint32_t head = h->heads[list], me = (uint32_t)g + 1u;
    b->units = (uint16_t)n;
    b->tag = xv_tag(XV_FREE, xv_offset(h, g));
    if (head == 0 || xv_at(h, head - 1u)->units <= n) {
        l->prev = 0;
        l->next = head;
        if (head != 0)
            xv_links_at(h, head - 1u)->prev = me;
        h->heads[list] = me;
        bits_set(h, list);
    } else {
        xv_links *hl = xv_links_at(h, head - 1u);
        l->prev = head;
        l->next = hl->next;
        if (hl->next != 0)
            xv_links_at(h, hl->next - 1u)->prev = me;
        hl->next = me;
    }
    h->free_units += n;
    h->free_blocks++;
}

/* Takes free block g (n units) off its list, wherever it sits. */
static void list_remove(rtm_xvmalloc *h, size_t g, size_t n)
{
    unsigned list = xv_list_of(n);
    const xv_links *l = xv_links_at(h, g);
    RTM_ASSERT(h->free_blocks > 0 && h->free_units >= n);
    if (l->prev != 0)
        xv_links_at(h, l->prev - 1u)->next = l->next;
    else
        h->heads[list] = l->next;
    if (l->next != 0)
        xv_links_at(h, l->next - 1u)->prev = l->prev;
    if (h->heads[list] == 0)
        bits_clear(h, list);
    h->free_units -= n;
    h->free_blocks--;
}

/* The first non-empty list at or above `list`, or -1. */
static inline int list_search(const rtm_xvmalloc *h, unsigned list)
{
    unsigned f = list >> XV_SL_LOG2;
    uint32_t sl = h->sl_bits[f] & (~0u << (list & (XV_SL - 1u)));
    if (sl == 0) {
        uint32_t fl = h->fl_bits & (~0u << f << 1);
        if (fl == 0)
            return -1;
        f = rtm_ctz32(fl);
        sl = h->sl_bits[f];
    }
    return (int)((f << XV_SL_LOG2) + rtm_ctz32(sl));
}

/* A listed free block of at least n units, off its list (its index in
 * *g, its units returned), or 0. Own list's head first, then good fit;
 * from a good-fit list the second block is taken when there is one, so
 * the head (its largest) stays. */
static inline size_t take_listed(rtm_xvmalloc *h, size_t n, size_t *g)
{
    uint32_t head = h->heads[xv_list_of(n)];
    if (head != 0 && xv_at(h, head - 1u)->units >= n) {
        *g = head - 1u;
    } else {
        int list = list_search(h, xv_list_fit(n));
        if (list < 0)
            return 0;
        head = h->heads[list];
        uint32_t second = xv_links_at(h, head - 1u)->next;
        *g = (second != 0 ? second : head) - 1u;
    }
    size_t m = xv_at(h, *g)->units;
    list_remove(h, *g, m);
    return m;
}

/* --- pages ------------------------------------------------------------- */

/* An empty page's first unit index, or SIZE_MAX when none is left. */
static inline size_t take_page(rtm_xvmalloc *h)
{
    size_t page;
    if (h->empty_top != 0) {
        page = h->empty_top - 1u;
        h->empty_top = xv_links_at(h, page << (h->page_shift - XV_LOG2U))->next;
        h->empty_count--;
    } else if (h->fresh < h->pages) {
        page = h->fresh++;
    } else {
        return SIZE_MAX;
    }
    return page << (h->page_shift - XV_LOG2U);
}

/* Gives the page starting at unit g back: EMPTY tag, onto the stack. */
static inline void give_page(rtm_xvmalloc *h, size_t g)
{
    xv_hdr *b = xv_at(h, g);
    b->units = (uint16_t)h->page_units;
    b->prev = 0;
    b->tag = XV_EMPTY;
    xv_links_at(h, g)->next = h->empty_top;
    h->empty_top = (uint32_t)(g >> (h->page_shift - XV_LOG2U)) + 1u;
    h->empty_count++;
}

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_xvmalloc *h, int err)
{
    if (err == RTM_ENOMEM)
        h->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_xvmalloc *h, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, h, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* Why ptr is not a live block (cold: only after the fast test failed). */
static RTM_COLD int reject_header(const rtm_xvmalloc *h, const void *ptr, const xv_hdr *b,
                                  uint32_t off)
{
    if (b->tag == xv_tag(XV_FREE, off) || (off == 0 && b->tag == XV_EMPTY))
        return reject(h, ptr, RTM_ERR_DOUBLE_FREE, "block is free (freed twice?)");
    if (b->tag == xv_tag(XV_USED, off))
        return reject(h, ptr, RTM_ERR_CORRUPT_HEADER, "used block's header damaged");
    return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block start");
}

/* What a pointer is: a live block, outside the used pages (or not
 * 8-aligned), or a unit whose header is not a live block's. */
enum { XV_LIVE, XV_OUTSIDE, XV_NOT_LIVE };

/* Integer arithmetic first: the header is read only once it is known to be
 * a unit inside a page that was used. A pointer below the arena wraps d
 * past the used span, so one compare covers both sides. The header must
 * carry the USED tag of its own offset and sizes that keep it inside its
 * page, so a forged or damaged one is never followed. */
static inline int classify(const rtm_xvmalloc *h, const void *ptr, size_t *out)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)xv_base(h)) - XV_HDR;
    if (RTM_UNLIKELY(d >= ((size_t)h->fresh << h->page_shift) || (d & (XV_UNIT - 1u)) != 0))
        return XV_OUTSIDE;
    size_t g = d >> XV_LOG2U;
    uint32_t off = xv_offset(h, g);
    const xv_hdr *b = xv_at(h, g);
    *out = g;
    if (RTM_UNLIKELY(b->tag != xv_tag(XV_USED, off) || b->units < XV_MIN_UNITS ||
                     b->units > h->page_units - off || b->prev > off ||
                     (b->prev == 0) != (off == 0)))
        return XV_NOT_LIVE;
    return XV_LIVE;
}

/* The unit index of live block ptr, or -1 after reporting why ptr is not
 * one. */
static inline int live_block(const rtm_xvmalloc *h, const void *ptr, size_t *out)
{
    int what = classify(h, ptr, out);
    if (RTM_LIKELY(what == XV_LIVE))
        return 0;
    if (what == XV_OUTSIDE)
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block of this heap");
    return reject_header(h, ptr, xv_at(h, *out), xv_offset(h, *out));
}

/* --- operations -------------------------------------------------------- */

/* Cuts block g (m units, off its list, not yet tagged) to n units and
 * marks it used; the rest, when it can hold a free block, is a new free
 * block whose right neighbour (used, or the page end) learns its size. */
static inline void *carve(rtm_xvmalloc *h, size_t g, size_t m, size_t n)
{
    xv_hdr *b = xv_at(h, g);
    size_t rest = m - n;
    if (rest >= XV_MIN_UNITS) {
        size_t r = g + n;
        xv_at(h, r)->prev = (uint16_t)n;
        list_insert(h, r, rest);
        if (xv_offset(h, g) + m < h->page_units)
            xv_at(h, g + m)->prev = (uint16_t)rest;
        m = n;
    }
    b->units = (uint16_t)m;
    b->tag = xv_tag(XV_USED, xv_offset(h, g));
    h->live_blocks++;
    h->used_units += m;
    size_t used = xv_used_bytes(h);
    if (used > h->peak_used)
        h->peak_used = used;
    return (char *)b + XV_HDR;
}

/* Hot path: a listed block (two bit scans at most), else a page. */
static void *xv_alloc(rtm_xvmalloc *h, size_t size)
{
    size_t n = xv_units_for(h, size);
    if (RTM_UNLIKELY(n == 0))
        return refuse(h, RTM_ENOMEM);
    size_t g = 0;
    size_t m = take_listed(h, n, &g);
    if (m == 0) {
        g = take_page(h);
        if (RTM_UNLIKELY(g == SIZE_MAX))
            return refuse(h, RTM_ENOMEM);
        m = h->page_units;
        xv_at(h, g)->prev = 0;
    }
    return carve(h, g, m, n);
}

/* Merges freed block g (n units) with its free neighbours in the page and
 * lists the result, or gives the page back when the result is all of it.
 *
 *   [ free L ][ g: USED ][ free R ] => [ ------ free L+g+R ------ ]
 *                ^ tagged FREE first, so that a second free(g) of a
 *                  header left inside the merged block is a double free
 */
static void release(rtm_xvmalloc *h, size_t g, size_t n)
{
    xv_hdr *b = xv_at(h, g);
    uint32_t off = xv_offset(h, g);
    b->tag = xv_tag(XV_FREE, off);
    if (off + n < h->page_units) {
        const xv_hdr *r = xv_at(h, g + n);
        if (r->tag == xv_tag(XV_FREE, off + (uint32_t)n)) {
            size_t rn = r->units;
            list_remove(h, g + n, rn);
            n += rn;
        }
    }
    uint16_t prev = b->prev;
    if (prev != 0) {
        const xv_hdr *l = xv_at(h, g - prev);
        if (l->tag == xv_tag(XV_FREE, off - prev)) {
            list_remove(h, g - prev, prev);
            g -= prev;
            n += prev;
            off -= prev;
        }
    }
    if (n == h->page_units) {
        give_page(h, g);
        return;
    }
    if (off + n < h->page_units)
        xv_at(h, g + n)->prev = (uint16_t)n;
    list_insert(h, g, n);
}

/* Hot path: validate, then merge and list (or give the page back). */
static void xv_free(rtm_xvmalloc *h, void *ptr)
{
    if (RTM_UNLIKELY(ptr == NULL))
        return;
    size_t g = 0;
    if (RTM_UNLIKELY(live_block(h, ptr, &g) != 0))
        return;
    size_t n = xv_at(h, g)->units;
    h->live_blocks--;
    h->used_units -= n;
    release(h, g, n);
}

static void *xv_aligned_alloc(rtm_xvmalloc *h, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(h, RTM_EINVAL);
    if (alignment > RTM_ALIGN)
        return refuse(h, RTM_ENOTSUP); /* payloads sit one unit past a unit boundary */
    return xv_alloc(h, size);
}

/* In place when the block already holds size (keeps the address, as the
 * contract wants); else alloc, copy, free. The old block stays whole on
 * failure. */
static void *xv_realloc(rtm_xvmalloc *h, void *ptr, size_t size)
{
    if (ptr == NULL)
        return xv_alloc(h, size);
    if (size == 0) {
        xv_free(h, ptr);
        return NULL;
    }
    size_t g = 0;
    if (live_block(h, ptr, &g) != 0)
        return NULL;
    size_t have = ((size_t)xv_at(h, g)->units << XV_LOG2U) - XV_HDR;
    if (size <= have)
        return ptr;
    void *q = xv_alloc(h, size);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, have);
    xv_free(h, ptr);
    return q;
}

/* 0 for NULL; a pointer that is not a live block is refused as free()
 * refuses it (live_block: reported, errno EINVAL, 0). */
static size_t xv_usable_size(rtm_xvmalloc *h, const void *ptr)
{
    size_t g = 0;
    if (ptr == NULL || live_block(h, ptr, &g) != 0)
        return 0;
    return ((size_t)xv_at(h, g)->units << XV_LOG2U) - XV_HDR;
}

/* largest_free never promises more than one page's payload: no block can
 * be larger. With no empty page left, it is the head of the highest
 * non-empty list, the size alloc is sure to find (see the top). */
static rtm_stats xv_stats(rtm_xvmalloc *h)
{
    rtm_stats st;
    size_t empty = xv_empty_pages(h);
    st.arena_bytes = h->region_bytes;
    st.used_bytes = xv_used_bytes(h);
    st.free_bytes = ((h->free_units - h->free_blocks) << XV_LOG2U) + empty * xv_page_payload(h);
    st.largest_free = 0;
    if (empty != 0) {
        st.largest_free = xv_page_payload(h);
    } else if (h->fl_bits != 0) {
        unsigned f = rtm_fls32(h->fl_bits);
        unsigned list = (f << XV_SL_LOG2) + rtm_fls32(h->sl_bits[f]);
        st.largest_free = ((size_t)xv_at(h, h->heads[list] - 1u)->units << XV_LOG2U) - XV_HDR;
    }
    st.live_blocks = h->live_blocks;
    st.peak_used_bytes = h->peak_used;
    st.failed_allocs = h->failed_allocs;
    return st;
}

/* --- creation ---------------------------------------------------------- */

/* Every page empty and untouched; lists and counters cleared. O(lists). */
static void format(rtm_xvmalloc *h)
{
    for (unsigned i = 0; i < XV_LISTS; i++)
        h->heads[i] = 0;
    for (unsigned f = 0; f < XV_FL; f++)
        h->sl_bits[f] = 0;
    h->fl_bits = 0;
    h->fresh = 0;
    h->empty_top = 0;
    h->empty_count = 0;
    h->free_units = 0;
    h->free_blocks = 0;
    h->used_units = 0;
    h->live_blocks = 0;
    h->peak_used = 0;
    h->failed_allocs = 0;
}

/* Valid at any start address: up to 7 bytes of alignment, the control,
 * one page. 0 for a page size that is not a power of two in range. */
static size_t xv_min_region(size_t page)
{
    return xv_page_ok(page) ? 7u + xv_ctrl_bytes() + page : 0;
}

static rtm_heap *xv_create(void *mem, size_t bytes, size_t page)
{
    /* The rule every heap applies: mem + bytes must not wrap. */
    if (mem == NULL || xv_min_region(page) == 0 || bytes < xv_min_region(page) ||
        bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t lost = (size_t)((8u - (uintptr_t)mem % 8u) % 8u);
    rtm_xvmalloc *h = (rtm_xvmalloc *)(uintptr_t)((char *)mem + lost);
    unsigned shift = rtm_fls_size(page);
    h->kind = RTM_KIND_XVMALLOC;
    h->lost = (uint32_t)lost;
    h->region_bytes = bytes;
    h->page_shift = shift;
    h->page_units = (uint32_t)(page >> XV_LOG2U);
    h->pages = xv_pages_for(bytes, lost, shift);
    format(h);
    return (rtm_heap *)(void *)h;
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

#define XV(h) RTM_KIND_AS(rtm_xvmalloc, h)

static void *xv_kind_alloc(rtm_heap *h, size_t size) { return xv_alloc(XV(h), size); }
static void xv_kind_free(rtm_heap *h, void *ptr) { xv_free(XV(h), ptr); }
static void *xv_kind_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    return xv_aligned_alloc(XV(h), alignment, size);
}
static void *xv_kind_realloc(rtm_heap *h, void *ptr, size_t size)
{
    return xv_realloc(XV(h), ptr, size);
}
static size_t xv_kind_usable_size(rtm_heap *h, const void *ptr)
{
    return xv_usable_size(XV(h), ptr);
}
static rtm_stats xv_kind_stats(rtm_heap *h) { return xv_stats(XV(h)); }
static int xv_kind_check(rtm_heap *h) { return rtm_xv_check(XV(h)); }
static int xv_kind_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    return rtm_xv_walk(XV(h), walker, arg);
}
static int xv_kind_reset(rtm_heap *h)
{
    format(XV(h));
    return 0;
}

const rtm_heap_kind rtm_kind_xvmalloc = {
    .kind = RTM_KIND_XVMALLOC,
    .default_param = XV_DEFAULT_PAGE, /* "xvmalloc:<page size>" */
    .min_region = xv_min_region,
    .create = xv_create,
    RTM_KIND_OPERATIONS(xv),
};
