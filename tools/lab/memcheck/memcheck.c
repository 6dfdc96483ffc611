// SPDX-License-Identifier: MIT
/*
 * memcheck.c -- `rtmem memcheck`: options, arena sizing, and the
 * sequence of the method (docs/METHODS.md), phase by phase, in Xenomai's order:
 *
 *   power-of-two phase: heap sizes 8 KiB doubling while < seq_heap_size;
 *     for each heap: every block size 16 B doubling while < heap/2, as
 *     plain, then HOT, then SHUFFLE, then HOT+SHUFFLE
 *   random phase: for each of plain, HOT, SHUFFLE, HOT+SHUFFLE, for each heap
 *     size, random_rounds runs with block = random % (heap/2), 0 -> 1
 *   pattern phase: pattern_rounds SHUFFLE+PATTERN runs on pattern_heap_size
 *     with random blocks; pass or fail only (no rows, timings disturbed)
 *
 * A run that fails (too many blocks, failed free, HOT count, leak, heap
 * check) is listed with its reason and the sequence goes on, so one report
 * shows every failure; the exit status is then 1.
 *
 * Which heap each run gets, over how large an arena: memcheck_heap.c.
 * --all runs the whole sequence once per algorithm, each with the same seed
 * (so every heap sees the same block sizes and shuffles), and ends with one
 * table of every heap's overall figures beside the published ones.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/machine.h"
#include "memcheck/memcheck.h"
#include "common/opts.h"
#include "common/rt.h"

#define MIN_HEAP_SIZE  8192u
#define MAX_HEAP_LIMIT (UINT64_C(1) << 30)

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem memcheck [options]\n"
               "\n"
               "The Xenomai smokey memcheck method over rtm heaps: power-of-two phase\n"
               "(plain, HOT, SHUFFLE, HOT+SHUFFLE), random phase, pattern phase; rows and\n"
               "'overall' blocks in Xenomai's layout, the published Xenomai figures beside\n"
               "ours, and rtmem's overhead/fragmentation targets for its TLSF as PASS/FAIL.\n"
               "Each heap's arena offers HEAPSZ usable bytes (memcheck_heap.c says how).\n"
               "The method, and how it differs from Xenomai's: docs/METHODS.md.\n"
               "\n"
               "  --algorithm NAME        one heap, default tlsf: pshared (TLSF in POSIX shared\n"
               "                          memory behind its robust PI mutex) or one of\n"
               "                          ");
    /* The library's own list, so that a new algorithm is never missing here. */
    int col = 26;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++) {
        if (col > 26 && col + 2 + (int)strlen(*a) > 78) {
            fprintf(f, ",\n%26s", "");
            col = 26;
        } else if (col > 26) {
            col += fprintf(f, ", ");
        }
        col += fprintf(f, "%s", *a);
    }
    fprintf(f,
            ",\n"
            "                          with a parameter where it takes one (buddy:4096,\n"
            "                          pool:64). \"pool\" alone gets a pool of each run's\n"
            "                          block size\n"
            "  --all                   every rtm algorithm and pshared, one after the other with\n"
            "                          the same seed, then one table of all of them\n"
            "  --seq-heap-size SIZE    heaps 8k doubling while below SIZE (default 2048k)\n"
            "  --random-rounds N       runs per heap size and variant (default 1024)\n"
            "  --pattern-heap-size SIZE  heap of the pattern phase (default 128k)\n"
            "  --pattern-rounds N      runs of the pattern phase (default 128)\n"
            "  --max-results N         rows per sorted view (default 4; -1: all, by heap size)\n"
            "  --seed S                random seed (default: time and pid; printed)\n"
            "  --cpu N                 CPU to pin to (default: the last one allowed)\n"
            "  --no-rt                 skip mlockall, SCHED_FIFO and pinning\n"
            "  --quick                 short profile: 64k, 16 rounds, 32k pattern heap, 8 rounds\n"
            "  --json FILE             also write the results as JSON (docs/RESULTS.md)\n"
            "  --help                  this text\n");
}

/* --- phases ------------------------------------------------------------------ */

static void record_failure(mc_ctx *c, const char *phase, size_t heap, size_t block, int flags)
{
    char line[512];
    snprintf(line, sizeof line, "%s: %zuk heap, %zu-byte blocks%s%s%s: %s", phase, heap / 1024,
             block, flags & MC_SHUFFLE ? " +shuffle" : "", flags & MC_HOT ? " +hot" : "",
             flags & MC_PATTERN ? " +pattern" : "", c->why);
    char **grown = realloc(c->failures, (c->nfailures + 1) * sizeof *grown);
    char *copy = malloc(strlen(line) + 1);
    if (grown == NULL || copy == NULL) {
        free(copy);
        if (grown != NULL)
            c->failures = grown;
        return;
    }
    strcpy(copy, line);
    c->failures = grown;
    c->failures[c->nfailures++] = copy;
}

