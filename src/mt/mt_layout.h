// SPDX-License-Identifier: MIT
/*
 * mt/mt_layout.h -- the multi-threaded heap's layout (rtmem/mt.h), shared
 * by mt.c (creation, attach, the calls of one block) and mt_whole.c (the
 * calls that look at every shard: stats, check, walk, reset, destroy).
 *
 *   handle (mem rounded up to 64)
 *   +---------+------------------------+-----------+-----------+-----+
 *   | rtm_mt  | mt_shard[shards + 1]   | part 0    | part 1    | ... |
 *   | control | (64-byte aligned each) | heap of   | heap of   |     |
 *   +---------+------------------------+-----------+-----------+-----+
 *                                      ^ parts: `stride` bytes each, the
 *                                        last one is the fallback's
 *
 * A block inside a shard's heap:
 *
 *   q (the shard heap's block)      p = q + prefix (what the caller gets)
 *   +--------------------+---------+------------------------------------+
 *   | alignment padding  | check   | user data; while pending in an     |
 *   | (prefix - 8 bytes) | word    | inbox, its first word is the link  |
 *   +--------------------+---------+------------------------------------+
 *
 * The check word: (usable << 8 | log2(prefix) << 2 | state) XOR key(p),
 * key(p) = (p XOR salt) * an odd 64-bit constant. Every field is checked on
 * decoding (state known, prefix at least 8 and inside the part, usable
 * inside the part), so a pointer whose word is user data or another heap's
 * bookkeeping decodes as damaged with near certainty. State changes of a
 * block go through one compare-and-swap on its word (live -> pending for a
 * remote free, live -> freed for its owner's), which is what lets exactly
 * one of two racing frees of one block win.
 *
 * Who touches what: a shard's heap and its owner-side fields (head, used,
 * live, peak, failed) only inside a call of its owner (busy set, stop
 * clear), or of whoever holds its mutex with stop set (mt_whole.c), or, for
 * the fallback shard, of whoever holds its mutex. The inbox tail, the stub
 * and the pending counters are written by any thread, atomically.
 */
#ifndef RTM_MT_LAYOUT_H
#define RTM_MT_LAYOUT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "core/internal.h"
#include "os/mutex.h"
#include "rtmem.h"

#define MT_LINE 64u

/* A pending block's link, in its first user word. */
typedef struct mt_node {
    _Atomic(struct mt_node *) next;
} mt_node;

typedef struct mt_shard {
    /* The owner's line: read on every call of the owner. */
    rtm_heap *heap;          /* this shard's heap, over [lo, hi)      */
    uintptr_t lo, hi;        /* the part                              */
    _Atomic uintptr_t owner; /* the attached thread's token, 0: none  */
    atomic_uint busy;        /* 1 while the owner is inside a call    */
    atomic_uint stop;        /* 1 while mt_whole.c holds the shard    */
    mt_node *head;           /* the inbox's consumer end              */
    size_t used, live, peak; /* caller's bytes and blocks, with pending */
    size_t failed;           /* refused requests                      */
    /* The remote side: written by every thread that frees into it. */
    alignas(MT_LINE) _Atomic(mt_node *) tail;
    _Atomic uint64_t pending; /* freed remotely, not yet taken back:
                               * MT_PENDING_ONE per block (low bits),
                               * its usable size << MT_PENDING_SHIFT */
    mt_node stub;             /* the inbox's permanent node         */
    /* Taken by mt_whole.c to hold the shard, and by every call on the
     * fallback shard. */
    alignas(MT_LINE) rtm_os_mutex lock;
} mt_shard;

typedef struct rtm_mt {
    uint32_t kind;                     /* RTM_KIND_MT                                */
    uint32_t nshards;                  /* attachable shards; shard[nshards]: fallback */
    uint64_t salt;                     /* seals the check words; reset changes it    */
    uintptr_t parts;                   /* address of part 0                          */
    size_t stride;                     /* bytes per part                             */
    size_t bytes;                      /* the region given to rtm_mt_create           */
    struct rtm_mt *next_live;          /* the live heaps (mt.c, thread exit)   */
    char algorithm[24];                /* the shards' algorithm                */
    alignas(MT_LINE) mt_shard shard[]; /* nshards + 1                 */
} rtm_mt;

static inline rtm_mt *as_mt(rtm_heap *h) { return (rtm_mt *)(void *)h; }
static inline mt_shard *mt_fallback(rtm_mt *m) { return &m->shard[m->nshards]; }

/* ---- the check word ------------------------------------------------- */

enum { MT_LIVE = 1, MT_PENDING = 2, MT_FREED = 3 };
#define MT_MIN_PREFIX_LOG2 3u

/* One counter for a shard's pending blocks and bytes, so a remote free
 * makes one atomic add, not two. A part holds at most MT_PART_MAX bytes, so
 * fewer than 2^28 blocks (16 bytes at least each: word and link) and 2^32
 * bytes are ever pending: the two fields never meet. */
#define MT_PENDING_SHIFT 28u
#define MT_PENDING_ONE   ((uint64_t)1)
#define MT_PART_MAX      ((uint64_t)1 << 32)

static inline uint64_t mt_pending_of(size_t usable)
{
    return (uint64_t)usable << MT_PENDING_SHIFT | MT_PENDING_ONE;
}
static inline size_t mt_pending_blocks(uint64_t pending)
{
    return (size_t)(pending & (((uint64_t)1 << MT_PENDING_SHIFT) - 1u));
}
static inline size_t mt_pending_bytes(uint64_t pending)
{
    return (size_t)(pending >> MT_PENDING_SHIFT);
}

typedef struct mt_word {
    size_t usable;
    size_t prefix;
    unsigned state; /* 0: the word does not decode */
} mt_word;

