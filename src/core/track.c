// SPDX-License-Identifier: MIT
/*
 * core/track.c -- the tracked twins of the generic API (core/track.h): the
 * same calls as core/heap.c, with valgrind client requests or ASan
 * poisoning around the kind's operation. Compiled only into hosted builds;
 * empty unless RTM_TRACK_VALGRIND or RTM_TRACK_ASAN is 1.
 *
 * What a tracked heap looks like to the tool:
 *
 *   region [mem, mem + bytes)           after rtm_heap_create: inaccessible
 *   +--------+-----+------------+-----+------------+------------------
 *   | control| hdr | block: size | pad | hdr | free block ...
 *   +--------+-----+-------------+-----+-----+------------------------
 *                   ^ accessible  ^ inaccessible (the rest of the usable
 *                   for exactly     size, headers, free blocks, the control
 *                   the request     structure)
 *
 * A heap is tracked iff it was created through rtm_heap_create in a tracked
 * build. Valgrind: each tracked heap is a mempool anchored at its handle
 * (VALGRIND_MEMPOOL_EXISTS tells tracked from untracked handles), blocks are
 * its chunks, so memcheck's leak check reports unreachable rtm blocks.
 * ASan: a tracked heap's control structure is poisoned, so a poisoned
 * handle marks a tracked heap; ASan has no leak check for poisoned regions.
 *
 * Whether an operation succeeded is read from errno (cleared before, the
 * caller's value put back after), because the descriptors' free returns
 * nothing: a refused free (double, foreign, interior pointer) must change
 * no marking, since the heap did not release anything.
 *
 * What each live block exposes (its requested size, or its usable size
 * once rtm_usable_size was asked) is kept in a side table here (the live
 * table below), not asked of the heap: free and realloc then make exactly
 * one call into the heap, as untracked, so a refused pointer reaches the
 * error handler exactly as often as in an untracked build (asking the heap
 * the pointer's usable size first would report a stale or foreign pointer
 * twice). The table is mmap'd, never malloc'd: a program whose malloc is
 * built on rtm heaps must not recurse into it.
 *
 * Realloc marks the kept prefix of the block defined (valgrind): the heap
 * copied it while the destination was inaccessible, which memcheck does not
 * follow, so bytes that were undefined in the old block count as defined in
 * the new one (a missed report, never a false one). rtm_usable_size widens
 * a live block's accessible range to the usable size: the call is the
 * documented permission to use those bytes, as malloc_usable_size is for
 * malloc (glibc; ASan's malloc_usable_size returns the requested size
 * instead, rtm_usable_size keeps returning the heap's real usable size,
 * which tests and callers rely on, and opens it).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#include "core/track.h"

#if RTM_TRACK
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#if RTM_TRACK_VALGRIND
#include <valgrind/memcheck.h>
#else
#include <sanitizer/asan_interface.h>
#endif

/* What the generic layer knows of a control structure: its first word. */
struct rtm_heap {
    uint32_t kind;
};

/* ---- the two tools behind one vocabulary ---------------------------- */

#if RTM_TRACK_VALGRIND
/* The heaps touch inaccessible headers and links: reporting off around
 * every operation (a counter in valgrind, so it nests). */
