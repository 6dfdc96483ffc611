// SPDX-License-Identifier: MIT
/*
 * tools/wcet/main.c -- rtmem-wcet: exact worst-case instruction counts of
 * rtmem's alloc and free (and aligned_alloc, realloc) on x86-64, by ptrace
 * single-stepping. Method and reproduction: tools/wcet/README.md.
 *
 * This file owns the run as a whole:
 *  - the options and the two profiles (full, --quick for CI);
 *  - the task list: every selected allocator's scenarios (random-replace
 *    and its own adversarial ones) through every API it uses, each run
 *    twice, in two different processes, so that a count depending on
 *    anything but the code path (load, timing, addresses) shows up as a
 *    difference, which fails the run;
 *  - the lanes: single-stepping costs tens of microseconds per instruction
 *    (a trap, a context switch and a ptrace call each), so independent
 *    tracer processes, one per CPU, take tasks from a shared counter, the
 *    biggest first; each writes its results to a temporary file. A lane
 *    pins itself (and so its traced children) to one CPU where it may:
 *    tracer and tracee then hand over on one CPU, without the cross-CPU
 *    wake-ups that cost a VM most; counts do not depend on it;
 *  - the child mode (--child, internal): a glibc task's traced child execs
 *    this program afresh and runs its scenario here (tracer.c says why);
 *  - the exit status: 0 when every task ran, every self-test counted exactly,
 *    every repeat matched and every selected allocator has alloc and free
 *    rows; 1 otherwise; 2 for misuse. The budget of 120
 *    instructions is a verdict printed by report.c, never the exit status.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/json.h"
#include "common/machine.h"
#include "common/opts.h"
#include "rtmem.h"
#include "rtmem/mt.h"
#include "wcet.h"

#ifndef WCET_LIBRARY_FILES
#error "CMake passes rtmem's source file names as WCET_LIBRARY_FILES"
#endif

typedef struct task {
    enum wcet_allocator al;
    enum wcet_scenario sc;
    enum wcet_api api;
    int run; /* 0 or 1: the repeat */
    unsigned long weight;
    FILE *out; /* the lane's results, read back by the parent */
    int rc;
    wcet_result res;
} task;

typedef struct options {
    wcet_config cfg;
    const char *json, *trace, *csv, *only;
    unsigned jobs;
    unsigned char use[AL_COUNT]; /* --allocators */
} options;

/* The name opts.c prints in messages: `rtmem wcet` runs this program. */
#define CMD "wcet"

#define MAX_TASKS (AL_COUNT * SC_COUNT * 2 * 2)

static void usage(FILE *f)
{
    fprintf(f,
            "usage: rtmem wcet [options]   (or rtmem-wcet [options])\n"
            "       rtmem wcet replay FILE [options]   (a recorded trace's calls; see\n"
            "                                          rtmem wcet replay --help)\n"
            "Counts, by single-stepping, the exact x86-64 instructions of every measured\n"
            "alloc and free of every allocator (rtm_alloc / rtm_free for each rtm\n"
            "algorithm, rtm_tlsf_alloc / rtm_tlsf_free, aligned_alloc and realloc for\n"
            "TLSF, glibc's malloc / free, the mt heap's owner calls and remote free) over\n"
            "random and adversarial heap states; every scenario runs twice and the counts\n"
            "must be identical. TLSF's target: <= %u per alloc and free. mt:tlsf's: remote\n"
            "free <= %u; owner alloc and free with K = RTM_MT_BATCH = %u remote frees\n"
            "pending <= TLSF's worst (this run's tlsf rows) + K TLSF worst frees + %u.\n"
            "\n"
            "  --allocators LIST  comma-separated, from: tlsf tlsf_cached pool buddy\n"
            "                  halffit slab heapmem xvmalloc glibc zsmalloc mt:tlsf\n"
            "                  (default: all)\n"
            "  --iterations N  random-replace measured iterations (default 1000, quick 200)\n"
            "  --seed S        random-replace seed (default 1)\n"
            "  --quick         CI profile: fewer iterations, sizes and variants\n"
            "  --json FILE     write the results as JSON\n"
            "  --trace FILE    write the worst call of each kind, instruction by instruction\n"
            "  --csv FILE      write every measured call (kind, scenario, case, count)\n"
            "  --jobs N        tracer processes in parallel (default: online CPUs)\n"
            "  --only LIST     run only these scenarios (comma-separated names)\n"
            "  --help          this text\n"
            "\n"
            "scenarios:",
            WCET_TARGET, WCET_MT_REMOTE_TARGET, RTM_MT_BATCH, WCET_MT_SLACK);
    for (unsigned sc = 1; sc < SC_COUNT; sc++)
        fprintf(f, "%s%s", sc % 6 == 0 ? "\n  " : " ", wcet_scenario_names[sc]);
    fprintf(f, "\nexit status: 0 counts exact and repeatable (whatever the verdict), 1 counting\n"
               "or a scenario failed or an allocator gave no rows, 2 usage error\n");
}

