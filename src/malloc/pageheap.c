// SPDX-License-Identifier: MIT
/*
 * malloc/pageheap.c -- the page heap: runs of 8 KiB pages ("spans") for the
 * central lists and for large requests, taken from the OS in chunks, kept
 * coalesced, and given back to the OS on a decay policy.
 *
 * Free runs sit in 256 bins by page count, with a bitmap of non-empty bins:
 *
 *   bins 0..127     exactly 1..128 pages (any run in the bin fits)
 *   bins 128..255   4 bins per power of two from 128 pages up
 *
 * Allocation looks at the request's own bin (first fit over at most 16
 * runs when the bin is a range), then takes the first run of the next
 * non-empty bin, which always fits: a bounded search, as in TLSF. A larger
 * run is split, the rest going back to its bin. Freeing merges with free
 * neighbours at once, found through the page map entries of the pages just
 * before and just after the run (a free run keeps its first and last page
 * mapped), so no two free runs of the same kind (dirty or purged) are ever
 * adjacent:
 *
 *   [ free L ][ freed S ][ free R ]   =>   [ ------ free L+S+R ------ ]
 *
 * Return to the OS (decay). A freed run is "dirty": its pages may be
 * resident. Dirty runs are also in a list ordered by the time they became
 * free; every heap operation purges (madvise DONTNEED) those idle for
 * decay_ms or more, at most 8 runs per operation so the lock is held for
 * a bounded time. A run merged with a neighbour restarts its clock. A
 * purged run stays mapped and is reused like any other; its pages come back
 * zeroed. decay_ms = 0 purges at free; -1 never; rtm_malloc_trim() purges
 * everything now. Chunks are never unmapped (the page map may point into
 * them); huge requests (>= 4 MiB) get their own mapping, unmapped at free.
 *
 * Real-time mode: the arena is the only chunk; growth and purging are off;
 * a request the bins cannot serve fails (ENOMEM, arena_exhausted).
 *
 * Lock: heap_lock, taken under class locks, above meta_lock.
 */
#include <errno.h>
#include <string.h>

#include "malloc/internal.h"
#include "os/pages.h"

#define NBINS        256u
#define EXACT_BINS   128u
#define RANGE_SCAN   16u
#define PURGE_BUDGET 8u
#if UINTPTR_MAX > 0xffffffffu
#define GROW_BYTES ((size_t)64 << 20)
#else
#define GROW_BYTES ((size_t)8 << 20)
#endif

static struct heap {
    rtmm_lock lock;
    span *bins[NBINS];
    uint64_t nonempty[NBINS / 64u];
    span *dhead, *dtail; /* dirty free runs, oldest first */
    size_t mapped, free_pages, dirty_pages, small_pages, large_pages, huge_bytes, purges;
    size_t arena_bytes, arena_exhausted;
    int arena_locked;
} H;

/* --- bins ----------------------------------------------------------------- */

static unsigned bin_of(size_t pages)
{
    if (pages <= EXACT_BINS)
        return (unsigned)pages - 1u;
    unsigned k = rtm_fls_size(pages); /* >= 7 */
    unsigned b = EXACT_BINS + (k - 7u) * 4u + (unsigned)((pages >> (k - 2u)) & 3u);
    return b < NBINS ? b : NBINS - 1u;
}

/* Appends at the young end. The list stays ordered by freed_ms: a piece
 * split off an old dirty run (its clock older than the list's youngest)
 * takes the youngest time, so its purge may come later, never earlier. */
static void decay_append(span *s)
{
    if (H.dtail && H.dtail->freed_ms > s->freed_ms)
        s->freed_ms = H.dtail->freed_ms;
    s->dnext = NULL;
    s->dprev = H.dtail;
    if (H.dtail)
        H.dtail->dnext = s;
    else
        H.dhead = s;
    H.dtail = s;
}

/* Puts s at the old end: the oldest run, purged first. */
static void decay_prepend(span *s)
{
    s->dprev = NULL;
    s->dnext = H.dhead;
    if (H.dhead)
        H.dhead->dprev = s;
    else
        H.dtail = s;
    H.dhead = s;
}

static void decay_unlink(span *s)
{
    if (s->dprev)
        s->dprev->dnext = s->dnext;
    else
        H.dhead = s->dnext;
    if (s->dnext)
        s->dnext->dprev = s->dprev;
    else
        H.dtail = s->dprev;
    s->dnext = s->dprev = NULL;
}

