// SPDX-License-Identifier: MIT
/*
 * heaps/halffit.c -- rtmem's half-fit heap: power-of-two blocks, one free
 * list per order, a bitmap of non-empty lists, binary buddy merging.
 * Contracts: include/rtmem/halffit.h. Checker: heaps/halffit_check.c.
 *
 *   region: [ control | arena ......................................... ]
 *            rtm_halffit  ^ base: block offsets o are counted from here
 *
 *   arena at create (A = 11 units of MIN_BLOCK, cut largest first, every
 *   block aligned to its own size relative to base):
 *
 *     [ order 3: 8 units              ][ order 1 ][o0]
 *
 *   a block of order k, MIN_BLOCK << k bytes:
 *
 *     used: [ order | USED ][ payload ............................... ]
 *     free: [ order | FREE ][ prev ][ next ][ stale bytes ............ ]
 *             8 bytes         offsets from the control structure, 0 = none
 *
 *   alloc of order 1 from a free order-3 block (halve, keep the lower half,
 *   put each upper half on its list):
 *
 *     [               8               ] => [ 1 ][ 1 ][    2   ][    4   ]
 *                                          used free   free      free
 *
 *   free merges with the buddy (offset o ^ size) while it is a free block
 *   of the same order: [ o1 ][ o1 buddy ] => [ ------ o2 ------ ].
 *
 * Invariants (rtm_halffit_check() verifies each one):
 *  1. The blocks tile the arena; a block of order k has an offset that is a
 *     multiple of MIN_BLOCK << k (natural alignment) -- the buddy tree.
 *  2. Free blocks are exactly the members of the lists; list k holds only
 *     order-k blocks; bit k of the bitmap is set iff list k is non-empty.
 *  3. No free block has a free buddy of the same order (merging is eager).
 *  4. Counters equal what a walk finds.
 *
 * Why buddy merging rather than neighbour merging: a merged pair is again a
 * naturally aligned power of two, so every block stays on the buddy tree,
 * the merge partner is found by one XOR, and free needs no footer or
 * "previous block" field. Neighbour merging would produce blocks that are
 * not powers of two, which half-fit then has to file under the lower
 * order, wasting up to half of each merged block for the lists.
 *
 * Time: alloc is one bit scan plus at most RTM_HALFFIT_MAX_ORDER halvings
 * (the source block's order minus the request's); free is at most
 * RTM_HALFFIT_MAX_ORDER merges (each raises the order by one). Both are
 * bounded by the constant of the build, not by the heap contents.
 *
 * THE BOUND. Units: u = MIN_BLOCK; a block of order i has 2^i units. Let
 * L be the largest order requested (2^L u = rtm_halffit_block_size(n)), M
 * a bound on the live units (sum of the live blocks' sizes, rounded sizes,
 * never above M at any moment, the block being granted included), and
 * A the arena in units. Claim: if A >= (L + 1) M, no request fails.
 *
 *   Let F_i be the units in free blocks of order i, P_i the units in live
 *   blocks of order i, and Psi_j = sum over i <= j of (F_i + P_i): the units
 *   in blocks of order <= j. Invariant, for every j >= 0:
 *
 *       Psi_j <= (j + 1) M + 2^(j+1) - 1.
 *
 *   At create: blocks of order <= j are the ones of the binary expansion of
 *   A below bit j + 1, so Psi_j <= 2^(j+1) - 1. Each operation keeps it:
 *   - free of a block, merging or not: units move from a live block to a
 *     free one of the same or a higher order: no Psi_j grows.
 *   - alloc of order r served from a free block of order s (smallest-fit:
 *     F_i = 0 for r <= i < s before), leaving one free block of each order
 *     r..s-1 and a live block of order r:
 *       j < r or s <= j: Psi_j unchanged (nothing of order <= j appears,
 *       or everything stays at order <= j).
 *       r <= j < s: afterwards Psi_j = P_{<=j} + F_{<r} + (2^(j+1) - 2^r),
 *       and F_{<r} = Psi_{r-1} - P_{<r} <= r M + 2^r - 1 - P_{<r} (the
 *       invariant at r - 1; F_{<0} = 0), so
 *       Psi_j <= (P_{<=j} - P_{<r}) + r M + 2^(j+1) - 1
 *            <= (r + 1) M + 2^(j+1) - 1 <= (j + 1) M + 2^(j+1) - 1.
 *   A request of order k <= L, allowed (live + 2^k <= M), fails only if no
 *   free block has order >= k; then every unit is live in an order >= k
 *   block or lies in a block of order < k:
 *       A = P_{>=k} + Psi_{k-1} <= (M - 2^k) + k M + 2^k - 1 = (k+1) M - 1,
 *   contradicting A >= (L + 1) M >= (k + 1) M. QED. Notes:
 *   - Merging is not used: the bound holds for the split policy alone,
 *     merging only makes real workloads need less. What it needs is the
 *     smallest-fit choice (the bit scan from the request's order up) and
 *     that an alloc leaves at most one free block per order below its
 *     source, which halving guarantees.
 *   - rtm_halffit_arena_size() returns 7 + control + (L + 1) M u bytes, so
 *     the arena holds (L + 1) M units at any start address.
 *   - In requested bytes: a request of n takes at most max(2 (n + header),
 *     u) bytes, hence o1heap's form H = 2 M' (1 + ceil(log2 n')) for M'
 *     live requested bytes counted with their header, each at least u / 2.
 *   - Realloc in place keeps the whole old block (counted as live at its
 *     old size); a moving realloc is an alloc then a free, and holds both
 *     blocks for a moment: the caller's M must allow that.
 *
 * Freestanding: no libc (__builtin_memcpy only), like heaps/tlsf.c.
 * Not thread-safe; the caller serialises access to one heap.
 */
