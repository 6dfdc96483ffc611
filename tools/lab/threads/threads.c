// SPDX-License-Identifier: MIT
/*
 * threads.c -- `rtmem bench threads`: options, the allocator list, and the
 * parent's schedule of child processes (threads.h: definitions and process
 * model; threads_report.c: tables, verdicts, JSON).
 *
 * Runs are interleaved: run 1 of every benchmark, thread count and
 * allocator, then run 2, and so on, with the allocators innermost. On a
 * shared machine disturbance comes in waves lasting seconds; interleaving
 * spreads each wave over all allocators instead of charging it to whichever
 * ran during it.
 *
 * Real-time setup: none, on purpose (the note goes into the report). The
 * benchmark is about concurrency, so the threads float over every CPU the
 * process may use; rt_setup() would pin the process to one CPU and serialise
 * them. SCHED_FIFO with more threads than CPUs and yielding queues would
 * measure the scheduler's round-robin instead of the allocator.
 * mlockall(MCL_FUTURE) would fault in every page a peer reserves (mimalloc
 * and jemalloc reserve far more address space than they touch), changing
 * both the time and what peak RSS means.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "common/opts.h"
#include "common/spawn.h"
#include "threads/threads.h"
#include "threads/threads_lock.h"

#define CMD                "bench threads"
#define DEFAULT_ALLOCATORS "glibc,mimalloc,jemalloc,tcmalloc,rtmem,locked:tlsf"
#define CHILD_OUT_MAX      16384

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem bench threads [options]\n"
            "\n"
            "The tcmalloc-style pool benchmark (multi-thread malloc; named seed002 in --bench\n"
            "and the JSON; docs/METHODS.md), and a producer/consumer benchmark where every\n"
            "free is remote. Each measurement is a child process of its own: malloc peers by\n"
            "LD_PRELOAD (verified in the child), rtm heaps behind a lock in the child's own\n"
            "region (mt heaps likewise). Runs are interleaved across allocators; medians of clean "
            "runs are compared.\n"
            "\n"
            "seed002: each of N threads does ROUNDS rounds of NTIMES allocations of\n"
            "  (16 + i) %% 8192 + 1 bytes (i = 0 .. NTIMES-1), then frees them in order. The\n"
            "  blocks are not written, as in the original (--seed-write: every byte is).\n"
            "  malloc time = sum over threads and rounds of each allocation loop's elapsed\n"
            "                time (the original's malloc_costtime; CLOCK_MONOTONIC, as its\n"
            "                clock() under MSVC); free time = the same for the free loops;\n"
            "  wall time   = from releasing all threads at once to the last join.\n"
            "pc: N producers and N consumers (\"pairs\"); producers allocate PC_BLOCKS blocks\n"
            "  each, sizes uniform in [%u, %u] (fixed seed), write every byte, and pass them\n"
            "  through a lock-free bounded queue (%u blocks); consumers check and free them.\n"
            "  ns per block = wall time / blocks; throughput = blocks / wall time.\n"
            "peak RSS: getrusage ru_maxrss of the child at its end (start-up included).\n"
            "\n"
            "  --threads LIST     thread counts (seed002) and pairs (pc) (default 1,2,4)\n"
            "  --ntimes N         allocations per round (default 10000, the original's)\n"
            "  --rounds N         rounds per thread (default 10, the original's)\n"
            "  --seed-write       seed002 writes every byte of each block, inside the timed\n"
            "                     allocation loop (then its peak RSS is judged too)\n"
            "  --pc-blocks N      blocks per producer (default 50000)\n"
            "  --runs N           interleaved runs of each measurement (default 5)\n"
            "  --bench LIST       seed002,pc or one of them (default both)\n"
            "  --allocators LIST  comma-separated, from glibc, mimalloc, jemalloc, tcmalloc,\n"
            "                     rtmem (build/librtmem-malloc.so beside this program) and\n"
            "                     locked:<rtm heap> (locked:tlsf, locked:halffit, ...) and\n"
            "                     mt:<algorithm> (mt:tlsf, ...: rtm_mt_create's heap, one shard\n"
            "                     per thread of the run, pc: producers + consumers; each thread\n"
            "                     attaches at its start, untimed, and detaches at its end; one\n"
            "                     that cannot attach is served by the fallback shard, reported)\n"
            "                     (default %s)\n"
            "  --seed S           producer/consumer seed (default: time and pid; printed)\n"
            "  --quick            short profile for CI: threads 1,2, ntimes 2000, rounds 5,\n"
            "                     pc-blocks 20000, runs 2 (each unless given)\n"
            "  --json FILE        also write the results (docs/schema/bench_threads.schema.json)\n"
            "  --help             this text\n"
            "\n"
            "Targets, judged from medians of this run: rtmem >= 3x faster than glibc (seed002\n"
            "wall time); rtmem <= mimalloc (seed002 wall time, pc ns/block); rtmem peak RSS\n"
            "<= 1.2 x mimalloc's (pc, and seed002 under --seed-write: an unwritten block costs\n"
            "no RSS to an allocator that keeps its metadata outside the blocks). For the first\n"
            "mt:<algorithm> row, at 2 threads (pairs), seed002 wall time and pc ns/block:\n"
            "locked:<algorithm> / mt >= 10 (throughput) and mt / mimalloc <= 1.5.\n"
            "\n"
            "The default profile (6 allocators x 3 thread counts x 2 benchmarks x 5 runs, 180\n"
            "child processes) takes 1.5 to 3 minutes on a quiet 2-CPU machine, most of it\n"
            "glibc's seed002 and the locked heap with 4 threads or pairs. No real-time setup:\n"
            "the threads float over all allowed CPUs (pinning would serialise them). Set\n"
            "RTMEM_BENCH_LIB_<NAME> to a library path to override where a peer is looked for.\n",
            TR_PC_MIN, TR_PC_MAX, TR_PC_QUEUE, DEFAULT_ALLOCATORS);
}

static uint64_t default_seed(void)
{
    return (uint64_t)time(NULL) * UINT64_C(1000003) ^ (uint64_t)getpid();
}

const aut_rules tr_aut_rules = {AUT_ACCEPT(AUT_LOCKED) | AUT_ACCEPT(AUT_MT) | AUT_ACCEPT_MALLOC,
                                NULL,
                                "glibc, mimalloc, jemalloc, tcmalloc, rtmem, "
                                "locked:<rtm heap name> or mt:<algorithm>"};

/* --allocators into rows. Returns 0 or -1 (message printed). */
static int parse_allocators(const char *list, tr_bench *b)
{
    static aut auts[TR_MAX_ALLOCATORS];
    char why[256];
    b->nrows = aut_parse_list(list, &tr_aut_rules, auts, TR_MAX_ALLOCATORS, why, sizeof why);
    if (b->nrows == 0) {
        opts_error(CMD, "--allocators: %s", why);
        return -1;
    }
    for (size_t i = 0; i < b->nrows; i++) {
        tr_row *row = &b->rows[i];
        aut_kind k = auts[i].kind;
        _Static_assert(TR_NAME_MAX >= AUT_NAME_MAX, "row names hold every name");
        memcpy(row->name, auts[i].name, sizeof auts[i].name);
        row->kind = k == AUT_LOCKED   ? TR_KIND_LOCKED
                    : k == AUT_MT     ? TR_KIND_MT
                    : k == AUT_DROPIN ? TR_KIND_DROPIN
                                      : TR_KIND_PEER;
        row->peer = auts[i].peer;
        row->aut = &auts[i];
    }
    return 0;
}