/* Puts a free run in its bin (and the decay list when dirty). */
static void insert_free(span *s)
{
    unsigned b = bin_of(s->pages);
    s->state = SPAN_FREE;
    s->cls = 0;
    s->prev = NULL;
    s->next = H.bins[b];
    if (s->next)
        s->next->prev = s;
    H.bins[b] = s;
    H.nonempty[b / 64u] |= (uint64_t)1 << (b % 64u);
    H.free_pages += s->pages;
    if (s->dirty) {
        H.dirty_pages += s->pages;
        decay_append(s);
    }
    rtmm_pm_set_ends(s);
}

static void remove_free(span *s)
{
    unsigned b = bin_of(s->pages);
    if (s->prev)
        s->prev->next = s->next;
    else
        H.bins[b] = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (H.bins[b] == NULL)
        H.nonempty[b / 64u] &= ~((uint64_t)1 << (b % 64u));
    H.free_pages -= s->pages;
    if (s->dirty) {
        H.dirty_pages -= s->pages;
        decay_unlink(s);
    }
    s->next = s->prev = NULL;
}

/* The first non-empty bin at or above b, or NBINS. */
static unsigned next_bin(unsigned b)
{
    for (unsigned w = b / 64u; w < NBINS / 64u; w++) {
        uint64_t m = H.nonempty[w];
        if (w == b / 64u)
            m &= ~(uint64_t)0 << (b % 64u);
        if (m)
            return w * 64u + rtm_ctz64(m);
    }
    return NBINS;
}

/* A run of at least `pages` among the first RANGE_SCAN of bin b, a dirty
 * one if there is one: its pages are likely resident, so reusing it costs
 * no page fault (and leaves purged runs purged, RSS lower). */
static span *scan_bin(unsigned b, size_t pages)
{
    span *fit = NULL;
    unsigned k = 0;
    for (span *s = H.bins[b]; s && k < RANGE_SCAN; s = s->next, k++) {
        if (s->pages < pages)
            continue;
        if (s->dirty)
            return s;
        if (fit == NULL)
            fit = s;
    }
    return fit;
}

/* Large requests first look at the youngest dirty runs (at most
 * RANGE_SCAN), taking the smallest that fits: a resident run even a few
 * bins too big beats a purged run of the right size, whose every page
 * would fault again (the pattern of repeated multi-MiB blocks). */
static span *scan_dirty(size_t pages)
{
    span *best = NULL;
    unsigned k = 0;
    for (span *s = H.dtail; s && k < RANGE_SCAN; s = s->dprev, k++)
        if (s->pages >= pages && (best == NULL || s->pages < best->pages))
            best = s;
    return best;
}

static span *find_free(size_t pages)
{
    unsigned b = bin_of(pages);
    if (b >= EXACT_BINS) {
        span *d = scan_dirty(pages);
        if (d != NULL)
            return d;
        span *s = scan_bin(b, pages);
        if (s != NULL)
            return s;
        b++;
    }
    b = next_bin(b); /* every run in a higher bin fits */
    return b < NBINS ? scan_bin(b, pages) : NULL;
}

/* --- decay ------------------------------------------------------------------ */

static span *coalesce(span *s);
static span *cut(span *s, size_t pages);

/* Returns a dirty free run's pages to the OS; it then merges with purged
 * neighbours. */
static void purge_span(span *s)
{
    (void)rtm_os_purge((void *)s->start, s->pages << PAGE_SHIFT);
    remove_free(s);
    s->dirty = 0;
    H.purges++;
    coalesce(s);
}

static void purge_expired(uint64_t now)
{
    if (rtmm_rt_mode || rtmm_opt.decay_ms < 0)
        return;
    unsigned budget = PURGE_BUDGET;
    while (H.dhead && budget-- > 0 && now - H.dhead->freed_ms >= (uint64_t)rtmm_opt.decay_ms)
        purge_span(H.dhead);
}

/* Purges the last `pages` pages of the oldest dirty run d (longer than
 * that), which stays the oldest: [ d: dirty ][ tail: purged ]. -1 when no
 * record for the tail could be had. */
static int purge_tail(span *d, size_t pages)
{
    uint64_t freed = d->freed_ms;
    remove_free(d);
    span *t = cut(d, d->pages - pages);
    insert_free(d); /* back at the list's young end, with its clock */
    decay_unlink(d);
    d->freed_ms = freed;
    decay_prepend(d); /* still the oldest */
    if (t == NULL)
        return -1;
    (void)rtm_os_purge((void *)t->start, t->pages << PAGE_SHIFT);
    t->dirty = 0;
    H.purges++;
    coalesce(t);
    return 0;
}