static void quiet_begin(void) { VALGRIND_DISABLE_ERROR_REPORTING; }
static void quiet_end(void) { VALGRIND_ENABLE_ERROR_REPORTING; }
static int tracked(const rtm_heap *h) { return VALGRIND_MEMPOOL_EXISTS(h) != 0; }
static void hide(const void *p, size_t n) { (void)VALGRIND_MAKE_MEM_NOACCESS(p, n); }
static void expose(const void *p, size_t n) { (void)VALGRIND_MAKE_MEM_DEFINED(p, n); }
static void pool_open(const rtm_heap *h)
{
    if (VALGRIND_MEMPOOL_EXISTS(h))
        VALGRIND_DESTROY_MEMPOOL(h); /* a region reused without destroy */
    VALGRIND_CREATE_MEMPOOL(h, 0, 0);
}
static void pool_close(const rtm_heap *h) { VALGRIND_DESTROY_MEMPOOL(h); }
static void block_on(const rtm_heap *h, const void *p, size_t size)
{
    VALGRIND_MEMPOOL_ALLOC(h, p, size);
}
static void block_off(const rtm_heap *h, const void *p, size_t exposed)
{
    (void)exposed; /* memcheck knows the chunk's size */
    VALGRIND_MEMPOOL_FREE(h, p);
}
/* A live block's accessible bytes made `usable` long (rtm_usable_size). */
static void block_widen(const rtm_heap *h, const void *p, size_t usable)
{
    quiet_begin();
    uintptr_t bad = VALGRIND_CHECK_MEM_IS_ADDRESSABLE(p, usable);
    quiet_end();
    if (bad == 0 || bad == (uintptr_t)p)
        return; /* all accessible already, or not a live block */
    VALGRIND_MEMPOOL_CHANGE(h, p, p, usable);
    (void)VALGRIND_MAKE_MEM_UNDEFINED(bad, (uintptr_t)p + usable - bad);
}
#else
static void quiet_begin(void) {}
static void quiet_end(void) {}
static int tracked(const rtm_heap *h) { return __asan_address_is_poisoned(h) != 0; }
static void hide(const void *p, size_t n) { __asan_poison_memory_region(p, n); }
static void expose(const void *p, size_t n) { __asan_unpoison_memory_region(p, n); }
static void pool_open(const rtm_heap *h) { (void)h; }
static void pool_close(const rtm_heap *h) { (void)h; }
static void block_on(const rtm_heap *h, const void *p, size_t size)
{
    (void)h;
    __asan_unpoison_memory_region(p, size);
}
/* The rest of the block (beyond what it exposed) is poisoned already. */
static void block_off(const rtm_heap *h, const void *p, size_t exposed)
{
    (void)h;
    __asan_poison_memory_region(p, exposed);
}
static void block_widen(const rtm_heap *h, const void *p, size_t usable)
{
    (void)h;
    /* A zero-size block is poisoned from its first byte: widened too (the
     * heap vouched for the pointer; a stale one only loses reports). */
    __asan_unpoison_memory_region(p, usable);
}
#endif

/* ---- errno: did the operation refuse? ------------------------------- */

typedef struct {
    int saved;
} errno_probe;

static errno_probe probe_begin(void)
{
    errno_probe e = {errno};
    errno = 0;
    return e;
}

/* 1 when the operation set errno (refused); the caller's errno is back
 * otherwise. */
static int probe_end(errno_probe e)
{
    if (errno != 0)
        return 1;
    errno = e.saved;
    return 0;
}

/* ---- the kind of a handle, and whether to annotate it --------------- */

static const rtm_heap_kind *kind_of(const rtm_heap *h)
{
    if (h == NULL)
        return NULL;
    quiet_begin();
    const rtm_heap_kind *k = rtm_kind_find(h->kind);
    quiet_end();
    return k;
}

/* Annotate only named algorithms (layers annotate through their inner
 * heap) created by rtm_heap_create in this build. */
static int annotated(const rtm_heap_kind *k, const rtm_heap *h)
{
    return k->create != NULL && tracked(h);
}

static void *bad_heap(void)
{
    errno = EINVAL;
    return NULL;
}

/* ---- the live table: what each tracked block exposes ---------------- */

/* Open addressing on the block's address, linear probing, deletion by
 * shifting the run back (no tombstones). Grows by doubling, in memory from
 * mmap; never shrinks. One spin lock: a locked heap calls in under its own
 * lock, and heaps of different threads share the table. A block the table
 * could not record (mmap failed) is still made accessible; its free then
 * poisons nothing (a missed report, never a false one). */
