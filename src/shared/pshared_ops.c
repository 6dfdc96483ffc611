// SPDX-License-Identifier: MIT
/*
 * shared/pshared_ops.c -- the operations of a process-shared heap, called
 * by guarded.c with the heap's lock held: owner tags around the inner TLSF
 * blocks, and the intent record that makes each metadata change
 * recoverable when the process doing it dies (recovery.c).
 *
 * Protocol of every operation that changes TLSF metadata:
 *   1. fill the intent record: operation, pid, block, and the undo set --
 *      the header words the TLSF operation may change at existing blocks
 *      (heaps/tlsf_rebuild.h), read from the state it will start from;
 *   2. compiler barrier, then arm it (state = ACTIVE, one aligned store);
 *   3. compiler barrier, then the TLSF operation and the tag and counter
 *      updates;
 *   4. compiler barrier, then disarm it (state = IDLE).
 * Why a compiler barrier suffices (no CPU fence): the reader of the record
 * is the next holder of the robust mutex, and it reads only after the
 * kernel has marked the dead thread's mutex OWNER_DIED and handed it over.
 * The dead thread's stores were executed before its death; the kernel's
 * robust-list handling and the futex hand-over are full barriers, and the
 * new holder's lock is an acquire. So all that can reorder the record's
 * stores with the heap's stores is the compiler, which the barrier (an
 * atomic_signal_fence: a fence for a signal handler of the same thread,
 * which is what a kill between two instructions looks like) forbids.
 *
 * A process that dies outside the lock leaves nothing to repair: its blocks
 * simply stay allocated under its pid (rtm_shared_reclaim).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "os/shm.h"
#include "rtmem.h"
#include "shared/guarded.h"

/* ---------------------------------------------------------------------- */
/* Intent record                                                           */
/* ---------------------------------------------------------------------- */

static rtm_tlsf_undo *intent_prepare(rtm_guard *g, uint32_t op, const char *block)
{
    guard_intent *in = &g->intent;
    in->op = op;
    in->pid = rtm_os_pid();
    in->block = block != NULL ? (int64_t)(block - (const char *)guard_tlsf(g)) : 0;
    in->undo.count = 0;
    return &in->undo;
}

static void intent_arm(rtm_guard *g)
{
    atomic_signal_fence(memory_order_seq_cst); /* the record is complete ... */
    g->intent.state = INTENT_ACTIVE;
    atomic_signal_fence(memory_order_seq_cst); /* ... before the first change */
}

static void intent_disarm(rtm_guard *g)
{
    atomic_signal_fence(memory_order_seq_cst); /* every change is done ... */
    g->intent.state = INTENT_IDLE;
    atomic_signal_fence(memory_order_seq_cst); /* ... before the unlock */
}

/* ---------------------------------------------------------------------- */
/* Blocks and tags                                                         */
/* ---------------------------------------------------------------------- */

/* The user-visible bytes in use (inner use minus the tags). */
static size_t user_used(rtm_guard *g, const rtm_stats *inner)
{
    return inner->used_bytes - (size_t)g->tag_bytes;
}

static void note_peak(rtm_guard *g)
{
    rtm_stats st = rtm_tlsf_stats(guard_tlsf(g));
    size_t used = user_used(g, &st);
    if (used > g->peak_used)
        g->peak_used = used;
}

char *rtm_pshared_block_of(rtm_guard *g, const void *q, size_t *delta)
{
    rtm_tlsf *t = guard_tlsf(g);
    uintptr_t a = (uintptr_t)q, lo = (uintptr_t)t, hi = (uintptr_t)g + (uintptr_t)g->bytes;
    if ((a & (RTM_ALIGN - 1u)) != 0 || a < lo + RTM_SHARED_TAG_BYTES || a >= hi)
        return NULL;
    uint32_t mark = *(const uint32_t *)(const void *)(a - 4u);
    unsigned lg = mark & ~TAG_MARK_MASK;
    if ((mark & TAG_MARK_MASK) != TAG_MARK || lg < 3u || lg >= sizeof(size_t) * 8u ||
        ((size_t)1 << lg) > a - lo)
        return NULL;
    size_t d = (size_t)1 << lg;
    char *p = (char *)(a - d);
    if (!rtm_tlsf_in_pool(t, p) || tag_delta(p) != d)
        return NULL;
    *delta = d;
    return p;
}

