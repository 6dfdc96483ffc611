// SPDX-License-Identifier: MIT
/*
 * zram.c -- `rtmem bench zram`: options, the allocator list, and the
 * parent's schedule of child processes with the parser of their lines
 * (zram.h has the method and the protocol).
 *
 * Rounds are interleaved (round r of every allocator before round r+1), as
 * in random.c: a wave of disturbance on a shared machine lands on every
 * allocator's round alike, and the per-point minimum over rounds is the
 * least disturbed value. The window rules (step, granule, seeds) are the
 * sweep's (random_sweep.h), so a window here and in `bench random --sweep`
 * draws the same sizes.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "commands.h"
#include "common/opts.h"
#include "common/rt.h"
#include "common/result_line.h"
#include "rtmem.h"
#include "rtmem/zsmalloc.h"
#include "common/spawn.h"
#include "zram/zram.h"

#define CMD "bench zram"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem bench zram [options]\n"
            "\n"
            "The TLSF/xvmalloc/zsmalloc study's comparison (docs/METHODS.md): the random-replace\n"
            "loop (SLOTS live objects; each timed iteration frees a random slot's object and\n"
            "stores a new one) over the study's windows [x, x+64), x = 0, STEP, ... <= MAX, and\n"
            "over \"the zram case\": sizes of compressed 4 KiB pages from a SYNTHETIC\n"
            "distribution (1..4096 bytes, mean %.0f). Per point and allocator: ns per\n"
            "free+alloc pair (min and median over interleaved rounds; a point with a refused\n"
            "allocation is marked and gets no time) and memory efficiency = bytes stored /\n"
            "bytes held (rtm heaps: 4 KiB pages holding live blocks; zsmalloc: pages_used;\n"
            "malloc peers: VmRSS growth, allocator metadata included).\n"
            "\n"
            "  --slots N          live objects (default 10000; --quick: %u)\n"
            "  --iterations N     timed replacements per point (default %u; --quick: %u)\n"
            "  --sweep-step BYTES distance between window starts, a multiple of %u\n"
            "                     (default %u, the study's; --quick: %u)\n"
            "  --sweep-max BYTES  largest window start (default %u)\n"
            "  --runs N           interleaved rounds (default 2)\n"
            "  --seed S           random seed (default: time and pid; printed)\n"
            "  --allocators LIST  tlsf, xvmalloc, zsmalloc, slab (any rtm heap name), glibc,\n"
            "                     mimalloc, jemalloc, tcmalloc; default:\n"
            "                       %s\n"
            "                       --quick: %s\n"
            "  --region BYTES     region of each rtm heap and zsmalloc pool (default slots x\n"
            "                     (largest x + 64) x 2, whole pages)\n"
            "  --clock tsc|monotonic  clock (default tsc when invariant, x86 only)\n"
            "  --cpu N            CPU the measuring children pin to (default: the last allowed)\n"
            "  --no-rt            children skip mlockall, SCHED_FIFO and pinning\n"
            "  --quick            short profile for CI\n"
            "  --json FILE        also write the results as JSON\n"
            "                     (docs/schema/bench_zram.schema.json)\n"
            "  --help             this text\n",
            zram_dist_mean(), ZRAM_QUICK_SLOTS, ZRAM_DEFAULT_ITERATIONS, ZRAM_QUICK_ITERATIONS,
            SWEEP_GRANULE, ZRAM_DEFAULT_STEP, ZRAM_QUICK_STEP, ZRAM_DEFAULT_MAX,
            ZRAM_DEFAULT_ALLOCATORS, ZRAM_QUICK_ALLOCATORS);
}

const char *zram_kind_name(enum zram_kind k)
{
    static const char *const names[] = {"rtm heap", "zsmalloc pool", "malloc peer"};
    return names[k];
}

/* --- allocators ----------------------------------------------------------- */

