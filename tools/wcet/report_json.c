// SPDX-License-Identifier: MIT
/*
 * tools/wcet/report_json.c -- the --json document of `rtmem wcet`, in the
 * lab's envelope ({"tool": "rtmem", "command": "wcet", "schema_version": 1,
 * "machine": ..., "rt_setup": ...}) written with the lab's streaming writer
 * (tools/lab/common/json.c and machine.c are compiled into rtmem-wcet).
 *
 * Every field is documented in docs/schema/wcet.schema.json. The layout
 * follows the text report: one object per allocator with its rows (the
 * rows table, report.c's wcet_rows_table, with per
 * measured function: calls, min / mean / p99 / max, the case of the max,
 * code outside the allocator, system calls, the per-scenario figures) and
 * its worst alloc and free; then TLSF's verdict against the budget.
 */
#include <string.h>

#include "common/json.h"
#include "common/machine.h"
#include "common/table.h"
#include "rtmem/mt.h"
#include "wcet.h"

static void sys_kinds(json *j, unsigned mask)
{
    static const char *const names[] = {"brk", "mmap", "munmap", "mremap", "madvise", "other"};
    json_arr_inline(j, "syscall_kinds");
    for (unsigned i = 0; i < 6; i++)
        if ((mask >> i) & 1u)
            json_str(j, NULL, names[i]);
    json_arr_end(j);
}

typedef struct rows_ctx {
    const wcet_all *all;
    unsigned al;
    const row_stats *st;
    const table *t;    /* the rows table */
    const table *scen; /* the per-scenario table */
} rows_ctx;

/* What a row holds beyond its table columns: the kinds of its system
 * calls and its figures per scenario, the scenario table's rows of the
 * same function. */
