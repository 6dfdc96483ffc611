// SPDX-License-Identifier: MIT
/*
 * heaps/halffit.c -- rtmem's half-fit heap: blocks of any number of 32-byte
 * units in address order, one free list per class floor(log2 units), a
 * bitmap of non-empty lists; an alloc does at most one split, a free at
 * most two merges (with its address-order neighbours). No loop on either
 * path. Contracts: include/rtmem/halffit.h. Checker: heaps/halffit_check.c.
 *
 *   region: [ control | arena ................................... |END]
 *            rtm_halffit  ^ base (16-aligned): offsets o count from here
 *
 *   a block of u units (u * 32 bytes, header included):
 *
 *     used: [ u | prev u | USED | r ][ payload ........................ ]
 *     free: [ u | prev u | FREE | - ][ prev ][ next ][ stale bytes ..... ]
 *             16 bytes                 list links: offsets from the control
 *
 *   "prev u" is the size of the block just below (0 for the first), so a
 *   free finds its left neighbour without a footer; the block above is at
 *   o + u. END is a one-unit sentinel header after the last block: every
 *   block has a block above, so neither path tests for the arena's end.
 *
 *   alloc of order r (2^r units) from the smallest non-empty class s >= r
 *   (one bit scan), taking the list's head F of S units:
 *     s > r:  [ ------ F: S ------ ] => [ 2^r: used ][ S - 2^r: free ]
 *             the rest has S - 2^r >= 2^s - 2^r >= 2^r units: class >= r
 *     s == r: the whole F (2^r <= S < 2^(r+1)) is handed out, no split:
 *             the rest would be below 2^r units, of a class below r.
 *   free: [ FREE ][ freed ][ FREE ] => [ --------- FREE --------- ]
 *         with the left and/or the right neighbour when it is free.
 *
 * Invariants (rtm_halffit_check() verifies each one):
 *  1. Blocks tile the arena, each 1 <= u units; every header's prev_units
 *     is the size of the block below (0 for the first), the sentinel's
 *     included.
 *  2. Free blocks are exactly the members of the lists; list c holds only
 *     blocks of 2^c <= u < 2^(c+1) units; bit c of the bitmap is set iff
 *     list c is non-empty.
 *  3. No two free blocks are neighbours (merging is eager).
 *  4. A live block of order r holds 2^r <= u < 2^(r+1) units, and exactly
 *     2^r unless it was a whole class-r fragment.
 *  5. Counters equal what a walk finds.
 *
 * Time: alloc is one bit scan, one list pop and at most one push; free is
 * at most two list removals and one push. Constant, without a loop.
 *
 * THE BOUND. Units: u = MIN_BLOCK. A request of n bytes has the order r
 * with 2^r u = rtm_halffit_block_size(n); it takes a block that HOLDS
 * H units, 2^r <= H < 2^(r+1) (invariant 4), so H < 2 * 2^r. Let L be the
 * largest order requested and M a bound on the live rounded units (the sum
 * of 2^r over live blocks, never above M, the block being granted
 * included), and A the arena in units. Then held live units never exceed
 * M_h = 2M. Claim: if A >= 2 (L + 1) M, no request fails.
 *
 *   Every block, free or live, has a class: floor(log2 units); a live
 *   block of order r has class r (invariant 4). Let F_i be the units in
 *   free blocks of class i, P_i the units held by live blocks of class i,
 *   and Psi_j = sum over i <= j of (F_i + P_i). Invariant, for all j >= 0:
 *
 *       Psi_j <= (j + 1) M_h + 2^(j+2) - 2.
 *
 *   At create: one free block of A units, class c = floor(log2 A):
 *   Psi_j = 0 for j < c, and A < 2^(c+1) <= 2^(j+1) for j >= c.
 *   - free (with or without merges): units move from a live block of class
 *     r to a free block of class >= r; merging only moves units to a class
 *     at least as high. No Psi_j grows.
 *   - alloc of order r from a block F of S units and class s (smallest
 *     fit: F_i = 0 for r <= i < s before).
 *     s == r: F becomes live, of class r: nothing changes.
 *     s > r: F becomes a live block of 2^r units (class r) and a free rest
 *     of R = S - 2^r units, class t with r <= t <= s. Psi_j is unchanged
 *     for j < r (nothing of class <= j changed) and for j >= s (the units
 *     stay at class <= s <= j). For r <= j < s, afterwards
 *       Psi_j = P_{<=j} + F_{<r} + [t <= j] R,
 *     where [t <= j] R <= 2^(j+1) - 1, and F_{<r} = Psi_{r-1} - P_{<r}
 *     <= r M_h + 2^(r+1) - 2 - P_{<r} for r >= 1 (F_{<0} = 0), so with
 *     P_{<=j} - P_{<r} <= M_h (all live units) and 2^(r+1) <= 2^(j+1):
 *       Psi_j <= (r + 1) M_h + 2^(j+1) - 2 + 2^(j+1) - 1
 *            <= (j + 1) M_h + 2^(j+2) - 3.
 *   A request of order k <= L, allowed (live rounded + 2^k <= M), fails
 *   only if no free block has class >= k. Then every unit is held by a
 *   live block of class >= k or lies in a block of class < k. The live
 *   blocks held < 2 (M - 2^k) units before the request, so
 *       A <= 2 (M - 2^k) + k M_h + 2^(k+1) - 2 = 2 (k + 1) M - 2
 *   (k >= 1; for k = 0, A <= 2M - 2), contradicting A >= 2 (L + 1) M.
 *   QED. Notes:
 *   - Merging is not used: the bound holds for the split policy alone. It
 *     needs smallest fit (the bit scan from the request's order up) and
 *     that a split's rest is of class >= r, which is why a class-r block
 *     is handed out whole: o1heap splits it too, filing the rest below r,
 *     and then Psi_j for j < r grows on allocations of order r; we know no
 *     proof of a log bound for that policy.
 *   - The price: a whole class-r block holds up to 2^(r+1) - 1 units for a
 *     request of 2^r, so the bound is twice the binary buddy's
 *     (L + 1) M. rtm_halffit_arena_size() returns
 *     15 + control + (2 (L + 1) M + 1) u bytes (the +1: the sentinel).
 *   - In requested bytes: 2^r u <= max(2 (n + header), u).
 *   - Realloc in place keeps the whole old block (counted as live at its
 *     old order); a moving realloc is an alloc then a free and holds both
 *     blocks for a moment: the caller's M must allow that. An aligned
 *     alloc of n bytes at alignment a > 16 is a request of n + a - 16.
 *
 * Freestanding: no libc (__builtin_memcpy only), like heaps/tlsf.c.
 * Not thread-safe; the caller serialises access to one heap.
 */
