// SPDX-License-Identifier: MIT
/*
 * latency_contend.c -- a high-priority thread allocating while
 * lower-priority threads hammer the same heap (docs/LATENCY.md): its worst
 * call on the locked heap against the mt heap, which is what the mt heap
 * (include/rtmem/mt.h) exists to remove: the priority-inheritance handover
 * a thread pays when it finds the heap's lock held.
 *
 *   H (high, 60)    pinned to the test CPU; `iterations` times it sleeps a
 *                   varying 20-85 us (so that it wakes at any point of the
 *                   hammers' calls), then
 *                   calls rtm_alloc(64) and rtm_free, timing each call; the
 *                   sample is the slower of the two.
 *   W0, W1 (low, 40)  hammer the heap without pause (alloc and free of 16 to
 *                   1024 bytes over a ring of 32 blocks), breathing as every
 *                   busy thread of this command does: W0 on H's CPU (H
 *                   preempts it, possibly inside a call holding the lock),
 *                   W1 on the other allowed CPU when there is one (it holds
 *                   the lock while H, running beside it, wants it).
 *
 *   HeapContendedLocked  rtm_locked_create(algorithm): one heap, one
 *                        PTHREAD_PRIO_INHERIT mutex. H waits whenever a
 *                        hammer holds the lock: the unlock, the PI futex's
 *                        wake and the switch are in its worst call.
 *   HeapContendedMt      rtm_mt_create(algorithm, ..., 3 shards): every
 *                        thread attaches to a shard of its own at its start
 *                        (before the timed loop) and detaches at its end. H's
 *                        calls touch only its shard; nothing it waits for.
 *
 * Without SCHED_FIFO the same threads run under SCHED_OTHER, and the
 * report says so: then H's worst call is also whatever the scheduler did.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "latency/latency.h"
#include "rtmem.h"
#include "rtmem/lock.h"
#include "rtmem/mt.h"

#define HAMMERS      2u
#define SHARD_BYTES  (256u * 1024u) /* each thread's part of the mt heap */
#define H_BYTES      64u
#define RING         32u
#define GAP_MIN_NS   20000u /* H's sleep between iterations: 20 .. 83 us */
#define GAP_SPAN_LOG 16u

typedef struct contend {
    const lat_env *e;
    lat_test *t;
    int mt;
    rtm_heap *h;
    atomic_int stop;
    atomic_int unattached; /* mt: threads whose attach was refused */
    atomic_int refused;    /* hammer or H allocations that failed  */
} contend;

/* The region: the mt heap's 3 shards and fallback, or the locked heap. */
static _Alignas(64) unsigned char region[(HAMMERS + 2u) * SHARD_BYTES + 65536u];

static void enter(contend *c)
{
    if (c->mt && rtm_mt_attach(c->h) < 0)
        atomic_fetch_add(&c->unattached, 1);
}

static void leave(contend *c)
{
    if (c->mt)
        (void)rtm_mt_detach(c->h); /* -1 when never attached: nothing to undo */
}

static void *hammer_main(void *arg)
{
    contend *c = arg;
    void *ring[RING] = {NULL};
    uint64_t since = mono_ns();
    enter(c);
    for (uint32_t i = 0; !atomic_load(&c->stop); i++) {
        if (lat_breath_due(since))
            lat_breathe(&since);
        unsigned k = i % RING;
        rtm_free(c->h, ring[k]); /* rtm_free(NULL) does nothing */
        ring[k] = rtm_alloc(c->h, 16u + (i * 2654435761u >> 22) % 1009u);
        if (ring[k] == NULL)
            atomic_fetch_add(&c->refused, 1);
    }
    for (unsigned k = 0; k < RING; k++)
        rtm_free(c->h, ring[k]);
    leave(c);
    return NULL;
}

/* One nanosleep of gap ns (restarted on EINTR). */
static void pause_ns(uint64_t gap)
{
    struct timespec ts = {0, (long)gap}, rem;
    while (nanosleep(&ts, &rem) != 0 && errno == EINTR)
        ts = rem;
}

static void *high_main(void *arg)
{
    contend *c = arg;
    const bench_clock *clk = &c->e->clk;
    uint64_t seed = 0x9E3779B97F4A7C15u;
    enter(c);
    for (uint64_t i = 0; i < c->e->iterations; i++) {
        lat_heartbeat();
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        pause_ns(GAP_MIN_NS + (seed >> (64u - GAP_SPAN_LOG)));
        uint64_t t0 = clock_ticks(clk);
        void *p = rtm_alloc(c->h, H_BYTES);
        uint64_t t1 = clock_ticks(clk);
        rtm_free(c->h, p);
        uint64_t t2 = clock_ticks(clk);
        if (p == NULL)
            atomic_fetch_add(&c->refused, 1);
        uint64_t a = clock_net(clk, t0, t1), f = clock_net(clk, t1, t2);
        c->t->ns[c->t->n++] = (double)(a > f ? a : f);
    }
    atomic_store(&c->stop, 1);
    leave(c);
    return NULL;
}