#include "heaps/halffit_layout.h"
#include "core/kind.h"

/* --- block accessors --------------------------------------------------- */

/* Pushes block o of order k on its list (LIFO) and sets the bitmap bit. */
static inline void list_push(rtm_halffit *h, size_t o, unsigned k)
{
    hf_header *b = hf_block(h, o);
    RTM_ASSERT(k < HF_ORDERS);
    b->order = k;
    b->state = HF_FREE;
    hf_links *l = hf_link(h, o);
    l->prev = 0;
    l->next = h->heads[k];
    if (h->heads[k] != 0)
        hf_link_at(h, h->heads[k])->prev = hf_off_from_ctrl(h, o);
    h->heads[k] = hf_off_from_ctrl(h, o);
    h->bitmap |= (uint64_t)1 << k;
    h->free_units += (size_t)1 << k;
    h->free_blocks++;
}

/* Takes block o of order k off its list, wherever it sits. */
static inline void list_remove(rtm_halffit *h, size_t o, unsigned k)
{
    hf_links *l = hf_link(h, o);
    RTM_ASSERT(hf_block(h, o)->state == HF_FREE && hf_block(h, o)->order == k);
    RTM_ASSERT(h->free_units >= ((size_t)1 << k) && h->free_blocks > 0);
    if (l->prev != 0)
        hf_link_at(h, l->prev)->next = l->next;
    else
        h->heads[k] = l->next;
    if (l->next != 0)
        hf_link_at(h, l->next)->prev = l->prev;
    if (h->heads[k] == 0)
        h->bitmap &= ~((uint64_t)1 << k);
    h->free_units -= (size_t)1 << k;
    h->free_blocks--;
}

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_halffit *h, int err)
{
    if (err == RTM_ENOMEM)
        h->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_halffit *h, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, h, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* The arena offset of live block ptr, or -1 after reporting why ptr is not
 * one. Integer arithmetic first: the header is read only once its offset is
 * known to be a unit boundary inside the arena. A pointer below the arena
 * wraps d past the arena size, so one compare covers both sides. */
static inline int live_block(const rtm_halffit *h, const void *ptr, size_t *out)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)hf_base(h)) - HF_HDR;
    if (RTM_UNLIKELY(d >= h->arena_units << HF_LOG2U || (d & (HF_UNIT - 1u)) != 0))
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block of this heap");
    const hf_header *b = hf_block(h, d);
    size_t u = d >> HF_LOG2U;
    if (RTM_UNLIKELY(b->order > HF_MAX_ORDER || (u & (((size_t)1 << b->order) - 1u)) != 0 ||
                     ((size_t)1 << b->order) > h->arena_units - u))
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block start");
    if (RTM_UNLIKELY(b->state != HF_USED)) {
        if (b->state == HF_FREE)
            return reject(h, ptr, RTM_ERR_DOUBLE_FREE, "block is free (freed twice?)");
        return reject(h, ptr, RTM_ERR_FOREIGN_POINTER, "header is not a used block's");
    }
    *out = d;
    return 0;
}