static int refuse_pointer(rtm_guard *g, const void *q)
{
    rtm_report(RTM_ERR_FOREIGN_POINTER, g, q, "pointer is not a live block of this shared heap");
    errno = EINVAL;
    return -1;
}

/* ---------------------------------------------------------------------- */
/* Operations                                                              */
/* ---------------------------------------------------------------------- */

void *rtm_pshared_alloc(rtm_guard *g, size_t align, size_t size)
{
    if (!rtm_is_pow2(align)) {
        errno = EINVAL;
        return NULL;
    }
    rtm_tlsf *t = guard_tlsf(g);
    size_t delta = align > RTM_SHARED_TAG_BYTES ? align : RTM_SHARED_TAG_BYTES;
    size_t inner = size > SIZE_MAX - delta ? SIZE_MAX : size + delta; /* SIZE_MAX: refused */
    rtm_tlsf_undo_alloc(t, align, inner, intent_prepare(g, RTM_SHARED_OP_ALLOC, NULL));
    intent_arm(g);
    char *p =
        align > RTM_ALIGN ? rtm_tlsf_aligned_alloc(t, align, inner) : rtm_tlsf_alloc(t, inner);
    if (p != NULL) {
        tag_write(p, delta, rtm_os_pid());
        g->tag_bytes += delta;
        note_peak(g);
    }
    intent_disarm(g);
    return p != NULL ? p + delta : NULL;
}

int rtm_pshared_free(rtm_guard *g, void *ptr)
{
    size_t delta = 0;
    char *p = rtm_pshared_block_of(g, ptr, &delta);
    if (p == NULL)
        return refuse_pointer(g, ptr);
    rtm_tlsf *t = guard_tlsf(g);
    rtm_tlsf_undo_free(t, p, intent_prepare(g, RTM_SHARED_OP_FREE, p));
    intent_arm(g);
    int rc = rtm_tlsf_free(t, p);
    if (rc == 0)
        g->tag_bytes -= delta;
    intent_disarm(g);
    return rc;
}

void *rtm_pshared_realloc(rtm_guard *g, void *ptr, size_t size)
{
    if (ptr == NULL)
        return rtm_pshared_alloc(g, RTM_ALIGN, size);
    if (size == 0) {
        (void)rtm_pshared_free(g, ptr);
        return NULL;
    }
    size_t delta = 0;
    char *p = rtm_pshared_block_of(g, ptr, &delta);
    if (p == NULL) {
        (void)refuse_pointer(g, ptr);
        return NULL;
    }
    rtm_tlsf *t = guard_tlsf(g);
    size_t inner = size > SIZE_MAX - delta ? SIZE_MAX : size + delta;
    rtm_tlsf_undo *u = intent_prepare(g, RTM_SHARED_OP_REALLOC, p);
    g->intent.tag_owner = tag_owner(p);
    g->intent.tag_mark = tag_mark(delta);
    rtm_tlsf_undo_realloc(t, p, inner, u);
    intent_arm(g);
    /* A moved block keeps its alignment (TLSF keeps the address's), so the
     * copied tag still fits; the caller becomes its owner. */
    char *q = rtm_tlsf_realloc(t, p, inner);
    if (q != NULL) {
        tag_write(q, delta, rtm_os_pid());
        note_peak(g);
    }
    intent_disarm(g);
    return q != NULL ? q + delta : NULL;
}

/* Refused as free refuses: a pointer without a valid tag is reported here
 * (refuse_pointer); a tag that survived its block (a freed block merged
 * into its left neighbour keeps its first words) is caught by the inner
 * heap's validation, which reports it as free() does. */
size_t rtm_pshared_usable(rtm_guard *g, const void *ptr)
{
    size_t delta = 0;
    char *p = rtm_pshared_block_of(g, ptr, &delta);
    if (p == NULL) {
        (void)refuse_pointer(g, ptr);
        return 0;
    }
    size_t n = rtm_tlsf_usable_size_in(guard_tlsf(g), p);
    return n != 0 ? n - delta : 0;
}

int rtm_pshared_adopt(rtm_guard *g, void *ptr)
{
    size_t delta = 0;
    char *p = rtm_pshared_block_of(g, ptr, &delta);
    if (p == NULL)
        return refuse_pointer(g, ptr);
    *tag_word(p, 0) = rtm_os_pid(); /* one store: no intent needed */
    return 0;
}