static const char *const own_kinds[] = {"zsmalloc", NULL};
const aut_rules zram_aut_rules = {AUT_ACCEPT(AUT_RTM) | AUT_ACCEPT_MALLOC | AUT_ACCEPT(AUT_OWN),
                                  own_kinds, ZRAM_DEFAULT_ALLOCATORS ", or any rtm heap name"};

enum zram_kind zram_kind_of(const aut *a)
{
    return a->kind == AUT_OWN ? ZK_ZSMALLOC : a->kind == AUT_RTM ? ZK_HEAP : ZK_MALLOC;
}

/* Splits --allocators into rows. Returns 0, or -1 (message printed). */
static int parse_allocators(zram_bench *s, const char *list)
{
    static aut auts[ZRAM_MAX_ALLOCATORS];
    char why[256];
    s->nrows = aut_parse_list(list, &zram_aut_rules, auts, ZRAM_MAX_ALLOCATORS, why, sizeof why);
    if (s->nrows == 0) {
        opts_error(CMD, "--allocators: %s", why);
        return -1;
    }
    for (size_t i = 0; i < s->nrows; i++) {
        zram_row *row = &s->rows[i];
        row->name = auts[i].name;
        row->peer = auts[i].peer;
        row->aut = &auts[i];
        row->kind = zram_kind_of(&auts[i]);
    }
    return 0;
}

/* --- children ------------------------------------------------------------- */

static void parse_point(const char *line, zram_run *run, size_t npts)
{
    char idx[32];
    if (line_field(line, "i", idx, sizeof idx) != 0)
        return;
    char *end;
    unsigned long long i = strtoull(idx, &end, 10);
    if (*end != '\0' || i >= npts)
        return;
    zram_point *pt = &run->pts[i];
    pt->done = 1;
    pt->ok = line_field_u64(line, "ok") != 0;
    pt->ns_per_pair = line_field_num(line, "ns_per_pair");
    pt->refused = line_field_u64(line, "refused");
    pt->stored = line_field_u64(line, "stored");
    pt->held = line_field_u64(line, "held");
    line_field(line, "why", pt->why, sizeof pt->why);
}

static void parse_child(const char *text, zram_run *run, size_t npts)
{
    static char line[4096];
    for (const char *p = text; *p != '\0';) {
        size_t len = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)(len < sizeof line ? len : sizeof line - 1), p);
        p += len + (p[len] == '\n');
        if (strncmp(line, "ZRAM\t", 5) == 0) {
            run->ran = 1;
            run->valid = line_field_u64(line, "valid") != 0;
            line_field(line, "why", run->why, sizeof run->why);
            line_field(line, "from", run->from, sizeof run->from);
            line_field(line, "version", run->version, sizeof run->version);
            line_field(line, "rt", run->rt, sizeof run->rt);
        } else if (strncmp(line, "POINT\t", 6) == 0 && run->ran) {
            parse_point(line, run, npts);
        } else if (strncmp(line, "END\t", 4) == 0 && run->ran) {
            run->ended = line_field_u64(line, "points") == npts;
        }
    }
}

static void child_args(random_args *a, const zram_bench *s, const zram_row *row, uint64_t seed)
{
    const zram_opts *o = s->o;
    a->n = a->k = 0;
    a->argv[a->n++] = "rtmem";
    a->argv[a->n++] = "bench";
    a->argv[a->n++] = "zram";
    random_args_add(a, "--slots", "%llu", (unsigned long long)o->slots);
    random_args_add(a, "--seed", "%llu", (unsigned long long)seed);
    random_args_add(a, "--region", "%llu", (unsigned long long)o->region);
    random_args_add(a, "--iterations", "%llu", (unsigned long long)o->iterations);
    random_args_add(a, "--sweep-step", "%llu", (unsigned long long)o->sweep_step);
    random_args_add(a, "--sweep-max", "%llu", (unsigned long long)o->sweep_max);
    random_args_add(a, "--child-tick-ns", "%.17g", s->tick_ns);
    random_args_add(a, "--child-cost", "%llu", (unsigned long long)o->child_cost);
    random_args_add(a, "--child-tsc", "%llu", (unsigned long long)o->child_tsc);
    random_args_add(a, "--cpu", "%lld", (long long)o->cpu);
    if (o->no_rt)
        random_args_flag(a, "--no-rt");
    random_args_add(a, "--child", "%s", row->name);
    if (row->lib[0] != '\0')
        random_args_add(a, "--child-lib", "%s", row->lib);
}

