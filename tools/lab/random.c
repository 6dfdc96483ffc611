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
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "opts.h"
#include "random.h"
#include "spawn.h"
#include "rtmem.h"

#define DEFAULT_ALLOCATORS "tlsf,glibc,mimalloc,jemalloc,tcmalloc"
#define MAX_ALLOCATORS     8
#define CHILD_OUT_MAX      65536

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem bench random [options]\n"
            "\n"
            "Seed 003's random-replace loop: fill SLOTS blocks, then each iteration frees a\n"
            "random slot's block and allocates a random size in [MIN, MAX) into it. TLSF runs\n"
            "in an rtm heap over a pre-faulted region; peers run in child processes with\n"
            "LD_PRELOAD (verified in the child). Rounds are interleaved across allocators.\n"
            "\n"
            "  --slots N          live blocks (default 10000)\n"
            "  --iterations N     replacements per pass (default 2000000; --quick: 100000)\n"
            "  --min BYTES        smallest request (default 16)\n"
            "  --max BYTES        requests are < MAX (default 4096)\n"
            "  --runs N           interleaved rounds (default 5; --quick: 2)\n"
            "  --seed S           random seed (default: time and pid; printed)\n"
            "  --allocators LIST  comma-separated subset of %s,\n"
            "                     or any rtm heap name (pool:4096, buddy, halffit, slab, heapmem)\n"
            "  --clock tsc|monotonic  per-op clock (default tsc when invariant, x86 only)\n"
            "  --tlsf-region BYTES  region of each rtm heap (default slots x max x 2); a smaller "
            "one shows\n"
            "                     refused allocations being counted, not timed as fast\n"
            "  --quick            short profile for CI\n"
            "  --json FILE        also write the results as JSON (tools/bench/README.md)\n"
            "  --help             this text\n"
            "\n"
            "Peer libraries are searched in the usual library directories; set\n"
            "RTMEM_BENCH_LIB_MIMALLOC (..._JEMALLOC, ..._TCMALLOC) to a path to override.\n",
            DEFAULT_ALLOCATORS);
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

/* Range checks the parser cannot do. Returns 0 or -1 (message printed). */
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
    return 0;
}

/* Splits --allocators into rows. Returns the count, or 0 (message printed). */
static size_t parse_allocators(const char *list, alloc_row *rows)
{
    size_t n = 0;
    const char *p = list;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        char name[32];
        snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), p);
        const peer *pe = peer_find(name);
        /* Not a malloc peer: any heap rtm_heap_create() accepts ("pool:4096"). */
        if (pe == NULL && rtm_min_region(name) == 0) {
            opts_error("bench random", "unknown allocator '%s' (known: %s, or any rtm heap name)",
                       name, DEFAULT_ALLOCATORS);
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            if (strcmp(rows[i].name, name) == 0) {
                opts_error("bench random", "allocator '%s' given twice", name);
                return 0;
            }
        if (n == MAX_ALLOCATORS)
            return 0;
        static char heap_names[MAX_ALLOCATORS][32];
        snprintf(heap_names[n], sizeof heap_names[n], "%s", name);
        rows[n].name = pe != NULL ? pe->name : heap_names[n];
        rows[n].peer = pe;
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    if (n == 0)
        opts_error("bench random", "--allocators is empty");
    return n;
}

/* Room for every option the parent passes: 11 valued options (22 words),
 * "rtmem bench random" and the terminating NULL. */
typedef struct child_args {
    char buf[12][64];
    char *argv[32];
} child_args;

static void child_argv(const random_bench *b, const alloc_row *row, uint64_t seed, child_args *a)
{
    const random_opts *o = b->o;
    size_t n = 0, k = 0;
    a->argv[n++] = "rtmem";
    a->argv[n++] = "bench";
    a->argv[n++] = "random";
#define ARG(name, fmt, val)                                                                        \
    do {                                                                                           \
        a->argv[n++] = name;                                                                       \
        snprintf(a->buf[k], sizeof a->buf[k], fmt, val);                                           \
        a->argv[n++] = a->buf[k++];                                                                \
    } while (0)
    ARG("--slots", "%llu", (unsigned long long)o->slots);
    ARG("--iterations", "%llu", (unsigned long long)o->iterations);
    ARG("--min", "%llu", (unsigned long long)o->min);
    ARG("--max", "%llu", (unsigned long long)o->max);
    ARG("--seed", "%llu", (unsigned long long)seed);
    ARG("--tlsf-region", "%llu", (unsigned long long)b->region);
    ARG("--child-tick-ns", "%.17g", b->tick_ns);
    ARG("--child-cost", "%llu", (unsigned long long)o->child_cost);
    ARG("--child-tsc", "%llu", (unsigned long long)o->child_tsc);
#undef ARG
    a->argv[n++] = "--child";
    a->argv[n++] = (char *)row->name;
    if (row->lib[0] != '\0') {
        a->argv[n++] = "--child-lib";
        a->argv[n++] = (char *)row->lib;
    }
    a->argv[n] = NULL;
    _Static_assert(sizeof a->argv / sizeof a->argv[0] >= 3 + 2 * 11 + 1, "child argv too small");
}