static int scenario_selected(const char *only, enum wcet_scenario sc)
{
    if (only == NULL)
        return 1;
    size_t n = strlen(wcet_scenario_names[sc]);
    for (const char *p = only; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, wcet_scenario_names[sc], n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static int only_valid(const char *only)
{
    for (const char *p = only; *p != '\0';) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (unsigned sc = 1; sc < SC_COUNT; sc++)
            found |= strlen(wcet_scenario_names[sc]) == len &&
                     strncmp(p, wcet_scenario_names[sc], len) == 0;
        if (!found)
            return 0;
        p += len + (p[len] == ',');
    }
    return 1;
}

/* Fills use[] from a comma-separated list of allocator names ("all" too).
 * Returns 0, or -1 for an unknown name or an empty list. */
static int parse_allocators(const char *list, unsigned char *use)
{
    memset(use, 0, AL_COUNT);
    int any = 0;
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        int found = len == 3 && strncmp(p, "all", 3) == 0;
        if (found)
            memset(use, 1, AL_COUNT);
        for (unsigned a = 0; a < AL_COUNT && !found; a++)
            if (strlen(wcet_allocators[a].name) == len &&
                strncmp(p, wcet_allocators[a].name, len) == 0)
                found = use[a] = 1;
        if (!found)
            return -1;
        any = 1;
        p += len + (p[len] == ',');
    }
    return any ? 0 : -1;
}

/* The value-checked options, after opts_parse (which names the option when
 * a value is not a number at all): 0, or -1 after saying which is wrong. */
static int check_values(const options *o, const opt_spec *specs, size_t n, uint64_t iterations,
                        uint64_t jobs)
{
    if (opts_given(specs, n, "iterations") && (iterations == 0 || iterations > 0xffffffffull)) {
        opts_error(CMD, "--iterations: expected an integer in [1, 4294967295], got %llu",
                   (unsigned long long)iterations);
        return -1;
    }
    if (opts_given(specs, n, "jobs") && (jobs == 0 || jobs > 256)) {
        opts_error(CMD, "--jobs: expected an integer in [1, 256], got %llu",
                   (unsigned long long)jobs);
        return -1;
    }
    if (o->only != NULL && !only_valid(o->only)) {
        opts_error(CMD, "--only: unknown scenario in '%s' (the names are under --help)", o->only);
        return -1;
    }
    /* An output it could not write is a usage error now, not after minutes
     * of single-stepping (the lab's rule, common/opts.c, which checks --json). */
    const char *names[] = {"trace", "csv"}, *outputs[] = {o->trace, o->csv};
    for (size_t i = 0; i < 2; i++)
        if (outputs[i] != NULL && strcmp(outputs[i], "-") != 0 && opts_writable(outputs[i]) != 0) {
            opts_error(CMD, "cannot write --%s %s: %s", names[i], outputs[i], strerror(errno));
            return -1;
        }
    return 0;
}

