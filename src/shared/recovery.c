// SPDX-License-Identifier: MIT
/*
 * shared/recovery.c -- what happens after a process dies: the repair of an
 * operation it left half-done (called by guarded.c when the robust mutex
 * reports the owner's death), and the accounting and reclaiming of the
 * blocks it still owned.
 *
 * Repair, with the lock held and the intent record armed:
 *   ALLOC    restore the undo set, rebuild: the block is free again (the
 *            dead process never got its address).
 *   FREE     restore, rebuild, then free the block: the free completes.
 *   REALLOC  restore, rebuild, rewrite the block's tag: the old block is
 *            as before the call (contents past the first bytes may hold
 *            free-list links or a footer written before the death: the
 *            block belonged to the dead process), owned by it.
 *   RESET    reset again: it completes.
 * then re-derive the tag counter, disarm, and run the full check
 * (rtm_pshared_check: TLSF invariants, tags, counters); only a clean check
 * lets guarded.c mark the mutex consistent. Every step is idempotent, so a
 * process that dies while repairing leaves the same record armed and the
 * next one starts over. With the record idle (death outside an operation,
 * e.g. between lock and intent), there is nothing to undo: the check alone
 * runs.
 *
 * Why restoring a handful of header words is enough: heaps/tlsf_rebuild.h.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdatomic.h>

#include "os/shm.h"
#include "rtmem.h"
#include "shared/guarded.h"

/* ---------------------------------------------------------------------- */
/* Repair                                                                  */
/* ---------------------------------------------------------------------- */

static char *intent_block(rtm_guard *g)
{
    int64_t off = g->intent.block;
    if (off <= 0 || (uint64_t)off >= g->bytes)
        return NULL;
    char *p = (char *)guard_tlsf(g) + (ptrdiff_t)off;
    return rtm_tlsf_in_pool(guard_tlsf(g), p) ? p : NULL;
}

/* Rolls the armed operation back, or forward for free and reset. */
static int replay_intent(rtm_guard *g)
{
    guard_intent *in = &g->intent;
    rtm_tlsf *t = guard_tlsf(g);
    /* Reset, undo and rebuild all follow the pool list: bounded first. */
    size_t inner = (size_t)((char *)t - (char *)g);
    if (!rtm_tlsf_pools_within(t, (size_t)g->bytes - inner))
        return -1;
    if (in->op == RTM_SHARED_OP_RESET) {
        rtm_tlsf_reset(t);
        g->peak_used = 0;
        return 0;
    }
    rtm_tlsf_undo_apply(t, &in->undo);
    if (rtm_tlsf_rebuild(t) != 0)
        return -1;
    char *p = intent_block(g);
    if (in->op == RTM_SHARED_OP_FREE && p != NULL)
        (void)rtm_tlsf_free(t, p); /* its header is the pre-free one again */
    if (in->op == RTM_SHARED_OP_REALLOC && p != NULL) {
        size_t delta = (size_t)1 << (in->tag_mark & ~TAG_MARK_MASK);
        if ((in->tag_mark & TAG_MARK_MASK) == TAG_MARK && delta <= rtm_tlsf_usable_size(p))
            tag_write(p, delta, in->tag_owner);
    }
    return 0;
}

/* The inner heap's structure, checked within the segment before anything
 * walks its blocks (the tag counters below): a heap the replay could not
 * make walkable fails here instead of leading a walk out of the segment. */
static int inner_walkable(rtm_guard *g)
{
    rtm_tlsf *t = guard_tlsf(g);
    size_t inner = (size_t)((char *)t - (char *)g);
    return rtm_tlsf_check_region(t, t, (size_t)g->bytes - inner) == 0;
}

int rtm_pshared_recover(rtm_guard *g, uint32_t dead)
{
    guard_intent *in = &g->intent;
    int armed = in->state == INTENT_ACTIVE;
    g->recoveries++;
    g->last_dead = dead != 0 ? dead : (armed ? in->pid : 0u);
    g->last_op = armed ? in->op : (uint32_t)RTM_SHARED_OP_NONE;
    if (armed) {
        g->repairs++;
        if (replay_intent(g) != 0)
            return -1;
    }
    if (!inner_walkable(g))
        return -1;
    /* Counters the shared layer keeps beside TLSF's, re-derived. */
    g->tag_bytes = rtm_pshared_tag_sum(g);
    rtm_stats st = rtm_tlsf_stats(guard_tlsf(g));
    if (g->peak_used < st.used_bytes - g->tag_bytes)
        g->peak_used = st.used_bytes - g->tag_bytes;
    atomic_signal_fence(memory_order_seq_cst);
    in->state = INTENT_IDLE;
    atomic_signal_fence(memory_order_seq_cst);
    return rtm_pshared_check(g);
}

