// SPDX-License-Identifier: MIT
/*
 * threads_report.c -- what `rtmem bench threads` prints and writes: per
 * benchmark, thread count and allocator the min / median / spread of clean
 * runs (summary.h), peak RSS beside, the speed-up over glibc, every run left
 * out and why, and the verdicts on the malloc targets.
 *
 * Statistics use clean runs only (tr_clean()); a run that is not clean is
 * still listed with its reason, so nothing disappears. Every verdict is
 * computed from medians measured in this same invocation, never from a
 * stored figure. A verdict that cannot be computed says "n/a" and why (the
 * drop-in not built, a peer not installed, no clean run), never PASS.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/table.h"
#include "threads/threads.h"

/* --- statistics --------------------------------------------------------------- */

static lab_status cell_status(const tr_row *row, const tr_cell *c, uint64_t runs)
{
    if (row->missing)
        return row->kind == TR_KIND_DROPIN ? LAB_NOT_BUILT : LAB_NOT_INSTALLED;
    int error = 0, invalid = 0, refused = 0;
    for (uint64_t i = 0; i < runs; i++) {
        const tr_result *r = &c->runs[i];
        error |= !r->ok || !r->heap_ok || r->corrupt != 0;
        invalid |= r->ok && !r->valid;
        refused |= r->refused != 0;
    }
    return error ? LAB_ERROR : invalid ? LAB_INVALID : refused ? LAB_REFUSED : LAB_OK;
}

/* Which of two statuses a row shows: the graver one. */
static lab_status graver(lab_status a, lab_status b)
{
    static const int rank[LAB_NSTATUS] = {
        [LAB_OK] = 0,      [LAB_NOT_INSTALLED] = 5, [LAB_NOT_BUILT] = 5,
        [LAB_INVALID] = 3, [LAB_ERROR] = 4,         [LAB_REFUSED] = 2};
    return rank[b] > rank[a] ? b : a;
}

typedef double (*metric)(const tr_result *r);
static double m_wall_ms(const tr_result *r) { return r->wall_ns / 1e6; }
static double m_malloc_ms(const tr_result *r) { return r->malloc_ns / 1e6; }
static double m_free_ms(const tr_result *r) { return r->free_ns / 1e6; }
static double m_sum_ms(const tr_result *r) { return (r->malloc_ns + r->free_ns) / 1e6; }
static double m_rss_mib(const tr_result *r) { return (double)r->maxrss_kb / 1024.0; }
static double m_ns_per_block(const tr_result *r)
{
    return r->blocks ? r->wall_ns / (double)r->blocks : NAN;
}
static double m_mblocks_per_s(const tr_result *r)
{
    return r->wall_ns > 0 ? (double)r->blocks / r->wall_ns * 1e3 : NAN;
}

/* The summary of one metric over the clean runs (v: scratch, runs long). */
static summary over_clean(const tr_cell *c, uint64_t runs, metric m, double *v)
{
    size_t n = 0;
    for (uint64_t i = 0; i < runs; i++)
        if (tr_clean(&c->runs[i]))
            v[n++] = m(&c->runs[i]);
    return summarize(v, n);
}

static void summarise_cell(const tr_row *row, tr_cell *c, uint64_t runs, double *v)
{
    c->status = cell_status(row, c, runs);
    c->clean = 0;
    c->refused = 0;
    for (uint64_t i = 0; !row->missing && i < runs; i++) {
        c->clean += tr_clean(&c->runs[i]) ? 1u : 0u;
        c->refused += c->runs[i].refused;
    }
    if (row->missing)
        return;
    c->wall_ms = over_clean(c, runs, m_wall_ms, v);
    c->malloc_ms = over_clean(c, runs, m_malloc_ms, v);
    c->free_ms = over_clean(c, runs, m_free_ms, v);
    c->sum_ms = over_clean(c, runs, m_sum_ms, v);
    c->rss_mib = over_clean(c, runs, m_rss_mib, v);
    c->ns_per_block = over_clean(c, runs, m_ns_per_block, v);
    c->mblocks_per_s = over_clean(c, runs, m_mblocks_per_s, v);
}

void tr_summarise(tr_bench *b)
{
    const threads_opts *o = b->o;
    double *v = calloc((size_t)o->runs, sizeof *v);
    for (size_t i = 0; i < b->nrows && v != NULL; i++) {
        tr_row *row = &b->rows[i];
        row->status = LAB_OK;
        for (int k = 0; k < TR_NBENCH; k++)
            for (size_t ci = 0; o->bench_on[k] && ci < o->ncounts; ci++) {
                summarise_cell(row, &row->cell[k][ci], o->runs, v);
                row->status = graver(row->status, row->cell[k][ci].status);
            }
    }
    free(v);
}