/* Returns 0, 2 after a usage error (opts_usage_error), -1 after --help. */
static int parse_options(int argc, char **argv, options *o)
{
    const char *allocators = NULL;
    uint64_t iterations = 0, jobs = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    memset(o, 0, sizeof *o);
    o->cfg.seed = 1;
    opt_spec specs[] = {
        {"iterations", OPT_U64, &iterations, 0},
        {"seed", OPT_U64, &o->cfg.seed, 0},
        {"quick", OPT_FLAG, &o->cfg.quick, 0},
        {"json", OPT_STR, &o->json, 0},
        {"trace", OPT_STR, &o->trace, 0},
        {"csv", OPT_STR, &o->csv, 0},
        {"jobs", OPT_U64, &jobs, 0},
        {"only", OPT_STR, &o->only, 0},
        {"allocators", OPT_STR, &allocators, 0},
    };
    size_t n = sizeof specs / sizeof specs[0];
    argv[0] = (char *)CMD; /* opts.c names the command by argv[0] */
    int rc = opts_parse_or_exit(argc, argv, specs, n, usage);
    if (rc != OPTS_GO_ON)
        return rc == 0 ? -1 : rc;
    if (check_values(o, specs, n, iterations, jobs) != 0)
        return opts_usage_error(CMD);
    memset(o->use, 1, sizeof o->use);
    if (allocators != NULL && parse_allocators(allocators, o->use) != 0) {
        opts_error(CMD, "--allocators: unknown or empty list '%s' (the names are under --help)",
                   allocators);
        return opts_usage_error(CMD);
    }
    o->jobs = jobs != 0 ? (unsigned)jobs : cpus > 0 ? (unsigned)cpus : 1u;
    o->cfg.iterations = iterations != 0 ? (unsigned long)iterations : o->cfg.quick ? 200 : 1000;
    o->cfg.class_top_log2 = o->cfg.quick ? 20 : 31;
    o->cfg.per_octave = o->cfg.quick ? 4 : 32;
    return 0;
}

/* The class grid maps its blocks as address space only; where the kernel
 * refuses that much (strict overcommit), the top classes are left out. */
static void fit_class_grid(wcet_config *cfg)
{
    for (; cfg->class_top_log2 > 12; cfg->class_top_log2--) {
        size_t need = 0;
        for (unsigned k = 7; k <= cfg->class_top_log2; k++)
            need += ((size_t)1 << k) * 2u + ((size_t)64 << k) / cfg->per_octave;
        need = need / 2 * 3;
        void *m = mmap(NULL, need, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            munmap(m, need);
            return;
        }
        fprintf(stderr,
                "rtmem-wcet: note: cannot reserve %zu MiB of address space; classes "
                "up to 2^%u only\n",
                need >> 20, cfg->class_top_log2 - 1);
    }
}

/* --- tasks and lanes ---------------------------------------------------- */

static int by_weight(const void *a, const void *b)
{
    const task *x = a, *y = b;
    if (x->weight != y->weight)
        return x->weight > y->weight ? -1 : 1;
    if (x->al != y->al)
        return x->al < y->al ? -1 : 1;
    if (x->sc != y->sc)
        return x->sc < y->sc ? -1 : 1;
    if (x->api != y->api)
        return x->api < y->api ? -1 : 1;
    return x->run - y->run;
}

