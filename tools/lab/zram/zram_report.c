// SPDX-License-Identifier: MIT
/*
 * zram_report.c -- what `rtmem bench zram` prints and writes (zram.h):
 * per allocator and point the min and median ns per free+alloc pair over
 * rounds, the refusals, and the memory efficiency (bytes stored / held).
 *
 * Text is a summary by size band of window starts (not one row per window):
 * per band the mean of the windows' median times over windows without a
 * refusal, how many windows were marked, and the mean efficiency; then the
 * zram case alone. JSON has every point as parallel arrays per allocator, so
 * the report draws the two figures (time vs x, efficiency vs x) with one
 * plot() per allocator. A marked point never has a time (null; "R" in text).
 * Both come from tables filled once (a row per allocator and band, and per
 * allocator and point): JSON from table.h, the text band x allocator from
 * table_pivot.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "common/table_pivot.h"
#include "common/summary.h"
#include "zram/zram.h"

/* --- statistics ----------------------------------------------------------- */

static int point_ok(const zram_run *run, size_t i)
{
    return run->ran && run->valid && run->pts[i].done && run->pts[i].ok;
}

static lab_status status_of(const zram_row *row, uint64_t runs, size_t npts)
{
    if (row->missing)
        return LAB_NOT_INSTALLED;
    int error = 0, invalid = 0, refused = 0;
    for (uint64_t r = 0; r < runs; r++) {
        const zram_run *run = &row->runs[r];
        error |= !run->ended;
        invalid |= run->ran && !run->valid;
        for (size_t i = 0; i < npts; i++) {
            error |= run->pts[i].done && !run->pts[i].ok;
            refused |= run->pts[i].refused != 0;
        }
    }
    return error ? LAB_ERROR : invalid ? LAB_INVALID : refused ? LAB_REFUSED : LAB_OK;
}

/* One point over the rounds: time by sweep_cell_of (refused rounds are no
 * time), efficiency as the median of the rounds that reported it. */
static zram_cell cell_of(const zram_row *row, uint64_t runs, size_t i, double *buf)
{
    size_t n = (size_t)runs;
    double *ns = buf, *eff = buf + n, *scratch = buf + 2 * n;
    uint64_t refused[ZRAM_MAX_RUNS] = {0};
    int ok[ZRAM_MAX_RUNS] = {0};
    zram_cell c = {{NAN, NAN, 0, 0, 0}, NAN, 0, 0};
    size_t ne = 0;
    for (size_t r = 0; r < n; r++) {
        const zram_run *run = &row->runs[r];
        const zram_point *pt = &run->pts[i];
        ok[r] = point_ok(run, i);
        ns[r] = pt->ns_per_pair;
        refused[r] = pt->refused;
        if (!ok[r])
            continue;
        if (ne == 0) {
            c.stored = pt->stored;
            c.held = pt->held;
        }
        double e = zram_efficiency(pt->stored, pt->held);
        if (isfinite(e))
            eff[ne++] = e;
    }
    c.t = sweep_cell_of(ns, refused, ok, n, scratch);
    if (ne != 0)
        c.efficiency = summarize(eff, ne).median;
    return c;
}

void zram_summarise(zram_bench *s)
{
    uint64_t runs = s->o->runs;
    double *buf = calloc(3u * (size_t)runs + 3u, sizeof *buf);
    for (size_t k = 0; k < s->nrows && buf != NULL; k++) {
        zram_row *row = &s->rows[k];
        row->status = status_of(row, runs, s->npts);
        row->marked = row->bad = 0;
        for (size_t i = 0; !row->missing && i < s->npts; i++) {
            row->cells[i] = cell_of(row, runs, i, buf);
            row->marked += row->cells[i].t.refused_runs != 0;
            for (uint64_t r = 0; r < runs; r++)
                row->bad += row->runs[r].pts[i].done && !row->runs[r].pts[i].ok;
        }
    }
    free(buf);
}

/* --- text ----------------------------------------------------------------- */

