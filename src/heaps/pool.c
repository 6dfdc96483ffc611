// SPDX-License-Identifier: MIT
/*
 * heaps/pool.c -- rtmem's fixed-size block pool (an RTOS partition): create,
 * alloc, free, realloc, stats, reset, check and walk. Contracts and the
 * arena arithmetic: include/rtmem/pool.h.
 *
 *   control structure (rtm_pool), then the bitmap, then the blocks:
 *
 *   [kind|block|count|fresh|...|head] [bitmap: 1 bit per block] [b0][b1]...
 *                             |                                  ^
 *                             +-- offset of the last freed block +
 *
 *   free block:   [ next: offset of the next free block, 0 = end | ... ]
 *   used block:   [ user data ........................................ ]
 *
 * Invariants (rtm_pool_check() verifies each one):
 *  1. Blocks [fresh, count) have never been handed out since create/reset;
 *     they are free but on no list (the watermark, so that create and reset
 *     are O(1) instead of threading every block).
 *  2. Blocks [0, fresh) are either live or on the free list; bitmap bit i
 *     is set iff block i < fresh is on the list. Bits of blocks >= fresh
 *     are stale and never read.
 *  3. live + listed = fresh; the list holds exactly `listed` blocks.
 * The bitmap is what makes double free detection O(1) and always on: a
 * block without a header cannot say whether it is free, and walking the
 * list would be O(blocks).
 *
 * Why LIFO: the block freed last is the one most likely still in cache, and
 * a stack needs one link per block, which fits in the smallest block. Why a
 * division in alloc and free: a pointer's block index is (p - first) /
 * block for any block size; a hardware divide is O(1), and keeping the
 * index in the free block would need a second word per block.
 *
 * Freestanding: no libc, like heaps/tlsf.c.
 * Not thread-safe; the caller serialises access to one pool.
 */
#include "core/internal.h"
#include "core/kind.h"
#include "rtmem/pool.h"

#define GRAN ((size_t)RTM_ALIGN)

struct rtm_pool {
    uint32_t kind; /* RTM_KIND_POOL (core/internal.h) */
    uint32_t unused;
    size_t block;         /* stride = usable size of every block        */
    size_t count;         /* blocks in the pool                         */
    size_t fresh;         /* watermark: blocks >= fresh never handed out */
    size_t live;          /* blocks allocated                           */
    size_t listed;        /* blocks on the free list                    */
    size_t peak_live;     /* highest live since create or reset         */
    size_t failed_allocs; /* ENOMEM refusals                            */
    size_t arena_bytes;   /* bytes given by the caller                  */
    size_t align;         /* alignment every block address has          */
    ptrdiff_t first;      /* offset of block 0 from the control         */
    ptrdiff_t head;       /* offset of the last freed block, 0 = none   */
};

_Static_assert(sizeof(ptrdiff_t) <= GRAN, "a free link fits in the smallest block");

/* --- accessors --------------------------------------------------------- */

static inline char *base(const rtm_pool *p) { return (char *)(uintptr_t)p; }
static inline char *at(const rtm_pool *p, ptrdiff_t off) { return base(p) + off; }
static inline ptrdiff_t off_of(const rtm_pool *p, const char *b) { return b - base(p); }
static inline char *block_at(const rtm_pool *p, size_t i) { return at(p, p->first) + i * p->block; }
static inline ptrdiff_t *link_next(const char *b) { return (ptrdiff_t *)(uintptr_t)b; }

/* The bitmap sits right after the control structure. 32-bit words: one
 * instruction per access on every target, and no libgcc helper on 32-bit
 * ones (the freestanding build links none). */
static inline uint32_t *bitmap(const rtm_pool *p)
{
    return (uint32_t *)(uintptr_t)(base(p) + rtm_pool_control_size());
}
static inline int bit_free(const rtm_pool *p, size_t i)
{
    return (bitmap(p)[i >> 5] >> (i & 31u)) & 1u;
}
static inline void bit_set_free(rtm_pool *p, size_t i)
{
    bitmap(p)[i >> 5] |= (uint32_t)1 << (i & 31u);
}
static inline void bit_set_used(rtm_pool *p, size_t i)
{
    bitmap(p)[i >> 5] &= ~((uint32_t)1 << (i & 31u));
}