static size_t build_tasks(const options *o, task *t)
{
    size_t n = 0;
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!o->use[al])
            continue;
        for (unsigned sc = 1; sc < SC_COUNT; sc++) {
            enum wcet_scenario s = (enum wcet_scenario)sc;
            if (!scenario_selected(o->only, s))
                continue;
            for (unsigned api = API_GENERIC; api <= API_TYPED; api++) {
                if (!wcet_scenario_uses((enum wcet_allocator)al, s, (enum wcet_api)api))
                    continue;
                for (int run = 0; run < 2; run++) {
                    memset(&t[n], 0, sizeof t[n]);
                    t[n].al = (enum wcet_allocator)al;
                    t[n].sc = s;
                    t[n].api = (enum wcet_api)api;
                    t[n].run = run;
                    t[n].weight = wcet_scenario_weight(&o->cfg, (enum wcet_allocator)al, s);
                    n++;
                }
            }
        }
    }
    qsort(t, n, sizeof *t, by_weight); /* biggest first; the two runs side by side */
    return n;
}

static void write_result(FILE *f, int rc, const wcet_result *r)
{
    fwrite(&rc, sizeof rc, 1, f);
    fwrite(r->error, sizeof r->error, 1, f);
    fwrite(&r->count, sizeof r->count, 1, f);
    if (r->count > 0) /* a failed task may have none (and no buffer) */
        fwrite(r->samples, sizeof *r->samples, r->count, f);
    for (unsigned row = 0; row < ROW_COUNT; row++) {
        const wcet_trace *t = &r->worst[row];
        size_t len = t->rip ? t->len : 0;
        fwrite(&len, sizeof len, 1, f);
        if (len > 0) {
            fwrite(&t->sample, sizeof t->sample, 1, f);
            fwrite(t->rip, sizeof *t->rip, len, f);
        }
    }
    fflush(f);
}

static int read_result(FILE *f, int *rc, wcet_result *r)
{
    rewind(f);
    memset(r, 0, sizeof *r);
    if (fread(rc, sizeof *rc, 1, f) != 1 || fread(r->error, sizeof r->error, 1, f) != 1 ||
        fread(&r->count, sizeof r->count, 1, f) != 1)
        return -1;
    r->samples = malloc((r->count + 1) * sizeof *r->samples);
    if (r->samples == NULL || fread(r->samples, sizeof *r->samples, r->count, f) != r->count)
        return -1;
    for (unsigned row = 0; row < ROW_COUNT; row++) {
        wcet_trace *t = &r->worst[row];
        if (fread(&t->len, sizeof t->len, 1, f) != 1)
            return -1;
        if (t->len == 0)
            continue;
        t->rip = malloc(t->len * sizeof *t->rip);
        if (t->rip == NULL || fread(&t->sample, sizeof t->sample, 1, f) != 1 ||
            fread(t->rip, sizeof *t->rip, t->len, f) != t->len)
            return -1;
    }
    return 0;
}

/* Pins the calling lane to the l-th CPU it may run on, when there are at
 * least as many CPUs as lanes (else the lanes would share CPUs unevenly). */
static void pin_lane(unsigned l, unsigned lanes)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        (unsigned)CPU_COUNT(&allowed) < lanes)
        return;
    unsigned seen = 0;
    for (size_t cpu = 0; cpu < (size_t)CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || seen++ != l)
            continue;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        (void)sched_setaffinity(0, sizeof one, &one); /* a refusal only costs speed */
        return;
    }
}

/* The lanes' shared counters: the next task to take, and how many are done
 * (for the progress lines). */
typedef struct lane_counters {
    atomic_size_t next;
    atomic_size_t done;
} lane_counters;

/* One line on stderr per finished task: a full run takes minutes, and the
 * results are only printed once every task is done. */
static void progress(const task *t, size_t done, size_t n)
{
    fprintf(stderr, "rtmem-wcet: [%zu/%zu] %s %s (%s API, run %d) done\n", done, n,
            wcet_allocators[t->al].name, wcet_scenario_names[t->sc],
            t->api == API_GENERIC ? "generic" : "typed", t->run + 1);
}

/* One lane: takes tasks until none is left. Runs in its own process. */
static void lane(task *t, size_t n, lane_counters *c, const wcet_config *cfg)
{
    for (;;) {
        size_t i = atomic_fetch_add(&c->next, 1);
        if (i >= n)
            _exit(0);
        wcet_result res;
        memset(&res, 0, sizeof res);
        int rc = wcet_run_task(cfg, t[i].al, t[i].sc, t[i].api, &res);
        write_result(t[i].out, rc, &res);
        wcet_result_free(&res);
        progress(&t[i], atomic_fetch_add(&c->done, 1) + 1, n);
    }
}