/* One run, recorded in ph (or as a failure). */
static void phase_run(mc_ctx *c, mc_phase *ph, const char *name, size_t heap, size_t block,
                      int flags)
{
    mc_row row;
    ph->runs++;
    if (mc_run(c, heap, block, flags, &row) != 0) {
        ph->failed++;
        record_failure(c, name, heap, block, flags);
        return;
    }
    if (flags & MC_PATTERN) /* pass or fail only: timings disturbed by the checks */
        return;
    if (ph->nrows == ph->cap) {
        size_t cap = ph->cap ? ph->cap * 2 : 1024;
        mc_row *grown = realloc(ph->rows, cap * sizeof *grown);
        if (grown == NULL)
            return;
        ph->rows = grown;
        ph->cap = cap;
    }
    ph->rows[ph->nrows++] = row;
}

static const int variants[4] = {0, MC_HOT, MC_SHUFFLE, MC_HOT | MC_SHUFFLE};

static void pow2_phase(mc_ctx *c, mc_phase *ph)
{
    for (size_t heap = MIN_HEAP_SIZE; heap < c->p->seq_heap_size; heap <<= 1)
        for (int v = 0; v < 4; v++)
            for (size_t block = 16; block < heap / 2; block <<= 1)
                phase_run(c, ph, "pow2", heap, block, variants[v]);
}

static size_t random_block(mc_ctx *c, size_t heap)
{
    size_t block = (size_t)rng_below(&c->rng, heap / 2);
    return block != 0 ? block : 1;
}

static void random_phase(mc_ctx *c, mc_phase *ph)
{
    for (int v = 0; v < 4; v++)
        for (size_t heap = MIN_HEAP_SIZE; heap < c->p->seq_heap_size; heap <<= 1)
            for (uint64_t r = 0; r < c->p->random_rounds; r++)
                phase_run(c, ph, "random", heap, random_block(c, heap), variants[v]);
}

static void pattern_phase(mc_ctx *c, mc_phase *ph)
{
    size_t heap = (size_t)c->p->pattern_heap_size;
    for (uint64_t r = 0; r < c->p->pattern_rounds; r++)
        phase_run(c, ph, "pattern", heap, random_block(c, heap), MC_SHUFFLE | MC_PATTERN);
}

/* --- setup --------------------------------------------------------------------- */

static void *prefaulted(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memset(m, 0, bytes);
    return m;
}

static void on_misuse(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                      void *arg)
{
    (void)kind;
    (void)heap;
    (void)ptr;
    (void)detail;
    ((mc_ctx *)arg)->misuse++;
}

/* Buffers sized for the largest heap: the arena (heap x 2 + 1 MiB leaves the
 * arena search room for any sane metadata) and the per-block tables. */
int mc_ctx_init(mc_ctx *c, const mc_params *p)
{
    memset(c, 0, sizeof *c);
    c->p = p;
    size_t largest = 0;
    for (size_t heap = MIN_HEAP_SIZE; heap < p->seq_heap_size; heap <<= 1)
        largest = heap;
    if (p->pattern_heap_size > largest)
        largest = (size_t)p->pattern_heap_size;
    c->max_blocks = largest;
    c->buf_size = largest * 2 + (1u << 20);
    c->buf = prefaulted(c->buf_size);
    c->chunks = prefaulted(largest * sizeof *c->chunks);
    c->ideal_order = prefaulted(largest * sizeof *c->ideal_order);
    c->ideal_map = prefaulted(largest);
    rtm_set_error_handler(on_misuse, c);
    return c->buf && c->chunks && c->ideal_order && c->ideal_map ? 0 : -1;
}

/* Known = the library accepts the name, with its parameter if any
 * ("pool:64"): rtm_min_region() validates both as rtm_heap_create() does. */
static int algorithm_known(const char *name)
{
    return rtm_min_region(name) != 0 || mc_is_pshared(name);
}