int tr_method_failed(const tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++) {
        const tr_row *row = &b->rows[i];
        /* A locked heap runs in the lab's own code: its failure is ours. A
         * preloaded malloc's (the drop-in's included: it cannot even load
         * under a sanitizer build) is reported in its row and verdicts. */
        if ((row->kind == TR_KIND_LOCKED || row->kind == TR_KIND_MT) &&
            (row->status == LAB_ERROR || row->status == LAB_INVALID))
            return 1;
        /* A block that arrives changed is far likelier the queue's fault
         * than a mature allocator's: the method failed, whichever row. */
        for (int k = 0; !row->missing && k < TR_NBENCH; k++)
            for (size_t ci = 0; b->o->bench_on[k] && ci < b->o->ncounts; ci++)
                for (uint64_t r = 0; r < b->o->runs; r++)
                    if (row->cell[k][ci].runs[r].corrupt != 0)
                        return 1;
    }
    return 0;
}

static const tr_row *find_row(const tr_bench *b, const char *name)
{
    for (size_t i = 0; i < b->nrows; i++)
        if (strcmp(b->rows[i].name, name) == 0)
            return &b->rows[i];
    return NULL;
}

/* The headline value of a cell: seed002 wall ms, pc ns per block. */
static summary headline(const tr_cell *c, int bench)
{
    return bench == TR_SEED ? c->wall_ms : c->ns_per_block;
}

/* --- verdicts ------------------------------------------------------------------ */

enum target { T_GLIBC, T_MIMALLOC, T_RSS, T_MT_LOCKED, T_MT_MIMALLOC, T_COUNT };

#define MT_ROW ((const char *)0) /* target_def.me: the first mt:<algorithm> row */

static const struct target_def {
    const char *key, *text;
    const char *me;   /* the row judged: a name, or MT_ROW                   */
    const char *peer; /* the row it is compared with; NULL: locked:<its alg> */
    double limit;     /* the ratio must be >= limit (at_least) or <= limit   */
    int at_least;     /* 1: ratio = peer / me (a speed-up), else me / peer   */
    int benches;      /* bit k: judged on benchmark k                        */
    size_t only_at;   /* judged at this thread count only; 0: at every one   */
} targets[T_COUNT] = {
    {"speed_vs_glibc", "rtmem >= 3x faster than glibc (seed002 wall time: glibc / rtmem >= 3)",
     "rtmem", "glibc", 3.0, 1, 1 << TR_SEED, 0},
    {"speed_vs_mimalloc",
     "rtmem at least as fast as mimalloc (seed002 wall time, pc ns/block: rtmem / mimalloc <= 1)",
     "rtmem", "mimalloc", 1.0, 0, (1 << TR_SEED) | (1 << TR_PC), 0},
    {"rss_vs_mimalloc",
     "rtmem peak RSS within 1.2x mimalloc's (pc; seed002 under --seed-write: rtmem / mimalloc <= "
     "1.2)",
     "rtmem", "mimalloc", 1.2, 0, (1 << TR_SEED) | (1 << TR_PC), 0},
    {"mt_vs_locked",
     "mt heap >= 10x the throughput of the same algorithm behind a lock at 2 threads (seed002 "
     "wall time, pc ns/block: locked / mt >= 10)",
     MT_ROW, NULL, 10.0, 1, (1 << TR_SEED) | (1 << TR_PC), 2},
    {"mt_vs_mimalloc",
     "mt heap within 1.5x of mimalloc's time at 2 threads (seed002 wall time, pc ns/block: mt / "
     "mimalloc <= 1.5)",
     MT_ROW, "mimalloc", 1.5, 0, (1 << TR_SEED) | (1 << TR_PC), 2},
};

/* Whether target t is judged on benchmark k in this run. Peak RSS is not
 * judged on seed002 when its blocks are not written: an allocator whose
 * metadata lives outside its blocks would never fault their pages in and
 * pass for small (threads.h). */
static int judged_on(const tr_bench *b, enum target t, int k)
{
    if (!(targets[t].benches >> k & 1) || !b->o->bench_on[k])
        return 0;
    return !(t == T_RSS && k == TR_SEED && !b->o->seed_write);
}

/* Whether target t has a line at thread count index ci. */
static int judged_at(const tr_bench *b, enum target t, size_t ci)
{
    return targets[t].only_at == 0 || b->o->counts[ci] == targets[t].only_at;
}