#include "heaps/halffit_layout.h"
#include "core/kind.h"

/* --- lists ------------------------------------------------------------- */

/* Pushes free block b (header already written) on list c (LIFO): between
 * the sentinel and the first node, which may be the sentinel itself. */
RTM_FAST_INLINE void list_push(rtm_halffit *h, hf_header *b, unsigned c)
{
    ptrdiff_t me = hf_node_link(h, b);
    ptrdiff_t first = h->lists[c].next;
    hf_links *l = (hf_links *)(b + 1);
    /* this order keeps compilers from pairing l's two stores into a vector
     * store (three more instructions on x86-64): first's link may alias */
    l->next = first;
    hf_link_at(h, first)->prev = me;
    l->prev = hf_sentinel(c);
    h->lists[c].next = me;
    h->bitmap |= (uint32_t)1 << c;
}

/* Takes free block b off its circular list; the list is empty afterwards
 * when b's neighbours are one node, the sentinel (the class is needed only
 * then, to clear its bit). */
RTM_FAST_INLINE void unlink_block(rtm_halffit *h, hf_header *b)
{
    hf_links *l = (hf_links *)(b + 1);
    ptrdiff_t prev = l->prev, next = l->next;
    hf_link_at(h, prev)->next = next;
    hf_link_at(h, next)->prev = prev;
    if (prev == next)
        h->bitmap ^= (uint32_t)1 << hf_class(b->units); /* set: the list held b */
}

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_halffit *h, int err)
{
    if (err == RTM_ENOMEM)
        h->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

/* The parameters in rtm_report()'s order, which it passes on unmoved. */
static RTM_COLD hf_header *reject(rtm_error_kind kind, const rtm_halffit *h, const void *ptr,
                                  const char *what)
{
    rtm_report(kind, h, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return NULL;
}

/* The header of the live block that ptr is the payload of (directly, or
 * through a shim in front of an aligned payload), or NULL after reporting
 * why ptr is not one. Integer arithmetic first: a header is read only once
 * its offset is known to be 16-aligned inside the arena. A pointer below
 * the arena wraps d past the arena size, so one compare covers both sides.
 * The header's size is validated against the block above it. */
static RTM_NOINLINE hf_header *find_block(const rtm_halffit *h, const void *ptr)
{
    size_t span = h->arena_units << HF_LOG2U;
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)hf_base(h)) - HF_HDR;
    if (d >= span || (d & (HF_HDR - 1u)) != 0)
        return reject(RTM_ERR_FOREIGN_POINTER, h, ptr, "pointer is not a block of this heap");
    const hf_header *b = hf_block(h, d);
    if (b->state == HF_SHIM) { /* an aligned payload: its block is below */
        size_t back = b->units;
        if (back > d || ((d - back) & (HF_UNIT - 1u)) != 0)
            return reject(RTM_ERR_FOREIGN_POINTER, h, ptr, "aligned payload's shim damaged");
        d -= back;
        b = hf_block(h, d);
        if (b->state == HF_USED && back != hf_live_shift(b))
            return reject(RTM_ERR_FOREIGN_POINTER, h, ptr, "not the block's aligned payload");
    }
    if ((d & (HF_UNIT - 1u)) != 0)
        return reject(RTM_ERR_FOREIGN_POINTER, h, ptr, "pointer is not a block start");
    if (b->state != HF_USED) {
        if (b->state == HF_FREE)
            return reject(RTM_ERR_DOUBLE_FREE, h, ptr, "block is free (freed twice?)");
        return reject(RTM_ERR_FOREIGN_POINTER, h, ptr, "header is not a used block's");
    }
    size_t u = b->units;
    if (u == 0 || u > h->arena_units - (d >> HF_LOG2U) ||
        hf_block(h, d + (u << HF_LOG2U))->prev_units != u || b->prev_units > (d >> HF_LOG2U))
        return reject(RTM_ERR_CORRUPT_HEADER, h, ptr, "block header damaged");
    return (hf_header *)(uintptr_t)b;
}

