// SPDX-License-Identifier: MIT
/*
 * latency_heap.c -- the lock handover of a locked rtmem heap and the proof
 * that its priority inheritance works (docs/LATENCY.md).
 *
 * Three SCHED_FIFO threads on ONE CPU (on a 2-CPU machine the medium thread
 * would otherwise simply run on the other CPU and nothing would be shown):
 *
 *   L (low, 40)     holds the heap lock: it walks the heap, and the walker
 *                   runs with the lock held (rtmem/lock.h says so). On its
 *                   first visit it wakes H, then (spinner runs) wakes M,
 *                   then reads T1; T1 is re-read at every later visit, so
 *                   it is the last moment before the walk ends and unlocks.
 *   H (high, 60)    woken by L, reads T0 and calls rtm_alloc: it blocks on
 *                   the lock L holds. Back from rtm_alloc it reads T2.
 *   M (medium, 50)  woken by L while H waits; spins `spin` microseconds.
 *
 *   HeapLockHandover     L and H only: T2 - T1, release to the waiter's
 *                        return from alloc (unlock, wake, switch, the
 *                        allocation itself).
 *   HeapPiSpinnerWait    with M: T2 - T0, H's whole wait in rtm_alloc. With
 *                        priority inheritance L runs at H's 60 while H
 *                        waits, so M (50) cannot get in: the wait is L's
 *                        short remainder plus the handover.
 *   HeapNoPiSpinnerWait  the control: the same heap behind a PTHREAD_PRIO_NONE
 *                        mutex. L stays at 40, M preempts it and spins, and
 *                        H waits the whole burst: priority inversion.
 *
 * An iteration counts as delayed when H's wait is >= the burst; the verdict
 * wants (almost) none with PI and (almost) all in the control, which shows
 * both that PI works and that the spinner could have hurt.
 *
 * The PI runs use the library's heap, rtm_locked_create() (rtmem/lock.h:
 * a locked variant, always PTHREAD_PRIO_INHERIT). The control needs a lock
 * rtmem does not offer, so it is built here: an rtm heap and a pthread
 * mutex taken around each call, which is what the locked heap does inside.
 * When rtm_locked_create() fails (ENOTSUP: no PI futexes), the PI runs use
 * the same stand-in with PTHREAD_PRIO_INHERIT, and the report says so.
 *
 * L drives the runs: it breathes between iterations (latency_threads.c),
 * while H and M are blocked on their semaphores. Every wait is bounded
 * (timeout_ns), except H's on the heap lock, which L always releases; without
 * SCHED_FIFO the threads still hand over (flags and a settle delay keep the
 * order) but nothing is judged.
 */
#include <errno.h>
#include <math.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "latency/latency.h"
#include "rtmem.h"
#include "rtmem/lock.h"

#define REGION_BYTES (64u * 1024u)
#define ALLOC_BYTES  64u

typedef enum run_kind { HANDOVER, PI_SPIN, NOPI_SPIN, CONTEND_LOCKED, CONTEND_MT } run_kind;

static const struct {
    const char *name;
    run_kind k;
} runs[] = {
    {"HeapLockHandover", HANDOVER},
    {"HeapPiSpinnerWait", PI_SPIN},
    {"HeapNoPiSpinnerWait", NOPI_SPIN},
    /* latency_contend.c: H against hammering threads, locked and mt heaps */
    {"HeapContendedLocked", CONTEND_LOCKED},
    {"HeapContendedMt", CONTEND_MT},
};
#define NRUNS (sizeof runs / sizeof runs[0])

size_t lat_heap_count(void) { return NRUNS; }
const char *lat_heap_name(size_t i) { return i < NRUNS ? runs[i].name : NULL; }

static char lock_note[160] = "not run";
const char *lat_heap_lock_note(void) { return lock_note; }

/* --- the locked heap: the library's, or a mutex around an rtm heap --------- */