/* The cap of the large-block cache: dirty pages above the cap are purged
 * now, oldest first, so that a program freeing many large blocks at once
 * keeps at most the cap resident in free runs, whatever the decay time.
 * Only the excess is purged: the oldest run is cut when it is longer
 * (purging it whole at every free that crossed the cap by a page turned
 * most of malloc-large's 5-25 MiB runs into page faults again). Not in real-time mode, nor with
 * decay -1 ("never"). */
static void purge_over_cap(void)
{
    if (rtmm_rt_mode || rtmm_opt.decay_ms < 0)
        return;
    size_t cap = (H.small_pages + H.large_pages) / RTM_DIRTY_SHARE;
    if (cap < (RTM_DIRTY_MAX >> PAGE_SHIFT))
        cap = RTM_DIRTY_MAX >> PAGE_SHIFT;
    while (H.dhead && H.dirty_pages > cap) {
        size_t over = H.dirty_pages - cap;
        if (H.dhead->pages > over && purge_tail(H.dhead, over) == 0)
            break; /* only the excess: the rest of the run stays resident */
        purge_span(H.dhead);
    }
}

static uint64_t heap_now(void) { return rtmm_rt_mode ? 0 : rtm_os_now_ms(); }

/* --- growth ----------------------------------------------------------------- */

static span *grow(size_t pages)
{
    if (rtmm_rt_mode) {
        H.arena_exhausted++;
        return NULL;
    }
    size_t bytes = pages << PAGE_SHIFT;
    if (bytes >> PAGE_SHIFT != pages)
        return NULL;
    if (bytes < GROW_BYTES)
        bytes = GROW_BYTES;
    void *p = rtm_os_map_aligned(bytes, PAGE_BYTES);
    if (p == NULL)
        return NULL;
    span *s = rtmm_span_new();
    if (s == NULL || rtmm_pm_ensure((uintptr_t)p, bytes >> PAGE_SHIFT) != 0) {
        if (s)
            rtmm_span_delete(s);
        rtm_os_unmap(p, bytes);
        return NULL;
    }
    H.mapped += bytes;
    s->start = (uintptr_t)p;
    s->pages = bytes >> PAGE_SHIFT;
    s->dirty = 0; /* fresh pages: zero and not resident */
    return coalesce(s);
}

/* Cuts free run s (out of the bins) after its first `pages` pages: s keeps
 * the head, the returned new record is the tail (out of the bins too).
 * NULL when no record could be had. */
static span *cut(span *s, size_t pages)
{
    span *tail = rtmm_span_new();
    if (tail == NULL)
        return NULL;
    tail->start = s->start + (pages << PAGE_SHIFT);
    tail->pages = s->pages - pages;
    tail->dirty = s->dirty;
    tail->freed_ms = s->freed_ms;
    s->pages = pages;
    return tail;
}

/* --- allocation ------------------------------------------------------------- */

/* A free run of exactly `pages` pages starting on a multiple of
 * align_pages, out of the bins; NULL when none can be had. */
static span *take_run(size_t pages, size_t align_pages)
{
    size_t need = pages + (align_pages > 1u ? align_pages - 1u : 0u);
    if (need < pages)
        return NULL;
    span *s = find_free(need);
    if (s == NULL && grow(need) != NULL)
        s = find_free(need);
    if (s == NULL)
        return NULL;
    remove_free(s);
    size_t lead = align_pages > 1u
                      ? (align_pages - ((s->start >> PAGE_SHIFT) % align_pages)) % align_pages
                      : 0u;
    if (lead != 0) { /* [ lead: back to the bins ][ s ... ] */
        span *t = cut(s, lead);
        insert_free(s);
        if (t == NULL)
            return NULL;
        s = t;
    }
    if (s->pages > pages) { /* [ s ][ tail: back to the bins ] */
        span *t = cut(s, pages);
        if (t == NULL) {
            insert_free(s);
            return NULL;
        }
        insert_free(t);
    }
    return s;
}

span *rtmm_heap_alloc(size_t pages, size_t align_pages, unsigned state, unsigned cls)
{
    lock_take(&H.lock);
    purge_expired(heap_now());
    span *s = take_run(pages, align_pages);
    if (s != NULL) {
        s->zeroed = (uint8_t)!s->dirty;
        s->dirty = 0;
        s->state = (uint8_t)state;
        s->cls = (uint16_t)cls;
        if (state == SPAN_SMALL)
            H.small_pages += s->pages;
        else
            H.large_pages += s->pages;
        rtmm_pm_set_all(s, s, cls);
    }
    lock_give(&H.lock);
    if (s == NULL)
        errno = ENOMEM;
    return s;
}

