// SPDX-License-Identifier: MIT
/*
 * latency_threads.c -- the real-time threads of `rtmem latency`
 * (latency.h): how they are started, pinned, prioritised, waited for.
 *
 * A thread's stack is mapped and written before the thread starts: with
 * mlockall(MCL_FUTURE) from rt_setup() the pages are then resident and
 * locked, and without it they are at least faulted in, so no measured
 * interval pays for a first-touch page fault (Xenomai's smokey memcheck
 * test runs its heap test the same way, as a real-time thread whose memory
 * is ready).
 *
 * Priorities and CPUs are set in the attributes (PTHREAD_EXPLICIT_SCHED), so
 * a thread is never seen running with its creator's policy first. When
 * SCHED_FIFO is not permitted the threads run as SCHED_OTHER and the report
 * says so: the measurement still runs, but "the high-priority task preempts
 * at once" then no longer holds and the numbers mean something else.
 *
 * Nothing here waits without a bound: a join gives up after the test's
 * timeout plus a margin, and lat_spin_ns() is the only busy loop, bounded by
 * the clock.
 *
 * Breathing: a ping-pong between SCHED_FIFO threads keeps its CPU busy, and
 * Linux takes the CPU back when real-time tasks hog it (RT throttling,
 * 950 ms per second by default; since 6.12 the fair server, up to 50 ms for
 * waiting SCHED_OTHER tasks). Either stops a test thread for milliseconds,
 * and that pause would land inside some interval as a bogus maximum. So the
 * thread driving a test sleeps LAT_REST_NS after each LAT_BUSY_NS of work,
 * between two iterations, as Xenomai's smokey tests breathe(): the CPU is
 * never RT-busy for long (80 %, under the throttle's 95 %), other tasks run
 * in the pauses, and no throttling lands in a measurement.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "latency/latency.h"

#define STACK_BYTES ((size_t)256 * 1024)

cpu_set_t lat_one_cpu(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    if (cpu >= 0 && cpu < CPU_SETSIZE)
        CPU_SET((size_t)cpu, &s);
    return s;
}

static int map_stack(lat_thread *t)
{
    t->stack_bytes = STACK_BYTES;
    t->stack =
        mmap(NULL, t->stack_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t->stack == MAP_FAILED) {
        t->stack = NULL;
        return errno;
    }
    memset(t->stack, 0, t->stack_bytes); /* pre-fault every page */
    return 0;
}

static int set_attrs(pthread_attr_t *a, const lat_thread *t, const lat_env *e, int prio,
                     const cpu_set_t *cpus)
{
    int rc = pthread_attr_setstack(a, t->stack, t->stack_bytes);
    if (rc == 0)
        rc = pthread_attr_setinheritsched(a, PTHREAD_EXPLICIT_SCHED);
    if (rc == 0 && e->fifo) {
        struct sched_param sp;
        memset(&sp, 0, sizeof sp);
        sp.sched_priority = prio;
        rc = pthread_attr_setschedpolicy(a, SCHED_FIFO);
        if (rc == 0)
            rc = pthread_attr_setschedparam(a, &sp);
    } else if (rc == 0) {
        rc = pthread_attr_setschedpolicy(a, SCHED_OTHER);
    }
    if (rc == 0)
        rc = pthread_attr_setaffinity_np(a, sizeof(cpu_set_t), cpus != NULL ? cpus : &e->allowed);
    return rc;
}

int lat_thread_start(lat_thread *t, const lat_env *e, int prio, const cpu_set_t *cpus,
                     void *(*fn)(void *), void *arg)
{
    memset(t, 0, sizeof *t);
    int rc = map_stack(t);
    if (rc != 0)
        return rc;
    pthread_attr_t a;
    rc = pthread_attr_init(&a);
    if (rc == 0) {
        rc = set_attrs(&a, t, e, prio, cpus);
        if (rc == 0)
            rc = pthread_create(&t->tid, &a, fn, arg);
        pthread_attr_destroy(&a);
    }
    if (rc != 0) {
        munmap(t->stack, t->stack_bytes);
        t->stack = NULL;
        return rc;
    }
    t->started = 1;
    return 0;
}

static atomic_ulong heartbeats;

void lat_heartbeat(void) { atomic_fetch_add_explicit(&heartbeats, 1, memory_order_relaxed); }

int lat_thread_join(lat_thread *t, uint64_t timeout_ns)
{
    if (!t->started)
        return 0;
    /* A test lasts as long as it lasts (20,000 spinner bursts take seconds);
     * what must not happen is an iteration that never ends. The threads' own
     * waits give up after timeout_ns; a second more covers the rest of the
     * iteration they were in. */
    unsigned long seen = atomic_load(&heartbeats);
    for (;;) {
        struct timespec dl = lat_deadline(CLOCK_MONOTONIC, timeout_ns + UINT64_C(1000000000));
        int rc = pthread_clockjoin_np(t->tid, NULL, CLOCK_MONOTONIC, &dl);
        if (rc == 0)
            break;
        unsigned long now = atomic_load(&heartbeats);
        if (rc != ETIMEDOUT || now == seen)
            return rc; /* stuck: keep its stack mapped */
        seen = now;
    }
    t->started = 0;
    munmap(t->stack, t->stack_bytes);
    t->stack = NULL;
    return 0;
}

int lat_set_prio(pthread_t tid, int prio)
{
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = prio;
    return pthread_setschedparam(tid, SCHED_FIFO, &sp);
}

static void *nothing(void *arg) { return arg; }

int lat_fifo_permitted(void)
{
    lat_env probe;
    memset(&probe, 0, sizeof probe);
    probe.fifo = 1;
    if (sched_getaffinity(0, sizeof probe.allowed, &probe.allowed) != 0)
        return 0;
    lat_thread t;
    if (lat_thread_start(&t, &probe, LAT_PRIO_LOW, NULL, nothing, NULL) != 0)
        return 0;
    lat_thread_join(&t, 0);
    return 1;
}

const char *lat_no_fifo_why(const lat_env *e)
{
    return e->no_rt ? "not asked for: --no-rt" : "not permitted here";
}

void lat_policy(const lat_env *e, char *buf, size_t n, const char *fmt, ...)
{
    if (!e->fifo) {
        snprintf(buf, n, "SCHED_OTHER (SCHED_FIFO %s)", lat_no_fifo_why(e));
        return;
    }
    int used = snprintf(buf, n, "SCHED_FIFO ");
    va_list ap;
    va_start(ap, fmt);
    if (used > 0 && (size_t)used < n)
        vsnprintf(buf + used, n - (size_t)used, fmt, ap);
    va_end(ap);
}

struct timespec lat_deadline(clockid_t clock, uint64_t timeout_ns)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns % UINT64_C(1000000000);
    ts.tv_sec += (time_t)(timeout_ns / UINT64_C(1000000000) + ns / UINT64_C(1000000000));
    ts.tv_nsec = (long)(ns % UINT64_C(1000000000));
    return ts;
}

void lat_spin_ns(uint64_t ns)
{
    uint64_t t0 = mono_ns();
    while (mono_ns() - t0 < ns)
        ;
}

int lat_breath_due(uint64_t since) { return mono_ns() - since >= LAT_BUSY_NS; }

void lat_breathe(uint64_t *since)
{
    struct timespec rest = {0, (long)LAT_REST_NS};
    while (nanosleep(&rest, &rest) != 0 && errno == EINTR)
        ;
    *since = mono_ns();
}

long lat_voluntary_switches(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nvcsw : -1;
}
