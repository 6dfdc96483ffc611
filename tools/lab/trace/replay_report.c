// SPDX-License-Identifier: MIT
/*
 * replay_report.c -- what `rtmem replay` says: one table row per allocator
 * and the JSON (docs/schema/replay.schema.json), with the live/held samples
 * of each row for the fragmentation chart.
 *
 * Latency columns are over the calls that succeeded (a refused call is not
 * timed: replay.h); "held/live" is taken at the sample where the trace's
 * live bytes were highest, so allocators are compared at the same moment.
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "trace/replay_cmd.h"
#include "trace/trace_cli.h"

/* The sample with the most live bytes (the moment rows are compared at). */
static const replay_sample *peak_sample(const rp_row *r)
{
    const replay_sample *best = NULL;
    for (size_t i = 0; i < r->nsamples; i++)
        if (best == NULL || r->sample[i].live > best->live)
            best = &r->sample[i];
    return best;
}

static double held_ratio(const rp_row *r)
{
    const replay_sample *s = peak_sample(r);
    return s != NULL && s->live > 0 ? (double)s->held / (double)s->live : 0.0;
}

/* --- the results table: text and JSON from one fill --------------------- */

static void bytes_text(const table_cell *c, char *buf, size_t n)
{
    if (c->kind == TABLE_U64)
        trace_cli_bytes(c->v.u64, buf, n);
    else
        snprintf(buf, n, "-");
}

#define LATENCY(key, head, w)                                                                      \
    {                                                                                              \
        key, head, w, 0, 0, NULL, 0, "latency_ns", NULL                                            \
    }
/* One row per allocator, in the JSON's key order; the columns with a header
 * are the text table. rp_quantile_names are the latency keys. */
