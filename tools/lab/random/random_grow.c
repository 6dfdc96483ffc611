// SPDX-License-Identifier: MIT
/*
 * random_grow.c -- `rtmem bench random --grow`: the TLSF/xvmalloc/zsmalloc
 * study's finding that handing TLSF its whole pool at start is faster and
 * steadier than growing the pool on demand, measured three ways:
 *
 *   whole    the region mapped, populated and written before the clock
 *            starts (what `bench random` always does);
 *   chunks   the heap starts on one chunk; rtm_heap_set_grow's function
 *            maps a fresh chunk (mmap, no MAP_POPULATE) of max(min_bytes,
 *            --grow-chunk) bytes per call: a new pool each time, and a page
 *            fault on the first touch of every page, as real growth has;
 *   reserve  one range of the region's size reserved PROT_NONE up front;
 *            each call makes the next max(min_bytes, chunk) bytes (whole
 *            pages) read-write with mprotect, so growth extends the last
 *            pool (one free block, merged) instead of adding pools.
 * The growing ways may use at most the whole way's region, so all three
 * hold the same memory at most.
 *
 * Growth happens while the heap fills, so each run times every allocation:
 * the fill (one alloc per slot, timed) and then `iterations` replacements
 * (rl_latency: free and alloc timed); alloc latency percentiles are over
 * both. The fill is timed for the whole way too, so the three compare the
 * same operations. Runs are children as in `bench random` (random.h),
 * interleaved: round r of whole, chunks, reserve, then round r+1; the
 * report gives each percentile's minimum and median over the runs.
 *
 * The page faults are counted per run (getrusage minor faults over the
 * timed passes): they are where the growing ways lose. Whether a fault
 * comes inside the grow call (a kernel that populates locked mappings at
 * mmap/mprotect under the child's mlockall) or at the first touch of each
 * page (what this lab's machine showed: about one fault per 4 KiB grown,
 * in the allocs that touch it), the cost lands in a timed alloc.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/json.h"
#include "random/random.h"
#include "random/random_loop.h"
#include "common/result_line.h"
#include "common/rt.h"
#include "common/spawn.h"
#include "common/summary.h"
#include "rtmem.h"

#define CHILD_OUT_MAX 65536

static const char *const way_names[GROW_WAYS] = {"whole", "chunks", "reserve"};
static const char *const way_text[GROW_WAYS] = {
    "the whole region at start, pre-faulted",
    "growing by fresh mmap'd chunks (new pools, faults on first touch)",
    "growing inside one reserved range (mprotect; extends the last pool)"};
static const char *const lat_keys[5] = {"p50", "p99", "p999", "p9999", "max"};

int random_grow_way(const char *name)
{
    for (int w = 0; w < GROW_WAYS; w++)
        if (name != NULL && strcmp(name, way_names[w]) == 0)
            return w;
    return -1;
}

/* --- the child: memory, growth and the timed passes ---------------------- */

/* What the grow functions hand out, at most `budget` bytes in all. */
typedef struct grow_src {
    int way;
    size_t page, chunk, budget;
    size_t given;     /* bytes handed to the heap so far (first chunk too) */
    uint64_t calls;   /* grow calls, refused ones included             */
    char *base;       /* reserve: the reservation                      */
    void *maps[4096]; /* chunks: every mapping, to unmap at the end     */
    size_t map_bytes[4096];
    size_t nmaps;
} grow_src;

static size_t round_pages(size_t n, size_t page) { return (n + page - 1u) / page * page; }

/* The size of the next piece: min_bytes or the chunk, whole pages; 0 when
 * the budget cannot hold it. */
static size_t next_piece(grow_src *g, size_t min_bytes)
{
    size_t n = round_pages(min_bytes > g->chunk ? min_bytes : g->chunk, g->page);
    return g->given + n <= g->budget ? n : 0;
}

static void *grow_chunks(void *ctx, size_t min_bytes, size_t *got)
{
    grow_src *g = ctx;
    g->calls++;
    size_t n = next_piece(g, min_bytes);
    if (n == 0 || g->nmaps == sizeof g->maps / sizeof g->maps[0])
        return NULL;
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    g->maps[g->nmaps] = m;
    g->map_bytes[g->nmaps++] = n;
    g->given += n;
    *got = n;
    return m;
}

static void *grow_reserve(void *ctx, size_t min_bytes, size_t *got)
{
    grow_src *g = ctx;
    g->calls++;
    size_t n = next_piece(g, min_bytes);
    if (n == 0 || mprotect(g->base + g->given, n, PROT_READ | PROT_WRITE) != 0)
        return NULL;
    char *piece = g->base + g->given;
    g->given += n;
    *got = n;
    return piece;
}

