// SPDX-License-Identifier: MIT
/*
 * latency_ctx.c -- the context-switch benchmarks of the VxWorks bmCtx* suite
 * over the POSIX primitives a Linux real-time programmer uses
 * (docs/LATENCY.md).
 *
 * Two threads, the waiter (the suite's Task1, high priority) and the giver
 * (Task2, lower priority), hand one token back and forth:
 *
 *   Pend   (bmCtx*Pend):   waiter reads T1 and blocks; the giver, running
 *                          because the waiter blocked, reads T2 and gives.
 *                          T = T2 - T1: blocking plus the switch away.
 *   Unpend (bmCtx*Unpend): the giver reads T1 and gives; the waiter wakes,
 *                          preempts the giver and reads T2. T = T2 - T1:
 *                          the give plus the switch to the woken thread.
 *
 * Primitives: a POSIX semaphore (sem_t: the suite's semaphore), a POSIX
 * message queue of one-byte messages (mq_*: the suite's msgQ), and for the
 * suite's events a queued real-time signal sent to the waiting thread
 * (pthread_kill(SIGRTMIN) / sigtimedwait): like a VxWorks event it is sent
 * to a task, not to an object both share, and carries no data.
 *
 * The handshake: the waiter sets `armed` just before it blocks and the giver
 * gives only after it has seen `armed` (and cleared it). On one CPU under
 * SCHED_FIFO the giver runs only while the waiter is blocked, so this costs
 * nothing and changes nothing; without SCHED_FIFO, or across CPUs, it keeps
 * one give per wait. Across CPUs the giver also waits `settle` before T1 so
 * that the waiter is asleep, not still on its way into the wait: the
 * Unpend interval must include the wake-up (the IPI), as the published SMP
 * figures do.
 *
 * Every wait has a deadline (timeout_ns): a lost wakeup fails the test with
 * the iteration it happened in, it never hangs the lab.
 *
 * bmCtxTaskSwitch follows the suite's priority juggling: Task1 at 50 creates
 * Task2 at 60, which preempts and drops itself to 40; Task1 reads T1, raises
 * Task2 to 60 (switch), Task2 drops itself to 40 (switch back), Task1 reads
 * T2. T_sw = (T - T_r - T_l - 2 T_rt) / 2 with the raise T_r and the lower
 * T_l timed alone (without a switch: 40 -> 45 under Task1's 50, and Task1
 * 50 -> 48 over Task2's 40), medians, and T_rt the share of one clock read
 * inside an interval (half the calibrated empty interval).
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "latency/latency.h"

typedef enum prim { P_SEM, P_MQ, P_EVENT, P_TASK } prim;
typedef enum mode { M_PEND, M_UNPEND } mode;
typedef enum place { ONE_CPU, SMP_PINNED, SMP_FREE } place;

typedef struct ctx_def {
    const char *name;
    prim p;
    mode m;
    place pl;
} ctx_def;

static const ctx_def defs[] = {
    {"bmCtxSemPend", P_SEM, M_PEND, ONE_CPU},
    {"bmCtxSemUnpend", P_SEM, M_UNPEND, ONE_CPU},
    {"bmCtxMsgQPend", P_MQ, M_PEND, ONE_CPU},
    {"bmCtxMsgQUnpend", P_MQ, M_UNPEND, ONE_CPU},
    {"bmCtxEventPend", P_EVENT, M_PEND, ONE_CPU},
    {"bmCtxEventUnpend", P_EVENT, M_UNPEND, ONE_CPU},
    {"bmCtxTaskSwitch", P_TASK, M_PEND, ONE_CPU},
    {"CtxSmpAffinitySemUnPend", P_SEM, M_UNPEND, SMP_PINNED},
    {"CtxSmpAffinityMsgQUnPend", P_MQ, M_UNPEND, SMP_PINNED},
    {"CtxSmpNoAffinitySemUnPend", P_SEM, M_UNPEND, SMP_FREE},
    {"CtxSmpNoAffinityMsgQUnPend", P_MQ, M_UNPEND, SMP_FREE},
};
#define NDEFS (sizeof defs / sizeof defs[0])

size_t lat_ctx_count(void) { return NDEFS; }
const char *lat_ctx_name(size_t i) { return i < NDEFS ? defs[i].name : NULL; }

static const char *prim_text[] = {
    "POSIX semaphore (sem_post / sem_clockwait)",
    "POSIX message queue, 1-byte messages (mq_send / mq_timedreceive)",
    "event: queued real-time signal to the waiting thread (pthread_kill / sigtimedwait)",
    "SCHED_FIFO priority change (pthread_setschedparam)",
};

/* --- the token and its three carriers ----------------------------------- */