typedef struct verdict {
    double ratio;      /* NAN when not computable */
    const char *value; /* "PASS", "FAIL" or "n/a"  */
    char detail[200];  /* why n/a, or the figures  */
} verdict;

/* Digits after the point that keep three significant ones up to 100. */
static int decimals(double v) { return v >= 100 ? 0 : v >= 10 ? 1 : v >= 1 ? 2 : 3; }

/* Why a row cannot be judged, or NULL when it has a median. */
static const char *unusable(const tr_row *row, const tr_cell *c, char *buf, size_t n)
{
    if (row == NULL)
        return "not in --allocators";
    if (row->missing)
        return row->kind == TR_KIND_DROPIN ? "not built" : "not installed";
    if (c->clean == 0) {
        snprintf(buf, n, "no clean run: %s", lab_status_name(c->status));
        return buf;
    }
    return NULL;
}

static const tr_row *first_mt_row(const tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++)
        if (b->rows[i].kind == TR_KIND_MT)
            return &b->rows[i];
    return NULL;
}

/* The two rows target t compares, me and other (NULL: not in the run), and
 * their names for the verdict's words. */
static void target_rows(const tr_bench *b, enum target t, const tr_row **me, const tr_row **other,
                        char *me_name, char *peer_name, size_t n)
{
    const struct target_def *d = &targets[t];
    *me = d->me == MT_ROW ? first_mt_row(b) : find_row(b, d->me);
    snprintf(me_name, n, "%s", *me != NULL ? (*me)->name : d->me == MT_ROW ? "mt:<heap>" : d->me);
    if (d->peer != NULL)
        snprintf(peer_name, n, "%s", d->peer);
    else if (*me != NULL)
        snprintf(peer_name, n, "locked:%s", (*me)->aut->heap);
    else
        snprintf(peer_name, n, "locked:<heap>");
    *other = find_row(b, peer_name);
}

static verdict judge(const tr_bench *b, enum target t, int bench, size_t ci)
{
    const struct target_def *d = &targets[t];
    const tr_row *me, *other;
    char me_name[TR_NAME_MAX + 8], peer_name[TR_NAME_MAX + 8];
    target_rows(b, t, &me, &other, me_name, peer_name, sizeof me_name);
    verdict v = {NAN, "n/a", ""};
    char b1[64], b2[64];
    const char *why_me = unusable(me, me ? &me->cell[bench][ci] : NULL, b1, sizeof b1);
    const char *why_peer = unusable(other, other ? &other->cell[bench][ci] : NULL, b2, sizeof b2);
    if (why_me != NULL || why_peer != NULL) {
        if (why_me != NULL)
            snprintf(v.detail, sizeof v.detail, "%s %s", me_name, why_me);
        else
            snprintf(v.detail, sizeof v.detail, "%s %s", peer_name, why_peer);
        return v;
    }
    const tr_cell *cm = &me->cell[bench][ci], *cp = &other->cell[bench][ci];
    double mine = t == T_RSS ? cm->rss_mib.median : headline(cm, bench).median;
    double theirs = t == T_RSS ? cp->rss_mib.median : headline(cp, bench).median;
    v.ratio = d->at_least ? tr_ratio(theirs, mine) : tr_ratio(mine, theirs);
    if (isnan(v.ratio)) {
        snprintf(v.detail, sizeof v.detail, "ratio not computable (%g, %g)", mine, theirs);
        return v;
    }
    int pass = d->at_least ? v.ratio >= d->limit : v.ratio <= d->limit;
    v.value = pass ? "PASS" : "FAIL";
    const char *unit = t == T_RSS ? "MiB" : bench == TR_SEED ? "ms" : "ns/block";
    snprintf(v.detail, sizeof v.detail, "%s %.*f %s, %s %.*f %s: ratio %.3f %s %.1f", me_name,
             decimals(mine), mine, unit, peer_name, decimals(theirs), theirs, unit, v.ratio,
             d->at_least ? ">=" : "<=", d->limit);
    return v;
}

/* A target over all its lines: FAIL if any fails, PASS if all pass, else
 * n/a with the first reason. */