static rtm_heap *open_heap(const lat_env *e, int mt)
{
    if (!mt)
        return rtm_locked_create(e->algorithm, region, sizeof region);
    return rtm_mt_create(e->algorithm, region, sizeof region, HAMMERS + 1u);
}

static void describe(const lat_env *e, lat_test *t, int mt)
{
    snprintf(t->placement, sizeof t->placement,
             "H %d on CPU %d; W0 %d on CPU %d, W1 %d on CPU %d; %s", LAT_PRIO_HIGH, e->cpu,
             LAT_PRIO_LOW, e->cpu, LAT_PRIO_LOW, e->other_cpu >= 0 ? e->other_cpu : e->cpu,
             e->fifo ? "SCHED_FIFO" : "SCHED_OTHER (FIFO not permitted)");
    t->primitive = mt ? "mt heap, one shard per thread (rtm_mt_create)"
                      : "locked rtm heap, PTHREAD_PRIO_INHERIT mutex (rtm_locked_create)";
    t->measures = "H's slower call of rtm_alloc(64) / rtm_free, 2 lower-priority threads "
                  "hammering the same heap";
}

void lat_contend_run(int mt, const lat_env *e, lat_test *t)
{
    static contend c; /* static: atomics need no stack */
    memset(&c, 0, sizeof c);
    c.e = e;
    c.t = t;
    c.mt = mt;
    t->group = "heap";
    describe(e, t, mt);
    c.h = open_heap(e, mt);
    if (c.h == NULL) {
        lat_fail(t, LAB_SKIPPED, "cannot create the %s heap of %s: %s", mt ? "mt" : "locked",
                 e->algorithm, strerror(errno));
        return;
    }
    cpu_set_t here = lat_one_cpu(e->cpu),
              there = lat_one_cpu(e->other_cpu >= 0 ? e->other_cpu : e->cpu);
    lat_thread th[HAMMERS + 1u];
    memset(th, 0, sizeof th);
    int rc = lat_thread_start(&th[1], e, LAT_PRIO_LOW, &here, hammer_main, &c);
    if (rc == 0)
        rc = lat_thread_start(&th[2], e, LAT_PRIO_LOW, &there, hammer_main, &c);
    if (rc == 0)
        rc = lat_thread_start(&th[0], e, LAT_PRIO_HIGH, &here, high_main, &c);
    if (rc != 0) {
        lat_fail(t, LAB_FAILED, "cannot start a thread: %s", strerror(rc));
        atomic_store(&c.stop, 1);
    }
    int stuck = 0;
    for (unsigned k = 0; k <= HAMMERS; k++)
        stuck |= lat_thread_join(&th[k], e->timeout_ns) != 0;
    if (stuck) {
        lat_fail(t, LAB_FAILED, "a thread did not finish in time (stuck)");
        return; /* keep the heap: a stuck thread may use it */
    }
    rtm_stats st = rtm_heap_stats(c.h);
    int check = rtm_heap_check(c.h);
    rtm_heap_destroy(c.h);
    if (t->status != LAB_NOT_RUN)
        return;
    if (check != 0 || st.live_blocks != 0)
        lat_fail(t, LAB_FAILED, "the heap after the run: check %d, %zu blocks live", check,
                 st.live_blocks);
    else if (atomic_load(&c.refused) != 0)
        lat_fail(t, LAB_FAILED, "%d allocations refused", atomic_load(&c.refused));
    else if (atomic_load(&c.unattached) != 0)
        lat_fail(t, LAB_FAILED, "%d threads could not attach to a shard (the fallback served them)",
                 atomic_load(&c.unattached));
    if (t->status != LAB_NOT_RUN)
        return;
    t->status = LAB_OK;
    for (size_t k = 0; k < t->n; k++)
        t->ns[k] *= e->clk.ns_per_tick;
    lat_finish(t, e);
}

/* The comparison line: H's worst call on each heap, and their ratio. */
void lat_contend_summary(const lat_test *locked, const lat_test *mt, char *buf, size_t n)
{
    int ok_l = locked != NULL && locked->status == LAB_OK && locked->n > 0;
    int ok_m = mt != NULL && mt->status == LAB_OK && mt->n > 0;
    if (!ok_l || !ok_m) {
        snprintf(buf, n, "not compared: %s did not run",
                 !ok_l ? "HeapContendedLocked" : "HeapContendedMt");
        return;
    }
    snprintf(buf, n,
             "H's worst call %.1f us on the locked heap, %.1f us on the mt heap (p99.9 %.1f / "
             "%.1f us): locked / mt = %.1f",
             locked->st.max / 1e3, mt->st.max / 1e3, locked->st.p999 / 1e3, mt->st.p999 / 1e3,
             mt->st.max > 0 ? locked->st.max / mt->st.max : 0.0);
}