/* Bytes of bitmap for n blocks, in 8-byte units so blocks stay aligned. */
static inline size_t bitmap_bytes(size_t n) { return (n / 64u + (n % 64u != 0)) * 8u; }

static inline size_t lowest_bit(uintptr_t x) { return (size_t)(x & (~x + 1u)); }

/* --- errors ------------------------------------------------------------ */

static RTM_COLD void *refuse(rtm_pool *p, int err)
{
    if (err == RTM_ENOMEM)
        p->failed_allocs++;
    RTM_SET_ERRNO(err);
    return NULL;
}

static RTM_COLD int reject(const rtm_pool *p, const void *ptr, rtm_error_kind kind,
                           const char *what)
{
    rtm_report(kind, p, ptr, what);
    RTM_SET_ERRNO(RTM_EINVAL);
    return -1;
}

/* The index of live block ptr, or -1 after reporting why ptr is not one.
 * Integer arithmetic only, so a foreign pointer never forms an out-of-range
 * pointer. A pointer below the first block wraps d past count * block (the
 * pool ends below the top of the address space), so one compare covers
 * "before", "after" and, with the remainder, "inside a block". */
static inline int live_index(const rtm_pool *p, const void *ptr, size_t *out)
{
    size_t d = (size_t)((uintptr_t)ptr - (uintptr_t)at(p, p->first));
    size_t i = d / p->block;
    if (RTM_UNLIKELY(i >= p->count || d != i * p->block))
        return reject(p, ptr, RTM_ERR_FOREIGN_POINTER, "pointer is not a block start of this pool");
    if (RTM_UNLIKELY(i >= p->fresh || bit_free(p, i)))
        return reject(p, ptr, RTM_ERR_DOUBLE_FREE, "block is free (freed twice?)");
    *out = i;
    return 0;
}

/* --- operations -------------------------------------------------------- */

/* Hot path: pop the free list, else advance the watermark. */
void *rtm_pool_alloc(rtm_pool *p, size_t size)
{
    if (RTM_UNLIKELY(size > p->block))
        return refuse(p, RTM_ENOMEM);
    char *b;
    size_t i = 0;
    if (p->head != 0) {
        b = at(p, p->head);
        p->head = *link_next(b);
        p->listed--;
        i = (size_t)(b - at(p, p->first)) / p->block;
    } else if (p->fresh < p->count) {
        i = p->fresh++;
        b = block_at(p, i);
    } else {
        return refuse(p, RTM_ENOMEM);
    }
    bit_set_used(p, i);
    if (++p->live > p->peak_live)
        p->peak_live = p->live;
    return b;
}

void *rtm_pool_aligned_alloc(rtm_pool *p, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment))
        return refuse(p, RTM_EINVAL);
    if (alignment > p->align)
        return refuse(p, RTM_ENOTSUP); /* no block will ever have it */
    return rtm_pool_alloc(p, size);
}

/* Hot path: validate, set the bit, push. */
int rtm_pool_free(rtm_pool *p, void *ptr)
{
    if (RTM_UNLIKELY(ptr == NULL))
        return 0;
    size_t i = 0;
    if (RTM_UNLIKELY(live_index(p, ptr, &i) != 0))
        return -1;
    char *b = (char *)ptr;
    bit_set_free(p, i);
    *link_next(b) = p->head;
    p->head = off_of(p, b);
    p->listed++;
    p->live--;
    return 0;
}

void *rtm_pool_realloc(rtm_pool *p, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_pool_alloc(p, size);
    if (size == 0) {
        (void)rtm_pool_free(p, ptr);
        return NULL;
    }
    size_t i = 0;
    if (live_index(p, ptr, &i) != 0)
        return NULL;
    if (size > p->block)
        return refuse(p, RTM_ENOMEM); /* blocks never grow */
    return ptr;
}

/* Every block holds p->block bytes, but only a live one may say so: the
 * pointer is validated as free() validates it (live_index, reporting). */
size_t rtm_pool_usable_size(const rtm_pool *p, const void *ptr)
{
    size_t i = 0;
    if (ptr == NULL || live_index(p, ptr, &i) != 0)
        return 0;
    return p->block;
}

