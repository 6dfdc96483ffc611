// SPDX-License-Identifier: MIT
/*
 * mt/mt_whole.c -- the calls of the multi-threaded heap that look at every
 * shard: rtm_heap_stats, rtm_heap_check, rtm_heap_walk, rtm_heap_reset and
 * rtm_heap_destroy (rtmem/mt.h). None is real-time.
 *
 * To look at a shard's heap from another thread, that thread pauses the
 * shard: it takes the shard's mutex, sets `stop`, and waits until the owner
 * is outside a call (`busy` clear). Sequentially consistent on both sides
 * (mt.c's enter_own sets busy, then reads stop), so either the owner sees
 * stop and waits on the mutex, or the pauser sees busy and waits for the
 * call to end: never both inside. An owner waiting on the mutex lends its
 * priority to the pauser (PI), so a low-priority monitor thread cannot hold
 * a high-priority owner for longer than its own work on that shard.
 *
 * Lock order: shards in index order; stats, check and walk hold one shard
 * at a time, reset holds all (in order).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>

#include "mt/mt_layout.h"
#include "os/thread.h"

/* ---------------------------------------------------------------------- */
/* Pausing a shard                                                         */
/* ---------------------------------------------------------------------- */

static int pause_shard(mt_shard *s)
{
    int rc = rtm_os_mutex_lock(&s->lock);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    atomic_store_explicit(&s->stop, 1, memory_order_seq_cst);
    for (unsigned round = 0; atomic_load_explicit(&s->busy, memory_order_seq_cst) != 0; round++)
        rtm_os_thread_backoff(round);
    return 0;
}

static void resume_shard(mt_shard *s)
{
    atomic_store_explicit(&s->stop, 0, memory_order_release);
    (void)rtm_os_mutex_unlock(&s->lock);
}

/* ---------------------------------------------------------------------- */
/* Statistics                                                              */
/* ---------------------------------------------------------------------- */

/* One shard's part of the sums: its own counters less what waits in its
 * inbox (freed, not yet taken back), its heap's free memory plus that. */
static void add_shard(rtm_stats *st, mt_shard *s)
{
    rtm_stats in = rtm_heap_stats(s->heap);
    uint64_t pending = atomic_load_explicit(&s->pending, memory_order_relaxed);
    size_t pending_bytes = mt_pending_bytes(pending);
    size_t pending_blocks = mt_pending_blocks(pending);
    size_t largest =
        in.largest_free > RTM_MT_BLOCK_OVERHEAD ? in.largest_free - RTM_MT_BLOCK_OVERHEAD : 0;
    st->used_bytes += s->used - pending_bytes;
    st->live_blocks += s->live - pending_blocks;
    st->free_bytes += in.free_bytes + pending_bytes;
    st->peak_used_bytes += s->peak;
    st->failed_allocs += s->failed;
    if (largest > st->largest_free)
        st->largest_free = largest;
}

rtm_stats rtm_mt_stats(rtm_heap *h)
{
    rtm_mt *m = as_mt(h);
    rtm_stats st = {m->bytes, 0, 0, 0, 0, 0, 0};
    for (unsigned i = 0; i <= m->nshards; i++) {
        if (pause_shard(&m->shard[i]) != 0)
            continue;
        add_shard(&st, &m->shard[i]);
        resume_shard(&m->shard[i]);
    }
    return st;
}

/* ---------------------------------------------------------------------- */
/* The blocks of a shard, as the caller sees them                          */
/* ---------------------------------------------------------------------- */

/* Whether a word of the given prefix can be the word of a block p inside
 * the heap block q: a block of prefix 8 starts right after its word at the
 * heap block's start (p = q + 8); an aligned one is aligned to its prefix,
 * at least a prefix into the heap block. A word elsewhere is one left
 * behind in memory the heap handed out again: freed, but a later block
 * that ended inside it may have overwritten its low bytes (state and
 * prefix) with user data, and then it can read as live or pending (seen in
 * the model test, about once in 50 runs, before this rule). */
static int at_its_place(uintptr_t q, uintptr_t p, size_t prefix)
{
    if (prefix == RTM_MT_BLOCK_OVERHEAD)
        return p == q + RTM_MT_BLOCK_OVERHEAD;
    return (p & (prefix - 1u)) == 0 && p - q >= prefix;
}

/* The check word of a used block q of a shard's heap (usable bytes). The
 * caller's pointer is not always q + prefix: a heap may hand out an aligned
 * block from inside one of its blocks (TLSF forwards to the first aligned
 * address). So the block is scanned word by word from its start; the first
 * live or pending word that opens at its own address, with its prefix and
 * usable size inside the block, is the one (a word opens only with its own
 * address's key and the salt; a freed word left behind by an earlier block
 * at the same place opens too, and is passed over: a block is freed in its
 * word before its memory goes back to the shard's heap, so no stale word
 * is live or pending). Found at the first step for unaligned blocks, within about the
 * alignment for aligned ones; O(block) only for a block without a word,
 * which check then reports. state 0: none found. */
