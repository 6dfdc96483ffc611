// SPDX-License-Identifier: MIT
/*
 * fit.c -- `rtmem fit FILE`: for each rtm algorithm, the smallest region in
 * which the whole trace replays without one refusal, the worst call there,
 * and the region to configure with headroom.
 *
 * The search: the trace's peak of live requested bytes is a hard lower bound
 * (blocks are disjoint inside the region), and so is the heap's minimum
 * region. From there the region doubles until the trace fits (at most
 * FIT_DOUBLINGS times: a heap that refuses a request at any size, such as a
 * pool whose block is too small, never fits), then a bisection narrows the
 * gap between the largest refused and the smallest fitting size down to
 * max(4 KiB, 1/1024 of it), all sizes whole pages. Each probe is a fresh,
 * untimed, in-process replay that stops at the first refusal. Bisection
 * assumes that a larger region never refuses where a smaller one did; the
 * answer is always a size that was replayed and fitted, never interpolated.
 *
 * The worst call is then measured by FIT_RUNS timed replays on the found
 * region (pre-faulted), the smallest maximum of them reported, in ns. With
 * --wcet the worst call is also counted exactly, in x86-64 instructions:
 * one more replay on the found region, in a child single-stepped by
 * rtmem-wcet's tracer (wcet_bridge.c, tools/wcet/replay_trace.c); the
 * one-line answer then states instructions.
 *
 * Headroom: the found size is exact for this one run. The region a heap
 * needs grows with the live bytes it must hold (the ratio region/peak live
 * is printed), so a margin of H % (default 25) covers a run whose peak live
 * is H % above the recorded one, up to the change in fragmentation; the
 * recommendation is the found region plus H %, rounded up to 64 KiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "common/opts.h"
#include "trace/replay.h"
#include "rtmem.h"
#include "trace/trace_cli.h"

#define CMD           "fit"
#define PAGE          UINT64_C(4096)
#define FIT_DOUBLINGS 16
#define FIT_CAP       (UINT64_C(16) << 30)
#define FIT_SAME      3 /* the same first refusal on this many doublings: no fit */
#define FIT_RUNS      3 /* timed replays on the found region                     */
#define QUICK_LIMIT   200000u
#define MAX_ALGS      16

typedef struct fit_row {
    char algorithm[64];
    int fits;
    uint64_t region, recommended, refused_at_region, first_refusal, steps;
    double worst_alloc_ns, worst_free_ns, p99_ns;
    uint64_t footprint;
    char why[160];
    rw_counts wcet; /* --wcet */
} fit_row;

typedef struct fit_opts {
    const char *file, *algorithms, *json;
    uint64_t limit, headroom;
    int quick;
    int wcet;          /* --wcet: count instructions on the found region */
    uint64_t wcet_ops; /* --wcet-ops: calls counted (UINT64_MAX: all)   */
} fit_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem fit FILE [options]\n"
            "\n"
            "For each rtm algorithm, the smallest region in which the whole trace\n"
            "(docs/TRACE.md) replays with no refusal: from the trace's peak live bytes,\n"
            "doubling until it fits, then bisection to 4 KiB or 1/1024 (whole pages), each\n"
            "probe a fresh replay. Then timed replays on that region give the worst\n"
            "allocation and free in ns (the least of 3 maxima); with --wcet, in exact\n"
            "x86-64 instructions too (a replay single-stepped by rtmem-wcet). The recommendation\n"
            "adds --headroom percent (default 25), rounded up to 64 KiB: the region grows\n"
            "with the live bytes, so 25 %% covers a run with a 25 %% higher peak.\n"
            "\n"
            "  --algorithms LIST  comma-separated rtm heap names (default: every algorithm)\n"
            "  --headroom PCT     margin added to the found region (default 25)\n"
            "  --limit N          the first N calls only\n"
            "  --quick            the first %u calls\n"
            "  --json FILE        also write the results as JSON (docs/RESULTS.md)\n"
            "  --wcet             count the worst alloc and free in instructions on the\n"
            "                     found region (slow: single-stepping, see rtmem replay)\n"
            "  --wcet-ops N       count the first N calls only (default: all)\n"
            "  --help             this text\n",
            QUICK_LIMIT);
}

