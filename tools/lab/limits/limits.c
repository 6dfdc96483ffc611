// SPDX-License-Identifier: MIT
/*
 * limits.c -- `rtmem limits`: options, and the parent's schedule of child
 * processes (limits_cmd.h says why every probe and run is a child).
 *
 * Order of work: the clock is calibrated once here and handed to every
 * child, so all rows share one conversion and one subtracted cost. Then one
 * largest-block probe per allocator (deterministic: once is enough), then
 * the timing runs, interleaved: run 1 of every allocator, then run 2, ... A
 * disturbance on a shared machine lasts seconds; interleaving spreads it
 * over all allocators instead of charging it to whichever ran during it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "limits/limits_cmd.h"
#include "common/opts.h"
#include "rtmem.h"
#include "common/spawn.h"

#define CMD             "limits"
#define DEFAULT_SIZES   "5,1000,4096,65536,262000,262144"
#define DEFAULT_REGION  (UINT64_C(64) << 20)
#define DEFAULT_CAP     (UINT64_C(1) << 40)
#define MAX_REGION      (UINT64_C(4) << 30)
#define MAX_CAP         (UINT64_C(64) << 40) /* half of x86-64's 128 TiB user space */
#define MAX_COUNT       10000000u
#define MAX_RUNS        1000u
#define CHILD_OUT_MAX   65536
#define NON_RTM_DEFAULT "glibc,mimalloc,jemalloc,tcmalloc,mmap,mmap-populate"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem limits [options]\n"
            "\n"
            "The two probes of the Linux memmax/memtim kernel modules (docs/METHODS.md).\n"
            "(1) The largest single block each allocator gives: the request doubles from one\n"
            "page (4096) until it is refused, then a binary search finds the exact largest;\n"
            "rtm heaps on a pre-faulted region of --region bytes, malloc (glibc, peers by\n"
            "LD_PRELOAD) and mmap(MAP_NORESERVE), the vmalloc analogue, up to --cap without\n"
            "touching the blocks. (2) Ticks per allocation at each size: blocks allocated in\n"
            "batches, each call timed with the calibrated TSC clock, the clock's own cost\n"
            "subtracted; runs interleaved across allocators.\n"
            "Every probe and run is a child process. The modules' published kernel figures\n"
            "are printed beside ours, as figures of another system.\n"
            "\n"
            "  --region BYTES     region of each rtm heap (default 64m; k/m/g suffixes)\n"
            "  --sizes LIST       comma-separated request sizes (default " DEFAULT_SIZES ")\n"
            "  --count N          timed allocations per size and run (default 1024, as the\n"
            "                     memtim module; --quick: 256)\n"
            "  --runs N           interleaved timing runs (default 5; --quick: 2)\n"
            "  --allocators LIST  comma-separated: any rtm heap name (tlsf, pool:4096, buddy,\n"
            "                     halffit, slab, heapmem, ...), glibc, mimalloc, jemalloc,\n"
            "                     tcmalloc, mmap, mmap-populate (default: every rtm algorithm\n"
            "                     with its default parameter, then " NON_RTM_DEFAULT ")\n"
            "  --cap BYTES        largest request the malloc and mmap probes make (default\n"
            "                     1024g = 1 TiB; at most 64 TiB); reaching it reads \">= cap\"\n"
            "  --quick            short profile for CI\n"
            "  --json FILE        also write the results as JSON (docs/schema/limits.schema.json)\n"
            "  --help             this text\n"
            "\n"
            "Peer libraries are searched in the usual library directories; set\n"
            "RTMEM_BENCH_LIB_MIMALLOC (..._JEMALLOC, ..._TCMALLOC) to a path to override.\n");
}

static const char *const own_kinds[] = {"mmap", "mmap-populate", NULL};
static const aut_rules rules = {AUT_ACCEPT(AUT_RTM) | AUT_ACCEPT_MALLOC | AUT_ACCEPT(AUT_OWN),
                                own_kinds,
                                "any rtm heap name, glibc, mimalloc, jemalloc, tcmalloc, rtmem, "
                                "mmap, mmap-populate"};

