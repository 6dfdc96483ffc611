// SPDX-License-Identifier: MIT
/*
 * mt/mt.c -- the multi-threaded heap (rtmem/mt.h): creation, threads
 * attaching to shards, and the calls on one block (alloc, aligned alloc,
 * realloc, free, usable size), through the descriptor at the end of this
 * file, which rtm_mt_create registers with the core (the core never names
 * this layer, so firmware links without it).
 *
 * Which shard serves a call: the calling thread's own, found in its
 * thread-local bindings (at most RTM_MT_THREAD_HEAPS, searched in order)
 * and confirmed by the shard's owner word, which catches a binding left
 * over from a destroyed heap at the same address. A thread without one is
 * served by the fallback shard under its PI mutex. Which shard a block
 * belongs to: its address, by one division (mt_shard_of).
 *
 * The owner's calls enter their shard by setting `busy` and then reading
 * `stop` (both sequentially consistent, so a thread of mt_whole.c that
 * sets stop and then reads busy and the owner cannot both go ahead: the
 * store-load pairing of Dekker's algorithm). Nothing else on the owner's
 * path is shared with other threads but the inbox's consumer end.
 *
 * Hot paths: mt_free (the remote free is its wait-free half) and mt_alloc.
 * Budget: the shard heap's own call + RTM_MT_BATCH shard frees + about 40
 * instructions (rtmem wcet measures it: docs/MT.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <string.h>

#include "core/kind.h"
#include "mt/mt_layout.h"
#include "os/thread.h"

/* ---------------------------------------------------------------------- */
/* Threads and their shards                                                */
/* ---------------------------------------------------------------------- */

typedef struct mt_binding {
    rtm_mt *heap;
    mt_shard *shard;
} mt_binding;

typedef struct mt_thread {
    mt_binding bound[RTM_MT_THREAD_HEAPS];
    int hooked; /* the exit hook is registered for this thread */
} mt_thread;

/* initial-exec: one load off the thread pointer, no call into the dynamic
 * linker (which may allocate the first time a thread touches a module). */
static _Thread_local mt_thread self __attribute__((tls_model("initial-exec")));

static inline uintptr_t my_token(void) { return (uintptr_t)&self; }

/* Hot path: the caller's shard of m, or NULL. */
static inline mt_shard *my_shard(rtm_mt *m)
{
    for (unsigned i = 0; i < RTM_MT_THREAD_HEAPS; i++) {
        if (self.bound[i].heap != m)
            continue;
        mt_shard *s = self.bound[i].shard;
        return atomic_load_explicit(&s->owner, memory_order_relaxed) == my_token() ? s : NULL;
    }
    return NULL;
}

/* The heaps a thread's exit may still find attached: a list under the
 * process-wide lock, so that an exiting thread never writes into a heap
 * that was destroyed (and its region reused) while it was attached. */
static rtm_mt *live_heaps;

static int is_live(const rtm_mt *m)
{
    for (const rtm_mt *l = live_heaps; l != NULL; l = l->next_live)
        if (l == m)
            return 1;
    return 0;
}

static void remember(rtm_mt *m)
{
    rtm_os_global_lock();
    m->next_live = live_heaps;
    live_heaps = m;
    rtm_os_global_unlock();
}

void rtm_mt_forget(rtm_mt *m)
{
    rtm_os_global_lock();
    for (rtm_mt **l = &live_heaps; *l != NULL; l = &(*l)->next_live) {
        if (*l == m) {
            *l = m->next_live;
            break;
        }
    }
    rtm_os_global_unlock();
}

/* Releases s if this thread (token) holds it: a compare-and-swap, so a
 * shard another thread took over in the meantime is left alone. */
static void release_shard(mt_shard *s, uintptr_t token)
{
    uintptr_t expected = token;
    atomic_compare_exchange_strong_explicit(&s->owner, &expected, 0, memory_order_release,
                                            memory_order_relaxed);
}

/* The exit hook: a thread that exits attached leaves its shards free. */
static void on_thread_exit(void *arg)
{
    mt_thread *t = arg;
    rtm_os_global_lock();
    for (unsigned i = 0; i < RTM_MT_THREAD_HEAPS; i++) {
        if (t->bound[i].heap != NULL && is_live(t->bound[i].heap))
            release_shard(t->bound[i].shard, (uintptr_t)t);
        t->bound[i].heap = NULL;
    }
    rtm_os_global_unlock();
}

static int is_mt(const rtm_heap *h)
{
    return h != NULL && *(const uint32_t *)(const void *)h == RTM_KIND_MT;
}

