// SPDX-License-Identifier: MIT
/*
 * replay.c -- `rtmem replay FILE`: options, the rows, and the schedule.
 *
 * rtm heaps are replayed in this process, one fresh region each (the heaps
 * keep all state in their region, so nothing carries over from one to the
 * next). Every malloc row (glibc, mimalloc, jemalloc, tcmalloc, rtmem's
 * drop-in) is a child process of this executable with the peer's library in
 * LD_PRELOAD, as every lab command measures mallocs (spawn.h, peers.h): the
 * child proves which malloc it got and replays on it (replay_child.c). All
 * rows share one calibrated clock, handed to the children.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/opts.h"
#include "trace/replay_cmd.h"
#include "common/result_line.h"
#include "rtmem.h"
#include "common/spawn.h"
#include "trace/trace_cli.h"

#define CMD           "replay"
#define PEERS         "glibc,mimalloc,jemalloc,tcmalloc"
#define QUICK_LIMIT   200000u
#define MIN_REGION    (UINT64_C(64) << 20)
#define MAX_REGION    (UINT64_C(16) << 30)
#define CHILD_OUT_MAX 65536

const double rp_quantiles[RP_NQ] = {0.50, 0.90, 0.99, 0.999, 0.9999, 1.0};
const char *const rp_quantile_names[RP_NQ] = {"p50", "p90", "p99", "p999", "p9999", "max"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem replay FILE [options]\n"
            "\n"
            "Replays a recorded trace (docs/TRACE.md) call by call on every rtm heap, on\n"
            "glibc and on the malloc peers, and reports per allocator: calls refused\n"
            "(counted, never timed; the replay goes on without the block), time per call\n"
            "(p50 .. p99.99, max: every call timed with the calibrated clock, its cost\n"
            "subtracted), the footprint (rtm heaps: the region's high-water mark, the\n"
            "highest block end; mallocs: growth of the resident set, VmHWM) and live vs\n"
            "held bytes over the run (the fragmentation chart).\n"
            "A multi-threaded trace is replayed serialised in call order (docs/TRACE.md).\n"
            "rtm heaps run here on a pre-faulted region; each malloc in a child process\n"
            "under LD_PRELOAD (a peer that is not installed is reported as such).\n"
            "\n"
            "  --allocators LIST  comma-separated: rtm heap names (tlsf, pool, buddy, ...)\n"
            "                     and glibc, mimalloc, jemalloc, tcmalloc, rtmem (default:\n"
            "                     every rtm algorithm, then " PEERS ")\n"
            "  --region BYTES     region of each rtm heap (k/m/g suffixes; default: 4 x the\n"
            "                     trace's peak live bytes, at least 64m)\n"
            "  --limit N          replay the first N calls only\n"
            "  --quick            short profile: the first %u calls, rtm heaps and glibc\n"
            "  --json FILE        also write the results as JSON (docs/RESULTS.md)\n"
            "  --wcet             also count every call's x86-64 instructions exactly, on\n"
            "                     the rtm heaps and glibc (malloc, free): the replay again\n"
            "                     in a child single-stepped by rtmem-wcet's tracer; per kind\n"
            "                     of call the worst count (and which call), p99 and mean\n"
            "  --wcet-ops N       count the first N calls only (default: all). Cost: about\n"
            "                     40 us of CPU per counted instruction (100+ us wall on a\n"
            "                     loaded machine): ~5-10 ms per call, per allocator\n"
            "  --help             this text\n",
            QUICK_LIMIT);
}

/* --- rows ------------------------------------------------------------------- */

static const char *default_allocators(int quick)
{
    static char buf[512];
    size_t n = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s,", *a);
    snprintf(buf + n, sizeof buf - n, "%s", quick ? "glibc" : PEERS);
    return buf;
}

static const aut_rules rules = {AUT_ACCEPT(AUT_RTM) | AUT_ACCEPT_MALLOC, NULL,
                                "rtm heap names, glibc, mimalloc, jemalloc, tcmalloc, rtmem"};

static int parse_allocators(replay_bench *b, const char *list)
{
    aut auts[RP_MAX_ROWS];
    char why[256];
    b->nrows = aut_parse_list(list, &rules, auts, RP_MAX_ROWS, why, sizeof why);
    if (b->nrows == 0) {
        opts_error(CMD, "--allocators: %s", why);
        return -1;
    }
    for (size_t i = 0; i < b->nrows; i++) {
        rp_row *r = &b->rows[i];
        memset(r, 0, sizeof *r);
        _Static_assert(sizeof r->name >= AUT_NAME_MAX, "row names hold every name");
        memcpy(r->name, auts[i].name, sizeof auts[i].name);
        r->is_rtm = auts[i].kind == AUT_RTM;
        r->peer = auts[i].peer;
        r->aut = auts[i];
        r->status = "error";
    }
    return 0;
}

/* --- running ---------------------------------------------------------------- */

