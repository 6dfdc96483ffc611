// SPDX-License-Identifier: MIT
/*
 * malloc/internal.h -- the table of contents of rtmem's thread-caching
 * malloc: constants, the span record, and every cross-file function, grouped
 * by the file that defines it. docs/MALLOC.md tells the design in prose.
 *
 * The layers, top down (a layer calls only layers below it):
 *
 *   dropin.c    the drop-in names: malloc, free, new, ...
 *   malloc.c    API, slow paths above the thread cache       (no lock)
 *     |         (fast paths: fastpath.h, inlined in malloc.c and dropin.c)
 *   options.c   options, init, RT arena set-up, fork,        (init lock)
 *     |         the RTMEM_SHOW_STATS printout at exit
 *   stats.c     statistics, their printout, text helpers
 *     |
 *   tcache.c    per-thread caches: arrays of free blocks     (registry lock)
 *     |
 *   central.c   per size class: transfer cache + spans       (class locks)
 *     |
 *   pageheap.c  spans of 8 KiB pages: free runs, decay,      (heap lock)
 *     |         large and huge requests, the RT arena
 *   pagemap.c   page -> span, page -> size class (lock-free reads)
 *   meta.c      span records, thread caches, arrays          (meta lock)
 *   sizeclass.c the size-class table (read-only after init)
 *     |
 *   os/pages.c  mmap, munmap, madvise, mlock, sched_yield
 *
 * lock.c (the spin lock) serves every layer. Calls go only downward; what
 * lower layers see of upper ones is data: the options and rtmm_rt_mode
 * (options.c, written during initialisation, read-only afterwards) and
 * the API's failure counters (malloc.c), which central.c also counts
 * into. So a thread's first allocation reaches initialisation through
 * rtmm_alloc_first() from the fast paths, never from tcache.c, and the
 * statistics are initialised by their callers (rtmm_init_for_stats()).
 *
 * Lock order: init -> registry -> class (ascending) -> heap -> meta. No
 * lock is held across a call into libc other than os/pages.c, except that
 * initialisation writes its option messages (write(2)) and reads the
 * machine's memory size (sysconf) under the init lock.
 */
#ifndef RTM_MALLOC_INTERNAL_H
#define RTM_MALLOC_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/bits.h"
#include "rtmem/malloc.h"

/* --- geometry ------------------------------------------------------------ */

/* Pages of the page heap: 8 KiB, as in tcmalloc. Larger than the kernel's
 * 4 KiB so the page map is half the size and a span of the smallest class
 * holds 512 objects, the bitmap's capacity. */
#define PAGE_SHIFT 13u
#define PAGE_BYTES ((size_t)1 << PAGE_SHIFT)

#define MIN_ALIGN  RTM_MALLOC_ALIGN
#define SMALL_MAX  ((size_t)RTM_MALLOC_SMALL_MAX)
#define NCLASS     80u /* size classes, class 0 unused ("not small") */
#define SPAN_WORDS 8u  /* bitmap words per span: 512 objects at most */
#define SPAN_OBJS  (SPAN_WORDS * 64u)

/* Requests from this size up get their own OS mapping (not in RT mode).
 * Below it, large requests are page runs of the page heap, whose free runs
 * are the large-block cache (bounded by RTM_DIRTY_MAX and the decay): a
 * block freed and asked for again costs no mmap, munmap or page fault.
 * Why so high on 64-bit: an own mapping per block was the cost of repeated
 * 5-25 MiB blocks (an munmap of resident pages and a fault per 4 KiB at
 * every allocation, docs/MALLOC.md "Large blocks"); address space is
 * plentiful there, while a 32-bit process keeps the old 4 MiB. */
#ifndef RTM_HUGE_MIN
#if UINTPTR_MAX > 0xffffffffu
#define RTM_HUGE_MIN ((size_t)256 << 20)
#else
#define RTM_HUGE_MIN ((size_t)4 << 20)
#endif
#endif

