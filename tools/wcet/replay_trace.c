// SPDX-License-Identifier: MIT
/*
 * tools/wcet/replay_trace.c -- `rtmem-wcet replay FILE`: the exact
 * instruction count of every call of a recorded trace (docs/TRACE.md),
 * replayed on rtm heaps (and glibc's malloc / free), by the same tracer as
 * the synthetic scenarios (tracer.c: one traced child per allocator).
 *
 * It owns the trace side of the counter: the child replays the trace with
 * the lab's engine (tools/lab/trace/replay_run.c, the same code `rtmem replay` and
 * `rtmem fit` time), through a target whose every call is announced with
 * wcet_marker(row, scenario, call index, size) just before it is made, so the
 * tracer single-steps exactly the allocator's call. The parent reduces the
 * samples to one line per allocator and kind of call (alloc, aligned,
 * realloc, free): calls, max, p99 (nearest rank), mean, and the call index
 * and size of the first call reaching the max. `rtmem replay --wcet` and
 * `rtmem fit --wcet` run this mode and read those lines (wcet_bridge.c).
 *
 * Same semantics as `rtmem replay`: an alignment above RTM_ALIGN goes to
 * rtm_aligned_alloc, realloc to rtm_realloc, refusals are counted and the
 * replay goes on without the block (replay.h). Unlike the timing, refused
 * calls *are* counted: the instructions of a refusal are a real cost.
 * glibc: malloc and free are counted; its realloc and posix_memalign run
 * uncounted (the counter has no row for them) and say so.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/opts.h"
#include "trace/replay.h"
#include "rtmem.h"
#include "trace/trace_read.h"
#include "wcet.h"

/* The scenario field of a replay's markers: unused here (variant carries the
 * call index), but the tracer wants a valid scenario number. */
#define REPLAY_SC SC_SELFTEST

enum wr_kind { WK_ALLOC, WK_ALIGNED, WK_REALLOC, WK_FREE, WK_COUNT };
static const char *const wr_kind_names[WK_COUNT] = {"alloc", "aligned", "realloc", "free"};

typedef struct wr_opts {
    const char *file, *allocators, *csv;
    uint64_t region, limit;
} wr_opts;

/* What the traced child replays, and on what. */
typedef struct wr_child {
    const trace *t;
    const char *alg; /* rtm_heap_create() name, or "glibc" */
    uint64_t region;
    uint64_t at;     /* the call being made (the engine's cursor)     */
    uint64_t *bytes; /* per block id: its requested size (for frees) */
    replay_rtm h;
} wr_child;

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem-wcet replay FILE [--allocators LIST] [--region BYTES] [--limit N]\n"
               "                         [--csv FILE]\n"
               "Replays a recorded trace (docs/TRACE.md) in a child single-stepped by the\n"
               "tracer and counts every call's x86-64 instructions exactly. One line per\n"
               "allocator and kind of call:\n"
               "  wcet ALG KIND calls=N max=M p99=P mean=A worst_call=I worst_size=S syscalls=K\n"
               "then `wcet ALG done seconds=T instructions=N`, or `wcet ALG error MESSAGE`.\n"
               "\n"
               "  --allocators LIST  rtm heap names (rtm_heap_create's) and glibc\n"
               "                     (default: every rtm algorithm)\n"
               "  --region BYTES     region of each rtm heap (k/m/g; default 64m)\n"
               "  --limit N          count the first N calls only (about 40 us of CPU per\n"
               "                     instruction, 100+ us wall on a loaded machine)\n"
               "  --csv FILE         also write every counted call: allocator, kind, call\n"
               "                     index, size, instructions, syscalls\n"
               "glibc: malloc and free are counted; its realloc and aligned calls run\n"
               "uncounted (the counter has no row for them).\n"
               "exit status: 0 every allocator counted, 1 one failed (or ptrace refused),\n"
               "2 usage error. `rtmem replay --wcet` and `rtmem fit --wcet` run this.\n");
}

