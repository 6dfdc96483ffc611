// SPDX-License-Identifier: MIT
/*
 * random_sweep_report.c -- what `rtmem bench random --sweep` prints and
 * writes: per allocator and window the minimum and median ns per
 * free+alloc pair over rounds, the refusals, and for rtm heaps the used and
 * free bytes with the slots full.
 *
 * Text is compact (about 16 windows, then the maximum and mean over all
 * windows); the JSON has every window, as parallel arrays per allocator
 * (x in "windows", values in the allocator) so that a plotting script draws
 * the study's figure (docs/METHODS.md) with one plot() per allocator. A window with a refusal
 * has no time (null, "R" in text): it is counted, shown and marked, never
 * drawn as fast. Both come from tables filled once (a row per allocator,
 * with its curves' statistics, and a row per allocator and window): JSON
 * from table.h, the text window x allocator from table_pivot.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "common/table_pivot.h"
#include "random/random_sweep.h"

/* --- statistics ------------------------------------------------------------ */

/* ok for window i of run r: reported, the right allocator, a sound heap. */
static int point_ok(const sweep_run *run, size_t i)
{
    return run->ran && run->valid && run->pts[i].done && run->pts[i].heap_ok;
}

static lab_status status_of(const sweep_row *row, uint64_t runs, size_t nwin)
{
    if (row->id.missing)
        return LAB_NOT_INSTALLED;
    int error = 0, invalid = 0, refused = 0;
    for (uint64_t r = 0; r < runs; r++) {
        const sweep_run *run = &row->runs[r];
        error |= !run->ended;
        invalid |= run->ran && !run->valid;
        for (size_t i = 0; i < nwin; i++) {
            error |= run->pts[i].done && !run->pts[i].heap_ok;
            refused |= run->pts[i].refused != 0;
        }
    }
    return error ? LAB_ERROR : invalid ? LAB_INVALID : refused ? LAB_REFUSED : LAB_OK;
}

static void summarise_row(sweep_row *row, uint64_t runs, size_t nwin)
{
    size_t n = (size_t)runs;
    double *ns = calloc(n, sizeof *ns), *scratch = calloc(n, sizeof *scratch);
    double *med = calloc(nwin, sizeof *med), *mins = calloc(nwin, sizeof *mins);
    uint64_t *refused = calloc(n, sizeof *refused);
    int *ok = calloc(n, sizeof *ok);
    row->status = status_of(row, runs, nwin);
    row->marked = row->heap_bad = 0;
    for (size_t i = 0; i < nwin && ns && scratch && med && mins && refused && ok; i++) {
        for (size_t r = 0; r < n; r++) {
            const sweep_run *run = &row->runs[r];
            ok[r] = point_ok(run, i);
            ns[r] = run->pts[i].ns_per_pair;
            refused[r] = run->pts[i].refused;
            row->heap_bad += run->pts[i].done && !run->pts[i].heap_ok;
        }
        row->cells[i] = sweep_cell_of(ns, refused, ok, n, scratch);
        row->marked += row->cells[i].refused_runs != 0;
        med[i] = row->cells[i].median;
        mins[i] = row->cells[i].min;
    }
    row->med = sweep_curve_of(med, med ? nwin : 0);
    row->min = sweep_curve_of(mins, mins ? nwin : 0);
    free(ns);
    free(scratch);
    free(med);
    free(mins);
    free(refused);
    free(ok);
}

void sweep_summarise(sweep_bench *s)
{
    for (size_t i = 0; i < s->nrows; i++)
        summarise_row(&s->rows[i], s->b.o->runs, s->nwin);
}

/* The first round that reported window i (its heap figures are shown). */
static const sweep_point *first_point(const sweep_row *row, uint64_t runs, size_t i)
{
    for (uint64_t r = 0; !row->id.missing && r < runs; r++)
        if (row->runs[r].pts[i].done)
            return &row->runs[r].pts[i];
    return NULL;
}

static const sweep_run *first_ran(const sweep_row *row, uint64_t runs)
{
    for (uint64_t r = 0; !row->id.missing && r < runs; r++)
        if (row->runs[r].ran)
            return &row->runs[r];
    return NULL;
}

