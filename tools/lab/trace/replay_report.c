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

/* "104 @12" (worst count, call index), or "-" when no such call. */
static const char *worst_text(const rw_kind *k, char *buf, size_t n)
{
    if (k->calls == 0)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%llu @%llu", (unsigned long long)k->max,
                 (unsigned long long)k->worst_call);
    return buf;
}

/* --wcet: the exact counts, one row per allocator. */
static void print_wcet(const replay_bench *b)
{
    printf(
        "\nexact x86-64 instructions per call (--wcet: calls 0..%llu counted by "
        "single-stepping;\nworst count @ the call index that first reached it; alloc = "
        "malloc, calloc, new;\naligned = an alignment above RTM_ALIGN asked, rtm_aligned_alloc):\n",
        (unsigned long long)b->wcet_calls - 1);
    printf("%-10s %14s %14s %16s %14s %8s %8s %9s %8s\n", "allocator", "alloc", "aligned",
           "realloc", "free", "p99 al", "p99 fr", "mean al", "seconds");
    for (size_t i = 0; i < b->nrows; i++) {
        const rp_row *r = &b->rows[i];
        const rw_counts *w = &r->wcet;
        if (!w->measured) {
            printf("%-10s %s\n", r->name, w->why);
            continue;
        }
        char a[32], al[32], re[32], f[32];
        printf("%-10s %14s %14s %16s %14s %8llu %8llu %9.1f %8.1f\n", r->name,
               worst_text(&w->k[RW_ALLOC], a, sizeof a),
               worst_text(&w->k[RW_ALIGNED], al, sizeof al),
               worst_text(&w->k[RW_REALLOC], re, sizeof re),
               worst_text(&w->k[RW_FREE], f, sizeof f), (unsigned long long)w->k[RW_ALLOC].p99,
               (unsigned long long)w->k[RW_FREE].p99, w->k[RW_ALLOC].mean, w->seconds);
        if (strcmp(r->name, "glibc") == 0)
            printf("%-10s (its realloc and aligned calls ran uncounted: the counter has no "
                   "row for them)\n",
                   "");
    }
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

/* The --wcet object of a row (null when not measured: the table's
 * wcet_why says why). */
static void json_wcet(json *j, const rw_counts *w)
{
    if (!w->measured) {
        json_null(j, "wcet");
        return;
    }
    json_obj(j, "wcet");
    json_u64(j, "calls", w->calls);
    json_u64(j, "refused", w->refused);
    json_u64(j, "instructions", w->instructions);
    json_num(j, "seconds", w->seconds);
    for (unsigned k = 0; k < RW_KINDS; k++) {
        const rw_kind *c = &w->k[k];
        if (c->calls == 0) {
            json_null(j, rw_kind_names[k]);
            continue;
        }
        json_obj(j, rw_kind_names[k]);
        json_u64(j, "calls", c->calls);
        json_u64(j, "max", c->max);
        json_u64(j, "p99", c->p99);
        json_num(j, "mean", c->mean);
        json_u64(j, "worst_call", c->worst_call);
        json_u64(j, "worst_size", c->worst_size);
        json_u64(j, "syscalls", c->syscalls);
        json_obj_end(j);
    }
    json_obj_end(j);
}

/* What a row holds beyond its table columns: the wcet detail and the
 * live/held samples. */
static void json_row_extra(json *j, size_t row, void *ctx)
{
    const rp_row *r = &((const replay_bench *)ctx)->rows[row];
    json_wcet(j, &r->wcet);
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
                            "are pre-faulted (MAP_POPULATE)") != 0)
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
    results_table(&t, b);
    int bad = table_json(&j, "results", &t, json_row_extra, (void *)b);
    table_free(&t);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