/* --- operations -------------------------------------------------------- */

/* Hot path: one bit scan finds the smallest non-empty list of order >= k
 * (smallest-fit, which the bound needs); the block is halved down to order
 * k, each upper half going onto its list. Budget: a bit scan, a list pop,
 * (j - k) pushes. */
void *rtm_halffit_alloc(rtm_halffit *h, size_t size)
{
    unsigned k = hf_order_for(size);
    if (RTM_UNLIKELY(k > HF_MAX_ORDER))
        return refuse(h, RTM_ENOMEM);
    uint64_t fit = h->bitmap & ~(((uint64_t)1 << k) - 1u);
    if (RTM_UNLIKELY(fit == 0))
        return refuse(h, RTM_ENOMEM);
    unsigned j = rtm_ctz64(fit);
    size_t o = hf_off_in_arena(h, h->heads[j]);
    list_remove(h, o, j);
    while (j > k) { /* at most HF_MAX_ORDER rounds */
        j--;
        list_push(h, o + (HF_UNIT << j), j);
    }
    hf_header *b = hf_block(h, o);
    b->order = k;
    b->state = HF_USED;
    h->live_blocks++;
    h->used_units += (size_t)1 << k;
    size_t used = hf_used_bytes(h);
    if (used > h->peak_used)
        h->peak_used = used;
    return (char *)b + HF_HDR;
}

void *rtm_halffit_aligned_alloc(rtm_halffit *h, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(h, RTM_EINVAL);
    if (alignment > RTM_ALIGN)
        return refuse(h, RTM_ENOTSUP); /* payloads sit a header past the block */
    return rtm_halffit_alloc(h, size);
}

/* Marks block o free and merges it with its buddy while the buddy is a free
 * block of the same order. The buddy above must lie inside the arena (the
 * last, smaller blocks of the initial cut have none); the buddy below
 * always does. At most HF_MAX_ORDER rounds.
 *
 *   [ buddy: FREE k ][ o: USED k ]  =>  [ ---- FREE k+1 ---- ][ o: FREE k ]
 *                                                              ^ stale, kept
 *
 * o's own header is marked free first: when o merges into its lower buddy
 * that header ends up inside the merged block and is never rewritten, and a
 * second free(o) must find "free" there, not "used" (it would put o on a
 * list while it is part of the merged block: one block handed out twice).
 * An absorbed upper buddy's header says free already (it was on a list). So
 * every header left inside a free block says free; a block start that a
 * later split re-creates gets a fresh header from list_push. */
static void release(rtm_halffit *h, size_t o, unsigned k)
{
    size_t u = o >> HF_LOG2U;
    hf_block(h, o)->state = HF_FREE;
    while (k < HF_MAX_ORDER) {
        size_t bu = u ^ ((size_t)1 << k);
        if (bu > u && ((size_t)1 << k) > h->arena_units - bu)
            break;
        const hf_header *b = hf_block(h, bu << HF_LOG2U);
        if (b->state != HF_FREE || b->order != k)
            break;
        list_remove(h, bu << HF_LOG2U, k);
        u &= ~((size_t)1 << k);
        k++;
    }
    list_push(h, u << HF_LOG2U, k);
}

/* Hot path: validate, then merge and push. */
int rtm_halffit_free(rtm_halffit *h, void *ptr)
{
    if (RTM_UNLIKELY(ptr == NULL))
        return 0;
    size_t o = 0;
    if (RTM_UNLIKELY(live_block(h, ptr, &o) != 0))
        return -1;
    unsigned k = hf_block(h, o)->order;
    h->live_blocks--;
    h->used_units -= (size_t)1 << k;
    release(h, o, k);
    return 0;
}