/* The cap on dirty (possibly resident) free pages in the page heap: the
 * larger of RTM_DIRTY_MAX and 1/RTM_DIRTY_SHARE of the pages in use. Above
 * it the oldest dirty pages are purged at once, whatever their age, so the
 * cache of freed runs never holds more than that. Why relative: a program
 * with 300 MiB of live 5-25 MiB blocks that replaces one at a time needs
 * a cache of several blocks to find a resident run that fits; with a fixed
 * 64 MiB it purged at almost every free and faulted at almost every
 * allocation. Why 1 (the cache at most the live heap): on mimalloc-bench's
 * malloc-large (2000 steps, sizes in bytes) the cache settles near 250 MiB
 * beside 300 MiB live; capped at half, it purged 514 times and faulted
 * 887k times (glibc 513k, tcmalloc 395k); at the live heap, 55 purges and
 * 164k faults, peak RSS 559 MiB against glibc's 549 (docs/MALLOC.md). */
#ifndef RTM_DIRTY_SHARE
#define RTM_DIRTY_SHARE 1u
#endif
#ifndef RTM_DIRTY_MAX
#if UINTPTR_MAX > 0xffffffffu
#define RTM_DIRTY_MAX ((size_t)64 << 20)
#else
#define RTM_DIRTY_MAX ((size_t)16 << 20)
#endif
#endif

/* --- locks (lock.c) ------------------------------------------------------- */

/* A test-and-test-and-set spin lock: no system call to take or release;
 * a waiter spins with pause and, outside real-time mode, yields after a
 * while (a preempted holder on a busy machine would otherwise cost a whole
 * time slice). Why not pthread_mutex: the real-time mode promises no system
 * call, and a contended mutex sleeps in futex(). */
typedef struct rtmm_lock {
    atomic_int held;
} rtmm_lock;

void rtmm_lock_slow(rtmm_lock *l);

RTM_INLINE void lock_take(rtmm_lock *l)
{
    if (RTM_LIKELY(!atomic_exchange_explicit(&l->held, 1, memory_order_acquire)))
        return;
    rtmm_lock_slow(l);
}
RTM_INLINE void lock_give(rtmm_lock *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}
RTM_INLINE void lock_reset(rtmm_lock *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_relaxed);
}

/* --- options and global state (options.c) --------------------------------- */

/* Set once, during initialisation (docs/MALLOC.md "Options"), read-only
 * afterwards by every layer. */
typedef struct rtmm_options {
    long decay_ms;      /* free runs purged after this long; -1 never        */
    size_t arena_bytes; /* real-time arena; 0 = normal mode                  */
    unsigned arena_threads;
    int show_stats;
} rtmm_options;

extern rtmm_options rtmm_opt;
/* 1 in real-time mode: no OS call after start-up. Also 1 when the mode was
 * asked for and could not start (rtmm_init() then fails every time). */
extern int rtmm_rt_mode;

/* Makes sure the allocator is initialised; 0, or -1 (ENOMEM) when the
 * real-time mode was asked for and could not start (a bad RTMEM_ARENA or
 * RTMEM_ARENA_THREADS, an arena larger than the machine's memory, or the
 * arena could not be mapped). */
int rtmm_init(void);
/* rtmm_init() for the statistics: 1 when there are statistics to read
 * (initialised, or in real-time mode even when it could not start), 0
 * when they read as all zero. */
int rtmm_init_for_stats(void);
/* The slow path of an allocation by a thread without a cache (its first):
 * initialises the allocator if needed, then rtmm_tc_alloc_slow(); NULL
 * when initialisation failed. The fast paths call it, so the layers below
 * never call up into initialisation. */
void *rtmm_alloc_first(size_t size);

/* --- the API's counters (malloc.c) ------------------------------------------ */

/* Relaxed atomics: slow paths only. */
extern atomic_size_t rtmm_failed_allocs, rtmm_foreign_frees;

/* --- statistics and text without stdio (stats.c) ----------------------------- */

/* The statistics of rtm_malloc_stats() from every layer below, all zero
 * when !ready; they do not initialise (their callers do). */
rtm_malloc_stats_t rtmm_stats(int ready);
/* rtm_malloc_print_stats()'s printout of st to fd. */
void rtmm_stats_print(rtm_malloc_stats_t st, int fd);