static lim_kind kind_of(const aut *a)
{
    if (a->kind == AUT_OWN)
        return strcmp(a->name, "mmap") == 0 ? LIM_MMAP : LIM_MMAP_POPULATE;
    return a->kind == AUT_RTM ? LIM_RTM : LIM_MALLOC;
}

int limits_kind_of(const char *name, lim_kind *kind, const peer **p)
{
    aut a;
    char why[160];
    if (aut_parse(name, &rules, &a, why, sizeof why) != 0)
        return -1;
    *kind = kind_of(&a);
    *p = a.peer;
    return 0;
}

uint64_t limits_batch(const limits_opts *o, uint64_t size)
{
    uint64_t fit = o->region / (2u * size);
    uint64_t b = fit < o->count ? fit : o->count;
    return b != 0 ? b : 1;
}

/* --- option checks ------------------------------------------------------ */

/* Parses --sizes into o->sizes. Returns 0 or -1 (message printed). */
static int parse_sizes(limits_opts *o)
{
    const char *p = o->sizes_text;
    o->nsizes = 0;
    while (1) {
        size_t len = strcspn(p, ",");
        char item[32];
        uint64_t v = 0;
        if (len == 0 || len >= sizeof item || o->nsizes == LIM_MAX_SIZES) {
            opts_error(CMD, "bad --sizes '%s': need 1 to %d sizes, comma-separated", o->sizes_text,
                       LIM_MAX_SIZES);
            return -1;
        }
        snprintf(item, sizeof item, "%.*s", (int)len, p);
        if (opts_parse_size(item, &v) != 0 || v == 0 || v > o->region) {
            opts_error(CMD, "bad size '%s' in --sizes: need 1 <= size <= --region (%llu)", item,
                       (unsigned long long)o->region);
            return -1;
        }
        o->sizes[o->nsizes++] = v;
        p += len;
        if (*p == '\0')
            return 0;
        p++; /* the comma; a trailing one leaves an empty item: refused above */
    }
}

static int validate(limits_opts *o)
{
    if (o->region < 4096 || o->region > MAX_REGION) {
        opts_error(CMD, "--region must be in [4096, %llu] bytes", (unsigned long long)MAX_REGION);
        return -1;
    }
    if (o->cap < 4096 || o->cap > MAX_CAP || o->cap > SIZE_MAX) {
        opts_error(CMD, "--cap must be in [4096, %llu] bytes", (unsigned long long)MAX_CAP);
        return -1;
    }
    if (o->count == 0 || o->count > MAX_COUNT || o->runs == 0 || o->runs > MAX_RUNS) {
        opts_error(CMD, "--count must be in [1, %u] and --runs in [1, %u]", MAX_COUNT, MAX_RUNS);
        return -1;
    }
    return parse_sizes(o);
}

/* The default --allocators: every algorithm rtm_algorithms() lists, then
 * the malloc peers and mmap. */
static const char *default_allocators(void)
{
    static char buf[512];
    size_t n = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s,", *a);
    snprintf(buf + n, sizeof buf - n, "%s", NON_RTM_DEFAULT);
    return buf;
}

/* Splits --allocators into rows. Returns the count, or 0 (message printed). */
static size_t parse_allocators(const char *list, uint64_t region, lim_row *rows)
{
    static aut auts[LIM_MAX_ALLOCATORS];
    char why[256];
    size_t n = aut_parse_list(list, &rules, auts, LIM_MAX_ALLOCATORS, why, sizeof why);
    if (n == 0) {
        opts_error(CMD, "--allocators: %s", why);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = auts[i].name;
        /* A heap that cannot be made on the region is the user's choice of
         * region, not a failure of the method. */
        if (auts[i].kind == AUT_RTM && rtm_min_region(name) > region) {
            opts_error(CMD, "--region %llu is below the smallest region of '%s' (%zu bytes)",
                       (unsigned long long)region, name, rtm_min_region(name));
            return 0;
        }
        memset(&rows[i], 0, sizeof rows[i]);
        memcpy(rows[i].name, name, sizeof auts[i].name); /* LIM_NAME_MAX == AUT_NAME_MAX */
        rows[i].kind = kind_of(&auts[i]);
        rows[i].peer = auts[i].peer;
        rows[i].aut = &auts[i];
    }
    return n;
}

/* --- the children ------------------------------------------------------- */