void *rtm_halffit_realloc(rtm_halffit *h, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_halffit_alloc(h, size);
    if (size == 0) {
        (void)rtm_halffit_free(h, ptr);
        return NULL;
    }
    size_t o = 0;
    if (live_block(h, ptr, &o) != 0)
        return NULL;
    unsigned cur = hf_block(h, o)->order;
    if (hf_order_for(size) <= cur)
        return ptr; /* the block's order already holds it */
    void *q = rtm_halffit_alloc(h, size);
    if (q == NULL)
        return NULL;
    __builtin_memcpy(q, ptr, (HF_UNIT << cur) - HF_HDR);
    (void)rtm_halffit_free(h, ptr);
    return q;
}

size_t rtm_halffit_usable_size(const rtm_halffit *h, const void *ptr)
{
    (void)h;
    if (ptr == NULL)
        return 0;
    const hf_header *b = (const hf_header *)(uintptr_t)((const char *)ptr - HF_HDR);
    return (HF_UNIT << b->order) - HF_HDR;
}

rtm_stats rtm_halffit_stats(const rtm_halffit *h)
{
    rtm_stats st;
    st.arena_bytes = h->region_bytes;
    st.used_bytes = hf_used_bytes(h);
    st.free_bytes = hf_free_bytes(h);
    st.largest_free = h->bitmap == 0 ? 0 : (HF_UNIT << rtm_fls64(h->bitmap)) - HF_HDR;
    st.live_blocks = h->live_blocks;
    st.peak_used_bytes = h->peak_used;
    st.failed_allocs = h->failed_allocs;
    return st;
}

/* --- creation and sizing ----------------------------------------------- */

size_t rtm_halffit_control_size(void) { return hf_ctrl_bytes(); }

size_t rtm_halffit_min_region(void) { return 7u + rtm_halffit_control_size() + HF_UNIT; }

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
    size_t levels = (size_t)hf_order_for(max_request) + 1u;
    size_t fixed = 7u + rtm_halffit_control_size();
    if (m > (SIZE_MAX - fixed) / levels) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return 0;
    }
    return fixed + levels * m;
}

/* Cuts the arena into the blocks of its binary expansion, largest first at
 * the lowest offsets: each offset is then a sum of larger powers of two, so
 * every block is naturally aligned and the last ones have no buddy inside
 * the arena. One block per set bit of the unit count. */
static void format(rtm_halffit *h)
{
    for (unsigned k = 0; k < HF_ORDERS; k++)
        h->heads[k] = 0;
    h->bitmap = 0;
    h->free_units = 0;
    h->free_blocks = 0;
    h->used_units = 0;
    h->live_blocks = 0;
    h->peak_used = 0;
    h->failed_allocs = 0;
    size_t o = 0;
    for (unsigned k = HF_MAX_ORDER + 1u; k-- > 0;) {
        if ((h->arena_units >> k) & 1u) {
            list_push(h, o, k);
            o += HF_UNIT << k;
        }
    }
}

rtm_halffit *rtm_halffit_create(void *mem, size_t bytes)
{
    /* mem + bytes must not wrap: format() writes a header at the start of
     * every block of the arena the size describes. */
    if (mem == NULL || bytes < rtm_halffit_min_region() || bytes > UINTPTR_MAX - (uintptr_t)mem) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t lost = (size_t)((8u - (uintptr_t)mem % 8u) % 8u);
    rtm_halffit *h = (rtm_halffit *)(uintptr_t)((char *)mem + lost);
    size_t units = hf_units_for(bytes, lost);
    h->kind = RTM_KIND_HALFFIT;
    h->lost = (uint32_t)lost;
    h->region_bytes = bytes;
    h->arena_units = units;
    format(h);
    return h;
}

void rtm_halffit_reset(rtm_halffit *h) { format(h); }

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

RTM_KIND_ADAPTERS(halffit, rtm_halffit)

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
