// SPDX-License-Identifier: MIT
/*
 * random.c -- `rtmem bench random`: options, and the parent's schedule of
 * child processes (random.h says why every run is a child).
 *
 * Rounds are interleaved: round 1 of every allocator, then round 2 of every
 * allocator, and so on. On a shared machine the disturbance comes in waves
 * lasting seconds; interleaving spreads each wave over all allocators instead
 * of charging it to whichever ran during it. The report then gives, per
 * allocator, the minimum (the least disturbed run) and the median, and the
 * spread max/min that says how disturbed the machine was.
 *
 * --sweep (the window sweep of the TLSF/xvmalloc/zsmalloc study, see
 * docs/METHODS.md) has its own schedule in random_sweep.c; the options, the
 * allocator list, the clock and the children's command line are shared from
 * here.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/aut.h"
#include "common/clock.h"
#include "common/opts.h"
#include "common/rt.h"
#include "random/random.h"
#include "random/random_sweep.h"
#include "common/spawn.h"
#include "rtmem.h"

#define DEFAULT_ALLOCATORS "tlsf,glibc,mimalloc,jemalloc,tcmalloc"
#define CHILD_OUT_MAX      65536

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem bench random [options]\n"
            "       rtmem bench random --sweep [options]\n"
            "\n"
            "The random-replace loop of the TLSF/xvmalloc/zsmalloc study (docs/METHODS.md):\n"
            "fill SLOTS blocks, then each iteration frees a random slot's block and allocates\n"
            "a random size in [MIN, MAX) into it. rtm heaps run over a pre-faulted region;\n"
            "peers run in child processes with LD_PRELOAD (verified in the child). Rounds are\n"
            "interleaved across allocators. Refused allocations are counted and shown, never\n"
            "timed as fast iterations.\n"
            "\n"
            "  --slots N          live blocks (default 10000)\n"
            "  --iterations N     replacements per pass (default 2000000; --quick: 100000)\n"
            "  --min BYTES        smallest request (default 16)\n"
            "  --max BYTES        requests are < MAX (default 4096)\n"
            "  --runs N           interleaved rounds (default 5, --sweep 2; --quick: 2)\n"
            "  --seed S           random seed (default: time and pid; printed)\n"
            "  --allocators LIST  comma-separated malloc peers (glibc, mimalloc, jemalloc,\n"
            "                     tcmalloc) and rtm heap names (tlsf, pool:4096, buddy,\n"
            "                     halffit, slab, heapmem, xvmalloc:8192); default:\n"
            "                       %s\n"
            "                       --sweep: %s\n"
            "                       --sweep --quick: %s\n"
            "  --clock tsc|monotonic  clock (default tsc when invariant, x86 only)\n"
            "  --tlsf-region BYTES  region of each rtm heap (default slots x max x 2, --sweep:\n"
            "                     slots x (largest x + 64) x 2); a smaller one shows refused\n"
            "                     allocations being counted, not timed as fast\n"
            "  --cpu N            CPU the measuring children pin to (default: the last allowed)\n"
            "  --no-rt            children skip mlockall, SCHED_FIFO and pinning\n"
            "  --quick            short profile for CI\n"
            "  --json FILE        also write the results as JSON\n"
            "                     (docs/schema/bench_random.schema.json)\n"
            "  --help             this text\n"
            "\n"
            "--sweep: the study's window sweep. For each window start x = 0, STEP, ... <= MAX,\n"
            "every allocator runs the loop with requests in [x, x+64) (x = 0: [1, 64), a\n"
            "0-byte request being no allocation), one child per allocator and round running\n"
            "all windows: fill untimed, then N timed replacements; ns per free+alloc pair,\n"
            "refusals and (rtm heaps) used/free bytes per window.\n"
            "  --sweep-step BYTES  distance between window starts, a multiple of %u\n"
            "                     (default %u; --quick: %u)\n"
            "  --sweep-max BYTES   largest window start (default %u)\n"
            "  --sweep-iterations N  timed replacements per window (default %u;\n"
            "                     --quick: %u)\n"
            "\n"
            "--grow: the study's growth finding. TLSF only, three ways, interleaved: the whole\n"
            "region at start (pre-faulted); growing on demand (rtm_heap_set_grow) by fresh\n"
            "mmap'd chunks (new pools, page faults on first touch); growing inside one\n"
            "PROT_NONE reservation by mprotect (extends the last pool). Each way may hold the\n"
            "region's bytes at most; the fill and the replacements are all timed; prints the\n"
            "alloc latency percentiles p50 .. p99.99 and max, minimum and median of --runs.\n"
            "  --grow-chunk BYTES  the least each growth maps (default %u); the growing ways\n"
            "                     start on one chunk\n"
            "\n"
            "Peer libraries are searched in the usual library directories; set\n"
            "RTMEM_BENCH_LIB_MIMALLOC (..._JEMALLOC, ..._TCMALLOC) to a path to override.\n",
            DEFAULT_ALLOCATORS, SWEEP_DEFAULT_ALLOCATORS, SWEEP_QUICK_ALLOCATORS, SWEEP_GRANULE,
            SWEEP_DEFAULT_STEP, SWEEP_QUICK_STEP, SWEEP_DEFAULT_MAX, SWEEP_DEFAULT_ITERATIONS,
            SWEEP_QUICK_ITERATIONS, GROW_DEFAULT_CHUNK);
}

uint64_t random_region_bytes(const random_opts *o)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t bytes = o->tlsf_region != 0 ? o->tlsf_region : o->slots * o->max * 2u;
    return (bytes + page - 1u) / page * page;
}

static uint64_t default_seed(void)
{
    return (uint64_t)time(NULL) * UINT64_C(1000003) ^ (uint64_t)getpid();
}

/* Range checks the parser cannot do, for the options both modes share.
 * Returns 0 or -1 (message printed). */
