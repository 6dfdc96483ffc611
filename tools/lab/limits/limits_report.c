// SPDX-License-Identifier: MIT
/*
 * limits_report.c -- what `rtmem limits` says: the aggregation of timing
 * runs, the text tables and the JSON (docs/schema/limits.schema.json), with
 * the published figures of the Linux memmax/memtim kernel modules beside ours
 * (docs/METHODS.md).
 *
 * Those figures are Linux kernel allocators (kmalloc, __get_free_pages,
 * vmalloc) on 2009-2011 machines, measured by kernel modules; ours are user
 * space allocators on this machine. They are printed as another system's
 * published numbers, for orientation, never as a target: the closest
 * analogues are slab/malloc for kmalloc, buddy for __get_free_pages, and
 * mmap (MAP_POPULATE for the timing) for vmalloc.
 *
 * Repeated runs are summarised the lab's way (summary.h): per (allocator,
 * size) the median of each run is one value, and the report gives their
 * minimum, median and spread max/min; p99 and mean are medians over runs,
 * min and max are over every sample of every run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "limits/limits_cmd.h"
#include "common/summary.h"

/* --- the memmax/memtim modules' published figures ------------------------ */

#define SEED_SOURCE                                                                                \
    "O. Tsiliuric, \"Linux kernel modules\", appendix G (memmax.c, memtim.c), "                    \
    "Linux kernel allocators measured by kernel modules"

/* memmax: last size that succeeded and the first that failed, doubling from
 * one page, on three machines. */
typedef struct seed_max {
    const char *system;
    uint64_t ram_kb;
    const char *allocator;
    uint64_t last_ok, first_fail;
} seed_max;

#define MiB (UINT64_C(1) << 20)
static const seed_max seed_memmax[] = {
    {"2.6.32.9-70.fc12.i686.PAE", 2053828, "kmalloc", 4 * MiB, 8 * MiB},
    {"2.6.32.9-70.fc12.i686.PAE", 2053828, "__get_free_pages", 4 * MiB, 8 * MiB},
    {"2.6.32.9-70.fc12.i686.PAE", 2053828, "vmalloc", 32 * MiB, 64 * MiB},
    {"2.6.18-92.el5", 255600, "kmalloc", MiB / 8, MiB / 4},
    {"2.6.18-92.el5", 255600, "__get_free_pages", 4 * MiB, 8 * MiB},
    {"2.6.18-92.el5", 255600, "vmalloc", 128 * MiB, 256 * MiB},
    {"2.6.35.13-92.fc14.x86_64", 4047192, "kmalloc", 4 * MiB, 8 * MiB},
    {"2.6.35.13-92.fc14.x86_64", 4047192, "__get_free_pages", 4 * MiB, 8 * MiB},
    {"2.6.35.13-92.fc14.x86_64", 4047192, "vmalloc", 2048 * MiB, 4096 * MiB},
};
#define SEED_MEMMAX_N (sizeof seed_memmax / sizeof seed_memmax[0])

/* memtim: mean rdtsc cycles over 1024 allocations (each freed at once),
 * rdtsc's own cost subtracted; one machine. */
typedef struct seed_tim {
    uint64_t bytes;
    unsigned kmalloc, gfp, vmalloc;
} seed_tim;

#define SEED_TIM_SYSTEM "2.6.32.9-70.fc12.i686.PAE, 2 GB RAM (CPU not named)"
#define SEED_TIM_METHOD                                                                            \
    "mean rdtsc cycles of 1024 allocations, each freed at once, schedule() before each, "          \
    "rdtsc cost (mean of 1024 empty pairs) subtracted; __get_free_pages was asked for "            \
    "order one above the size's (the module's order count starts at 1)"
