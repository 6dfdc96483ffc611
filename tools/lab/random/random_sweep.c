// SPDX-License-Identifier: MIT
/*
 * random_sweep.c -- `rtmem bench random --sweep`: the parent's schedule of
 * child processes and the parser of their lines (random_sweep.h has the
 * method and the protocol).
 *
 * One child per allocator and round runs every window; rounds are
 * interleaved (round r of every allocator before round r+1), for the reason
 * random.c gives: a wave of disturbance on a shared machine then lands on
 * all allocators' round r alike instead of on one allocator's whole curve,
 * and the per-window minimum over rounds is the least disturbed value.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "random/random.h"
#include "random/random_sweep.h"
#include "common/result_line.h"
#include "common/spawn.h"

/* Bytes of child output per window line, generously, plus the SWEEP line. */
#define LINE_ROOM 512u

/* Copies the line starting at p (without its newline) into buf. */
static const char *next_line(const char *p, char *buf, size_t n)
{
    size_t len = strcspn(p, "\n");
    snprintf(buf, n, "%.*s", (int)(len < n ? len : n - 1), p);
    return p[len] == '\n' ? p + len + 1 : p + len;
}

static void parse_window(const char *line, size_t nwin, sweep_run *run)
{
    char idx[32];
    if (line_field(line, "i", idx, sizeof idx) != 0)
        return;
    char *end;
    unsigned long long i = strtoull(idx, &end, 10);
    if (*end != '\0' || i >= nwin)
        return;
    sweep_point *pt = &run->pts[i];
    pt->done = 1;
    pt->heap_ok = line_field_num(line, "heap_ok") != 0.0;
    pt->ns_per_pair = line_field_num(line, "ns_per_pair");
    pt->refused = (uint64_t)line_field_num(line, "refused");
    pt->used = (uint64_t)line_field_num(line, "used");
    pt->free_ = (uint64_t)line_field_num(line, "free");
    pt->largest = (uint64_t)line_field_num(line, "largest");
    line_field(line, "why", pt->why, sizeof pt->why);
}

void sweep_parse(const char *text, size_t nwin, sweep_run *run)
{
    static char line[4096];
    for (const char *p = text; *p != '\0';) {
        p = next_line(p, line, sizeof line);
        if (strncmp(line, "SWEEP\t", 6) == 0) {
            run->ran = 1;
            run->valid = line_field_num(line, "valid") != 0.0;
            line_field(line, "why", run->why, sizeof run->why);
            line_field(line, "from", run->from, sizeof run->from);
            line_field(line, "version", run->version, sizeof run->version);
            line_field(line, "rt", run->rt, sizeof run->rt);
        } else if (strncmp(line, "WINDOW\t", 7) == 0 && run->ran) {
            parse_window(line, nwin, run);
        } else if (strncmp(line, "END\t", 4) == 0 && run->ran) {
            run->ended = (size_t)line_field_num(line, "windows") == nwin;
        }
    }
}

static size_t windows_done(const sweep_run *run, size_t nwin)
{
    size_t k = 0;
    for (size_t i = 0; i < nwin; i++)
        k += run->pts[i].done != 0;
    return k;
}

/* Runs one child (one allocator, one round) and fills run. */
static void run_child(sweep_bench *s, sweep_row *row, uint64_t round, char *out, size_t out_n)
{
    const random_opts *o = s->b.o;
    static random_args a;
    random_args_init(&a, &s->b, &row->id, o->seed + round);
    random_args_flag(&a, "--sweep");
    random_args_add(&a, "--sweep-step", "%llu", (unsigned long long)o->sweep_step);
    random_args_add(&a, "--sweep-max", "%llu", (unsigned long long)o->sweep_max);
    random_args_add(&a, "--sweep-iterations", "%llu", (unsigned long long)o->sweep_iterations);
    sweep_run *run = &row->runs[round];
    spawn_result sp;
    uint64_t t0 = mono_ns();
    lab_spawn(a.argv, row->id.lib, out, out_n, &sp);
    run->seconds = (double)(mono_ns() - t0) * 1e-9;
    sweep_parse(out, s->nwin, run);
    /* A child that did not finish: how far it came and how it ended (the
     * window it stopped at carries its own reason). */
    if (!run->ended) {
        size_t len = strlen(run->why);
        snprintf(run->why + len, sizeof run->why - len, "%sstopped after %zu of %zu windows: %s",
                 len ? "; " : "", windows_done(run, s->nwin), s->nwin,
                 sp.why[0] ? sp.why : "no END line");
    }
}