/* --- operations -------------------------------------------------------- */

/* Marks the popped block b live for a request of order r and counts it.
 * raw_used is compared with peak_mark as it is (both include the shims). */
RTM_FAST_INLINE void *take(rtm_halffit *h, hf_header *b, unsigned r, uint32_t units)
{
    b->state = HF_USED;
    b->order = r;
    h->live_blocks++;
    size_t used = h->raw_used + ((size_t)units << HF_LOG2U) - HF_HDR;
    h->raw_used = used;
    if (used > h->peak_mark) /* rare: a new peak */
        h->peak_mark = used;
    return b + 1;
}

/* The popped block b is of a class above r: split once, 2^r units kept,
 * the rest (2^s - 2^r >= 2^r units: class >= r) pushed. */
RTM_FAST_INLINE uint32_t cut(rtm_halffit *h, hf_header *b, unsigned r)
{
    uint32_t want = (uint32_t)1 << r;
    uint32_t rest = b->units - want;
    hf_header *rb = (hf_header *)(uintptr_t)((char *)b + ((size_t)want << HF_LOG2U));
    rb->units = rest;
    rb->prev_units = want;
    rb->state = HF_FREE;
    ((hf_header *)(uintptr_t)((char *)rb + ((size_t)rest << HF_LOG2U)))->prev_units = rest;
    list_push(h, rb, hf_class(rest));
    b->units = want;
    h->blocks++;
    return want;
}