static int validate(const random_opts *o)
{
    if (o->slots == 0 || o->slots > UINT32_MAX) {
        opts_error("bench random", "--slots must be in [1, %u]", UINT32_MAX);
        return -1;
    }
    if (o->iterations == 0 || o->runs == 0) {
        opts_error("bench random", "--iterations and --runs must be at least 1");
        return -1;
    }
    if (o->min == 0 || o->min >= o->max || o->max > UINT32_MAX) {
        opts_error("bench random", "need 1 <= --min < --max <= %u", UINT32_MAX);
        return -1;
    }
    if (o->slots > UINT64_MAX / 2u / o->max) {
        opts_error("bench random", "--slots x --max is too large");
        return -1;
    }
    if (strcmp(o->clock, "tsc") != 0 && strcmp(o->clock, "monotonic") != 0) {
        opts_error("bench random", "--clock must be tsc or monotonic");
        return -1;
    }
    if (!rt_cpu_usable(o->cpu)) {
        opts_error("bench random", "--cpu %lld is not a CPU this process may use",
                   (long long)o->cpu);
        return -1;
    }
    return 0;
}

/* Which options belong to one mode only. Returns 0 or -1 (message printed). */
static int validate_mode(const random_opts *o, const opt_spec *specs, size_t ns)
{
    static const char *const sweep_only[] = {"sweep-step", "sweep-max", "sweep-iterations"};
    static const char *const single_only[] = {"min", "max", "iterations"};
    for (size_t i = 0; i < 3; i++) {
        if (!o->sweep && opts_given(specs, ns, sweep_only[i])) {
            opts_error("bench random", "--%s needs --sweep", sweep_only[i]);
            return -1;
        }
        /* A child gets --iterations etc. from its parent; the user does not. */
        if (o->sweep && o->child == NULL && opts_given(specs, ns, single_only[i])) {
            opts_error("bench random",
                       "--%s sets the single run; --sweep draws sizes from each window "
                       "(--sweep-max, --sweep-step) and times --sweep-iterations",
                       single_only[i]);
            return -1;
        }
    }
    if (o->grow && o->child == NULL) {
        if (o->sweep || opts_given(specs, ns, "allocators")) {
            opts_error("bench random", "--grow measures TLSF alone; no --sweep or --allocators");
            return -1;
        }
        if (o->grow_chunk == 0 || o->grow_chunk > random_region_bytes(o)) {
            opts_error("bench random", "--grow-chunk must be in [1, the region's bytes]");
            return -1;
        }
    }
    if (!o->grow && o->child == NULL && opts_given(specs, ns, "grow-chunk")) {
        opts_error("bench random", "--grow-chunk needs --grow");
        return -1;
    }
    if (!o->sweep)
        return 0;
    char why[160];
    if (sweep_check(o->sweep_step, o->sweep_max, o->sweep_iterations, o->slots, why, sizeof why) !=
        0) {
        opts_error("bench random", "%s", why);
        return -1;
    }
    return 0;
}