static int parse_benches(const char *list, int *on)
{
    char names[TR_NBENCH][TR_NAME_MAX], why[160];
    size_t n;
    if (tr_split_names(list, names, TR_NBENCH, &n, why, sizeof why) != 0) {
        opts_error(CMD, "--bench: %s", why);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < TR_NBENCH && strcmp(names[i], tr_bench_names[k]) != 0)
            k++;
        if (k == TR_NBENCH) {
            opts_error(CMD, "--bench: unknown benchmark '%s' (seed002 or pc)", names[i]);
            return -1;
        }
        on[k] = 1;
    }
    return 0;
}

/* Range checks the parser cannot do. Returns 0 or -1 (message printed). */
static int validate(threads_opts *o)
{
    char why[160];
    if (tr_parse_counts(o->threads_text, o->counts, TR_MAX_COUNTS, TR_MAX_THREADS, &o->ncounts, why,
                        sizeof why) != 0) {
        opts_error(CMD, "--threads: %s", why);
        return -1;
    }
    if (o->ntimes == 0 || o->rounds == 0 || o->runs == 0 || o->pc_blocks == 0) {
        opts_error(CMD, "--ntimes, --rounds, --runs and --pc-blocks must be at least 1");
        return -1;
    }
    if (o->ntimes > UINT64_C(100000000) || o->rounds > UINT64_C(1000000) || o->runs > 1000 ||
        o->pc_blocks > UINT64_C(1000000000)) {
        opts_error(CMD, "--ntimes <= 1e8, --rounds <= 1e6, --runs <= 1000, --pc-blocks <= 1e9");
        return -1;
    }
    return parse_benches(o->bench_text, o->bench_on);
}

/* --- the children ----------------------------------------------------------- */