#if !RTM_SMALL_CODE
/* The cut and its own copy of take(), out of line and reached by a tail
 * call, so that the hot path, a whole block, keeps its few registers (no
 * callee-saved ones to push and pop). A build for size keeps one take(). */
static RTM_NOINLINE void *split(rtm_halffit *h, hf_header *b, unsigned r)
{
    return take(h, b, r, cut(h, b, r));
}
#endif

/* Hot path: one bit scan finds the smallest non-empty class >= r (smallest
 * fit, which the bound needs) and its head is popped. When the class is r
 * the whole block is handed out (the common case once a heap has churned);
 * above r, cut() splits it. No branch depends on the heap's state but that
 * one: whether the popped list is now empty is a flag shifted into the
 * bitmap's xor, not a branch (it was the loop's one mispredicted branch
 * per pair, scripts/count_loop.sh). */
RTM_INLINE void *halffit_alloc(rtm_halffit *h, size_t size)
{
    /* The order without a range test of its own: r is at most the word's
     * bits - 5, no bit above HF_MAX_ORDER is ever set, so a size above
     * HF_MAX_SIZE finds fit == 0 like a full heap. Only the add that
     * would wrap is tested. */
    size_t need;
    if (RTM_UNLIKELY(__builtin_add_overflow(size, HF_HDR - 1u, &need)))
        return refuse(h, RTM_ENOMEM);
    unsigned r = rtm_fls_size(need | (HF_UNIT - 1u)) + 1u - HF_LOG2U;
    uint32_t bitmap = h->bitmap;
    size_t fit = (size_t)bitmap >> r;
    if (RTM_UNLIKELY(fit == 0))
        return refuse(h, RTM_ENOMEM);
    unsigned s = r + rtm_ctz32((uint32_t)fit);
    hf_header *b = hf_node(h, h->lists[s].next);
#if RTM_SMALL_CODE
    /* a build for size: the general unlink, and one copy of take() */
    unlink_block(h, b);
    if (s != r)
        (void)cut(h, b, r);
#else
    /* pop the first node of list s; its bit goes when the list is empty */
    ptrdiff_t next = ((hf_links *)(b + 1))->next;
    h->lists[s].next = next;
    hf_link_at(h, next)->prev = hf_sentinel(s);
    h->bitmap = bitmap ^ (hf_is_sentinel(next) << s);
    if (s != r)
        return split(h, b, r);
#endif
    return take(h, b, r, b->units);
}
void *rtm_halffit_alloc(rtm_halffit *h, size_t size) { return halffit_alloc(h, size); }

/* Over-alignment: a request of size + alignment - 16 bytes, the payload
 * moved up to the first aligned address, and a shim header right before it
 * saying how far back the block's header is. */