static void print_header(const zram_bench *s)
{
    const zram_opts *o = s->o;
    machine_print(stdout, &s->m);
    printf("== rtmem bench zram: the TLSF/xvmalloc/zsmalloc study's comparison, time and memory\n");
    printf("slots %llu; windows [x, x+%u) for x = 0, %llu, ..., %llu (%zu windows, x = 0 from "
           "[1, %u)) and the zram case\n",
           (unsigned long long)o->slots, SWEEP_WIDTH, (unsigned long long)o->sweep_step,
           (unsigned long long)sweep_window_at(o->sweep_step, s->nwin - 1).x, s->nwin, SWEEP_WIDTH);
    printf("zram case: SYNTHETIC compressed-page sizes in [1, 4096], mean %.0f bytes (zram.h)\n",
           zram_dist_mean());
    printf("per point: fill (untimed), %llu timed replacements, drain; %llu interleaved rounds; "
           "seed %llu\n",
           (unsigned long long)o->iterations, (unsigned long long)o->runs,
           (unsigned long long)o->seed);
    printf("clock: %s\n", s->clock_text);
    printf("region of every rtm heap and zsmalloc pool: %llu bytes, pre-faulted\n",
           (unsigned long long)o->region);
    printf(
        "efficiency = bytes stored / bytes held; held: rtm heaps: 4 KiB pages holding live "
        "blocks; zsmalloc: pages_used x 4096;\n  malloc peers: VmRSS growth over the baseline of "
        "a child per point (includes their metadata and the free memory they keep)\n");
    printf("%s\n", s->rt_note);
    if (s->env_note[0])
        printf("%s\n", s->env_note);
    printf("wall time %.1f s\n", s->seconds);
}

static const zram_run *first_ran(const zram_row *row, uint64_t runs)
{
    for (uint64_t r = 0; !row->missing && r < runs; r++)
        if (row->runs[r].ran)
            return &row->runs[r];
    return NULL;
}

static const char *held_measure(enum zram_kind k)
{
    static const char *const m[] = {"pages holding live blocks", "zsmalloc pages_used",
                                    "VmRSS growth"};
    return m[k];
}

/* --- the allocators table: text and JSON from one fill -------------------- */

/* One row per allocator, in the JSON's key order; the points, bands and
 * runs follow in JSON (json_row_extra), the text shows the bands apart. */
