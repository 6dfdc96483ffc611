// SPDX-License-Identifier: MIT
/*
 * random_report.c -- what `rtmem bench random` (the single run; the
 * sweep's report is random_sweep_report.c) prints and writes: per
 * allocator the minimum, median and spread of ns per free+alloc pair over
 * the interleaved rounds, per-op latency percentiles, the TLSF ratios and the
 * verdict on the speed target.
 *
 * Statistics use clean runs only (random_clean()); every run that is not
 * clean is still listed with its reason, so nothing disappears. The verdict
 * is PASS or FAIL per statistic; when it cannot be computed (a row missing
 * or without clean runs) it says NOT JUDGED and why, never PASS.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "common/summary.h"
#include "random/random.h"

#define TARGET_TEXT "TLSF avg <= 1/3 glibc and <= mimalloc"

/* Median of v[0..n) (sorts v; summary.h); NAN for n == 0. */
static double median(double *v, size_t n) { return n == 0 ? NAN : summarize(v, n).median; }

static lab_status row_status(const alloc_row *row, uint64_t runs)
{
    if (row->missing)
        return LAB_NOT_INSTALLED;
    int error = 0, invalid = 0, refused = 0;
    for (uint64_t i = 0; i < runs; i++) {
        const random_result *r = &row->runs[i];
        error |= !r->ok || !r->heap_ok;
        invalid |= r->ok && !r->valid;
        refused |= r->refused != 0;
    }
    return error ? LAB_ERROR : invalid ? LAB_INVALID : refused ? LAB_REFUSED : LAB_OK;
}

static void summarise_row(alloc_row *row, uint64_t runs)
{
    double *v = calloc((size_t)runs, sizeof *v);
    double *lat = calloc((size_t)runs, sizeof *lat);
    row->status = row_status(row, runs);
    row->clean = row->refused = 0;
    row->alloc_worst = row->free_worst = NAN;
    for (uint64_t i = 0; i < runs && v != NULL; i++) {
        const random_result *r = &row->runs[i];
        row->refused += r->refused;
        if (!random_clean(r))
            continue;
        v[row->clean++] = r->ns_per_pair;
        if (!(r->alloc_ns[LAT_MAX] <= row->alloc_worst))
            row->alloc_worst = r->alloc_ns[LAT_MAX];
        if (!(r->free_ns[LAT_MAX] <= row->free_worst))
            row->free_worst = r->free_ns[LAT_MAX];
    }
    size_t n = (size_t)row->clean;
    row->min = n ? v[0] : NAN;
    row->max = n ? v[0] : NAN;
    for (size_t i = 0; i < n; i++) {
        row->min = fmin(row->min, v[i]);
        row->max = fmax(row->max, v[i]);
    }
    row->median = median(v, n);
    row->spread = n ? row->max / row->min : NAN;
    for (int s = 0; s < LAT_COUNT && lat != NULL; s++) {
        for (int which = 0; which < 2; which++) {
            size_t k = 0;
            for (uint64_t i = 0; i < runs; i++)
                if (random_clean(&row->runs[i]))
                    lat[k++] = which ? row->runs[i].free_ns[s] : row->runs[i].alloc_ns[s];
            (which ? row->free_med : row->alloc_med)[s] = median(lat, k);
        }
    }
    free(v);
    free(lat);
}

void random_summarise(random_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++)
        summarise_row(&b->rows[i], b->o->runs);
}

static const alloc_row *find_row(const random_bench *b, const char *name)
{
    for (size_t i = 0; i < b->nrows; i++)
        if (strcmp(b->rows[i].name, name) == 0)
            return &b->rows[i];
    return NULL;
}

/* --- the verdict --------------------------------------------------------- */

typedef struct ratio {
    double value;     /* NAN when it cannot be computed */
    char why_not[96]; /* why, then                      */
} ratio;