/* A binding slot for m: the one m already has (a stale one included), else
 * an empty one, else NULL. */
static mt_binding *binding_for(rtm_mt *m)
{
    mt_binding *empty = NULL;
    for (unsigned i = 0; i < RTM_MT_THREAD_HEAPS; i++) {
        if (self.bound[i].heap == m)
            return &self.bound[i];
        if (self.bound[i].heap == NULL && empty == NULL)
            empty = &self.bound[i];
    }
    return empty;
}

int rtm_mt_attach(rtm_heap *h)
{
    if (!is_mt(h)) {
        errno = EINVAL;
        return -1;
    }
    rtm_mt *m = as_mt(h);
    mt_shard *mine = my_shard(m);
    if (mine != NULL)
        return (int)(mine - m->shard);
    mt_binding *b = binding_for(m);
    if (b == NULL) {
        errno = ENOSPC;
        return -1;
    }
    if (!self.hooked) {
        int rc = rtm_os_thread_on_exit(on_thread_exit, &self);
        if (rc != 0) {
            errno = rc;
            return -1;
        }
        self.hooked = 1;
    }
    for (unsigned i = 0; i < m->nshards; i++) {
        uintptr_t expected = 0;
        /* acquire: the previous owner's work on the shard happens before ours */
        if (atomic_compare_exchange_strong_explicit(&m->shard[i].owner, &expected, my_token(),
                                                    memory_order_acquire, memory_order_relaxed)) {
            b->heap = m;
            b->shard = &m->shard[i];
            return (int)i;
        }
    }
    b->heap = NULL;
    errno = EBUSY;
    return -1;
}