/* The heap of the child's way over at most g->budget bytes, or NULL. */
static rtm_heap *grow_heap(grow_src *g)
{
    if (g->way == GROW_WHOLE) {
        void *m = mmap(NULL, g->budget, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        memset(m, 0, g->budget);
        g->maps[g->nmaps] = m;
        g->map_bytes[g->nmaps++] = g->budget;
        g->given = g->budget;
        return rtm_heap_create("tlsf", m, g->budget);
    }
    size_t first = round_pages(g->chunk, g->page);
    void *mem = NULL;
    if (g->way == GROW_CHUNKS) {
        mem = mmap(NULL, first, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return NULL;
        g->maps[g->nmaps] = mem;
        g->map_bytes[g->nmaps++] = first;
    } else {
        mem = mmap(NULL, g->budget, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED || mprotect(mem, first, PROT_READ | PROT_WRITE) != 0)
            return NULL;
        g->base = mem;
    }
    g->given = first;
    rtm_heap *h = rtm_heap_create("tlsf", mem, first);
    if (h != NULL &&
        rtm_heap_set_grow(h, g->way == GROW_CHUNKS ? grow_chunks : grow_reserve, g) != 0)
        return NULL;
    return h;
}

static void grow_release(grow_src *g)
{
    for (size_t i = 0; i < g->nmaps; i++)
        munmap(g->maps[i], g->map_bytes[i]);
    if (g->base != NULL)
        munmap(g->base, g->budget);
}

/* Pass 1, timed: every slot gets a block; each alloc (+ touch) is a sample. */
static __attribute__((noinline)) void timed_fill(rl_loop *s, hist *ha)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        uint32_t unused;
        size_t size;
        rl_draw(s, &unused, &size);
        uint64_t t0 = clock_ticks(s->clk);
        void *p = rtm_alloc(s->ctx, size);
        if (p != NULL)
            rl_touch(p, k);
        uint64_t t1 = clock_ticks(s->clk);
        if (p == NULL)
            s->refused++;
        s->slot[k] = p;
        hist_add(ha, clock_net(s->clk, t0, t1));
    }
}

static __attribute__((noinline)) void timed_replace(rl_loop *s, uint64_t n, hist *ha, hist *hf)
{
    rl_latency(&rl_rtm, s, n, ha, hf);
}

static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

/* The heap check full and empty, as random_child.c does. 1 when sound. */
static int heap_sound(rl_loop *s, char *why, size_t n)
{
    if (rtm_heap_check(s->ctx) != 0) {
        snprintf(why, n, "rtm_heap_check failed with the slots full (errno %d)", errno);
        return 0;
    }
    rl_drain(&rl_rtm, s);
    rtm_stats st = rtm_heap_stats(s->ctx);
    if (st.used_bytes != 0 || st.live_blocks != 0 || rtm_heap_check(s->ctx) != 0) {
        snprintf(why, n, "after freeing everything: used_bytes %zu, live_blocks %zu", st.used_bytes,
                 st.live_blocks);
        return 0;
    }
    return 1;
}

static void print_hist(const char *prefix, const hist *h, double ns_per_tick)
{
    static const double q[4] = {0.5, 0.99, 0.999, 0.9999};
    for (int i = 0; i < 4; i++)
        printf("\t%s_%s=%.2f", prefix, lat_keys[i], (double)hist_quantile(h, q[i]) * ns_per_tick);
    printf("\t%s_max=%.2f", prefix, (double)h->max * ns_per_tick);
}

static int grow_child_fail(const random_opts *o, const char *why)
{
    printf("RESULT\talloc=%s\tok=0\twhy=%s\n", o->child_grow, why);
    return 1;
}