static const table_col allocator_cols[] = {
    {"name", "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    {"kind", "kind", -13, 0, 0, NULL, 0, NULL, NULL},
    {"status", "status", -13, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("library"),
    TABLE_JSON_ONLY("version"),
    TABLE_JSON_ONLY("held_measure"),
    {"marked_points", "marked", 7, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("check_failures"),
    TABLE_TEXT_ONLY(" library", 0),
};

static void allocator_table(table *t, const zram_bench *s)
{
    table_init(t, allocator_cols, sizeof allocator_cols / sizeof allocator_cols[0]);
    for (size_t i = 0; i < s->nrows; i++) {
        const zram_row *row = &s->rows[i];
        const zram_run *any = first_ran(row, s->o->runs);
        const char *lib = row->kind != ZK_MALLOC ? "(rtmem, linked in)"
                          : row->missing         ? "(no library found)"
                          : row->lib[0]          ? row->lib
                          : any != NULL          ? any->from
                                                 : "";
        char text[PATH_MAX + 128];
        if (any != NULL && any->version[0] != '\0')
            snprintf(text, sizeof text, " %s [%s]", lib, any->version);
        else
            snprintf(text, sizeof text, " %s", lib);
        table_row(t);
        table_str(t, row->name);
        table_str(t, zram_kind_name(row->kind));
        table_str(t, lab_status_name(row->status));
        table_str(t, row->kind != ZK_MALLOC ? "rtmem" : row->missing ? NULL : row->lib);
        table_str(t, any != NULL ? any->version : NULL);
        table_str(t, held_measure(row->kind));
        table_u64(t, row->marked);
        table_u64(t, row->bad);
        table_str(t, text);
    }
}

static void print_allocators(const zram_bench *s)
{
    table t;
    allocator_table(&t, s);
    printf("\n");
    table_print(stdout, &t);
    table_free(&t);
    printf("(marked: points with a refused allocation in some round)\n");
}

/* A band's cells of one row: mean time over unmarked windows, marked
 * count, mean efficiency. */
typedef struct band_stat {
    double ns, eff;
    size_t windows, marked;
} band_stat;

static band_stat band_of(const zram_bench *s, const zram_row *row, size_t band)
{
    band_stat b = {NAN, NAN, 0, 0};
    double *t = calloc(s->nwin, sizeof *t), *e = calloc(s->nwin, sizeof *e);
    unsigned char *keep = calloc(s->nwin, 1);
    for (size_t i = 0; t && e && keep && i < s->nwin; i++) {
        if (zram_xband_of(sweep_window_at(s->o->sweep_step, i).x) != band)
            continue;
        keep[i] = 1;
        b.windows++;
        b.marked += row->cells[i].t.refused_runs != 0;
        t[i] = row->cells[i].t.refused_runs != 0 ? NAN : row->cells[i].t.median;
        e[i] = row->cells[i].efficiency;
    }
    if (t && e && keep) {
        b.ns = zram_mean_finite(t, keep, s->nwin, NULL);
        b.eff = zram_mean_finite(e, keep, s->nwin, NULL);
    }
    free(t);
    free(e);
    free(keep);
    return b;
}

static void band_label(size_t band, char *buf, size_t n)
{
    if (band + 1u == ZRAM_XBANDS)
        snprintf(buf, n, "x>=%u", zram_xband_lo[band]);
    else
        snprintf(buf, n, "%u-%u", zram_xband_lo[band], zram_xband_lo[band + 1u] - 1u);
}

/* --- the band tables: text and JSON from one fill ------------------------- */

/* A row per allocator and x band that has windows, in the JSON's key order
 * (an allocator's "bands"); the text pivots them, a line per band and a
 * column per allocator (table_pivot.h). */
enum { B_HEAD, B_LABEL, B_WINDOWS = 4, B_MARKED, B_NS, B_EFF };
static const table_col band_cols[] = {
    TABLE_PIVOT_KEY, /* the allocator's index */
    TABLE_PIVOT_KEY, /* the band's text */
    TABLE_JSON_ONLY("x_lo"),
    TABLE_JSON_ONLY("x_hi"),
    TABLE_JSON_ONLY("windows"),
    TABLE_JSON_ONLY("marked"),
    TABLE_JSON_ONLY("ns_per_pair_mean"),
    TABLE_JSON_ONLY("efficiency_mean"),
};

/* The points: a row per allocator and window (an allocator's
 * "points.windows", each column one array over the windows) and, in a
 * table of their own with the same columns, a row per allocator for the
 * zram case ("points.zram_case"; the text's last line of the band tables).
 * A missing allocator has no rows (its points are null). */
enum { Z_HEAD, Z_LABEL, Z_MEDIAN, Z_REFUSED_RUNS = 6, Z_EFF, Z_N = 10 };
static const table_col point_cols[] = {
    TABLE_PIVOT_KEY, /* the allocator's index */
    TABLE_PIVOT_KEY, /* "zram case"; null for a window (no text row) */
    TABLE_JSON_ONLY("ns_per_pair_median"),
    TABLE_JSON_ONLY("ns_per_pair_min"),
    TABLE_JSON_ONLY("clean_runs"),
    TABLE_JSON_ONLY("refused"),
    TABLE_JSON_ONLY("refused_runs"),
    TABLE_JSON_ONLY("efficiency"),
    TABLE_JSON_ONLY("stored_bytes"),
    TABLE_JSON_ONLY("held_bytes"),
};

typedef struct zram_tables {
    const zram_bench *s;
    table bands, windows, cases;
} zram_tables;

static void fill_bands(table *t, const zram_bench *s, size_t i)
{
    for (size_t band = 0; band < ZRAM_XBANDS && !s->rows[i].missing; band++) {
        band_stat b = band_of(s, &s->rows[i], band);
        if (b.windows == 0)
            continue;
        char label[32];
        band_label(band, label, sizeof label);
        table_row(t);
        table_u64(t, i);
        table_str(t, label);
        table_u64(t, zram_xband_lo[band]);
        if (band + 1u == ZRAM_XBANDS)
            table_null(t);
        else
            table_u64(t, zram_xband_lo[band + 1u]);
        table_u64(t, b.windows);
        table_u64(t, b.marked);
        table_num(t, b.ns);
        table_num(t, b.eff);
    }
}

/* Point k (a window, or the zram case k == nwin) of allocator i. */
static void fill_point(table *t, const zram_bench *s, size_t i, size_t k, const char *label)
{
    const zram_cell *c = &s->rows[i].cells[k];
    table_row(t);
    table_u64(t, i);
    table_str(t, label);
    table_num(t, c->t.median);
    table_num(t, c->t.min);
    table_u64(t, c->t.clean_runs);
    table_u64(t, c->t.refused);
    table_u64(t, c->t.refused_runs);
    table_num(t, c->efficiency);
    table_u64(t, c->stored);
    table_u64(t, c->held);
}

static void zram_tables_fill(zram_tables *z, const zram_bench *s)
{
    z->s = s;
    table_init(&z->bands, band_cols, sizeof band_cols / sizeof band_cols[0]);
    table_init(&z->windows, point_cols, Z_N);
    table_init(&z->cases, point_cols, Z_N);
    for (size_t i = 0; i < s->nrows; i++) {
        fill_bands(&z->bands, s, i);
        for (size_t w = 0; !s->rows[i].missing && w <= s->nwin; w++)
            fill_point(w < s->nwin ? &z->windows : &z->cases, s, i, w,
                       w < s->nwin ? NULL : "zram case");
    }
}

static void zram_tables_free(zram_tables *z)
{
    table_free(&z->bands);
    table_free(&z->windows);
    table_free(&z->cases);
}

static double num_at(const table *t, size_t row, size_t col)
{
    const table_cell *c = table_at(t, row, col);
    return c != NULL && c->kind == TABLE_NUM ? c->v.num : NAN;
}

static uint64_t u64_at(const table *t, size_t row, size_t col)
{
    const table_cell *c = table_at(t, row, col);
    return c != NULL && c->kind == TABLE_U64 ? c->v.u64 : 0;
}

/* A time cell: the mean of the clean windows, and "R m/n" when m of the n
 * windows refused (their times left out). */
static void time_text(char *buf, size_t n, double ns, uint64_t marked, uint64_t windows)
{
    if (marked != 0 && isfinite(ns)) /* some windows clean: their mean too */
        snprintf(buf, n, "%.0f R%llu/%llu", ns, (unsigned long long)marked,
                 (unsigned long long)windows);
    else if (marked != 0)
        snprintf(buf, n, "R%llu/%llu", (unsigned long long)marked, (unsigned long long)windows);
    else
        snprintf(buf, n, isfinite(ns) ? "%.1f" : "-", ns);
}

static void band_time(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)col;
    (void)ctx;
    time_text(buf, n, num_at(t, row, B_NS), u64_at(t, row, B_MARKED), u64_at(t, row, B_WINDOWS));
}

static void case_time(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)col;
    (void)ctx;
    time_text(buf, n, num_at(t, row, Z_MEDIAN), u64_at(t, row, Z_REFUSED_RUNS) != 0, 1);
}

/* An efficiency cell, in percent (B_EFF and Z_EFF are the same column). */
static void eff_text(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)ctx;
    double eff = num_at(t, row, col);
    snprintf(buf, n, isfinite(eff) ? "%.1f%%" : "-", eff * 100.0);
}