void replay_fill_row(rp_row *row, const replay_result *r, const bench_clock *clk)
{
    row->ops = r->ops;
    row->refused = r->refused;
    row->skipped = r->skipped;
    row->timed = r->all.count;
    for (unsigned k = 0; k < RP_NQ; k++)
        row->q_ns[k] = (double)hist_quantile(&r->all, rp_quantiles[k]) * clk->ns_per_tick;
    row->alloc_max_ns = (double)r->alloc.max * clk->ns_per_tick;
    row->free_max_ns = (double)r->release.max * clk->ns_per_tick;
    row->alloc_p99_ns = (double)hist_quantile(&r->alloc, 0.99) * clk->ns_per_tick;
    row->free_p99_ns = (double)hist_quantile(&r->release, 0.99) * clk->ns_per_tick;
    row->nsamples = r->nsamples;
    memcpy(row->sample, r->sample, r->nsamples * sizeof r->sample[0]);
}

static void run_rtm(replay_bench *b, rp_row *row)
{
    static replay_result res;
    replay_rtm h;
    row->region = b->o->region;
    if (rtm_min_region(row->name) > row->region) {
        snprintf(row->why, sizeof row->why, "region %llu below the heap's minimum %zu",
                 (unsigned long long)row->region, rtm_min_region(row->name));
        return;
    }
    if (replay_rtm_open(&h, row->name, row->region, 1, row->why, sizeof row->why) != 0)
        return;
    replay_target tg = replay_rtm_target(&h, 1);
    if (replay_run(&b->t, &tg, &b->clk, 0, &res) != 0) {
        snprintf(row->why, sizeof row->why, "out of memory");
    } else {
        replay_fill_row(row, &res, &b->clk);
        row->footprint = h.hwm;
        row->status = "ok";
        snprintf(row->from, sizeof row->from, "rtm_heap_create(\"%s\")", row->name);
    }
    replay_rtm_close(&h);
}

static void run_child(replay_bench *b, rp_row *row)
{
    static char out[CHILD_OUT_MAX];
    char tick[40], cost[24], tsc[8], limit[24];
    snprintf(tick, sizeof tick, "%.17g", b->clk.ns_per_tick);
    snprintf(cost, sizeof cost, "%llu", (unsigned long long)b->clk.cost_ticks);
    snprintf(tsc, sizeof tsc, "%d", b->clk.use_tsc);
    snprintf(limit, sizeof limit, "%llu", (unsigned long long)b->o->limit);
    char *argv[20] = {"rtmem",
                      "replay",
                      (char *)b->o->file,
                      "--child",
                      row->name,
                      "--child-tick-ns",
                      tick,
                      "--child-cost",
                      cost,
                      "--child-tsc",
                      tsc,
                      "--limit",
                      limit,
                      NULL};
    if (row->lib[0] != '\0') {
        argv[13] = "--child-lib";
        argv[14] = row->lib;
        argv[15] = NULL;
    }
    spawn_result sp;
    lab_spawn(argv, row->lib, out, sizeof out, &sp);
    if (!sp.ran) {
        snprintf(row->why, sizeof row->why, "%s", sp.why);
        return;
    }
    if (replay_parse_child(out, row) != 0 || sp.exit_status != 0 || sp.signal != 0) {
        row->status = strcmp(row->status, "invalid") == 0 ? "invalid" : "error";
        if (row->why[0] == '\0')
            snprintf(row->why, sizeof row->why, "%s",
                     sp.signal ? sp.why : "child failed without a result line");
    }
}

static void run_row(replay_bench *b, rp_row *row, size_t i)
{
    fprintf(stderr, "rtmem replay: [%zu/%zu] %s\n", i + 1, b->nrows, row->name);
    if (row->is_rtm) {
        run_rtm(b, row);
        return;
    }
    lab_status found = aut_locate(&row->aut, row->lib, sizeof row->lib);
    if (found != LAB_OK) {
        row->status = "not installed";
        snprintf(row->why, sizeof row->why, "%s",
                 found == LAB_NOT_BUILT ? "not built" : "library not found");
        return;
    }
    run_child(b, row);
}

/* --wcet: the counter replays the trace again on every rtm row and glibc. */
static void run_wcet(replay_bench *b)
{
    const char *names[RP_MAX_ROWS];
    rw_counts counts[RP_MAX_ROWS];
    size_t idx[RP_MAX_ROWS], n = 0;
    uint64_t limit = b->o->wcet_ops < b->t.n ? b->o->wcet_ops : b->t.n;
    b->wcet_calls = limit;
    for (size_t i = 0; i < b->nrows; i++) {
        rp_row *r = &b->rows[i];
        int glibc = !r->is_rtm && strcmp(r->name, "glibc") == 0;
        if (!r->is_rtm && !glibc) {
            snprintf(r->wcet.why, sizeof r->wcet.why,
                     "not counted: a malloc peer is a shared library under LD_PRELOAD; the "
                     "counter is a static executable with glibc's malloc inside");
            continue;
        }
        if (strcmp(r->status, "ok") != 0) {
            snprintf(r->wcet.why, sizeof r->wcet.why, "not counted: the replay did not run");
            continue;
        }
        names[n] = r->name;
        idx[n++] = i;
    }
    if (n == 0)
        return;
    fprintf(stderr,
            "rtmem replay: --wcet: counting %llu calls on %zu allocator%s by "
            "single-stepping (slow)\n",
            (unsigned long long)limit, n, n == 1 ? "" : "s");
    rw_count(b->o->file, names, counts, n, b->o->region, limit);
    for (size_t i = 0; i < n; i++)
        b->rows[idx[i]].wcet = counts[i];
}