static ratio tlsf_ratio(const random_bench *b, const char *peer_name, int use_min)
{
    ratio r = {NAN, ""};
    const alloc_row *t = find_row(b, "tlsf"), *p = find_row(b, peer_name);
    if (t == NULL || p == NULL)
        snprintf(r.why_not, sizeof r.why_not, "%s not measured", t == NULL ? "tlsf" : peer_name);
    else if (p->missing)
        snprintf(r.why_not, sizeof r.why_not, "%s not installed", peer_name);
    else if (t->clean == 0 || p->clean == 0)
        snprintf(r.why_not, sizeof r.why_not, "no clean %s run",
                 t->clean == 0 ? "tlsf" : peer_name);
    else
        r.value = use_min ? t->min / p->min : t->median / p->median;
    return r;
}

/* "PASS", "FAIL" or "NOT JUDGED" for one statistic; detail gets the line. */
static const char *verdict(const random_bench *b, int use_min, char *detail, size_t n)
{
    ratio g = tlsf_ratio(b, "glibc", use_min), m = tlsf_ratio(b, "mimalloc", use_min);
    char gs[128], ms[128];
    if (isnan(g.value))
        snprintf(gs, sizeof gs, "TLSF/glibc n/a (%s)", g.why_not);
    else
        snprintf(gs, sizeof gs, "TLSF/glibc %.3f <= 0.333: %s", g.value,
                 g.value <= 1.0 / 3.0 ? "yes" : "NO");
    if (isnan(m.value))
        snprintf(ms, sizeof ms, "TLSF/mimalloc n/a (%s)", m.why_not);
    else
        snprintf(ms, sizeof ms, "TLSF/mimalloc %.3f <= 1: %s", m.value,
                 m.value <= 1.0 ? "yes" : "NO");
    snprintf(detail, n, "%s; %s", gs, ms);
    int fail = (!isnan(g.value) && g.value > 1.0 / 3.0) || (!isnan(m.value) && m.value > 1.0);
    if (fail)
        return "FAIL";
    return isnan(g.value) || isnan(m.value) ? "NOT JUDGED" : "PASS";
}

/* --- text ---------------------------------------------------------------- */

static void print_header(const random_bench *b)
{
    const random_opts *o = b->o;
    machine_print(stdout, &b->m);
    printf("== rtmem bench random: the TLSF/xvmalloc/zsmalloc study's random-replace loop\n");
    printf("slots %llu, sizes [%llu, %llu) bytes, %llu iterations per pass, %llu interleaved "
           "rounds, seed %llu (round r uses seed+r-1)\n",
           (unsigned long long)o->slots, (unsigned long long)o->min, (unsigned long long)o->max,
           (unsigned long long)o->iterations, (unsigned long long)o->runs,
           (unsigned long long)o->seed);
    printf("clock: %s\n", b->clock_text);
    printf("rtm heaps (tlsf, ...): rtm_heap_create(name) over a pre-faulted region of %llu "
           "bytes (%s, whole pages)\n",
           (unsigned long long)b->region, o->tlsf_region ? "--tlsf-region" : "slots x max x 2");
    printf("every allocated block's first byte is written, inside the timed alloc, for every "
           "allocator\n");
    printf("%s\n", b->rt_note);
    if (b->env_note[0])
        printf("%s\n", b->env_note);
}

/* The first run that completed, for the library's self-description. */
static const random_result *first_ok(const alloc_row *row, uint64_t runs)
{
    for (uint64_t i = 0; !row->missing && i < runs; i++)
        if (row->runs[i].ok)
            return &row->runs[i];
    return NULL;
}

/* The library as the text names it: where it came from, and its version. */
static void library_text(const alloc_row *row, uint64_t runs, char *buf, size_t n)
{
    const random_result *any = first_ok(row, runs);
    const char *lib = row->peer == NULL ? "(rtmem, linked in)"
                      : row->missing    ? "(no library found)"
                      : row->lib[0]     ? row->lib
                      : any != NULL     ? any->from
                                        : "";
    if (any != NULL && any->version[0] != '\0')
        snprintf(buf, n, "%s [%s]", lib, any->version);
    else
        snprintf(buf, n, "%s", lib);
}