void *rtm_halffit_aligned_alloc(rtm_halffit *h, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(h, RTM_EINVAL);
    if (alignment > RTM_HALFFIT_MAX_ALIGN)
        return refuse(h, RTM_ENOTSUP);
    if (alignment <= HF_HDR)
        return rtm_halffit_alloc(h, size);
    if (size > SIZE_MAX - alignment)
        return refuse(h, RTM_ENOMEM);
    if (size == 0)
        size = 1; /* an aligned payload never sits at its block's end */
    size_t peak = hf_peak_used(h);
    char *p = rtm_halffit_alloc(h, size + alignment - HF_HDR);
    if (p == NULL)
        return NULL;
    uintptr_t a = ((uintptr_t)p + alignment - 1u) & ~(uintptr_t)(alignment - 1u);
    size_t gap = (size_t)(a - (uintptr_t)p);
    /* the alignment, remembered for a moving realloc, and the distance */
    ((hf_header *)(uintptr_t)p - 1)->order |=
        (uint32_t)rtm_fls_size(alignment) << 5 | (uint32_t)(gap >> 4) << 10;
    if (gap != 0) {
        char *q = p + gap;
        hf_header *shim = (hf_header *)(uintptr_t)(q - HF_HDR);
        shim->units = (uint32_t)gap; /* the shim's offset minus the block's */
        shim->prev_units = 0;
        shim->state = HF_SHIM;
        shim->order = 0;
        h->shim_bytes += gap; /* the bytes before q are not the caller's */
        size_t used = hf_used_bytes(h);
        h->peak_mark = (used > peak ? used : peak) + h->shim_bytes;
    }
    return p + gap;
}

/* Frees the live block b (validated): merges it with the free neighbours
 * and files the result. The left neighbour's state is read before b's
 * header changes: for the first block prev_units is 0 and "the block
 * below" is b itself, still USED, so it never merges with itself. b's
 * header is then marked free: when b merges into its left neighbour the
 * header stays inside the merged block, and a second free(b) must find
 * "free" there. An absorbed right neighbour's header says free already. */
RTM_FAST_INLINE void release(rtm_halffit *h, hf_header *b)
{
    uint32_t units = b->units;
    uint32_t pu = b->prev_units;
    hf_header *nb = (hf_header *)(uintptr_t)((char *)b + ((size_t)units << HF_LOG2U));
    hf_header *pb = (hf_header *)(uintptr_t)((char *)b - ((size_t)pu << HF_LOG2U));
    uint32_t left = pb->state;
    h->live_blocks--;
    h->raw_used -= (size_t)((char *)nb - (char *)(b + 1)); /* usable bytes */
    b->state = HF_FREE;
    if (nb->state == HF_FREE) {
        unlink_block(h, nb);
        units += nb->units;
        h->blocks--;
    }
    if (left == HF_FREE) {
        unlink_block(h, pb);
        b = pb;
        units += pb->units; /* pu in a sound heap; kept in no register */
        h->blocks--;
    }
    b->units = units;
    ((hf_header *)(uintptr_t)((char *)b + ((size_t)units << HF_LOG2U)))->prev_units = units;
    list_push(h, b, hf_class(units));
}

/* Frees the live block b (validated), an aligned payload's shim bytes
 * given back to the counters too. */
static void free_live(rtm_halffit *h, hf_header *b)
{
    size_t shift = hf_live_shift(b);
    h->shim_bytes -= shift;
    h->peak_mark -= shift; /* the peak itself is unchanged */
    release(h, b);
}

/* Everything the inline validation of rtm_halffit_free() did not accept:
 * NULL, an aligned payload, or misuse to report (and, in a build for size,
 * every free). Out of line, so that the hot path keeps no register for
 * find_block()'s result. */
static RTM_NOINLINE int free_slow(rtm_halffit *h, void *ptr)
{
    if (ptr == NULL)
        return 0;
    hf_header *b = find_block(h, ptr);
    if (b == NULL)
        return -1;
    free_live(h, b);
    return 0;
}

/* Hot path: the common case validated inline (offset, state, size against
 * the block above, the left size inside the arena), anything else through
 * free_slow(): NULL too, whose offset (the base negated) fails the range
 * test, as create refuses a region that wraps past the address space's
 * end: the offset lies above the arena and the sentinel. */
