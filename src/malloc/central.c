// SPDX-License-Identifier: MIT
/*
 * malloc/central.c -- the central lists: for each size class, a transfer
 * cache (an array of free blocks, filled and emptied a batch at a time by
 * the thread caches) in front of the class's spans.
 *
 *   thread caches  --flush batch-->  [ transfer cache: xfer[0..xcount) ]
 *                  <--fetch batch--         |  overflow / underflow
 *                                           v
 *                                   partial spans (bitmap of free blocks)
 *                                           |  a span with every block free
 *                                           v
 *                                      page heap
 *
 * Why a transfer cache: moving a batch is one memcpy of pointers under the
 * lock; this is what makes a cross-thread free cheap (a consumer thread's
 * flush is picked up by the producer's next refill without either touching
 * a span). Only when the transfer cache is full (or empty) do blocks go
 * back to (or come from) spans, where each costs a page-map lookup and a
 * bitmap bit. A span whose blocks are all back goes to the page heap at
 * once, so memory freed by any thread can reach the OS.
 *
 * A block is never written to by the allocator: spans track free blocks in
 * a bitmap (internal.h), so handing out and taking back costs no cache miss
 * on user memory.
 *
 * False sharing: a span hands out only whole cache-line groups (internal.h,
 * class_info.group): a freed block whose line neighbours are still out
 * waits in the bitmap until they are back too. Without this, one block
 * returned between two live ones went to the next thread that refilled,
 * and two threads wrote one line (tests/malloc/test_malloc_lines.c). The
 * one exception: a thread without a cache asking for a single block when
 * nothing else is left takes one block of a group. A span also records
 * which thread cache last took blocks out of it (its owner tag, in the
 * page map): a thread that frees a block of a span it does not own sends
 * it back here instead of reusing it (tcache.c, "False sharing"), and
 * straight to its span (rtmm_central_return), not to the transfer cache,
 * which would hand it to any thread while its line neighbours are out.
 *
 * Blocks that sat in a transfer cache through a whole decay period (its
 * low-water mark) are moved back to their spans by rtmm_central_drain(), so
 * that idle memory can reach the page heap and then the OS.
 *
 * Locks: one per class; the heap lock is taken inside it.
 */
#include <string.h>

#include "malloc/internal.h"

typedef struct central {
    rtmm_lock lock;
    uint32_t xcount, xlow;
    void **xfer;
    span *partial; /* spans with free blocks in their bitmap */
    size_t spans;  /* small spans of this class              */
    size_t out;    /* blocks out of the bitmaps (in caches or in use) */
} __attribute__((aligned(64))) central;

static central C[NCLASS];

int rtmm_central_init(void)
{
    for (unsigned c = 1; c < rtmm_nclass; c++) {
        C[c].xfer = rtmm_meta_alloc(rtmm_class[c].xcap * sizeof(void *));
        if (C[c].xfer == NULL)
            return -1;
    }
    return 0;
}

/* --- spans --------------------------------------------------------------- */

static void partial_link(central *c, span *s)
{
    s->prev = NULL;
    s->next = c->partial;
    if (s->next)
        s->next->prev = s;
    c->partial = s;
    s->partial = 1;
}

static void partial_unlink(central *c, span *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->partial = 0;
}

/* The group-leading bits of the whole free groups of bitmap word m: a
 * group of g bits (g = 1, 2, 4; never across words) is whole when every
 * bit is set. */
static uint64_t whole_groups(uint64_t m, uint32_t g)
{
    if (g >= 2u)
        m &= m >> 1;
    if (g == 4u)
        m &= m >> 2;
    return g == 1u ? m : g == 2u ? m & 0x5555555555555555u : m & 0x1111111111111111u;
}

static uint32_t count_whole(const span *s, uint32_t g)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < SPAN_WORDS; w++)
        n += (uint32_t)__builtin_popcountll(whole_groups(s->bits[w], g));
    return n;
}

static span *new_span(central *c, unsigned cls)
{
    const class_info *ci = &rtmm_class[cls];
    span *s = rtmm_heap_alloc(ci->pages, 1, SPAN_SMALL, cls);
    if (s == NULL)
        return NULL;
    s->nobj = ci->nobj;
    s->nfree = ci->nobj;
    s->gfree = ci->nobj / ci->group;
    s->hint = 0;
    s->owner = 0; /* rtmm_heap_alloc set the page map's tags to 0 */
    for (uint32_t w = 0; w < SPAN_WORDS; w++) {
        uint32_t lo = w * 64u;
        s->bits[w] = ci->nobj >= lo + 64u ? ~(uint64_t)0
                     : ci->nobj > lo      ? ((uint64_t)1 << (ci->nobj - lo)) - 1u
                                          : 0u;
    }
    c->spans++;
    partial_link(c, s);
    return s;
}