static int run_lanes(task *t, size_t n, const options *o)
{
    lane_counters *c =
        mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED)
        return -1;
    atomic_init(&c->next, 0);
    atomic_init(&c->done, 0);
    unsigned lanes = o->jobs < n ? o->jobs : (unsigned)n;
    pid_t pids[256];
    fflush(NULL);
    for (unsigned l = 0; l < lanes; l++) {
        pids[l] = fork();
        if (pids[l] < 0)
            return -1;
        if (pids[l] == 0) {
            pin_lane(l, lanes);
            lane(t, n, c, &o->cfg);
        }
    }
    int ok = 1;
    for (unsigned l = 0; l < lanes; l++) {
        int st;
        ok &= waitpid(pids[l], &st, 0) == pids[l] && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    munmap(c, sizeof *c);
    return ok ? 0 : -1;
}

/* --- after the lanes ---------------------------------------------------- */

static const char *api_name(enum wcet_api api) { return api == API_GENERIC ? "generic" : "typed"; }

/* Both runs of every (scenario, API) must agree sample for sample. */
static int compare_repeats(const task *t, size_t n, size_t *calls)
{
    int ok = 1;
    *calls = 0;
    for (size_t i = 0; i < n; i++) {
        const task *a = &t[i];
        if (a->run != 0)
            continue;
        for (size_t j = 0; j < n; j++) {
            const task *b = &t[j];
            if (b->run != 1 || b->al != a->al || b->sc != a->sc || b->api != a->api)
                continue;
            *calls += a->res.count;
            size_t k = 0;
            while (k < a->res.count && k < b->res.count &&
                   memcmp(&a->res.samples[k], &b->res.samples[k], sizeof(wcet_sample)) == 0)
                k++;
            if (k == a->res.count && k == b->res.count)
                continue;
            ok = 0;
            fprintf(stderr, "rtmem-wcet: REPEAT MISMATCH in %s %s (%s API) at call %zu: ",
                    wcet_allocators[a->al].name, wcet_scenario_names[a->sc], api_name(a->api), k);
            if (k < a->res.count && k < b->res.count)
                fprintf(stderr, "%u vs %u instructions\n", a->res.samples[k].count,
                        b->res.samples[k].count);
            else
                fprintf(stderr, "%zu vs %zu calls\n", a->res.count, b->res.count);
        }
    }
    return ok;
}

static int by_canonical(const void *x, const void *y)
{
    const task *a = *(const task *const *)x, *b = *(const task *const *)y;
    if (a->al != b->al)
        return a->al < b->al ? -1 : 1;
    if (a->sc != b->sc)
        return a->sc < b->sc ? -1 : 1;
    return a->api < b->api ? -1 : a->api > b->api;
}

/* Run 0 of every task, concatenated in (allocator, scenario) order. */
static int gather(task *t, size_t n, wcet_all *all, wcet_sample **buf)
{
    task *order[MAX_TASKS];
    size_t m = 0, total = 0;
    for (size_t i = 0; i < n; i++)
        if (t[i].run == 0) {
            order[m++] = &t[i];
            total += t[i].res.count;
        }
    qsort(order, m, sizeof *order, by_canonical);
    *buf = malloc((total + 1) * sizeof **buf);
    if (*buf == NULL)
        return -1;
    memset(all, 0, sizeof *all);
    for (size_t i = 0; i < m; i++) {
        memcpy(*buf + all->count, order[i]->res.samples, order[i]->res.count * sizeof **buf);
        all->count += order[i]->res.count;
        const wcet_trace **worst = all->worst[order[i]->al];
        all->selected[order[i]->al] = 1;
        for (unsigned r = 0; r < ROW_COUNT; r++) {
            const wcet_trace *w = &order[i]->res.worst[r];
            if (w->rip != NULL && (worst[r] == NULL || w->sample.count > worst[r]->sample.count))
                worst[r] = w;
        }
    }
    all->samples = *buf;
    return 0;
}