typedef struct child_args {
    char buf[8][32];
    char *argv[32];
} child_args;

static void child_argv(const threads_opts *o, const tr_row *row, int bench, size_t threads,
                       child_args *a)
{
    size_t n = 0, k = 0;
    a->argv[n++] = "rtmem";
    a->argv[n++] = "bench";
    a->argv[n++] = "threads";
#define ARG(name, val)                                                                             \
    do {                                                                                           \
        a->argv[n++] = name;                                                                       \
        snprintf(a->buf[k], sizeof a->buf[k], "%llu", (unsigned long long)(val));                  \
        a->argv[n++] = a->buf[k++];                                                                \
    } while (0)
    ARG("--ntimes", o->ntimes);
    ARG("--rounds", o->rounds);
    ARG("--pc-blocks", o->pc_blocks);
    ARG("--seed", o->seed);
    ARG("--child-threads", threads);
#undef ARG
    if (o->seed_write)
        a->argv[n++] = "--seed-write";
    a->argv[n++] = "--child";
    a->argv[n++] = (char *)row->name;
    a->argv[n++] = "--child-bench";
    a->argv[n++] = (char *)tr_bench_names[bench];
    if (row->lib[0] != '\0') {
        a->argv[n++] = "--child-lib";
        a->argv[n++] = (char *)row->lib;
    }
    a->argv[n] = NULL;
}

/* Spawns one child run and fills r. Never fails: errors go into r. */
static void run_child(const threads_opts *o, const tr_row *row, int bench, size_t threads,
                      tr_result *r)
{
    static child_args a;
    static char out[CHILD_OUT_MAX];
    child_argv(o, row, bench, threads, &a);
    spawn_result sp;
    lab_spawn(a.argv, row->lib, out, sizeof out, &sp);
    int parsed = tr_parse_result(out, r) == 0;
    if (!sp.ran || sp.signal != 0) {
        r->ok = 0;
        snprintf(r->why, sizeof r->why, "%s", sp.why);
    } else if (!parsed || sp.exit_status != 0) {
        char why[sizeof r->why];
        memcpy(why, r->why, sizeof why);
        r->ok = 0;
        snprintf(r->why, sizeof r->why, "child exit status %d%s%.400s", sp.exit_status,
                 why[0] ? ": " : " without a result line", why);
    }
}

static void locate_libraries(tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++) {
        tr_row *row = &b->rows[i];
        row->missing = aut_locate(row->aut, row->lib, sizeof row->lib) != LAB_OK;
    }
}

static const char *row_value(const tr_result *r, int bench, char *buf, size_t n)
{
    if (!tr_clean(r))
        return "(!)";
    if (bench == TR_SEED)
        snprintf(buf, n, "%.0fms", r->wall_ns / 1e6);
    else
        snprintf(buf, n, "%.0fns", r->blocks ? r->wall_ns / (double)r->blocks : 0.0);
    return buf;
}

/* One run of one benchmark at one thread count, every allocator in turn. */
static void run_step(tr_bench *b, uint64_t run, int bench, size_t ci)
{
    const threads_opts *o = b->o;
    fprintf(stderr, "threads: run %llu/%llu %s %s %zu:", (unsigned long long)run + 1,
            (unsigned long long)o->runs, tr_bench_names[bench],
            bench == TR_SEED ? "threads" : "pairs", o->counts[ci]);
    for (size_t i = 0; i < b->nrows; i++) {
        tr_row *row = &b->rows[i];
        if (row->missing)
            continue;
        tr_result *r = &row->cell[bench][ci].runs[run];
        run_child(o, row, bench, o->counts[ci], r);
        char buf[32];
        fprintf(stderr, " %s %s", row->name, row_value(r, bench, buf, sizeof buf));
    }
    fprintf(stderr, "\n");
}

/* The interleaved schedule: run r of everything before run r+1. */
static void run_all(tr_bench *b)
{
    const threads_opts *o = b->o;
    for (uint64_t run = 0; run < o->runs; run++)
        for (int bench = 0; bench < TR_NBENCH; bench++)
            for (size_t ci = 0; o->bench_on[bench] && ci < o->ncounts; ci++)
                run_step(b, run, bench, ci);
}

static int alloc_runs(tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++)
        for (int k = 0; k < TR_NBENCH; k++)
            for (size_t c = 0; c < b->o->ncounts; c++) {
                tr_cell *cell = &b->rows[i].cell[k][c];
                cell->runs = calloc((size_t)b->o->runs, sizeof *cell->runs);
                if (cell->runs == NULL)
                    return -1;
            }
    return 0;
}

