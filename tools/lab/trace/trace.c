// SPDX-License-Identifier: MIT
/*
 * trace.c -- `rtmem trace stats FILE` and `rtmem trace dump FILE`: what a
 * recorded trace holds, as tables (and JSON, docs/schema/trace_stats.schema.json)
 * or one line per call. The numbers come from trace_stats.c; this file
 * parses options and fills the tables (common/table.h) that both the text
 * and the JSON are rendered from.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/opts.h"
#include "common/table.h"
#include "trace/trace_cli.h"

#define RT_NONE "none: trace stats only reads the file"

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem trace stats FILE [--json F]\n"
               "       rtmem trace dump FILE [--limit N]\n"
               "\n"
               "stats: calls by operation and thread, requested sizes (power-of-two\n"
               "buckets), bytes allocated, the peak of live requested bytes and blocks, and\n"
               "what is still live at the end of the trace.\n"
               "dump: one line per call in call order (sequence number): index, thread,\n"
               "time (ns since the start), operation, size, alignment, block ids.\n"
               "\n"
               "  --json F     stats: also write the figures as JSON (docs/RESULTS.md)\n"
               "  --limit N    dump: the first N calls only\n"
               "  --help       this text\n"
               "\n"
               "FILE is a trace written by `rtmem record` (format: docs/TRACE.md). A bad\n"
               "file is reported with the byte offset of what is wrong, exit status 1;\n"
               "so is a trace with no calls, by stats.\n");
}

/* --- the tables: text and JSON from one fill -------------------------------- */

/* Calls per operation, a row per operation (JSON: an object keyed by
 * name, every operation; text: those called). */
static const table_col op_cols[] = {
    {"operation", "operation", -16, 0, 0, NULL, 0, NULL, NULL},
    {"calls", "calls", 12, 0, 0, NULL, 0, NULL, NULL},
};

static void op_table(table *t, const trace_stats *s)
{
    table_init(t, op_cols, 2);
    for (unsigned op = 1; op < TOP_COUNT; op++) {
        table_row(t);
        table_str(t, trace_op_name(op));
        table_u64(t, s->calls[op]);
    }
}

/* "[64, 127]", or "0" for the bucket of zero-byte requests. */
static void range_text(const table_cell *row, char *buf, size_t n)
{
    if (row[1].v.u64 == 0)
        snprintf(buf, n, "0");
    else
        snprintf(buf, n, "[%llu, %llu]", (unsigned long long)row[0].v.u64,
                 (unsigned long long)row[1].v.u64);
}

/* Requested sizes, a row per power-of-two bucket that holds any. */
static const table_col size_cols[] = {
    {"min", "requested size", -24, 0, 0, NULL, TABLE_ROW, NULL, range_text},
    TABLE_JSON_ONLY("max"),
    {"count", "requests", 12, 0, 0, NULL, 0, NULL, NULL},
};

static void size_table(table *t, const trace_stats *s)
{
    table_init(t, size_cols, 3);
    for (unsigned k = 0; k < TRACE_SIZE_BUCKETS; k++) {
        if (s->size_hist[k] == 0)
            continue;
        table_row(t);
        table_u64(t, k == 0 ? 0 : 1ull << (k - 1));
        table_u64(t, k == 0 ? 0 : k == 64 ? ~0ull : (1ull << k) - 1);
        table_u64(t, s->size_hist[k]);
    }
}

/* Calls per thread, a row per thread (JSON: the calls as a flat array). */
static const table_col thread_cols[] = {
    {NULL, "thread", -8, 0, 0, NULL, 0, NULL, NULL},
    {"calls", "calls", 12, 0, 0, NULL, 0, NULL, NULL},
};

static void thread_table(table *t, const trace *tr, const trace_stats *s)
{
    table_init(t, thread_cols, 2);
    for (unsigned i = 0; i < tr->nthreads; i++) {
        table_row(t);
        table_u64(t, i);
        table_u64(t, s->thread_calls[i]);
    }
}

static void print_stats(const char *path, const trace *t, const trace_stats *s)
{
    char b1[32], b2[32], b3[32];
    table tb;
    printf("trace: %s (program %.24s, pid %u, format version %u)\n", path, t->hdr.program,
           t->hdr.pid, t->hdr.version);
    printf("calls: %zu over %.3f s, %u thread%s, %llu refused to the program\n\n", t->n,
           (double)s->duration_ns / 1e9, t->nthreads, t->nthreads == 1 ? "" : "s",
           (unsigned long long)s->failed);
    op_table(&tb, s);
    table_print_header(stdout, &tb);
    for (size_t r = 0; r < tb.nrows; r++)
        if (table_at(&tb, r, 1)->v.u64 != 0)
            table_print_row(stdout, &tb, r);
    table_free(&tb);
    printf("\n");
    size_table(&tb, s);
    table_print(stdout, &tb);
    table_free(&tb);
    printf("\npeak live: %s (%llu bytes) at call %llu, %llu blocks at most\n",
           trace_cli_bytes(s->peak_live_bytes, b1, sizeof b1),
           (unsigned long long)s->peak_live_bytes, (unsigned long long)s->peak_at,
           (unsigned long long)s->peak_live_blocks);
    printf("allocated: %s in total, largest request %llu bytes\n",
           trace_cli_bytes(s->allocated_bytes, b2, sizeof b2),
           (unsigned long long)s->largest_request);
    printf("live at the end: %s in %llu blocks\n",
           trace_cli_bytes(s->end_live_bytes, b3, sizeof b3),
           (unsigned long long)s->end_live_blocks);
    printf("\n");
    thread_table(&tb, t, s);
    table_print(stdout, &tb);
    table_free(&tb);
}