RTM_INLINE int halffit_free(rtm_halffit *h, void *ptr)
{
#if RTM_SMALL_CODE
    return free_slow(h, ptr); /* a size build keeps only the general path */
#else
    size_t o = (size_t)((uintptr_t)ptr - (uintptr_t)hf_base(h)) - HF_HDR;
    /* the header's unit index, rotated: an offset that is not a unit
     * boundary gets high bits and fails the range test with the rest */
    size_t u = (o >> HF_LOG2U) | (o << (sizeof(size_t) * 8u - HF_LOG2U));
    /* Integer arithmetic: ptr may be NULL here (caught by the range test
     * below), and NULL - 1 as pointers is undefined (UBSan). */
    hf_header *b = (hf_header *)((uintptr_t)ptr - sizeof(hf_header));
    if (RTM_UNLIKELY(
            u >= h->arena_units || b->state != HF_USED ||
            (size_t)b->units - 1u >= h->arena_units - u ||
            ((hf_header *)(uintptr_t)((char *)b + ((size_t)b->units << HF_LOG2U)))->prev_units !=
                b->units ||
            b->prev_units > u)) {
        return free_slow(h, ptr);
    }
    release(h, b);
    return 0;
#endif
}
int rtm_halffit_free(rtm_halffit *h, void *ptr) { return halffit_free(h, ptr); }

/* Bytes from ptr to the end of its block b (validated). */
static size_t usable_from(const hf_header *b, const void *ptr)
{
    const char *end = (const char *)b + ((size_t)b->units << HF_LOG2U);
    return (size_t)(end - (const char *)ptr);
}

void *rtm_halffit_realloc(rtm_halffit *h, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_halffit_alloc(h, size);
    if (size == 0) {
        (void)rtm_halffit_free(h, ptr);
        return NULL;
    }
    hf_header *b = find_block(h, ptr);
    if (b == NULL)
        return NULL;
    size_t have = usable_from(b, ptr);
    if (size <= have)
        return ptr; /* the block already holds it */
    unsigned align = hf_live_align_log2(b);
    void *q = align != 0 ? rtm_halffit_aligned_alloc(h, (size_t)1 << align, size)
                         : rtm_halffit_alloc(h, size);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, have);
    free_live(h, b); /* validated above; the alloc moved no block */
    return q;
}

/* Validated as free() validates (find_block: the offset inside the arena
 * before any header is read), so a pointer that is no live block is
 * reported and gives 0 rather than a size read from foreign memory. */
size_t rtm_halffit_usable_size(const rtm_halffit *h, const void *ptr)
{
    const hf_header *b = ptr == NULL ? NULL : find_block(h, ptr);
    return b == NULL ? 0 : usable_from(b, ptr);
}

rtm_stats rtm_halffit_stats(const rtm_halffit *h)
{
    rtm_stats st;
    st.arena_bytes = h->region_bytes;
    st.used_bytes = hf_used_bytes(h);
    st.free_bytes = hf_free_bytes(h);
    /* alloc grants order r iff a list of class >= r is non-empty */
    st.largest_free = h->bitmap == 0 ? 0 : (HF_UNIT << rtm_fls32(h->bitmap)) - HF_HDR;
    st.live_blocks = h->live_blocks;
    st.peak_used_bytes = hf_peak_used(h);
    st.failed_allocs = h->failed_allocs;
    return st;
}

/* --- creation and sizing ----------------------------------------------- */

size_t rtm_halffit_control_size(void) { return hf_ctrl_bytes(); }

/* 15 bytes to align the control, one block unit and the sentinel's. */
size_t rtm_halffit_min_region(void) { return 15u + rtm_halffit_control_size() + 2u * HF_UNIT; }

size_t rtm_halffit_block_size(size_t size)
{
    unsigned k = hf_order_for(size);
    return k > HF_MAX_ORDER ? 0 : HF_UNIT << k;
}

size_t rtm_halffit_arena_size(size_t max_live_bytes, size_t max_request)
{
    size_t block = rtm_halffit_block_size(max_request);
    size_t m = max_live_bytes & ~(HF_UNIT - 1u);
    if (block == 0 || m < block) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    size_t levels = 2u * ((size_t)hf_order_for(max_request) + 1u);
    size_t fixed = 15u + rtm_halffit_control_size() + HF_UNIT;
    if (m > (SIZE_MAX - fixed) / levels || ((levels * m) >> HF_LOG2U) > HF_MAX_UNITS) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    return fixed + levels * m;
}