static const seed_tim seed_memtim[] = {
    {5, 143, 890, 152552},     {1000, 146, 438, 210210},    {4096, 181, 877, 59626},
    {65536, 1157, 940, 84129}, {262000, 8674, 4730, 55612}, {262144, 2151, 2382, 52026},
};
#define SEED_MEMTIM_N (sizeof seed_memtim / sizeof seed_memtim[0])

static const seed_tim *seed_tim_for(uint64_t bytes)
{
    for (size_t i = 0; i < SEED_MEMTIM_N; i++)
        if (seed_memtim[i].bytes == bytes)
            return &seed_memtim[i];
    return NULL;
}

/* --- names and numbers -------------------------------------------------- */

static const char *kind_name(lim_kind k)
{
    switch (k) {
    case LIM_RTM:
        return "rtm";
    case LIM_MALLOC:
        return "malloc";
    case LIM_MMAP:
        return "mmap";
    case LIM_MMAP_POPULATE:
        return "mmap-populate";
    }
    return "?";
}

/* "64 MiB" when v is a whole number of KiB/MiB/GiB/TiB, else the bytes. */
static const char *fmt_bytes(uint64_t v, char *buf, size_t n)
{
    static const char *const unit[] = {"TiB", "GiB", "MiB", "KiB"};
    for (unsigned i = 0; i < 4; i++) {
        unsigned shift = 40u - 10u * i;
        uint64_t one = UINT64_C(1) << shift;
        if (v >= one && v % one == 0) {
            snprintf(buf, n, "%llu %s", (unsigned long long)(v >> shift), unit[i]);
            return buf;
        }
    }
    snprintf(buf, n, "%llu", (unsigned long long)v);
    return buf;
}

/* --- aggregation -------------------------------------------------------- */

static double median_of(double *v, size_t n) { return summarize(v, n).median; }

lim_agg limits_aggregate(const limits_bench *b, const lim_row *row, size_t k)
{
    lim_agg a;
    memset(&a, 0, sizeof a);
    a.status = row->status == LAB_OK || row->status == LAB_ERROR ? LAB_NA : row->status;
    if (row->status == LAB_NOT_INSTALLED || row->status == LAB_INVALID)
        return a;
    size_t runs = (size_t)b->o->runs, m = 0;
    double *med = calloc(3 * runs, sizeof *med), *p99 = med + runs, *mean = med + 2 * runs;
    if (med == NULL) {
        a.status = LAB_ERROR;
        a.why = "out of memory";
        return a;
    }
    for (size_t r = 0; r < runs; r++) {
        const lim_time_run *run = &row->runs[r];
        const lim_sample *s = &run->size[k];
        if (!run->done || (s->status == LAB_ERROR && !run->heap_ok)) {
            a.status = LAB_ERROR; /* the run failed as a whole: say why */
            a.why = run->heap_why;
            continue;
        }
        if (s->status != LAB_OK) {
            if (a.status != LAB_ERROR && (s->status == LAB_NA || s->status == LAB_ERROR)) {
                a.status = s->status;
                a.why = s->why;
            }
            continue;
        }
        a.batch = m == 0 ? s->batch : a.batch;
        a.min = m == 0 || (double)s->min < a.min ? (double)s->min : a.min;
        a.max = (double)s->max > a.max ? (double)s->max : a.max;
        a.n += s->n;
        a.refused += s->refused;
        med[m] = (double)s->p50;
        p99[m] = (double)s->p99;
        mean[m] = (double)s->mean;
        m++;
    }
    a.runs = m;
    if (m > 0 && a.status != LAB_ERROR) {
        summary sm = summarize(med, m);
        a.status = LAB_OK;
        a.med_min = sm.min;
        a.med_med = sm.median;
        a.med_max = sm.max;
        a.med_spread = sm.spread;
        a.p99 = median_of(p99, m);
        a.mean = median_of(mean, m);
    }
    free(med);
    return a;
}

/* --- text ---------------------------------------------------------------- */

static double ram_swap(const limits_bench *b)
{
    return (double)(b->vm.mem_total + b->vm.swap_total);
}

