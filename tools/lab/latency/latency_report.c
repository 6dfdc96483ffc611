// SPDX-License-Identifier: MIT
/*
 * latency_report.c -- what `rtmem latency` prints and writes (latency.h):
 * the bmCtx* suite's table (avg / min / max us per test) with our
 * percentiles, the published VxWorks and Xenomai figures beside ours, a histogram per
 * test, and the --json file (docs/schema/latency.schema.json).
 *
 * The published figures (a comparison of VxWorks 7 and Xenomai 3.1 with the
 * bmCtx* suite, docs/METHODS.md) are kept here as data, exactly as printed
 * there (dual Cortex-A15 at 1.5 GHz, 20,000 iterations per test; VxWorks 7
 * in kernel mode, Xenomai 3.1 in user mode through the Alchemy API; VxWorks
 * ran without SMP, and Xenomai's event tests gave no figures).
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "latency/latency.h"

typedef struct published {
    const char *system; /* "VxWorks 7" or "Xenomai 3.1"    */
    const char *test;
    double avg, min, max; /* us */
} published;

static const published published_figures[] = {
    {"VxWorks 7", "bmCtxSemPend", 1.387, 0.162, 5.205},
    {"VxWorks 7", "bmCtxSemUnpend", 1.389, 0.162, 5.205},
    {"VxWorks 7", "bmCtxMsgQPend", 1.719, 0.325, 6.181},
    {"VxWorks 7", "bmCtxMsgQUnpend", 2.183, 0.487, 7.807},
    {"VxWorks 7", "bmCtxEventPend", 1.349, 0.000, 5.042},
    {"VxWorks 7", "bmCtxEventUnpend", 1.466, 0.162, 5.367},
    {"VxWorks 7", "bmCtxTaskSwitch", 0.975, 0.000, 4.635},
    {"Xenomai 3.1", "bmCtxSemPend", 3.597, 3.252, 6.345},
    {"Xenomai 3.1", "bmCtxSemUnpend", 3.735, 3.415, 7.482},
    {"Xenomai 3.1", "bmCtxMsgQPend", 4.228, 3.903, 6.833},
    {"Xenomai 3.1", "bmCtxMsgQUnpend", 5.368, 5.042, 8.622},
    {"Xenomai 3.1", "bmCtxTaskSwitch", 8.365, 0.326, 63.522},
    {"Xenomai 3.1", "CtxSmpAffinitySemUnPend", 3.826, 3.578, 8.296},
    {"Xenomai 3.1", "CtxSmpAffinityMsgQUnPend", 5.262, 4.879, 8.133},
    {"Xenomai 3.1", "CtxSmpNoAffinitySemUnPend", 3.766, 3.415, 6.181},
    {"Xenomai 3.1", "CtxSmpNoAffinityMsgQUnPend", 5.322, 5.042, 9.597},
};
#define NPUBLISHED (sizeof published_figures / sizeof published_figures[0])

static const char *const PUBLISHED_PLATFORM =
    "dual Cortex-A15 at 1.5 GHz, 2 GB; VxWorks 7 (kernel mode, SMP off) and Linux 4.19 + "
    "Xenomai 3.1 (user mode, Alchemy API); 20,000 iterations per test";

static double us(double ns) { return ns / 1000.0; }

static const published *published_for(const char *system, const char *test)
{
    for (size_t i = 0; i < NPUBLISHED; i++)
        if (strcmp(published_figures[i].system, system) == 0 &&
            strcmp(published_figures[i].test, test) == 0)
            return &published_figures[i];
    return NULL;
}

/* --- text ---------------------------------------------------------------------- */

/* --- the tests table: text and JSON from one fill ----------------------------- */

#define SUMMARY(key, head)                                                                         \
    {                                                                                              \
        key, head, 8, 3, 0, NULL, TABLE_OPTIONAL, "summary_us", NULL                               \
    }
/* One row per test, in the JSON's key order (summary_us only when the test
 * ran); the histogram and the task switch's parts follow in JSON
 * (json_test_extra), the text shows them apart. A test that did not run
 * shows its status and why in text. */