/* One free block over the whole arena, and the sentinel after it. */
static void format(rtm_halffit *h)
{
    for (unsigned c = 0; c < HF_CLASSES; c++) {
        h->lists[c].prev = hf_sentinel(c);
        h->lists[c].next = hf_sentinel(c);
    }
    h->bitmap = 0;
    h->reserved = 0;
    h->shim_bytes = 0;
    h->raw_used = 0;
    h->live_blocks = 0;
    h->peak_mark = 0;
    h->failed_allocs = 0;
    size_t units = h->arena_units;
    hf_header *b = hf_block(h, 0);
    b->units = (uint32_t)units;
    b->prev_units = 0;
    b->state = HF_FREE;
    b->order = 0;
    hf_header *end = hf_block(h, units << HF_LOG2U);
    end->units = 1;
    end->prev_units = (uint32_t)units;
    end->state = HF_END;
    end->order = 0;
    list_push(h, b, hf_class((uint32_t)units));
    h->blocks = 1;
}

rtm_halffit *rtm_halffit_create(void *mem, size_t bytes)
{
    /* mem + bytes must not wrap: format() writes the sentinel at the end. */
    if (mem == NULL || bytes < rtm_halffit_min_region() || bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t lost = (size_t)((16u - (uintptr_t)mem % 16u) % 16u);
    rtm_halffit *h = (rtm_halffit *)(uintptr_t)((char *)mem + lost);
    h->kind = RTM_KIND_HALFFIT;
    h->lost = (uint32_t)lost;
    h->region_bytes = bytes;
    h->arena_units = hf_units_for(bytes, lost);
    format(h);
    return h;
}

void rtm_halffit_reset(rtm_halffit *h) { format(h); }

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

/* The alloc and free adapters hold the hot paths' bodies themselves rather
 * than jump to the typed API: through rtm_alloc / rtm_free that is one
 * instruction less per call, and free's result is not computed. The typed
 * functions keep their own copies (a firmware image that links only one
 * API keeps only its copy: --gc-sections). */
static void *halffit_kind_alloc(rtm_heap *h, size_t size)
{
    return halffit_alloc(RTM_KIND_AS(rtm_halffit, h), size);
}
static void halffit_kind_free(rtm_heap *h, void *ptr)
{
    (void)halffit_free(RTM_KIND_AS(rtm_halffit, h), ptr);
}
static void *halffit_kind_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    return rtm_halffit_aligned_alloc(RTM_KIND_AS(rtm_halffit, h), alignment, size);
}
static void *halffit_kind_realloc(rtm_heap *h, void *ptr, size_t size)
{
    return rtm_halffit_realloc(RTM_KIND_AS(rtm_halffit, h), ptr, size);
}
static size_t halffit_kind_usable_size(rtm_heap *h, const void *ptr)
{
    return rtm_halffit_usable_size(RTM_KIND_AS(rtm_halffit, h), ptr);
}
RTM_KIND_ADAPT_WHOLE(halffit, rtm_halffit)

/* Valid at any start address; "halffit" takes no parameter. */
static size_t halffit_kind_min_region(size_t unused)
{
    (void)unused;
    return rtm_halffit_min_region();
}
static rtm_heap *halffit_kind_create(void *mem, size_t bytes, size_t unused)
{
    (void)unused;
    return (rtm_heap *)(void *)rtm_halffit_create(mem, bytes);
}

const rtm_heap_kind rtm_kind_halffit = {
    .kind = RTM_KIND_HALFFIT,
    .min_region = halffit_kind_min_region,
    .create = halffit_kind_create,
    RTM_KIND_OPERATIONS(halffit),
};
