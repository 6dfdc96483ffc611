// SPDX-License-Identifier: MIT
/*
 * latency.c -- `rtmem latency`: options, the real-time setup, and the
 * schedule of the tests (latency.h lists the command's files).
 *
 * Setup, in this order: the CPUs allowed at start are remembered (the
 * no-affinity SMP tests get all of them); rt_setup() locks memory, pins this
 * thread to the test CPU and makes it SCHED_FIFO 1 (below every test thread,
 * so it never competes with them: it only starts and joins them); one
 * SCHED_FIFO thread is then really created, because a permitted
 * sched_setscheduler() on the process does not prove that pthread attributes
 * will be honoured (an RLIMIT_RTPRIO below 60 would refuse them); the clock
 * is calibrated last, already pinned and locked.
 *
 * Tests run one after the other, never overlapping: each owns the CPUs.
 * A test that cannot run here (one CPU, no mqueue, no SCHED_FIFO for the
 * task switch) is "skipped" with its reason; one whose method failed (a
 * timed-out wait, a thread that would not start) is "failed" and makes the
 * exit status 1. Everything else, a FAILed PI verdict included, is status 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "latency/latency.h"
#include "common/opts.h"
#include "common/rt.h"
#include "rtmem.h"

#define DEFAULT_ITERATIONS 20000u /* as the bmCtx* suite */
/* The spinner's burst must be longer than the pauses the machine itself
 * inflicts, or an inversion cannot be told from them: on a shared VM, a 200 us
 * burst saw 55 of 10,000 PI waits >= 200 us, a 1000 us burst 4 of 10,000
 * >= 1000 us (an inversion would make H wait the whole burst, whatever its
 * length, so its count would not drop). */
#define DEFAULT_SPIN_US  1000
#define QUICK_ITERATIONS 200u
#define MAX_TESTS        16u

typedef struct lat_opts {
    uint64_t iterations, timeout_ms, settle_us, spin_us, buckets, drop_give;
    int64_t cpu;
    const char *tests, *algorithm, *clock, *json;
    int quick, no_rt;
} lat_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem latency [options]\n"
            "\n"
            "The VxWorks bmCtx* context-switch suite (docs/METHODS.md) between two SCHED_FIFO\n"
            "threads (semaphore, message queue, event: Pend and Unpend; the task switch by\n"
            "priority juggling; SMP variants with and without affinity), then the lock\n"
            "handover of rtmem's locked heap and a priority-inheritance run against a non-PI\n"
            "control, and a high-priority thread's alloc/free while two lower-priority threads\n"
            "hammer the same heap (HeapContendedLocked: rtm_locked_create; HeapContendedMt:\n"
            "rtm_mt_create, one shard per thread; the report compares H's worst call).\n"
            "avg / min / max as the bmCtx* suite prints them, plus p50 / p99 / p99.9 and a\n"
            "histogram per test.\n"
            "\n"
            "  --iterations N   per test (default 20000, the suite's; --quick: 200)\n"
            "  --tests LIST     comma-separated test names (default: all; see docs/LATENCY.md)\n"
            "  --cpu N          CPU of the one-CPU tests (default: the last one allowed)\n"
            "  --spin-us N      the medium-priority spinner's burst (default 1000)\n"
            "  --settle-us N    SMP: giver's wait for the waiter to sleep (default 20)\n"
            "  --timeout-ms N   every wait gives up after this (default 1000)\n"
            "  --algorithm NAME heap of the handover and contended tests (default tlsf)\n"
            "  --buckets N      histogram buckets up to p99.9 (default 32, at most 63)\n"
            "  --clock tsc|monotonic  per-sample clock (default tsc when invariant)\n"
            "  --no-rt          skip mlockall, SCHED_FIFO and pinning (numbers then mean little)\n"
            "  --quick          short profile for CI\n"
            "  --json FILE      also write the results (docs/schema/latency.schema.json)\n"
            "  --drop-give N    for tests: the bmCtx giver skips its Nth give, so the waiter\n"
            "                   times out (a lost wakeup fails the test, exit 1; never hangs)\n"
            "  --help           this text\n");
}

/* --- test selection ---------------------------------------------------------------- */

typedef struct pick {
    int heap; /* 0: bmCtx table, 1: heap table */
    size_t index;
} pick;

static int lookup(const char *name, size_t len, pick *p)
{
    for (size_t i = 0; i < lat_ctx_count(); i++)
        if (strlen(lat_ctx_name(i)) == len && strncmp(lat_ctx_name(i), name, len) == 0) {
            *p = (pick){0, i};
            return 0;
        }
    for (size_t i = 0; i < lat_heap_count(); i++)
        if (strlen(lat_heap_name(i)) == len && strncmp(lat_heap_name(i), name, len) == 0) {
            *p = (pick){1, i};
            return 0;
        }
    return -1;
}

