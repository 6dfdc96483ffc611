// SPDX-License-Identifier: MIT
/*
 * malloc/tcache.c -- thread caches: per thread, per size class, a bounded
 * stack of free blocks. The fast paths (fastpath.h) pop and push on it with
 * no lock and no atomic; this file holds everything slower: creating a
 * cache at a thread's first allocation, refilling an empty bin and flushing
 * a full one (a batch to or from the central lists), and taking a cache
 * back when its thread exits.
 *
 * Bounds: a bin holds at most cap[cls] blocks (128 KiB worth, 8 to 256
 * blocks, sizeclass.c), so a thread holds at most 8 MiB of free blocks
 * (the sum over the 72 classes; 2 MiB for classes up to 4 KiB), whatever
 * other threads do, plus TC_FOREIGN foreign blocks (below).
 *
 * False sharing: every cache has an owner tag (1 .. 255, internal.h), and a
 * span records in the page map the tag of the cache that last took blocks
 * out of it (central.c). The free fast path compares the two: a block of a
 * span this cache owns goes on its bin as before; any other is a foreign
 * free (the slow path). A foreign block of a class whose blocks share cache
 * lines (class_info.group > 1) is never reused by this thread: it waits in
 * the cache's foreign batch (TC_FOREIGN blocks, any classes), which goes
 * back to the blocks' spans when full (not to the transfer cache, whence
 * any thread could get it: a span hands out only whole line groups). Why: in Hoard's cache-scratch
 * a thread frees a block another thread allocated next to blocks it handed to a third, and then
 * allocates: with the freed block back from its own bin it wrote into a line shared with other
 * threads (17 ns per write against mimalloc's 9, docs/MALLOC.md "False sharing"). Now it refills
 * from a span, in whole line groups. A foreign block of a class whose blocks fill whole lines goes
 * on the bin as before, on the fast path (fastpath.h) unless the bin is full. Tags are reused
 * modulo 255: two caches with one tag only fall back to the old behaviour. A producer/consumer pair
 * never makes either cache grow: the consumer's frees are foreign.
 *
 * Adaptive bins: a bin's limit starts at bin_min_cap() (1/16 of the class's
 * cap) and doubles at each allocation that finds the bin empty, up to the
 * class's cap; a refill brings half the current limit, at most the class's
 * batch (32 KiB worth, sizeclass.c). When a bin overflows
 * twice in a row without an allocation miss between, the thread frees more
 * of that class than it allocates (a consumer): the limit halves, down to
 * the minimum. Why: with fixed limits a consumer kept up to 128 KiB per
 * class of blocks it would never reuse, and a producer refilled 64 KiB per
 * class at a time: rtmem's producer/consumer peak RSS was 1.7-2.0x
 * mimalloc's. A thread that allocates what it frees keeps the full limit.
 *
 * Idle trim: once per decay period (looked at every MAINT_TICKS slow
 * paths), a bin that no allocation found empty during the last period
 * gives all its blocks back and returns to its smallest limit (trim_idle),
 * so a thread that stopped allocating a class stops holding it. Only the
 * owning thread touches its cache (the fast paths take no lock), so a
 * thread that runs no slow path keeps what it holds, within the bounds.
 *
 * Thread exit: a pthread key's destructor flushes every bin to the central
 * lists and puts the cache on the free list for the next new thread; the
 * thread's later frees (other destructors, libc's own clean-up) go straight
 * to the central lists through rtmm_tc_dead, a cache whose bins have
 * capacity 0. The key is created at initialisation, early enough to be one
 * of the 32 that glibc stores without allocating.
 *
 * Lock: reg_lock (registry of caches), outermost; never held while calling
 * the central lists.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "malloc/internal.h"
#include "os/pages.h"

_Thread_local tcache *rtmm_tc_self __attribute__((tls_model("initial-exec")));
tcache rtmm_tc_dead;

static rtmm_lock reg_lock;
static tcache *live_head, *free_head;
static size_t live_count, reclaimed_count;
static pthread_key_t exit_key;
static int key_ok;
static _Atomic uint64_t last_maintenance;
static atomic_uint tag_next;

#define MAINT_TICKS 256u

/* tbin.demand's bits: an allocation missed since the last overflow (the
 * adaptive bins), and since the last idle trim. */