/* Spawns one child run and fills r. Never fails: errors go into r. */
static void run_child(const random_bench *b, const alloc_row *row, uint64_t seed, random_result *r)
{
    static child_args a;
    static char out[CHILD_OUT_MAX];
    child_argv(b, row, seed, &a);
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

static void locate_libraries(alloc_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        rows[i].lib[0] = '\0';
        if (rows[i].peer != NULL && rows[i].peer->marker != NULL)
            rows[i].missing = peer_locate(rows[i].peer, rows[i].lib, sizeof rows[i].lib) != 0;
        if (rows[i].missing)
            rows[i].lib[0] = '\0';
    }
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
            fprintf(stderr, " %s %.1f%s", row->name, r->ns_per_pair, random_clean(r) ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
}

static void environment_note(random_bench *b)
{
    const char *pre = getenv("LD_PRELOAD");
    b->env_note[0] = '\0';
    if (pre != NULL && pre[0] != '\0')
        snprintf(b->env_note, sizeof b->env_note,
                 "note: LD_PRELOAD=%s was set; it is removed for the child runs", pre);
}

static int run_parent(random_opts *o, alloc_row *rows, size_t nrows)
{
    random_bench b;
    memset(&b, 0, sizeof b);
    b.o = o;
    b.rows = rows;
    b.nrows = nrows;
    bench_clock clk;
    clock_calibrate(&clk, strcmp(o->clock, "tsc") == 0);
    clock_describe(&clk, b.clock_text, sizeof b.clock_text);
    b.tick_ns = clk.ns_per_tick;
    b.cost_ns = (double)clk.cost_ticks * clk.ns_per_tick;
    o->child_cost = clk.cost_ticks;
    o->child_tsc = (uint64_t)clk.use_tsc;
    b.region = random_region_bytes(o);
    environment_note(&b);
    locate_libraries(rows, b.nrows);
    for (size_t i = 0; i < b.nrows; i++) {
        rows[i].runs = calloc((size_t)o->runs, sizeof *rows[i].runs);
        if (rows[i].runs == NULL)
            return 1;
    }
    run_rounds(&b);
    random_summarise(&b);
    random_print(&b);
    int rc = 0;
    if (o->json != NULL && random_write_json(&b, o->json) != 0) {
        fprintf(stderr, "rtmem random: cannot write %s: %s\n", o->json, strerror(errno));
        rc = 1;
    }
    for (size_t i = 0; i < b.nrows; i++) {
        /* TLSF trouble is ours to fail on; a peer's is reported in its row. */
        if (rows[i].peer == NULL && rows[i].status != ROW_OK)
            rc = 1;
        free(rows[i].runs);
    }
    return rc;
}

int random_main(int argc, char **argv)
{
    random_opts o = {10000, 2000000, 16,   4096, 5,   0, 0, NULL, DEFAULT_ALLOCATORS,
                     "tsc", 0,       NULL, NULL, 1.0, 0, 0};
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
        {"quick", OPT_FLAG, &o.quick, 0},
        /* Internal: the parent's options for a child run. */
        {"child", OPT_STR, &o.child, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-tick-ns", OPT_DBL, &o.child_tick_ns, 0},
        {"child-cost", OPT_U64, &o.child_cost, 0},
        {"child-tsc", OPT_U64, &o.child_tsc, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int r = opts_parse(argc, argv, specs, ns);
    if (r == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    if (r == OPTS_BAD) {
        usage(stderr);
        return 2;
    }
    if (o.quick && !opts_given(specs, ns, "iterations"))
        o.iterations = 100000;
    if (o.quick && !opts_given(specs, ns, "runs"))
        o.runs = 2;
    if (!opts_given(specs, ns, "seed"))
        o.seed = default_seed();
    static alloc_row rows[MAX_ALLOCATORS];
    size_t nrows = 0;
    if (validate(&o) != 0 ||
        (o.child == NULL && (nrows = parse_allocators(o.allocators, rows)) == 0)) {
        usage(stderr);
        return 2;
    }
    if (o.child != NULL)
        return random_child(&o);
    return run_parent(&o, rows, nrows);
}