static void print_table(const zram_tables *z, int which)
{
    const zram_bench *s = z->s;
    const char **heads = calloc(s->nrows ? s->nrows : 1, sizeof *heads);
    if (heads == NULL)
        return;
    for (size_t i = 0; i < s->nrows; i++)
        heads[i] = s->rows[i].name;
    /* The bands with windows, each a line even if no allocator has rows. */
    char text[ZRAM_XBANDS][32];
    const char *labels[ZRAM_XBANDS];
    size_t nlabels = 0;
    for (size_t band = 0; band < ZRAM_XBANDS; band++) {
        int any = 0;
        for (size_t w = 0; w < s->nwin && !any; w++)
            any = zram_xband_of(sweep_window_at(s->o->sweep_step, w).x) == band;
        if (any) {
            band_label(band, text[nlabels], sizeof text[nlabels]);
            labels[nlabels] = text[nlabels];
            nlabels++;
        }
    }
    static const char *const zram_case[] = {"zram case"};
    table_pivot p = {.corner = "x band",
                     .label_width = -12,
                     .width = 12,
                     .heads = heads,
                     .nheads = s->nrows,
                     .col_key = B_HEAD,
                     .row_key = B_LABEL,
                     .value = B_EFF,
                     .cell = which == 0 ? band_time : eff_text,
                     .absent = "n/i",
                     .labels = labels,
                     .nlabels = nlabels};
    printf("\n%s\n", which == 0 ? "ns per free+alloc pair: mean over the band's windows of the "
                                  "median over rounds (R m/n: m of n windows refused "
                                  "allocations, left out)"
                                : "memory efficiency, bytes stored / bytes held, slots full: mean "
                                  "over the band's windows");
    table_pivot_print(stdout, &z->bands, &p);
    p.cell = which == 0 ? case_time : eff_text;
    p.labels = zram_case;
    p.nlabels = 1;
    table_pivot_print_rows(stdout, &z->cases, &p);
    free(heads);
}

