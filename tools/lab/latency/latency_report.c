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
#include <math.h>
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
enum test_col {
    T_NAME,
    T_GROUP,
    T_PRIMITIVE,
    T_MEASURES,
    T_PLACEMENT,
    T_STATUS,
    T_WHY,
    T_SAMPLES,
    T_CLAMPED,
    T_UNSLEPT,
    T_AVG,
    T_MIN,
    T_MAX,
    T_P50,
    T_P99,
    T_P999,
    T_N,
    T_UNIT,
    T_NCOLS
};
static const table_col test_cols[T_NCOLS] = {
    [T_NAME] = {"name", "test", -27, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    [T_GROUP] = TABLE_JSON_ONLY("group"),
    [T_PRIMITIVE] = TABLE_JSON_ONLY("primitive"),
    [T_MEASURES] = TABLE_JSON_ONLY("measures"),
    [T_PLACEMENT] = TABLE_JSON_ONLY("placement"),
    [T_STATUS] = TABLE_JSON_ONLY("status"),
    [T_WHY] = TABLE_JSON_ONLY("why"),
    [T_SAMPLES] = TABLE_JSON_ONLY("samples"),
    [T_CLAMPED] = TABLE_JSON_ONLY("clamped"),
    [T_UNSLEPT] = TABLE_JSON_ONLY("unslept"),
    [T_AVG] = SUMMARY("avg", "avg"),
    [T_MIN] = SUMMARY("min", "min"),
    [T_MAX] = SUMMARY("max", "max"),
    [T_P50] = SUMMARY("p50", "p50"),
    [T_P99] = SUMMARY("p99", "p99"),
    [T_P999] = SUMMARY("p999", "p99.9"),
    [T_N] = TABLE_TEXT_ONLY("n", 7),
    [T_UNIT] = TABLE_TEXT_ONLY("  (us)", 0),
};

static void test_table(table *tb, const lat_report *r)
{
    table_init(tb, test_cols, T_NCOLS);
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
            table_nulls(tb, 7);
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

/* --- the published figures: JSON rows, and the text beside ours ------------ */

/* A row per system and test, as published (JSON published.rows). */
enum pub_col { P_SYSTEM, P_MODE, P_TEST, P_AVG, P_MIN, P_MAX, P_NCOLS };
static const table_col pub_cols[P_NCOLS] = {
    [P_SYSTEM] = TABLE_JSON_ONLY("system"), [P_MODE] = TABLE_JSON_ONLY("mode"),
    [P_TEST] = TABLE_JSON_ONLY("test"),     [P_AVG] = TABLE_JSON_ONLY("avg_us"),
    [P_MIN] = TABLE_JSON_ONLY("min_us"),    [P_MAX] = TABLE_JSON_ONLY("max_us"),
};

static void pub_table(table *t)
{
    table_init(t, pub_cols, P_NCOLS);
    for (size_t i = 0; i < NPUBLISHED; i++) {
        const published *p = &published_figures[i];
        table_row(t);
        table_str(t, p->system);
        table_str(t, strncmp(p->system, "VxWorks", 7) == 0 ? "kernel" : "user");
        table_str(t, p->test);
        table_num(t, p->avg);
        table_num(t, p->min);
        table_num(t, p->max);
    }
}

/* The text: a row per test of this run (the heap's have no published
 * figure), a column per system, each "avg / min / max" read from the
 * published table and the tests table (so the text shows what the JSON
 * holds). The figures of a column are its avg cell and the two hidden
 * cells after it; a column without them shows "-", this machine's its
 * status. */
enum beside_col {
    B_TEST,
    B_VX,
    B_VX_MIN,
    B_VX_MAX,
    B_XENO,
    B_XENO_MIN,
    B_XENO_MAX,
    B_HERE,
    B_HERE_MIN,
    B_HERE_MAX,
    B_STATUS,
    B_NCOLS
};

static void figures_text(const table_cell *row, int k, const char *none, char *buf, size_t n)
{
    if (row[k].kind == TABLE_NUM)
        snprintf(buf, n, "%.3f / %.3f / %.3f", row[k].v.num, row[k + 1].v.num, row[k + 2].v.num);
    else
        snprintf(buf, n, "%s", none);
}
static void vx_text(const table_cell *row, char *buf, size_t n)
{
    figures_text(row, B_VX, "-", buf, n);
}
static void xeno_text(const table_cell *row, char *buf, size_t n)
{
    figures_text(row, B_XENO, "-", buf, n);
}
static void here_text(const table_cell *row, char *buf, size_t n)
{
    figures_text(row, B_HERE, row[B_STATUS].v.str, buf, n);
}

static const table_col beside_cols[B_NCOLS] = {
    [B_TEST] = TABLE_TEXT_ONLY("test", -27),
    [B_VX] = {NULL, "VxWorks 7 (kernel)", -23, 0, 0, NULL, TABLE_ROW, NULL, vx_text},
    [B_XENO] = {NULL, "Xenomai 3.1 (user)", -23, 0, 0, NULL, TABLE_ROW, NULL, xeno_text},
    [B_HERE] = {NULL, "this machine", -23, 0, 0, NULL, TABLE_ROW, NULL, here_text},
};

/* Copies cells [k, k + n) of row i of src into the current row of dst. */
static void copy_cells(table *dst, const table *src, size_t i, size_t k, size_t n)
{
    for (size_t m = k; m < k + n; m++) {
        const table_cell *c = table_at(src, i, m);
        table_num(dst, c != NULL && c->kind == TABLE_NUM ? c->v.num : NAN);
    }
}

/* The published row of (system, test), or pub->nrows. */
static size_t pub_row(const table *pub, const char *system, const char *test)
{
    for (size_t i = 0; i < pub->nrows; i++)
        if (strcmp(table_at(pub, i, P_SYSTEM)->v.str, system) == 0 &&
            strcmp(table_at(pub, i, P_TEST)->v.str, test) == 0)
            return i;
    return pub->nrows;
}

static void beside_table(table *t, const table *tests, const table *pub)
{
    static const char *const sys[2] = {"VxWorks 7", "Xenomai 3.1"};
    table_init(t, beside_cols, B_NCOLS);
    for (size_t i = 0; i < tests->nrows; i++) {
        const char *name = table_at(tests, i, T_NAME)->v.str;
        if (strcmp(table_at(tests, i, T_GROUP)->v.str, "heap") == 0)
            continue;
        table_row(t);
        table_str(t, name);
        for (int k = 0; k < 2; k++)
            copy_cells(t, pub, pub_row(pub, sys[k], name), P_AVG, 3);
        copy_cells(t, tests, i, T_AVG, 3);
        table_str(t, table_at(tests, i, T_STATUS)->v.str);
    }
}

static void print_published(const lat_report *r)
{
    printf("\nbeside the published bmCtx* figures (avg / min / max us; %s):\n", PUBLISHED_PLATFORM);
    table tests, pub, beside;
    test_table(&tests, r);
    pub_table(&pub);
    beside_table(&beside, &tests, &pub);
    table_print(stdout, &beside);
    table_free(&beside);
    table_free(&pub);
    table_free(&tests);
}

/* --- a test's histogram: text and JSON from one fill ---------------------- */

/* A row per bucket, empty ones included: the JSON writes its counts as one
 * flat array (table_json_column), the text the buckets that hold samples,
 * each with a bar scaled to the fullest. */
enum hist_col { H_FROM, H_TO, H_COUNT, H_BAR, H_NCOLS };
static const table_col hist_cols[H_NCOLS] = {
    [H_FROM] = {NULL, "from", 11, 3, 0, " -", 0, NULL, NULL},
    [H_TO] = {NULL, "to", -9, 3, 0, NULL, 0, NULL, NULL},
    [H_COUNT] = {"count", "count", 8, 0, 0, NULL, 0, NULL, NULL},
    [H_BAR] = TABLE_TEXT_ONLY("", 0),
};

static void hist_table(table *ht, const lat_hist *h)
{
    static const char bars[] = "########################################";
    uint64_t top = 1;
    for (unsigned b = 0; b < h->nbuckets; b++)
        if (h->counts[b] > top)
            top = h->counts[b];
    table_init(ht, hist_cols, H_NCOLS);
    ht->indent = "  ";
    for (unsigned b = 0; b < h->nbuckets; b++) {
        double lo = h->first_ns + h->width_ns * b;
        int bar = (int)(40.0 * (double)h->counts[b] / (double)top + 0.999);
        table_row(ht);
        table_num(ht, us(lo));
        table_num(ht, us(lo + h->width_ns));
        table_u64(ht, h->counts[b]);
        table_str(ht, bars + (sizeof bars - 1 - (size_t)bar));
    }
}

static void print_histogram(const lat_test *t)
{
    const lat_hist *h = &t->hist;
    printf("\n%s: %zu samples, %.3f us buckets", t->name, t->n, us(h->width_ns));
    if (h->overflow > 0)
        printf(", %llu past p99.9 (max %.3f us)", (unsigned long long)h->overflow, us(t->st.max));
    printf("\n");
    table ht;
    hist_table(&ht, h);
    for (size_t b = 0; b < ht.nrows; b++)
        if (table_at(&ht, b, H_COUNT)->v.u64 != 0)
            table_print_row(stdout, &ht, b);
    table_free(&ht);
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
    printf("contended heap (HeapContended*): %s\n", r->contend_detail);
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
        table ht;
        hist_table(&ht, h);
        table_json_column(j, "counts", &ht, H_COUNT);
        table_free(&ht);
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

static int json_published(json *j)
{
    json_obj(j, "published");
    json_str(j, "source", "VxWorks 7 vs Xenomai 3.1 with the VxWorks bmCtx* benchmarks");
    json_str(j, "platform", PUBLISHED_PLATFORM);
    json_u64(j, "iterations", 20000);
    table t;
    pub_table(&t);
    int bad = table_json(j, "rows", &t, NULL, NULL);
    table_free(&t);
    json_obj_end(j);
    return bad;
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
    json_str(&j, "contended", r->contend_detail);
    bad |= json_published(&j);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