static const table_col test_cols[] = {
    {"name", "test", -27, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("group"),
    TABLE_JSON_ONLY("primitive"),
    TABLE_JSON_ONLY("measures"),
    TABLE_JSON_ONLY("placement"),
    TABLE_JSON_ONLY("status"),
    TABLE_JSON_ONLY("why"),
    TABLE_JSON_ONLY("samples"),
    TABLE_JSON_ONLY("clamped"),
    TABLE_JSON_ONLY("unslept"),
    SUMMARY("avg", "avg"),
    SUMMARY("min", "min"),
    SUMMARY("max", "max"),
    SUMMARY("p50", "p50"),
    SUMMARY("p99", "p99"),
    SUMMARY("p999", "p99.9"),
    TABLE_TEXT_ONLY("n", 7),
    TABLE_TEXT_ONLY("  (us)", 0),
};

static void test_table(table *tb, const lat_report *r)
{
    table_init(tb, test_cols, sizeof test_cols / sizeof test_cols[0]);
    for (size_t i = 0; i < r->ntests; i++) {
        const lat_test *t = &r->tests[i];
        const lat_stats *s = &t->st;
        int ok = t->status == LAB_OK;
        table_row(tb);
        table_str(tb, t->name);
        table_str(tb, t->group);
        table_str(tb, t->primitive);
        table_str(tb, t->measures);
        table_str(tb, t->placement);
        table_str(tb, lab_status_name(t->status));
        table_str(tb, t->why);
        table_u64(tb, ok ? t->n : 0);
        table_u64(tb, t->clamped);
        table_u64(tb, t->unslept);
        if (ok) {
            table_num(tb, us(s->avg));
            table_num(tb, us(s->min));
            table_num(tb, us(s->max));
            table_num(tb, us(s->p50));
            table_num(tb, us(s->p99));
            table_num(tb, us(s->p999));
            table_u64(tb, s->n);
        } else {
            for (int k = 0; k < 7; k++)
                table_null(tb);
        }
        table_str(tb, "");
        if (!ok) {
            char note[320];
            snprintf(note, sizeof note, "%s: %s", lab_status_name(t->status), t->why);
            table_note(tb, note);
        }
    }
}

static void print_table(const lat_report *r)
{
    table t;
    test_table(&t, r);
    printf("\n");
    table_print(stdout, &t);
    table_free(&t);
}

static void print_setups(const lat_report *r)
{
    printf("\nwhat each test hands over, and where:\n");
    for (size_t i = 0; i < r->ntests; i++) {
        const lat_test *t = &r->tests[i];
        printf("  %-27s %s\n  %-27s %s; %s\n", t->name, t->measures, "", t->primitive,
               t->placement);
        if (t->clamped > 0)
            printf("  %-27s %zu samples below the clock cost, counted as 0\n", "", t->clamped);
        if (t->unslept > 0)
            printf("  %-27s %zu iterations dropped: the waiter found the token and never slept\n",
                   "", t->unslept);
        if (t->has_tsw && t->status == LAB_OK)
            printf("  %-27s T median %.3f us, T_r %.3f, T_l %.3f, T_rt %.3f (medians)\n", "",
                   us(t->t_med_ns), us(t->raise_ns), us(t->lower_ns), us(t->readclock_ns));
    }
}

static void print_published(const lat_report *r)
{
    printf("\nbeside the published bmCtx* figures (avg / min / max us; %s):\n", PUBLISHED_PLATFORM);
    printf("%-27s %-23s %-23s %-23s\n", "test", "VxWorks 7 (kernel)", "Xenomai 3.1 (user)",
           "this machine");
    for (size_t i = 0; i < r->ntests; i++) {
        const lat_test *t = &r->tests[i];
        if (strcmp(t->group, "heap") == 0)
            continue;
        char cols[3][32];
        const char *sys[2] = {"VxWorks 7", "Xenomai 3.1"};
        for (int k = 0; k < 2; k++) {
            const published *p = published_for(sys[k], t->name);
            if (p != NULL)
                snprintf(cols[k], sizeof cols[k], "%.3f / %.3f / %.3f", p->avg, p->min, p->max);
            else
                snprintf(cols[k], sizeof cols[k], "-");
        }
        if (t->status == LAB_OK)
            snprintf(cols[2], sizeof cols[2], "%.3f / %.3f / %.3f", us(t->st.avg), us(t->st.min),
                     us(t->st.max));
        else
            snprintf(cols[2], sizeof cols[2], "%s", lab_status_name(t->status));
        printf("%-27s %-23s %-23s %-23s\n", t->name, cols[0], cols[1], cols[2]);
    }
}

static void print_histogram(const lat_test *t)
{
    const lat_hist *h = &t->hist;
    uint64_t top = 1;
    for (unsigned b = 0; b < h->nbuckets; b++)
        if (h->counts[b] > top)
            top = h->counts[b];
    printf("\n%s: %zu samples, %.3f us buckets", t->name, t->n, us(h->width_ns));
    if (h->overflow > 0)
        printf(", %llu past p99.9 (max %.3f us)", (unsigned long long)h->overflow, us(t->st.max));
    printf("\n");
    for (unsigned b = 0; b < h->nbuckets; b++) {
        if (h->counts[b] == 0)
            continue;
        double lo = h->first_ns + h->width_ns * b;
        int bar = (int)(40.0 * (double)h->counts[b] / (double)top + 0.999);
        printf("  %9.3f - %-9.3f %8llu %.*s\n", us(lo), us(lo + h->width_ns),
               (unsigned long long)h->counts[b], bar, "########################################");
    }
}

void lat_print(const lat_report *r)
{
    printf("rtmem latency: the VxWorks bmCtx* context-switch tests and the locked heap's lock "
           "handover\n");
    machine_print(stdout, r->m);
    printf("%s\n", r->rt_note);
    printf("clock: %s\n", r->clock_text);
    printf("%llu iterations per test (bmCtx* suite: 20000)%s; every wait times out after %llu ms\n",
           (unsigned long long)r->e->iterations, r->quick ? " [--quick]" : "",
           (unsigned long long)(r->e->timeout_ns / 1000000u));
    print_table(r);
    print_setups(r);
    printf("\nheap lock: %s\n", lat_heap_lock_note());
    printf("priority inheritance: %s: %s\n", r->pi_verdict, r->pi_detail);
    print_published(r);
    for (size_t i = 0; i < r->ntests; i++)
        if (r->tests[i].status == LAB_OK)
            print_histogram(&r->tests[i]);
}

/* --- JSON --------------------------------------------------------------------------- */

/* What a test's object holds beyond its table columns: the histogram,
 * the task switch's parts, the bound. */
static void json_test_extra(json *j, size_t i, void *ctx)
{
    const lat_test *t = &((const lat_report *)ctx)->tests[i];
    if (t->status == LAB_OK) {
        const lat_hist *h = &t->hist;
        json_obj(j, "histogram");
        json_num(j, "first_us", us(h->first_ns));
        json_num(j, "bucket_us", us(h->width_ns));
        json_arr_inline(j, "counts");
        for (unsigned b = 0; b < h->nbuckets; b++)
            json_u64(j, NULL, h->counts[b]);
        json_arr_end(j);
        json_u64(j, "overflow", h->overflow);
        json_obj_end(j);
    }
    if (t->has_tsw && t->status == LAB_OK) {
        json_obj(j, "task_switch");
        json_num(j, "t_median_us", us(t->t_med_ns));
        json_num(j, "raise_us", us(t->raise_ns));
        json_num(j, "lower_us", us(t->lower_ns));
        json_num(j, "readclock_us", us(t->readclock_ns));
        json_obj_end(j);
    }
    if (t->bound_ns > 0) {
        json_num(j, "bound_us", us(t->bound_ns));
        json_u64(j, "over_bound", t->over_bound);
    }
}

static void json_published(json *j)
{
    json_obj(j, "published");
    json_str(j, "source", "VxWorks 7 vs Xenomai 3.1 with the VxWorks bmCtx* benchmarks");
    json_str(j, "platform", PUBLISHED_PLATFORM);
    json_u64(j, "iterations", 20000);
    json_arr(j, "rows");
    for (size_t i = 0; i < NPUBLISHED; i++) {
        const published *p = &published_figures[i];
        json_obj(j, NULL);
        json_str(j, "system", p->system);
        json_str(j, "mode", strncmp(p->system, "VxWorks", 7) == 0 ? "kernel" : "user");
        json_str(j, "test", p->test);
        json_num(j, "avg_us", p->avg);
        json_num(j, "min_us", p->min);
        json_num(j, "max_us", p->max);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

static void json_params(json *j, const lat_report *r)
{
    const lat_env *e = r->e;
    json_obj(j, "params");
    json_u64(j, "iterations", e->iterations);
    json_bool(j, "quick", r->quick);
    json_i64(j, "cpu", e->cpu);
    json_i64(j, "other_cpu", e->other_cpu);
    json_num(j, "timeout_ms", (double)e->timeout_ns / 1e6);
    json_num(j, "settle_us", (double)e->settle_ns / 1e3);
    json_num(j, "spin_us", (double)e->spin_ns / 1e3);
    json_str(j, "algorithm", e->algorithm);
    json_u64(j, "buckets", e->buckets);
    json_obj_end(j);
}

int lat_write_json(const lat_report *r, const char *path, const char *command)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", command);
    json_u64(&j, "schema_version", 1);
    machine_json(&j, r->m);
    json_str(&j, "rt_setup", r->rt_note);
    json_bool(&j, "fifo", r->e->fifo);
    json_params(&j, r);
    json_obj(&j, "clock");
    json_str(&j, "description", r->clock_text);
    json_num(&j, "ns_per_tick", r->e->clk.ns_per_tick);
    json_num(&j, "cost_ns", (double)r->e->clk.cost_ticks * r->e->clk.ns_per_tick);
    json_obj_end(&j);
    table t;
    test_table(&t, r);
    int bad = table_json(&j, "tests", &t, json_test_extra, (void *)r);
    table_free(&t);
    json_str(&j, "heap_lock", lat_heap_lock_note());
    json_obj(&j, "priority_inheritance");
    json_str(&j, "verdict", r->pi_verdict);
    json_str(&j, "detail", r->pi_detail);
    json_num(&j, "spin_us", (double)r->e->spin_ns / 1e3);
    json_obj_end(&j);
    json_published(&j);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
