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
    printf("%-10s %-8s %10s %8s %8s %8s %8s %8s %9s %9s %10s %11s %10s\n", "allocator", "status",
           "calls", "refused", "skipped", "p50", "p90", "p99", "p99.9", "p99.99", "max",
           "footprint", "held/live");
    for (size_t i = 0; i < b->nrows; i++) {
        const rp_row *r = &b->rows[i];
        if (strcmp(r->status, "ok") != 0) {
            printf("%-10s %-8s %s\n", r->name, r->status, r->why);
            continue;
        }
        char fp[32];
        printf("%-10s %-8s %10llu %8llu %8llu %8.0f %8.0f %8.0f %9.0f %9.0f %10.0f %11s %10.2f\n",
               r->name, r->status, (unsigned long long)r->ops, (unsigned long long)r->refused,
               (unsigned long long)r->skipped, r->q_ns[0], r->q_ns[1], r->q_ns[2], r->q_ns[3],
               r->q_ns[4], r->q_ns[5], trace_cli_bytes(r->footprint, fp, sizeof fp), held_ratio(r));
    }
    printf("\nfootprint: rtm heaps, the region's high-water mark (highest block end); mallocs,\n"
           "the growth of the resident set (VmHWM). held/live: bytes held at the moment of\n"
           "the most live bytes, over those live bytes (1.00 = no overhead).\n");
    if (b->wcet_calls != 0)
        print_wcet(b);
}

/* Instructions of one kind: its worst, or null when not counted. */
static void json_kind_max(json *j, const char *key, const rw_counts *w, unsigned k)
{
    if (w->measured && w->k[k].calls != 0)
        json_u64(j, key, w->k[k].max);
    else
        json_null(j, key);
}

/* The --wcet fields of a row (null when not measured, with the reason). */
static void json_wcet(json *j, const rw_counts *w, int with_wcet)
{
    json_kind_max(j, "wcet_alloc_instructions", w, RW_ALLOC);
    json_kind_max(j, "wcet_aligned_instructions", w, RW_ALIGNED);
    json_kind_max(j, "wcet_realloc_instructions", w, RW_REALLOC);
    json_kind_max(j, "wcet_free_instructions", w, RW_FREE);
    json_str(j, "wcet_why", w->measured ? NULL : with_wcet ? w->why : "not measured (no --wcet)");
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

static void json_row(json *j, const rp_row *r, int with_wcet)
{
    json_obj(j, NULL);
    json_str(j, "allocator", r->name);
    json_str(j, "kind", r->is_rtm ? "rtm" : "malloc");
    json_str(j, "status", r->status);
    json_str(j, "why", r->why[0] ? r->why : NULL);
    json_u64(j, "ops", r->ops);
    json_u64(j, "refused", r->refused);
    json_u64(j, "skipped", r->skipped);
    json_u64(j, "timed_calls", r->timed);
    json_obj(j, "latency_ns");
    for (unsigned k = 0; k < RP_NQ; k++)
        json_num(j, rp_quantile_names[k], r->q_ns[k]);
    json_obj_end(j);
    json_num(j, "alloc_max_ns", r->alloc_max_ns);
    json_num(j, "free_max_ns", r->free_max_ns);
    json_num(j, "alloc_p99_ns", r->alloc_p99_ns);
    json_num(j, "free_p99_ns", r->free_p99_ns);
    json_u64(j, "footprint_bytes", r->footprint);
    json_str(j, "footprint_kind", r->is_rtm ? "region high-water mark" : "resident set growth");
    if (r->is_rtm)
        json_u64(j, "region_bytes", r->region);
    else
        json_null(j, "region_bytes");
    json_num(j, "held_over_live_at_peak", held_ratio(r));
    json_wcet(j, &r->wcet, with_wcet);
    json_arr(j, "samples");
    for (size_t i = 0; i < r->nsamples; i++) {
        json_arr_inline(j, NULL);
        json_u64(j, NULL, r->sample[i].call);
        json_u64(j, NULL, r->sample[i].live);
        json_u64(j, NULL, r->sample[i].held);
        json_arr_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
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
    json_arr(&j, "results");
    for (size_t i = 0; i < b->nrows; i++)
        json_row(&j, &b->rows[i], b->wcet_calls != 0);
    json_arr_end(&j);
    return json_close(&j);
}