static int write_json(const char *out, const char *path, const trace *t, const trace_stats *s)
{
    json j;
    table tb;
    int bad = 0;
    if (trace_cli_json_open(&j, "trace stats", out, RT_NONE) != 0)
        return -1;
    json_str(&j, "file", path);
    json_str(&j, "program", t->hdr.program);
    json_u64(&j, "format_version", t->hdr.version);
    json_u64(&j, "calls", t->n);
    json_u64(&j, "threads", t->nthreads);
    json_u64(&j, "duration_ns", s->duration_ns);
    json_u64(&j, "refused_to_program", s->failed);
    op_table(&tb, s);
    bad |= table_json_map(&j, "operations", &tb, 0, 1);
    table_free(&tb);
    thread_table(&tb, t, s);
    bad |= table_json_column(&j, "thread_calls", &tb, 1);
    table_free(&tb);
    size_table(&tb, s);
    bad |= table_json(&j, "size_histogram", &tb, NULL, NULL);
    table_free(&tb);
    json_u64(&j, "allocated_bytes", s->allocated_bytes);
    json_u64(&j, "largest_request", s->largest_request);
    json_u64(&j, "peak_live_bytes", s->peak_live_bytes);
    json_u64(&j, "peak_live_blocks", s->peak_live_blocks);
    json_u64(&j, "peak_at_call", s->peak_at);
    json_u64(&j, "end_live_bytes", s->end_live_bytes);
    json_u64(&j, "end_live_blocks", s->end_live_blocks);
    return json_close(&j) != 0 || bad ? -1 : 0;
}

static void dump(const trace *t, uint64_t limit)
{
    printf("%10s %6s %14s %-14s %12s %5s %10s %10s\n", "call", "thread", "t_ns", "operation",
           "size", "align", "id", "old_id");
    for (size_t i = 0; i < t->n && i < limit; i++) {
        const trace_op_rec *o = &t->ops[i];
        printf("%10zu %6u %14llu %-14s %12llu %5llu %10u %10u\n", i, o->thread,
               (unsigned long long)o->t_ns, trace_op_name(o->op), (unsigned long long)o->size,
               o->align_log2 ? 1ull << o->align_log2 : 0ull, o->id, o->old_id);
    }
}

int trace_main(int argc, char **argv)
{
    const char *cmd = "trace";
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    int is_stats = argc >= 2 && strcmp(argv[1], "stats") == 0;
    int is_dump = argc >= 2 && strcmp(argv[1], "dump") == 0;
    if (!is_stats && !is_dump) {
        opts_error(cmd, argc < 2 ? "which? (stats or dump)" : "unknown subcommand '%s'",
                   argc < 2 ? "" : argv[1]);
        return opts_usage_error(argv[0]);
    }
    argc--;
    argv++;
    argv[0] = (char *)(is_stats ? "trace stats" : "trace dump");
    const char *path = trace_cli_take_file(&argc, argv);
    const char *json_path = NULL;
    uint64_t limit = UINT64_MAX;
    opt_spec specs[] = {{"json", OPT_STR, &json_path, 0}, {"limit", OPT_U64, &limit, 0}};
    int rc = opts_parse(argc, argv, specs, 2);
    if (rc == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    if (rc == OPTS_OK && path == NULL)
        opts_error(cmd, "no trace FILE given");
    if (rc == OPTS_OK && ((is_stats && specs[1].set) || (is_dump && specs[0].set)))
        opts_error(cmd, "--%s belongs to trace %s", is_stats ? "limit" : "json",
                   is_stats ? "dump" : "stats");
    if (rc != OPTS_OK || path == NULL || (is_stats && specs[1].set) || (is_dump && specs[0].set)) {
        return opts_usage_error(argv[0]);
    }
    trace t;
    if (trace_cli_load(cmd, path, &t) != 0)
        return 1;
    if (is_stats && trace_cli_need_calls(cmd, path, &t, "nothing to count") != 0) {
        trace_free(&t);
        return 1;
    }
    if (is_dump) {
        dump(&t, limit);
        trace_free(&t);
        return 0;
    }
    trace_stats s;
    if (trace_stats_compute(&t, &s) != 0) {
        opts_error(cmd, "out of memory");
        trace_free(&t);
        return 1;
    }
    print_stats(path, &t, &s);
    int bad = json_path != NULL && write_json(json_path, path, &t, &s) != 0;
    trace_stats_free(&s);
    trace_free(&t);
    return bad ? 1 : 0;
}