static inline uint64_t mt_key(const rtm_mt *m, uintptr_t p)
{
    return ((uint64_t)p ^ m->salt) * 0x9e3779b97f4a7c15ull;
}

static inline _Atomic uint64_t *mt_word_at(uintptr_t p)
{
    return (_Atomic uint64_t *)(p - RTM_MT_BLOCK_OVERHEAD);
}

static inline uint64_t mt_seal(const rtm_mt *m, uintptr_t p, size_t usable, unsigned prefix_log,
                               unsigned state)
{
    return ((uint64_t)usable << 8 | (uint64_t)prefix_log << 2 | state) ^ mt_key(m, p);
}

/* The fields of a decoded word v (the word XOR its key). */
static inline unsigned mt_v_state(uint64_t v) { return (unsigned)(v & 3u); }
static inline unsigned mt_v_log(uint64_t v) { return (unsigned)(v >> 2) & 63u; }
static inline size_t mt_v_usable(uint64_t v) { return (size_t)(v >> 8); }

/* Whether v's prefix (at least 8) and usable size lie inside p's part. */
static inline int mt_v_fits(const mt_shard *s, uintptr_t p, uint64_t v)
{
    unsigned log = mt_v_log(v);
    return log >= MT_MIN_PREFIX_LOG2 && (v >> 8) <= (uint64_t)(s->hi - p) &&
           ((uint64_t)(p - s->lo) >> log) != 0;
}

/* Hot path: whether v is the decoded word of a live block p of shard s. */
static inline int mt_v_live(const mt_shard *s, uintptr_t p, uint64_t v)
{
    return mt_v_state(v) == MT_LIVE && mt_v_fits(s, p, v);
}

/* Decodes w as the word of block p in shard s; state 0 when any field is
 * out of range. */
static inline mt_word mt_open(const rtm_mt *m, const mt_shard *s, uintptr_t p, uint64_t w)
{
    uint64_t v = w ^ mt_key(m, p);
    mt_word out = {0, 0, 0};
    if (mt_v_state(v) == 0 || !mt_v_fits(s, p, v))
        return out;
    out.usable = mt_v_usable(v);
    out.prefix = (size_t)1 << mt_v_log(v);
    out.state = mt_v_state(v);
    return out;
}

/* Hot path: the shard whose part holds p, or NULL (outside every part, or
 * misaligned). One division; p below the parts wraps to a huge index. The
 * word below p is then inside the mt heap's memory (the part, or the one
 * before it, or the control structure): safe to read, and mt_v_live checks
 * that it lies in p's own part. */
static inline mt_shard *mt_shard_of(rtm_mt *m, const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    size_t i = (p - m->parts) / m->stride;
    if (i > m->nshards || (p & (RTM_ALIGN - 1u)) != 0)
        return NULL;
    return &m->shard[i];
}

/* ---- the inbox: an intrusive multi-producer, single-consumer queue --- */
/*
 * D. Vyukov's non-blocking MPSC queue: a push is one exchange of the tail
 * and one store into the old tail's link, so it finishes in a fixed number
 * of steps whatever other threads do (wait-free). The consumer walks from
 * head; a producer between its exchange and its store leaves the queue
 * briefly cut, and the consumer then stops and takes the rest later (its
 * pop never waits either).
 */
static inline void mt_inbox_push(mt_shard *s, mt_node *n)
{
    atomic_store_explicit(&n->next, NULL, memory_order_relaxed);
    mt_node *prev = atomic_exchange_explicit(&s->tail, n, memory_order_acq_rel);
    atomic_store_explicit(&prev->next, n, memory_order_release);
}

static inline mt_node *mt_inbox_pop(mt_shard *s)
{
    mt_node *head = s->head;
    mt_node *next = atomic_load_explicit(&head->next, memory_order_acquire);
    if (head == &s->stub) {
        if (next == NULL)
            return NULL;
        s->head = head = next;
        next = atomic_load_explicit(&next->next, memory_order_acquire);
    }
    if (next != NULL) {
        s->head = next;
        return head;
    }
    if (head != atomic_load_explicit(&s->tail, memory_order_acquire))
        return NULL; /* a push is between its two steps */
    mt_inbox_push(s, &s->stub);
    next = atomic_load_explicit(&head->next, memory_order_acquire);
    if (next == NULL)
        return NULL;
    s->head = next;
    return head;
}

static inline void mt_inbox_init(mt_shard *s)
{
    atomic_init(&s->stub.next, NULL);
    atomic_init(&s->tail, &s->stub);
    s->head = &s->stub;
    atomic_init(&s->pending, 0);
}

/* ---- mt.c and mt_whole.c to each other -------------------------------- */

/* mt.c: takes back up to max pending blocks of s (the caller holds s). */
size_t rtm_mt_take_back(rtm_mt *m, mt_shard *s, size_t max);
/* mt.c: a salt that differs between heaps and between resets of one heap. */
uint64_t rtm_mt_new_salt(const rtm_mt *m);
/* mt.c: removes m from the live heaps (destroy). */
void rtm_mt_forget(rtm_mt *m);
/* mt_whole.c: destroys the heaps and mutexes of shards 0 .. count - 1. */
void rtm_mt_close_shards(rtm_mt *m, unsigned count);
/* mt_whole.c: the whole-heap calls of the descriptor. */
rtm_stats rtm_mt_stats(rtm_heap *h);
int rtm_mt_check(rtm_heap *h);
int rtm_mt_walk(rtm_heap *h, rtm_walker walker, void *arg);
int rtm_mt_reset(rtm_heap *h);
void rtm_mt_destroy(rtm_heap *h);

#endif /* RTM_MT_LAYOUT_H */