static int collect(task *t, size_t n)
{
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (read_result(t[i].out, &t[i].rc, &t[i].res) != 0) {
            fprintf(stderr, "rtmem-wcet: %s %s (%s API, run %d): lane died without a result\n",
                    wcet_allocators[t[i].al].name, wcet_scenario_names[t[i].sc], api_name(t[i].api),
                    t[i].run + 1);
            ok = 0;
        } else if (t[i].rc != 0) {
            fprintf(stderr, "rtmem-wcet: %s %s (%s API, run %d) FAILED: %s\n",
                    wcet_allocators[t[i].al].name, wcet_scenario_names[t[i].sc], api_name(t[i].api),
                    t[i].run + 1, t[i].res.error);
            ok = 0;
        }
    }
    return ok;
}

/* Every selected allocator must have produced alloc and free samples: a
 * scenario list that measured nothing for one would hide it silently. */
static int rows_present(const wcet_all *all, const options *o)
{
    int ok = 1;
    if (o->only != NULL)
        return 1; /* --only picks scenarios on purpose */
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!o->use[al])
            continue;
        int have[2] = {0, 0};
        for (size_t i = 0; i < all->count; i++) {
            const wcet_sample *s = &all->samples[i];
            if (s->allocator == al && wcet_rows[s->row].kind == WCET_ALLOC)
                have[0] = 1;
            if (s->allocator == al && wcet_rows[s->row].kind == WCET_FREE)
                have[1] = 1;
        }
        if (!have[0] || !have[1]) {
            fprintf(stderr, "rtmem-wcet: FAILED: no %s row for %s\n", have[0] ? "free" : "alloc",
                    wcet_allocators[al].name);
            ok = 0;
        }
    }
    return ok;
}

/* --child AL,SC,API ITERATIONS SEED QUICK TOP PER_OCTAVE: a glibc task's
 * traced child after its exec (tracer.c). Runs the scenario, never returns. */
static void child_mode(int argc, char **argv)
{
    wcet_config cfg;
    int al, sc, api;
    unsigned long long seed;
    memset(&cfg, 0, sizeof cfg);
    if (argc != 8 || sscanf(argv[2], "%d,%d,%d", &al, &sc, &api) != 3 || al < 0 || al >= AL_COUNT ||
        sc < 0 || sc >= SC_COUNT || sscanf(argv[3], "%lu", &cfg.iterations) != 1 ||
        sscanf(argv[4], "%llu", &seed) != 1 || sscanf(argv[5], "%d", &cfg.quick) != 1 ||
        sscanf(argv[6], "%u", &cfg.class_top_log2) != 1 ||
        sscanf(argv[7], "%u", &cfg.per_octave) != 1) {
        fprintf(stderr, "rtmem-wcet: --child is internal (a traced child's arguments)\n");
        _exit(2);
    }
    cfg.seed = seed;
    int rc =
        wcet_child_main(&cfg, (enum wcet_allocator)al, (enum wcet_scenario)sc, (enum wcet_api)api);
    fflush(stderr);
    _exit(rc);
}

static void print_header(const options *o, const machine *m)
{
    printf("rtmem wcet: instructions per call, counted exactly by ptrace single-stepping "
           "(x86-64, user space)\n");
    machine_print(stdout, m);
    printf("profile %s: random-replace %lu iterations (seed %llu, 10000 slots, sizes [16, "
           "4096)); TLSF classes up to 2^%u, %u per octave\nallocators:",
           o->cfg.quick ? "quick" : "full", o->cfg.iterations, (unsigned long long)o->cfg.seed,
           o->cfg.class_top_log2, o->cfg.per_octave);
    for (unsigned a = 0; a < AL_COUNT; a++)
        if (o->use[a])
            printf(" %s", wcet_allocators[a].spec ? wcet_allocators[a].spec : "glibc");
    printf("\n");
    fflush(stdout);
}