/* Room for the parent's options: 9 valued options (18 words), the child
 * selector and library (4), "rtmem limits" and the terminating NULL. */
typedef struct child_args {
    char buf[9][64];
    char *argv[32];
} child_args;

static void child_argv(const limits_bench *b, const lim_row *row, int largest, child_args *a)
{
    const limits_opts *o = b->o;
    size_t n = 0, k = 0;
    a->argv[n++] = "rtmem";
    a->argv[n++] = "limits";
#define ARG(name, fmt, val)                                                                        \
    do {                                                                                           \
        a->argv[n++] = name;                                                                       \
        snprintf(a->buf[k], sizeof a->buf[k], fmt, val);                                           \
        a->argv[n++] = a->buf[k++];                                                                \
    } while (0)
    ARG("--region", "%llu", (unsigned long long)o->region);
    ARG("--count", "%llu", (unsigned long long)o->count);
    ARG("--cap", "%llu", (unsigned long long)o->cap);
    ARG("--child-tick-ns", "%.17g", b->clk.ns_per_tick);
    ARG("--child-cost", "%llu", (unsigned long long)b->clk.cost_ticks);
    ARG("--child-tsc", "%d", b->clk.use_tsc);
#undef ARG
    a->argv[n++] = "--sizes";
    a->argv[n++] = (char *)o->sizes_text;
    a->argv[n++] = largest ? "--child-largest" : "--child-time";
    a->argv[n++] = (char *)row->name;
    if (row->lib[0] != '\0') {
        a->argv[n++] = "--child-lib";
        a->argv[n++] = (char *)row->lib;
    }
    a->argv[n] = NULL;
    _Static_assert(sizeof a->argv / sizeof a->argv[0] >= 2 + 2 * 9 + 1, "child argv too small");
}

/* Runs one child; out gets its stdout. Returns 0, or -1 with why filled. */
static int spawn_child(const limits_bench *b, const lim_row *row, int largest, char *out, char *why,
                       size_t why_n)
{
    static child_args a;
    child_argv(b, row, largest, &a);
    spawn_result sp;
    lab_spawn(a.argv, row->lib, out, CHILD_OUT_MAX, &sp);
    if (!sp.ran || sp.signal != 0) {
        snprintf(why, why_n, "%s", sp.why);
        return -1;
    }
    if (sp.exit_status != 0) {
        snprintf(why, why_n, "child exit status %d", sp.exit_status);
        return -1;
    }
    return 0;
}

static void probe_row(const limits_bench *b, lim_row *row)
{
    static char out[CHILD_OUT_MAX];
    char why[256] = "";
    int rc = spawn_child(b, row, 1, out, why, sizeof why);
    if (limits_parse_largest(out, &row->largest) != 0 || rc != 0) {
        row->largest.status = LAB_ERROR;
        snprintf(row->largest.id.why, sizeof row->largest.id.why, "%s%s", why,
                 rc == 0 ? "child printed no LARGEST line" : "");
    }
}

static void time_row(const limits_bench *b, lim_row *row, lim_time_run *run)
{
    static char out[CHILD_OUT_MAX];
    char why[sizeof run->heap_why] = ""; /* what the row keeps of it */
    int rc = spawn_child(b, row, 0, out, why, sizeof why);
    if (limits_parse_time(out, b->o, run) != 0 || !run->done) {
        run->done = 0;
        snprintf(run->heap_why, sizeof run->heap_why, "%s", why[0] ? why : "no result line");
    } else if (rc != 0 && run->heap_ok) {
        run->heap_ok = 0;
        snprintf(run->heap_why, sizeof run->heap_why, "%s", why);
    }
}

static void locate_libraries(lim_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        lim_row *r = &rows[i];
        /* The schema has no "not built": a missing drop-in is not installed
         * here either. */
        if (aut_locate(r->aut, r->lib, sizeof r->lib) != LAB_OK)
            r->status = LAB_NOT_INSTALLED;
    }
}