static void print_problems(const zram_bench *s)
{
    int header = 0;
    for (size_t k = 0; k < s->nrows; k++) {
        const zram_row *row = &s->rows[k];
        for (uint64_t r = 0; !row->missing && r < s->o->runs; r++) {
            const zram_run *run = &row->runs[r];
            if (!run->ended || !run->valid) {
                printf("%s  %s round %llu: %s: %s\n", header++ ? "" : "\nproblems:\n", row->name,
                       (unsigned long long)r + 1, run->ran && !run->valid ? "invalid" : "error",
                       run->why);
            }
            for (size_t i = 0; i < s->npts; i++)
                if (run->pts[i].done && !run->pts[i].ok)
                    printf("%s  %s round %llu point %zu: %s\n", header++ ? "" : "\nproblems:\n",
                           row->name, (unsigned long long)r + 1, i, run->pts[i].why);
        }
    }
}

void zram_print(const zram_bench *s)
{
    print_header(s);
    print_allocators(s);
    zram_tables z;
    zram_tables_fill(&z, s);
    print_table(&z, 0);
    print_table(&z, 1);
    zram_tables_free(&z);
    print_problems(s);
    fflush(stdout);
}

/* --- JSON ----------------------------------------------------------------- */

static void json_params(json *j, const zram_bench *s)
{
    const zram_opts *o = s->o;
    json_obj(j, "params");
    json_u64(j, "slots", o->slots);
    json_u64(j, "runs", o->runs);
    json_u64(j, "seed", o->seed);
    json_bool(j, "quick", o->quick);
    json_str(j, "allocators", o->allocators);
    json_u64(j, "sweep_step", o->sweep_step);
    json_u64(j, "sweep_max", o->sweep_max);
    json_u64(j, "iterations", o->iterations);
    json_u64(j, "window_width", SWEEP_WIDTH);
    json_u64(j, "region_bytes", o->region);
    json_u64(j, "page_bytes", ZRAM_PAGE);
    json_obj_end(j);
    json_obj(j, "clock");
    json_str(j, "description", s->clock_text);
    json_num(j, "ns_per_tick", s->tick_ns);
    json_num(j, "cost_ns", s->cost_ns);
    json_obj_end(j);
    json_num(j, "seconds", s->seconds);
}