typedef struct handover {
    const lat_env *e;
    lat_test *t;
    const ctx_def *d;
    sem_t sem;
    mqd_t mq;
    pthread_t waiter; /* the event's (signal's) target */
    sem_t gate_waiter, gate_giver;
    atomic_int armed, stop;
    _Atomic uint64_t t_giver; /* the giver's clock read */
    atomic_flag failed;
} handover;

/* Records the first failure of either thread and stops both. */
static void fail(handover *h, const char *fmt, uint64_t iter, int err)
{
    if (!atomic_flag_test_and_set(&h->failed)) {
        char what[96];
        snprintf(what, sizeof what, fmt, (unsigned long long)iter);
        if (err == ETIMEDOUT)
            lat_fail(h->t, LAB_FAILED, "%s: nothing within %llu ms", what,
                     (unsigned long long)(h->e->timeout_ns / 1000000u));
        else
            lat_fail(h->t, LAB_FAILED, "%s (%s)", what, strerror(err));
    }
    atomic_store(&h->stop, 1);
}

static int open_carrier(handover *h)
{
    if (h->d->p == P_SEM)
        return sem_init(&h->sem, 0, 0) == 0 ? 0 : errno;
    if (h->d->p != P_MQ)
        return 0;
    char name[64];
    snprintf(name, sizeof name, "/rtmem-latency-%ld", (long)getpid());
    struct mq_attr a;
    memset(&a, 0, sizeof a);
    a.mq_maxmsg = 1;
    a.mq_msgsize = 1;
    h->mq = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    if (h->mq == (mqd_t)-1)
        return errno;
    mq_unlink(name); /* the descriptor lives on; nothing is left behind */
    return 0;
}

static void close_carrier(handover *h)
{
    if (h->d->p == P_SEM)
        sem_destroy(&h->sem);
    else if (h->d->p == P_MQ)
        mq_close(h->mq);
}

static sigset_t event_set(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGRTMIN);
    return s;
}

/* Blocks until the token comes or the deadline passes: 0 or an errno. */
static int take(handover *h)
{
    uint64_t to = h->e->timeout_ns;
    for (;;) {
        int rc = 0;
        if (h->d->p == P_SEM) {
            struct timespec dl = lat_deadline(CLOCK_MONOTONIC, to);
            rc = sem_clockwait(&h->sem, CLOCK_MONOTONIC, &dl) == 0 ? 0 : errno;
        } else if (h->d->p == P_MQ) {
            char b[8];
            struct timespec dl = lat_deadline(CLOCK_REALTIME, to); /* mq knows no other */
            rc = mq_timedreceive(h->mq, b, sizeof b, NULL, &dl) >= 0 ? 0 : errno;
        } else {
            sigset_t s = event_set();
            struct timespec rel = {(time_t)(to / 1000000000u), (long)(to % 1000000000u)};
            rc = sigtimedwait(&s, NULL, &rel) >= 0 ? 0 : errno;
            if (rc == EAGAIN)
                rc = ETIMEDOUT;
        }
        if (rc != EINTR)
            return rc;
    }
}

/* Empties the carrier without blocking (the suite's non-blocking take). */
static void drain(handover *h)
{
    if (h->d->p == P_SEM) {
        while (sem_trywait(&h->sem) == 0)
            ;
    } else if (h->d->p == P_MQ) {
        char b[8];
        struct timespec past = {0, 0};
        while (mq_timedreceive(h->mq, b, sizeof b, NULL, &past) >= 0)
            ;
    } else {
        sigset_t s = event_set();
        struct timespec zero = {0, 0};
        while (sigtimedwait(&s, NULL, &zero) >= 0)
            ;
    }
}