typedef struct lheap {
    rtm_heap *locked; /* rtm_locked_create(): the lock is inside   */
    rtm_heap *inner;  /* stand-in: this heap behind `m`            */
    pthread_mutex_t m;
} lheap;

static _Alignas(64) unsigned char region[REGION_BYTES];

static int standin_open(lheap *h, const char *algorithm, int protocol)
{
    pthread_mutexattr_t a;
    int rc = pthread_mutexattr_init(&a);
    if (rc == 0)
        rc = pthread_mutexattr_setprotocol(&a, protocol);
    if (rc == 0)
        rc = pthread_mutex_init(&h->m, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0)
        return rc;
    h->inner = rtm_heap_create(algorithm, region, sizeof region);
    if (h->inner == NULL) {
        rc = errno;
        pthread_mutex_destroy(&h->m);
    }
    return rc;
}

/* Opens the heap of run k. 0 or an errno value. */
static int lheap_open(lheap *h, const char *algorithm, run_kind k)
{
    memset(h, 0, sizeof *h);
    if (k == NOPI_SPIN) {
        if (strcmp(lock_note, "not run") == 0)
            snprintf(lock_note, sizeof lock_note,
                     "control only: rtm_heap_create(\"%s\") behind a PTHREAD_PRIO_NONE mutex",
                     algorithm);
        return standin_open(h, algorithm, PTHREAD_PRIO_NONE);
    }
    h->locked = rtm_locked_create(algorithm, region, sizeof region);
    if (h->locked != NULL) {
        snprintf(lock_note, sizeof lock_note,
                 "PI runs: rtm_locked_create(\"%s\") (library); control: stand-in with "
                 "PTHREAD_PRIO_NONE",
                 algorithm);
        return 0;
    }
    snprintf(lock_note, sizeof lock_note,
             "rtm_locked_create failed (%s): PI runs use a stand-in PTHREAD_PRIO_INHERIT mutex",
             strerror(errno));
    return standin_open(h, algorithm, PTHREAD_PRIO_INHERIT);
}

static void lheap_close(lheap *h)
{
    if (h->locked != NULL) {
        rtm_heap_destroy(h->locked);
        return;
    }
    rtm_heap_destroy(h->inner);
    pthread_mutex_destroy(&h->m);
}

static void *lheap_alloc(lheap *h, size_t n)
{
    if (h->locked != NULL)
        return rtm_alloc(h->locked, n);
    pthread_mutex_lock(&h->m);
    void *p = rtm_alloc(h->inner, n);
    pthread_mutex_unlock(&h->m);
    return p;
}

static void lheap_free(lheap *h, void *p)
{
    if (h->locked != NULL) {
        rtm_free(h->locked, p);
        return;
    }
    pthread_mutex_lock(&h->m);
    rtm_free(h->inner, p);
    pthread_mutex_unlock(&h->m);
}

static int lheap_walk(lheap *h, rtm_walker w, void *arg)
{
    if (h->locked != NULL)
        return rtm_heap_walk(h->locked, w, arg);
    pthread_mutex_lock(&h->m);
    int rc = rtm_heap_walk(h->inner, w, arg);
    pthread_mutex_unlock(&h->m);
    return rc;
}

/* --- the three threads ------------------------------------------------------ */

typedef struct contest {
    const lat_env *e;
    lat_test *t;
    run_kind k;
    lheap heap;
    sem_t wake_h, wake_m;
    atomic_int armed; /* H is about to call rtm_alloc           */
    atomic_int done;  /* H has recorded this iteration          */
    atomic_int stop;
    int visits;          /* walker calls this iteration (L only)   */
    _Atomic uint64_t t1; /* L's last read before the unlock       */
    atomic_flag failed;
} contest;