static verdict judge_overall(const tr_bench *b, enum target t)
{
    verdict all = {NAN, "PASS", ""};
    int lines = 0, na = 0, benches = 0;
    for (int k = 0; k < TR_NBENCH; k++) {
        benches += judged_on(b, t, k);
        for (size_t ci = 0; judged_on(b, t, k) && ci < b->o->ncounts; ci++) {
            if (!judged_at(b, t, ci))
                continue;
            verdict v = judge(b, t, k, ci);
            lines++;
            if (strcmp(v.value, "FAIL") == 0)
                all.value = "FAIL";
            else if (strcmp(v.value, "n/a") == 0 && na++ == 0)
                snprintf(all.detail, sizeof all.detail, "%s", v.detail);
        }
    }
    if (lines == 0) {
        all.value = "n/a";
        if (benches == 0)
            snprintf(all.detail, sizeof all.detail, "its benchmark was not run (--bench)");
        else
            snprintf(all.detail, sizeof all.detail, "judged at %zu threads, not in --threads",
                     targets[t].only_at);
    } else if (na > 0 && strcmp(all.value, "PASS") == 0) {
        all.value = "n/a";
    }
    return all;
}

/* --- text ----------------------------------------------------------------------- */

static void print_header(const tr_bench *b)
{
    const threads_opts *o = b->o;
    printf("== rtmem bench threads: the tcmalloc-style pool benchmark (seed002) and "
           "producer/consumer\n");
    machine_print(stdout, &b->m);
    printf("%s\n", b->rt_note);
    printf("threads/pairs %s; %llu interleaved runs per measurement, each a child process\n",
           o->threads_text, (unsigned long long)o->runs);
    if (o->bench_on[TR_SEED])
        printf("seed002: N threads x %llu rounds x %llu allocations of (16+i)%%8192+1 bytes, "
               "then frees in order (%s)\n",
               (unsigned long long)o->rounds, (unsigned long long)o->ntimes,
               o->seed_write ? "--seed-write: every byte written in the timed loop"
                             : "blocks not written, as in the original; RSS not judged on it");
    if (o->bench_on[TR_PC])
        printf("pc: N producers + N consumers, %llu blocks per producer, sizes [%u, %u] "
               "(seed %llu), every byte written, queue of %u; every free is remote\n",
               (unsigned long long)o->pc_blocks, TR_PC_MIN, TR_PC_MAX, (unsigned long long)o->seed,
               TR_PC_QUEUE);
    printf("locked:<heap>: %s\n", b->locked_impl);
    printf("mt:<algorithm>: %s\n", b->mt_impl);
    if (b->env_note[0])
        printf("%s\n", b->env_note);
}

/* The first run that completed, for the library's self-description. */
static const tr_result *first_ok(const tr_bench *b, const tr_row *row)
{
    for (int k = 0; k < TR_NBENCH; k++)
        for (size_t ci = 0; !row->missing && b->o->bench_on[k] && ci < b->o->ncounts; ci++)
            for (uint64_t i = 0; i < b->o->runs; i++)
                if (row->cell[k][ci].runs[i].ok)
                    return &row->cell[k][ci].runs[i];
    return NULL;
}

static const char *kind_name(enum tr_kind k)
{
    return k == TR_KIND_PEER     ? "peer"
           : k == TR_KIND_DROPIN ? "drop-in"
           : k == TR_KIND_MT     ? "mt"
                                 : "locked";
}

/* --- the allocators table: text and JSON from one fill -------------------- */

/* One row per allocator, in the JSON's key order; each benchmark's cells
 * follow in JSON (json_row_extra), the text shows them in their tables.
 * The text has no header line: "allocators:" and a row each. */