size_t rtm_pool_block(const rtm_pool *p) { return p->block; }
size_t rtm_pool_block_count(const rtm_pool *p) { return p->count; }
size_t rtm_pool_block_alignment(const rtm_pool *p) { return p->align; }

rtm_stats rtm_pool_stats(const rtm_pool *p)
{
    rtm_stats st;
    st.arena_bytes = p->arena_bytes;
    st.used_bytes = p->live * p->block;
    st.free_bytes = (p->count - p->live) * p->block;
    st.largest_free = p->live < p->count ? p->block : 0;
    st.live_blocks = p->live;
    st.peak_used_bytes = p->peak_live * p->block;
    st.failed_allocs = p->failed_allocs;
    return st;
}

/* O(1): the watermark makes every block fresh again; bitmap bits of blocks
 * above the watermark are never read (invariant 2). */
void rtm_pool_reset(rtm_pool *p)
{
    p->fresh = p->live = p->listed = 0;
    p->head = 0;
    p->peak_live = 0;
    p->failed_allocs = 0;
}

/* --- creation and sizing ----------------------------------------------- */

size_t rtm_pool_control_size(void) { return (sizeof(rtm_pool) + GRAN - 1u) & ~(GRAN - 1u); }

size_t rtm_pool_block_size_for(size_t block_size)
{
    if (block_size == 0 || block_size > RTM_POOL_MAX_BLOCK)
        return 0;
    size_t b = (block_size + GRAN - 1u) & ~(GRAN - 1u);
    return b < sizeof(ptrdiff_t) ? sizeof(ptrdiff_t) : b;
}

/* Control, one bitmap word, one block, and 7 bytes for the worst start. */
size_t rtm_pool_min_region(size_t block_size)
{
    size_t b = rtm_pool_block_size_for(block_size);
    return b == 0 ? 0 : GRAN - 1u + rtm_pool_control_size() + 8u + b;
}

/* The least bitmap size bm with bm = bitmap_bytes(count + bm / block): the
 * bitmap create sizes for a region of exactly count blocks plus that
 * bitmap (header arithmetic). Iterating from 0 reaches the least fixed
 * point, so the region is minimal; bm grows by at most one word a round
 * and stops after a few. */
size_t rtm_pool_region_for(size_t count, size_t block_size)
{
    size_t b = rtm_pool_block_size_for(block_size);
    size_t ctrl = rtm_pool_control_size();
    if (b == 0 || count == 0 || count > (SIZE_MAX - ctrl) / b / 2u)
        return 0;
    size_t bm = 0;
    for (;;) {
        size_t next = bitmap_bytes(count + bm / b);
        if (next == bm)
            break;
        bm = next;
    }
    return ctrl + count * b + bm;
}

rtm_pool *rtm_pool_create(void *mem, size_t bytes, size_t block_size)
{
    size_t b = rtm_pool_block_size_for(block_size);
    uintptr_t start = ((uintptr_t)mem + GRAN - 1u) & ~(uintptr_t)(GRAN - 1u);
    size_t lost = (size_t)(start - (uintptr_t)mem);
    size_t ctrl = rtm_pool_control_size();
    /* A size that wraps the address space is refused like every heap's
     * (the pool formats nothing, so it would otherwise be accepted). */
    if (mem == NULL || b == 0 || bytes > UINTPTR_MAX - (uintptr_t)mem || bytes < lost ||
        bytes - lost < ctrl) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    size_t avail = bytes - lost - ctrl;
    size_t bm = bitmap_bytes(avail / b); /* sized for an upper bound */
    if (avail < bm || (avail - bm) / b == 0) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return NULL;
    }
    rtm_pool *p = (rtm_pool *)start;
    p->kind = RTM_KIND_POOL;
    p->unused = 0;
    p->block = b;
    p->count = (avail - bm) / b;
    p->first = (ptrdiff_t)(ctrl + bm);
    p->arena_bytes = bytes;
    size_t a_first = lowest_bit((uintptr_t)at(p, p->first)), a_stride = lowest_bit(b);
    p->align = a_first < a_stride ? a_first : a_stride;
    rtm_pool_reset(p);
    return p;
}

/* --- check and walk ---------------------------------------------------- */