static uint64_t rounds_ended(const sweep_row *row, uint64_t runs)
{
    uint64_t k = 0;
    for (uint64_t r = 0; !row->id.missing && r < runs; r++)
        k += row->runs[r].ended && row->runs[r].valid;
    return k;
}

/* --- text ------------------------------------------------------------------ */

static void print_header(const sweep_bench *s)
{
    const random_opts *o = s->b.o;
    sweep_window last = sweep_window_at(o->sweep_step, s->nwin - 1);
    machine_print(stdout, &s->b.m);
    printf("== rtmem bench random --sweep: the TLSF/xvmalloc/zsmalloc study's random-replace "
           "loop, one curve per allocator\n");
    printf("slots %llu; windows [x, x+%u) for x = 0, %llu, ..., %llu (%zu windows; x = 0 draws "
           "from [1, %u): a 0-byte request is no allocation)\n",
           (unsigned long long)o->slots, SWEEP_WIDTH, (unsigned long long)o->sweep_step,
           (unsigned long long)last.x, s->nwin, SWEEP_WIDTH);
    printf("per window: fill the slots (untimed), %llu timed replacements, drain; %llu "
           "interleaved rounds; seed %llu\n",
           (unsigned long long)o->sweep_iterations, (unsigned long long)o->runs,
           (unsigned long long)o->seed);
    printf("clock: %s\n", s->b.clock_text);
    printf("rtm heaps: a fresh rtm_heap_create() per window over one pre-faulted region of %llu "
           "bytes (%s)\n",
           (unsigned long long)s->b.region,
           o->tlsf_region ? "--tlsf-region" : "slots x (largest x + 64) x 2, whole pages");
    printf("malloc peers: one process per round, its heap kept across windows\n");
    printf("%s\n", s->b.rt_note);
    if (s->b.env_note[0])
        printf("%s\n", s->b.env_note);
    printf("wall time %.1f s\n", s->seconds);
}

/* --- the allocators: text and JSON from one fill ------------------------- */

/* A row per allocator in the JSON's key order, with the statistics of its
 * median and min curves (JSON objects "median_curve", "min_curve"; the
 * text's lines under the curves); the curves and the runs follow in JSON
 * (json_row_extra), the text shows the curves apart. */