static size_t points_done(const zram_run *run, size_t npts)
{
    size_t k = 0;
    for (size_t i = 0; i < npts; i++)
        k += run->pts[i].done != 0;
    return k;
}

/* One child: every point, or (point != ZRAM_ALL_POINTS) that one. Its
 * lines go into run; returns what lab_spawn said. */
static void spawn_one(zram_bench *s, zram_row *row, uint64_t round, uint64_t point, char *out,
                      size_t out_n, spawn_result *sp)
{
    static random_args a;
    child_args(&a, s, row, s->o->seed + round);
    if (point != ZRAM_ALL_POINTS)
        random_args_add(&a, "--child-point", "%llu", (unsigned long long)point);
    lab_spawn(a.argv, row->lib, out, out_n, sp);
    parse_child(out, &row->runs[round], s->npts);
}

static void run_child(zram_bench *s, zram_row *row, uint64_t round, char *out, size_t out_n)
{
    zram_run *run = &row->runs[round];
    spawn_result sp;
    memset(&sp, 0, sizeof sp);
    uint64_t t0 = mono_ns();
    if (row->kind != ZK_MALLOC) {
        spawn_one(s, row, round, ZRAM_ALL_POINTS, out, out_n, &sp);
    } else { /* a process per point (zram.h); the first failure stops the row */
        for (size_t i = 0; i < s->npts && (i == 0 || (run->pts[i - 1].done && !sp.signal)); i++)
            spawn_one(s, row, round, i, out, out_n, &sp);
        run->ended = points_done(run, s->npts) == s->npts;
    }
    run->seconds = (double)(mono_ns() - t0) * 1e-9;
    if (!run->ended) {
        size_t len = strlen(run->why);
        snprintf(run->why + len, sizeof run->why - len, "%sstopped after %zu of %zu points: %s",
                 len ? "; " : "", points_done(run, s->npts), s->npts,
                 sp.why[0] ? sp.why : "no END line");
    }
}