static void row_extra(json *j, size_t i, void *ctx)
{
    const rows_ctx *x = ctx;
    unsigned r = (unsigned)table_at(x->t, i, WR_ROW)->v.u64;
    sys_kinds(j, x->st[r].sysmask);
    json_arr(j, "scenarios");
    for (size_t k = 0; k < x->scen->nrows; k++) {
        if (table_at(x->scen, k, WS_ROW)->v.u64 != r)
            continue;
        json_obj(j, NULL);
        table_json_cells(j, x->scen, k);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void worst_json(json *j, const char *key, const row_stats *st, unsigned r)
{
    char d[300];
    if (r == ROW_COUNT)
        return; /* none measured (--only): the field is absent */
    wcet_describe_sample(d, sizeof d, st[r].worst);
    json_obj(j, key);
    json_u64(j, "instructions", st[r].max);
    json_str(j, "function", wcet_rows[r].function);
    json_str(j, "scenario", wcet_scenario_names[st[r].worst->scenario]);
    json_str(j, "case", d);
    json_u64(j, "syscalls", st[r].worst->syscalls);
    json_obj_end(j);
}

/* One allocator; fills st with its rows' statistics. */
static void allocator_json(json *j, const wcet_all *all, unsigned al, row_stats *st)
{
    json_obj(j, NULL);
    json_str(j, "name", wcet_allocators[al].name);
    json_str(j, "spec", wcet_allocators[al].spec ? wcet_allocators[al].spec : "glibc");
    json_str(j, "parameters", wcet_allocators[al].note);
    table t;
    wcet_rows_table(&t, all, al, st);
    table scen;
    wcet_scenarios_table(&scen, all, al);
    rows_ctx x = {all, al, st, &t, &scen};
    table_json(j, "rows", &t, row_extra, &x);
    table_free(&scen);
    table_free(&t);
    worst_json(j, "worst_alloc", st, wcet_worst_of_kind(st, WCET_ALLOC));
    worst_json(j, "worst_free", st, wcet_worst_of_kind(st, WCET_FREE));
    json_obj_end(j);
}

static void tlsf_json(json *j, const row_stats *st)
{
    unsigned a = wcet_worst_of_kind(st, WCET_ALLOC), f = wcet_worst_of_kind(st, WCET_FREE);
    json_obj(j, "tlsf_verdict");
    json_u64(j, "target", WCET_TARGET);
    if (a < ROW_COUNT && f < ROW_COUNT) {
        json_u64(j, "worst_alloc", st[a].max);
        json_u64(j, "worst_free", st[f].max);
        json_bool(j, "pass", st[a].max <= WCET_TARGET && st[f].max <= WCET_TARGET);
    }
    json_str(j, "reference_source", wcet_reference_source);
    json_obj(j, "reference_counts");
    for (size_t i = 0; i < 3; i++) {
        json_obj(j, wcet_reference_counts[i].name);
        json_u64(j, "alloc", wcet_reference_counts[i].alloc);
        json_u64(j, "free", wcet_reference_counts[i].free);
        json_obj_end(j);
    }
    json_obj_end(j);
    json_obj_end(j);
}

/* The mt heap's verdicts (wcet_mt_judge) and its take-back-all counts. */
static void mt_json(json *j, const wcet_all *all)
{
    wcet_mt_judgement m;
    wcet_mt_judge(all, &m);
    json_obj(j, "mt_verdict");
    json_u64(j, "batch", RTM_MT_BATCH);
    json_u64(j, "remote_target", WCET_MT_REMOTE_TARGET);
    json_u64(j, "slack", WCET_MT_SLACK);
    if (m.measured) {
        json_u64(j, "remote_free", m.remote.max);
        json_bool(j, "remote_pass", m.remote.max <= WCET_MT_REMOTE_TARGET);
        json_u64(j, "owner_alloc", m.alloc.max);
        json_u64(j, "owner_free", m.free.max);
    }
    if (m.measured && m.bound_alloc != 0) {
        json_u64(j, "owner_alloc_bound", m.bound_alloc);
        json_u64(j, "owner_free_bound", m.bound_free);
        json_bool(j, "owner_alloc_pass", m.alloc.max <= m.bound_alloc);
        json_bool(j, "owner_free_pass", m.free.max <= m.bound_free);
    }
    json_arr(j, "takeback");
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        if (s->allocator != AL_MT_TLSF || s->scenario != SC_MT_TAKEBACK)
            continue;
        json_obj(j, NULL);
        json_u64(j, "pending", s->variant >> 8);
        json_u64(j, "request", s->size);
        json_u64(j, "instructions", s->count);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

int wcet_report_json(const char *path, const wcet_all *all, const wcet_config *cfg, int repeat_ok,
                     double seconds, unsigned lanes)
{
    json j;
    machine m;
    row_stats st[ROW_COUNT], tlsf[ROW_COUNT];
    if (json_open(&j, path) != 0)
        return -1;
    machine_describe(&m);
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "wcet");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &m);
    json_str(&j, "rt_setup",
             "not applied: an instruction count does not depend on scheduling, priority, "
             "CPU frequency or memory locking");
    json_str(&j, "method", "ptrace single-step, x86-64, user-space instructions");
    json_str(&j, "profile", cfg->quick ? "quick" : "full");
    json_u64(&j, "seed", cfg->seed);
    json_u64(&j, "iterations", cfg->iterations);
    json_u64(&j, "classes_top_log2", cfg->class_top_log2);
    json_u64(&j, "classes_per_octave", cfg->per_octave);
    json_num(&j, "seconds", seconds);
    json_u64(&j, "tracer_processes", lanes);
    json_bool(&j, "selftest_ok", 1); /* a failed self-test fails the run: no JSON */
    json_bool(&j, "repeat_identical", repeat_ok);
    json_arr(&j, "allocators");
    memset(tlsf, 0, sizeof tlsf);
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!all->selected[al])
            continue;
        allocator_json(&j, all, al, st);
        if (al == AL_TLSF)
            memcpy(tlsf, st, sizeof st);
    }
    json_arr_end(&j);
    if (all->selected[AL_TLSF])
        tlsf_json(&j, tlsf);
    if (all->selected[AL_MT_TLSF])
        mt_json(&j, all);
    return json_close(&j);
}