static int validate(const mc_params *p)
{
    if (!p->all && !algorithm_known(p->algorithm)) {
        opts_error("memcheck", "unknown algorithm or parameter '%s'; rtm_algorithms() and pshared:",
                   p->algorithm);
        for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
            fprintf(stderr, "  %s\n", *a);
        return -1;
    }
    if (p->seq_heap_size <= MIN_HEAP_SIZE || p->seq_heap_size > MAX_HEAP_LIMIT) {
        opts_error("memcheck", "--seq-heap-size must be above 8k and at most 1g");
        return -1;
    }
    if (p->pattern_heap_size < 1024 || p->pattern_heap_size > MAX_HEAP_LIMIT) {
        opts_error("memcheck", "--pattern-heap-size must be in [1k, 1g]");
        return -1;
    }
    if (p->max_results < -1) {
        opts_error("memcheck", "--max-results must be -1 or more");
        return -1;
    }
    if (!rt_cpu_usable(p->cpu)) {
        opts_error("memcheck", "--cpu %lld is not a CPU this process may use", (long long)p->cpu);
        return -1;
    }
    /* No runs would leave every average 0/0: figures of nan, and the
     * targets judged on nothing. */
    if (p->random_rounds == 0 || p->pattern_rounds == 0) {
        opts_error("memcheck", "--%s: expected at least 1, got 0",
                   p->random_rounds == 0 ? "random-rounds" : "pattern-rounds");
        return -1;
    }
    return 0;
}

/* Parses into p. Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, mc_params *p)
{
    opt_spec specs[] = {
        {"algorithm", OPT_STR, &p->algorithm, 0},
        {"all", OPT_FLAG, &p->all, 0},
        {"seq-heap-size", OPT_SIZE, &p->seq_heap_size, 0},
        {"random-rounds", OPT_U64, &p->random_rounds, 0},
        {"pattern-heap-size", OPT_SIZE, &p->pattern_heap_size, 0},
        {"pattern-rounds", OPT_U64, &p->pattern_rounds, 0},
        {"max-results", OPT_I64, &p->max_results, 0},
        {"seed", OPT_U64, &p->seed, 0},
        {"cpu", OPT_I64, &p->cpu, 0},
        {"no-rt", OPT_FLAG, &p->no_rt, 0},
        {"quick", OPT_FLAG, &p->quick, 0},
        {"json", OPT_STR, &p->json, 0},
    };
    size_t n = sizeof specs / sizeof specs[0];
    int rc = opts_parse_or_exit(argc, argv, specs, n, usage);
    if (rc != OPTS_GO_ON)
        return rc;
    if (p->quick) {
        if (!opts_given(specs, n, "seq-heap-size"))
            p->seq_heap_size = 64u << 10;
        if (!opts_given(specs, n, "random-rounds"))
            p->random_rounds = 16;
        if (!opts_given(specs, n, "pattern-heap-size"))
            p->pattern_heap_size = 32u << 10;
        if (!opts_given(specs, n, "pattern-rounds"))
            p->pattern_rounds = 8;
    }
    if (p->all && opts_given(specs, n, "algorithm")) {
        opts_error("memcheck", "--all and --algorithm exclude each other");
        return opts_usage_error("memcheck");
    }
    if (!opts_given(specs, n, "seed"))
        p->seed = (uint64_t)time(NULL) * UINT64_C(1000003) ^ (uint64_t)getpid();
    if (validate(p) != 0) {
        return opts_usage_error("memcheck");
    }
    return -1;
}

static void print_start(const mc_params *p, const machine *m, const char *setup,
                        const char *clock_note)
{
    time_t now = time(NULL);
    printf("== memcheck started at %s", ctime(&now));
    printf("     seq_heap_size=%lluk\n", (unsigned long long)p->seq_heap_size / 1024);
    printf("     random_alloc_rounds=%llu\n", (unsigned long long)p->random_rounds);
    printf("     pattern_heap_size=%lluk\n", (unsigned long long)p->pattern_heap_size / 1024);
    printf("     pattern_check_rounds=%llu\n", (unsigned long long)p->pattern_rounds);
    printf("     algorithm=%s seed=%llu%s\n", p->all ? "all" : p->algorithm,
           (unsigned long long)p->seed, p->quick ? " (quick profile)" : "");
    machine_print(stdout, m);
    printf("%s\n%s\n", setup, clock_note);
}

static double seconds_since(uint64_t t0) { return (double)(mono_ns() - t0) / 1e9; }

/* Puts the context in its fresh state for `algorithm`: no cached arenas, no
 * failures, the generators at the seed (every heap sees the same runs). */