/* A line or a report built in a caller's buffer without stdio or
 * allocation (both unsafe inside malloc and at exit) and written with
 * write(2). Text beyond cap is dropped; n never exceeds cap. */
typedef struct rtmm_text {
    char *buf;
    size_t cap, n;
} rtmm_text;

void rtmm_text_put(rtmm_text *t, const char *s);
void rtmm_text_num(rtmm_text *t, uint64_t v);
/* Writes buf[0 .. n) to fd, retrying short writes; errors are ignored
 * (stderr may be closed). */
void rtmm_text_write(const rtmm_text *t, int fd);

/* --- size classes (sizeclass.c) ------------------------------------------- */

/* Class of a small request: rtmm_class_index[class_slot(size)]. Sizes up to
 * 1024 map in 16-byte steps (slots 0..64), larger ones in 128-byte steps
 * (slots 65..312; every class above 1024 is a multiple of 128), so one
 * table of 313 bytes serves all. */
#define CLASS_SLOTS (1024u / 16u + 1u + (SMALL_MAX - 1024u) / 128u)
extern uint8_t rtmm_class_index[CLASS_SLOTS];

typedef struct class_info {
    uint32_t size;  /* bytes per block                                  */
    uint32_t pages; /* pages per span                                   */
    uint32_t nobj;  /* blocks per span (<= SPAN_OBJS)                   */
    uint32_t cap;   /* thread-cache capacity (blocks)                   */
    uint32_t batch; /* blocks moved per refill / flush                  */
    uint32_t xcap;  /* central transfer-cache capacity (blocks)         */
    uint32_t group; /* blocks per cache-line group (1, 2 or 4), below   */
} class_info;

/* False sharing: a span hands blocks out of its bitmap only in whole
 * groups of `group` blocks, the fewest whose bytes are a multiple of 64
 * (a cache line), so the lines of a group hold no other group's bytes.
 * Two threads refilling from one span thus never get blocks on one line;
 * blocks share a line across threads only after a thread freed one of
 * them (it travels on through caches as is). nobj is a multiple of it. */
#define CACHE_LINE 64u
extern class_info rtmm_class[NCLASS];
extern unsigned rtmm_nclass; /* classes in use: 1 .. rtmm_nclass-1 */

RTM_INLINE size_t class_slot(size_t size)
{
    return RTM_LIKELY(size <= 1024u) ? (size + 15u) >> 4 : (size + 127u - 1024u + (64u << 7)) >> 7;
}

void rtmm_sizeclass_init(void);
/* The smallest class >= size whose block size is a multiple of align
 * (align <= PAGE_BYTES), or 0 when none (use a page run). */
unsigned rtmm_class_for_aligned(size_t size, size_t align);

/* --- spans ---------------------------------------------------------------- */

enum span_state { SPAN_FREE = 1, SPAN_SMALL, SPAN_LARGE, SPAN_HUGE };

/*
 * A span: a run of pages [start, start + pages * PAGE_BYTES). A free span
 * sits in a page-heap bin (next/prev) and, when dirty, in the decay list
 * (dnext/dprev). A small span is carved into nobj blocks of one class; the
 * bitmap has a 1 for every block that is free *in the span* (not handed to
 * a cache): blocks never need to be touched to be linked, so neither the
 * caches nor the span ever write into user memory. A small span is on its
 * class's partial list while it has a whole free group (gfree > 0).
 *
 *   start                                                   start+pages*8K
 *   | blk 0 | blk 1 | blk 2 | ...                 | blk nobj-1 | tail |
 *     bit 0   bit 1   bit 2                         bit nobj-1
 */
typedef struct span {
    uintptr_t start;
    size_t pages;
    struct span *next, *prev;   /* bin list (free) or partial list (small)   */
    struct span *dnext, *dprev; /* decay list (free and dirty)               */
    uint64_t freed_ms;          /* when it became free (dirty spans)         */
    uint32_t nobj, nfree;       /* small: blocks, blocks free in the bitmap  */
    uint32_t hint;              /* small: lowest bitmap word that may be set */
    uint32_t gfree;             /* small: whole groups free in the bitmap    */
    uint16_t cls;
    uint8_t state;   /* enum span_state                                     */
    uint8_t dirty;   /* free: some page may be resident (not purged)        */
    uint8_t zeroed;  /* large: every page still reads as zero               */
    uint8_t partial; /* small: on the central partial list                  */
    uint8_t owner;   /* small: owner tag in the page map (central.c)        */
    uint64_t bits[SPAN_WORDS];
} span;