static mt_word find_word(const rtm_mt *m, const mt_shard *s, uintptr_t q, size_t usable,
                         uintptr_t *p_out)
{
    mt_word none = {0, 0, 0};
    for (uintptr_t p = q + RTM_MT_BLOCK_OVERHEAD; p <= q + usable; p += RTM_MT_BLOCK_OVERHEAD) {
        mt_word w = mt_open(m, s, p, atomic_load_explicit(mt_word_at(p), memory_order_relaxed));
        if ((w.state == MT_LIVE || w.state == MT_PENDING) && at_its_place(q, p, w.prefix) &&
            w.usable <= q + usable - p) {
            *p_out = p;
            return w;
        }
    }
    return none;
}

typedef struct shard_visit {
    const rtm_mt *m;
    const mt_shard *s;
    rtm_walker walker; /* walk: the user's */
    void *arg;
    size_t used, live, pending, bad; /* check: the sums */
} shard_visit;

static void visit_block(void *ptr, size_t usable, int used, void *arg)
{
    shard_visit *v = arg;
    uintptr_t p = 0;
    mt_word w = used ? find_word(v->m, v->s, (uintptr_t)ptr, usable, &p) : (mt_word){0, 0, 0};
    if (used && (w.state == MT_LIVE || w.state == MT_PENDING)) {
        v->used += w.usable;
        v->live++;
        v->pending += w.state == MT_PENDING;
    } else if (used) {
        v->bad++; /* a used block of the shard's heap that no caller holds */
    }
    if (v->walker == NULL)
        return;
    if (w.state == MT_LIVE || w.state == MT_PENDING)
        v->walker((void *)p, w.usable, w.state == MT_LIVE, v->arg);
    else
        v->walker(ptr, usable, used, v->arg);
}

int rtm_mt_walk(rtm_heap *h, rtm_walker walker, void *arg)
{
    rtm_mt *m = as_mt(h);
    for (unsigned i = 0; i <= m->nshards; i++) {
        mt_shard *s = &m->shard[i];
        shard_visit v = {m, s, walker, arg, 0, 0, 0, 0};
        if (pause_shard(s) != 0)
            return -1;
        int rc = rtm_heap_walk(s->heap, visit_block, &v);
        resume_shard(s);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Check                                                                   */
/* ---------------------------------------------------------------------- */

/* What must hold in a paused shard: its heap is sound, every used block
 * carries a live or pending word, the counters equal the words' sums, and
 * no more blocks are counted pending than have pending words (a remote free
 * sets the word before it counts). */
static const char *check_shard(const rtm_mt *m, mt_shard *s)
{
    if (rtm_heap_check(s->heap) != 0)
        return "mt heap: a shard's heap fails its check";
    shard_visit v = {m, s, NULL, NULL, 0, 0, 0, 0};
    if (rtm_heap_walk(s->heap, visit_block, &v) != 0)
        return "mt heap: a shard's heap cannot be walked";
    if (v.bad != 0)
        return "mt heap: a used block without a live or pending check word";
    if (v.used != s->used || v.live != s->live)
        return "mt heap: a shard's counters differ from its blocks";
    if (mt_pending_blocks(atomic_load_explicit(&s->pending, memory_order_relaxed)) > v.pending)
        return "mt heap: more blocks counted pending than wait in the inbox";
    if (s->peak < s->used)
        return "mt heap: a shard's peak is below its use";
    return NULL;
}

int rtm_mt_check(rtm_heap *h)
{
    rtm_mt *m = as_mt(h);
    for (unsigned i = 0; i <= m->nshards; i++) {
        mt_shard *s = &m->shard[i];
        if (pause_shard(s) != 0)
            return -1;
        const char *broken = check_shard(m, s);
        resume_shard(s);
        if (broken != NULL) {
            rtm_report(RTM_ERR_CHECK_FAILED, m, s->heap, broken);
            errno = EFAULT;
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Reset and destroy: no other thread may be in the heap                   */
/* ---------------------------------------------------------------------- */

int rtm_mt_reset(rtm_heap *h)
{
    rtm_mt *m = as_mt(h);
    unsigned held = 0;
    int rc = 0;
    for (; held <= m->nshards; held++)
        if (pause_shard(&m->shard[held]) != 0) {
            rc = -1;
            break;
        }
    for (unsigned i = 0; rc == 0 && i <= m->nshards; i++) {
        mt_shard *s = &m->shard[i];
        rc = rtm_heap_reset(s->heap);
        s->used = s->live = s->peak = s->failed = 0;
        mt_inbox_init(s);
    }
    m->salt = rtm_mt_new_salt(m); /* words of before the reset no longer open */
    while (held-- > 0)
        resume_shard(&m->shard[held]);
    return rc;
}

void rtm_mt_close_shards(rtm_mt *m, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        (void)rtm_os_mutex_destroy(&m->shard[i].lock);
        rtm_heap_destroy(m->shard[i].heap);
    }
}

void rtm_mt_destroy(rtm_heap *h)
{
    rtm_mt *m = as_mt(h);
    rtm_mt_forget(m);
    rtm_mt_close_shards(m, m->nshards + 1u);
    m->kind = 0; /* later calls on the handle fail with EINVAL */
}