static int count_main(int argc, char **argv)
{
    options o;
    static task tasks[MAX_TASKS];
    char err[256];
    if (argc > 1 && strcmp(argv[1], "replay") == 0) /* a recorded trace: replay_trace.c */
        return wcet_replay_main(argc - 1, argv + 1, WCET_LIBRARY_FILES);
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        child_mode(argc, argv);
    int rc = parse_options(argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (wcet_symbols_load(WCET_LIBRARY_FILES, err, sizeof err) != 0) {
        fprintf(stderr, "rtmem-wcet: %s\n", err);
        return 1;
    }
    if (o.use[AL_TLSF])
        fit_class_grid(&o.cfg);
    size_t n = build_tasks(&o, tasks);
    for (size_t i = 0; i < n; i++)
        if ((tasks[i].out = tmpfile()) == NULL) {
            fprintf(stderr, "rtmem-wcet: tmpfile: %s\n", strerror(errno));
            return 1;
        }
    machine m;
    machine_describe(&m);
    print_header(&o, &m);
    unsigned lanes = o.jobs < n ? o.jobs : (unsigned)n;
    fprintf(stderr, "rtmem-wcet: %zu tasks on %u tracer processes...\n", n, lanes);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (run_lanes(tasks, n, &o) != 0)
        fprintf(stderr, "rtmem-wcet: a tracer process failed\n");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!collect(tasks, n)) {
        fprintf(stderr, "rtmem-wcet: FAILED: not every task completed; no results\n");
        return 1;
    }
    size_t calls;
    int repeat_ok = compare_repeats(tasks, n, &calls);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("self-test: exact in all %zu tasks (straight code, loop with calls, rep stosb, "
           "tail call)\nrepeat: %zu (allocator, scenario, API) triples run twice in separate "
           "processes, %zu calls each: %s\n(%.1f s, %u tracer processes)\n\n",
           n, n / 2, calls, repeat_ok ? "identical counts" : "MISMATCH", seconds, lanes);
    wcet_all all;
    wcet_sample *buf;
    if (gather(tasks, n, &all, &buf) != 0)
        return 1;
    (void)wcet_report_text(&all, &o.cfg);
    int present = rows_present(&all, &o);
    int written = 1;
    if (o.json && wcet_report_json(o.json, &all, &o.cfg, repeat_ok, seconds, lanes) != 0) {
        fprintf(stderr, "rtmem-wcet: cannot write %s\n", o.json);
        written = 0;
    }
    if (o.trace && wcet_report_traces(o.trace, &all) != 0) {
        fprintf(stderr, "rtmem-wcet: cannot write %s\n", o.trace);
        written = 0;
    }
    if (o.csv && wcet_report_csv(o.csv, &all) != 0) {
        fprintf(stderr, "rtmem-wcet: cannot write %s\n", o.csv);
        written = 0;
    }
    if (!repeat_ok)
        fprintf(stderr, "rtmem-wcet: FAILED: repeated runs gave different counts\n");
    free(buf);
    for (size_t i = 0; i < n; i++)
        wcet_result_free(&tasks[i].res);
    return repeat_ok && written && present ? 0 : 1;
}

/* The report on standard output must have reached it: a full device or a
 * failed write is status 1 with a message, as for every lab command
 * (opts_close_stdout; main.c of the lab does the same for the others). */
int main(int argc, char **argv)
{
    int replay = argc > 1 && strcmp(argv[1], "replay") == 0;
    int rc = count_main(argc, argv);
    if (opts_close_stdout(replay ? "wcet replay" : CMD) != 0 && rc == 0)
        rc = 1;
    return rc;
}