int rtm_mt_detach(rtm_heap *h)
{
    mt_shard *s = is_mt(h) ? my_shard(as_mt(h)) : NULL;
    if (s == NULL) {
        errno = EINVAL;
        return -1;
    }
    mt_binding *b = binding_for(as_mt(h));
    b->heap = NULL;
    release_shard(s, my_token());
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Entering a shard                                                        */
/* ---------------------------------------------------------------------- */

/* mt_whole.c holds the shard: wait on its mutex (lending our priority to
 * the holder), then try again. */
static RTM_COLD void wait_while_stopped(mt_shard *s)
{
    do {
        atomic_store_explicit(&s->busy, 0, memory_order_release);
        (void)rtm_os_mutex_lock(&s->lock);
        (void)rtm_os_mutex_unlock(&s->lock);
        atomic_store_explicit(&s->busy, 1, memory_order_seq_cst);
    } while (atomic_load_explicit(&s->stop, memory_order_seq_cst) != 0);
}

/* Hot path: two sequentially consistent accesses (Dekker's pairing with
 * mt_whole.c's pause). */
static inline void enter_own(mt_shard *s)
{
    atomic_store_explicit(&s->busy, 1, memory_order_seq_cst);
    if (RTM_UNLIKELY(atomic_load_explicit(&s->stop, memory_order_seq_cst) != 0))
        wait_while_stopped(s);
}

static inline void leave_own(mt_shard *s)
{
    atomic_store_explicit(&s->busy, 0, memory_order_release);
}

/* The shard the caller may work on, held: its own (entered) or the
 * fallback (locked). NULL when the fallback's mutex fails (errno). */
static inline mt_shard *begin(rtm_mt *m)
{
    mt_shard *s = my_shard(m);
    if (RTM_LIKELY(s != NULL)) {
        enter_own(s);
        return s;
    }
    s = mt_fallback(m);
    int rc = rtm_os_mutex_lock(&s->lock);
    if (rc != 0) {
        errno = rc;
        return NULL;
    }
    return s;
}

static inline void end(rtm_mt *m, mt_shard *s)
{
    if (RTM_LIKELY(s != mt_fallback(m)))
        leave_own(s);
    else
        (void)rtm_os_mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------------------- */
/* Blocks                                                                  */
/* ---------------------------------------------------------------------- */

static RTM_COLD void refuse(rtm_mt *m, const void *ptr, unsigned state)
{
    if (state == MT_PENDING || state == MT_FREED)
        rtm_report(RTM_ERR_DOUBLE_FREE, m, ptr, "mt heap: block already freed");
    else
        rtm_report(RTM_ERR_CORRUPT_HEADER, m, ptr,
                   "mt heap: no live block here (check word damaged, interior or stale pointer)");
    errno = EINVAL;
}

/* A word that is not live: what it is decides the report. */
static RTM_COLD void refuse_word(rtm_mt *m, const mt_shard *s, const void *ptr, uint64_t raw)
{
    refuse(m, ptr, mt_open(m, s, (uintptr_t)ptr, raw).state);
}

static RTM_COLD void refuse_foreign(rtm_mt *m, const void *ptr)
{
    rtm_report(RTM_ERR_FOREIGN_POINTER, m, ptr, "mt heap: pointer outside every shard");
    errno = EINVAL;
}

/* Hot path: the live block at ptr, its shard, its word (raw) and the word
 * decoded (v); NULL when refused (reported, EINVAL). */
static inline __attribute__((always_inline)) mt_shard *live_block(rtm_mt *m, const void *ptr,
                                                                  uint64_t *raw, uint64_t *v)
{
    mt_shard *s = mt_shard_of(m, ptr);
    if (RTM_UNLIKELY(s == NULL)) {
        refuse_foreign(m, ptr);
        return NULL;
    }
    uintptr_t p = (uintptr_t)ptr;
    *raw = atomic_load_explicit(mt_word_at(p), memory_order_acquire);
    *v = *raw ^ mt_key(m, p);
    if (RTM_UNLIKELY(!mt_v_live(s, p, *v))) {
        refuse_word(m, s, ptr, *raw);
        return NULL;
    }
    return s;
}

static inline size_t prefix_of(uint64_t v) { return (size_t)1 << mt_v_log(v); }

/* Moves a block's word from live (raw) to state with one compare-and-swap:
 * the key is XORed into the whole word, so flipping the state bits of the
 * sealed word flips them in the plain one. 0 when another free won the
 * race (reported as a double free). */
static inline int claim(rtm_mt *m, uintptr_t p, uint64_t raw, unsigned state)
{
    uint64_t to = raw ^ (uint64_t)(MT_LIVE ^ state);
    if (RTM_LIKELY(atomic_compare_exchange_strong_explicit(
            mt_word_at(p), &raw, to, memory_order_acq_rel, memory_order_relaxed)))
        return 1;
    refuse(m, (const void *)p, MT_FREED);
    return 0;
}

/* A block of s's heap handed back (the caller holds s and has claimed it). */
static inline void give_back(mt_shard *s, uintptr_t p, uint64_t v)
{
    s->used -= mt_v_usable(v);
    s->live--;
    rtm_free(s->heap, (void *)(p - prefix_of(v)));
}

size_t rtm_mt_take_back(rtm_mt *m, mt_shard *s, size_t max)
{
    size_t n = 0;
    uint64_t taken = 0;
    for (; n < max; n++) {
        mt_node *node = mt_inbox_pop(s);
        if (node == NULL)
            break;
        uintptr_t p = (uintptr_t)node;
        uint64_t raw = atomic_load_explicit(mt_word_at(p), memory_order_relaxed);
        uint64_t v = raw ^ mt_key(m, p); /* pending: only such words enter the inbox */
        /* Freed before the memory goes back: no word left behind in the
         * shard's heap may read as live or pending (mt_whole.c's scan for a
         * block's word relies on it), and a later free of the pointer is
         * then a double free. */
        atomic_store_explicit(mt_word_at(p), raw ^ (uint64_t)(MT_PENDING ^ MT_FREED),
                              memory_order_relaxed);
        give_back(s, p, v);
        taken += mt_pending_of(mt_v_usable(v));
    }
    if (taken != 0) /* one atomic for the batch */
        atomic_fetch_sub_explicit(&s->pending, taken, memory_order_relaxed);
    return n;
}

/* The usable size a request gets: rounded up to 8, and at least 8 (room
 * for the inbox link on every target). The shard's heap is asked for this
 * much plus the prefix, and what it gives beyond stays unused: asking it
 * for its own usable size would cost a validated query (about 40
 * instructions on TLSF) on every allocation. */
static inline size_t usable_for(size_t size)
{
    size = (size + RTM_ALIGN - 1u) & ~(size_t)(RTM_ALIGN - 1u);
    return size != 0 ? size : RTM_ALIGN;
}

/* A new block of s's heap (q, prefix bytes in front of the caller's part,
 * usable bytes from usable_for) made live. */
static inline void *seal_new(rtm_mt *m, mt_shard *s, void *q, size_t prefix, size_t usable)
{
    uintptr_t p = (uintptr_t)q + prefix;
    atomic_store_explicit(mt_word_at(p),
                          mt_seal(m, p, usable, (unsigned)__builtin_ctzll(prefix), MT_LIVE),
                          memory_order_relaxed);
    s->used += usable;
    s->live++;
    if (s->used > s->peak)
        s->peak = s->used;
    return (void *)p;
}

static inline void *heap_alloc(rtm_heap *heap, size_t alignment, size_t bytes)
{
    return alignment <= RTM_MT_BLOCK_OVERHEAD ? rtm_alloc(heap, bytes)
                                              : rtm_aligned_alloc(heap, alignment, bytes);
}

static RTM_COLD void *refused(mt_shard *s)
{
    s->failed++;
    errno = ENOMEM;
    return NULL;
}

/* Hot path: a block of s (held by the caller) with prefix bytes in front;
 * everything pending is taken back before a refusal. */
static void *shard_alloc(rtm_mt *m, mt_shard *s, size_t alignment, size_t size)
{
    size_t prefix = alignment <= RTM_MT_BLOCK_OVERHEAD ? RTM_MT_BLOCK_OVERHEAD : alignment;
    (void)rtm_mt_take_back(m, s, RTM_MT_BATCH);
    if (RTM_UNLIKELY(size > SIZE_MAX - prefix - RTM_ALIGN))
        return refused(s);
    size = usable_for(size);
    void *q = heap_alloc(s->heap, alignment, size + prefix);
    if (RTM_UNLIKELY(q == NULL)) {
        if (errno != ENOMEM)
            return NULL; /* ENOTSUP: the algorithm has no aligned alloc */
        (void)rtm_mt_take_back(m, s, SIZE_MAX);
        q = heap_alloc(s->heap, alignment, size + prefix);
        if (q == NULL)
            return refused(s);
    }
    return seal_new(m, s, q, prefix, size);
}

static void *mt_alloc(rtm_heap *h, size_t size)
{
    rtm_mt *m = as_mt(h);
    mt_shard *s = begin(m);
    if (RTM_UNLIKELY(s == NULL))
        return NULL;
    void *p = shard_alloc(m, s, RTM_ALIGN, size);
    end(m, s);
    return p;
}

static void *mt_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1u)) != 0) {
        errno = EINVAL;
        return NULL;
    }
    rtm_mt *m = as_mt(h);
    mt_shard *s = begin(m);
    if (s == NULL)
        return NULL;
    void *p = shard_alloc(m, s, alignment, size);
    end(m, s);
    return p;
}