const aut_rules random_aut_rules = {AUT_ACCEPT(AUT_RTM) | AUT_ACCEPT_MALLOC, NULL,
                                    DEFAULT_ALLOCATORS ", or any rtm heap name"};

size_t random_parse_allocators(const char *list, alloc_row *rows)
{
    static aut auts[RANDOM_MAX_ALLOCATORS];
    char why[256];
    size_t n =
        aut_parse_list(list, &random_aut_rules, auts, RANDOM_MAX_ALLOCATORS, why, sizeof why);
    if (n == 0)
        opts_error("bench random", "--allocators: %s", why);
    for (size_t i = 0; i < n; i++) {
        memset(&rows[i], 0, sizeof rows[i]);
        rows[i].name = auts[i].name;
        rows[i].peer = auts[i].peer;
        rows[i].aut = &auts[i];
    }
    return n;
}

void random_args_add(random_args *a, const char *name, const char *fmt, ...)
{
    /* Sized for every option a parent passes; overflowing is a bug here. */
    if (a->n + 3 > sizeof a->argv / sizeof a->argv[0] || a->k >= sizeof a->buf / sizeof a->buf[0])
        abort();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->buf[a->k], sizeof a->buf[a->k], fmt, ap);
    va_end(ap);
    a->argv[a->n++] = (char *)name;
    a->argv[a->n++] = a->buf[a->k++];
    a->argv[a->n] = NULL;
}

void random_args_flag(random_args *a, const char *name)
{
    if (a->n + 2 > sizeof a->argv / sizeof a->argv[0])
        abort();
    a->argv[a->n++] = (char *)name;
    a->argv[a->n] = NULL;
}

void random_args_init(random_args *a, const random_bench *b, const alloc_row *row, uint64_t seed)
{
    const random_opts *o = b->o;
    a->n = a->k = 0;
    a->argv[a->n++] = "rtmem";
    a->argv[a->n++] = "bench";
    a->argv[a->n++] = "random";
    random_args_add(a, "--slots", "%llu", (unsigned long long)o->slots);
    random_args_add(a, "--seed", "%llu", (unsigned long long)seed);
    random_args_add(a, "--tlsf-region", "%llu", (unsigned long long)b->region);
    random_args_add(a, "--child-tick-ns", "%.17g", b->tick_ns);
    random_args_add(a, "--child-cost", "%llu", (unsigned long long)o->child_cost);
    random_args_add(a, "--child-tsc", "%llu", (unsigned long long)o->child_tsc);
    random_args_add(a, "--cpu", "%lld", (long long)o->cpu);
    if (o->no_rt)
        random_args_flag(a, "--no-rt");
    random_args_add(a, "--child", "%s", row->name);
    if (row->lib[0] != '\0')
        random_args_add(a, "--child-lib", "%s", row->lib);
}

void random_note_rt(random_bench *b, const char *rt)
{
    if (rt == NULL || rt[0] == '\0')
        return;
    if (b->rt_note[0] == '\0')
        snprintf(b->rt_note, sizeof b->rt_note, "in each measuring child: %s", rt);
    else if (strstr(b->rt_note, rt) == NULL && strstr(b->rt_note, "(children differ") == NULL)
        snprintf(b->rt_note + strlen(b->rt_note), sizeof b->rt_note - strlen(b->rt_note),
                 " (children differ: also \"%s\")", rt);
}