static uint64_t page_up(uint64_t v) { return (v + PAGE - 1) & ~(PAGE - 1); }

/* One untimed probe: 1 when the trace replays on region with no refusal. */
static int fits(const trace *t, const char *alg, uint64_t region, uint64_t *first_refusal)
{
    static replay_result r;
    replay_rtm h;
    char why[160];
    if (rtm_min_region(alg) > region || replay_rtm_open(&h, alg, region, 0, why, sizeof why))
        return 0;
    replay_target tg = replay_rtm_target(&h, 0);
    int ok = replay_run(t, &tg, NULL, 1, &r) == 0 && r.refused == 0;
    if (!ok)
        *first_refusal = r.first_refusal;
    replay_rtm_close(&h);
    return ok;
}

static void search(const trace *t, uint64_t peak, fit_row *row)
{
    const char *alg = row->algorithm;
    uint64_t lo = 0, hi = page_up(peak > rtm_min_region(alg) ? peak : rtm_min_region(alg));
    uint64_t cap = peak > FIT_CAP / 64 ? FIT_CAP : 64 * peak;
    cap = cap < (UINT64_C(256) << 20) ? UINT64_C(256) << 20 : cap;
    uint64_t last_refusal = UINT64_MAX;
    unsigned same = 0;
    row->steps = 0;
    for (int doubling = 0;; doubling++) {
        row->steps++;
        if (fits(t, alg, hi, &row->first_refusal))
            break;
        /* A refusal that stays at one call while the region doubles is a
         * request the heap cannot serve at any size (a pool's block size). */
        same = row->first_refusal == last_refusal ? same + 1 : 1;
        last_refusal = row->first_refusal;
        if (same == FIT_SAME || doubling == FIT_DOUBLINGS || hi * 2 > cap) {
            row->refused_at_region = hi;
            const trace_op_rec *o = &t->ops[row->first_refusal];
            snprintf(row->why, sizeof row->why,
                     "refused even on %llu bytes: call %llu, %s of %llu bytes",
                     (unsigned long long)hi, (unsigned long long)row->first_refusal,
                     trace_op_name(o->op), (unsigned long long)o->size);
            return;
        }
        lo = hi;
        hi *= 2;
    }
    while (lo != 0 && hi - lo > (hi / 1024 > PAGE ? hi / 1024 : PAGE)) {
        uint64_t mid = page_up(lo + (hi - lo) / 2);
        if (mid >= hi)
            break;
        row->steps++;
        uint64_t fr;
        if (fits(t, alg, mid, &fr))
            hi = mid;
        else
            lo = mid;
    }
    row->fits = 1;
    row->region = hi;
    row->refused_at_region = lo;
}

static void measure(const trace *t, const bench_clock *clk, fit_row *row, uint64_t headroom)
{
    static replay_result r;
    replay_rtm h;
    uint64_t step = UINT64_C(64) << 10;
    uint64_t rec = row->region + row->region / 100 * headroom;
    row->recommended = (rec + step - 1) / step * step;

    /* The least disturbed of FIT_RUNS runs: on a shared machine a single
     * run's maximum is mostly the longest preemption it suffered. */
    for (int run = 0; run < FIT_RUNS; run++) {
        if (replay_rtm_open(&h, row->algorithm, row->region, 1, row->why, sizeof row->why) != 0)
            return;
        replay_target tg = replay_rtm_target(&h, 1);
        if (replay_run(t, &tg, clk, 0, &r) == 0) {
            double wa = (double)r.alloc.max * clk->ns_per_tick;
            double wf = (double)r.release.max * clk->ns_per_tick;
            double p99 = (double)hist_quantile(&r.all, 0.99) * clk->ns_per_tick;
            if (run == 0 || wa < row->worst_alloc_ns)
                row->worst_alloc_ns = wa;
            if (run == 0 || wf < row->worst_free_ns)
                row->worst_free_ns = wf;
            if (run == 0 || p99 < row->p99_ns)
                row->p99_ns = p99;
            row->footprint = h.hwm;
        }
        replay_rtm_close(&h);
    }
}