RTM_INLINE uintptr_t span_end(const span *s) { return s->start + (s->pages << PAGE_SHIFT); }

/* --- page map (pagemap.c) -------------------------------------------------- */

/*
 * A two-level radix tree over page numbers. 64-bit: 48-bit addresses,
 * 35-bit page numbers = 15 root bits + 20 leaf bits; 32-bit: 19 = 9 + 10.
 * Leaves are mapped on demand and never freed, so a reader needs no lock:
 * root entries are published with release stores, entries are relaxed
 * atomics (a reader asking about a live block always sees the entry written
 * before the block was handed out, through the happens-before that gave it
 * the pointer). Each leaf holds the span of every page and, for pages of
 * small spans, a 16-bit entry: the size class in the low byte and the
 * span's owner tag in the high byte (the tag of the thread cache that last
 * took blocks out of the span's bitmap, central.c; 0 for none), so free()
 * finds both in two loads. The tag is written under the class lock and read
 * by any thread, relaxed: it only steers where a freed block goes.
 */
#if UINTPTR_MAX > 0xffffffffu
#define PM_ADDR_BITS 48u
#define PM_LEAF_BITS 20u
#else
#define PM_ADDR_BITS 32u
#define PM_LEAF_BITS 10u
#endif
#define PM_ROOT_BITS (PM_ADDR_BITS - PAGE_SHIFT - PM_LEAF_BITS)
#define PM_LEAF_SIZE ((size_t)1 << PM_LEAF_BITS)
#define PM_ROOT_SIZE ((size_t)1 << PM_ROOT_BITS)

typedef struct pm_leaf {
    _Atomic uint16_t classes[PM_LEAF_SIZE]; /* class | owner tag << 8; first: */
    _Atomic(span *) spans[PM_LEAF_SIZE];    /* free()'s load needs no offset  */
} pm_leaf;

/* Owner tags: 1 .. PM_TAG_MAX, 0 = no owner. */
#define PM_TAG_MAX 255u

extern _Atomic(pm_leaf *) rtmm_pm_root[PM_ROOT_SIZE];

/* The leaf of an address, or NULL (never mapped, or beyond 48 bits). */
RTM_INLINE pm_leaf *pm_leaf_of(uintptr_t a)
{
    uintptr_t i = a >> (PAGE_SHIFT + PM_LEAF_BITS);
    if (RTM_UNLIKELY(i >= PM_ROOT_SIZE))
        return NULL;
    return atomic_load_explicit(&rtmm_pm_root[i], memory_order_acquire);
}
RTM_INLINE size_t pm_index(uintptr_t a) { return (a >> PAGE_SHIFT) & (PM_LEAF_SIZE - 1u); }

/* Hot path: the page's entry, class | owner tag << 8 (0: not a small
 * block). */
RTM_INLINE unsigned pm_entry(uintptr_t a)
{
    pm_leaf *l = pm_leaf_of(a);
    return l ? atomic_load_explicit(&l->classes[pm_index(a)], memory_order_relaxed) : 0u;
}
/* The size class of the page holding a (0: not a small block). */
RTM_INLINE unsigned pm_class(uintptr_t a) { return pm_entry(a) & 0xffu; }
RTM_INLINE span *pm_span(uintptr_t a)
{
    pm_leaf *l = pm_leaf_of(a);
    return l ? atomic_load_explicit(&l->spans[pm_index(a)], memory_order_relaxed) : NULL;
}

/* Maps the leaves covering [start, start + pages pages); -1 on ENOMEM.
 * Called with the heap lock held. */
int rtmm_pm_ensure(uintptr_t start, size_t pages);
/* Sets span (and class) for every page of s, or for its first and last
 * page only (free spans). Leaves must exist. */