typedef struct {
    /* ~(address of the block); 0: an empty slot. Inverted because valgrind's
     * leak check scans this mmap'd table for pointers: a plain address would
     * keep every leaked rtm block "still reachable" instead of "definitely
     * lost" (tracking.valgrind.leak). */
    uintptr_t key;
    const rtm_heap *h;
    size_t exposed;
} live_entry;
static live_entry *live;
static size_t live_cap, live_count; /* live_cap: 0 or a power of two */
static int live_lock;

/* Spins a while, then naps: a SCHED_FIFO thread spinning on a holder of
 * lower priority on its own CPU would otherwise never let it run (the mt
 * heap's threads call in without any lock of their own; `rtmem latency`'s
 * contended test hung so in the ASan build). */
static void lock_live(void)
{
    for (unsigned spins = 0; __atomic_exchange_n(&live_lock, 1, __ATOMIC_ACQUIRE); spins++) {
        if (spins >= 100u) {
            struct timespec nap = {0, 20000};
            (void)nanosleep(&nap, NULL);
        }
    }
}
static void unlock_live(void) { __atomic_store_n(&live_lock, 0, __ATOMIC_RELEASE); }

static uintptr_t key_of(const void *ptr) { return ~(uintptr_t)ptr; }

static size_t live_home(uintptr_t key, size_t cap)
{
    uint64_t x = (uint64_t)key;
    x ^= x >> 29;
    x *= 0x9e3779b97f4a7c15u;
    return (size_t)(x >> 32) & (cap - 1u);
}

/* The slot holding ptr, or the empty slot where it would go. */
static size_t live_slot_of_key(uintptr_t key)
{
    size_t i = live_home(key, live_cap);
    while (live[i].key != 0 && live[i].key != key)
        i = (i + 1u) & (live_cap - 1u);
    return i;
}

static size_t live_slot(const void *ptr) { return live_slot_of_key(key_of(ptr)); }

static int live_grow(void)
{
    size_t cap = live_cap != 0 ? live_cap * 2u : 4096u;
    if (cap > SIZE_MAX / 2u / sizeof(live_entry))
        return -1;
    void *mem = mmap(NULL, cap * sizeof(live_entry), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return -1;
    live_entry *old = live;
    size_t old_cap = live_cap;
    live = mem; /* zero-filled: every slot empty */
    live_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key != 0)
            live[live_slot_of_key(old[i].key)] = old[i];
    if (old != NULL)
        (void)munmap(old, old_cap * sizeof(live_entry));
    return 0;
}

/* Removes slot i and shifts back the entries of its run that could have
 * lived there. */
static void live_erase(size_t i)
{
    size_t mask = live_cap - 1u, j = i;
    live[i].key = 0;
    live_count--;
    for (;;) {
        j = (j + 1u) & mask;
        if (live[j].key == 0)
            return;
        size_t home = live_home(live[j].key, live_cap);
        /* j's entry may move to i iff its home is not in (i, j]. */
        int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            live[i] = live[j];
            live[j].key = 0;
            i = j;
        }
    }
}

/* Records (or updates) what a live block of h exposes. */
static void live_put(const rtm_heap *h, const void *ptr, size_t exposed)
{
    lock_live();
    if ((live_count + 1u) * 4u > live_cap * 3u && live_grow() != 0) {
        if (live_cap == 0 || live_count + 1u >= live_cap) {
            unlock_live();
            return;
        }
    }
    size_t i = live_slot(ptr);
    if (live[i].key == 0)
        live_count++;
    live[i] = (live_entry){key_of(ptr), h, exposed};
    unlock_live();
}

/* Forgets a block of h; what it exposed, 0 when it was not recorded. */
static size_t live_take(const rtm_heap *h, const void *ptr)
{
    size_t exposed = 0;
    lock_live();
    if (live_cap != 0) {
        size_t i = live_slot(ptr);
        if (live[i].key != 0 && live[i].h == h) {
            exposed = live[i].exposed;
            live_erase(i);
        }
    }
    unlock_live();
    return exposed;
}