/* Mean of the finished windows' ns per pair, for the progress line. */
static double run_mean(const sweep_run *run, size_t nwin)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < nwin; i++)
        if (run->pts[i].done) {
            sum += run->pts[i].ns_per_pair;
            k++;
        }
    return k ? sum / (double)k : 0.0;
}

static void run_rounds(sweep_bench *s)
{
    const random_opts *o = s->b.o;
    size_t out_n = s->nwin * LINE_ROOM + 8192u;
    char *out = malloc(out_n);
    if (out == NULL)
        return;
    for (uint64_t round = 0; round < o->runs; round++) {
        fprintf(stderr, "random --sweep: round %llu/%llu:", (unsigned long long)round + 1,
                (unsigned long long)o->runs);
        for (size_t i = 0; i < s->nrows; i++) {
            sweep_row *row = &s->rows[i];
            if (row->id.missing)
                continue;
            run_child(s, row, round, out, out_n);
            const sweep_run *run = &row->runs[round];
            random_note_rt(&s->b, run->rt);
            fprintf(stderr, " %s %.1fs mean %.1f ns%s", row->id.name, run->seconds,
                    run_mean(run, s->nwin), run->ended && run->valid ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
    free(out);
}

/* Allocates every row's runs, points and cells. Returns 0 or -1. */
static int alloc_rows(sweep_bench *s, const alloc_row *ids, uint64_t runs)
{
    s->rows = calloc(s->nrows, sizeof *s->rows);
    if (s->rows == NULL)
        return -1;
    for (size_t i = 0; i < s->nrows; i++) {
        sweep_row *row = &s->rows[i];
        row->id = ids[i];
        row->runs = calloc((size_t)runs, sizeof *row->runs);
        row->cells = calloc(s->nwin, sizeof *row->cells);
        if (row->runs == NULL || row->cells == NULL)
            return -1;
        for (uint64_t r = 0; r < runs; r++)
            if ((row->runs[r].pts = calloc(s->nwin, sizeof *row->runs[r].pts)) == NULL)
                return -1;
    }
    return 0;
}

static void free_rows(sweep_bench *s, uint64_t runs)
{
    for (size_t i = 0; s->rows != NULL && i < s->nrows; i++) {
        for (uint64_t r = 0; s->rows[i].runs != NULL && r < runs; r++)
            free(s->rows[i].runs[r].pts);
        free(s->rows[i].runs);
        free(s->rows[i].cells);
    }
    free(s->rows);
}

int random_sweep_main(random_opts *o, alloc_row *rows, size_t nrows)
{
    static sweep_bench s;
    memset(&s, 0, sizeof s);
    random_prepare(&s.b, o);
    s.nwin = sweep_window_count(o->sweep_step, o->sweep_max);
    /* The region serves the largest window: slots x (x + 64) x 2. */
    random_opts sized = *o;
    sized.max = sweep_window_at(o->sweep_step, s.nwin - 1).hi;
    s.b.region = random_region_bytes(&sized);
    random_locate_libraries(rows, nrows);
    s.nrows = nrows;
    if (alloc_rows(&s, rows, o->runs) != 0) {
        fprintf(stderr, "rtmem bench random: out of memory\n");
        free_rows(&s, o->runs);
        return 1;
    }
    fprintf(stderr,
            "random --sweep: %zu windows x %zu allocators x %llu rounds, %llu timed "
            "replacements per window\n",
            s.nwin, nrows, (unsigned long long)o->runs, (unsigned long long)o->sweep_iterations);
    uint64_t t0 = mono_ns();
    run_rounds(&s);
    s.seconds = (double)(mono_ns() - t0) * 1e-9;
    if (s.b.rt_note[0] == '\0')
        snprintf(s.b.rt_note, sizeof s.b.rt_note, "no measuring child reported its setup");
    sweep_summarise(&s);
    sweep_print(&s);
    int rc = 0;
    if (o->json != NULL && sweep_write_json(&s, o->json) != 0) {
        fprintf(stderr, "rtmem bench random: cannot write %s: %s\n", o->json, strerror(errno));
        rc = 1;
    }
    /* An rtm heap that crashed, failed its check or was not itself is a
     * failure of the method; refusals are a result, shown and marked. */
    for (size_t i = 0; i < s.nrows; i++)
        if (s.rows[i].id.peer == NULL && s.rows[i].status != LAB_OK &&
            s.rows[i].status != LAB_REFUSED)
            rc = 1;
    free_rows(&s, o->runs);
    return rc;
}