/* Wait-free: a free into the inbox of the block's shard (another thread's,
 * or the fallback's): one compare-and-swap, one atomic add, one exchange. */
static inline void remote_free(rtm_mt *m, mt_shard *s, uintptr_t p, uint64_t raw, uint64_t v)
{
    if (!claim(m, p, raw, MT_PENDING))
        return;
    atomic_fetch_add_explicit(&s->pending, mt_pending_of(mt_v_usable(v)), memory_order_relaxed);
    mt_inbox_push(s, (mt_node *)p);
}

/* A block of the held shard s freed by its holder. */
static inline void own_free(rtm_mt *m, mt_shard *s, uintptr_t p, uint64_t raw, uint64_t v)
{
    if (claim(m, p, raw, MT_FREED))
        give_back(s, p, v);
    (void)rtm_mt_take_back(m, s, RTM_MT_BATCH);
}

/* The owner's free, out of line: its registers and its take-back loop
 * would otherwise be saved and set up on the remote free's path too. */
static RTM_NOINLINE void own_free_entered(rtm_mt *m, mt_shard *s, uintptr_t p, uint64_t raw,
                                          uint64_t v)
{
    enter_own(s);
    own_free(m, s, p, raw, v);
    leave_own(s);
}

/* Hot path. The shard's owner word says whose block it is: the caller's
 * own (its heap, no lock), or another's: the fallback's included, whose
 * blocks every thread frees into its inbox (taken back by its next call). */
static void mt_free(rtm_heap *h, void *ptr)
{
    if (ptr == NULL)
        return;
    rtm_mt *m = as_mt(h);
    uint64_t raw, v;
    mt_shard *s = live_block(m, ptr, &raw, &v);
    if (RTM_UNLIKELY(s == NULL))
        return;
    if (atomic_load_explicit(&s->owner, memory_order_relaxed) != my_token())
        remote_free(m, s, (uintptr_t)ptr, raw, v);
    else
        own_free_entered(m, s, (uintptr_t)ptr, raw, v);
}

/* Resizes a block of the held shard s in its heap (in place when the heap
 * can); the word is marked freed around the call so that a block the heap
 * moves leaves no live word behind. */