static const table_col allocator_cols[] = {
    {"name", "allocator", -10, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("kind"),
    {"status", "status", -13, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("library"),
    TABLE_JSON_ONLY("version"),
    TABLE_TEXT_ONLY("rounds", 7),
    {NULL, NULL, 0, 0, 0, NULL, TABLE_OF, NULL, NULL}, /* of the runs */
    {"marked_windows", "marked", 7, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("heap_check_failures"),
    TABLE_JSON_ONLY("refused"),
    TABLE_TEXT_ONLY(" library", 0),
    TABLE_PIVOT_KEY, /* A_HEAD: the row's index, for the lines under the curves */
    {"max", NULL, 0, 0, 0, NULL, 0, "median_curve", NULL},
    {"max_x", NULL, 0, 0, 0, NULL, 0, "median_curve", NULL},
    {"mean", NULL, 0, 0, 0, NULL, 0, "median_curve", NULL},
    {"plotted", NULL, 0, 0, 0, NULL, 0, "median_curve", NULL},
    {"max", NULL, 0, 0, 0, NULL, 0, "min_curve", NULL},
    {"max_x", NULL, 0, 0, 0, NULL, 0, "min_curve", NULL},
    {"mean", NULL, 0, 0, 0, NULL, 0, "min_curve", NULL},
    {"plotted", NULL, 0, 0, 0, NULL, 0, "min_curve", NULL},
};
/* Columns the lines under the curves show. */
enum { A_MARKED = 7, A_HEAD = 11, A_MAX, A_MAX_X, A_MEAN, A_PLOTTED };

/* A curve's statistics: the largest, its x (null when nothing was
 * plotted), the mean, the windows plotted. */
static void curve_stats_cells(table *t, const sweep_bench *s, const sweep_curve_stats *st)
{
    table_num(t, st->max);
    if (st->plotted != 0)
        table_u64(t, sweep_window_at(s->b.o->sweep_step, st->argmax).x);
    else
        table_null(t);
    table_num(t, st->mean);
    table_u64(t, st->plotted);
}

static void allocator_table(table *t, const sweep_bench *s)
{
    uint64_t runs = s->b.o->runs;
    table_init(t, allocator_cols, sizeof allocator_cols / sizeof allocator_cols[0]);
    for (size_t i = 0; i < s->nrows; i++) {
        const sweep_row *row = &s->rows[i];
        const sweep_run *any = first_ran(row, runs);
        uint64_t refused = 0;
        for (size_t w = 0; w < s->nwin; w++)
            refused += row->cells[w].refused;
        /* The text's library: a space more before it, as before. */
        char lib[PATH_MAX + 128];
        int n = snprintf(lib, sizeof lib, " %s",
                         row->id.peer == NULL ? "(rtmem, linked in)"
                         : row->id.missing    ? "(no library found)"
                         : row->id.lib[0]     ? row->id.lib
                         : any != NULL        ? any->from
                                              : "");
        if (any != NULL && any->version[0] != '\0' && n > 0 && (size_t)n < sizeof lib)
            snprintf(lib + n, sizeof lib - (size_t)n, " [%s]", any->version);
        table_row(t);
        table_str(t, row->id.name);
        table_str(t, row->id.peer == NULL ? "rtm heap" : "malloc peer");
        table_str(t, lab_status_name(row->status));
        table_str(t, row->id.peer == NULL ? "rtmem" : row->id.missing ? NULL : row->id.lib);
        table_str(t, any != NULL ? any->version : NULL);
        table_u64(t, rounds_ended(row, runs));
        table_u64(t, runs);
        table_u64(t, row->marked);
        table_u64(t, row->heap_bad);
        table_u64(t, refused);
        table_str(t, lib);
        table_u64(t, i);
        curve_stats_cells(t, s, &row->med);
        curve_stats_cells(t, s, &row->min);
    }
}

static void print_allocators(const sweep_bench *s)
{
    printf("\n");
    table t;
    allocator_table(&t, s);
    table_print(stdout, &t);
    table_free(&t);
    printf("(rounds: finished every window and measured the named allocator; marked: windows "
           "with a refused allocation)\n");
}

/* --- the curves: text and JSON from one fill --------------------------- */

/* A row per allocator and window, in the order of the JSON's curve arrays
 * (an allocator's "curve": each column one array over the windows; a
 * missing allocator has no rows, its curve is null). The text pivots the
 * compact windows' rows: a line per window, a column per allocator. */
enum { W_HEAD, W_X, W_MEDIAN, W_MIN, W_CLEAN, W_REFUSED, W_REFUSED_RUNS, W_USED, W_FREE, W_N = 10 };
static const table_col window_cols[] = {
    TABLE_PIVOT_KEY, /* the allocator's index */
    TABLE_PIVOT_KEY, /* the window's x in the compact text, else null */
    TABLE_JSON_ONLY("ns_per_pair_median"),
    TABLE_JSON_ONLY("ns_per_pair_min"),
    TABLE_JSON_ONLY("clean_runs"),
    TABLE_JSON_ONLY("refused"),
    TABLE_JSON_ONLY("refused_runs"),
    TABLE_JSON_ONLY("used_bytes"), /* rtm heaps only, first round; null else */
    TABLE_JSON_ONLY("free_bytes"),
    TABLE_JSON_ONLY("largest_free"),
};

/* The text row of window w: its x. */
static void window_label(const sweep_bench *s, size_t w, char *buf, size_t n)
{
    snprintf(buf, n, "%llu", (unsigned long long)sweep_window_at(s->b.o->sweep_step, w).x);
}

/* The windows the compact text shows (sweep_table_row), each a line even
 * when no allocator has rows: labels[] into text (24 bytes each); the
 * count, 0 without memory (the pivot then shows the rows' own labels). */
static size_t shown_labels(const sweep_bench *s, char **text, const char ***labels)
{
    size_t n = 0;
    *text = calloc(s->nwin ? s->nwin : 1, 24);
    *labels = calloc(s->nwin ? s->nwin : 1, sizeof **labels);
    for (size_t w = 0; *text != NULL && *labels != NULL && w < s->nwin; w++) {
        if (!sweep_table_row(w, s->nwin))
            continue;
        window_label(s, w, *text + 24 * n, 24);
        (*labels)[n] = *text + 24 * n;
        n++;
    }
    return n;
}

static void window_row(table *t, const sweep_bench *s, size_t i, size_t w)
{
    const sweep_row *row = &s->rows[i];
    const sweep_cell *c = &row->cells[w];
    const sweep_point *pt = row->id.peer == NULL ? first_point(row, s->b.o->runs, w) : NULL;
    char x[24];
    window_label(s, w, x, sizeof x);
    table_row(t);
    table_u64(t, i);
    table_str(t, sweep_table_row(w, s->nwin) ? x : NULL);
    table_num(t, c->median);
    table_num(t, c->min);
    table_u64(t, c->clean_runs);
    table_u64(t, c->refused);
    table_u64(t, c->refused_runs);
    for (int k = 0; k < 3; k++) {
        if (pt == NULL)
            table_null(t);
        else
            table_u64(t, k == 0 ? pt->used : k == 1 ? pt->free_ : pt->largest);
    }
}

static void window_table(table *t, const sweep_bench *s)
{
    table_init(t, window_cols, W_N);
    for (size_t i = 0; i < s->nrows; i++)
        for (size_t w = 0; !s->rows[i].id.missing && w < s->nwin; w++)
            window_row(t, s, i, w);
}

/* The allocators' names, the pivots' heads; rtm_only leaves the peers out.
 * NULL without memory. */
static const char **heads_of(const sweep_bench *s, int rtm_only)
{
    const char **h = calloc(s->nrows ? s->nrows : 1, sizeof *h);
    for (size_t i = 0; h != NULL && i < s->nrows; i++)
        h[i] = rtm_only && s->rows[i].id.peer != NULL ? NULL : s->rows[i].id.name;
    return h;
}

static uint64_t u64_at(const table *t, size_t row, size_t col)
{
    const table_cell *c = table_at(t, row, col);
    return c != NULL && c->kind == TABLE_U64 ? c->v.u64 : 0;
}

/* A curve cell: R when a round refused, - with no clean round. */
static void curve_cell(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)ctx;
    const table_cell *c = table_at(t, row, col);
    if (u64_at(t, row, W_REFUSED_RUNS) != 0)
        snprintf(buf, n, "R");
    else if (u64_at(t, row, W_CLEAN) == 0 || c->kind != TABLE_NUM)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f", c->v.num);
}

/* A line under the curves, from the allocator table: the median curve's
 * max, its x and mean ("-" when nothing was plotted), the marked count. */
static void stat_cell(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)ctx;
    const table_cell *c = table_at(t, row, col);
    if (col == A_MARKED)
        snprintf(buf, n, "%llu", (unsigned long long)c->v.u64);
    else if (u64_at(t, row, A_PLOTTED) == 0 || c->kind == TABLE_NULL)
        snprintf(buf, n, "-");
    else if (c->kind == TABLE_U64)
        snprintf(buf, n, "%llu", (unsigned long long)c->v.u64);
    else
        snprintf(buf, n, "%.1f", c->v.num);
}

/* An rtm heap's used / free KiB with the slots full (first round). */
static void heap_cell(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)col;
    (void)ctx;
    if (table_at(t, row, W_USED)->kind != TABLE_U64)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%8llu/%-8llu", (unsigned long long)(u64_at(t, row, W_USED) / 1024u),
                 (unsigned long long)(u64_at(t, row, W_FREE) / 1024u));
}