/* Writes the addresses of the blocks of bitmap word w's bits `take`. */
static uint32_t take_bits(const span *s, uint32_t w, uint64_t take, size_t size, void **out)
{
    uint32_t got = 0;
    for (; take; take &= take - 1u)
        out[got++] = (void *)(s->start + ((size_t)w * 64u + rtm_ctz64(take)) * size);
    return got;
}

/* Takes up to n free blocks out of span s's bitmap in whole groups, lowest
 * first; when n is below one group (a cache-less thread's single block),
 * n blocks of the first whole group. Never 0 for a span on the partial
 * list (it has a whole group). */
static uint32_t take_from_span(central *c, span *s, const class_info *ci, void **out, uint32_t n)
{
    uint32_t g = ci->group, got = 0;
    uint64_t gmask = ((uint64_t)1 << g) - 1u;
    for (uint32_t w = s->hint; w < SPAN_WORDS && got < n; w++) {
        uint64_t m = s->bits[w], whole = whole_groups(m, g), take = 0;
        uint32_t before = (uint32_t)__builtin_popcountll(whole), k = 0;
        for (; whole && n - got - k >= g; whole &= whole - 1u, k += g)
            take |= gmask << rtm_ctz64(whole);
        if (take == 0 && whole && got == 0) { /* n < g: part of one group */
            take = (((uint64_t)1 << n) - 1u) << rtm_ctz64(whole);
            k = n;
        }
        if (take == 0)
            continue;
        s->bits[w] = m & ~take;
        s->gfree -= before - (uint32_t)__builtin_popcountll(whole_groups(s->bits[w], g));
        got += take_bits(s, w, take, ci->size, out + got);
    }
    while (s->hint < SPAN_WORDS && s->bits[s->hint] == 0)
        s->hint++;
    s->nfree -= got;
    c->out += got;
    if (s->gfree == 0)
        partial_unlink(c, s);
    return got;
}

/* Puts one block back in its span's bitmap; a span with every block back
 * goes to the page heap. Misuse found here (a pointer that is not a block
 * of this class, a block already free) is counted and ignored. */
static void return_to_span(central *c, unsigned cls, void *p)
{
    span *s = pm_span((uintptr_t)p);
    size_t size = rtmm_class[cls].size;
    size_t off = s ? (uintptr_t)p - s->start : 0u;
    size_t idx = off / size;
    if (RTM_UNLIKELY(s == NULL || s->state != SPAN_SMALL || s->cls != cls || off % size != 0 ||
                     idx >= s->nobj || (s->bits[idx / 64u] >> (idx % 64u) & 1u))) {
        atomic_fetch_add_explicit(&rtmm_foreign_frees, 1, memory_order_relaxed);
        return;
    }
    uint32_t g = rtmm_class[cls].group;
    uint64_t *word = &s->bits[idx / 64u];
    *word |= (uint64_t)1 << (idx % 64u);
    if (idx / 64u < s->hint)
        s->hint = (uint32_t)(idx / 64u);
    c->out--;
    s->nfree++;
    /* g is 1, 2 or 4: a mask, not a division (g is not a constant here). */
    uint64_t gbits = ((uint64_t)1 << g) - 1u, at = (idx % 64u) & ~(uint64_t)(g - 1u);
    if ((*word >> at & gbits) == gbits && ++s->gfree == 1) /* a group is whole again */
        partial_link(c, s);
    if (s->nfree == s->nobj) {
        partial_unlink(c, s);
        c->spans--;
        rtmm_heap_free(s);
    }
}

/* --- the two operations ------------------------------------------------------- */

uint32_t rtmm_central_fetch(unsigned cls, void **out, uint32_t n, unsigned tag)
{
    central *c = &C[cls];
    const class_info *ci = &rtmm_class[cls];
    lock_take(&c->lock);
    uint32_t k = c->xcount < n ? c->xcount : n;
    c->xcount -= k;
    memcpy(out, c->xfer + c->xcount, k * sizeof(void *));
    if (c->xcount < c->xlow)
        c->xlow = c->xcount;
    /* From spans: whole groups only, so a remainder below one group is
     * left (the caller gets fewer than n), unless nothing came yet. */
    while (k < n && (k == 0 || n - k >= ci->group)) {
        span *s = c->partial ? c->partial : new_span(c, cls);
        if (s == NULL)
            break;
        if (tag != 0 && s->owner != tag) /* owner changes: tcache.c */
            rtmm_pm_set_owner(s, tag);
        uint32_t got = take_from_span(c, s, ci, out + k, n - k);
        if (got == 0)
            break;
        k += got;
    }
    lock_give(&c->lock);
    return k;
}