static uint64_t auto_region(uint64_t peak)
{
    uint64_t r = peak > MAX_REGION / 4 ? MAX_REGION : 4 * peak;
    r = (r + (UINT64_C(1) << 20) - 1) & ~((UINT64_C(1) << 20) - 1);
    return r < MIN_REGION ? MIN_REGION : r;
}

/* --- main --------------------------------------------------------------------- */

static int run(replay_opts *o)
{
    static replay_bench b;
    b.o = o;
    if (parse_allocators(&b,
                         o->allocators != NULL ? o->allocators : default_allocators(o->quick))) {
        return opts_usage_error(CMD);
    }
    if (trace_cli_load(CMD, o->file, &b.t) != 0)
        return 1;
    if (trace_cli_need_calls(CMD, o->file, &b.t, "nothing to replay") != 0) {
        trace_free(&b.t);
        return 1;
    }
    trace_truncate(&b.t, (size_t)o->limit);
    if (trace_stats_compute(&b.t, &b.st) != 0) {
        opts_error(CMD, "out of memory");
        return 1;
    }
    if (o->region == 0)
        o->region = auto_region(b.st.peak_live_bytes);
    machine_describe(&b.m);
    clock_calibrate(&b.clk, 1);
    clock_describe(&b.clk, b.clock_text, sizeof b.clock_text);
    for (size_t i = 0; i < b.nrows; i++)
        run_row(&b, &b.rows[i], i);
    if (o->wcet)
        run_wcet(&b);
    replay_print(&b);
    int rc = o->json != NULL && replay_write_json(&b, o->json) != 0;
    if (rc)
        opts_error(CMD, "cannot write %s", o->json);
    trace_stats_free(&b.st);
    trace_free(&b.t);
    return rc;
}

/* --wcet is refused (exit 2) when the counter is not there or when no
 * allocator given can be counted (malloc peers only). */
static int wcet_misuse(const replay_opts *o)
{
    char why[512];
    if (!rw_available(why, sizeof why)) {
        opts_error(CMD, "--wcet: %s", why);
        return -1;
    }
    if (o->allocators == NULL)
        return 0;
    aut auts[RP_MAX_ROWS];
    size_t n = aut_parse_list(o->allocators, &rules, auts, RP_MAX_ROWS, why, sizeof why);
    if (n == 0)
        return 0; /* the list's own error comes with the rows */
    for (size_t i = 0; i < n; i++)
        if (auts[i].kind == AUT_RTM || auts[i].kind == AUT_LIBC)
            return 0;
    opts_error(CMD,
               "--wcet counts rtm heaps and glibc only; --allocators '%s' has neither "
               "(malloc peers run under LD_PRELOAD, which the counter cannot trace)",
               o->allocators);
    return -1;
}

int replay_main(int argc, char **argv)
{
    replay_opts o;
    memset(&o, 0, sizeof o);
    o.limit = UINT64_MAX;
    o.wcet_ops = UINT64_MAX;
    o.file = trace_cli_take_file(&argc, argv);
    opt_spec specs[] = {
        {"allocators", OPT_STR, &o.allocators, 0},
        {"region", OPT_SIZE, &o.region, 0},
        {"json", OPT_STR, &o.json, 0},
        {"quick", OPT_FLAG, &o.quick, 0},
        {"limit", OPT_U64, &o.limit, 0},
        {"wcet", OPT_FLAG, &o.wcet, 0},
        {"wcet-ops", OPT_U64, &o.wcet_ops, 0},
        {"child", OPT_STR, &o.child, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-tick-ns", OPT_DBL, &o.child_tick_ns, 0},
        {"child-cost", OPT_U64, &o.child_cost, 0},
        {"child-tsc", OPT_U64, &o.child_tsc, 0},
    };
    int rc = opts_parse(argc, argv, specs, sizeof specs / sizeof specs[0]);
    if (rc == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    if (rc == OPTS_OK && o.file == NULL) {
        opts_error(CMD, "no trace FILE given");
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && specs[1].set && (o.region < 4096 || o.region > MAX_REGION)) {
        opts_error(CMD, "--region must be in [4096, %llu] bytes", (unsigned long long)MAX_REGION);
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && o.limit == 0) {
        opts_error(CMD, "--limit must be at least 1");
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && specs[6].set && (!o.wcet || o.wcet_ops == 0)) {
        opts_error(CMD, "--wcet-ops N needs --wcet and N >= 1");
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && o.wcet && o.child == NULL && wcet_misuse(&o) != 0)
        rc = OPTS_BAD;
    if (rc != OPTS_OK) {
        return opts_usage_error(CMD);
    }
    if (o.quick && !specs[4].set)
        o.limit = QUICK_LIMIT;
    if (o.child != NULL)
        return replay_child(&o);
    return run(&o);
}