/* The compact text's windows x allocators: column `value` of the window
 * table, a column per head `width` wide. */
static void print_windows(const sweep_bench *s, const table *win, const char **heads, int width,
                          size_t value, table_pivot_cell_fn cell, const char *absent)
{
    char *text;
    const char **labels;
    size_t nlabels = shown_labels(s, &text, &labels);
    table_pivot p = {.corner = "x",
                     .label_width = -7,
                     .width = width,
                     .heads = heads,
                     .nheads = s->nrows,
                     .col_key = W_HEAD,
                     .row_key = W_X,
                     .value = value,
                     .cell = cell,
                     .absent = absent,
                     .labels = labels,
                     .nlabels = nlabels};
    table_pivot_print(stdout, win, &p);
    free(text);
    free(labels);
}

static void print_curves(const sweep_bench *s, const table *win, const char **heads)
{
    size_t shown = 0;
    for (size_t w = 0; w < s->nwin; w++)
        shown += (size_t)sweep_table_row(w, s->nwin);
    printf("\nns per free+alloc pair, median over clean rounds (%zu of %zu windows shown; all "
           "windows and the min in --json)\n",
           shown, s->nwin);
    print_windows(s, win, heads, 9, W_MEDIAN, curve_cell, "n/i");
    printf("over all %zu windows:\n", s->nwin);
    table alloc;
    allocator_table(&alloc, s);
    table_pivot p = {.label_width = -7,
                     .width = 9,
                     .heads = heads,
                     .nheads = s->nrows,
                     .col_key = A_HEAD,
                     .cell = stat_cell,
                     .absent = "-"};
    table_pivot_print_line(stdout, &alloc, &p, "max", A_MAX);
    table_pivot_print_line(stdout, &alloc, &p, "at x", A_MAX_X);
    table_pivot_print_line(stdout, &alloc, &p, "mean", A_MEAN);
    table_pivot_print_line(stdout, &alloc, &p, "marked", A_MARKED);
    table_free(&alloc);
    printf("R: allocations refused in that window (counts below and in --json): no time is "
           "shown for it,\nand max and mean leave it out; -: no clean round; n/i: not "
           "installed\n");
}