/* Fills picks from LIST (NULL: all). Returns the count, 0 after a message. */
static size_t select_tests(const char *list, pick *picks)
{
    size_t n = 0;
    if (list == NULL) {
        for (size_t i = 0; i < lat_ctx_count(); i++)
            picks[n++] = (pick){0, i};
        for (size_t i = 0; i < lat_heap_count(); i++)
            picks[n++] = (pick){1, i};
        return n;
    }
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len == 0 || n == MAX_TESTS || lookup(p, len, &picks[n]) != 0) {
            opts_error("latency", "unknown test '%.*s' in --tests (names: docs/LATENCY.md)",
                       (int)len, p);
            return 0;
        }
        for (size_t k = 0; k < n; k++)
            if (picks[k].heap == picks[n].heap && picks[k].index == picks[n].index) {
                opts_error("latency", "test '%.*s' given twice", (int)len, p);
                return 0;
            }
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (n == 0)
        opts_error("latency", "--tests is empty");
    return n;
}

/* --- options ---------------------------------------------------------------------- */

static int validate(const lat_opts *o)
{
    if (o->iterations == 0 || o->iterations > 10000000u) {
        opts_error("latency", "--iterations must be in [1, 10000000]");
        return -1;
    }
    if (o->timeout_ms < 10 || o->timeout_ms > 60000) {
        opts_error("latency", "--timeout-ms must be in [10, 60000]");
        return -1;
    }
    if (o->spin_us == 0 || o->spin_us > 100000 || o->settle_us > 100000) {
        opts_error("latency", "--spin-us must be in [1, 100000], --settle-us at most 100000");
        return -1;
    }
    if (o->buckets == 0 || o->buckets > LAT_MAX_BUCKETS - 1u) {
        opts_error("latency", "--buckets must be in [1, %u]", LAT_MAX_BUCKETS - 1u);
        return -1;
    }
    if (!rt_cpu_usable(o->cpu)) {
        opts_error("latency", "--cpu %lld is not a CPU this process may use", (long long)o->cpu);
        return -1;
    }
    if (strcmp(o->clock, "tsc") != 0 && strcmp(o->clock, "monotonic") != 0) {
        opts_error("latency", "--clock must be tsc or monotonic");
        return -1;
    }
    if (rtm_min_region(o->algorithm) == 0) {
        opts_error("latency", "unknown heap algorithm '%s'", o->algorithm);
        return -1;
    }
    return 0;
}

/* OPTS_GO_ON, or the status to exit with: 0 after --help, 2 for misuse
 * (message and usage printed; opts_parse_or_exit). */