static int check_fail(const rtm_pool *p, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, p, where, what);
    RTM_SET_ERRNO(RTM_EFAULT);
    return -1;
}

static unsigned popcount32(uint32_t x)
{
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0fu;
    return (unsigned)((x * 0x01010101u) >> 24);
}

/* Free bits among blocks [0, n). */
static size_t free_bits_below(const rtm_pool *p, size_t n)
{
    size_t sum = 0;
    for (size_t w = 0; w < n / 32u; w++)
        sum += popcount32(bitmap(p)[w]);
    if (n % 32u != 0)
        sum += popcount32(bitmap(p)[n / 32u] & (((uint32_t)1 << (n % 32u)) - 1u));
    return sum;
}

/* The geometry and counters, before anything is read through them. */
static int check_header(const rtm_pool *p)
{
    size_t ctrl = rtm_pool_control_size();
    if (p->kind != RTM_KIND_POOL)
        return check_fail(p, p, "kind word is not a pool's");
    if (p->block < GRAN || p->block % GRAN != 0 || p->block > RTM_POOL_MAX_BLOCK)
        return check_fail(p, p, "block size damaged");
    if (p->first < 0 || (size_t)p->first % GRAN != 0 ||
        (size_t)p->first < ctrl + bitmap_bytes(p->count) || (size_t)p->first > p->arena_bytes)
        return check_fail(p, p, "first block offset damaged");
    if (p->count == 0 || p->count > (p->arena_bytes - (size_t)p->first) / p->block)
        return check_fail(p, p, "block count exceeds the region");
    if (p->fresh > p->count || p->live + p->listed != p->fresh)
        return check_fail(p, p, "live + listed differs from the watermark");
    if (p->peak_live < p->live || p->peak_live > p->count)
        return check_fail(p, p, "peak below live blocks or above the block count");
    return 0;
}

/* Invariants 2 and 3: every link a listed block, the list exactly `listed`
 * long (a cycle never reaches 0, so it is caught too), and as many free
 * bits below the watermark as members: the bit set equals the list. */
static int check_list(const rtm_pool *p)
{
    ptrdiff_t off = p->head;
    size_t span = p->fresh * p->block;
    for (size_t k = 0; k < p->listed; k++) {
        size_t d = (size_t)off - (size_t)p->first; /* wraps for a link below block 0 */
        if (off == 0)
            return check_fail(p, p, "free list shorter than the free count");
        if (d >= span || d % p->block != 0)
            return check_fail(p, at(p, p->first), "free link is not a handed-out block start");
        if (!bit_free(p, d / p->block))
            return check_fail(p, block_at(p, d / p->block), "listed block's bitmap bit says used");
        off = *link_next(block_at(p, d / p->block));
    }
    if (off != 0)
        return check_fail(p, p, "free list longer than the free count (or a cycle)");
    if (free_bits_below(p, p->fresh) != p->listed)
        return check_fail(p, p, "bitmap marks a block free that is not on the list");
    return 0;
}

int rtm_pool_check(const rtm_pool *p)
{
    if (p == NULL) {
        RTM_SET_ERRNO(RTM_EINVAL);
        return -1;
    }
    if (check_header(p) != 0)
        return -1;
    return check_list(p);
}

void rtm_pool_walk(const rtm_pool *p, void (*walker)(void *ptr, size_t usable, int used, void *arg),
                   void *arg)
{
    for (size_t i = 0; i < p->count; i++)
        walker(block_at(p, i), p->block, i < p->fresh && !bit_free(p, i), arg);
}

/* --- the generic API's descriptor (core/kind.h) ------------------------ */

RTM_KIND_ADAPTERS(pool, rtm_pool)

static size_t pool_kind_min_region(size_t block) { return rtm_pool_min_region(block); }
static rtm_heap *pool_kind_create(void *mem, size_t bytes, size_t block)
{
    return (rtm_heap *)(void *)rtm_pool_create(mem, bytes, block);
}

const rtm_heap_kind rtm_kind_pool = {
    .kind = RTM_KIND_POOL,
    .default_param = RTM_POOL_DEFAULT_BLOCK, /* "pool:<block size>" */
    .min_region = pool_kind_min_region,
    .create = pool_kind_create,
    RTM_KIND_OPERATIONS(pool),
};