/* --wcet: counts the fitted region's calls; notes a refusal (none expected:
 * the region was found by replaying the same calls). */
static void count_row(const char *file, fit_row *r, uint64_t limit)
{
    const char *name = r->algorithm;
    rw_count(file, &name, &r->wcet, 1, r->region, limit);
    if (r->wcet.measured && r->wcet.refused != 0) {
        r->wcet.measured = 0;
        snprintf(r->wcet.why, sizeof r->wcet.why,
                 "the counted replay was refused %llu times on the found region",
                 (unsigned long long)r->wcet.refused);
    }
}

/* The worst count of allocating calls (alloc, aligned; realloc apart). */
static uint64_t worst_alloc(const rw_counts *w)
{
    uint64_t a = w->k[RW_ALLOC].max, b = w->k[RW_ALIGNED].max;
    return a > b ? a : b;
}

static void print_row(const fit_row *r, uint64_t peak, uint64_t headroom, int wcet, uint64_t calls)
{
    char a[32], b[32], c[32];
    if (!r->fits) {
        printf("%s: does not fit (%s)\n", r->algorithm, r->why);
        return;
    }
    if (wcet && r->wcet.measured) {
        const rw_counts *w = &r->wcet;
        char re[64] = "";
        if (w->k[RW_REALLOC].calls != 0)
            snprintf(re, sizeof re, ", worst realloc %llu instructions",
                     (unsigned long long)w->k[RW_REALLOC].max);
        char over[64];
        if (w->calls < calls)
            snprintf(over, sizeof over, "first %llu of %llu calls", (unsigned long long)w->calls,
                     (unsigned long long)calls);
        else
            snprintf(over, sizeof over, "all %llu calls", (unsigned long long)calls);
        char al[48] = "no alloc", fr[48] = "no free";
        if (w->k[RW_ALLOC].calls != 0 || w->k[RW_ALIGNED].calls != 0)
            snprintf(al, sizeof al, "worst alloc %llu instructions",
                     (unsigned long long)worst_alloc(w));
        if (w->k[RW_FREE].calls != 0)
            snprintf(fr, sizeof fr, "worst free %llu instructions",
                     (unsigned long long)w->k[RW_FREE].max);
        printf("%s: %s (peak live %s), %s, %s%s (exact, %s); with %llu%% headroom: %s\n",
               r->algorithm, trace_cli_bytes(r->region, a, sizeof a),
               trace_cli_bytes(peak, b, sizeof b), al, fr, re, over, (unsigned long long)headroom,
               trace_cli_bytes(r->recommended, c, sizeof c));
        printf("  timed: worst alloc %.0f ns, worst free %.0f ns\n", r->worst_alloc_ns,
               r->worst_free_ns);
        return;
    }
    if (wcet)
        printf("%s: instructions not counted: %s\n", r->algorithm, r->wcet.why);
    printf("%s: %s (peak live %s), worst alloc %.0f ns, worst free %.0f ns (timed, not "
           "instructions); with %llu%% headroom: %s\n",
           r->algorithm, trace_cli_bytes(r->region, a, sizeof a),
           trace_cli_bytes(peak, b, sizeof b), r->worst_alloc_ns, r->worst_free_ns,
           (unsigned long long)headroom, trace_cli_bytes(r->recommended, c, sizeof c));
}