void rtmm_pm_set_all(const span *s, span *value, unsigned cls);
void rtmm_pm_set_ends(span *s);
/* Sets the owner tag of every page of small span s (class lock held). */
void rtmm_pm_set_owner(span *s, unsigned tag);
/* Pre-faults the page-map entries of a range (real-time mode). */
void rtmm_pm_prefault(uintptr_t start, size_t pages);
size_t rtmm_pm_bytes(void);

/* --- metadata (meta.c) ------------------------------------------------------ */

/* Zeroed metadata memory, 64-byte aligned, never freed; NULL on ENOMEM
 * (in real-time mode: when the prepared metadata region is used up). */
void *rtmm_meta_alloc(size_t bytes);
/* Span records, recycled through a free list. */
span *rtmm_span_new(void);
void rtmm_span_delete(span *s);
/* Real-time mode: pre-faults and locks `bytes` of metadata now and serves
 * every later rtmm_meta_alloc from it. 0, or -1 on ENOMEM. */
int rtmm_meta_reserve(size_t bytes);
size_t rtmm_meta_bytes(void);
void rtmm_meta_fork_lock(int take);

/* --- page heap (pageheap.c) -------------------------------------------------- */

/* A span of `pages` pages, registered in the page map for every page with
 * state `state` and class `cls` (0 for large); NULL with ENOMEM (counted in
 * arena_exhausted in real-time mode). align_pages > 1 returns a span whose
 * start is a multiple of align_pages pages. */
span *rtmm_heap_alloc(size_t pages, size_t align_pages, unsigned state, unsigned cls);
/* Gives a small or large span back: coalesces, starts its decay. */
void rtmm_heap_free(span *s);
/* Resizes large span s in place to `pages` pages: shrinking frees the
 * tail; growing takes the free runs right after s. 0, or -1 when the
 * pages after it are not free or too few (s unchanged), or when no span
 * record could be had (s may then have grown part way). No OS call. */
int rtmm_heap_resize(span *s, size_t pages);
/* Huge requests: their own mapping, registered in the page map. */
span *rtmm_huge_alloc(size_t bytes, size_t align);
void rtmm_huge_free(span *s);
/* Resizes huge span s to hold `bytes` (still a huge size) by moving its
 * pages, never copying them: shrinks in place, grows in place when the
 * address space after it is free, else moves the pages to a new mapping
 * (mremap). The block's new address, or NULL with s unchanged (the caller
 * copies; also where the OS has no mremap). Not in real-time mode. */
void *rtmm_huge_resize(span *s, size_t bytes);
/* Purges free runs idle for decay_ms (all of them when force). Returns the
 * bytes purged. Takes the heap lock. */
size_t rtmm_heap_purge(int force);
/* Real-time mode: maps, pre-faults and locks the arena as the heap's only
 * memory. 0 or -1 (ENOMEM). */
int rtmm_heap_arena(size_t bytes);

typedef struct heap_totals {
    size_t mapped, free_pages, dirty_pages, small_pages, large_pages, huge_bytes, purges;
    size_t arena_bytes, arena_exhausted;
    int arena_locked;
} heap_totals;
heap_totals rtmm_heap_totals(void);
int rtmm_heap_check(void);
void rtmm_heap_fork_lock(int take);

/* --- central lists (central.c) ---------------------------------------------- */

/* Takes up to n free blocks of class cls into out[]; returns how many
 * (0: out of memory). Bounded: at most n blocks and one span. A span
 * blocks are taken from gets owner tag `tag` (0: left as is). */
uint32_t rtmm_central_fetch(unsigned cls, void **out, uint32_t n, unsigned tag);
/* Gives n blocks of class cls back (any thread's). */
void rtmm_central_release(unsigned cls, void *const *blocks, uint32_t n);
/* The same, straight to their spans' bitmaps (never the transfer cache):
 * foreign frees (tcache.c), whose line neighbours may still be out. */
void rtmm_central_return(unsigned cls, void *const *blocks, uint32_t n);
/* Moves blocks that sat unused in transfer caches for a whole decay
 * period back to their spans (all of them when force). */