/* Spawns one child run and fills r. Never fails: errors go into r. */
static void run_child(const random_bench *b, const alloc_row *row, uint64_t seed, random_result *r)
{
    static random_args a;
    static char out[CHILD_OUT_MAX];
    random_args_init(&a, b, row, seed);
    random_args_add(&a, "--iterations", "%llu", (unsigned long long)b->o->iterations);
    random_args_add(&a, "--min", "%llu", (unsigned long long)b->o->min);
    random_args_add(&a, "--max", "%llu", (unsigned long long)b->o->max);
    memset(r, 0, sizeof *r);
    spawn_result sp;
    lab_spawn(a.argv, row->lib, out, sizeof out, &sp);
    if (!sp.ran) {
        snprintf(r->why, sizeof r->why, "%s", sp.why);
        return;
    }
    int parsed = random_parse_result(out, r) == 0;
    if (sp.signal != 0) {
        r->ok = 0;
        snprintf(r->why, sizeof r->why, "%s", sp.why);
    } else if (!parsed || sp.exit_status != 0) {
        char why[sizeof r->why];
        memcpy(why, r->why, sizeof why);
        r->ok = 0;
        snprintf(r->why, sizeof r->why, "child exit status %d%s%.700s", sp.exit_status,
                 why[0] ? ": " : " without a result line", why);
    }
}

void random_locate_libraries(alloc_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rows[i].missing = aut_locate(rows[i].aut, rows[i].lib, sizeof rows[i].lib) != LAB_OK;
}