static void run_rounds(zram_bench *s)
{
    size_t out_n = s->npts * 512u + 8192u;
    char *out = malloc(out_n);
    if (out == NULL)
        return;
    for (uint64_t round = 0; round < s->o->runs; round++) {
        fprintf(stderr, "zram: round %llu/%llu:", (unsigned long long)round + 1,
                (unsigned long long)s->o->runs);
        for (size_t i = 0; i < s->nrows; i++) {
            zram_row *row = &s->rows[i];
            if (row->missing)
                continue;
            run_child(s, row, round, out, out_n);
            const zram_run *run = &row->runs[round];
            /* The heaps' children's setup; the peers' differs only in
             * locking no memory (zram_child.c), as the note says. */
            if (run->rt[0] != '\0' && s->rt_note[0] == '\0' && row->kind != ZK_MALLOC)
                snprintf(s->rt_note, sizeof s->rt_note,
                         "in each measuring child: %s (malloc peers: the same without mlockall, "
                         "their RSS being measured)",
                         run->rt);
            fprintf(stderr, " %s %.1fs%s", row->name, run->seconds,
                    run->ended && run->valid ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
    free(out);
}

static int alloc_rows(zram_bench *s)
{
    for (size_t i = 0; i < s->nrows; i++) {
        zram_row *row = &s->rows[i];
        row->missing = aut_locate(row->aut, row->lib, sizeof row->lib) != LAB_OK;
        row->runs = calloc((size_t)s->o->runs, sizeof *row->runs);
        row->cells = calloc(s->npts, sizeof *row->cells);
        if (row->runs == NULL || row->cells == NULL)
            return -1;
        for (uint64_t r = 0; r < s->o->runs; r++)
            if ((row->runs[r].pts = calloc(s->npts, sizeof *row->runs[r].pts)) == NULL)
                return -1;
    }
    return 0;
}

static void free_rows(zram_bench *s)
{
    for (size_t i = 0; i < s->nrows; i++) {
        for (uint64_t r = 0; s->rows[i].runs != NULL && r < s->o->runs; r++)
            free(s->rows[i].runs[r].pts);
        free(s->rows[i].runs);
        free(s->rows[i].cells);
    }
}

static void prepare(zram_bench *s)
{
    machine_describe(&s->m);
    bench_clock clk;
    clock_calibrate(&clk, strcmp(s->o->clock, "tsc") == 0);
    clock_describe(&clk, s->clock_text, sizeof s->clock_text);
    s->tick_ns = clk.ns_per_tick;
    s->cost_ns = (double)clk.cost_ticks * clk.ns_per_tick;
    s->o->child_cost = clk.cost_ticks;
    s->o->child_tsc = (uint64_t)clk.use_tsc;
    const char *pre = getenv("LD_PRELOAD");
    if (pre != NULL && pre[0] != '\0')
        snprintf(s->env_note, sizeof s->env_note,
                 "note: LD_PRELOAD=%.180s was set; it is removed for the child runs", pre);
}

static int run_parent(zram_bench *s)
{
    prepare(s);
    int rc = 0;
    if (alloc_rows(s) != 0) {
        fprintf(stderr, "rtmem " CMD ": out of memory\n");
        free_rows(s);
        return 1;
    }
    fprintf(stderr, "zram: %zu windows + the zram case x %zu allocators x %llu rounds\n", s->nwin,
            s->nrows, (unsigned long long)s->o->runs);
    uint64_t t0 = mono_ns();
    run_rounds(s);
    s->seconds = (double)(mono_ns() - t0) * 1e-9;
    if (s->rt_note[0] == '\0')
        snprintf(s->rt_note, sizeof s->rt_note, "no measuring child reported its setup");
    zram_summarise(s);
    zram_print(s);
    if (s->o->json != NULL && zram_write_json(s, s->o->json) != 0) {
        fprintf(stderr, "rtmem " CMD ": cannot write %s: %s\n", s->o->json, strerror(errno));
        rc = 1;
    }
    /* Our heaps' trouble fails the method; refusals are a result. */
    for (size_t i = 0; i < s->nrows; i++)
        if (s->rows[i].kind != ZK_MALLOC && s->rows[i].status != LAB_OK &&
            s->rows[i].status != LAB_REFUSED)
            rc = 1;
    free_rows(s);
    return rc;
}

/* --- options -------------------------------------------------------------- */

static void apply_profile(zram_opts *o, const opt_spec *specs, size_t ns)
{
    if (o->quick && !opts_given(specs, ns, "slots"))
        o->slots = ZRAM_QUICK_SLOTS;
    if (o->quick && !opts_given(specs, ns, "iterations"))
        o->iterations = ZRAM_QUICK_ITERATIONS;
    if (o->quick && !opts_given(specs, ns, "sweep-step"))
        o->sweep_step = ZRAM_QUICK_STEP;
    if (o->quick && !opts_given(specs, ns, "allocators"))
        o->allocators = ZRAM_QUICK_ALLOCATORS;
    if (!opts_given(specs, ns, "seed"))
        o->seed = (uint64_t)time(NULL) * UINT64_C(1000003) ^ (uint64_t)getpid();
}

/* The region for these options: --region, else slots x (largest window's
 * end) x 2 in whole pages, and never below zsmalloc's minimum. */
static uint64_t region_bytes(const zram_opts *o, const opt_spec *specs, size_t ns)
{
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), hi = o->sweep_max + SWEEP_WIDTH;
    uint64_t bytes = opts_given(specs, ns, "region") ? o->region : o->slots * hi * 2u;
    if (bytes < rtm_zs_min_region())
        bytes = rtm_zs_min_region();
    return (bytes + page - 1u) / page * page;
}

static int validate(const zram_opts *o)
{
    char why[160];
    if (o->slots == 0 || o->slots > UINT32_MAX)
        snprintf(why, sizeof why, "--slots must be in [1, %u]", UINT32_MAX);
    else if (o->runs == 0 || o->runs > ZRAM_MAX_RUNS)
        snprintf(why, sizeof why, "--runs must be in [1, %u]", ZRAM_MAX_RUNS);
    else if (strcmp(o->clock, "tsc") != 0 && strcmp(o->clock, "monotonic") != 0)
        snprintf(why, sizeof why, "--clock must be tsc or monotonic");
    else if (!rt_cpu_usable(o->cpu))
        snprintf(why, sizeof why, "--cpu %lld is not a CPU this process may use",
                 (long long)o->cpu);
    else if (sweep_check(o->sweep_step, o->sweep_max, o->iterations, o->slots, why, sizeof why) ==
             0)
        return 0;
    /* sweep_check names --sweep-iterations; this command calls it --iterations. */
    char *at = strstr(why, "--sweep-iterations");
    if (at != NULL)
        memmove(at + 2, at + 8, strlen(at + 8) + 1u);
    opts_error(CMD, "%s", why);
    return -1;
}

int zram_main(int argc, char **argv)
{
    static zram_opts o;
    static zram_bench s;
    memset(&s, 0, sizeof s);
    o = (zram_opts){.slots = 10000,
                    .runs = 2,
                    .iterations = ZRAM_DEFAULT_ITERATIONS,
                    .sweep_step = ZRAM_DEFAULT_STEP,
                    .sweep_max = ZRAM_DEFAULT_MAX,
                    .allocators = ZRAM_DEFAULT_ALLOCATORS,
                    .clock = "tsc",
                    .cpu = -1,
                    .child_tick_ns = 1.0,
                    .child_point = ZRAM_ALL_POINTS};
    opt_spec specs[] = {
        {"slots", OPT_U64, &o.slots, 0},
        {"iterations", OPT_U64, &o.iterations, 0},
        {"sweep-step", OPT_SIZE, &o.sweep_step, 0},
        {"sweep-max", OPT_SIZE, &o.sweep_max, 0},
        {"runs", OPT_U64, &o.runs, 0},
        {"seed", OPT_U64, &o.seed, 0},
        {"json", OPT_STR, &o.json, 0},
        {"allocators", OPT_STR, &o.allocators, 0},
        {"region", OPT_SIZE, &o.region, 0},
        {"clock", OPT_STR, &o.clock, 0},
        {"cpu", OPT_I64, &o.cpu, 0},
        {"no-rt", OPT_FLAG, &o.no_rt, 0},
        {"quick", OPT_FLAG, &o.quick, 0},
        /* Internal: the parent's options for a child run. */
        {"child", OPT_STR, &o.child, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-tick-ns", OPT_DBL, &o.child_tick_ns, 0},
        {"child-cost", OPT_U64, &o.child_cost, 0},
        {"child-tsc", OPT_U64, &o.child_tsc, 0},
        {"child-point", OPT_U64, &o.child_point, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int rc = opts_parse_or_exit(argc, argv, specs, ns, usage);
    if (rc != OPTS_GO_ON)
        return rc;
    apply_profile(&o, specs, ns);
    s.o = &o;
    if (validate(&o) != 0 || (o.child == NULL && parse_allocators(&s, o.allocators) != 0)) {
        return opts_usage_error(CMD);
    }
    o.region = region_bytes(&o, specs, ns);
    if (o.child != NULL)
        return zram_child(&o);
    s.nwin = sweep_window_count(o.sweep_step, o.sweep_max);
    s.npts = s.nwin + 1u;
    return run_parent(&s);
}
