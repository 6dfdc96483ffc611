// SPDX-License-Identifier: MIT
/*
 * latency.h -- `rtmem latency`: the context-switch benchmarks of the VxWorks
 * bmCtx* suite (docs/METHODS.md) and the lock handover of rtmem's locked heap, between SCHED_FIFO
 * threads. This header is the table of contents of the command's files:
 *
 *   latency.c          options, the real-time setup, the schedule of tests
 *   latency_threads.c  real-time threads: pre-faulted stacks, priorities,
 *                      pinning, deadlines, bounded spins, joins that time out
 *   latency_stats.c    statistics of one test: avg/min/max, percentiles,
 *                      fixed-width histogram, the bmCtx* T_sw formula
 *   latency_ctx.c      the bmCtx* tests over POSIX primitives
 *   latency_heap.c     the heap lock handover and the priority-inheritance run
 *   latency_contend.c  a high-priority thread's calls while lower-priority
 *                      threads hammer the same heap: locked against mt
 *   latency_report.c   text tables, the published figures, --json
 *   tests/latency_stats_test.c  unit test (tests_latency.cmake): the
 *                      statistics on known samples, T_sw on known inputs
 *
 * Units: samples are kept in nanoseconds (double) once a test has run;
 * tables and JSON are in microseconds, as the bmCtx* suite's are.
 */
#ifndef RTM_LAB_LATENCY_H
#define RTM_LAB_LATENCY_H

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/machine.h"
#include "common/status.h"

/* --- statistics (latency_stats.c) ------------------------------------------ */

#define LAT_MAX_BUCKETS 64u

typedef struct lat_stats {
    size_t n;
    double avg, min, max, p50, p99, p999; /* ns */
} lat_stats;

/* Fixed-width buckets from first_ns: bucket i holds [first + i*width,
 * first + (i+1)*width); samples past the last bucket are counted in overflow
 * (they are the slowest 0.1 % at most: the range is chosen to end at p99.9). */
typedef struct lat_hist {
    double first_ns, width_ns;
    unsigned nbuckets;
    uint64_t counts[LAT_MAX_BUCKETS];
    uint64_t overflow;
} lat_hist;

/* Sorts v[0..n) in place and summarises it (nearest-rank percentiles). */
lat_stats lat_stats_of(double *v, size_t n);
/* The smallest 1-2-5 x 10^k width (>= 1 ns) that covers span in buckets. */
double lat_nice_width(double span, unsigned buckets);
/* Buckets sorted[0..n) over [min, p99.9] in about `buckets` buckets (at most
 * LAT_MAX_BUCKETS). */
void lat_hist_build(const double *sorted, size_t n, const lat_stats *st, unsigned buckets,
                    lat_hist *h);
/* The bmCtx* suite's task switch: T_sw = (T - T_r - T_l - 2 T_rt) / 2. */
double lat_tsw(double t, double t_raise, double t_lower, double t_readclock);

/* --- one test's record ------------------------------------------------------ */

/* A test's status (common/status.h): not run, ok, failed, skipped. */

typedef struct lat_test {
    const char *name;      /* the bmCtx* name, or ours for the heap tests   */
    const char *group;     /* "cpu" (one CPU), "smp", "heap"                */
    const char *primitive; /* what is handed over                           */
    const char *measures;  /* the interval, in one line                     */
    char placement[128];   /* CPUs and priorities of the threads            */
    lab_status status;
    char why[192];  /* failure or skip reason                        */
    double *ns;     /* samples, ns, clock cost subtracted (n of them) */
    size_t n;       /* samples taken                                 */
    size_t clamped; /* samples that the subtraction took below 0    */
    size_t unslept; /* iterations dropped: the waiter never slept    */
    lat_stats st;   /* filled by lat_finish()                        */
    lat_hist hist;  /* filled by lat_finish()                        */
    int has_tsw;    /* bmCtxTaskSwitch: the formula's inputs follow  */
    double t_med_ns, raise_ns, lower_ns, readclock_ns;
    double bound_ns;   /* heap spinner tests: the spinner's burst (0: none) */
    size_t over_bound; /* samples >= bound_ns: the spinner got in first     */
} lat_test;

/* --- the environment every test runs in ------------------------------------ */

typedef struct lat_env {
    bench_clock clk;
    int fifo;              /* threads get SCHED_FIFO (tested, not assumed)      */
    int no_rt;             /* --no-rt: SCHED_FIFO not asked for (fifo is 0)     */
    int cpu;               /* the CPU of the one-CPU tests                      */
    int other_cpu;         /* a second allowed CPU for SMP tests, or -1         */
    cpu_set_t allowed;     /* CPUs allowed at start (the no-affinity tests)     */
    uint64_t iterations;   /* per test                                          */
    uint64_t timeout_ns;   /* every wait and every spin gives up after this     */
    uint64_t settle_ns;    /* SMP: giver waits this long for the waiter to sleep */
    uint64_t spin_ns;      /* heap PI run: the medium-priority spinner's burst  */
    unsigned buckets;      /* histogram buckets                                 */
    const char *algorithm; /* heap of the handover tests                       */
    uint64_t drop_give;    /* tests only: the giver skips its Nth give (0: none) */
} lat_env;