static void json_dist(json *j)
{
    json_obj(j, "zram_case");
    json_str(j, "distribution", "synthetic");
    json_num(j, "mean_bytes", zram_dist_mean());
    json_arr(j, "bands");
    for (size_t b = 0; b < ZRAM_DIST_BANDS; b++) {
        json_obj(j, NULL);
        json_u64(j, "lo", zram_dist[b].lo);
        json_u64(j, "hi", zram_dist[b].hi);
        json_num(j, "weight", zram_dist[b].weight / 1000.0);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

static void json_windows(json *j, const zram_bench *s)
{
    static const char *const keys[3] = {"x", "lo", "hi"};
    json_obj(j, "windows");
    for (int k = 0; k < 3; k++) {
        json_arr_inline(j, keys[k]);
        for (size_t w = 0; w < s->nwin; w++) {
            sweep_window win = sweep_window_at(s->o->sweep_step, w);
            json_u64(j, NULL, k == 0 ? win.x : k == 1 ? win.lo : win.hi);
        }
        json_arr_end(j);
    }
    json_obj_end(j);
}

/* The rows of table t whose head (column 0) is allocator i: each one's
 * JSON members in an object, in an array (key) or, one row, in an
 * object (key). */
static void head_rows_json(json *j, const char *key, const table *t, size_t i, int array)
{
    if (array)
        json_arr(j, key);
    for (size_t r = 0; r < t->nrows; r++) {
        if (u64_at(t, r, 0) != i)
            continue;
        json_obj(j, array ? NULL : key);
        table_json_cells(j, t, r);
        json_obj_end(j);
    }
    if (array)
        json_arr_end(j);
}

static void json_curve(json *j, const zram_tables *z, size_t i)
{
    const zram_bench *s = z->s;
    table_pivot p = {0};
    p.nheads = s->nrows;
    p.col_key = Z_HEAD;
    json_obj(j, "windows");
    for (size_t k = Z_MEDIAN; k < Z_N; k++)
        table_pivot_json_column(j, point_cols[k].key, &z->windows, &p, i, k);
    json_obj_end(j);
    head_rows_json(j, "zram_case", &z->cases, i, 0);
}

static void json_runs(json *j, const zram_bench *s, const zram_row *row)
{
    json_arr(j, "runs");
    for (uint64_t r = 0; !row->missing && r < s->o->runs; r++) {
        const zram_run *run = &row->runs[r];
        json_obj(j, NULL);
        json_u64(j, "round", r + 1);
        json_bool(j, "ended", run->ended);
        json_bool(j, "valid", run->valid);
        json_num(j, "seconds", run->seconds);
        json_str(j, "why", run->why);
        json_str(j, "malloc_from", run->from);
        json_obj_end(j);
    }
    json_arr_end(j);
}

/* What a row holds beyond its table columns: every point, the bands, the
 * runs. */
static void json_row_extra(json *j, size_t i, void *ctx)
{
    const zram_tables *z = ctx;
    const zram_row *row = &z->s->rows[i];
    if (row->missing) {
        json_null(j, "points");
    } else {
        json_obj(j, "points");
        json_curve(j, z, i);
        json_obj_end(j);
    }
    head_rows_json(j, "bands", &z->bands, i, 1);
    json_runs(j, z->s, row);
}

int zram_write_json(const zram_bench *s, const char *path)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "bench zram");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &s->m);
    json_str(&j, "rt_setup", s->rt_note);
    json_params(&j, s);
    json_dist(&j);
    json_windows(&j, s);
    table t;
    zram_tables z;
    allocator_table(&t, s);
    zram_tables_fill(&z, s);
    int bad = table_json(&j, "allocators", &t, json_row_extra, &z);
    bad |= !table_ok(&z.bands) || !table_ok(&z.windows) || !table_ok(&z.cases);
    zram_tables_free(&z);
    table_free(&t);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