void rtmm_central_drain(int force);
int rtmm_central_init(void);
void rtmm_central_totals(size_t *span_bytes, size_t *out_bytes, size_t *xfer_bytes);
int rtmm_central_check(void);
/* 1 when p is a block of class cls that its span counts as handed out. */
int rtmm_central_block_ok(unsigned cls, const void *p);
/* Fork handlers' helpers (here and in every layer): take > 0 takes the
 * layer's locks, 0 gives them back, < 0 resets them (in the child). */
void rtmm_central_fork_lock(int take);

/* --- thread caches (tcache.c) ------------------------------------------------ */

/* One bin per class: a stack of free blocks, slots[0 .. count). An array,
 * not a list threaded through the blocks, so that a cached block is never
 * written to or read from (no cache miss on user memory). cap is the bin's
 * current limit, adapted to the thread's use of the class (tcache.c,
 * "Adaptive bins"): between bin_min_cap() and the class's cap, never above
 * 256 (sizeclass.c), hence 16 bits; the struct stays 16 bytes so that the
 * fast paths index the bins with a shift. */
typedef struct tbin {
    void **slots;
    uint32_t count;
    uint16_t cap;
    uint8_t demand;    /* allocation misses (tcache.c, BIN_DEMAND/USED)    */
    uint8_t overflows; /* overflows in a row without such a miss           */
} tbin;

/* HOT: a block onto a bin with room. The slot is written before the count
 * covers it (a compiler fence, no instruction): a fork() child that finds
 * the thread here sees the block either not yet cached or cached, never a
 * stale slot counted in (tcache.c, "Fork"). */
RTM_INLINE void bin_push(tbin *b, void *p)
{
    uint32_t n = b->count;
    b->slots[n] = p;
    atomic_signal_fence(memory_order_release);
    b->count = n + 1u;
}

/* Foreign frees held by a thread cache before they go to the central lists
 * as a batch (tcache.c, "False sharing"). */
#define TC_FOREIGN 64u
_Static_assert(TC_FOREIGN <= 255u, "flush_foreign counts a batch in bytes");

typedef struct tcache {
    tbin bins[NCLASS];
    uint32_t tag;               /* owner tag, 1 .. PM_TAG_MAX (page map)   */
    uint32_t nforeign;          /* foreign[0 .. nforeign): other owners'   */
    struct tcache *next, *prev; /* registry: live or free                  */
    uint32_t ticks;             /* slow paths since the last maintenance   */
    int live;
    int busy;         /* inside a slow path: a fork child leaves it (tcache.c) */
    uint64_t trim_ms; /* start of the idle-trim period           */
    void *foreign[TC_FOREIGN];
    uint8_t fcls[TC_FOREIGN]; /* their classes */
} tcache;

/* The calling thread's cache; NULL before its first allocation. After the
 * thread's exit destructor ran it is &rtmm_tc_dead, whose bins have
 * capacity 0: every operation then takes the slow path to the central
 * lists directly. */
extern _Thread_local tcache *rtmm_tc_self __attribute__((tls_model("initial-exec")));
extern tcache rtmm_tc_dead;

/* Slow paths of fastpath.h's fast paths (noinline). The allocation one
 * is called only after initialisation (a thread's first allocation comes
 * through rtmm_alloc_first(), which initialises); it takes the size, not
 * the class, because for that first allocation the fast path could not
 * look the class up (the table may still be filling in another thread). */
void *rtmm_tc_alloc_slow(size_t size);
void rtmm_tc_free_slow(void *p, unsigned cls);
int rtmm_tc_init(void);
/* Bytes of one thread cache (struct and slot arrays). */
size_t rtmm_tc_bytes(void);
/* Real-time mode: makes n caches now, from the locked metadata region. */
void rtmm_tc_prepare(unsigned n);
void rtmm_tc_flush_self(void);
size_t rtmm_tc_totals(size_t *threads, size_t *reclaimed);
int rtmm_tc_check(void);
void rtmm_tc_fork_lock(int take);
void rtmm_tc_fork_child(void);

#endif /* RTM_MALLOC_INTERNAL_H */