/* --- free ------------------------------------------------------------------- */

/* The free run ending just before (before = 1) or starting just after s,
 * if it is free and as dirty as s. Page-map entries of pages inside a free
 * run may be stale, so the run's extent is checked too. */
static span *free_neighbour(uintptr_t page_addr, int before, const span *s)
{
    span *n = pm_span(page_addr);
    if (n == NULL || n->state != SPAN_FREE || n->dirty != s->dirty)
        return NULL;
    if (before ? span_end(n) != s->start : n->start != span_end(s))
        return NULL;
    return n;
}

/* Merges free run s (out of the bins) with its neighbours of the same
 * dirtiness and puts the result in the bins. Dirty runs do not merge with
 * purged ones, so that "purged" stays exact and RSS estimates honest (as
 * tcmalloc keeps "normal" and "returned" runs apart). */
static span *coalesce(span *s)
{
    uint64_t freed = s->freed_ms; /* the merged run's clock: the newest */
    span *l = free_neighbour(s->start - PAGE_BYTES, 1, s);
    if (l != NULL) {
        remove_free(l);
        l->pages += s->pages;
        rtmm_span_delete(s);
        s = l;
    }
    span *r = free_neighbour(span_end(s), 0, s);
    if (r != NULL) {
        remove_free(r);
        s->pages += r->pages;
        rtmm_span_delete(r);
    }
    s->freed_ms = freed;
    insert_free(s);
    return s;
}

void rtmm_heap_free(span *s)
{
    uint64_t now = heap_now();
    lock_take(&H.lock);
    if (s->state == SPAN_SMALL)
        H.small_pages -= s->pages;
    else
        H.large_pages -= s->pages;
    rtmm_pm_set_all(s, NULL, 0);
    s->state = SPAN_FREE;
    s->dirty = 1;
    s->freed_ms = now; /* a merged run restarts its clock */
    s = coalesce(s);
    if (rtmm_opt.decay_ms == 0 && !rtmm_rt_mode)
        purge_span(s);
    else
        purge_expired(now);
    purge_over_cap();
    lock_give(&H.lock);
}

/* --- resizing in place (realloc of large blocks) ----------------------------- */

/* Shrinks large span s to `pages`: the tail becomes a dirty free run. */
static int shrink_run(span *s, size_t pages, uint64_t now)
{
    span *t = rtmm_span_new();
    if (t == NULL)
        return -1;
    t->start = s->start + (pages << PAGE_SHIFT);
    t->pages = s->pages - pages;
    rtmm_pm_set_all(t, NULL, 0);
    s->pages = pages;
    H.large_pages -= t->pages;
    t->state = SPAN_FREE;
    t->dirty = 1;
    t->freed_ms = now;
    coalesce(t);
    purge_over_cap();
    return 0;
}

/* The free run starting at address a, or NULL. */
static span *free_run_at(uintptr_t a)
{
    span *n = pm_span(a);
    return n != NULL && n->state == SPAN_FREE && n->start == a ? n : NULL;
}

/* Grows large span s to `pages` with the free runs right after it (a dirty
 * and a purged run may follow each other; at most GROW_RUNS are looked at):
 *
 *   [ s ][ free ][ free ....... ]  =>  [ s ................ ][ rest ]
 */
#define GROW_RUNS 4u
static int grow_run(span *s, size_t pages)
{
    size_t have = s->pages;
    uintptr_t a = span_end(s);
    for (unsigned k = 0; k < GROW_RUNS && have < pages; k++) {
        span *n = free_run_at(a);
        if (n == NULL)
            return -1;
        have += n->pages;
        a = span_end(n);
    }
    if (have < pages)
        return -1;
    while (s->pages < pages) {
        span *n = free_run_at(span_end(s));
        remove_free(n);
        if (n->pages > pages - s->pages) {
            span *rest = cut(n, pages - s->pages);
            if (rest == NULL) {
                insert_free(n);
                break;
            }
            insert_free(rest);
        }
        s->pages += n->pages;
        H.large_pages += n->pages;
        rtmm_span_delete(n);
    }
    s->zeroed = 0;
    rtmm_pm_set_all(s, s, 0);
    return s->pages == pages ? 0 : -1; /* no span record: s grew part way */
}