/* ---------------------------------------------------------------------- */
/* Owners: adopt, count, reclaim                                           */
/* ---------------------------------------------------------------------- */

static rtm_guard *shared_guard(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (h == NULL || g->kind != RTM_KIND_GUARDED || !guard_is_shared(g)) {
        errno = EINVAL;
        return NULL;
    }
    return g;
}

int rtm_shared_adopt(rtm_heap *h, void *ptr)
{
    rtm_guard *g = shared_guard(h);
    if (g == NULL || rtm_guard_lock(g) != 0)
        return -1;
    int rc = rtm_pshared_adopt(g, ptr);
    rtm_guard_unlock(g);
    return rc;
}

/* Which owners a count or reclaim selects: one pid, or (pid 0) every pid
 * that no longer exists, remembering the last answer to spare kill(2)
 * calls on runs of blocks of one owner. */
typedef struct owner_filter {
    uint32_t pid, last, last_dead;
} owner_filter;

static int owner_selected(owner_filter *f, uint32_t owner)
{
    if (f->pid != 0)
        return owner == f->pid;
    if (owner != f->last) {
        f->last = owner;
        f->last_dead = !rtm_os_pid_alive(owner);
    }
    return f->last_dead != 0;
}

#define RECLAIM_BATCH 64u

typedef struct owner_scan {
    owner_filter filter;
    rtm_shared_usage usage;
    char *found[RECLAIM_BATCH]; /* inner blocks to free, reclaim only */
    size_t nfound;
} owner_scan;

static void scan_block(void *ptr, size_t usable, int used, void *arg)
{
    owner_scan *s = arg;
    size_t delta = used ? tag_delta(ptr) : 0;
    if (delta == 0 || delta > usable || !owner_selected(&s->filter, tag_owner(ptr)))
        return;
    s->usage.blocks++;
    s->usage.bytes += usable - delta;
    if (s->nfound < RECLAIM_BATCH)
        s->found[s->nfound++] = ptr;
}

static int filter_for(long pid, owner_filter *f)
{
    if (pid < 0 || (unsigned long)pid > UINT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    f->pid = (uint32_t)pid;
    f->last = 0;
    f->last_dead = 1; /* owner 0 (never written by a live process) is dead */
    return 0;
}

int rtm_shared_owned(rtm_heap *h, long pid, rtm_shared_usage *out)
{
    rtm_guard *g = shared_guard(h);
    owner_scan s = {{0, 0, 0}, {0, 0}, {NULL}, 0};
    if (g == NULL || out == NULL || filter_for(pid, &s.filter) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (rtm_guard_lock(g) != 0)
        return -1;
    rtm_tlsf_walk(guard_tlsf(g), scan_block, &s);
    rtm_guard_unlock(g);
    *out = s.usage;
    return 0;
}

/* Frees in batches: a walk must not run over blocks it is freeing, so each
 * walk collects up to RECLAIM_BATCH blocks, which are then freed through
 * the crash-safe free; the next walk finds the rest. */
long rtm_shared_reclaim(rtm_heap *h, long pid)
{
    rtm_guard *g = shared_guard(h);
    owner_scan s = {{0, 0, 0}, {0, 0}, {NULL}, 0};
    if (g == NULL || filter_for(pid, &s.filter) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (rtm_guard_lock(g) != 0)
        return -1;
    long freed = 0, batch = 0;
    do {
        s.nfound = 0;
        batch = 0;
        rtm_tlsf_walk(guard_tlsf(g), scan_block, &s);
        for (size_t i = 0; i < s.nfound; i++) {
            char *p = s.found[i];
            if (rtm_pshared_free(g, p + tag_delta(p)) == 0)
                batch++;
        }
        freed += batch;
    } while (s.nfound == RECLAIM_BATCH && batch > 0); /* a refused free ends it */
    rtm_guard_unlock(g);
    return freed;
}