int rtm_pshared_reset(rtm_guard *g)
{
    (void)intent_prepare(g, RTM_SHARED_OP_RESET, NULL);
    intent_arm(g);
    rtm_tlsf_reset(guard_tlsf(g));
    g->tag_bytes = 0;
    g->peak_used = 0;
    intent_disarm(g);
    return 0;
}

/* Each free block could hold its usable size minus a tag; the largest
 * request granted is the inner one minus a tag. The peak is the guard's own
 * (the inner one counts tags). */
rtm_stats rtm_pshared_stats(rtm_guard *g)
{
    rtm_tlsf *t = guard_tlsf(g);
    rtm_stats st = rtm_tlsf_stats(t);
    st.used_bytes = user_used(g, &st);
    st.free_bytes -= RTM_SHARED_TAG_BYTES * rtm_tlsf_free_count(t);
    st.largest_free =
        st.largest_free > RTM_SHARED_TAG_BYTES ? st.largest_free - RTM_SHARED_TAG_BYTES : 0;
    st.peak_used_bytes = (size_t)g->peak_used;
    st.arena_bytes = (size_t)g->bytes;
    return st;
}

/* ---------------------------------------------------------------------- */
/* Walk and check                                                          */
/* ---------------------------------------------------------------------- */

typedef struct walk_adapter {
    void (*walker)(void *, size_t, int, void *);
    void *arg;
} walk_adapter;

/* Shows blocks as the user sees them: payload after the tag. */
static void visit_user(void *ptr, size_t usable, int used, void *arg)
{
    walk_adapter *w = arg;
    char *p = ptr;
    size_t delta = used ? tag_delta(p) : RTM_SHARED_TAG_BYTES;
    if (delta == 0 || delta > usable)
        delta = RTM_SHARED_TAG_BYTES; /* untagged: rtm_heap_check reports it */
    w->walker(p + delta, usable - delta, used, w->arg);
}

int rtm_pshared_walk(rtm_guard *g, void (*walker)(void *, size_t, int, void *), void *arg)
{
    walk_adapter w = {walker, arg};
    rtm_tlsf_walk(guard_tlsf(g), visit_user, &w);
    return 0;
}

typedef struct tag_audit {
    uint64_t sum;
    void *bad; /* first used block without a valid tag */
} tag_audit;

static void audit_tag(void *ptr, size_t usable, int used, void *arg)
{
    tag_audit *a = arg;
    if (!used)
        return;
    size_t delta = tag_delta(ptr);
    if ((delta == 0 || delta > usable || *tag_word(ptr, delta - 4u) != tag_mark(delta) ||
         tag_owner(ptr) == 0) &&
        a->bad == NULL)
        a->bad = ptr;
    a->sum += delta;
}

uint64_t rtm_pshared_tag_sum(rtm_guard *g)
{
    tag_audit a = {0, NULL};
    rtm_tlsf_walk(guard_tlsf(g), audit_tag, &a);
    return a.sum;
}

static int check_fail(rtm_guard *g, const void *where, const char *what)
{
    rtm_report(RTM_ERR_CHECK_FAILED, g, where, what);
    errno = EFAULT;
    return -1;
}

/* TLSF's own check of the inner heap, bounded by the segment: the inner
 * control structure lives in shared memory that any process (or a stray
 * write) may have damaged, and must not lead the check out of the segment. */
static int check_inner(rtm_guard *g)
{
    rtm_tlsf *t = guard_tlsf(g);
    size_t inner = (size_t)((char *)t - (char *)g);
    return rtm_tlsf_check_region(t, t, (size_t)g->bytes - inner);
}

/* TLSF's own check, then what the shared layer adds: the intent record is
 * idle, every used block is tagged, the tag sum and the peak agree. */
int rtm_pshared_check(rtm_guard *g)
{
    rtm_tlsf *t = guard_tlsf(g);
    if (check_inner(g) != 0)
        return -1;
    if (g->intent.state != INTENT_IDLE)
        return check_fail(g, &g->intent, "an operation is still recorded as in flight");
    tag_audit a = {0, NULL};
    rtm_tlsf_walk(t, audit_tag, &a);
    if (a.bad != NULL)
        return check_fail(g, a.bad, "used block without a valid owner tag");
    if (a.sum != g->tag_bytes)
        return check_fail(g, g, "tag byte counter differs from the blocks");
    rtm_stats st = rtm_tlsf_stats(t);
    if (g->peak_used < user_used(g, &st))
        return check_fail(g, g, "peak below current use");
    return 0;
}