int rtmm_heap_resize(span *s, size_t pages)
{
    if (pages == s->pages)
        return 0;
    uint64_t now = heap_now();
    lock_take(&H.lock);
    int rc = pages < s->pages ? shrink_run(s, pages, now) : grow_run(s, pages);
    lock_give(&H.lock);
    return rc;
}

size_t rtmm_heap_purge(int force)
{
    if (rtmm_rt_mode)
        return 0;
    size_t before;
    lock_take(&H.lock);
    before = H.dirty_pages;
    if (force) {
        while (H.dhead)
            purge_span(H.dhead);
    } else {
        purge_expired(rtm_os_now_ms());
    }
    size_t purged = (before - H.dirty_pages) << PAGE_SHIFT;
    lock_give(&H.lock);
    return purged;
}

/* --- huge requests ------------------------------------------------------------ */

/* A fresh mapping of size bytes at an align boundary (align >= PAGE_BYTES,
 * the page map's unit): mmap's own address when it is aligned already. */
static char *map_huge(size_t size, size_t align)
{
    char *p = rtm_os_map(size);
    if (p != NULL && ((uintptr_t)p & (align - 1u)) != 0) {
        rtm_os_unmap(p, size);
        p = rtm_os_map_aligned(size, align);
    }
    return p;
}