static void *own_realloc(rtm_mt *m, mt_shard *s, uintptr_t p, uint64_t raw, uint64_t v, size_t size)
{
    size_t prefix = prefix_of(v);
    if (size > SIZE_MAX - prefix - RTM_ALIGN)
        return refused(s);
    size = usable_for(size);
    if (!claim(m, p, raw, MT_FREED))
        return NULL;
    (void)rtm_mt_take_back(m, s, RTM_MT_BATCH);
    void *q = (void *)(p - prefix);
    void *q2 = rtm_realloc(s->heap, q, size + prefix);
    if (q2 == NULL) {
        (void)rtm_mt_take_back(m, s, SIZE_MAX);
        q2 = rtm_realloc(s->heap, q, size + prefix);
    }
    if (q2 == NULL) {
        atomic_store_explicit(mt_word_at(p), raw, memory_order_relaxed); /* live again */
        return refused(s);
    }
    s->used -= mt_v_usable(v);
    s->live--;
    return seal_new(m, s, q2, prefix, size);
}

/* A block of another shard: a new one in the caller's, the data copied,
 * the old one freed into its owner's inbox. */
static void *moving_realloc(rtm_mt *m, mt_shard *mine, mt_shard *s, uintptr_t p, uint64_t raw,
                            uint64_t v, size_t size)
{
    size_t prefix = prefix_of(v), usable = mt_v_usable(v);
    void *n = shard_alloc(m, mine, prefix > RTM_MT_BLOCK_OVERHEAD ? prefix : RTM_ALIGN, size);
    if (n == NULL)
        return NULL;
    memcpy(n, (void *)p, size < usable ? size : usable);
    remote_free(m, s, p, raw, v);
    return n;
}

static void *mt_realloc(rtm_heap *h, void *ptr, size_t size)
{
    if (ptr == NULL)
        return mt_alloc(h, size);
    if (size == 0) {
        mt_free(h, ptr);
        return NULL;
    }
    rtm_mt *m = as_mt(h);
    uint64_t raw, v;
    mt_shard *s = live_block(m, ptr, &raw, &v);
    if (s == NULL)
        return NULL;
    mt_shard *mine = begin(m);
    if (mine == NULL)
        return NULL;
    void *n = s == mine ? own_realloc(m, s, (uintptr_t)ptr, raw, v, size)
                        : moving_realloc(m, mine, s, (uintptr_t)ptr, raw, v, size);
    end(m, mine);
    return n;
}

/* Reads the block's word only: never its shard's heap. */
static size_t mt_usable_size(rtm_heap *h, const void *ptr)
{
    if (ptr == NULL)
        return 0;
    uint64_t raw, v;
    return live_block(as_mt(h), ptr, &raw, &v) != NULL ? mt_v_usable(v) : 0;
}

static const char *mt_algorithm(rtm_heap *h) { return as_mt(h)->algorithm; }

/* ---------------------------------------------------------------------- */
/* Creation                                                                */
/* ---------------------------------------------------------------------- */

/* Beyond this, the control structure alone would be a region's worth. */
#define MT_MAX_SHARDS 4096u

static size_t align_up(size_t x, size_t a) { return (x + a - 1u) & ~(a - 1u); }

/* The smallest part a shard of algorithm gets, 0 for names the mt heap
 * does not take (unknown, or pool: one block size serves no mixed sizes). */
static size_t part_min(const char *algorithm)
{
    if (algorithm == NULL || strncmp(algorithm, "pool", 4) == 0 ||
        strncmp(algorithm, "locked:", 7) == 0)
        return 0;
    size_t min = rtm_min_region(algorithm);
    return min != 0 ? align_up(min, MT_LINE) : 0;
}

/* A part above MT_PART_MAX: only where size_t can hold one (64-bit). */
static int above_part_max(size_t n)
{
#if SIZE_MAX > 0xffffffffu
    return (uint64_t)n > MT_PART_MAX;
#else
    (void)n;
    return 0;
#endif
}

static size_t control_bytes(unsigned shards)
{
    return align_up(sizeof(rtm_mt) + ((size_t)shards + 1u) * sizeof(mt_shard), MT_LINE);
}