static int give(handover *h)
{
    if (h->d->p == P_SEM)
        return sem_post(&h->sem) == 0 ? 0 : errno;
    if (h->d->p == P_MQ) {
        struct timespec dl = lat_deadline(CLOCK_REALTIME, h->e->timeout_ns);
        return mq_timedsend(h->mq, "x", 1, 0, &dl) == 0 ? 0 : errno;
    }
    return pthread_kill(h->waiter, SIGRTMIN);
}

static int gate(handover *h, sem_t *g)
{
    struct timespec dl = lat_deadline(CLOCK_MONOTONIC, h->e->timeout_ns);
    while (sem_clockwait(g, CLOCK_MONOTONIC, &dl) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* --- the two threads ------------------------------------------------------ */

static void *waiter_main(void *arg)
{
    handover *h = arg;
    const bench_clock *c = &h->e->clk;
    if (h->d->p == P_EVENT) {
        sigset_t s = event_set();
        pthread_sigmask(SIG_BLOCK, &s, NULL); /* queued for sigtimedwait only */
    }
    int rc = gate(h, &h->gate_waiter);
    if (rc != 0) {
        fail(h, "waiter: start gate timed out", 0, rc);
        return NULL;
    }
    uint64_t since = mono_ns();
    for (uint64_t i = 0; i < h->e->iterations && !atomic_load(&h->stop); i++) {
        if (lat_breath_due(since))
            lat_breathe(&since); /* the giver is waiting for `armed` */
        lat_heartbeat();
        drain(h);
        long slept = lat_voluntary_switches();
        uint64_t t1 = h->d->m == M_PEND ? clock_ticks(c) : 0;
        atomic_store_explicit(&h->armed, 1, memory_order_release);
        rc = take(h);
        uint64_t t2 = clock_ticks(c);
        if (rc != 0) {
            fail(h, "iteration %llu: the wait failed (a lost wakeup?)", i, rc);
            break;
        }
        if (lat_voluntary_switches() == slept) {
            h->t->unslept++; /* the token was there already: no switch to time */
            continue;
        }
        uint64_t tg = atomic_load_explicit(&h->t_giver, memory_order_acquire);
        uint64_t from = h->d->m == M_PEND ? t1 : tg, to = h->d->m == M_PEND ? tg : t2;
        if (to - from < c->cost_ticks || to < from)
            h->t->clamped++;
        h->t->ns[h->t->n++] = to < from ? 0.0 : (double)clock_net(c, from, to);
    }
    atomic_store(&h->stop, 1);
    return NULL;
}

/* Waits until the waiter is armed: spins POLL_AFTER_NS, then sleeps between
 * looks (the waiter is breathing: the CPU must not stay busy). 0, or
 * ETIMEDOUT / ECANCELED. */
#define POLL_AFTER_NS UINT64_C(50000)
static int wait_armed(handover *h)
{
    uint64_t t0 = mono_ns();
    for (unsigned k = 0; !atomic_load_explicit(&h->armed, memory_order_acquire); k++) {
        if (atomic_load(&h->stop))
            return ECANCELED;
        if (!h->e->fifo)
            sched_yield(); /* SCHED_OTHER: let the waiter reach its wait */
        if ((k & 63u) != 0)
            continue;
        uint64_t waited = mono_ns() - t0;
        if (waited > h->e->timeout_ns)
            return ETIMEDOUT;
        if (waited > POLL_AFTER_NS) {
            struct timespec nap = {0, 20000};
            nanosleep(&nap, NULL);
        }
    }
    return 0;
}

static void *giver_main(void *arg)
{
    handover *h = arg;
    int rc = gate(h, &h->gate_giver);
    if (rc != 0) {
        fail(h, "giver: start gate timed out", 0, rc);
        return NULL;
    }
    for (uint64_t i = 0; i < h->e->iterations; i++) {
        rc = wait_armed(h);
        if (rc == ECANCELED)
            break;
        if (rc != 0) {
            fail(h, "iteration %llu: the waiter never armed", i, rc);
            break;
        }
        atomic_store_explicit(&h->armed, 0, memory_order_relaxed);
        if (h->d->pl != ONE_CPU)
            lat_spin_ns(h->e->settle_ns); /* let the waiter fall asleep */
        atomic_store_explicit(&h->t_giver, clock_ticks(&h->e->clk), memory_order_release);
        if (i + 1 == h->e->drop_give)
            continue; /* --drop-give: a lost wakeup, which must fail, not hang */
        rc = give(h);
        if (rc != 0) {
            fail(h, "iteration %llu: the give failed", i, rc);
            break;
        }
    }
    return NULL;
}

/* --- one handover test ------------------------------------------------------ */

static void placement(const ctx_def *d, const lat_env *e, cpu_set_t *w, cpu_set_t *g, lat_test *t)
{
    char pol[64];
    lat_policy(e, pol, sizeof pol, "waiter %d, giver %d", LAT_PRIO_HIGH, LAT_PRIO_MID);
    /* The test threads are placed as below with or without --no-rt, which
     * leaves only the main thread unpinned. */
    if (d->pl == ONE_CPU) {
        *w = *g = lat_one_cpu(e->cpu);
        snprintf(t->placement, sizeof t->placement, "both on CPU %d; %s", e->cpu, pol);
    } else if (d->pl == SMP_PINNED) {
        *w = lat_one_cpu(e->cpu);
        *g = lat_one_cpu(e->other_cpu);
        snprintf(t->placement, sizeof t->placement, "waiter pinned to CPU %d, giver to CPU %d; %s",
                 e->cpu, e->other_cpu, pol);
    } else {
        *w = *g = e->allowed;
        snprintf(t->placement, sizeof t->placement, "no affinity (any of %d CPUs); %s",
                 CPU_COUNT(&e->allowed), pol);
    }
}

static void run_handover(const ctx_def *d, const lat_env *e, lat_test *t)
{
    static handover h; /* static: atomics and semaphores need no stack */
    memset(&h, 0, sizeof h);
    h.e = e;
    h.t = t;
    h.d = d;
    atomic_flag_clear(&h.failed);
    cpu_set_t wcpus, gcpus;
    placement(d, e, &wcpus, &gcpus, t);
    int rc = open_carrier(&h);
    if (rc != 0) {
        lat_fail(t, LAB_SKIPPED, "%s not available: %s", d->p == P_MQ ? "mq_open" : "sem_init",
                 strerror(rc));
        return;
    }
    sem_init(&h.gate_waiter, 0, 0);
    sem_init(&h.gate_giver, 0, 0);
    lat_thread w, g;
    memset(&g, 0, sizeof g);
    rc = lat_thread_start(&w, e, LAT_PRIO_HIGH, &wcpus, waiter_main, &h);
    if (rc == 0) {
        h.waiter = w.tid;
        rc = lat_thread_start(&g, e, LAT_PRIO_MID, &gcpus, giver_main, &h);
        if (rc != 0) {
            atomic_store(&h.stop, 1);
            lat_fail(t, LAB_FAILED, "cannot start the giver: %s", strerror(rc));
        }
    } else {
        lat_fail(t, LAB_FAILED, "cannot start the waiter: %s", strerror(rc));
    }
    /* Waiter first: on one CPU it must be blocked before the giver spins. */
    sem_post(&h.gate_waiter);
    sem_post(&h.gate_giver);
    int jw = lat_thread_join(&w, e->timeout_ns), jg = lat_thread_join(&g, e->timeout_ns);
    if (jw != 0 || jg != 0) {
        lat_fail(t, LAB_FAILED, "a thread did not finish in time (stuck)");
        return; /* leave the carrier: a stuck thread may still use it */
    }
    close_carrier(&h);
    sem_destroy(&h.gate_waiter);
    sem_destroy(&h.gate_giver);
    if (t->status == LAB_NOT_RUN)
        t->status = LAB_OK;
}

/* --- bmCtxTaskSwitch ----------------------------------------------------------- */

typedef struct taskswitch {
    const lat_env *e;
    lat_test *t;
    pthread_t task2;
    atomic_int stop;
    atomic_int rest; /* Task2: block on `resume` while Task1 breathes */
    sem_t resume;
    uint64_t since;     /* Task1's busy window (lat_breathe) */
    atomic_ulong count; /* Task2's turns: one per switch to it */
    double *raise, *lower;
} taskswitch;

static void *task2_main(void *arg)
{
    taskswitch *s = arg;
    pthread_t self = pthread_self();
    while (!atomic_load(&s->stop)) {
        atomic_fetch_add(&s->count, 1);
        if (atomic_exchange(&s->rest, 0)) {
            struct timespec dl = lat_deadline(CLOCK_MONOTONIC, s->e->timeout_ns);
            sem_clockwait(&s->resume, CLOCK_MONOTONIC, &dl); /* Task1 breathes */
        }
        lat_set_prio(self, LAT_PRIO_LOW); /* below Task1: switch back */
    }
    return NULL;
}

/* Breathes when due, with Task2 (always runnable, it would spin) parked on
 * `resume` meanwhile; afterwards Task2 is back at 40, as before. */
static void rest(taskswitch *s)
{
    lat_heartbeat();
    if (!lat_breath_due(s->since))
        return;
    atomic_store(&s->rest, 1);
    lat_set_prio(s->task2, LAT_PRIO_HIGH); /* it runs, sees rest, blocks */
    lat_breathe(&s->since);
    sem_post(&s->resume); /* it runs again and drops to 40 */
}

/* Median of v[0..n) in ns (sorts v). */
static double median_ns(double *v, size_t n) { return lat_stats_of(v, n).p50; }

/* T_r and T_l alone: neither change lets another thread run. */
static void time_raise_lower(taskswitch *s, const bench_clock *c, pthread_t self)
{
    size_t n = (size_t)s->e->iterations;
    for (size_t i = 0; i < n; i++) {
        rest(s);
        uint64_t t0 = clock_ticks(c);
        lat_set_prio(s->task2, LAT_PRIO_LOW + 5); /* still below Task1's 50 */
        uint64_t t1 = clock_ticks(c);
        s->raise[i] = (double)clock_net(c, t0, t1) * c->ns_per_tick;
        lat_set_prio(s->task2, LAT_PRIO_LOW);
    }
    for (size_t i = 0; i < n; i++) {
        rest(s);
        uint64_t t0 = clock_ticks(c);
        lat_set_prio(self, LAT_PRIO_MID - 2); /* still above Task2's 40 */
        uint64_t t1 = clock_ticks(c);
        s->lower[i] = (double)clock_net(c, t0, t1) * c->ns_per_tick;
        lat_set_prio(self, LAT_PRIO_MID);
    }
}

/* The timed loop: T per iteration (raw ticks, as ns in t->ns). 0 or -1. */
static int time_switches(taskswitch *s, const bench_clock *c)
{
    lat_test *t = s->t;
    for (uint64_t i = 0; i < s->e->iterations; i++) {
        rest(s);
        unsigned long before = atomic_load(&s->count);
        uint64_t t1 = clock_ticks(c);
        lat_set_prio(s->task2, LAT_PRIO_HIGH); /* Task2 preempts, drops itself */
        uint64_t t2 = clock_ticks(c);
        if (atomic_load(&s->count) == before) {
            lat_fail(t, LAB_FAILED, "iteration %llu: raising Task2 did not switch to it",
                     (unsigned long long)i);
            return -1;
        }
        t->ns[t->n++] = (double)(t2 - t1) * c->ns_per_tick;
    }
    return 0;
}

static void apply_formula(taskswitch *s, const bench_clock *c)
{
    lat_test *t = s->t;
    size_t n = (size_t)s->e->iterations;
    t->has_tsw = 1;
    t->raise_ns = median_ns(s->raise, n);
    t->lower_ns = median_ns(s->lower, n);
    t->readclock_ns = (double)c->cost_ticks * c->ns_per_tick / 2.0;
    double *tmp = malloc(t->n * sizeof *tmp);
    if (tmp != NULL) {
        memcpy(tmp, t->ns, t->n * sizeof *tmp);
        t->t_med_ns = median_ns(tmp, t->n);
        free(tmp);
    }
    for (size_t i = 0; i < t->n; i++) {
        double sw = lat_tsw(t->ns[i], t->raise_ns, t->lower_ns, t->readclock_ns);
        if (sw < 0) {
            t->clamped++;
            sw = 0;
        }
        t->ns[i] = sw;
    }
}

static void *task1_main(void *arg)
{
    taskswitch *s = arg;
    const bench_clock *c = &s->e->clk;
    cpu_set_t one = lat_one_cpu(s->e->cpu);
    lat_thread t2;
    /* Task2 at 60 preempts us at once and drops itself to 40. */
    int rc = lat_thread_start(&t2, s->e, LAT_PRIO_HIGH, &one, task2_main, s);
    if (rc != 0) {
        lat_fail(s->t, LAB_FAILED, "cannot start Task2: %s", strerror(rc));
        return NULL;
    }
    s->task2 = t2.tid;
    s->since = mono_ns();
    if (atomic_load(&s->count) == 0) {
        lat_fail(s->t, LAB_FAILED, "Task2 did not preempt its creator (no SCHED_FIFO?)");
    } else {
        time_raise_lower(s, c, pthread_self());
        if (time_switches(s, c) == 0)
            apply_formula(s, c);
    }
    atomic_store(&s->stop, 1);
    lat_set_prio(s->task2, LAT_PRIO_HIGH); /* let it see stop and leave */
    if (lat_thread_join(&t2, s->e->timeout_ns) != 0)
        lat_fail(s->t, LAB_FAILED, "Task2 did not finish");
    return NULL;
}

static void run_taskswitch(const lat_env *e, lat_test *t)
{
    char pol[64];
    lat_policy(e, pol, sizeof pol, "Task1 %d, Task2 %d <-> %d", LAT_PRIO_MID, LAT_PRIO_HIGH,
               LAT_PRIO_LOW);
    snprintf(t->placement, sizeof t->placement, "both on CPU %d; %s", e->cpu, pol);
    if (!e->fifo) {
        lat_fail(t, LAB_SKIPPED, "needs SCHED_FIFO (%s)", lat_no_fifo_why(e));
        return;
    }
    static taskswitch s;
    memset(&s, 0, sizeof s);
    s.e = e;
    s.t = t;
    sem_init(&s.resume, 0, 0);
    size_t n = (size_t)e->iterations;
    s.raise = malloc(n * sizeof *s.raise);
    s.lower = malloc(n * sizeof *s.lower);
    if (s.raise == NULL || s.lower == NULL) {
        lat_fail(t, LAB_FAILED, "out of memory");
    } else {
        cpu_set_t one = lat_one_cpu(e->cpu);
        lat_thread t1;
        int rc = lat_thread_start(&t1, e, LAT_PRIO_MID, &one, task1_main, &s);
        if (rc != 0) {
            lat_fail(t, LAB_FAILED, "cannot start Task1: %s", strerror(rc));
        } else if (lat_thread_join(&t1, e->timeout_ns) != 0) {
            lat_fail(t, LAB_FAILED, "Task1 did not finish in time (stuck)");
            return; /* keep what a stuck thread may still touch */
        }
    }
    free(s.raise);
    free(s.lower);
    sem_destroy(&s.resume);
    if (t->status == LAB_NOT_RUN)
        t->status = LAB_OK;
}

void lat_ctx_run(size_t i, const lat_env *e, lat_test *t)
{
    const ctx_def *d = &defs[i];
    t->name = d->name;
    t->group = d->pl == ONE_CPU ? "cpu" : "smp";
    t->primitive = prim_text[d->p];
    t->measures = d->p == P_TASK   ? "T_sw = (T - T_r - T_l - 2 T_rt) / 2 (bmCtx*)"
                  : d->m == M_PEND ? "waiter blocks (T1) -> giver runs (T2)"
                                   : "giver gives (T1) -> waiter runs (T2)";
    if (d->pl != ONE_CPU && e->other_cpu < 0) {
        lat_fail(t, LAB_SKIPPED, "needs 2 CPUs (1 allowed)");
        return;
    }
    if (d->p == P_TASK)
        run_taskswitch(e, t);
    else
        run_handover(d, e, t);
    if (t->status == LAB_OK) {
        if (d->p != P_TASK)
            for (size_t k = 0; k < t->n; k++)
                t->ns[k] *= e->clk.ns_per_tick;
        lat_finish(t, e);
    }
}