span *rtmm_huge_alloc(size_t bytes, size_t align)
{
    size_t size = (bytes + PAGE_BYTES - 1u) & ~(PAGE_BYTES - 1u);
    if (size < bytes) {
        errno = ENOMEM;
        return NULL;
    }
    char *p = map_huge(size, align < PAGE_BYTES ? PAGE_BYTES : align);
    if (p == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    span *s = rtmm_span_new();
    lock_take(&H.lock);
    if (s == NULL || rtmm_pm_ensure((uintptr_t)p, size >> PAGE_SHIFT) != 0) {
        lock_give(&H.lock);
        if (s)
            rtmm_span_delete(s);
        rtm_os_unmap(p, size);
        errno = ENOMEM;
        return NULL;
    }
    s->start = (uintptr_t)p;
    s->pages = size >> PAGE_SHIFT;
    s->state = SPAN_HUGE;
    s->zeroed = 1;
    rtmm_pm_set_all(s, s, 0);
    H.huge_bytes += size;
    H.mapped += size;
    lock_give(&H.lock);
    return s;
}

/* The page map forgets huge span s, before its pages move: once mremap has
 * unmapped an address range, another thread may map it and register it. */
static void huge_forget(span *s)
{
    lock_take(&H.lock);
    rtmm_pm_set_all(s, NULL, 0);
    lock_give(&H.lock);
}

/* Huge span s now covers `pages` pages at start (the page map's entries
 * there ensured by the caller, or its old range when nothing moved). */
static void huge_place(span *s, uintptr_t start, size_t pages)
{
    lock_take(&H.lock);
    size_t before = s->pages << PAGE_SHIFT, after = pages << PAGE_SHIFT;
    s->start = start;
    s->pages = pages;
    rtmm_pm_set_all(s, s, 0);
    H.huge_bytes = H.huge_bytes - before + after;
    H.mapped = H.mapped - before + after;
    lock_give(&H.lock);
}

/* 0 when the page map has entries for `pages` pages at start. */
static int pm_ready(uintptr_t start, size_t pages)
{
    lock_take(&H.lock);
    int rc = rtmm_pm_ensure(start, pages);
    lock_give(&H.lock);
    return rc;
}

/* Moves the pages of mapping old (old_bytes) onto a new mapping of
 * new_bytes whose page map entries are ready. Its address, or NULL with the
 * old mapping unchanged. */
static void *huge_move(void *old, size_t old_bytes, size_t new_bytes)
{
    char *to = map_huge(new_bytes, PAGE_BYTES);
    if (to == NULL)
        return NULL;
    if (pm_ready((uintptr_t)to, new_bytes >> PAGE_SHIFT) != 0 ||
        rtm_os_remap(old, old_bytes, new_bytes, to) == NULL) {
        rtm_os_unmap(to, new_bytes);
        return NULL;
    }
    return to;
}

void *rtmm_huge_resize(span *s, size_t bytes)
{
    size_t size = (bytes + PAGE_BYTES - 1u) & ~(PAGE_BYTES - 1u);
    if (size < bytes)
        return NULL;
    size_t old_pages = s->pages, pages = size >> PAGE_SHIFT;
    void *old = (void *)s->start;
    if (pages == old_pages)
        return old;
    if (pages > old_pages && pm_ready(s->start, pages) != 0)
        return NULL;
    huge_forget(s);
    /* Shrinks, or grows into free address space right after the block. */
    void *at = rtm_os_remap(old, old_pages << PAGE_SHIFT, size, NULL);
    if (at == NULL && pages > old_pages)
        at = huge_move(old, old_pages << PAGE_SHIFT, size);
    huge_place(s, (uintptr_t)(at != NULL ? at : old), at != NULL ? pages : old_pages);
    return at;
}

void rtmm_huge_free(span *s)
{
    size_t size = s->pages << PAGE_SHIFT;
    lock_take(&H.lock);
    rtmm_pm_set_all(s, NULL, 0);
    H.huge_bytes -= size;
    H.mapped -= size;
    lock_give(&H.lock);
    rtm_os_unmap((void *)s->start, size);
    rtmm_span_delete(s);
}

/* --- real-time arena ------------------------------------------------------------ */

int rtmm_heap_arena(size_t bytes)
{
    size_t pages = bytes >> PAGE_SHIFT;
    size_t size = pages << PAGE_SHIFT;
    void *p = rtm_os_map_aligned(size, PAGE_BYTES);
    if (p == NULL)
        return -1;
    int locked = rtm_os_prefault_lock(p, size) == 0;
    span *s = rtmm_span_new();
    lock_take(&H.lock);
    if (s == NULL || rtmm_pm_ensure((uintptr_t)p, pages) != 0) {
        lock_give(&H.lock);
        return -1;
    }
    rtmm_pm_prefault((uintptr_t)p, pages);
    H.mapped += size;
    H.arena_bytes = size;
    H.arena_locked = locked;
    s->start = (uintptr_t)p;
    s->pages = pages;
    s->dirty = 1; /* resident (pre-faulted); never purged in RT mode */
    insert_free(s);
    lock_give(&H.lock);
    return 0;
}

/* --- statistics, check, fork ----------------------------------------------------- */

heap_totals rtmm_heap_totals(void)
{
    heap_totals t;
    lock_take(&H.lock);
    t.mapped = H.mapped;
    t.free_pages = H.free_pages;
    t.dirty_pages = H.dirty_pages;
    t.small_pages = H.small_pages;
    t.large_pages = H.large_pages;
    t.huge_bytes = H.huge_bytes;
    t.purges = H.purges;
    t.arena_bytes = H.arena_bytes;
    t.arena_exhausted = H.arena_exhausted;
    t.arena_locked = H.arena_locked;
    lock_give(&H.lock);
    return t;
}

static int check_bins(size_t *free_pages, size_t *dirty_pages)
{
    for (unsigned b = 0; b < NBINS; b++) {
        int bit = (H.nonempty[b / 64u] >> (b % 64u)) & 1u;
        if (bit != (H.bins[b] != NULL))
            return -1;
        for (span *s = H.bins[b]; s; s = s->next) {
            if (s->state != SPAN_FREE || bin_of(s->pages) != b || (s->next && s->next->prev != s))
                return -1;
            if (pm_span(s->start) != s || pm_span(span_end(s) - PAGE_BYTES) != s)
                return -1;
            if (free_neighbour(s->start - PAGE_BYTES, 1, s) || free_neighbour(span_end(s), 0, s))
                return -1; /* two adjacent free runs: a merge was missed */
            *free_pages += s->pages;
            *dirty_pages += s->dirty ? s->pages : 0u;
        }
    }
    return 0;
}

int rtmm_heap_check(void)
{
    lock_take(&H.lock);
    size_t free_pages = 0, dirty_pages = 0;
    int rc = check_bins(&free_pages, &dirty_pages);
    if (free_pages != H.free_pages || dirty_pages != H.dirty_pages)
        rc = -1;
    uint64_t last = 0;
    for (span *s = H.dhead; s && rc == 0; s = s->dnext) {
        if (!s->dirty || s->state != SPAN_FREE || s->freed_ms < last)
            rc = -1;
        last = s->freed_ms;
    }
    lock_give(&H.lock);
    return rc;
}

void rtmm_heap_fork_lock(int take)
{
    if (take > 0)
        lock_take(&H.lock);
    else if (take == 0)
        lock_give(&H.lock);
    else
        lock_reset(&H.lock);
}