static const table_col allocator_cols[] = {
    {"name", "allocator", -14, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    TABLE_JSON_ONLY("kind"),
    {"status", "status", -13, 0, 0, NULL, 0, NULL, NULL},
    TABLE_JSON_ONLY("library"),
    TABLE_JSON_ONLY("version"),
    TABLE_JSON_ONLY("malloc_from"),
    TABLE_TEXT_ONLY("library", 0),
};

static void allocator_table(table *t, const tr_bench *b)
{
    table_init(t, allocator_cols, sizeof allocator_cols / sizeof allocator_cols[0]);
    t->indent = "  ";
    for (size_t i = 0; i < b->nrows; i++) {
        const tr_row *row = &b->rows[i];
        const tr_result *any = first_ok(b, row);
        char text[PATH_MAX + 160];
        size_t n = 0;
        if (row->kind == TR_KIND_LOCKED)
            n = (size_t)snprintf(text, sizeof text, "rtm heap \"%s\" behind a lock, in the child",
                                 row->aut->heap);
        else if (row->kind == TR_KIND_MT)
            n = (size_t)snprintf(text, sizeof text,
                                 "mt heap of \"%s\" shards, one per thread, in the child",
                                 row->aut->heap);
        else if (row->missing && row->kind == TR_KIND_DROPIN)
            n = (size_t)snprintf(text, sizeof text,
                                 "(librtmem-malloc.so not found beside this program)");
        else if (row->missing)
            n = (size_t)snprintf(text, sizeof text, "(no library found)");
        else if (row->lib[0] != '\0')
            n = (size_t)snprintf(text, sizeof text, "LD_PRELOAD=%s", row->lib);
        else if (any != NULL)
            n = (size_t)snprintf(text, sizeof text, "%s", any->from);
        else
            text[0] = '\0';
        if (any != NULL && any->version[0] != '\0' && n < sizeof text)
            snprintf(text + n, sizeof text - n, " [%s]", any->version);
        table_row(t);
        table_str(t, row->name);
        table_str(t, kind_name(row->kind));
        table_str(t, lab_status_name(row->status));
        table_str(t, row->lib[0] ? row->lib : NULL);
        table_str(t, any != NULL && any->version[0] ? any->version : NULL);
        table_str(t, any != NULL && any->from[0] ? any->from : NULL);
        table_str(t, text);
    }
}

static void print_allocators(const tr_bench *b)
{
    printf("\nallocators:\n");
    table t;
    allocator_table(&t, b);
    for (size_t i = 0; i < t.nrows; i++)
        table_print_row(stdout, &t, i);
    table_free(&t);
}

/* --- the seed002 and pc tables: text and JSON from one fill --------------- */

/* A row per thread count and allocator (count-major, as the text reads);
 * the JSON writes each row inside its allocator's benchmark array
 * (json_bench_cell), followed by its runs. A summary over no clean run is
 * null as a whole. The text shows the median before the minimum and the
 * clean count last (seed_order, pc_order); "x glibc" is text only. */
#define SUMMARY_COLS(group, med, min, spread, w, p)                                                \
    {"min", min, w, p, 0, NULL, TABLE_NULL_GROUP, group, NULL},                                    \
        {"median", med, w, p, 0, NULL, TABLE_NULL_GROUP, group, NULL},                             \
        {"max", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, group, NULL},                               \
        {"mean", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, group, NULL},                              \
    {                                                                                              \
        "spread", spread, 6, 2, 0, NULL, TABLE_NULL_GROUP, group, NULL                             \
    }
#define COUNT_COLS(head, w)                                                                        \
    {"threads", head, w, 0, 0, NULL, 0, NULL, NULL}, TABLE_TEXT_ONLY("allocator", -14),            \
        {"status", "status", -13, 0, 0, NULL, 0, NULL, NULL},                                      \
        {"clean_runs", "clean", 7, 0, 0, NULL, 0, NULL, NULL},                                     \
        {NULL, NULL, 0, 0, 0, NULL, TABLE_OF, NULL, NULL}, TABLE_JSON_ONLY("refused")
#define VS_GLIBC_COL                                                                               \
    {                                                                                              \
        NULL, "x glibc", 7, 2, 0, "x", 0, NULL, NULL                                               \
    }

static const table_col seed_cols[] = {
    COUNT_COLS("threads", 7),
    SUMMARY_COLS("wall_ms", "wall med", "wall min", "spread", 9, 1),
    SUMMARY_COLS("malloc_ms", "malloc med", NULL, NULL, 10, 1),
    SUMMARY_COLS("free_ms", "free med", NULL, NULL, 9, 1),
    SUMMARY_COLS("malloc_plus_free_ms", "m+f med", NULL, NULL, 9, 1),
    SUMMARY_COLS("peak_rss_mib", "RSS MiB", NULL, NULL, 8, 1),
    VS_GLIBC_COL,
};
static const char *const seed_order[] = {"threads",  "allocator", "status",     "wall med",
                                         "wall min", "spread",    "malloc med", "free med",
                                         "m+f med",  "RSS MiB",   "x glibc",    "clean"};

static const table_col pc_cols[] = {
    COUNT_COLS("pairs", 5),
    SUMMARY_COLS("wall_ms", NULL, NULL, NULL, 0, 0),
    SUMMARY_COLS("ns_per_block", "ns/b med", "ns/b min", "spread", 9, 1),
    SUMMARY_COLS("mblocks_per_s", "Mblk/s", NULL, NULL, 9, 2),
    SUMMARY_COLS("peak_rss_mib", "RSS MiB", NULL, NULL, 8, 1),
    VS_GLIBC_COL,
};
static const char *const pc_order[] = {"pairs",  "allocator", "status",  "ns/b med", "ns/b min",
                                       "spread", "Mblk/s",    "RSS MiB", "x glibc",  "clean"};

static void summary_cells(table *t, const summary *s)
{
    if (s->n == 0) {
        table_nulls(t, 5); /* the group is null as a whole */
        return;
    }
    table_num(t, s->min);
    table_num(t, s->median);
    table_num(t, s->max);
    table_num(t, s->mean);
    table_num(t, s->spread);
}

/* Speed-up over glibc: glibc's median / this one's (> 1: faster). */
static double vs_glibc(const tr_bench *b, const tr_cell *c, int bench, size_t ci)
{
    const tr_row *g = find_row(b, "glibc");
    if (g == NULL || g->missing || c->clean == 0)
        return NAN;
    return tr_ratio(headline(&g->cell[bench][ci], bench).median, headline(c, bench).median);
}

static void bench_row(table *t, const tr_bench *b, const tr_row *row, int bench, size_t ci)
{
    const tr_cell *c = &row->cell[bench][ci];
    table_row(t);
    table_u64(t, b->o->counts[ci]);
    table_str(t, row->name);
    table_str(t, lab_status_name(c->status));
    table_u64(t, c->clean);
    table_u64(t, b->o->runs);
    table_u64(t, c->refused);
    summary_cells(t, &c->wall_ms);
    if (bench == TR_SEED) {
        summary_cells(t, &c->malloc_ms);
        summary_cells(t, &c->free_ms);
        summary_cells(t, &c->sum_ms);
    } else {
        summary_cells(t, &c->ns_per_block);
        summary_cells(t, &c->mblocks_per_s);
    }
    summary_cells(t, &c->rss_mib);
    table_num(t, vs_glibc(b, c, bench, ci));
}

/* Row (ci, allocator i) of a benchmark table is ci * nrows + i. */
static void bench_table(table *t, const tr_bench *b, int bench)
{
    if (bench == TR_SEED) {
        table_init(t, seed_cols, sizeof seed_cols / sizeof seed_cols[0]);
        table_text_order(t, seed_order, sizeof seed_order / sizeof seed_order[0]);
    } else {
        table_init(t, pc_cols, sizeof pc_cols / sizeof pc_cols[0]);
        table_text_order(t, pc_order, sizeof pc_order / sizeof pc_order[0]);
    }
    for (size_t ci = 0; ci < b->o->ncounts; ci++)
        for (size_t i = 0; i < b->nrows; i++)
            bench_row(t, b, &b->rows[i], bench, ci);
}

static void print_bench(const tr_bench *b, int bench)
{
    table t;
    bench_table(&t, b, bench);
    table_print(stdout, &t);
    table_free(&t);
}

static void print_seed(const tr_bench *b)
{
    printf("\nseed002: wall time (ms: median, min, spread max/min), the original's malloc and free "
           "times\n(ms: sums over threads and rounds, medians), peak RSS (MiB, median), "
           "speed-up over glibc (wall)\n");
    print_bench(b, TR_SEED);
}

static void print_pc(const tr_bench *b)
{
    printf("\npc: ns per block (wall / blocks: median, min, spread), throughput (million "
           "blocks/s, median),\npeak RSS (MiB, median), speed-up over glibc\n");
    print_bench(b, TR_PC);
}

static void print_run_problem(const tr_result *r)
{
    if (!r->ok)
        printf("error: %s\n", r->why);
    else if (!r->valid)
        printf("invalid: %s\n", r->why);
    else if (!r->heap_ok)
        printf("heap check failed: %s\n", r->why);
    else if (r->corrupt != 0)
        printf("%llu blocks arrived corrupted\n", (unsigned long long)r->corrupt);
    else
        printf("%llu allocations refused (not comparable: a NULL is not a fast allocation)\n",
               (unsigned long long)r->refused);
}

static void print_problems(const tr_bench *b)
{
    int any = 0;
    for (size_t i = 0; i < b->nrows; i++)
        for (int k = 0; !b->rows[i].missing && k < TR_NBENCH; k++)
            for (size_t ci = 0; b->o->bench_on[k] && ci < b->o->ncounts; ci++)
                for (uint64_t run = 0; run < b->o->runs; run++) {
                    const tr_result *r = &b->rows[i].cell[k][ci].runs[run];
                    if (tr_clean(r))
                        continue;
                    if (!any)
                        printf("\nruns left out of the statistics:\n");
                    any = 1;
                    printf("  %s %s %zu run %llu: ", b->rows[i].name, tr_bench_names[k],
                           b->o->counts[ci], (unsigned long long)run + 1);
                    print_run_problem(r);
                }
}

/* An mt heap row's threads that no shard took: the fallback served them,
 * behind its lock, so their figures are not the attached path's. */
static void print_unattached(const tr_bench *b)
{
    for (size_t i = 0; i < b->nrows; i++) {
        const tr_row *row = &b->rows[i];
        uint64_t threads = 0, runs = 0;
        for (int k = 0; row->kind == TR_KIND_MT && k < TR_NBENCH; k++)
            for (size_t ci = 0; b->o->bench_on[k] && ci < b->o->ncounts; ci++)
                for (uint64_t r = 0; r < b->o->runs; r++) {
                    uint64_t u = row->cell[k][ci].runs[r].unattached;
                    threads += u;
                    runs += u != 0;
                }
        if (row->kind != TR_KIND_MT)
            continue;
        if (threads == 0)
            printf("\n%s: every thread of every run attached to a shard of its own\n", row->name);
        else
            printf("\n%s: %llu threads in %llu runs could not attach (rtm_mt_attach refused) and "
                   "were served by the fallback shard behind its lock\n",
                   row->name, (unsigned long long)threads, (unsigned long long)runs);
    }
}

static void print_verdicts(const tr_bench *b)
{
    printf("\ntargets (from medians of this run):\n");
    for (int t = 0; t < T_COUNT; t++) {
        verdict all = judge_overall(b, (enum target)t);
        printf("  %s: %s%s%s%s\n", targets[t].text, all.value, all.detail[0] ? " (" : "",
               all.detail, all.detail[0] ? ")" : "");
        for (int k = 0; k < TR_NBENCH; k++)
            for (size_t ci = 0; judged_on(b, (enum target)t, k) && ci < b->o->ncounts; ci++) {
                if (!judged_at(b, (enum target)t, ci))
                    continue;
                verdict v = judge(b, (enum target)t, k, ci);
                printf("    %-7s %zu %-7s: %-4s (%s)\n", tr_bench_names[k], b->o->counts[ci],
                       k == TR_SEED ? "threads" : "pairs", v.value, v.detail);
            }
    }
}

void tr_print(const tr_bench *b)
{
    print_header(b);
    print_allocators(b);
    if (b->o->bench_on[TR_SEED])
        print_seed(b);
    if (b->o->bench_on[TR_PC])
        print_pc(b);
    print_problems(b);
    print_unattached(b);
    print_verdicts(b);
    fflush(stdout);
}

/* --- JSON ----------------------------------------------------------------------- */

static void json_run(json *j, const tr_result *r, int bench, uint64_t run)
{
    json_obj(j, NULL);
    json_u64(j, "run", run + 1);
    json_bool(j, "ok", r->ok);
    json_bool(j, "valid", r->valid);
    json_bool(j, "clean", tr_clean(r));
    json_str(j, "why", r->why);
    json_num(j, "wall_ms", r->ok ? r->wall_ns / 1e6 : NAN);
    if (bench == TR_SEED) {
        json_num(j, "malloc_ms", r->ok ? r->malloc_ns / 1e6 : NAN);
        json_num(j, "free_ms", r->ok ? r->free_ns / 1e6 : NAN);
    } else {
        json_num(j, "ns_per_block", r->ok ? m_ns_per_block(r) : NAN);
        json_u64(j, "corrupt", r->corrupt);
    }
    json_u64(j, "blocks", r->blocks);
    json_u64(j, "refused", r->refused);
    json_u64(j, "peak_rss_kb", r->maxrss_kb);
    json_u64(j, "start_rss_kb", r->rss_start_kb);
    if (r->region != 0)
        json_u64(j, "region_bytes", r->region);
    if (r->unattached != 0)
        json_u64(j, "unattached_threads", r->unattached);
    json_obj_end(j);
}

/* A benchmark cell: its table row, then its runs. */
static void json_bench_cell(json *j, const tr_bench *b, const table *t, size_t i, int bench,
                            size_t ci)
{
    const tr_row *row = &b->rows[i];
    json_obj(j, NULL);
    table_json_cells(j, t, ci * b->nrows + i);
    json_arr(j, "runs");
    for (uint64_t run = 0; !row->missing && run < b->o->runs; run++)
        json_run(j, &row->cell[bench][ci].runs[run], bench, run);
    json_arr_end(j);
    json_obj_end(j);
}

typedef struct json_ctx {
    const tr_bench *b;
    table bench[TR_NBENCH]; /* bench_table() of each benchmark run */
} json_ctx;

/* What a row holds beyond its table columns: each benchmark's cells. */
static void json_row_extra(json *j, size_t i, void *ctx)
{
    const json_ctx *x = ctx;
    const tr_bench *b = x->b;
    for (int k = 0; k < TR_NBENCH; k++) {
        if (!b->o->bench_on[k])
            continue;
        json_arr(j, tr_bench_names[k]);
        for (size_t ci = 0; ci < b->o->ncounts; ci++)
            json_bench_cell(j, b, &x->bench[k], i, k, ci);
        json_arr_end(j);
    }
}

static void json_params(json *j, const tr_bench *b)
{
    const threads_opts *o = b->o;
    json_obj(j, "params");
    json_arr_inline(j, "threads");
    for (size_t i = 0; i < o->ncounts; i++)
        json_u64(j, NULL, o->counts[i]);
    json_arr_end(j);
    json_arr_inline(j, "benchmarks");
    for (int k = 0; k < TR_NBENCH; k++)
        if (o->bench_on[k])
            json_str(j, NULL, tr_bench_names[k]);
    json_arr_end(j);
    json_u64(j, "ntimes", o->ntimes);
    json_u64(j, "rounds", o->rounds);
    json_u64(j, "runs", o->runs);
    json_u64(j, "pc_blocks", o->pc_blocks);
    json_u64(j, "pc_min_size", TR_PC_MIN);
    json_u64(j, "pc_max_size", TR_PC_MAX);
    json_u64(j, "pc_queue", TR_PC_QUEUE);
    json_u64(j, "seed", o->seed);
    json_bool(j, "quick", o->quick);
    json_bool(j, "seed_write", o->seed_write);
    json_obj_end(j);
}

static void json_definitions(json *j, const tr_bench *b)
{
    json_obj(j, "definitions");
    json_str(j, "malloc_time",
             "seed002: sum over threads and rounds of the elapsed time (CLOCK_MONOTONIC) of "
             "each thread's allocation loop of ntimes calls (the original's malloc_costtime)");
    json_str(j, "free_time", "seed002: the same sum for the free loops (free_costtime)");
    json_str(j, "wall_time",
             "from releasing all threads at once (after their untimed setup) to the last join");
    json_str(j, "ns_per_block", "pc: wall time / blocks passed from producers to consumers");
    json_str(j, "peak_rss", "getrusage(RUSAGE_SELF) ru_maxrss of the child at its end");
    json_str(j, "statistics", "min, median, max, mean, spread (max/min) over clean runs");
    json_str(j, "locked_heap", b->locked_impl);
    json_str(j, "mt_heap", b->mt_impl);
    json_obj_end(j);
}

static void json_verdicts(json *j, const tr_bench *b)
{
    json_arr(j, "verdicts");
    for (int t = 0; t < T_COUNT; t++) {
        verdict all = judge_overall(b, (enum target)t);
        json_obj(j, NULL);
        json_str(j, "target", targets[t].key);
        json_str(j, "text", targets[t].text);
        json_num(j, "limit", targets[t].limit);
        json_str(j, "verdict", all.value);
        json_str(j, "detail", all.detail);
        json_arr(j, "lines");
        for (int k = 0; k < TR_NBENCH; k++)
            for (size_t ci = 0; judged_on(b, (enum target)t, k) && ci < b->o->ncounts; ci++) {
                if (!judged_at(b, (enum target)t, ci))
                    continue;
                verdict v = judge(b, (enum target)t, k, ci);
                json_obj(j, NULL);
                json_str(j, "benchmark", tr_bench_names[k]);
                json_u64(j, "threads", b->o->counts[ci]);
                json_num(j, "ratio", v.ratio);
                json_str(j, "verdict", v.value);
                json_str(j, "detail", v.detail);
                json_obj_end(j);
            }
        json_arr_end(j);
        json_obj_end(j);
    }
    json_arr_end(j);
}

int tr_write_json(const tr_bench *b, const char *path)
{
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "bench threads");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &b->m);
    json_str(&j, "rt_setup", b->rt_note);
    json_params(&j, b);
    json_definitions(&j, b);
    table t;
    json_ctx x = {.b = b};
    allocator_table(&t, b);
    int bad = 0;
    for (int k = 0; k < TR_NBENCH; k++) {
        if (!b->o->bench_on[k]) {
            table_init(&x.bench[k], NULL, 0); /* not run: its cells were never summarised */
            continue;
        }
        bench_table(&x.bench[k], b, k);
        bad |= !table_ok(&x.bench[k]);
    }
    bad |= table_json(&j, "allocators", &t, json_row_extra, &x) != 0;
    for (int k = 0; k < TR_NBENCH; k++)
        table_free(&x.bench[k]);
    table_free(&t);
    json_verdicts(&j, b);
    return json_close(&j) != 0 || bad ? -1 : 0;
}