void rtmm_central_release(unsigned cls, void *const *blocks, uint32_t n)
{
    central *c = &C[cls];
    lock_take(&c->lock);
    uint32_t room = rtmm_class[cls].xcap - c->xcount;
    uint32_t k = n < room ? n : room;
    memcpy(c->xfer + c->xcount, blocks, k * sizeof(void *));
    c->xcount += k;
    for (uint32_t i = k; i < n; i++)
        return_to_span(c, cls, blocks[i]);
    lock_give(&c->lock);
}

void rtmm_central_return(unsigned cls, void *const *blocks, uint32_t n)
{
    central *c = &C[cls];
    lock_take(&c->lock);
    for (uint32_t i = 0; i < n; i++)
        return_to_span(c, cls, blocks[i]);
    lock_give(&c->lock);
}

void rtmm_central_drain(int force)
{
    for (unsigned cls = 1; cls < rtmm_nclass; cls++) {
        central *c = &C[cls];
        lock_take(&c->lock);
        uint32_t n = force ? c->xcount : c->xlow;
        for (uint32_t i = 0; i < n; i++) /* the bottom: the longest unused */
            return_to_span(c, cls, c->xfer[i]);
        memmove(c->xfer, c->xfer + n, (c->xcount - n) * sizeof(void *));
        c->xcount -= n;
        c->xlow = c->xcount;
        lock_give(&c->lock);
    }
}

/* --- statistics, check, fork ------------------------------------------------------ */

void rtmm_central_totals(size_t *span_bytes, size_t *out_bytes, size_t *xfer_bytes)
{
    *span_bytes = *out_bytes = *xfer_bytes = 0;
    for (unsigned cls = 1; cls < rtmm_nclass; cls++) {
        central *c = &C[cls];
        lock_take(&c->lock);
        *span_bytes += c->spans * rtmm_class[cls].pages * PAGE_BYTES;
        *out_bytes += c->out * rtmm_class[cls].size;
        *xfer_bytes += (size_t)c->xcount * rtmm_class[cls].size;
        lock_give(&c->lock);
    }
}

static int popcount_span(const span *s)
{
    int n = 0;
    for (uint32_t w = 0; w < SPAN_WORDS; w++)
        n += __builtin_popcountll(s->bits[w]);
    return n;
}

int rtmm_central_block_ok(unsigned cls, const void *p)
{
    span *s = pm_span((uintptr_t)p);
    size_t size = rtmm_class[cls].size;
    if (s == NULL || s->state != SPAN_SMALL || s->cls != cls)
        return 0;
    size_t off = (uintptr_t)p - s->start, idx = off / size;
    return off % size == 0 && idx < s->nobj && !(s->bits[idx / 64u] >> (idx % 64u) & 1u);
}

static int check_class(unsigned cls)
{
    central *c = &C[cls];
    size_t n = 0, free_blocks = 0;
    for (span *s = c->partial; s; s = s->next, n++) {
        if (s->state != SPAN_SMALL || s->cls != cls || !s->partial || s->gfree == 0 ||
            s->nfree > s->nobj || popcount_span(s) != (int)s->nfree ||
            count_whole(s, rtmm_class[cls].group) != s->gfree)
            return -1;
        for (uint32_t w = 0; w < s->hint && w < SPAN_WORDS; w++)
            if (s->bits[w])
                return -1;
        free_blocks += s->nfree;
    }
    if (n > c->spans || c->xcount > rtmm_class[cls].xcap)
        return -1;
    if (c->out + free_blocks > c->spans * rtmm_class[cls].nobj)
        return -1;
    for (uint32_t i = 0; i < c->xcount; i++)
        if (!rtmm_central_block_ok(cls, c->xfer[i]))
            return -1;
    return 0;
}

int rtmm_central_check(void)
{
    for (unsigned cls = 1; cls < rtmm_nclass; cls++) {
        lock_take(&C[cls].lock);
        int rc = check_class(cls);
        lock_give(&C[cls].lock);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void rtmm_central_fork_lock(int take)
{
    for (unsigned cls = 1; cls < NCLASS; cls++) {
        if (take > 0)
            lock_take(&C[cls].lock);
        else if (take == 0)
            lock_give(&C[cls].lock);
        else
            lock_reset(&C[cls].lock);
    }
}