#define BIN_DEMAND 1u
#define BIN_USED   2u

/* --- registry ----------------------------------------------------------------- */

static void reg_unlink(tcache **head, tcache *tc)
{
    if (tc->prev)
        tc->prev->next = tc->next;
    else
        *head = tc->next;
    if (tc->next)
        tc->next->prev = tc->prev;
    tc->next = tc->prev = NULL;
}

static void reg_push(tcache **head, tcache *tc)
{
    tc->prev = NULL;
    tc->next = *head;
    if (*head)
        (*head)->prev = tc;
    *head = tc;
}

/* The smallest limit of a bin of class cls (adaptive bins, above). */
static uint16_t bin_min_cap(unsigned cls)
{
    uint32_t cap = rtmm_class[cls].cap;
    return (uint16_t)(cap / 16u > 2u ? cap / 16u : cap < 2u ? cap : 2u);
}

/* Every bin back at its smallest limit: a new cache, or one given back. */
static void bins_reset(tcache *tc)
{
    for (unsigned c = 1; c < rtmm_nclass; c++) {
        tc->bins[c].cap = bin_min_cap(c);
        tc->bins[c].demand = 0;
        tc->bins[c].overflows = 0;
    }
}

size_t rtmm_tc_bytes(void)
{
    size_t slots = 0;
    for (unsigned c = 1; c < rtmm_nclass; c++)
        slots += rtmm_class[c].cap;
    return sizeof(tcache) + slots * sizeof(void *);
}

/* A fresh cache from metadata: the bins' slot arrays follow the struct. */
static tcache *cache_make(void)
{
    tcache *tc = rtmm_meta_alloc(rtmm_tc_bytes());
    if (tc == NULL)
        return NULL;
    void **slots = (void **)(tc + 1);
    for (unsigned c = 1; c < rtmm_nclass; c++) {
        tc->bins[c].slots = slots;
        slots += rtmm_class[c].cap;
    }
    bins_reset(tc);
    tc->tag = atomic_fetch_add_explicit(&tag_next, 1, memory_order_relaxed) % PM_TAG_MAX + 1u;
    return tc;
}

static tcache *cache_create(void)
{
    lock_take(&reg_lock);
    tcache *tc = free_head;
    if (tc)
        reg_unlink(&free_head, tc);
    lock_give(&reg_lock);
    if (tc == NULL)
        tc = cache_make();
    if (tc == NULL) { /* real-time metadata used up: run without a cache */
        rtmm_tc_self = &rtmm_tc_dead;
        return NULL;
    }
    tc->live = 1;
    tc->busy = 0; /* a reused cache was left busy by its last thread's exit */
    tc->ticks = 0;
    tc->trim_ms = 0;
    lock_take(&reg_lock);
    reg_push(&live_head, tc);
    live_count++;
    lock_give(&reg_lock);
    rtmm_tc_self = tc;
    /* May allocate (a key >= 32): safe now that rtmm_tc_self is set. */
    if (key_ok)
        (void)pthread_setspecific(exit_key, tc);
    return tc;
}

/* Moves the bottom n blocks of a bin (the longest cached) to the central
 * list and slides the rest down. */
static void flush_bin(tcache *tc, unsigned cls, uint32_t n)
{
    tbin *b = &tc->bins[cls];
    if (n > b->count)
        n = b->count;
    if (n == 0)
        return;
    rtmm_central_release(cls, b->slots, n);
    memmove(b->slots, b->slots + n, (b->count - n) * sizeof(void *));
    b->count -= n;
}

/* Gives the foreign batch back to the central lists, one call per class.
 * The batch is grouped by class with a counting sort (O(n + classes)):
 * a producer/consumer's consumer holds blocks of a dozen or more classes
 * in one batch, and picking them out class by class rescanned the batch
 * each time (about 170 instructions per block with the returns, callgrind,
 * docs/MALLOC.md "Producer/consumer"). */