static void free_runs(tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++)
        for (int k = 0; k < TR_NBENCH; k++)
            for (size_t c = 0; c < TR_MAX_COUNTS; c++) {
                free(b->rows[i].cell[k][c].runs);
                b->rows[i].cell[k][c].runs = NULL;
            }
}

static void notes(tr_bench *b)
{
    machine_describe(&b->m);
    snprintf(b->rt_note, sizeof b->rt_note,
             "no real-time setup, on purpose: threads float over the %d allowed CPUs "
             "(pinning to one CPU would serialise them), SCHED_OTHER (SCHED_FIFO with more "
             "threads than CPUs would measure round-robin), no mlockall (MCL_FUTURE would "
             "fault in every page a peer reserves and change peak RSS)",
             b->m.cpus_allowed);
    snprintf(b->locked_impl, sizeof b->locked_impl, "%s", tr_locked_impl());
    snprintf(b->mt_impl, sizeof b->mt_impl, "%s", tr_mt_impl());
    const char *pre = getenv("LD_PRELOAD");
    b->env_note[0] = '\0';
    if (pre != NULL && pre[0] != '\0')
        snprintf(b->env_note, sizeof b->env_note,
                 "note: LD_PRELOAD=%.180s was set; it is removed for the child runs", pre);
}

static int run_parent(tr_bench *b)
{
    notes(b);
    locate_libraries(b);
    if (alloc_runs(b) != 0) {
        fprintf(stderr, "rtmem %s: out of memory\n", CMD);
        free_runs(b);
        return 1;
    }
    run_all(b);
    tr_summarise(b);
    tr_print(b);
    int rc = tr_method_failed(b) ? 1 : 0;
    if (b->o->json != NULL && tr_write_json(b, b->o->json) != 0) {
        fprintf(stderr, "rtmem %s: cannot write %s: %s\n", CMD, b->o->json, strerror(errno));
        rc = 1;
    }
    free_runs(b);
    return rc;
}

/* The --quick profile, for each option not given. */
static void apply_quick(threads_opts *o, const opt_spec *specs, size_t ns)
{
    if (!o->quick)
        return;
    if (!opts_given(specs, ns, "threads"))
        o->threads_text = "1,2";
    if (!opts_given(specs, ns, "ntimes"))
        o->ntimes = 2000;
    if (!opts_given(specs, ns, "rounds"))
        o->rounds = 5;
    if (!opts_given(specs, ns, "pc-blocks"))
        o->pc_blocks = 20000;
    if (!opts_given(specs, ns, "runs"))
        o->runs = 2;
}

int threads_main(int argc, char **argv)
{
    threads_opts o;
    memset(&o, 0, sizeof o);
    o.threads_text = "1,2,4";
    o.allocators = DEFAULT_ALLOCATORS;
    o.bench_text = "seed002,pc";
    o.ntimes = 10000;
    o.rounds = 10;
    o.runs = 5;
    o.pc_blocks = 50000;
    opt_spec specs[] = {
        {"threads", OPT_STR, &o.threads_text, 0},
        {"ntimes", OPT_U64, &o.ntimes, 0},
        {"rounds", OPT_U64, &o.rounds, 0},
        {"pc-blocks", OPT_U64, &o.pc_blocks, 0},
        {"runs", OPT_U64, &o.runs, 0},
        {"bench", OPT_STR, &o.bench_text, 0},
        {"allocators", OPT_STR, &o.allocators, 0},
        {"seed", OPT_U64, &o.seed, 0},
        {"quick", OPT_FLAG, &o.quick, 0},
        {"seed-write", OPT_FLAG, &o.seed_write, 0},
        {"json", OPT_STR, &o.json, 0},
        /* Internal: the parent's options for a child run. */
        {"child", OPT_STR, &o.child, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-bench", OPT_STR, &o.child_bench, 0},
        {"child-threads", OPT_U64, &o.child_threads, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int rc = opts_parse_or_exit(argc, argv, specs, ns, usage);
    if (rc != OPTS_GO_ON)
        return rc;
    apply_quick(&o, specs, ns);
    if (!opts_given(specs, ns, "seed"))
        o.seed = default_seed();
    static tr_bench b;
    memset(&b, 0, sizeof b);
    b.o = &o;
    if (validate(&o) != 0 || (o.child == NULL && parse_allocators(o.allocators, &b) != 0)) {
        return opts_usage_error(CMD);
    }
    if (o.child != NULL) {
        if (o.child_bench == NULL || o.child_threads == 0 || o.child_threads > TR_MAX_THREADS) {
            opts_error(CMD, "--child needs --child-bench and --child-threads in [1, %d]",
                       TR_MAX_THREADS);
            return opts_usage_error(CMD);
        }
        return threads_child(&o);
    }
    return run_parent(&b);
}