/* --- the throughput table: text and JSON from one fill ------------------- */

#define PAIR(key, head, w)                                                                         \
    {                                                                                              \
        key, head, w, 2, 0, NULL, 0, "ns_per_pair", NULL                                           \
    }
/* One row per allocator, in the JSON's key order; the per-op latency and
 * the runs follow in JSON (json_row_extra), the text shows them apart. */
static const table_col throughput_cols[] = {
    {"name", "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    {"status", "status", -13, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("library"),
    TABLE_JSON_ONLY("version"),
    PAIR("min", "min", 9),
    PAIR("median", "median", 9),
    PAIR("max", "max", 9),
    PAIR("spread", "spread", 7),
    {"clean_runs", "clean", 6, 0, 0, NULL, 0, "ns_per_pair", NULL},
    {NULL, NULL, 0, 0, 0, NULL, TABLE_OF, NULL, NULL}, /* of the runs */
    {"refused", "refused", 8, 0, 0, NULL, 0, NULL, NULL},
    TABLE_TEXT_ONLY("library", 0),
};

static void throughput_table(table *t, const random_bench *b)
{
    table_init(t, throughput_cols, sizeof throughput_cols / sizeof throughput_cols[0]);
    for (size_t i = 0; i < b->nrows; i++) {
        const alloc_row *row = &b->rows[i];
        const random_result *any = first_ok(row, b->o->runs);
        char lib[PATH_MAX + 128];
        library_text(row, b->o->runs, lib, sizeof lib);
        table_row(t);
        table_str(t, row->name);
        table_str(t, lab_status_name(row->status));
        table_str(t, row->peer == NULL ? "rtmem" : row->missing ? NULL : row->lib);
        table_str(t, any != NULL ? any->version : NULL);
        table_num(t, row->min);
        table_num(t, row->median);
        table_num(t, row->max);
        table_num(t, row->spread);
        table_u64(t, row->clean);
        table_u64(t, b->o->runs);
        table_u64(t, row->refused);
        table_str(t, lib);
    }
}

static void print_throughput(const random_bench *b)
{
    printf("\nns per free+alloc pair (throughput pass: loop time / iterations, no per-op "
           "clocks)\n");
    table t;
    throughput_table(&t, b);
    table_print(stdout, &t);
    table_free(&t);
}

static void print_problems(const random_bench *b)
{
    int any = 0;
    for (size_t i = 0; i < b->nrows; i++) {
        const alloc_row *row = &b->rows[i];
        for (uint64_t k = 0; !row->missing && k < b->o->runs; k++) {
            const random_result *r = &row->runs[k];
            if (random_clean(r))
                continue;
            if (!any)
                printf("\nruns left out of the statistics:\n");
            any = 1;
            printf("  %s round %llu: ", row->name, (unsigned long long)k + 1);
            if (!r->ok)
                printf("error: %s\n", r->why);
            else if (!r->valid)
                printf("invalid: %s\n", r->why);
            else if (!r->heap_ok)
                printf("heap check failed: %s\n", r->why);
            else
                printf("%llu allocations refused (ns/pair %.2f not comparable)\n",
                       (unsigned long long)r->refused, r->ns_per_pair);
        }
    }
}

/* Per-op latency: two rows per allocator (alloc, free), each column the
 * median over clean runs of that run's value. JSON: a row's members in the
 * allocator's (or a run's) "alloc" and "free" objects (lat_json); the
 * headers are random_child.c's lat_names. */
static const table_col lat_cols[] = {
    {NULL, "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_TEXT_ONLY("op", -5),
    {"p50", "p50", 8, 1, 0, NULL, 0, NULL, NULL},
    {"p99", "p99", 8, 1, 0, NULL, 0, NULL, NULL},
    {"p999", "p99.9", 8, 1, 0, NULL, 0, NULL, NULL},
    {"p9999", "p99.99", 8, 1, 0, NULL, 0, NULL, NULL},
    {"max", "max", 8, 1, 0, NULL, 0, NULL, NULL},
    {"mean", "mean", 8, 1, 0, NULL, 0, NULL, NULL},
    {"worst_max", "worst max", 10, 1, 0, NULL, TABLE_OPTIONAL, NULL, NULL},
};

/* The alloc row then the free row of one allocator or run (worst: NAN in a
 * run, which has no worst over runs); note, when not NULL, the alloc row's. */
static void lat_rows(table *t, const char *name, const double *alloc, double alloc_worst,
                     const double *free_, double free_worst, const char *note)
{
    for (int op = 0; op < 2; op++) {
        table_row(t);
        table_str(t, op == 0 ? name : "");
        table_str(t, op == 0 ? "alloc" : "free");
        for (int s = 0; s < LAT_COUNT; s++)
            table_num(t, op == 0 ? alloc[s] : free_[s]);
        table_num(t, op == 0 ? alloc_worst : free_worst);
        if (op == 0 && note != NULL)
            table_note(t, note);
    }
}

/* Rows 2i, 2i+1: allocator i; one without clean runs shows its status. */
static void latency_table(table *t, const random_bench *b)
{
    table_init(t, lat_cols, sizeof lat_cols / sizeof lat_cols[0]);
    for (size_t i = 0; i < b->nrows; i++) {
        const alloc_row *row = &b->rows[i];
        lat_rows(t, row->name, row->alloc_med, row->alloc_worst, row->free_med, row->free_worst,
                 row->clean == 0 ? lab_status_name(row->status) : NULL);
    }
}

static void print_latency(const random_bench *b)
{
    printf("\nper-op latency in ns (latency pass: clock read around each call, clock cost "
           "subtracted;\neach column is the median over clean runs of that run's value; "
           "worst max is the largest over clean runs)\n");
    table t;
    latency_table(&t, b);
    table_print_header(stdout, &t);
    for (size_t i = 0; i < b->nrows; i++) {
        table_print_row(stdout, &t, 2 * i);
        if (b->rows[i].clean > 0)
            table_print_row(stdout, &t, 2 * i + 1);
    }
    table_free(&t);
}

static void print_ratio_line(const random_bench *b, const char *peer_name)
{
    ratio med = tlsf_ratio(b, peer_name, 0), min = tlsf_ratio(b, peer_name, 1);
    char label[32];
    snprintf(label, sizeof label, "TLSF / %s", peer_name);
    printf("%-18s", label);
    if (isnan(med.value))
        printf(" %14s %14s  (%s)\n", "n/a", "n/a", med.why_not);
    else
        printf(" %14.3f %14.3f\n", med.value, min.value);
}

static void print_verdict(const random_bench *b)
{
    printf("\nratios of ns/pair   from medians  from minimums\n");
    print_ratio_line(b, "glibc");
    print_ratio_line(b, "mimalloc");
    char detail[300];
    printf("\nspeed target \"%s\" (ns per free+alloc pair):\n", TARGET_TEXT);
    const char *v = verdict(b, 0, detail, sizeof detail);
    printf("  verdict from medians:  %s  (%s)\n", v, detail);
    v = verdict(b, 1, detail, sizeof detail);
    printf("  verdict from minimums: %s  (%s)\n", v, detail);
}

void random_print(const random_bench *b)
{
    print_header(b);
    print_throughput(b);
    print_problems(b);
    print_latency(b);
    print_verdict(b);
    fflush(stdout);
}

/* --- JSON ------------------------------------------------------------------ */

/* "alloc": {...}, "free": {...} from rows row0 and row0 + 1 of lat. */
static void lat_json(json *j, const table *lat, size_t row0)
{
    json_obj(j, "alloc");
    table_json_cells(j, lat, row0);
    json_obj_end(j);
    json_obj(j, "free");
    table_json_cells(j, lat, row0 + 1);
    json_obj_end(j);
}

static void json_run(json *j, const random_result *r, uint64_t round)
{
    json_obj(j, NULL);
    json_u64(j, "round", round + 1);
    json_bool(j, "ok", r->ok);
    json_bool(j, "valid", r->valid);
    json_bool(j, "clean", random_clean(r));
    json_num(j, "ns_per_pair", r->ok ? r->ns_per_pair : NAN);
    json_u64(j, "refused", r->refused);
    json_str(j, "why", r->why);
    json_str(j, "malloc_from", r->from);
    table lat;
    table_init(&lat, lat_cols, sizeof lat_cols / sizeof lat_cols[0]);
    lat_rows(&lat, "", r->alloc_ns, NAN, r->free_ns, NAN, NULL);
    lat_json(j, &lat, 0);
    table_free(&lat);
    json_obj_end(j);
}

/* What a row holds beyond its throughput columns: its per-op latency rows,
 * the runs. */
typedef struct row_extra {
    const random_bench *b;
    table lat; /* latency_table() */
} row_extra;

static void json_row_extra(json *j, size_t i, void *ctx)
{
    const row_extra *x = ctx;
    const random_bench *b = x->b;
    const alloc_row *row = &b->rows[i];
    lat_json(j, &x->lat, 2 * i);
    json_arr(j, "runs");
    for (uint64_t k = 0; !row->missing && k < b->o->runs; k++)
        json_run(j, &row->runs[k], k);
    json_arr_end(j);
}

static void json_params(json *j, const random_bench *b)
{
    const random_opts *o = b->o;
    json_obj(j, "params");
    json_u64(j, "slots", o->slots);
    json_u64(j, "iterations", o->iterations);
    json_u64(j, "min", o->min);
    json_u64(j, "max", o->max);
    json_u64(j, "runs", o->runs);
    json_u64(j, "seed", o->seed);
    json_bool(j, "quick", o->quick);
    json_obj_end(j);
    json_obj(j, "clock");
    json_str(j, "description", b->clock_text);
    json_num(j, "ns_per_tick", b->tick_ns);
    json_num(j, "cost_ns", b->cost_ns);
    json_obj_end(j);
    json_u64(j, "tlsf_region_bytes", b->region);
    json_bool(j, "tlsf_region_given", o->tlsf_region != 0);
}

static void json_verdict(json *j, const random_bench *b)
{
    json_obj(j, "ratios");
    static const char *const peers_[2] = {"glibc", "mimalloc"};
    for (int p = 0; p < 2; p++) {
        char key[32];
        snprintf(key, sizeof key, "tlsf_%s", peers_[p]);
        json_obj(j, key);
        json_num(j, "median", tlsf_ratio(b, peers_[p], 0).value);
        json_num(j, "min", tlsf_ratio(b, peers_[p], 1).value);
        json_obj_end(j);
    }
    json_obj_end(j);
    char detail[300];
    json_obj(j, "verdict");
    json_str(j, "target", TARGET_TEXT);
    json_str(j, "median", verdict(b, 0, detail, sizeof detail));
    json_str(j, "median_detail", detail);
    json_str(j, "min", verdict(b, 1, detail, sizeof detail));
    json_str(j, "min_detail", detail);
    json_obj_end(j);
}

int random_write_json(const random_bench *b, const char *path)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "bench random");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &b->m);
    json_str(&j, "rt_setup", b->rt_note);
    json_str(&j, "mode", "single");
    json_params(&j, b);
    table t;
    row_extra x = {.b = b};
    throughput_table(&t, b);
    latency_table(&x.lat, b);
    int bad = table_json(&j, "allocators", &t, json_row_extra, &x);
    table_free(&x.lat);
    table_free(&t);
    json_verdict(&j, b);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