/* The interleaved schedule: round r of every allocator before round r+1. */
static void run_rounds(random_bench *b)
{
    const random_opts *o = b->o;
    for (uint64_t round = 0; round < o->runs; round++) {
        fprintf(stderr, "random: round %llu/%llu:", (unsigned long long)round + 1,
                (unsigned long long)o->runs);
        for (size_t i = 0; i < b->nrows; i++) {
            alloc_row *row = &b->rows[i];
            if (row->missing)
                continue;
            run_child(b, row, o->seed + round, &row->runs[round]);
            const random_result *r = &row->runs[round];
            random_note_rt(b, r->rt);
            fprintf(stderr, " %s %.1f%s", row->name, r->ns_per_pair, random_clean(r) ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
}

void random_prepare(random_bench *b, random_opts *o)
{
    b->o = o;
    machine_describe(&b->m);
    bench_clock clk;
    clock_calibrate(&clk, strcmp(o->clock, "tsc") == 0);
    clock_describe(&clk, b->clock_text, sizeof b->clock_text);
    b->tick_ns = clk.ns_per_tick;
    b->cost_ns = (double)clk.cost_ticks * clk.ns_per_tick;
    o->child_cost = clk.cost_ticks;
    o->child_tsc = (uint64_t)clk.use_tsc;
    const char *pre = getenv("LD_PRELOAD");
    b->env_note[0] = '\0';
    if (pre != NULL && pre[0] != '\0')
        snprintf(b->env_note, sizeof b->env_note,
                 "note: LD_PRELOAD=%.180s was set; it is removed for the child runs", pre);
    b->rt_note[0] = '\0';
}

static int run_parent(random_opts *o, alloc_row *rows, size_t nrows)
{
    static random_bench b;
    memset(&b, 0, sizeof b);
    random_prepare(&b, o);
    b.rows = rows;
    b.nrows = nrows;
    b.region = random_region_bytes(o);
    random_locate_libraries(rows, b.nrows);
    for (size_t i = 0; i < b.nrows; i++) {
        rows[i].runs = calloc((size_t)o->runs, sizeof *rows[i].runs);
        if (rows[i].runs == NULL)
            return 1;
    }
    run_rounds(&b);
    if (b.rt_note[0] == '\0')
        snprintf(b.rt_note, sizeof b.rt_note, "no measuring child reported its setup");
    random_summarise(&b);
    random_print(&b);
    int rc = 0;
    if (o->json != NULL && random_write_json(&b, o->json) != 0) {
        fprintf(stderr, "rtmem bench random: cannot write %s: %s\n", o->json, strerror(errno));
        rc = 1;
    }
    for (size_t i = 0; i < b.nrows; i++) {
        /* rtm heap trouble is ours to fail on; a peer's is reported in its row. */
        if (rows[i].peer == NULL && rows[i].status != LAB_OK)
            rc = 1;
        free(rows[i].runs);
    }
    return rc;
}

/* The --quick and --sweep defaults for options not given. */
static void apply_profile(random_opts *o, const opt_spec *specs, size_t ns)
{
    if (o->quick && !opts_given(specs, ns, "iterations"))
        o->iterations = 100000;
    if (!opts_given(specs, ns, "runs"))
        o->runs = o->quick || o->sweep ? 2 : 5; /* sweep: the 2-minute budget (README) */
    if (!opts_given(specs, ns, "seed"))
        o->seed = default_seed();
    if (o->sweep && !opts_given(specs, ns, "allocators"))
        o->allocators = o->quick ? SWEEP_QUICK_ALLOCATORS : SWEEP_DEFAULT_ALLOCATORS;
    if (o->sweep && o->quick && !opts_given(specs, ns, "sweep-step"))
        o->sweep_step = SWEEP_QUICK_STEP;
    if (o->sweep && o->quick && !opts_given(specs, ns, "sweep-iterations"))
        o->sweep_iterations = SWEEP_QUICK_ITERATIONS;
}

int random_main(int argc, char **argv)
{
    random_opts o = {.slots = 10000,
                     .iterations = 2000000,
                     .min = 16,
                     .max = 4096,
                     .runs = 5,
                     .allocators = DEFAULT_ALLOCATORS,
                     .clock = "tsc",
                     .cpu = -1,
                     .sweep_step = SWEEP_DEFAULT_STEP,
                     .sweep_max = SWEEP_DEFAULT_MAX,
                     .sweep_iterations = SWEEP_DEFAULT_ITERATIONS,
                     .grow_chunk = GROW_DEFAULT_CHUNK,
                     .child_tick_ns = 1.0};
    opt_spec specs[] = {
        {"slots", OPT_U64, &o.slots, 0},
        {"iterations", OPT_U64, &o.iterations, 0},
        {"min", OPT_SIZE, &o.min, 0},
        {"max", OPT_SIZE, &o.max, 0},
        {"runs", OPT_U64, &o.runs, 0},
        {"seed", OPT_U64, &o.seed, 0},
        {"json", OPT_STR, &o.json, 0},
        {"allocators", OPT_STR, &o.allocators, 0},
        {"clock", OPT_STR, &o.clock, 0},
        {"tlsf-region", OPT_SIZE, &o.tlsf_region, 0},
        {"cpu", OPT_I64, &o.cpu, 0},
        {"no-rt", OPT_FLAG, &o.no_rt, 0},
        {"quick", OPT_FLAG, &o.quick, 0},
        {"sweep", OPT_FLAG, &o.sweep, 0},
        {"sweep-step", OPT_SIZE, &o.sweep_step, 0},
        {"sweep-max", OPT_SIZE, &o.sweep_max, 0},
        {"sweep-iterations", OPT_U64, &o.sweep_iterations, 0},
        {"grow", OPT_FLAG, &o.grow, 0},
        {"grow-chunk", OPT_SIZE, &o.grow_chunk, 0},
        /* Internal: the parent's options for a child run. */
        {"child", OPT_STR, &o.child, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-tick-ns", OPT_DBL, &o.child_tick_ns, 0},
        {"child-cost", OPT_U64, &o.child_cost, 0},
        {"child-tsc", OPT_U64, &o.child_tsc, 0},
        {"child-grow", OPT_STR, &o.child_grow, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int rc = opts_parse_or_exit(argc, argv, specs, ns, usage);
    if (rc != OPTS_GO_ON)
        return rc;
    apply_profile(&o, specs, ns);
    static alloc_row rows[RANDOM_MAX_ALLOCATORS];
    size_t nrows = 0;
    if (validate(&o) != 0 || validate_mode(&o, specs, ns) != 0 ||
        (o.child == NULL && (nrows = random_parse_allocators(o.allocators, rows)) == 0)) {
        return opts_usage_error("bench random");
    }
    if (o.child != NULL && o.child_grow != NULL)
        return random_grow_child(&o);
    if (o.child != NULL)
        return o.sweep ? random_sweep_child(&o) : random_child(&o);
    if (o.sweep)
        return random_sweep_main(&o, rows, nrows);
    if (o.grow)
        return random_grow_main(&o);
    return run_parent(&o, rows, nrows);
}