static const table_col results_cols[] = {
    {"allocator", "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("kind"),
    {"status", "status", -8, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("why"),
    {"ops", "calls", 10, 0, 0, NULL, 0, NULL, NULL},
    {"refused", "refused", 8, 0, 0, NULL, 0, NULL, NULL},
    {"skipped", "skipped", 8, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("timed_calls"),
    LATENCY("p50", "p50", 8),
    LATENCY("p90", "p90", 8),
    LATENCY("p99", "p99", 8),
    LATENCY("p999", "p99.9", 9),
    LATENCY("p9999", "p99.99", 9),
    LATENCY("max", "max", 10),
    TABLE_JSON_ONLY("alloc_max_ns"),
    TABLE_JSON_ONLY("free_max_ns"),
    TABLE_JSON_ONLY("alloc_p99_ns"),
    TABLE_JSON_ONLY("free_p99_ns"),
    {"footprint_bytes", "footprint", 11, 0, 0, NULL, 0, NULL, bytes_text},
    TABLE_JSON_ONLY("footprint_kind"),
    TABLE_JSON_ONLY("region_bytes"),
    {"held_over_live_at_peak", "held/live", 10, 2, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("wcet_alloc_instructions"),
    TABLE_JSON_ONLY("wcet_aligned_instructions"),
    TABLE_JSON_ONLY("wcet_realloc_instructions"),
    TABLE_JSON_ONLY("wcet_free_instructions"),
    TABLE_JSON_ONLY("wcet_why"),
};
#define RESULTS_NCOLS (sizeof results_cols / sizeof results_cols[0])

/* Instructions of one kind: its worst, or null when not counted. */
static void kind_max(table *t, const rw_counts *w, unsigned k)
{
    if (w->measured && w->k[k].calls != 0)
        table_u64(t, w->k[k].max);
    else
        table_null(t);
}

/* Fills t (table_init'ed with results_cols) with a row per allocator; a
 * row that did not run says why in text. */
static void results_table(table *t, const replay_bench *b)
{
    int with_wcet = b->wcet_calls != 0;
    table_init(t, results_cols, RESULTS_NCOLS);
    for (size_t i = 0; i < b->nrows; i++) {
        const rp_row *r = &b->rows[i];
        const rw_counts *w = &r->wcet;
        table_row(t);
        table_str(t, r->name);
        table_str(t, r->is_rtm ? "rtm" : "malloc");
        table_str(t, r->status);
        table_str(t, r->why[0] ? r->why : NULL);
        table_u64(t, r->ops);
        table_u64(t, r->refused);
        table_u64(t, r->skipped);
        table_u64(t, r->timed);
        for (unsigned k = 0; k < RP_NQ; k++)
            table_num(t, r->q_ns[k]);
        table_num(t, r->alloc_max_ns);
        table_num(t, r->free_max_ns);
        table_num(t, r->alloc_p99_ns);
        table_num(t, r->free_p99_ns);
        table_u64(t, r->footprint);
        table_str(t, r->is_rtm ? "region high-water mark" : "resident set growth");
        if (r->is_rtm)
            table_u64(t, r->region);
        else
            table_null(t);
        table_num(t, held_ratio(r));
        for (unsigned k = RW_ALLOC; k <= RW_FREE; k++)
            kind_max(t, w, k);
        table_str(t, w->measured ? NULL : with_wcet ? w->why : "not measured (no --wcet)");
        if (strcmp(r->status, "ok") != 0)
            table_note(t, r->why);
    }
}

/* --- the --wcet table: text and JSON from one fill ------------------------- */

/* A row per allocator; its JSON is the row's "wcet" object (null when not
 * measured: results' wcet_why says why), a call kind's columns nested in
 * an object of its name, null as a whole when no call of that kind was
 * counted. The text reads "worst @ call index" off two cells (TABLE_ROW)
 * and shows the seconds last; a row not measured shows why. */
enum { W_CALLS = 1, W_REFUSED, W_INSTRUCTIONS, W_SECONDS, W_KIND0 };
enum { K_CALLS, K_MAX, K_P99, K_MEAN, K_WORST_CALL, K_WORST_SIZE, K_SYSCALLS, K_NCOLS };
#define KIND_COL(k, col) (W_KIND0 + (k)*K_NCOLS + (col))
#define W_NCOLS          KIND_COL(RW_KINDS, 0)

/* "104 @12" (worst count, call index), or "-" when no such call. */
static void worst_text(const table_cell *row, unsigned k, char *buf, size_t n)
{
    const table_cell *max = &row[KIND_COL(k, K_MAX)], *at = &row[KIND_COL(k, K_WORST_CALL)];
    if (max->kind != TABLE_U64 || at->kind != TABLE_U64)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%llu @%llu", (unsigned long long)max->v.u64,
                 (unsigned long long)at->v.u64);
}
static void worst_alloc(const table_cell *row, char *buf, size_t n)
{
    worst_text(row, RW_ALLOC, buf, n);
}
static void worst_aligned(const table_cell *row, char *buf, size_t n)
{
    worst_text(row, RW_ALIGNED, buf, n);
}
static void worst_realloc(const table_cell *row, char *buf, size_t n)
{
    worst_text(row, RW_REALLOC, buf, n);
}
static void worst_free(const table_cell *row, char *buf, size_t n)
{
    worst_text(row, RW_FREE, buf, n);
}

/* A kind with no call counted has p99 and mean 0 (rw_kind), and the text
 * has always shown them so; its JSON is null. */
static void p99_text(const table_cell *c, char *buf, size_t n)
{
    snprintf(buf, n, "%llu", c->kind == TABLE_U64 ? (unsigned long long)c->v.u64 : 0ull);
}
static void mean_text(const table_cell *c, char *buf, size_t n)
{
    snprintf(buf, n, "%.1f", c->kind == TABLE_NUM ? c->v.num : 0.0);
}

#define KIND_COLS(name, head, w, fn, p99, mean)                                                    \
    {"calls", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, name, NULL},                                  \
        {"max", head, w, 0, 0, NULL, TABLE_ROW | TABLE_NULL_GROUP, name, fn},                      \
        {"p99", p99, 8, 0, 0, NULL, TABLE_NULL_GROUP, name, p99_text},                             \
        {"mean", mean, 9, 1, 0, NULL, TABLE_NULL_GROUP, name, mean_text},                          \
        {"worst_call", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, name, NULL},                         \
        {"worst_size", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, name, NULL},                         \
    {                                                                                              \
        "syscalls", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, name, NULL                              \
    }
static const table_col wcet_cols[] = {
    {NULL, "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("calls"),
    TABLE_JSON_ONLY("refused"),
    TABLE_JSON_ONLY("instructions"),
    {"seconds", "seconds", 8, 1, 0, NULL, 0, NULL, NULL},
    KIND_COLS("alloc", "alloc", 14, worst_alloc, "p99 al", "mean al"),
    KIND_COLS("aligned", "aligned", 14, worst_aligned, NULL, NULL),
    KIND_COLS("realloc", "realloc", 16, worst_realloc, NULL, NULL),
    KIND_COLS("free", "free", 14, worst_free, "p99 fr", NULL),
};
static const char *const wcet_order[] = {"allocator", "alloc",  "aligned", "realloc", "free",
                                         "p99 al",    "p99 fr", "mean al", "seconds"};

static void kind_cells(table *t, const rw_kind *c)
{
    if (c->calls == 0) {
        table_nulls(t, K_NCOLS); /* the kind's object is null as a whole */
        return;
    }
    table_u64(t, c->calls);
    table_u64(t, c->max);
    table_u64(t, c->p99);
    table_num(t, c->mean);
    table_u64(t, c->worst_call);
    table_u64(t, c->worst_size);
    table_u64(t, c->syscalls);
}

static void wcet_table(table *t, const replay_bench *b)
{
    _Static_assert(sizeof wcet_cols / sizeof wcet_cols[0] == W_NCOLS, "a column per cell");
    table_init(t, wcet_cols, W_NCOLS);
    table_text_order(t, wcet_order, sizeof wcet_order / sizeof wcet_order[0]);
    for (size_t i = 0; i < b->nrows; i++) {
        const rw_counts *w = &b->rows[i].wcet;
        table_row(t);
        table_str(t, b->rows[i].name);
        table_u64(t, w->calls);
        table_u64(t, w->refused);
        table_u64(t, w->instructions);
        table_num(t, w->seconds);
        for (unsigned k = 0; k < RW_KINDS; k++)
            kind_cells(t, &w->k[k]);
        if (!w->measured)
            table_note(t, w->why);
    }
}

/* --wcet: the exact counts, one row per allocator. */
static void print_wcet(const replay_bench *b)
{
    printf(
        "\nexact x86-64 instructions per call (--wcet: calls 0..%llu counted by "
        "single-stepping;\nworst count @ the call index that first reached it; alloc = "
        "malloc, calloc, new;\naligned = an alignment above RTM_ALIGN asked, rtm_aligned_alloc):\n",
        (unsigned long long)b->wcet_calls - 1);
    table t;
    wcet_table(&t, b);
    table_print_header(stdout, &t);
    for (size_t i = 0; i < t.nrows; i++) {
        table_print_row(stdout, &t, i);
        if (b->rows[i].wcet.measured && strcmp(b->rows[i].name, "glibc") == 0)
            printf("%-10s (its realloc and aligned calls ran uncounted: the counter has no "
                   "row for them)\n",
                   "");
    }
    table_free(&t);
}

void replay_print(const replay_bench *b)
{
    char pk[32], reg[32];
    machine_print(stdout, &b->m);
    printf("clock: %s\n", b->clock_text);
    printf("trace: %s, %zu calls, %u thread%s%s, peak live %s in %llu blocks\n", b->o->file, b->t.n,
           b->t.nthreads, b->t.nthreads == 1 ? "" : "s",
           b->t.nthreads > 1 ? " (replayed serialised in call order)" : "",
           trace_cli_bytes(b->st.peak_live_bytes, pk, sizeof pk),
           (unsigned long long)b->st.peak_live_blocks);
    printf("rtm heaps on a pre-faulted region of %s; latencies in ns over the calls that "
           "succeeded\n\n",
           trace_cli_bytes(b->o->region, reg, sizeof reg));
    table t;
    results_table(&t, b);
    table_print(stdout, &t);
    table_free(&t);
    printf("\nfootprint: rtm heaps, the region's high-water mark (highest block end); mallocs,\n"
           "the growth of the resident set (VmHWM). held/live: bytes held at the moment of\n"
           "the most live bytes, over those live bytes (1.00 = no overhead).\n");
    if (b->wcet_calls != 0)
        print_wcet(b);
}

/* What a row holds beyond its table columns: the wcet detail and the
 * live/held samples. */
typedef struct json_ctx {
    const replay_bench *b;
    table wcet; /* wcet_table() */
} json_ctx;

static void json_row_extra(json *j, size_t row, void *ctx)
{
    const json_ctx *x = ctx;
    const rp_row *r = &x->b->rows[row];
    if (r->wcet.measured) {
        json_obj(j, "wcet");
        table_json_cells(j, &x->wcet, row);
        json_obj_end(j);
    } else {
        json_null(j, "wcet");
    }
    json_arr(j, "samples");
    for (size_t i = 0; i < r->nsamples; i++) {
        json_arr_inline(j, NULL);
        json_u64(j, NULL, r->sample[i].call);
        json_u64(j, NULL, r->sample[i].live);
        json_u64(j, NULL, r->sample[i].held);
        json_arr_end(j);
    }
    json_arr_end(j);
}

int replay_write_json(const replay_bench *b, const char *path)
{
    json j;
    if (trace_cli_json_open(&j, "replay", path,
                            "none: the replay is single-threaded and unprivileged; rtm regions "
                            "are pre-faulted (MAP_POPULATE, every page written)") != 0)
        return -1;
    json_obj(&j, "params");
    json_str(&j, "file", b->o->file);
    json_u64(&j, "region_bytes", b->o->region);
    if (b->o->limit == UINT64_MAX)
        json_null(&j, "limit");
    else
        json_u64(&j, "limit", b->o->limit);
    json_str(&j, "clock", b->clock_text);
    json_str(&j, "order", "serialised in call order (sequence numbers)");
    if (b->wcet_calls != 0)
        json_u64(&j, "wcet_calls", b->wcet_calls);
    else
        json_null(&j, "wcet_calls");
    json_obj_end(&j);
    json_obj(&j, "trace");
    json_str(&j, "program", b->t.hdr.program);
    json_u64(&j, "calls", b->t.n);
    json_u64(&j, "threads", b->t.nthreads);
    json_u64(&j, "peak_live_bytes", b->st.peak_live_bytes);
    json_u64(&j, "peak_live_blocks", b->st.peak_live_blocks);
    json_obj_end(&j);
    table t;
    json_ctx x = {.b = b};
    results_table(&t, b);
    wcet_table(&x.wcet, b);
    int bad = table_json(&j, "results", &t, json_row_extra, &x) != 0 || !table_ok(&x.wcet);
    table_free(&x.wcet);
    table_free(&t);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