/* Forgets every block of h (h != NULL), or every block inside
 * [mem, mem + bytes) whatever its heap (h == NULL: a region reused). */
static void live_forget(const rtm_heap *h, const void *mem, size_t bytes)
{
    uintptr_t lo = (uintptr_t)mem, hi = lo + bytes;
    lock_live();
    for (size_t i = 0; i < live_cap;) {
        uintptr_t p = live[i].key != 0 ? ~live[i].key : 0;
        int gone = p != 0 && (h != NULL ? live[i].h == h : (p >= lo && p < hi));
        if (gone)
            live_erase(i); /* slot i may now hold a shifted entry: look again */
        else
            i++;
    }
    unlock_live();
}

/* ---- regions: create, add_pool, reset, destroy ---------------------- */

/* The regions of the tracked heaps, so that destroy gives each back whole
 * (the heaps do not record their region's end). A small fixed table behind
 * a spin lock: tracking is a debugging build, heaps are few. When it is
 * full, destroy falls back to the heap's walk (give_back below). */
#define REGIONS 256
typedef struct {
    const rtm_heap *h;
    unsigned char *mem;
    size_t bytes;
} region_entry;
static region_entry regions[REGIONS];
static int regions_lock;

static void lock_regions(void)
{
    while (__atomic_exchange_n(&regions_lock, 1, __ATOMIC_ACQUIRE))
        ;
}
static void unlock_regions(void) { __atomic_store_n(&regions_lock, 0, __ATOMIC_RELEASE); }

static int overlaps(const region_entry *r, const unsigned char *mem, size_t bytes)
{
    return r->h != NULL && r->mem < mem + bytes && mem < r->mem + r->bytes;
}

/* Records a region of h; forgets regions it reuses (their heap is gone). */
static void remember_region(const rtm_heap *h, void *mem, size_t bytes)
{
    lock_regions();
    region_entry *slot = NULL;
    for (int i = 0; i < REGIONS; i++) {
        if (overlaps(&regions[i], mem, bytes))
            regions[i].h = NULL;
        if (regions[i].h == NULL && slot == NULL)
            slot = &regions[i];
    }
    if (slot != NULL)
        *slot = (region_entry){h, mem, bytes};
    unlock_regions();
}

/* Gives back every recorded region of h; 0 when none was recorded. */
static int forget_regions(const rtm_heap *h)
{
    int found = 0;
    lock_regions();
    for (int i = 0; i < REGIONS; i++) {
        if (regions[i].h == h) {
            expose(regions[i].mem, regions[i].bytes);
            regions[i].h = NULL;
            found = 1;
        }
    }
    unlock_regions();
    return found;
}

rtm_heap *rtm_tracked_create(const rtm_heap_kind *k, void *mem, size_t bytes, size_t param)
{
    quiet_begin();
    rtm_heap *h = k->create(mem, bytes, param);
    quiet_end();
    if (h != NULL && k->create != NULL) {
        hide(mem, bytes);              /* control structure, headers, free space */
        live_forget(NULL, mem, bytes); /* blocks of a heap never destroyed */
        remember_region(h, mem, bytes);
        pool_open(h);
    }
    return h;
}

int rtm_tracked_add_pool(rtm_heap *h, void *mem, size_t bytes)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL || mem == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (k->add_pool == NULL) {
        errno = ENOTSUP;
        return -1;
    }
    quiet_begin();
    int rc = k->add_pool(h, mem, bytes);
    quiet_end();
    if (rc == 0 && annotated(k, h)) {
        hide(mem, bytes);
        live_forget(NULL, mem, bytes);
        remember_region(h, mem, bytes);
    }
    return rc;
}

/* The blocks of a heap, for reset and destroy: each one's user bytes go
 * through `each`. Headers in between stay as they are. */
typedef struct {
    const rtm_heap *h;
    int used_only;
    void (*each)(const rtm_heap *h, void *ptr, size_t usable);
} block_visit;