static void fail(contest *c, const char *what, uint64_t iter, int err)
{
    atomic_store(&c->stop, 1);
    if (atomic_flag_test_and_set(&c->failed))
        return; /* the first failure tells the story */
    if (err == ETIMEDOUT)
        lat_fail(c->t, LAB_FAILED, "iteration %llu: %s: nothing within %llu ms",
                 (unsigned long long)iter, what, (unsigned long long)(c->e->timeout_ns / 1000000u));
    else
        lat_fail(c->t, LAB_FAILED, "iteration %llu: %s (%s)", (unsigned long long)iter, what,
                 strerror(err));
}

static int wait_sem(contest *c, sem_t *s)
{
    struct timespec dl = lat_deadline(CLOCK_MONOTONIC, c->e->timeout_ns);
    while (sem_clockwait(s, CLOCK_MONOTONIC, &dl) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* Spins until *flag is set: 0, or ETIMEDOUT / ECANCELED. */
static int wait_flag(contest *c, atomic_int *flag)
{
    uint64_t t0 = mono_ns();
    for (unsigned k = 0; !atomic_load(flag); k++) {
        if (atomic_load(&c->stop))
            return ECANCELED;
        if (!c->e->fifo)
            sched_yield();
        if ((k & 255u) == 0 && mono_ns() - t0 > c->e->timeout_ns)
            return ETIMEDOUT;
    }
    return 0;
}

static void *high_main(void *arg)
{
    contest *c = arg;
    const bench_clock *clk = &c->e->clk;
    for (uint64_t i = 0;; i++) {
        int rc = wait_sem(c, &c->wake_h);
        if (atomic_load(&c->stop))
            break;
        if (rc != 0) {
            fail(c, "H was never woken", i, rc);
            break;
        }
        uint64_t t0 = clock_ticks(clk);
        atomic_store(&c->armed, 1);
        void *p = lheap_alloc(&c->heap, ALLOC_BYTES); /* blocks: L holds the lock */
        uint64_t t2 = clock_ticks(clk);
        if (p == NULL) {
            fail(c, "rtm_alloc refused", i, errno);
            break;
        }
        lheap_free(&c->heap, p);
        uint64_t from = c->k == HANDOVER ? atomic_load(&c->t1) : t0;
        c->t->ns[c->t->n++] = t2 > from ? (double)clock_net(clk, from, t2) : 0.0;
        if (t2 <= from || t2 - from < clk->cost_ticks)
            c->t->clamped++;
        atomic_store(&c->done, 1);
    }
    return NULL;
}

static void *medium_main(void *arg)
{
    contest *c = arg;
    for (uint64_t i = 0;; i++) {
        int rc = wait_sem(c, &c->wake_m);
        if (atomic_load(&c->stop))
            break;
        if (rc != 0) {
            fail(c, "M was never woken", i, rc);
            break;
        }
        lat_spin_ns(c->e->spin_ns); /* bounded by the clock */
    }
    return NULL;
}

/* L's walker: runs with the heap lock held. */
static void visit(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr, (void)usable, (void)used;
    contest *c = arg;
    if (c->visits++ == 0) {
        sem_post(&c->wake_h); /* H preempts, blocks on our lock */
        int rc = wait_flag(c, &c->armed);
        if (rc != 0) {
            if (rc != ECANCELED)
                fail(c, "H never reached rtm_alloc", 0, rc);
            return;
        }
        if (!c->e->fifo)
            lat_spin_ns(c->e->settle_ns); /* no preemption: let H reach the lock */
        if (c->k != HANDOVER)
            sem_post(&c->wake_m); /* PI: M must wait; no PI: M runs now */
    }
    atomic_store(&c->t1, clock_ticks(&c->e->clk));
}

static void *low_main(void *arg)
{
    contest *c = arg;
    uint64_t since = mono_ns();
    for (uint64_t i = 0; i < c->e->iterations && !atomic_load(&c->stop); i++) {
        if (lat_breath_due(since))
            lat_breathe(&since); /* H and M are blocked on their semaphores */
        lat_heartbeat();
        atomic_store(&c->armed, 0);
        atomic_store(&c->done, 0);
        c->visits = 0;
        if (lheap_walk(&c->heap, visit, c) != 0 || c->visits == 0) {
            fail(c, "the heap walk visited nothing", i, errno);
            break;
        }
        int rc = wait_flag(c, &c->done); /* at once under SCHED_FIFO */
        if (rc != 0) {
            if (rc != ECANCELED)
                fail(c, "H did not finish its allocation", i, rc);
            break;
        }
    }
    atomic_store(&c->stop, 1);
    sem_post(&c->wake_h);
    sem_post(&c->wake_m);
    return NULL;
}

/* --- one run -------------------------------------------------------------------- */

static void start_threads(contest *c, lat_thread th[3])
{
    const lat_env *e = c->e;
    cpu_set_t one = lat_one_cpu(e->cpu);
    memset(th, 0, 3 * sizeof th[0]);
    /* H and M first: they block on their semaphores; L then drives. */
    int rc = lat_thread_start(&th[0], e, LAT_PRIO_HIGH, &one, high_main, c);
    if (rc == 0 && c->k != HANDOVER)
        rc = lat_thread_start(&th[1], e, LAT_PRIO_MID, &one, medium_main, c);
    if (rc == 0)
        rc = lat_thread_start(&th[2], e, LAT_PRIO_LOW, &one, low_main, c);
    if (rc != 0) {
        lat_fail(c->t, LAB_FAILED, "cannot start a thread: %s", strerror(rc));
        atomic_store(&c->stop, 1);
        sem_post(&c->wake_h);
        sem_post(&c->wake_m);
    }
}

static void describe(const lat_env *e, run_kind k, lat_test *t)
{
    char pol[64];
    if (k == HANDOVER)
        lat_policy(e, pol, sizeof pol, "H %d, L %d", LAT_PRIO_HIGH, LAT_PRIO_LOW);
    else
        lat_policy(e, pol, sizeof pol, "H %d, M %d, L %d", LAT_PRIO_HIGH, LAT_PRIO_MID,
                   LAT_PRIO_LOW);
    if (k == HANDOVER)
        snprintf(t->placement, sizeof t->placement, "all on CPU %d; %s", e->cpu, pol);
    else
        snprintf(t->placement, sizeof t->placement, "all on CPU %d; %s; M spins %.0f us", e->cpu,
                 pol, (double)e->spin_ns / 1000.0);
    t->primitive = k == NOPI_SPIN ? "heap behind a PTHREAD_PRIO_NONE mutex (control)"
                                  : "locked rtm heap, PTHREAD_PRIO_INHERIT mutex";
    t->measures = k == HANDOVER ? "L releases the heap lock (T1) -> H returns from rtm_alloc (T2)"
                                : "H calls rtm_alloc (T0) -> returns (T2), M spinning meanwhile";
}

void lat_heap_run(size_t i, const lat_env *e, lat_test *t)
{
    t->name = runs[i].name;
    if (runs[i].k == CONTEND_LOCKED || runs[i].k == CONTEND_MT) {
        lat_contend_run(runs[i].k == CONTEND_MT, e, t);
        return;
    }
    static contest c; /* static: semaphores and atomics need no stack */
    memset(&c, 0, sizeof c);
    c.e = e;
    c.t = t;
    c.k = runs[i].k;
    atomic_flag_clear(&c.failed);
    t->name = runs[i].name;
    t->group = "heap";
    describe(e, c.k, t);
    t->bound_ns = c.k == HANDOVER ? 0 : (double)e->spin_ns;
    int rc = lheap_open(&c.heap, e->algorithm, c.k);
    if (rc != 0) {
        lat_fail(t, LAB_SKIPPED, "cannot create the heap: %s", strerror(rc));
        return;
    }
    sem_init(&c.wake_h, 0, 0);
    sem_init(&c.wake_m, 0, 0);
    lat_thread th[3];
    start_threads(&c, th);
    int stuck = 0;
    for (int k = 0; k < 3; k++)
        stuck |= lat_thread_join(&th[k], e->timeout_ns) != 0;
    if (stuck) {
        lat_fail(t, LAB_FAILED, "a thread did not finish in time (stuck)");
        return; /* keep heap and semaphores: a stuck thread may use them */
    }
    sem_destroy(&c.wake_h);
    sem_destroy(&c.wake_m);
    lheap_close(&c.heap);
    if (t->status != LAB_NOT_RUN)
        return;
    t->status = LAB_OK;
    for (size_t k = 0; k < t->n; k++) {
        t->ns[k] *= e->clk.ns_per_tick;
        if (t->bound_ns > 0 && t->ns[k] >= t->bound_ns)
            t->over_bound++;
    }
    lat_finish(t, e);
}

/* --- the verdict ------------------------------------------------------------------ */

static const lat_test *find(const lat_report *r, const char *name)
{
    for (size_t i = 0; i < r->ntests; i++)
        if (r->tests[i].name != NULL && strcmp(r->tests[i].name, name) == 0)
            return &r->tests[i];
    return NULL;
}

/* Samples of t at least bound_ns long (0 when t did not run). */
static size_t noise_over(const lat_test *t, uint64_t bound_ns)
{
    size_t n = 0;
    if (t == NULL || t->status != LAB_OK || t->ns == NULL)
        return 0;
    for (size_t k = 0; k < t->n; k++)
        n += t->ns[k] >= (double)bound_ns;
    return n;
}

void lat_pi_verdict(lat_report *r)
{
    lat_contend_summary(find(r, "HeapContendedLocked"), find(r, "HeapContendedMt"),
                        r->contend_detail, sizeof r->contend_detail);
    const lat_test *pi = find(r, "HeapPiSpinnerWait");
    const lat_test *no = find(r, "HeapNoPiSpinnerWait");
    double us = (double)r->e->spin_ns / 1000.0;
    r->pi_verdict = "NOT JUDGED";
    if (pi == NULL || no == NULL || pi->status != LAB_OK || no->status != LAB_OK) {
        snprintf(r->pi_detail, sizeof r->pi_detail, "both spinner runs must run (--tests)");
        return;
    }
    if (!r->e->fifo) {
        snprintf(r->pi_detail, sizeof r->pi_detail,
                 "needs SCHED_FIFO: without priorities there is no inversion to show");
        return;
    }
    /* Allowed: one delayed iteration in a thousand, or twice the rate at
     * which the same machine stalls the spinner-free handover that long in
     * this run, whichever is more: a hypervisor's pause of the burst's length
     * lands in a PI wait as often as in a handover (about twice as often:
     * the wait is about twice as long), and no spinner is involved there. */
    size_t noise = noise_over(find(r, "HeapLockHandover"), r->e->spin_ns);
    const lat_test *ho = find(r, "HeapLockHandover");
    size_t pi_allowed = pi->n / 1000u;
    if (ho != NULL && ho->n > 0) {
        size_t scaled = (size_t)ceil(2.0 * (double)noise * (double)pi->n / (double)ho->n);
        if (scaled > pi_allowed)
            pi_allowed = scaled;
    }
    int pi_ok = pi->over_bound <= pi_allowed;
    int control_shows = (double)no->over_bound >= 0.9 * (double)no->n;
    snprintf(r->pi_detail, sizeof r->pi_detail,
             "H delayed >= the %.0f us burst: %zu of %zu iterations with PI (allowed %zu: "
             "n/1000, or twice the %zu spinner-free handovers that long), %zu of %zu without "
             "(control; needs >= 90%%)",
             us, pi->over_bound, pi->n, pi_allowed, noise, no->over_bound, no->n);
    if (!control_shows)
        r->pi_verdict = "NOT JUDGED"; /* the spinner did not hurt even without PI */
    else
        r->pi_verdict = pi_ok ? "PASS" : "FAIL";
}