/* Allocates and pre-faults room for e->iterations samples. 0 or -1. */
int lat_samples_alloc(lat_test *t, const lat_env *e);
/* Converts a finished test's samples into stats and histogram. */
void lat_finish(lat_test *t, const lat_env *e);
/* Marks t failed/skipped with a printf-style reason. */
void lat_fail(lat_test *t, lab_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --- real-time threads (latency_threads.c) ---------------------------------- */

/* SCHED_FIFO priorities, the bmCtx* suite's VxWorks numbers mirrored (Linux: higher
 * is more urgent; VxWorks 40 -> 60, 50 -> 50, 60 -> 40). */
enum { LAT_PRIO_HIGH = 60, LAT_PRIO_MID = 50, LAT_PRIO_LOW = 40 };

typedef struct lat_thread {
    pthread_t tid;
    void *stack;
    size_t stack_bytes;
    int started;
} lat_thread;

/* Starts fn(arg) with a pre-faulted stack, SCHED_FIFO prio (when e->fifo)
 * and the given CPUs (NULL: all allowed). Returns 0 or an errno value. */
int lat_thread_start(lat_thread *t, const lat_env *e, int prio, const cpu_set_t *cpus,
                     void *(*fn)(void *), void *arg);
/* Joins, waiting as long as the test makes progress: ETIMEDOUT when no
 * lat_heartbeat() came for timeout_ns plus a second. Returns 0, or
 * ETIMEDOUT: the thread is stuck (its stack is then leaked, never unmapped
 * under it). */
int lat_thread_join(lat_thread *t, uint64_t timeout_ns);
/* Called by the thread driving a test once per iteration: it is alive. */
void lat_heartbeat(void);
/* A set holding only cpu. */
cpu_set_t lat_one_cpu(int cpu);
/* Changes a thread's SCHED_FIFO priority (0 or errno). */
int lat_set_prio(pthread_t tid, int prio);
/* Whether SCHED_FIFO threads can be created here (tries one). */
int lat_fifo_permitted(void);
/* A test's policy as its placement line says it: "SCHED_FIFO " and the
 * priorities (fmt, printf-style: "waiter %d, giver %d"), or the SCHED_OTHER
 * the threads really got and why (--no-rt, or SCHED_FIFO not permitted),
 * without priorities, which SCHED_OTHER does not have. */
void lat_policy(const lat_env *e, char *buf, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Why the threads have no SCHED_FIFO: "not asked for: --no-rt" or "not
 * permitted here". */
const char *lat_no_fifo_why(const lat_env *e);
/* CLOCK_MONOTONIC / CLOCK_REALTIME deadline timeout_ns from now. */
struct timespec lat_deadline(clockid_t clock, uint64_t timeout_ns);
/* Busy-waits ns nanoseconds (the medium spinner, the SMP settle). */
void lat_spin_ns(uint64_t ns);
/* Breathing (latency_threads.c says why): whether the thread driving a test
 * has been busy for LAT_BUSY_NS since *since, and the pause itself (sleeps
 * LAT_REST_NS, then restarts the busy window). Called only between timed
 * intervals, with every partner thread blocked. */
#define LAT_BUSY_NS UINT64_C(4000000)
#define LAT_REST_NS UINT64_C(1000000)
int lat_breath_due(uint64_t since);
void lat_breathe(uint64_t *since);
/* Voluntary context switches of the calling thread so far (getrusage
 * RUSAGE_THREAD): unchanged across a wait means the thread never slept. */
long lat_voluntary_switches(void);

/* --- the tests --------------------------------------------------------------- */

/* Number of bmCtx* tests and their names in run order. */
size_t lat_ctx_count(void);
const char *lat_ctx_name(size_t i);
/* Runs bmCtx test i into t (status, samples). */
void lat_ctx_run(size_t i, const lat_env *e, lat_test *t);

size_t lat_heap_count(void);
const char *lat_heap_name(size_t i);
void lat_heap_run(size_t i, const lat_env *e, lat_test *t);
/* latency_contend.c (run through lat_heap_run: HeapContendedLocked and
 * HeapContendedMt): the contended run on the locked heap or the mt heap. */
void lat_contend_run(int mt, const lat_env *e, lat_test *t);
/* Which locked heap the handover tests use (library or stand-in), one line. */
const char *lat_heap_lock_note(void);

/* --- the report (latency_report.c) ------------------------------------------- */

typedef struct lat_report {
    const machine *m;
    const lat_env *e;
    const char *rt_note; /* rt_setup()'s line plus the threads' outcome */
    char clock_text[320];
    int quick;
    lat_test *tests;
    size_t ntests;
    /* PI verdict (latency_heap.c's tests decide it in lat_pi_verdict). */
    const char *pi_verdict; /* PASS, FAIL, NOT JUDGED */
    char pi_detail[384];
    char contend_detail[256]; /* H's worst call, locked against mt heap */
} lat_report;

/* Fills the PI verdict and the contended comparison. */
void lat_pi_verdict(lat_report *r);
/* The comparison line of the contended runs (either may be NULL). */
void lat_contend_summary(const lat_test *locked, const lat_test *mt, char *buf, size_t n);
void lat_print(const lat_report *r);
int lat_write_json(const lat_report *r, const char *path, const char *command);

#endif /* RTM_LAB_LATENCY_H */