static void print_heaps(const sweep_bench *s, const table *win)
{
    const char **heads = heads_of(s, 1);
    size_t any = 0;
    for (size_t i = 0; heads != NULL && i < s->nrows; i++)
        any += heads[i] != NULL;
    if (any != 0) {
        printf("\nrtm heaps with the slots full after the timed replacements (first round): used "
               "KiB / free KiB\n");
        print_windows(s, win, heads, 17, W_USED, heap_cell, "-");
    }
    free(heads);
}

/* Lists the marked windows of a row (up to a few) with their counts. */
static void print_refusals(const sweep_bench *s, const sweep_row *row)
{
    printf("  %s: allocations refused in %zu window%s:", row->id.name, row->marked,
           row->marked == 1 ? "" : "s");
    size_t shown = 0;
    for (size_t w = 0; w < s->nwin && shown < 8; w++) {
        const sweep_cell *c = &row->cells[w];
        if (c->refused_runs == 0)
            continue;
        printf("%s x=%llu: %llu in %llu round%s", shown ? ";" : "",
               (unsigned long long)sweep_window_at(s->b.o->sweep_step, w).x,
               (unsigned long long)c->refused, (unsigned long long)c->refused_runs,
               c->refused_runs == 1 ? "" : "s");
        shown++;
    }
    printf("%s\n", row->marked > shown ? "; ..." : "");
}

static void print_problems(const sweep_bench *s)
{
    int header = 0;
    for (size_t i = 0; i < s->nrows; i++) {
        const sweep_row *row = &s->rows[i];
        if (row->id.missing || (row->marked == 0 && row->status == LAB_OK))
            continue;
        if (!header)
            printf("\nrefusals and problems:\n");
        header = 1;
        if (row->marked != 0)
            print_refusals(s, row);
        for (uint64_t r = 0; r < s->b.o->runs; r++) {
            const sweep_run *run = &row->runs[r];
            if (!run->ended || !run->valid)
                printf("  %s round %llu: %s: %s\n", row->id.name, (unsigned long long)r + 1,
                       run->ran && !run->valid ? "invalid" : "error", run->why);
            for (size_t w = 0; w < s->nwin; w++)
                if (run->pts[w].done && !run->pts[w].heap_ok)
                    printf("  %s round %llu x=%llu: %s\n", row->id.name, (unsigned long long)r + 1,
                           (unsigned long long)sweep_window_at(s->b.o->sweep_step, w).x,
                           run->pts[w].why);
        }
    }
}

void sweep_print(const sweep_bench *s)
{
    print_header(s);
    print_allocators(s);
    table win;
    window_table(&win, s);
    const char **heads = heads_of(s, 0);
    if (heads != NULL)
        print_curves(s, &win, heads);
    free(heads);
    print_heaps(s, &win);
    table_free(&win);
    print_problems(s);
    sweep_print_targets(s);
    fflush(stdout);
}