static int parse(int argc, char **argv, lat_opts *o)
{
    opt_spec specs[] = {
        {"iterations", OPT_U64, &o->iterations, 0},
        {"tests", OPT_STR, &o->tests, 0},
        {"cpu", OPT_I64, &o->cpu, 0},
        {"spin-us", OPT_U64, &o->spin_us, 0},
        {"settle-us", OPT_U64, &o->settle_us, 0},
        {"timeout-ms", OPT_U64, &o->timeout_ms, 0},
        {"algorithm", OPT_STR, &o->algorithm, 0},
        {"buckets", OPT_U64, &o->buckets, 0},
        {"clock", OPT_STR, &o->clock, 0},
        {"no-rt", OPT_FLAG, &o->no_rt, 0},
        {"quick", OPT_FLAG, &o->quick, 0},
        {"json", OPT_STR, &o->json, 0},
        {"drop-give", OPT_U64, &o->drop_give, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int rc = opts_parse_or_exit(argc, argv, specs, ns, usage);
    if (rc != OPTS_GO_ON)
        return rc;
    if (o->quick && !opts_given(specs, ns, "iterations"))
        o->iterations = QUICK_ITERATIONS;
    return OPTS_GO_ON;
}

/* --- environment ------------------------------------------------------------------ */

static int last_cpu(const cpu_set_t *s, int except)
{
    for (int c = CPU_SETSIZE - 1; c >= 0; c--)
        if (CPU_ISSET((size_t)c, s) && c != except)
            return c;
    return -1;
}

static long rt_runtime_us(void)
{
    long v = -2;
    FILE *f = fopen("/proc/sys/kernel/sched_rt_runtime_us", "r");
    if (f != NULL) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -2;
        fclose(f);
    }
    return v;
}

/* rt_setup() and the threads' own check; the one line the report prints. */
static void setup(const lat_opts *o, lat_env *e, char *note, size_t n)
{
    char base[384];
    e->cpu = o->cpu >= 0 ? (int)o->cpu : last_cpu(&e->allowed, -1);
    e->other_cpu = last_cpu(&e->allowed, e->cpu);
    rt_setup(!o->no_rt, e->cpu, base, sizeof base);
    e->no_rt = o->no_rt;
    e->fifo = !o->no_rt && lat_fifo_permitted();
    long rt = rt_runtime_us();
    char throttle[96];
    if (rt == -1)
        snprintf(throttle, sizeof throttle, "RT throttling off");
    else if (rt >= 0)
        snprintf(throttle, sizeof throttle, "RT throttling %ld us per s", rt);
    else
        snprintf(throttle, sizeof throttle, "RT throttling unknown");
    /* rt_setup's note is about this main thread; the test threads are
     * pinned as each test's placement line says, --no-rt or not. */
    snprintf(note, n, "main thread: %s; test threads: %s, each placed on CPUs as its test says; %s",
             base,
             o->no_rt  ? "SCHED_OTHER (--no-rt: task switch skipped, PI not judged)"
             : e->fifo ? "SCHED_FIFO 40/50/60 ok"
                       : "SCHED_FIFO not permitted, running as SCHED_OTHER (task switch "
                         "skipped, PI not judged)",
             throttle);
}

static int run_all(const lat_opts *o, lat_env *e, const pick *picks, size_t np, lat_test *tests)
{
    int failed = 0;
    for (size_t i = 0; i < np; i++) {
        lat_test *t = &tests[i];
        memset(t, 0, sizeof *t);
        t->status = LAB_NOT_RUN;
        t->name = picks[i].heap ? lat_heap_name(picks[i].index) : lat_ctx_name(picks[i].index);
        fprintf(stderr, "latency: %-27s ", t->name);
        uint64_t t0 = mono_ns();
        if (lat_samples_alloc(t, e) != 0) {
            lat_fail(t, LAB_FAILED, "out of memory");
        } else if (picks[i].heap) {
            lat_heap_run(picks[i].index, e, t);
        } else {
            lat_ctx_run(picks[i].index, e, t);
        }
        double s = (double)(mono_ns() - t0) / 1e9;
        if (t->status == LAB_OK)
            fprintf(stderr, "avg %8.3f us  (%.1f s)\n", t->st.avg / 1000.0, s);
        else
            fprintf(stderr, "%s: %s\n", t->status == LAB_SKIPPED ? "skipped" : "FAILED", t->why);
        failed |= t->status == LAB_FAILED;
    }
    (void)o;
    return failed;
}

int latency_main(int argc, char **argv)
{
    lat_opts o = {
        DEFAULT_ITERATIONS, 1000, 20, DEFAULT_SPIN_US, 32, 0, -1, NULL, "tlsf", "tsc", NULL, 0, 0};
    int status = parse(argc, argv, &o);
    if (status != OPTS_GO_ON)
        return status;
    lat_env e;
    memset(&e, 0, sizeof e);
    if (sched_getaffinity(0, sizeof e.allowed, &e.allowed) != 0)
        CPU_ZERO(&e.allowed);
    static pick picks[MAX_TESTS];
    size_t np = 0;
    if (validate(&o) != 0 || (np = select_tests(o.tests, picks)) == 0) {
        return opts_usage_error("latency");
    }
    e.iterations = o.iterations;
    e.timeout_ns = o.timeout_ms * UINT64_C(1000000);
    e.settle_ns = o.settle_us * UINT64_C(1000);
    e.spin_ns = o.spin_us * UINT64_C(1000);
    e.buckets = (unsigned)o.buckets;
    e.algorithm = o.algorithm;
    e.drop_give = o.drop_give;

    machine m;
    machine_describe(&m);
    static char note[768];
    setup(&o, &e, note, sizeof note);
    clock_calibrate(&e.clk, strcmp(o.clock, "tsc") == 0);
    static lat_test tests[MAX_TESTS];
    lat_report rep;
    memset(&rep, 0, sizeof rep);
    rep.m = &m;
    rep.e = &e;
    rep.rt_note = note;
    rep.quick = o.quick;
    rep.tests = tests;
    rep.ntests = np;
    clock_describe(&e.clk, rep.clock_text, sizeof rep.clock_text);

    int failed = run_all(&o, &e, picks, np, tests);
    lat_pi_verdict(&rep);
    lat_print(&rep);
    int rc = failed ? 1 : 0;
    if (o.json != NULL && lat_write_json(&rep, o.json, argv[0]) != 0) {
        fprintf(stderr, "rtmem latency: cannot write %s: %s\n", o.json, strerror(errno));
        rc = 1;
    }
    if (failed)
        printf("\nverdict: the method FAILED for at least one test (see above): exit 1\n");
    for (size_t i = 0; i < np; i++)
        free(tests[i].ns);
    return rc;
}