static void flush_foreign(tcache *tc)
{
    void *run[TC_FOREIGN];
    uint8_t at[NCLASS];
    uint32_t n = tc->nforeign, start = 0;
    memset(at, 0, sizeof at);
    for (uint32_t i = 0; i < n; i++)
        at[tc->fcls[i]]++;
    for (unsigned c = 0; c < NCLASS; c++) { /* counts -> start of each class's run */
        uint32_t k = at[c];
        at[c] = (uint8_t)start;
        start += k;
    }
    for (uint32_t i = 0; i < n; i++)
        run[at[tc->fcls[i]]++] = tc->foreign[i];
    /* at[c] is now the end of class c's run, and the start of the next. */
    for (unsigned c = 0, from = 0; c < NCLASS && from < n; c++) {
        if (at[c] != from)
            rtmm_central_return(c, run + from, at[c] - from);
        from = at[c];
    }
    tc->nforeign = 0;
}

static void flush_all(tcache *tc)
{
    for (unsigned c = 1; c < rtmm_nclass; c++)
        flush_bin(tc, c, tc->bins[c].count);
    flush_foreign(tc);
}

/* Fork. A fork() child takes back every other thread's cache
 * (rtmm_tc_fork_child), and that thread may have been anywhere when the
 * parent forked. Its fast paths leave nothing the child could hand out
 * twice (bin_push writes the slot before the count covers it; a pop lowers
 * the count before the block leaves: at worst a block is lost to the
 * child). Its slow paths move blocks between the cache and the central
 * lists in several steps (release, then lower the count), so they mark the
 * cache busy, and the child abandons a busy cache instead of giving its
 * blocks back: a leak in the child rather than a block in two places.
 * The compiler fences keep the marks around the work; on x86 stores reach
 * memory in program order, so the child sees them in that order too. */
static inline void cache_enter(tcache *tc)
{
    tc->busy = 1;
    atomic_signal_fence(memory_order_seq_cst);
}

static inline void cache_leave(tcache *tc)
{
    atomic_signal_fence(memory_order_seq_cst);
    tc->busy = 0;
}

/* Gives a cache back: its blocks to the central lists, itself to the free
 * list. The caller makes sure no thread uses it any more. */
static void cache_retire(tcache *tc)
{
    flush_all(tc);
    bins_reset(tc);
    tc->live = 0;
    lock_take(&reg_lock);
    reg_unlink(&live_head, tc);
    reg_push(&free_head, tc);
    live_count--;
    reclaimed_count++;
    lock_give(&reg_lock);
}

static void on_thread_exit(void *arg)
{
    rtmm_tc_self = &rtmm_tc_dead;
    cache_enter(arg); /* never left: the cache is on the free list after */
    cache_retire(arg);
}

void rtmm_tc_prepare(unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        tcache *tc = cache_make();
        if (tc == NULL)
            return;
        lock_take(&reg_lock);
        reg_push(&free_head, tc);
        lock_give(&reg_lock);
    }
}

int rtmm_tc_init(void)
{
    key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
    return 0;
}

/* --- maintenance ----------------------------------------------------------------- */

/* Idle trim: every bin whose allocations did not miss during the last
 * period (no refill: the thread has not allocated that class beyond what
 * the bin held) gives all its blocks back and returns to its smallest
 * limit; so does the foreign batch. */
static void trim_idle(tcache *tc)
{
    for (unsigned c = 1; c < rtmm_nclass; c++) {
        tbin *b = &tc->bins[c];
        if (!(b->demand & BIN_USED)) {
            flush_bin(tc, c, b->count);
            b->cap = bin_min_cap(c);
            b->demand = 0;
            b->overflows = 0;
        }
        b->demand &= (uint8_t)~BIN_USED;
    }
    flush_foreign(tc);
}

/* Every MAINT_TICKS slow paths a thread looks at the clock. Once per decay
 * period (1 s when the decay is off) it trims its own idle bins
 * (trim_idle), and one thread of all drains the transfer caches' idle
 * blocks to their spans and purges idle free runs. No lock is held here. */