static int parse_u64(const char *s, uint64_t *out, int suffixes)
{
    char *end;
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (suffixes && *end != '\0' && end[1] == '\0') {
        const char *k = strchr("kKmMgG", *end);
        if (k == NULL)
            return -1;
        shift = (unsigned)(k - "kKmMgG") / 2 * 10 + 10;
        end++;
    }
    if (errno != 0 || *end != '\0' || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* --- the traced child's target -------------------------------------------- */

static unsigned call_index(const wr_child *c)
{
    return c->at > UINT32_MAX ? UINT32_MAX : (unsigned)c->at;
}

/* Before an allocation or resize: the size its block will have. */
static void note_size(wr_child *c, size_t size)
{
    const trace_op_rec *o = &c->t->ops[c->at];
    if (o->id != 0)
        c->bytes[o->id] = size;
}

/* Before a free: the requested size of the block it frees. */
static uint64_t freed_size(const wr_child *c) { return c->bytes[c->t->ops[c->at].old_id]; }

static void *c_alloc(void *ctx, size_t size, size_t align)
{
    wr_child *c = ctx;
    note_size(c, size);
    if (align > RTM_ALIGN) {
        wcet_marker(ROW_ALIGNED_64, REPLAY_SC, call_index(c), size);
        return rtm_aligned_alloc(c->h.heap, align, size);
    }
    wcet_marker(ROW_ALLOC, REPLAY_SC, call_index(c), size);
    return rtm_alloc(c->h.heap, size);
}

static void *c_resize(void *ctx, void *p, size_t size)
{
    wr_child *c = ctx;
    note_size(c, size);
    wcet_marker(ROW_REALLOC_GROW, REPLAY_SC, call_index(c), size);
    return rtm_realloc(c->h.heap, p, size);
}

static void c_release(void *ctx, void *p)
{
    wr_child *c = ctx;
    if (c->at >= c->t->n) { /* the engine's clean-up after the last call */
        rtm_free(c->h.heap, p);
        return;
    }
    wcet_marker(ROW_FREE, REPLAY_SC, call_index(c), freed_size(c));
    rtm_free(c->h.heap, p);
}

/* glibc, as replay_target.c's malloc target calls it. */
static void *g_alloc(void *ctx, size_t size, size_t align)
{
    wr_child *c = ctx;
    note_size(c, size);
    if (align <= sizeof(void *) * 2) {
        wcet_marker(ROW_MALLOC, REPLAY_SC, call_index(c), size);
        return malloc(size);
    }
    void *p = NULL;
    return posix_memalign(&p, align, size) == 0 ? p : NULL; /* uncounted */
}

static void *g_resize(void *ctx, void *p, size_t size)
{
    note_size(ctx, size);
    return realloc(p, size); /* uncounted */
}

static void g_release(void *ctx, void *p)
{
    wr_child *c = ctx;
    if (c->at >= c->t->n) { /* clean-up, not a call of the trace */
        free(p);
        return;
    }
    wcet_marker(ROW_MFREE, REPLAY_SC, call_index(c), freed_size(c));
    free(p);
}

/* The child: self-test first (the tracer checks its counts), then the
 * replay with every call announced. Its refusals go to stdout (the
 * parent's, flushed before the fork). */
static int child_body(void *arg)
{
    static replay_result res;
    wr_child *c = arg;
    if (wcet_selftest_calls() != 0)
        return 1;
    c->bytes = calloc((size_t)c->t->max_id + 1, sizeof *c->bytes);
    if (c->bytes == NULL) {
        fprintf(stderr, "rtmem-wcet replay: out of memory\n");
        return 1;
    }
    int glibc = strcmp(c->alg, "glibc") == 0;
    replay_target tg = {c, c_alloc, c_resize, c_release, NULL, NULL, &c->at};
    if (glibc) {
        replay_target g = {c, g_alloc, g_resize, g_release, NULL, NULL, &c->at};
        tg = g;
    } else {
        char why[256];
        /* Not pre-faulted: page faults are kernel time, never in a count. */
        if (replay_rtm_open(&c->h, c->alg, c->region, 0, why, sizeof why) != 0) {
            fprintf(stderr, "rtmem-wcet replay: %s: %s\n", c->alg, why);
            return 1;
        }
    }
    if (replay_run(c->t, &tg, NULL, 0, &res) != 0) {
        fprintf(stderr, "rtmem-wcet replay: %s: out of memory\n", c->alg);
        return 1;
    }
    printf("wcet %s replayed ops=%llu refused=%llu skipped=%llu\n", c->alg,
           (unsigned long long)res.ops, (unsigned long long)res.refused,
           (unsigned long long)res.skipped);
    return 0;
}

/* --- the parent: one line per kind ----------------------------------------- */

static enum wr_kind kind_of(unsigned row)
{
    switch (row) {
    case ROW_ALLOC:
    case ROW_MALLOC:
        return WK_ALLOC;
    case ROW_ALIGNED_64:
        return WK_ALIGNED;
    case ROW_REALLOC_GROW:
        return WK_REALLOC;
    case ROW_FREE:
    case ROW_MFREE:
        return WK_FREE;
    default:
        return WK_COUNT; /* self-test */
    }
}

static int by_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Prints the lines of one allocator's samples; the instructions counted. */
static uint64_t report(const char *alg, const wcet_result *res, FILE *csv)
{
    for (size_t i = 0; csv != NULL && i < res->count; i++) {
        const wcet_sample *s = &res->samples[i];
        if (kind_of(s->row) != WK_COUNT)
            fprintf(csv, "%s,%s,%u,%llu,%u,%u\n", alg, wr_kind_names[kind_of(s->row)], s->variant,
                    (unsigned long long)s->size, s->count, s->syscalls);
    }
    uint32_t *counts = malloc((res->count ? res->count : 1) * sizeof *counts);
    uint64_t total = 0;
    for (unsigned k = 0; k < WK_COUNT; k++) {
        size_t n = 0;
        uint64_t sum = 0, sys = 0;
        const wcet_sample *worst = NULL;
        for (size_t i = 0; i < res->count; i++) {
            const wcet_sample *s = &res->samples[i];
            if (kind_of(s->row) != k)
                continue;
            if (counts != NULL)
                counts[n] = s->count;
            n++;
            sum += s->count;
            sys += s->syscalls;
            if (worst == NULL || s->count > worst->count)
                worst = s;
        }
        total += sum;
        if (n == 0)
            continue;
        uint32_t p99 = worst->count;
        if (counts != NULL) {
            qsort(counts, n, sizeof *counts, by_u32);
            size_t rank = (size_t)((double)n * 0.99 + 0.999999); /* nearest rank */
            p99 = counts[(rank ? rank : 1) - 1];
        }
        printf("wcet %s %s calls=%zu max=%u p99=%u mean=%.1f worst_call=%u worst_size=%llu "
               "syscalls=%llu\n",
               alg, wr_kind_names[k], n, worst->count, p99, (double)sum / (double)n, worst->variant,
               (unsigned long long)worst->size, (unsigned long long)sys);
    }
    free(counts);
    return total;
}

static enum wcet_allocator allocator_of(const char *alg)
{
    for (unsigned a = 0; a < AL_COUNT; a++)
        if (strcmp(wcet_allocators[a].name, alg) == 0)
            return (enum wcet_allocator)a;
    return AL_TLSF; /* only labels the samples */
}

static int run_one(const wr_opts *o, const trace *t, const char *alg, FILE *csv)
{
    static wr_child c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.alg = alg;
    c.region = o->region;
    wcet_result res;
    memset(&res, 0, sizeof res);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = wcet_run_child(child_body, &c, allocator_of(alg), &res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc != 0) {
        printf("wcet %s error %s\n", alg, res.error);
    } else {
        uint64_t total = report(alg, &res, csv);
        if (strcmp(alg, "glibc") == 0)
            printf("wcet glibc note realloc and aligned calls ran uncounted\n");
        printf("wcet %s done seconds=%.2f instructions=%llu\n", alg,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
               (unsigned long long)total);
    }
    fflush(stdout);
    wcet_result_free(&res);
    return rc;
}

static int valid_allocator(const char *name)
{
    return strcmp(name, "glibc") == 0 || rtm_min_region(name) != 0;
}

int wcet_replay_main(int argc, char **argv, const char *library_files)
{
    wr_opts o = {NULL, NULL, NULL, UINT64_C(64) << 20, UINT64_MAX};
    static const struct option longopts[] = {{"allocators", required_argument, NULL, 'a'},
                                             {"region", required_argument, NULL, 'r'},
                                             {"limit", required_argument, NULL, 'l'},
                                             {"csv", required_argument, NULL, 'c'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'a':
            o.allocators = optarg;
            break;
        case 'r':
            if (parse_u64(optarg, &o.region, 1) != 0 || o.region < 4096) {
                fprintf(stderr, "rtmem-wcet replay: bad --region '%s'\n", optarg);
                return opts_usage_error("wcet replay");
            }
            break;
        case 'l':
            if (parse_u64(optarg, &o.limit, 0) != 0 || o.limit == 0) {
                fprintf(stderr, "rtmem-wcet replay: --limit must be a number >= 1\n");
                return opts_usage_error("wcet replay");
            }
            break;
        case 'c':
            o.csv = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return opts_usage_error("wcet replay");
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "rtmem-wcet replay: exactly one trace FILE\n");
        return opts_usage_error("wcet replay");
    }
    o.file = argv[optind];
    /* The allocators, checked before anything runs. */
    char list[1024];
    if (o.allocators == NULL) {
        size_t n = 0;
        list[0] = '\0';
        for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? "," : "", *a);
    } else if (snprintf(list, sizeof list, "%s", o.allocators) >= (int)sizeof list) {
        fprintf(stderr, "rtmem-wcet replay: --allocators too long\n");
        return 2;
    }
    char *names[64];
    size_t nn = 0;
    for (char *save = NULL, *p = strtok_r(list, ",", &save); p != NULL;
         p = strtok_r(NULL, ",", &save)) {
        if (!valid_allocator(p) || nn == 64) {
            fprintf(stderr, "rtmem-wcet replay: unknown allocator '%s' (rtm heap names, glibc)\n",
                    p);
            return opts_usage_error("wcet replay");
        }
        names[nn++] = p;
    }
    if (nn == 0) {
        fprintf(stderr, "rtmem-wcet replay: --allocators is empty\n");
        return opts_usage_error("wcet replay");
    }
    char err[512];
    if (wcet_symbols_load(library_files, err, sizeof err) != 0) {
        fprintf(stderr, "rtmem-wcet replay: %s\n", err);
        return 1;
    }
    trace t;
    if (trace_load(o.file, &t, err, sizeof err) != 0) {
        fprintf(stderr, "rtmem-wcet replay: %s: %s\n", o.file, err);
        return 1;
    }
    if (o.limit < t.n)
        trace_truncate(&t, (size_t)o.limit);
    if (t.n > UINT32_MAX)
        trace_truncate(&t, UINT32_MAX); /* the marker's call index is 32 bits */
    FILE *csv = NULL;
    if (o.csv != NULL) {
        csv = fopen(o.csv, "w");
        if (csv == NULL) {
            fprintf(stderr, "rtmem-wcet replay: cannot write %s: %s\n", o.csv, strerror(errno));
            trace_free(&t);
            return 2;
        }
        fprintf(csv, "allocator,kind,call,size,instructions,syscalls\n");
    }
    /* Tracer and child on one CPU: they hand over without cross-CPU
     * wake-ups (main.c's lanes do the same). A refusal only costs speed. */
    int cpu = sched_getcpu();
    if (cpu >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET((unsigned)cpu, &one);
        (void)sched_setaffinity(0, sizeof one, &one);
    }
    printf("wcet trace calls=%zu region=%llu\n", t.n, (unsigned long long)o.region);
    int bad = 0;
    for (size_t i = 0; i < nn; i++)
        bad |= run_one(&o, &t, names[i], csv) != 0;
    if (csv != NULL && fclose(csv) != 0) {
        fprintf(stderr, "rtmem-wcet replay: cannot write %s\n", o.csv);
        bad = 1;
    }
    trace_free(&t);
    return bad;
}