static void ctx_start(mc_ctx *c, const char *algorithm)
{
    c->algorithm = algorithm;
    c->narenas = 0;
    c->failures = NULL;
    c->nfailures = 0;
    c->misuse = 0;
    rng_seed(&c->rng, c->p->seed);
    rng_seed(&c->ideal_rng, c->p->seed ^ UINT64_C(0x1DEA1));
}

/* The whole sequence over one algorithm, printed as it goes. */
static void run_algorithm(mc_ctx *c, const char *algorithm, mc_result *r, const char *setup,
                          const char *clock_note)
{
    ctx_start(c, algorithm);
    memset(r, 0, sizeof *r);
    r->algorithm = algorithm;
    r->pow2.title = "SEQUENTIAL ALLOC->FREE, ^2 BLOCK SIZES";
    r->rnd.title = "SEQUENTIAL ALLOC->FREE, RANDOM BLOCK SIZES";
    mc_phase pat = {"PATTERN CHECK", NULL, 0, 0, 0, 0};
    uint64_t t0 = mono_ns();
    pow2_phase(c, &r->pow2);
    fprintf(stderr, "memcheck %s: pow2 phase, %zu runs, %.1f s\n", algorithm, r->pow2.runs,
            seconds_since(t0));
    mc_print_phase(&r->pow2, algorithm, c->p->max_results);
    t0 = mono_ns();
    random_phase(c, &r->rnd);
    fprintf(stderr, "memcheck %s: random phase, %zu runs, %.1f s\n", algorithm, r->rnd.runs,
            seconds_since(t0));
    mc_print_phase(&r->rnd, algorithm, c->p->max_results);
    t0 = mono_ns();
    pattern_phase(c, &pat);
    fprintf(stderr, "memcheck %s: pattern phase, %zu runs, %.1f s\n", algorithm, pat.runs,
            seconds_since(t0));
    r->pattern_ok = pat.failed == 0;
    r->pattern_runs = pat.runs;
    memcpy(r->arenas, c->arenas, sizeof r->arenas);
    r->narenas = c->narenas;
    r->failures = c->failures;
    r->nfailures = c->nfailures;
    mc_print_summary(c->p, r, setup, clock_note);
}

/* The algorithms to run: one, or every rtm algorithm and pshared (--all). */
static size_t algorithm_list(const mc_params *p, const char **out, size_t max)
{
    if (!p->all) {
        out[0] = p->algorithm;
        return 1;
    }
    size_t n = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL && n < max - 1; a++)
        out[n++] = *a;
    out[n++] = "pshared";
    return n;
}

int memcheck_main(int argc, char **argv)
{
    mc_params p = {"tlsf", 0, 2048u << 10, 1024, 128u << 10, 128, 4, 0, 0, 0, -1, NULL};
    int rc = parse(argc, argv, &p);
    if (rc >= 0)
        return rc;
    static mc_ctx c;
    if (mc_ctx_init(&c, &p) != 0) {
        fprintf(stderr, "rtmem memcheck: cannot map the buffers: %s\n", strerror(errno));
        return 1;
    }
    /* Described before rt_setup() pins us: "CPUs allowed" is the machine's. */
    static machine m;
    machine_describe(&m);
    char setup[512], clock_note[256];
    rt_setup(!p.no_rt, p.cpu, setup, sizeof setup);
    uint64_t cost, cost_min;
    clock_monotonic_cost(&cost, &cost_min);
    snprintf(clock_note, sizeof clock_note,
             "clock: clock_gettime(CLOCK_MONOTONIC) around each call, as in Xenomai; one read "
             "pair costs %llu ns here (median; min %llu), included in every time below",
             (unsigned long long)cost, (unsigned long long)cost_min);
    print_start(&p, &m, setup, clock_note);

    const char *names[16];
    size_t n = algorithm_list(&p, names, sizeof names / sizeof names[0]);
    static mc_result results[16];
    rc = 0;
    for (size_t i = 0; i < n; i++) {
        run_algorithm(&c, names[i], &results[i], setup, clock_note);
        if (results[i].nfailures != 0 || !results[i].pattern_ok)
            rc = 1;
    }
    if (n > 1)
        mc_print_all(results, n);
    if (p.json != NULL && mc_write_json(&p, &m, results, n, setup, (double)cost) != 0) {
        fprintf(stderr, "rtmem memcheck: cannot write %s: %s\n", p.json, strerror(errno));
        rc = 1;
    }
    for (size_t i = 0; i < n; i++) {
        free(results[i].pow2.rows);
        free(results[i].rnd.rows);
        for (size_t k = 0; k < results[i].nfailures; k++)
            free(results[i].failures[k]);
        free(results[i].failures);
    }
    return rc;
}