/* --- JSON ------------------------------------------------------------------ */

static void json_params(json *j, const sweep_bench *s)
{
    const random_opts *o = s->b.o;
    json_obj(j, "params");
    json_u64(j, "slots", o->slots);
    json_u64(j, "runs", o->runs);
    json_u64(j, "seed", o->seed);
    json_bool(j, "quick", o->quick);
    json_str(j, "allocators", o->allocators);
    json_u64(j, "sweep_step", o->sweep_step);
    json_u64(j, "sweep_max", o->sweep_max);
    json_u64(j, "sweep_iterations", o->sweep_iterations);
    json_u64(j, "window_width", SWEEP_WIDTH);
    json_obj_end(j);
    json_obj(j, "clock");
    json_str(j, "description", s->b.clock_text);
    json_num(j, "ns_per_tick", s->b.tick_ns);
    json_num(j, "cost_ns", s->b.cost_ns);
    json_obj_end(j);
    json_u64(j, "tlsf_region_bytes", s->b.region);
    json_bool(j, "tlsf_region_given", o->tlsf_region != 0);
    json_num(j, "seconds", s->seconds);
}

static void json_windows(json *j, const sweep_bench *s)
{
    static const char *const keys[3] = {"x", "lo", "hi"};
    json_obj(j, "windows");
    for (int k = 0; k < 3; k++) {
        json_arr_inline(j, keys[k]);
        for (size_t w = 0; w < s->nwin; w++) {
            sweep_window win = sweep_window_at(s->b.o->sweep_step, w);
            json_u64(j, NULL, k == 0 ? win.x : k == 1 ? win.lo : win.hi);
        }
        json_arr_end(j);
    }
    json_obj_end(j);
}

static void json_runs(json *j, const sweep_bench *s, const sweep_row *row)
{
    json_arr(j, "runs");
    for (uint64_t r = 0; !row->id.missing && r < s->b.o->runs; r++) {
        const sweep_run *run = &row->runs[r];
        size_t done = 0;
        for (size_t w = 0; w < s->nwin; w++)
            done += run->pts[w].done != 0;
        json_obj(j, NULL);
        json_u64(j, "round", r + 1);
        json_bool(j, "ended", run->ended);
        json_bool(j, "valid", run->valid);
        json_u64(j, "windows_done", done);
        json_num(j, "seconds", run->seconds);
        json_str(j, "why", run->why);
        json_str(j, "malloc_from", run->from);
        json_obj_end(j);
    }
    json_arr_end(j);
}

typedef struct sweep_json {
    const sweep_bench *s;
    table win;
} sweep_json;

/* What a row holds beyond its table columns: the curve (the window
 * table's columns as arrays; the heap figures null for a peer), the runs. */
static void json_row_extra(json *j, size_t i, void *ctx)
{
    const sweep_json *c = ctx;
    const sweep_row *row = &c->s->rows[i];
    table_pivot p = {0};
    p.nheads = c->s->nrows;
    p.col_key = W_HEAD;
    if (row->id.missing) {
        json_null(j, "curve");
    } else {
        json_obj(j, "curve");
        for (size_t k = W_MEDIAN; k < W_N; k++) {
            if (k >= W_USED && row->id.peer != NULL)
                json_null(j, window_cols[k].key);
            else
                table_pivot_json_column(j, window_cols[k].key, &c->win, &p, i, k);
        }
        json_obj_end(j);
    }
    json_runs(j, c->s, row);
}

int sweep_write_json(const sweep_bench *s, const char *path)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "bench random");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &s->b.m);
    json_str(&j, "rt_setup", s->b.rt_note);
    json_str(&j, "mode", "sweep");
    json_params(&j, s);
    json_windows(&j, s);
    table t;
    sweep_json c = {s, {0}};
    allocator_table(&t, s);
    window_table(&c.win, s);
    int bad = table_json(&j, "allocators", &t, json_row_extra, &c);
    bad |= !table_ok(&c.win);
    table_free(&c.win);
    table_free(&t);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