static void run_children(limits_bench *b)
{
    fprintf(stderr, "limits: largest block:");
    for (size_t i = 0; i < b->nrows; i++) {
        if (b->rows[i].status == LAB_NOT_INSTALLED)
            continue;
        probe_row(b, &b->rows[i]);
        fprintf(stderr, " %s", b->rows[i].name);
    }
    fprintf(stderr, "\n");
    for (uint64_t r = 0; r < b->o->runs; r++) {
        fprintf(stderr, "limits: timing run %llu/%llu:", (unsigned long long)r + 1,
                (unsigned long long)b->o->runs);
        for (size_t i = 0; i < b->nrows; i++) {
            lim_row *row = &b->rows[i];
            if (row->status == LAB_NOT_INSTALLED)
                continue;
            time_row(b, row, &row->runs[r]);
            fprintf(stderr, " %s%s", row->name, row->runs[r].done ? "" : "(!)");
        }
        fprintf(stderr, "\n");
    }
}

/* A row is invalid when any child found the preload not in effect, in error
 * when a child failed or a heap check did; else ok. */
static void row_status(const limits_bench *b, lim_row *row)
{
    if (row->status == LAB_NOT_INSTALLED)
        return;
    row->status = LAB_OK;
    if (row->largest.status == LAB_INVALID)
        row->status = LAB_INVALID;
    if (row->largest.status == LAB_ERROR)
        row->status = LAB_ERROR;
    for (uint64_t r = 0; r < b->o->runs; r++) {
        const lim_time_run *run = &row->runs[r];
        if (run->done && !run->id.valid && row->status == LAB_OK)
            row->status = LAB_INVALID;
        if (!run->done || !run->heap_ok)
            row->status = LAB_ERROR;
    }
}

/* --- the machine's virtual-memory policy ---------------------------------- */

static uint64_t meminfo_bytes(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    unsigned long long kb = 0;
    size_t len = strlen(key);
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, key, len) == 0 && line[len] == ':')
            sscanf(line + len + 1, "%llu", &kb);
    if (f != NULL)
        fclose(f);
    return (uint64_t)kb * 1024u;
}

static void describe_vm(lim_vm *vm)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    vm->overcommit = -1;
    if (f != NULL) {
        if (fscanf(f, "%d", &vm->overcommit) != 1)
            vm->overcommit = -1;
        fclose(f);
    }
    vm->mem_total = meminfo_bytes("MemTotal");
    vm->swap_total = meminfo_bytes("SwapTotal");
    struct rlimit rl;
    vm->rlimit_as = 0;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        vm->rlimit_as = (uint64_t)rl.rlim_cur;
}

/* --- the clock's granularity --------------------------------------------- */

#define MODE_SAMPLES 100000u

static int cmp_u64(const void *l, const void *r)
{
    uint64_t a = *(const uint64_t *)l, b = *(const uint64_t *)r;
    return (a > b) - (a < b);
}

/* Inserts (value, count) into the top-LIM_CLOCK_MODES list, most frequent first. */
static void keep_mode(limits_bench *b, uint64_t value, size_t count, size_t *counts)
{
    size_t at = b->nmodes < LIM_CLOCK_MODES ? b->nmodes++ : LIM_CLOCK_MODES;
    if (at == LIM_CLOCK_MODES && count <= counts[LIM_CLOCK_MODES - 1])
        return;
    if (at == LIM_CLOCK_MODES)
        at = LIM_CLOCK_MODES - 1;
    for (; at > 0 && counts[at - 1] < count; at--) {
        counts[at] = counts[at - 1];
        b->mode_ticks[at] = b->mode_ticks[at - 1];
    }
    counts[at] = count;
    b->mode_ticks[at] = value;
}

/* The most frequent durations of an empty interval (two clock reads). */
static void clock_modes(limits_bench *b)
{
    uint64_t *d = malloc(MODE_SAMPLES * sizeof *d);
    size_t counts[LIM_CLOCK_MODES] = {0};
    b->nmodes = 0;
    if (d == NULL)
        return;
    for (unsigned i = 0; i < MODE_SAMPLES; i++) {
        uint64_t t0 = clock_ticks(&b->clk);
        d[i] = clock_ticks(&b->clk) - t0;
    }
    qsort(d, MODE_SAMPLES, sizeof *d, cmp_u64);
    for (size_t i = 0, j; i < MODE_SAMPLES; i = j) {
        for (j = i; j < MODE_SAMPLES && d[j] == d[i]; j++)
            ;
        keep_mode(b, d[i], j - i, counts);
    }
    for (size_t i = 0; i < b->nmodes; i++)
        b->mode_share[i] = (double)counts[i] / MODE_SAMPLES;
    free(d);
}