static void visit_block(void *ptr, size_t usable, int used, void *arg)
{
    const block_visit *v = arg;
    if (used || !v->used_only)
        v->each(v->h, ptr, usable);
}

static void release_block(const rtm_heap *h, void *ptr, size_t usable)
{
    (void)h;
    expose(ptr, usable);
}

static void forget_block(const rtm_heap *h, void *ptr, size_t usable)
{
    (void)h;
    hide(ptr, usable);
}

/* Destroy gives the regions back to the program, as recorded; without a
 * record (table full): the control structure (up to the first block, which
 * every kind places after it) and every block's bytes, while headers
 * between blocks and the tail after the last block stay inaccessible. */
typedef struct {
    const rtm_heap *h;
    uintptr_t first; /* lowest block above the handle, or UINTPTR_MAX */
} first_block;

static void find_first(void *ptr, size_t usable, int used, void *arg)
{
    first_block *f = arg;
    (void)usable;
    (void)used;
    if ((uintptr_t)ptr > (uintptr_t)f->h && (uintptr_t)ptr < f->first)
        f->first = (uintptr_t)ptr;
}

static void give_back(const rtm_heap_kind *k, rtm_heap *h)
{
    if (forget_regions(h)) {
        pool_close(h);
        return;
    }
    block_visit v = {h, 0, release_block};
    first_block f = {h, UINTPTR_MAX};
    quiet_begin();
    (void)k->walk(h, visit_block, &v);
    (void)k->walk(h, find_first, &f);
    quiet_end();
    expose(h, f.first != UINTPTR_MAX ? f.first - (uintptr_t)h : sizeof *h);
    pool_close(h);
}

void rtm_tracked_destroy(rtm_heap *h)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return;
    int annotate = annotated(k, h);
    if (annotate) {
        give_back(k, h);
        live_forget(h, NULL, 0);
    }
    quiet_begin();
    if (k->destroy != NULL)
        k->destroy(h); /* a shared heap is only detached */
    else
        h->kind = 0; /* later calls on this handle fail with EINVAL */
    quiet_end();
}

int rtm_tracked_reset(rtm_heap *h)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        errno = EINVAL;
        return -1;
    }
    int annotate = annotated(k, h);
    block_visit v = {h, 1, forget_block};
    quiet_begin();
    if (annotate)
        (void)k->walk(h, visit_block, &v); /* live blocks die with the reset */
    int rc = k->reset(h);
    quiet_end();
    if (annotate) {
        live_forget(h, NULL, 0);
        pool_close(h);
        pool_open(h);
    }
    return rc;
}

/* ---- blocks --------------------------------------------------------- */

/* A block the heap just gave out, accessible for `size` bytes. */
static void mark_live(const rtm_heap *h, void *p, size_t size)
{
    live_put(h, p, size);
    block_on(h, p, size);
}

static void *track_new(const rtm_heap_kind *k, rtm_heap *h, void *p, size_t size)
{
    if (p != NULL && annotated(k, h))
        mark_live(h, p, size);
    return p;
}

void *rtm_tracked_alloc(rtm_heap *h, size_t size)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap();
    quiet_begin();
    void *p = k->alloc(h, size);
    quiet_end();
    return track_new(k, h, p, size);
}

void *rtm_tracked_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap();
    quiet_begin();
    void *p = k->aligned_alloc(h, alignment, size);
    quiet_end();
    return track_new(k, h, p, size);
}

/* Free and realloc call the heap exactly once, as untracked: what the
 * block exposed comes from the live table, after the heap accepted the
 * pointer. */
void rtm_tracked_free(rtm_heap *h, void *ptr)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        if (ptr != NULL)
            errno = EINVAL;
        return;
    }
    int annotate = ptr != NULL && annotated(k, h);
    quiet_begin();
    errno_probe e = probe_begin();
    k->free(h, ptr);
    int refused = probe_end(e);
    quiet_end();
    if (annotate && !refused)
        block_off(h, ptr, live_take(h, ptr));
}

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