/* exact / region for an rtm heap, exact / (RAM + swap) otherwise; < 0 when
 * there is nothing to divide. */
static double largest_ratio(const limits_bench *b, const lim_row *row)
{
    const lim_largest *l = &row->largest;
    if (l->status != LAB_OK)
        return -1;
    if (row->kind == LIM_RTM)
        return (double)l->probe.exact / (double)b->o->region;
    return ram_swap(b) > 0 ? (double)l->probe.exact / ram_swap(b) : -1;
}

/* --- the memmax module's published table: text and JSON from one fill -- */

static void bytes_text(const table_cell *c, char *buf, size_t n)
{
    if (c->kind == TABLE_U64)
        fmt_bytes(c->v.u64, buf, n);
    else
        snprintf(buf, n, "-");
}

static const table_col memmax_cols[] = {
    {"kernel", "kernel", -28, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    {"ram_kb", "RAM", -10, 0, 1024, " MB", 0, NULL, NULL},
    {"allocator", "allocator", -18, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    {"last_ok_bytes", "last OK / first failure", 0, 0, 0, NULL, 0, NULL, bytes_text},
    {"first_fail_bytes", NULL, 0, 0, 0, NULL, TABLE_JOIN, NULL, bytes_text},
};

static void memmax_table(table *t)
{
    table_init(t, memmax_cols, sizeof memmax_cols / sizeof memmax_cols[0]);
    t->indent = "  ";
    for (size_t i = 0; i < SEED_MEMMAX_N; i++) {
        table_row(t);
        table_str(t, seed_memmax[i].system);
        table_u64(t, seed_memmax[i].ram_kb);
        table_str(t, seed_memmax[i].allocator);
        table_u64(t, seed_memmax[i].last_ok);
        table_u64(t, seed_memmax[i].first_fail);
    }
}

static void print_seed_memmax(void)
{
    printf("\n  published by the memmax module (Linux kernel allocators on other machines; figures "
           "of another\n  system, for orientation only): last OK / first failure, doubling from "
           "one page\n");
    table t;
    memmax_table(&t);
    table_print(stdout, &t);
    table_free(&t);
    printf("  analogues here: kmalloc ~ slab, malloc; __get_free_pages ~ buddy; vmalloc ~ mmap\n");
}

/* --- the largest-block table: text and JSON from one fill ---------------- */

/* A row per allocator; its JSON is the allocator's "largest" object (with
 * the doubling steps after the columns, json_largest). The text reads
 * some cells off others (TABLE_ROW): the first refusal is "none <= cap"
 * and the exact size a lower bound ">= ... (cap)" when the probe reached
 * the cap, the ratio is whichever of the two ratios applies, and the why
 * comes last, in brackets. */
enum largest_col {
    L_NAME,
    L_STATUS,
    L_WHY,
    L_START,
    L_CAP,
    L_LAST,
    L_FIRST,
    L_CAPPED,
    L_EXACT,
    L_TRIES,
    L_FREE,
    L_ARENA,
    L_CHECK,
    L_AGREE,
    L_RATIO_REGION,
    L_RATIO_RAM,
    L_NCOLS
};

static int capped(const table_cell *row)
{
    return row[L_CAPPED].kind == TABLE_BOOL && row[L_CAPPED].v.b;
}

static void first_fail_text(const table_cell *row, char *buf, size_t n)
{
    if (row[L_FIRST].kind == TABLE_U64)
        fmt_bytes(row[L_FIRST].v.u64, buf, n);
    else
        snprintf(buf, n, "%s", capped(row) ? "none <= cap" : "-");
}

static void exact_text(const table_cell *row, char *buf, size_t n)
{
    char bytes[32];
    if (row[L_EXACT].kind != TABLE_U64)
        snprintf(buf, n, "-");
    else if (capped(row))
        snprintf(buf, n, ">= %s (cap)", fmt_bytes(row[L_EXACT].v.u64, bytes, sizeof bytes));
    else
        snprintf(buf, n, "%llu", (unsigned long long)row[L_EXACT].v.u64);
}

/* exact / region for an rtm heap, exact / (RAM + swap) otherwise. */
static void ratio_text(const table_cell *row, char *buf, size_t n)
{
    const table_cell *r =
        row[L_RATIO_REGION].kind == TABLE_NUM ? &row[L_RATIO_REGION] : &row[L_RATIO_RAM];
    if (r->kind == TABLE_NUM)
        snprintf(buf, n, "%s%.6f", capped(row) ? ">= " : "", r->v.num);
    else
        snprintf(buf, n, "-");
}

/* Why a probe gave nothing, or why a pool's largest block is its block. */
static void why_text(const table_cell *row, char *buf, size_t n)
{
    int ok = strcmp(row[L_STATUS].v.str, lab_status_name(LAB_OK)) == 0;
    buf[0] = '\0';
    if (!ok && row[L_WHY].kind == TABLE_STR && row[L_WHY].v.str[0] != '\0')
        snprintf(buf, n, "(%s)", row[L_WHY].v.str);
    else if (ok && row[L_FREE].kind == TABLE_U64 && strncmp(row[L_NAME].v.str, "pool", 4) == 0)
        snprintf(buf, n, "(a pool gives exactly its block size)");
}

static const table_col largest_cols[L_NCOLS] = {
    [L_NAME] = TABLE_TEXT_ONLY("allocator", -16),
    [L_STATUS] = {"status", "status", -13, 0, 0, NULL, 0, NULL, NULL},
    [L_WHY] = {"why", "", 0, 0, 0, NULL, TABLE_ROW, NULL, why_text},
    [L_START] = TABLE_JSON_ONLY("start_bytes"),
    [L_CAP] = TABLE_JSON_ONLY("cap_bytes"),
    [L_LAST] = {"last_ok_bytes", "last OK", -10, 0, 0, NULL, 0, NULL, bytes_text},
    [L_FIRST] = {"first_fail_bytes", "first refusal", -13, 0, 0, NULL, TABLE_ROW, NULL,
                 first_fail_text},
    [L_CAPPED] = TABLE_JSON_ONLY("capped"),
    [L_EXACT] = {"exact_bytes", "exact largest", -20, 0, 0, NULL, TABLE_ROW, NULL, exact_text},
    [L_TRIES] = {"tries", "tries", 5, 0, 0, NULL, 0, NULL, NULL},
    [L_FREE] = {"largest_free_bytes", "largest_free", -12, 0, 0, NULL, 0, NULL, NULL},
    [L_ARENA] = TABLE_JSON_ONLY("arena_bytes"),
    [L_CHECK] = TABLE_JSON_ONLY("heap_check_ok"),
    [L_AGREE] = TABLE_JSON_ONLY("agrees_with_stats"),
    [L_RATIO_REGION] = {"ratio_to_region", "ratio", -12, 0, 0, NULL, TABLE_ROW, NULL, ratio_text},
    [L_RATIO_RAM] = TABLE_JSON_ONLY("ratio_to_ram_swap"),
};
/* The why (header "") last, after the figures. */
static const char *const largest_order[] = {"allocator",     "status",        "last OK",
                                            "first refusal", "exact largest", "largest_free",
                                            "ratio",         "tries",         ""};

static void u64_or_null(table *t, int present, uint64_t v)
{
    if (present)
        table_u64(t, v);
    else
        table_null(t);
}

static void largest_row(table *t, const limits_bench *b, const lim_row *row)
{
    const lim_largest *l = &row->largest;
    const probe_result *q = &l->probe;
    int ok = row->status != LAB_NOT_INSTALLED && l->status == LAB_OK;
    int rtm = ok && row->kind == LIM_RTM;
    double rr = largest_ratio(b, row);
    table_row(t);
    table_str(t, row->name);
    table_str(t, lab_status_name(row->status == LAB_NOT_INSTALLED ? LAB_NOT_INSTALLED : l->status));
    table_str(t, l->id.why);
    table_u64(t, 4096);
    table_u64(t, row->kind == LIM_RTM ? b->o->region : b->o->cap);
    u64_or_null(t, ok && q->last_ok != 0, q->last_ok);
    u64_or_null(t, ok && !q->capped, q->first_fail);
    table_bool(t, ok && q->capped);
    u64_or_null(t, ok, q->exact);
    table_u64(t, q->tries);
    u64_or_null(t, rtm, l->largest_free);
    u64_or_null(t, rtm, l->arena);
    if (rtm) {
        table_bool(t, l->check_ok);
        table_bool(t, q->exact == l->largest_free);
        table_num(t, rr);
    } else {
        table_nulls(t, 3); /* not an rtm heap: no check, no stats, no region */
    }
    table_num(t, ok && row->kind != LIM_RTM && rr >= 0 ? rr : NAN);
}

static void largest_table(table *t, const limits_bench *b)
{
    table_init(t, largest_cols, L_NCOLS);
    table_text_order(t, largest_order, sizeof largest_order / sizeof largest_order[0]);
    t->indent = "  ";
    for (size_t i = 0; i < b->nrows; i++)
        largest_row(t, b, &b->rows[i]);
}

static void print_largest(const limits_bench *b)
{
    char reg[32], cap[32];
    printf("\nLargest single block (the Linux memmax module's method, made exact): the request\n"
           "doubles from 4096 until refused, then a binary search between the last success and\n"
           "the first refusal. rtm heaps on a pre-faulted region of %s; malloc and\n"
           "mmap(MAP_NORESERVE) up to %s, blocks never touched.\n",
           fmt_bytes(b->o->region, reg, sizeof reg), fmt_bytes(b->o->cap, cap, sizeof cap));
    table t;
    largest_table(&t, b);
    table_print(stdout, &t);
    table_free(&t);
    printf("  ratio: exact / region for rtm heaps; exact / (MemTotal + SwapTotal) for malloc and "
           "mmap.\n  largest_free: rtm_heap_stats() of the fresh heap. vm.overcommit_memory=%d, "
           "MemTotal %.1f GiB, SwapTotal %.1f GiB, RLIMIT_AS %s.\n",
           b->vm.overcommit, (double)b->vm.mem_total / (double)(UINT64_C(1) << 30),
           (double)b->vm.swap_total / (double)(UINT64_C(1) << 30),
           b->vm.rlimit_as ? fmt_bytes(b->vm.rlimit_as, reg, sizeof reg) : "unlimited");
    if (b->vm.overcommit == 0)
        printf("  overcommit 0 (heuristic) refuses one mapping larger than RAM + swap, unless it "
               "is MAP_NORESERVE\n  (not counted): a malloc that maps without it stops near "
               "RAM + swap.\n");
    print_seed_memmax();
}

static const char *tick_unit(const limits_bench *b) { return b->clk.use_tsc ? "TSC ticks" : "ns"; }

/* --- ticks per allocation: a table per allocator, a row per size -------- */

/* The JSON's "timing" objects of one allocator; the text shows, per size,
 * that row of every allocator's table. An allocator with no figures for a
 * size shows its status and why. */
static const table_col timing_cols[] = {
    {NULL, "allocator", -16, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("bytes"),
    {"status", "status", -13, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("why"),
    TABLE_JSON_ONLY("runs"),
    TABLE_JSON_ONLY("batch"),
    TABLE_JSON_ONLY("samples"),
    {"min_ticks", "min", 8, 0, 0, NULL, 0, NULL, NULL},
    {"median", "median", 8, 0, 0, NULL, 0, "median_ticks", NULL},
    {"min", "(run medians)", -15, 0, 0, NULL, 0, "median_ticks", NULL},
    {"max", NULL, 0, 0, 0, NULL, TABLE_RANGE, "median_ticks", NULL},
    {"spread", NULL, 0, 0, 0, NULL, 0, "median_ticks", NULL},
    {"p99_ticks", "p99", 8, 0, 0, NULL, 0, NULL, NULL},
    {"max_ticks", "max", 10, 0, 0, NULL, 0, NULL, NULL},
    {"mean_ticks", "mean", 10, 1, 0, NULL, 0, NULL, NULL},
    {"median_ns", "median ns", 10, 1, 0, NULL, 0, NULL, NULL},
    {"refused", "refused", 8, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("p99_ns"),
    TABLE_JSON_ONLY("max_ns"),
};

static void timing_table(table *t, const limits_bench *b, const lim_row *row)
{
    table_init(t, timing_cols, sizeof timing_cols / sizeof timing_cols[0]);
    t->indent = "  ";
    double ns = b->clk.ns_per_tick;
    for (size_t k = 0; k < b->o->nsizes; k++) {
        lim_agg a = limits_aggregate(b, row, k);
        int ok = a.status == LAB_OK;
        table_row(t);
        table_str(t, row->name);
        table_u64(t, b->o->sizes[k]);
        table_str(t, lab_status_name(a.status));
        table_str(t, ok || a.why == NULL ? "" : a.why);
        table_u64(t, a.runs);
        table_u64(t, limits_batch(b->o, b->o->sizes[k]));
        table_u64(t, a.n);
        table_num(t, ok ? a.min : NAN);
        table_num(t, ok ? a.med_med : NAN);
        table_num(t, ok ? a.med_min : NAN);
        table_num(t, ok ? a.med_max : NAN);
        table_num(t, ok ? a.med_spread : NAN);
        table_num(t, ok ? a.p99 : NAN);
        table_num(t, ok ? a.max : NAN);
        table_num(t, ok ? a.mean : NAN);
        table_num(t, ok ? a.med_med * ns : NAN);
        table_u64(t, a.refused);
        table_num(t, ok ? a.p99 * ns : NAN);
        table_num(t, ok ? a.max * ns : NAN);
        if (!ok)
            table_note(t, a.why != NULL ? a.why : "");
    }
}

static void print_timing(const limits_bench *b)
{
    printf("\nTicks per allocation (the Linux memtim module's method): %llu timed calls per size\n"
           "and run, %llu runs interleaved across allocators, one untimed warm-up batch first;\n"
           "blocks kept live in batches, freed untimed.\n",
           (unsigned long long)b->o->count, (unsigned long long)b->o->runs);
    if (b->clk.use_tsc)
        printf("Unit: TSC ticks = reference cycles at the TSC's nominal rate (invariant TSC), not "
               "core cycles;\n%.5f ns per tick. ",
               b->clk.ns_per_tick);
    printf("Subtracted from every sample: the clock's own cost, %llu %s (clamped at 0).\n",
           (unsigned long long)b->clk.cost_ticks, tick_unit(b));
    printf("Empty intervals (two reads) last");
    for (size_t i = 0; i < b->nmodes; i++)
        printf("%s %llu (%.1f %%)", i ? "," : "", (unsigned long long)b->mode_ticks[i],
               100.0 * b->mode_share[i]);
    printf(" %s: figures within a step of these are quantised.\n", tick_unit(b));
    table *t = calloc(b->nrows ? b->nrows : 1, sizeof *t);
    if (t == NULL)
        return;
    for (size_t i = 0; i < b->nrows; i++)
        timing_table(&t[i], b, &b->rows[i]);
    for (size_t k = 0; k < b->o->nsizes; k++) {
        uint64_t bytes = b->o->sizes[k];
        printf("\nsize %llu bytes, %llu blocks live per batch\n", (unsigned long long)bytes,
               (unsigned long long)limits_batch(b->o, bytes));
        if (b->nrows > 0)
            table_print_header(stdout, &t[0]);
        for (size_t i = 0; i < b->nrows; i++)
            table_print_row(stdout, &t[i], k);
        const seed_tim *s = seed_tim_for(bytes);
        if (s != NULL)
            printf("  published by the memtim module (%s; another system's figures): mean cycles "
                   "kmalloc %u, __get_free_pages %u, vmalloc %u\n",
                   SEED_TIM_SYSTEM, s->kmalloc, s->gfp, s->vmalloc);
    }
    for (size_t i = 0; i < b->nrows; i++)
        table_free(&t[i]);
    free(t);
}

static void print_verdict(const limits_bench *b)
{
    size_t ok = 0, missing = 0, bad = 0, agree = 0, rtm = 0;
    for (size_t i = 0; i < b->nrows; i++) {
        const lim_row *r = &b->rows[i];
        ok += r->status == LAB_OK;
        missing += r->status == LAB_NOT_INSTALLED;
        bad += r->status == LAB_INVALID || r->status == LAB_ERROR;
        if (r->kind == LIM_RTM && r->largest.status == LAB_OK) {
            rtm++;
            agree += r->largest.probe.exact == r->largest.largest_free;
        }
    }
    printf("\nverdict: %zu allocators measured, %zu not installed, %zu invalid or failed; probe "
           "exact == rtm_heap_stats largest_free for %zu of %zu rtm heaps\n",
           ok, missing, bad, agree, rtm);
}

void limits_print(const limits_bench *b)
{
    printf("rtmem limits: the Linux memmax/memtim modules' largest-block and "
           "ticks-per-allocation probes\n");
    machine_print(stdout, &b->m);
    printf("clock: %s\nrt setup: %s\n", b->clock_text, b->rt_note);
    for (size_t i = 0; i < b->nrows; i++) {
        const lim_row *r = &b->rows[i];
        const lim_ident *id = &r->largest.id;
        if (r->kind == LIM_MALLOC && id->ran)
            printf("%s: malloc from %s%s%s\n", r->name, id->from, id->version[0] ? ", " : "",
                   id->version);
    }
    print_largest(b);
    print_timing(b);
    print_verdict(b);
}

/* --- JSON ---------------------------------------------------------------- */

static void json_opt_u64(json *j, const char *key, int present, uint64_t v)
{
    if (present)
        json_u64(j, key, v);
    else
        json_null(j, key);
}

/* The allocator's "largest" object: its row of the largest-block table,
 * then the doubling steps. */
static void json_largest(json *j, const limits_bench *b, const table *t, size_t i)
{
    const lim_row *row = &b->rows[i];
    const probe_result *q = &row->largest.probe;
    int ok = row->status != LAB_NOT_INSTALLED && row->largest.status == LAB_OK;
    json_obj(j, "largest");
    table_json_cells(j, t, i);
    json_arr(j, "steps");
    for (unsigned s = 0; ok && s < q->nsteps; s++) {
        json_obj(j, NULL);
        json_u64(j, "bytes", q->step_bytes[s]);
        json_bool(j, "ok", q->step_ok[s]);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

static void json_timing(json *j, const limits_bench *b, const lim_row *row)
{
    table t;
    timing_table(&t, b, row);
    table_json(j, "timing", &t, NULL, NULL);
    table_free(&t);
}

static void json_row(json *j, const limits_bench *b, const table *largest, size_t i)
{
    const lim_row *row = &b->rows[i];
    const lim_ident *id = &row->largest.id;
    json_obj(j, NULL);
    json_str(j, "name", row->name);
    json_str(j, "kind", kind_name(row->kind));
    json_str(j, "status", lab_status_name(row->status));
    json_str(j, "library", row->kind == LIM_RTM ? "rtmem" : row->lib[0] ? row->lib : NULL);
    json_str(j, "malloc_from", id->ran ? id->from : NULL);
    json_str(j, "version", id->ran && id->version[0] ? id->version : NULL);
    json_largest(j, b, largest, i);
    json_timing(j, b, row);
    json_obj_end(j);
}

static void json_published(json *j)
{
    json_obj(j, "published");
    json_str(j, "source", SEED_SOURCE);
    json_str(j, "note",
             "figures of other systems (Linux kernel allocators, 2009-2011 machines), for "
             "orientation; not comparable with this machine's figures");
    table t;
    memmax_table(&t);
    table_json(j, "memmax", &t, NULL, NULL);
    table_free(&t);
    json_obj(j, "memtim");
    json_str(j, "system", SEED_TIM_SYSTEM);
    json_str(j, "method", SEED_TIM_METHOD);
    json_arr(j, "rows");
    for (size_t i = 0; i < SEED_MEMTIM_N; i++) {
        json_obj(j, NULL);
        json_u64(j, "bytes", seed_memtim[i].bytes);
        json_u64(j, "kmalloc_cycles", seed_memtim[i].kmalloc);
        json_u64(j, "get_free_pages_cycles", seed_memtim[i].gfp);
        json_u64(j, "vmalloc_cycles", seed_memtim[i].vmalloc);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
    json_obj_end(j);
}

static void json_params(json *j, const limits_bench *b)
{
    const limits_opts *o = b->o;
    json_obj(j, "params");
    json_u64(j, "region_bytes", o->region);
    json_bool(j, "region_prefaulted", 1);
    json_arr_inline(j, "sizes");
    for (size_t i = 0; i < o->nsizes; i++)
        json_u64(j, NULL, o->sizes[i]);
    json_arr_end(j);
    json_u64(j, "count", o->count);
    json_u64(j, "runs", o->runs);
    json_u64(j, "cap_bytes", o->cap);
    json_u64(j, "probe_start_bytes", 4096);
    json_bool(j, "quick", o->quick);
    json_obj_end(j);
    json_obj(j, "vm");
    if (b->vm.overcommit >= 0)
        json_i64(j, "overcommit_memory", b->vm.overcommit);
    else
        json_null(j, "overcommit_memory");
    json_u64(j, "mem_total_bytes", b->vm.mem_total);
    json_u64(j, "swap_total_bytes", b->vm.swap_total);
    json_opt_u64(j, "rlimit_as_bytes", b->vm.rlimit_as != 0, b->vm.rlimit_as);
    json_obj_end(j);
    json_obj(j, "clock");
    json_str(j, "description", b->clock_text);
    json_str(j, "source", b->clk.use_tsc ? "tsc" : "monotonic");
    json_str(j, "tick_unit",
             b->clk.use_tsc ? "TSC ticks (reference cycles at the nominal rate)" : "nanoseconds");
    json_num(j, "ns_per_tick", b->clk.ns_per_tick);
    json_u64(j, "cost_ticks", b->clk.cost_ticks);
    json_num(j, "cost_ns", (double)b->clk.cost_ticks * b->clk.ns_per_tick);
    json_u64(j, "cost_min_ticks", b->clk.cost_min_ticks);
    json_arr(j, "empty_interval_modes");
    for (size_t i = 0; i < b->nmodes; i++) {
        json_obj(j, NULL);
        json_u64(j, "ticks", b->mode_ticks[i]);
        json_num(j, "share", b->mode_share[i]);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

int limits_write_json(const limits_bench *b, const char *path)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "limits");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &b->m);
    json_str(&j, "rt_setup", b->rt_note);
    json_params(&j, b);
    table largest;
    largest_table(&largest, b);
    json_arr(&j, "allocators");
    for (size_t i = 0; i < b->nrows; i++)
        json_row(&j, b, &largest, i);
    json_arr_end(&j);
    int bad = !table_ok(&largest);
    table_free(&largest);
    json_published(&j);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