/* --- the parent ----------------------------------------------------------- */

static int run_parent(const limits_opts *o, lim_row *rows, size_t nrows)
{
    static limits_bench b;
    b.o = o;
    b.rows = rows;
    b.nrows = nrows;
    machine_describe(&b.m);
    describe_vm(&b.vm);
    snprintf(b.rt_note, sizeof b.rt_note,
             "not applied: mlockall(MCL_FUTURE) would fault in every mapping (the 1 TiB "
             "probes, the lazy mmap row, malloc's fresh chunks) and change what is measured; "
             "children run SCHED_OTHER, unpinned");
    clock_calibrate(&b.clk, 1);
    clock_describe(&b.clk, b.clock_text, sizeof b.clock_text);
    clock_modes(&b);
    locate_libraries(rows, nrows);
    for (size_t i = 0; i < nrows; i++) {
        rows[i].runs = calloc((size_t)o->runs, sizeof *rows[i].runs);
        if (rows[i].runs == NULL) {
            fprintf(stderr, "rtmem limits: out of memory\n");
            return 1;
        }
    }
    run_children(&b);
    int rc = 0;
    for (size_t i = 0; i < nrows; i++) {
        row_status(&b, &rows[i]);
        /* An rtm heap's failure is the method's; a peer's is its row's. */
        if (rows[i].kind == LIM_RTM && rows[i].status != LAB_OK)
            rc = 1;
    }
    limits_print(&b);
    if (o->json != NULL && limits_write_json(&b, o->json) != 0) {
        fprintf(stderr, "rtmem limits: cannot write %s: %s\n", o->json, strerror(errno));
        rc = 1;
    }
    for (size_t i = 0; i < nrows; i++)
        free(rows[i].runs);
    return rc;
}

int limits_main(int argc, char **argv)
{
    limits_opts o;
    memset(&o, 0, sizeof o);
    o.region = DEFAULT_REGION;
    o.count = 1024;
    o.runs = 5;
    o.cap = DEFAULT_CAP;
    o.sizes_text = DEFAULT_SIZES;
    o.allocators = default_allocators();
    o.child_tick_ns = 1.0;
    opt_spec specs[] = {
        {"region", OPT_SIZE, &o.region, 0},
        {"sizes", OPT_STR, &o.sizes_text, 0},
        {"count", OPT_U64, &o.count, 0},
        {"runs", OPT_U64, &o.runs, 0},
        {"allocators", OPT_STR, &o.allocators, 0},
        {"cap", OPT_SIZE, &o.cap, 0},
        {"quick", OPT_FLAG, &o.quick, 0},
        {"json", OPT_STR, &o.json, 0},
        /* Internal: the parent's options for a child run. */
        {"child-largest", OPT_STR, &o.child_largest, 0},
        {"child-time", OPT_STR, &o.child_time, 0},
        {"child-lib", OPT_STR, &o.child_lib, 0},
        {"child-tick-ns", OPT_DBL, &o.child_tick_ns, 0},
        {"child-cost", OPT_U64, &o.child_cost, 0},
        {"child-tsc", OPT_U64, &o.child_tsc, 0},
    };
    size_t ns = sizeof specs / sizeof specs[0];
    int r = opts_parse(argc, argv, specs, ns);
    if (r == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    if (o.quick && !opts_given(specs, ns, "count"))
        o.count = 256;
    if (o.quick && !opts_given(specs, ns, "runs"))
        o.runs = 2;
    static lim_row rows[LIM_MAX_ALLOCATORS];
    size_t nrows = 0;
    if (r == OPTS_BAD || validate(&o) != 0 ||
        (o.child_largest == NULL && o.child_time == NULL &&
         (nrows = parse_allocators(o.allocators, o.region, rows)) == 0)) {
        return opts_usage_error(CMD);
    }
    if (o.child_largest != NULL || o.child_time != NULL)
        return limits_child(&o);
    return run_parent(&o, rows, nrows);
}