static void maybe_maintain(tcache *tc)
{
    if (++tc->ticks < MAINT_TICKS || rtmm_rt_mode)
        return;
    tc->ticks = 0;
    uint64_t period = rtmm_opt.decay_ms > 0 ? (uint64_t)rtmm_opt.decay_ms : 1000u;
    uint64_t now = rtm_os_now_ms();
    if (tc->trim_ms == 0) {
        tc->trim_ms = now;
    } else if (now - tc->trim_ms >= period) {
        trim_idle(tc);
        tc->trim_ms = now;
    }
    uint64_t last = atomic_load_explicit(&last_maintenance, memory_order_relaxed);
    if (now - last < period ||
        !atomic_compare_exchange_strong_explicit(&last_maintenance, &last, now,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    rtmm_central_drain(0);
    (void)rtmm_heap_purge(0);
}

/* --- slow paths ------------------------------------------------------------------- */

/* An allocation found the bin empty: the thread uses this class, so its
 * limit grows (doubling, up to the class's cap). */
static void bin_missed(tbin *b, unsigned cls)
{
    uint32_t grown = (uint32_t)b->cap * 2u;
    b->cap = (uint16_t)(grown < rtmm_class[cls].cap ? grown : rtmm_class[cls].cap);
    b->demand = BIN_DEMAND | BIN_USED;
    b->overflows = 0;
}

/* A free found the bin full. When an allocation missed since the last
 * overflow, the thread uses the class: flush down to half the limit. When
 * none did, the thread frees this class and does not allocate it (a
 * consumer): flush the whole bin, since the blocks left would only wait
 * for the next flush, and halve the limit when this is the second such
 * overflow in a row. Why whole: a consumer's bins sit at their smallest
 * limit (8 blocks of 1 KiB), so leaving half moved 4 blocks per class lock
 * (0.12 lock round trips per block in producer/consumer, docs/MALLOC.md
 * "Producer/consumer"). */
static void bin_overflowed(tcache *tc, tbin *b, unsigned cls)
{
    if (b->demand & BIN_DEMAND) {
        b->demand &= (uint8_t)~BIN_DEMAND;
        b->overflows = 0;
        flush_bin(tc, cls, b->count - b->cap / 2u);
        return;
    }
    if (++b->overflows >= 2u) {
        uint16_t min = bin_min_cap(cls);
        b->cap = b->cap / 2u > min ? (uint16_t)(b->cap / 2u) : min;
        b->overflows = 0;
    }
    flush_bin(tc, cls, b->count);
}

/* The allocation slow path's work on the calling thread's cache: a block
 * of class cls, refilling an empty bin from the central list; NULL when
 * the central list has none. */
static void *refill_and_take(tcache *tc, unsigned cls)
{
    tbin *b = &tc->bins[cls];
    if (b->count == 0) {
        uint32_t want = b->cap > 1u ? b->cap / 2u : 1u;
        if (want > rtmm_class[cls].batch)
            want = rtmm_class[cls].batch;
        b->count = rtmm_central_fetch(cls, b->slots, want, tc->tag);
        if (b->count == 0)
            return NULL;
        bin_missed(b, cls);
        maybe_maintain(tc);
    }
    return b->slots[--b->count];
}

/* Called only once the allocator is initialised: by the fast path of a
 * thread that has a cache (its creation came after initialisation), or
 * through rtmm_alloc_first() (options.c), which initialises first. */
RTM_NOINLINE void *rtmm_tc_alloc_slow(size_t size)
{
    unsigned cls = rtmm_class_index[class_slot(size)];
    tcache *tc = rtmm_tc_self;
    if (tc == NULL)
        tc = cache_create();
    if (tc == NULL || tc == &rtmm_tc_dead) { /* no cache: one block, straight */
        void *p = NULL;
        return rtmm_central_fetch(cls, &p, 1, 0) ? p : NULL;
    }
    cache_enter(tc);
    void *p = refill_and_take(tc, cls);
    cache_leave(tc);
    return p;
}

/* The free slow path's work on the calling thread's cache: p, of class
 * cls, to the foreign batch or the bin, making room first. */
static void put_in_cache(tcache *tc, void *p, unsigned cls)
{
    if (pm_entry((uintptr_t)p) >> 8 != tc->tag && rtmm_class[cls].group > 1u) {
        tc->foreign[tc->nforeign] = p; /* another cache's span: not reused here */
        tc->fcls[tc->nforeign] = (uint8_t)cls;
        if (++tc->nforeign == TC_FOREIGN) {
            flush_foreign(tc);
            maybe_maintain(tc);
        }
        return;
    }
    tbin *b = &tc->bins[cls];
    if (b->count >= b->cap) {
        bin_overflowed(tc, b, cls);
        maybe_maintain(tc);
    }
    bin_push(b, p);
}

RTM_NOINLINE void rtmm_tc_free_slow(void *p, unsigned cls)
{
    int saved = errno;
    tcache *tc = rtmm_tc_self;
    if (tc == NULL)
        tc = cache_create();
    if (tc == NULL || tc == &rtmm_tc_dead) {
        rtmm_central_release(cls, &p, 1);
    } else {
        cache_enter(tc);
        put_in_cache(tc, p, cls);
        cache_leave(tc);
    }
    errno = saved;
}

void rtmm_tc_flush_self(void)
{
    tcache *tc = rtmm_tc_self;
    if (tc != NULL && tc != &rtmm_tc_dead) {
        cache_enter(tc);
        flush_all(tc);
        cache_leave(tc);
    }
}

/* --- statistics, check, fork ---------------------------------------------------------- */

size_t rtmm_tc_totals(size_t *threads, size_t *reclaimed)
{
    size_t bytes = 0;
    lock_take(&reg_lock);
    for (tcache *tc = live_head; tc; tc = tc->next) { /* racy for others */
        for (unsigned c = 1; c < rtmm_nclass; c++)
            bytes += (size_t)tc->bins[c].count * rtmm_class[c].size;
        for (uint32_t i = 0; i < tc->nforeign && i < TC_FOREIGN; i++)
            bytes += rtmm_class[tc->fcls[i]].size;
    }
    *threads = live_count;
    *reclaimed = reclaimed_count;
    lock_give(&reg_lock);
    return bytes;
}

int rtmm_tc_check(void)
{
    tcache *tc = rtmm_tc_self;
    if (tc == NULL || tc == &rtmm_tc_dead)
        return 0;
    for (unsigned c = 1; c < rtmm_nclass; c++) {
        const tbin *b = &tc->bins[c];
        if (b->count > b->cap || b->cap < bin_min_cap(c) || b->cap > rtmm_class[c].cap)
            return -1;
        for (uint32_t i = 0; i < b->count; i++)
            if (pm_class((uintptr_t)b->slots[i]) != c || !rtmm_central_block_ok(c, b->slots[i]))
                return -1;
    }
    if (tc->nforeign >= TC_FOREIGN)
        return -1;
    for (uint32_t i = 0; i < tc->nforeign; i++)
        if (pm_class((uintptr_t)tc->foreign[i]) != tc->fcls[i] ||
            !rtmm_central_block_ok(tc->fcls[i], tc->foreign[i]))
            return -1;
    return 0;
}

void rtmm_tc_fork_lock(int take)
{
    if (take > 0)
        lock_take(&reg_lock);
    else if (take == 0)
        lock_give(&reg_lock);
    else
        lock_reset(&reg_lock);
}

/* In the child of fork() only the forking thread exists: every other
 * thread's cache is taken back now (their blocks are valid, their owners
 * gone). Called with every lock reset. */
void rtmm_tc_fork_child(void)
{
    tcache *tc = live_head;
    while (tc != NULL) {
        tcache *next = tc->next;
        if (tc == rtmm_tc_self) {
            tc = next;
            continue;
        }
        if (tc->busy) { /* caught mid-way (see cache_enter): abandoned */
            reg_unlink(&live_head, tc);
            live_count--;
        } else {
            cache_retire(tc);
        }
        tc = next;
    }
}