int random_grow_child(const random_opts *o)
{
    static grow_src g; /* the mapping table: 64 KB, off the stack */
    static hist ha, hf;
    memset(&g, 0, sizeof g);
    g.way = random_grow_way(o->child_grow);
    if (g.way < 0)
        return grow_child_fail(o, "unknown --child-grow way");
    g.page = (size_t)sysconf(_SC_PAGESIZE);
    g.chunk = (size_t)o->grow_chunk;
    g.budget = (size_t)random_region_bytes(o);
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    rl_loop s = {
        NULL, (uint32_t)o->slots, (uint32_t)o->min, (uint32_t)(o->max - o->min), NULL, {0}, 0,
        &clk};
    rng_seed(&s.rng, o->seed);
    s.slot = calloc((size_t)o->slots, sizeof *s.slot);
    s.ctx = s.slot != NULL ? grow_heap(&g) : NULL;
    if (s.ctx == NULL) {
        free(s.slot);
        grow_release(&g);
        return grow_child_fail(o, "cannot set up the heap's memory");
    }
    char rt[256];
    rt_setup(!o->no_rt, o->cpu, rt, sizeof rt);
    random_sanitise(rt);
    long f0 = minor_faults();
    timed_fill(&s, &ha);
    timed_replace(&s, o->iterations, &ha, &hf);
    long faults = minor_faults() - f0;
    rtm_stats st = rtm_heap_stats(s.ctx);
    char why[256] = "";
    int sound = heap_sound(&s, why, sizeof why);
    printf("RESULT\talloc=%s\tok=1\tvalid=1\theap_ok=%d\twhy=%s\trt=%s", way_names[g.way], sound,
           why, rt);
    printf("\trefused=%llu\tregion=%zu\tgrows=%llu\tgiven=%zu\tarena=%zu\tminflt=%ld",
           (unsigned long long)s.refused, g.budget, (unsigned long long)g.calls, g.given,
           st.arena_bytes, faults);
    print_hist("a", &ha, o->child_tick_ns);
    print_hist("f", &hf, o->child_tick_ns);
    printf("\n");
    free(s.slot);
    grow_release(&g);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* --- the parent: interleaved runs, summary, report ------------------------ */

typedef struct grow_run {
    int ok, clean;
    char why[512];
    double alloc_ns[5];
    uint64_t refused, grows, minflt, given;
} grow_run;

typedef struct grow_bench {
    random_bench b;
    uint64_t chunk;
    grow_run *runs[GROW_WAYS];
    double min[GROW_WAYS][5], med[GROW_WAYS][5];
    double grows_med[GROW_WAYS], minflt_med[GROW_WAYS];
    uint64_t clean[GROW_WAYS];
} grow_bench;

static void parse_run(const char *out, const spawn_result *sp, grow_run *r)
{
    memset(r, 0, sizeof *r);
    const char *line = strstr(out, "RESULT\t");
    if (!sp->ran || line == NULL) {
        snprintf(r->why, sizeof r->why, "%s", sp->ran ? "no result line" : sp->why);
        return;
    }
    static char one[8192];
    snprintf(one, sizeof one, "%.*s", (int)strcspn(line, "\n"), line);
    r->ok = line_field_num(one, "ok") != 0.0 && sp->signal == 0 && sp->exit_status == 0;
    line_field(one, "why", r->why, sizeof r->why);
    char key[16];
    for (int i = 0; i < 5; i++) {
        snprintf(key, sizeof key, "a_%s", lat_keys[i]);
        r->alloc_ns[i] = line_field_num(one, key);
    }
    r->refused = line_field_u64(one, "refused");
    r->grows = line_field_u64(one, "grows");
    r->minflt = line_field_u64(one, "minflt");
    r->given = line_field_u64(one, "given");
    r->clean = r->ok && line_field_num(one, "heap_ok") != 0.0 && r->refused == 0;
    if (r->ok && !r->clean && r->why[0] == '\0')
        snprintf(r->why, sizeof r->why, "%llu allocations refused (the region is too small)",
                 (unsigned long long)r->refused);
}

static void run_one(grow_bench *gb, int way, uint64_t round, grow_run *r)
{
    static random_args a;
    static char out[CHILD_OUT_MAX];
    alloc_row row;
    memset(&row, 0, sizeof row);
    row.name = "tlsf";
    random_args_init(&a, &gb->b, &row, gb->b.o->seed + round);
    random_args_add(&a, "--iterations", "%llu", (unsigned long long)gb->b.o->iterations);
    random_args_add(&a, "--min", "%llu", (unsigned long long)gb->b.o->min);
    random_args_add(&a, "--max", "%llu", (unsigned long long)gb->b.o->max);
    random_args_add(&a, "--grow-chunk", "%llu", (unsigned long long)gb->chunk);
    random_args_add(&a, "--child-grow", "%s", way_names[way]);
    spawn_result sp;
    lab_spawn(a.argv, "", out, sizeof out, &sp);
    parse_run(out, &sp, r);
    const char *rt = strstr(out, "\trt=");
    if (rt != NULL) {
        char note[256];
        snprintf(note, sizeof note, "%.*s", (int)strcspn(rt + 4, "\t\n"), rt + 4);
        random_note_rt(&gb->b, note);
    }
}

/* Median of the clean runs' values v(run); NAN when none is clean. */
static double median_of(const grow_run *runs, uint64_t n, double (*v)(const grow_run *, int),
                        int arg, double *min_out)
{
    double x[256];
    size_t k = 0;
    for (uint64_t i = 0; i < n && k < 256; i++)
        if (runs[i].clean)
            x[k++] = v(&runs[i], arg);
    if (k == 0) {
        if (min_out != NULL)
            *min_out = NAN;
        return NAN;
    }
    summary sum = summarize(x, k);
    if (min_out != NULL)
        *min_out = sum.min;
    return sum.median;
}

static double v_alloc(const grow_run *r, int i) { return r->alloc_ns[i]; }
static double v_grows(const grow_run *r, int i)
{
    (void)i;
    return (double)r->grows;
}
static double v_minflt(const grow_run *r, int i)
{
    (void)i;
    return (double)r->minflt;
}

static void summarise(grow_bench *gb)
{
    uint64_t n = gb->b.o->runs;
    for (int w = 0; w < GROW_WAYS; w++) {
        gb->clean[w] = 0;
        for (uint64_t i = 0; i < n; i++)
            gb->clean[w] += (uint64_t)gb->runs[w][i].clean;
        for (int s = 0; s < 5; s++)
            gb->med[w][s] = median_of(gb->runs[w], n, v_alloc, s, &gb->min[w][s]);
        gb->grows_med[w] = median_of(gb->runs[w], n, v_grows, 0, NULL);
        gb->minflt_med[w] = median_of(gb->runs[w], n, v_minflt, 0, NULL);
    }
}

static void print_report(const grow_bench *gb)
{
    const random_opts *o = gb->b.o;
    machine_print(stdout, &gb->b.m);
    printf("== rtmem bench random --grow: TLSF with its whole pool at start vs growing on "
           "demand\n");
    printf("slots %llu, sizes [%llu, %llu) bytes; timed: the fill (%llu allocs) + %llu "
           "replacements per run; %llu interleaved rounds, seed %llu\n",
           (unsigned long long)o->slots, (unsigned long long)o->min, (unsigned long long)o->max,
           (unsigned long long)o->slots, (unsigned long long)o->iterations,
           (unsigned long long)o->runs, (unsigned long long)o->seed);
    printf("clock: %s\n", gb->b.clock_text);
    printf("memory: at most %llu bytes each way (%s); growing ways start on one chunk and grow "
           "by max(min_bytes, chunk) = %llu bytes or more per call\n",
           (unsigned long long)gb->b.region, o->tlsf_region ? "--tlsf-region" : "slots x max x 2",
           (unsigned long long)gb->chunk);
    printf("%s\n", gb->b.rt_note);
    for (int w = 0; w < GROW_WAYS; w++)
        printf("  %-8s %s\n", way_names[w], way_text[w]);
    printf("\nalloc latency, ns: minimum / median over the clean runs\n");
    printf("%-8s %5s %7s %9s", "way", "clean", "grows", "faults");
    for (int s = 0; s < 5; s++)
        printf(" %17s", lat_names[s == 4 ? LAT_MAX : s]);
    printf("\n");
    for (int w = 0; w < GROW_WAYS; w++) {
        printf("%-8s %2llu/%-2llu %7.0f %9.0f", way_names[w], (unsigned long long)gb->clean[w],
               (unsigned long long)o->runs, gb->grows_med[w], gb->minflt_med[w]);
        for (int s = 0; s < 5; s++) {
            char cell[40];
            snprintf(cell, sizeof cell, "%.0f / %.0f", gb->min[w][s], gb->med[w][s]);
            printf(" %17s", cell);
        }
        printf("\n");
    }
    for (int w = 0; w < GROW_WAYS; w++)
        for (uint64_t i = 0; i < o->runs; i++)
            if (!gb->runs[w][i].clean)
                printf("note: %s round %llu not clean: %s\n", way_names[w],
                       (unsigned long long)i + 1, gb->runs[w][i].why);
    printf("(grows and faults: medians per run; faults are minor page faults during the timed "
           "passes)\n");
    fflush(stdout);
}

static void json_lat5(json *j, const char *key, const double *v)
{
    json_obj(j, key);
    for (int s = 0; s < 5; s++)
        json_num(j, lat_keys[s], v[s]);
    json_obj_end(j);
}

static void json_way(json *j, const grow_bench *gb, int w)
{
    json_obj(j, NULL);
    json_str(j, "name", way_names[w]);
    json_str(j, "description", way_text[w]);
    json_u64(j, "clean_runs", gb->clean[w]);
    json_lat5(j, "alloc_ns_min", gb->min[w]);
    json_lat5(j, "alloc_ns_median", gb->med[w]);
    json_num(j, "grows_median", gb->grows_med[w]);
    json_num(j, "minor_faults_median", gb->minflt_med[w]);
    json_arr(j, "runs");
    for (uint64_t i = 0; i < gb->b.o->runs; i++) {
        const grow_run *r = &gb->runs[w][i];
        json_obj(j, NULL);
        json_u64(j, "round", i + 1);
        json_bool(j, "ok", r->ok);
        json_bool(j, "clean", r->clean);
        json_str(j, "why", r->why);
        json_lat5(j, "alloc_ns", r->alloc_ns);
        json_u64(j, "refused", r->refused);
        json_u64(j, "grows", r->grows);
        json_u64(j, "bytes_held", r->given);
        json_u64(j, "minor_faults", r->minflt);
        json_obj_end(j);
    }
    json_arr_end(j);
    json_obj_end(j);
}

static int write_json(const grow_bench *gb, const char *path)
{
    const random_opts *o = gb->b.o;
    json j;
    if (json_open(&j, path) != 0)
        return -1;
    json_str(&j, "tool", "rtmem");
    json_str(&j, "command", "bench random");
    json_u64(&j, "schema_version", 1);
    machine_json(&j, &gb->b.m);
    json_str(&j, "rt_setup", gb->b.rt_note);
    json_str(&j, "mode", "grow");
    json_obj(&j, "params");
    json_u64(&j, "slots", o->slots);
    json_u64(&j, "iterations", o->iterations);
    json_u64(&j, "min", o->min);
    json_u64(&j, "max", o->max);
    json_u64(&j, "runs", o->runs);
    json_u64(&j, "seed", o->seed);
    json_bool(&j, "quick", o->quick);
    json_u64(&j, "grow_chunk", gb->chunk);
    json_obj_end(&j);
    json_obj(&j, "clock");
    json_str(&j, "description", gb->b.clock_text);
    json_num(&j, "ns_per_tick", gb->b.tick_ns);
    json_num(&j, "cost_ns", gb->b.cost_ns);
    json_obj_end(&j);
    json_u64(&j, "tlsf_region_bytes", gb->b.region);
    json_bool(&j, "tlsf_region_given", o->tlsf_region != 0);
    json_arr(&j, "allocators"); /* the ways below are all TLSF */
    json_arr_end(&j);
    json_arr(&j, "grow_ways");
    for (int w = 0; w < GROW_WAYS; w++)
        json_way(&j, gb, w);
    json_arr_end(&j);
    return json_close(&j);
}

int random_grow_main(random_opts *o)
{
    static grow_bench gb;
    memset(&gb, 0, sizeof gb);
    random_prepare(&gb.b, o);
    gb.b.region = random_region_bytes(o);
    gb.chunk = o->grow_chunk;
    for (int w = 0; w < GROW_WAYS; w++) {
        gb.runs[w] = calloc((size_t)o->runs, sizeof *gb.runs[w]);
        if (gb.runs[w] == NULL)
            return 1;
    }
    for (uint64_t round = 0; round < o->runs; round++) {
        fprintf(stderr, "random --grow: round %llu/%llu:", (unsigned long long)round + 1,
                (unsigned long long)o->runs);
        for (int w = 0; w < GROW_WAYS; w++) {
            grow_run *r = &gb.runs[w][round];
            run_one(&gb, w, round, r);
            fprintf(stderr, " %s p99.99 %.0f%s", way_names[w], r->alloc_ns[3],
                    r->clean ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
    if (gb.b.rt_note[0] == '\0')
        snprintf(gb.b.rt_note, sizeof gb.b.rt_note, "no measuring child reported its setup");
    summarise(&gb);
    print_report(&gb);
    int rc = 0;
    if (o->json != NULL && write_json(&gb, o->json) != 0) {
        fprintf(stderr, "rtmem bench random: cannot write %s: %s\n", o->json, strerror(errno));
        rc = 1;
    }
    for (int w = 0; w < GROW_WAYS; w++) {
        if (gb.clean[w] == 0)
            rc = 1; /* TLSF trouble is ours to fail on */
        free(gb.runs[w]);
    }
    return rc;
}
