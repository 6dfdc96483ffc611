// SPDX-License-Identifier: MIT
/*
 * shared/guarded.h -- the guard: the control structure of a locked heap
 * (rtmem/lock.h) and of a process-shared heap (rtmem/shared.h), and the
 * owner tags of shared blocks. Internal to src/shared/.
 *
 * A guarded heap is two heaps in one region: the guard, whose first word is
 * the kind RTM_KIND_GUARDED so that core/heap.c dispatches every generic
 * call to shared/guarded.c, and after it an ordinary inner heap, named by
 * its offset from the guard (no pointer: the region may be mapped anywhere).
 *
 *   guard (8-aligned)                                  inner heap
 *   +-------------------------------------------+     +------------------+
 *   | frozen prefix (32 bytes, every version):   |     | control (TLSF:   |
 *   |   kind "GRD1" | flags | magic "rtmemGRD"   |     | kind "TLS3" ...) |
 *   |   version | abi | bytes                    | --> | blocks ...       |
 *   | algorithm name, inner offset, ready word,  |     |                  |
 *   | lock holder, counters, intent record,      |     |                  |
 *   | mutex (PI; shared: + pshared + robust)     |     |                  |
 *   +-------------------------------------------+     +------------------+
 *
 * The prefix is what rtm_shared_open() reads before trusting anything
 * else, so it never changes: a later layout bumps `version` (EPROTO), and a
 * 32-bit process meeting a 64-bit heap sees another `abi` (EPROTO).
 *
 * Shared blocks carry an owner tag in front of the user's payload (the
 * inner block's payload p, 8-aligned; the user gets q = p + delta, delta = 8
 * or the requested alignment, a power of two):
 *
 *   p: [owner pid (32)][mark (32)] ... [mark (32)] q: user data ...
 *       `------------ p+4 ------'       `- q-4 -'   (one word when delta=8)
 *
 * mark = TAG_MARK | log2(delta); the word at q-4 finds p, the word at p+4
 * confirms it, so a pointer that is not a shared block (or a freed one,
 * whose first words are free-list links) is refused before the inner heap
 * reads its header.
 */
#ifndef RTM_SHARED_GUARDED_H
#define RTM_SHARED_GUARDED_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "heaps/tlsf_rebuild.h"
#include "os/mutex.h"

#define GUARD_MAGIC         UINT64_C(0x4452474d656d7472) /* "rtmemGRD" little-endian */
#define GUARD_MAGIC_SWAPPED UINT64_C(0x72746d654d475244) /* the same, other byte order */
#define GUARD_VERSION       1u
#define GUARD_READY         0x59444552u /* "REDY": creation finished */
#define GUARD_SHARED        1u          /* flags: a process-shared heap */
#define GUARD_ALIGN         8u

/* The intent record: written before each metadata change of a shared heap,
 * armed (state = ACTIVE) last, disarmed after the change. */
#define INTENT_IDLE   0u
#define INTENT_ACTIVE 0x41435456u /* "ACTV" */

typedef struct guard_intent {
    uint32_t state; /* INTENT_IDLE / INTENT_ACTIVE                         */
    uint32_t op;    /* rtm_shared_op                                       */
    uint32_t pid;   /* the process doing it                                */
    uint32_t tag_owner;
    uint32_t tag_mark; /* realloc: the block's tag, restored on rollback */
    uint32_t unused;
    int64_t block;      /* inner payload offset of the block freed / resized */
    rtm_tlsf_undo undo; /* header words the operation may change           */
} guard_intent;

typedef struct rtm_guard {
    /* Frozen prefix (32 bytes). */
    uint32_t kind;    /* RTM_KIND_GUARDED                                 */
    uint32_t flags;   /* GUARD_SHARED                                     */
    uint64_t magic;   /* GUARD_MAGIC                                      */
    uint32_t version; /* GUARD_VERSION                                    */
    uint32_t abi;     /* pointer size | guard size << 8                  */
    uint64_t bytes;   /* the region (segment) from the guard on           */
    /* Layout version 1. */
    char algorithm[24];  /* inner algorithm name, NUL-terminated         */
    int64_t inner;       /* offset of the inner heap's control            */
    uint64_t overhead;   /* bytes before the inner region (arena_bytes)   */
    uint32_t ready;      /* GUARD_READY once created                      */
    uint32_t holder;     /* shared: pid holding the lock, 0 none          */
    uint32_t creator;    /* shared: creating pid                          */
    uint32_t last_dead;  /* shared: last dead holder                      */
    uint32_t last_op;    /* shared: what it was doing                     */
    uint32_t unused;     /*                                               */
    uint64_t recoveries; /* shared: dead holders found                    */
    uint64_t repairs;    /* shared: of which with an operation in flight  */
    uint64_t tag_bytes;  /* shared: sum of tag deltas of live blocks      */
    uint64_t peak_used;  /* shared: peak of user-visible used bytes       */
    guard_intent intent; /* shared                                        */
    rtm_os_mutex mutex;  /* PI; shared heaps: + pshared + robust          */
} rtm_guard;