size_t rtm_mt_region_size(const char *algorithm, unsigned shards, size_t shard_bytes)
{
    size_t min = part_min(algorithm);
    size_t parts = (size_t)shards + 1u;
    if (min == 0 || shards == 0 || shards > MT_MAX_SHARDS || above_part_max(shard_bytes) ||
        shard_bytes > SIZE_MAX - MT_LINE) {
        errno = EINVAL;
        return 0;
    }
    size_t part = align_up(shard_bytes > min ? shard_bytes : min, MT_LINE);
    size_t fixed = MT_LINE - 1u + control_bytes(shards);
    if (part > (SIZE_MAX - fixed) / parts) {
        errno = EINVAL; /* the region would not fit in the address space */
        return 0;
    }
    return fixed + parts * part;
}

size_t rtm_mt_min_region(const char *algorithm, unsigned shards)
{
    return rtm_mt_region_size(algorithm, shards, 0);
}

static int mt_register(void);

static rtm_heap *fail(int err)
{
    errno = err;
    return NULL;
}

/* Makes shard i's heap and mutex; 0 or an error number. */
static int open_shard(rtm_mt *m, unsigned i, const char *algorithm)
{
    mt_shard *s = &m->shard[i];
    memset(s, 0, sizeof *s);
    s->lo = m->parts + (size_t)i * m->stride;
    s->hi = s->lo + m->stride;
    s->heap = rtm_heap_create(algorithm, (void *)s->lo, m->stride);
    if (s->heap == NULL)
        return errno;
    int rc = rtm_os_mutex_init(&s->lock, 0u);
    if (rc != 0) {
        rtm_heap_destroy(s->heap);
        return rc;
    }
    atomic_init(&s->owner, 0);
    atomic_init(&s->busy, 0);
    atomic_init(&s->stop, 0);
    mt_inbox_init(s);
    return 0;
}

uint64_t rtm_mt_new_salt(const rtm_mt *m)
{
    static atomic_ullong counter;
    uint64_t c = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    uint64_t x = ((uint64_t)(uintptr_t)m ^ (c + 1u) * 0xbf58476d1ce4e5b9ull) + m->salt;
    x ^= x >> 31;
    return x * 0x94d049bb133111ebull | 1u;
}

rtm_heap *rtm_mt_create(const char *algorithm, void *mem, size_t bytes, unsigned shards)
{
    size_t min = rtm_mt_min_region(algorithm, shards);
    if (mem == NULL || min == 0 || bytes < min || bytes > UINTPTR_MAX - (uintptr_t)mem)
        return fail(EINVAL);
    if (mt_register() != 0)
        return NULL;
    rtm_mt *m = (rtm_mt *)align_up((uintptr_t)mem, MT_LINE);
    size_t lead = (size_t)((uintptr_t)m - (uintptr_t)mem);
    size_t ctrl = control_bytes(shards);
    memset(m, 0, sizeof *m);
    m->nshards = shards;
    m->bytes = bytes; /* the arena, the lead to the handle included */
    m->parts = (uintptr_t)m + ctrl;
    size_t stride = (bytes - lead - ctrl) / ((size_t)shards + 1u);
    if (above_part_max(stride))
        stride = (size_t)MT_PART_MAX; /* the rest of the region stays unused */
    m->stride = stride & ~(size_t)(MT_LINE - 1u);
    m->salt = rtm_mt_new_salt(m);
    for (unsigned i = 0; i <= shards; i++) {
        int rc = open_shard(m, i, algorithm);
        if (rc != 0) {
            rtm_mt_close_shards(m, i);
            return fail(rc);
        }
    }
    strncpy(m->algorithm, rtm_heap_algorithm(m->shard[0].heap), sizeof m->algorithm - 1u);
    remember(m);
    m->kind = RTM_KIND_MT; /* last: only now may the generic API use it */
    return (rtm_heap *)(void *)m;
}

/* ---------------------------------------------------------------------- */
/* The descriptor                                                          */
/* ---------------------------------------------------------------------- */

/* Not created by name (rtm_mt_create takes a shard count), so no
 * min_region or create; no pools are added and nothing grows. */
static const rtm_heap_kind mt_kind = {
    .kind = RTM_KIND_MT,
    .alloc = mt_alloc,
    .free = mt_free,
    .aligned_alloc = mt_aligned_alloc,
    .realloc = mt_realloc,
    .usable_size = mt_usable_size,
    .stats = rtm_mt_stats,
    .check = rtm_mt_check,
    .walk = rtm_mt_walk,
    .reset = rtm_mt_reset,
    .destroy = rtm_mt_destroy,
    .algorithm = mt_algorithm,
};

static int mt_register(void)
{
    if (rtm_kind_register(&mt_kind) == 0)
        return 0;
    errno = ENOSPC;
    return -1;
}