static int write_json(const fit_opts *o, const trace *t, uint64_t peak, const fit_row *rows,
                      size_t n)
{
    json j;
    if (trace_cli_json_open(&j, "fit", o->json, "none: unprivileged, single-threaded replays") != 0)
        return -1;
    json_obj(&j, "params");
    json_str(&j, "file", o->file);
    json_u64(&j, "headroom_percent", o->headroom);
    json_u64(&j, "calls", t->n);
    json_u64(&j, "threads", t->nthreads);
    json_str(&j, "worst_unit", "ns");
    if (o->wcet)
        json_u64(&j, "wcet_calls", o->wcet_ops < t->n ? o->wcet_ops : t->n);
    else
        json_null(&j, "wcet_calls");
    json_obj_end(&j);
    json_u64(&j, "peak_live_bytes", peak);
    json_arr(&j, "fits");
    for (size_t i = 0; i < n; i++) {
        const fit_row *r = &rows[i];
        json_obj(&j, NULL);
        json_str(&j, "algorithm", r->algorithm);
        json_str(&j, "status", r->fits ? "ok" : "no fit");
        json_str(&j, "why", r->why[0] ? r->why : NULL);
        if (r->fits) {
            json_u64(&j, "region_bytes", r->region);
            json_u64(&j, "largest_refused_bytes", r->refused_at_region);
            json_u64(&j, "recommended_bytes", r->recommended);
            json_num(&j, "region_over_peak_live", peak ? (double)r->region / (double)peak : 0);
            json_num(&j, "worst_alloc_ns", r->worst_alloc_ns);
            json_num(&j, "worst_free_ns", r->worst_free_ns);
            json_num(&j, "p99_ns", r->p99_ns);
            json_u64(&j, "footprint_bytes", r->footprint);
        } else {
            json_null(&j, "region_bytes");
        }
        const rw_counts *w = &r->wcet;
        int m = r->fits && w->measured;
        if (m && (w->k[RW_ALLOC].calls != 0 || w->k[RW_ALIGNED].calls != 0))
            json_u64(&j, "wcet_alloc_instructions", worst_alloc(w));
        else
            json_null(&j, "wcet_alloc_instructions");
        if (m && w->k[RW_FREE].calls != 0)
            json_u64(&j, "wcet_free_instructions", w->k[RW_FREE].max);
        else
            json_null(&j, "wcet_free_instructions");
        if (m && w->k[RW_REALLOC].calls != 0)
            json_u64(&j, "wcet_realloc_instructions", w->k[RW_REALLOC].max);
        else
            json_null(&j, "wcet_realloc_instructions");
        if (m)
            json_num(&j, "wcet_seconds", w->seconds);
        else
            json_null(&j, "wcet_seconds");
        json_str(&j, "wcet_why",
                 m          ? NULL
                 : !o->wcet ? "not measured (no --wcet)"
                 : !r->fits ? "no region fits"
                            : w->why);
        json_u64(&j, "replays", r->steps);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    return json_close(&j);
}

static int add_alg(fit_row *rows, size_t *n, const char *name)
{
    if (rtm_min_region(name) == 0) {
        opts_error(CMD, "unknown algorithm '%s' (rtm heap names: tlsf, pool, buddy, ...)", name);
        return -1;
    }
    if (*n == MAX_ALGS || strlen(name) >= sizeof rows[0].algorithm) {
        opts_error(CMD, "at most %d algorithms", MAX_ALGS);
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].algorithm, name) == 0) {
            opts_error(CMD, "algorithm '%s' given twice", name);
            return -1;
        }
    memset(&rows[*n], 0, sizeof rows[0]);
    snprintf(rows[*n].algorithm, sizeof rows[0].algorithm, "%s", name);
    (*n)++;
    return 0;
}