_Static_assert(offsetof(rtm_guard, algorithm) == 32, "the frozen prefix is 32 bytes");
_Static_assert(_Alignof(rtm_guard) <= GUARD_ALIGN, "the guard fits an 8-aligned start");

/* The guard's size rounded to the inner heap's alignment. */
#define GUARD_BYTES ((sizeof(rtm_guard) + 15u) & ~(size_t)15u)
#define GUARD_ABI   ((uint32_t)(sizeof(void *) | (sizeof(rtm_guard) << 8)))

static inline rtm_guard *as_guard(struct rtm_heap *h) { return (rtm_guard *)(void *)h; }
static inline int guard_is_shared(const rtm_guard *g) { return (g->flags & GUARD_SHARED) != 0; }
static inline void *guard_inner(const rtm_guard *g)
{
    return (char *)(uintptr_t)g + (ptrdiff_t)g->inner;
}
static inline rtm_tlsf *guard_tlsf(const rtm_guard *g) { return (rtm_tlsf *)guard_inner(g); }

/* --- owner tags ----------------------------------------------------------- */

#define TAG_MARK      0x52544d00u /* "\0MTR": the top 24 bits of a mark */
#define TAG_MARK_MASK 0xffffff00u

static inline uint32_t *tag_word(char *p, size_t at) { return (uint32_t *)(void *)(p + at); }
static inline uint32_t tag_mark(size_t delta) { return TAG_MARK | rtm_fls_size(delta); }

/* Writes the tag of inner block p whose user payload is p + delta. */
static inline void tag_write(char *p, size_t delta, uint32_t owner)
{
    *tag_word(p, 0) = owner;
    *tag_word(p, 4) = tag_mark(delta);
    *tag_word(p, delta - 4u) = tag_mark(delta);
}

/* The delta of a valid tag at inner block p, or 0. */
static inline size_t tag_delta(char *p)
{
    uint32_t mark = *tag_word(p, 4);
    unsigned lg = mark & ~TAG_MARK_MASK;
    if ((mark & TAG_MARK_MASK) != TAG_MARK || lg < 3u || lg >= sizeof(size_t) * 8u)
        return 0;
    return (size_t)1 << lg;
}

static inline uint32_t tag_owner(char *p) { return *tag_word(p, 0); }

/* --- guarded.c: the lock and the kind ------------------------------------ */

/* Registers the guarded kind with the generic API (core/kind.h); whatever
 * hands out a guarded handle calls it first. 0, or -1 with errno ENOSPC. */
int rtm_guarded_register(void);

/* Takes the guard's lock; for a shared heap, records the holder and repairs
 * the heap when the previous holder died. 0, or -1 with errno. */
int rtm_guard_lock(rtm_guard *g);
/* Releases it, keeping errno. */
void rtm_guard_unlock(rtm_guard *g);

/* --- pshared_ops.c: shared-heap operations, lock held --------------------- */

void *rtm_pshared_alloc(rtm_guard *g, size_t align, size_t size);
int rtm_pshared_free(rtm_guard *g, void *ptr);
void *rtm_pshared_realloc(rtm_guard *g, void *ptr, size_t size);
size_t rtm_pshared_usable(rtm_guard *g, const void *ptr);
rtm_stats rtm_pshared_stats(rtm_guard *g);
int rtm_pshared_check(rtm_guard *g);
int rtm_pshared_walk(rtm_guard *g, void (*walker)(void *, size_t, int, void *), void *arg);
int rtm_pshared_reset(rtm_guard *g);
int rtm_pshared_adopt(rtm_guard *g, void *ptr);
/* The inner block of user pointer q (NULL if q is not a live-looking shared
 * block); *delta gets its tag size. */
char *rtm_pshared_block_of(rtm_guard *g, const void *q, size_t *delta);

/* --- recovery.c: after a holder's death, lock held ------------------------ */

/* Rolls the interrupted operation back or forward, rebuilds and checks.
 * `dead` is the holder recorded before this process took over (0 unknown).
 * 0, or -1 when the heap cannot be made consistent. */
int rtm_pshared_recover(rtm_guard *g, uint32_t dead);
/* Sum of the tag deltas of all live blocks (to re-derive tag_bytes). */
uint64_t rtm_pshared_tag_sum(rtm_guard *g);

#endif /* RTM_SHARED_GUARDED_H */
