// SPDX-License-Identifier: MIT
/*
 * random_child.c -- one run of the random-replace loop
 * (random_loop.h), in a child process, for one allocator; and the parser of
 * result lines, which the sweep (random_sweep_child.c) shares.
 *
 * A run is three passes over one random sequence (splitmix64 from the
 * round's seed, so every allocator replays the same slots and sizes):
 *   1. fill the slots (untimed);
 *   2. throughput: `iterations` replacements between two clock reads, no
 *      clock inside: ns per free+alloc pair = loop time / iterations;
 *   3. latency: `iterations` more replacements with a clock read around the
 *      free and around the alloc (+touch), clock cost subtracted, into one
 *      histogram per operation: p50 ... p99.99 and max for each.
 * A refused allocation (NULL) is counted and reported; it is never a fast
 * iteration in disguise (the trap the TLSF/xvmalloc/zsmalloc study fell
 * into): the parent excludes such a run.
 *
 * The real-time setup (rt.h) comes after the region is mapped and
 * pre-faulted and before the first pass: mlockall(MCL_CURRENT) then locks
 * the region once, and nothing of the setup's cost falls inside a pass.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/region.h"
#include "random/random.h"
#include "common/result_line.h"
#include "random/random_loop.h"
#include "common/rt.h"
#include "rtmem.h"

const char *const lat_names[LAT_COUNT] = {"p50", "p99", "p99.9", "p99.99", "max", "mean"};
static const char *const lat_keys[LAT_COUNT] = {"p50", "p99", "p999", "p9999", "max", "mean"};

typedef struct run_out {
    uint64_t loop_ticks;
    hist alloc, free;
} run_out;

/* An rtm heap's run (TLSF or any other heap name) also checks the heap while
 * it is full and after the drain. */
static __attribute__((noinline)) int run_rtm(rl_loop *s, uint64_t n, run_out *out, char *why,
                                             size_t why_n)
{
    rl_fill(&rl_rtm, s);
    out->loop_ticks = rl_throughput(&rl_rtm, s, n);
    rl_latency(&rl_rtm, s, n, &out->alloc, &out->free);
    int ok = 1;
    if (rtm_heap_check(s->ctx) != 0) {
        snprintf(why, why_n, "rtm_heap_check failed with the slots full (errno %d)", errno);
        ok = 0;
    }
    rl_drain(&rl_rtm, s);
    rtm_stats st = rtm_heap_stats(s->ctx);
    if (ok && (st.used_bytes != 0 || st.live_blocks != 0 || rtm_heap_check(s->ctx) != 0)) {
        snprintf(why, why_n, "after freeing everything: used_bytes %zu, live_blocks %zu, check %s",
                 st.used_bytes, st.live_blocks, rtm_heap_check(s->ctx) == 0 ? "ok" : "failed");
        ok = 0;
    }
    return ok;
}

static __attribute__((noinline)) void run_libc(rl_loop *s, uint64_t n, run_out *out)
{
    rl_fill(&rl_libc, s);
    out->loop_ticks = rl_throughput(&rl_libc, s, n);
    rl_latency(&rl_libc, s, n, &out->alloc, &out->free);
    rl_drain(&rl_libc, s);
}