void *rtm_tracked_realloc(rtm_heap *h, void *ptr, size_t size)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap();
    int annotate = annotated(k, h);
    quiet_begin();
    errno_probe e = probe_begin();
    void *q = k->realloc(h, ptr, size);
    int errno_set = probe_end(e);
    quiet_end();
    /* A block returned is a success whatever errno says: a heap may retry
     * after a refusal (tlsf_cached coalesces its cache and asks again,
     * leaving ENOMEM behind). NULL is a refusal unless it freed (size 0). */
    int refused = q == NULL && (size != 0 || errno_set);
    if (!annotate || refused)
        return q; /* nothing moved: ENOMEM keeps the block, EINVAL refuses */
    size_t old = 0;
    if (ptr != NULL) {
        old = live_take(h, ptr);
        block_off(h, ptr, old); /* freed (size 0), moved or resized */
    }
    if (q != NULL) {
        mark_live(h, q, size);
        if (ptr != NULL)
            expose(q, min_size(old, size)); /* the heap copied these */
    }
    return q;
}

size_t rtm_tracked_usable_size(rtm_heap *h, const void *ptr)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        errno = EINVAL;
        return 0;
    }
    quiet_begin();
    errno_probe e = probe_begin();
    size_t n = k->usable_size(h, ptr);
    int refused = probe_end(e);
    quiet_end();
    if (n != 0 && !refused && ptr != NULL && annotated(k, h)) {
        live_put(h, ptr, n); /* its free poisons all of it */
        block_widen(h, ptr, n);
    }
    return n;
}

/* ---- whole-heap queries: the heap reads its own inaccessible memory -- */

rtm_stats rtm_tracked_stats(rtm_heap *h)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        rtm_stats none = {0, 0, 0, 0, 0, 0, 0};
        errno = EINVAL;
        return none;
    }
    quiet_begin();
    rtm_stats s = k->stats(h);
    quiet_end();
    return s;
}

int rtm_tracked_check(rtm_heap *h)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        errno = EINVAL;
        return -1;
    }
    quiet_begin();
    int rc = k->check(h);
    quiet_end();
    return rc;
}

const char *rtm_tracked_algorithm(rtm_heap *h)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL)
        return bad_heap();
    if (k->algorithm == NULL)
        return rtm_kind_name(k->kind);
    quiet_begin();
    const char *name = k->algorithm(h);
    quiet_end();
    return name;
}

/* Memory a grow function adds later is not hidden: its free blocks are
 * accessible until first allocated and freed (missed reports, never false
 * ones). */
int rtm_tracked_set_grow(rtm_heap *h, rtm_grow_fn grow, void *ctx)
{
    const rtm_heap_kind *k = kind_of(h);
    if (k == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (k->set_grow == NULL) {
        errno = ENOTSUP;
        return -1;
    }
    quiet_begin();
    int rc = k->set_grow(h, grow, ctx);
    quiet_end();
    return rc;
}

/* The user's walker runs with reporting on: only the heap's own reads of
 * its headers are hidden. */
typedef struct {
    rtm_walker walker;
    void *arg;
} user_walk;

static void walk_loud(void *ptr, size_t usable, int used, void *arg)
{
    const user_walk *u = arg;
    quiet_end();
    u->walker(ptr, usable, used, u->arg);
    quiet_begin();
}

int rtm_tracked_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    const rtm_heap_kind *k = walker != NULL ? kind_of(h) : NULL;
    if (k == NULL) {
        errno = EINVAL;
        return -1;
    }
    user_walk u = {walker, arg};
    quiet_begin();
    int rc = k->walk(h, walk_loud, &u);
    quiet_end();
    return rc;
}

#else
/* ISO C wants at least one declaration in a translation unit. */
typedef int rtm_track_off;
#endif