static int parse_algs(const char *list, fit_row *rows, size_t *n)
{
    *n = 0;
    if (list == NULL) {
        for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
            if (add_alg(rows, n, *a) != 0)
                return -1;
        return 0;
    }
    for (const char *p = list;;) {
        size_t len = strcspn(p, ",");
        char name[80];
        snprintf(name, sizeof name, "%.*s", (int)(len < 79 ? len : 79), p);
        if (len == 0) {
            opts_error(CMD, "empty name in --algorithms '%s'", list);
            return -1;
        }
        if (add_alg(rows, n, name) != 0)
            return -1;
        p += len;
        if (*p == '\0')
            return 0;
        p++;
    }
}

int fit_main(int argc, char **argv)
{
    fit_opts o = {NULL, NULL, NULL, UINT64_MAX, 25, 0, 0, UINT64_MAX};
    o.file = trace_cli_take_file(&argc, argv);
    opt_spec specs[] = {
        {"algorithms", OPT_STR, &o.algorithms, 0}, {"json", OPT_STR, &o.json, 0},
        {"limit", OPT_U64, &o.limit, 0},           {"headroom", OPT_U64, &o.headroom, 0},
        {"quick", OPT_FLAG, &o.quick, 0},          {"wcet", OPT_FLAG, &o.wcet, 0},
        {"wcet-ops", OPT_U64, &o.wcet_ops, 0}};
    int rc = opts_parse(argc, argv, specs, sizeof specs / sizeof specs[0]);
    if (rc == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    static fit_row rows[MAX_ALGS];
    size_t n = 0;
    if (rc == OPTS_OK && o.file == NULL) {
        opts_error(CMD, "no trace FILE given");
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && (o.limit == 0 || o.headroom > 1000)) {
        opts_error(CMD, "--limit must be at least 1 and --headroom at most 1000");
        rc = OPTS_BAD;
    }
    if (rc == OPTS_OK && specs[6].set && (!o.wcet || o.wcet_ops == 0)) {
        opts_error(CMD, "--wcet-ops N needs --wcet and N >= 1");
        rc = OPTS_BAD;
    }
    char why[512];
    if (rc == OPTS_OK && o.wcet && !rw_available(why, sizeof why)) {
        opts_error(CMD, "--wcet: %s", why);
        rc = OPTS_BAD;
    }
    if (rc != OPTS_OK || parse_algs(o.algorithms, rows, &n) != 0) {
        return opts_usage_error(CMD);
    }
    if (o.quick && !specs[2].set)
        o.limit = QUICK_LIMIT;
    trace t;
    if (trace_cli_load(CMD, o.file, &t) != 0)
        return 1;
    if (trace_cli_need_calls(CMD, o.file, &t, "nothing to size a region for") != 0) {
        trace_free(&t);
        return 1;
    }
    trace_truncate(&t, (size_t)o.limit);
    trace_stats st;
    if (trace_stats_compute(&t, &st) != 0) {
        opts_error(CMD, "out of memory");
        trace_free(&t);
        return 1;
    }
    bench_clock clk;
    clock_calibrate(&clk, 1);
    char pk[32];
    printf("trace: %s, %zu calls, %u thread%s, peak live %s (%llu bytes)\n", o.file, t.n,
           t.nthreads, t.nthreads == 1 ? "" : "s",
           trace_cli_bytes(st.peak_live_bytes, pk, sizeof pk),
           (unsigned long long)st.peak_live_bytes);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "rtmem fit: [%zu/%zu] %s\n", i + 1, n, rows[i].algorithm);
        search(&t, st.peak_live_bytes, &rows[i]);
        if (rows[i].fits)
            measure(&t, &clk, &rows[i], o.headroom);
        if (rows[i].fits && o.wcet)
            count_row(o.file, &rows[i], o.wcet_ops < t.n ? o.wcet_ops : t.n);
        print_row(&rows[i], st.peak_live_bytes, o.headroom, o.wcet, t.n);
    }
    int bad = o.json != NULL && write_json(&o, &t, st.peak_live_bytes, rows, n) != 0;
    if (bad)
        opts_error(CMD, "cannot write %s", o.json);
    trace_stats_free(&st);
    trace_free(&t);
    return bad;
}