void random_sanitise(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

static void print_lat(const char *prefix, const hist *h, double ns_per_tick)
{
    static const double q[4] = {0.5, 0.99, 0.999, 0.9999};
    for (int i = 0; i < 4; i++)
        printf("\t%s_%s=%.2f", prefix, lat_keys[i], (double)hist_quantile(h, q[i]) * ns_per_tick);
    printf("\t%s_max=%.2f", prefix, (double)h->max * ns_per_tick);
    printf("\t%s_mean=%.3f", prefix,
           h->count ? (double)h->sum / (double)h->count * ns_per_tick : 0.0);
}

typedef struct child_id {
    int valid;
    char why[768], from[256], version[96];
    char rt[256];
} child_id;

static void print_result(const random_opts *o, const child_id *id, int heap_ok, const char *why,
                         const rl_loop *s, const run_out *out, uint64_t region)
{
    double ns = (double)out->loop_ticks * o->child_tick_ns / (double)o->iterations;
    printf("RESULT\talloc=%s\tok=1\tvalid=%d\theap_ok=%d", o->child, id->valid, heap_ok);
    printf("\tfrom=%s\tversion=%s\twhy=%s\trt=%s", id->from, id->version, why[0] ? why : id->why,
           id->rt);
    printf("\tns_per_pair=%.4f\trefused=%llu\tregion=%llu", ns, (unsigned long long)s->refused,
           (unsigned long long)region);
    print_lat("a", &out->alloc, o->child_tick_ns);
    print_lat("f", &out->free, o->child_tick_ns);
    printf("\n");
}

static int child_fail(const random_opts *o, const char *why)
{
    printf("RESULT\talloc=%s\tok=0\twhy=%s\n", o->child, why);
    return 1;
}

int random_child(const random_opts *o)
{
    aut a;
    char bad[160];
    if (aut_parse(o->child, &random_aut_rules, &a, bad, sizeof bad) != 0)
        return child_fail(o, "unknown allocator");
    const peer *p = a.peer;
    int is_rtm = a.kind == AUT_RTM; /* "tlsf", "pool:4096", ... */
    child_id id;
    id.valid = peer_verify(p, o->child_lib, id.why, sizeof id.why, id.from, sizeof id.from,
                           id.version, sizeof id.version);
    random_sanitise(id.why);
    random_sanitise(id.from);
    random_sanitise(id.version);

    static run_out out; /* histograms: 60 KB, kept off the stack */
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    rl_loop s = {
        NULL, (uint32_t)o->slots, (uint32_t)o->min, (uint32_t)(o->max - o->min), NULL, {0}, 0,
        &clk};
    rng_seed(&s.rng, o->seed);
    s.slot = calloc((size_t)o->slots, sizeof *s.slot);
    if (s.slot == NULL)
        return child_fail(o, "cannot allocate the slot array");

    uint64_t region = 0;
    int heap_ok = 1;
    char why[256] = "";
    void *mem = NULL;
    if (is_rtm) {
        region = random_region_bytes(o);
        /* Every page written before the clock starts: TLSF manages memory
         * handed over at init (the TLSF/xvmalloc/zsmalloc study found
         * add_pool up front faster and steadier than growing on demand). */
        mem = region_prefaulted(region);
        s.ctx = mem != NULL ? rtm_heap_create(o->child, mem, (size_t)region) : NULL;
        if (s.ctx == NULL) {
            free(s.slot);
            return child_fail(o, mem == NULL ? "cannot map the heap's region"
                                             : "rtm_heap_create() failed");
        }
    }
    rt_setup(!o->no_rt, o->cpu, id.rt, sizeof id.rt);
    random_sanitise(id.rt);
    if (is_rtm)
        heap_ok = run_rtm(&s, o->iterations, &out, why, sizeof why);
    else
        run_libc(&s, o->iterations, &out);
    print_result(o, &id, heap_ok, why, &s, &out, region);
    free(s.slot);
    if (mem != NULL)
        munmap(mem, (size_t)region);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* --- parsing, in the parent --------------------------------------------- */

static void parse_lat(const char *line, const char *prefix, double *out)
{
    char key[32];
    for (int i = 0; i < LAT_COUNT; i++) {
        snprintf(key, sizeof key, "%s_%s", prefix, lat_keys[i]);
        out[i] = line_field_num(line, key);
    }
}

int random_parse_result(const char *text, random_result *r)
{
    memset(r, 0, sizeof *r);
    const char *start = strstr(text, "RESULT\t");
    if (start == NULL || (start != text && start[-1] != '\n'))
        return -1;
    /* Only this line: an allocator may print lines of its own after it. */
    static char line[8192];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(start, "\n"), start);
    r->ok = line_field_num(line, "ok") != 0.0;
    r->valid = line_field_num(line, "valid") != 0.0;
    r->heap_ok = line_field_num(line, "heap_ok") != 0.0;
    line_field(line, "why", r->why, sizeof r->why);
    line_field(line, "from", r->from, sizeof r->from);
    line_field(line, "version", r->version, sizeof r->version);
    line_field(line, "rt", r->rt, sizeof r->rt);
    r->ns_per_pair = line_field_num(line, "ns_per_pair");
    r->refused = (uint64_t)line_field_num(line, "refused");
    r->region = (uint64_t)line_field_num(line, "region");
    parse_lat(line, "a", r->alloc_ns);
    parse_lat(line, "f", r->free_ns);
    return 0;
}
