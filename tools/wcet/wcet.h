// SPDX-License-Identifier: MIT
/*
 * tools/wcet/wcet.h -- the table of contents of rtmem-wcet, the exact
 * worst-case instruction counter, grouped by the file that defines each part.
 *
 * How the pieces meet (README.md has the full method):
 *
 *   main.c        parent: options, a few "lanes" (one tracer each) working
 *     |           through the task list, repeat comparison, exit status
 *   tracer.c      a lane: forks a child, ptrace-steps every measured call
 *     |  fork       and writes one wcet_sample per call
 *   scenarios.c   the child: builds TLSF heap states through the public API
 *                 and announces each measured call with wcet_marker(); the
 *                 random-replace scenario every allocator shares; dispatch
 *   scenarios_rtm.c    the adversarial states of pool, buddy, halffit, slab,
 *                      heapmem and xvmalloc (through rtm_alloc / rtm_free)
 *   scenarios_tlsf_cached.c  tlsf_cached's: cache hits, evictions merging
 *                      both neighbours, the whole cache coalesced
 *   scenarios_zsmalloc.c  zsmalloc's, through its typed calls
 *   scenarios_mt.c     the mt heap's: owner calls with remote frees pending,
 *                      the remote free, the refused-then-take-back-all path
 *   scenarios_glibc.c  glibc malloc's adversarial states (the child of a
 *                      glibc task is a fresh exec of this program, so that
 *                      malloc's state is the same in both runs)
 *   probes.c      the marker and the self-test functions (assembly, so that
 *                 their instruction counts are known exactly)
 *   symbols.c     /proc/self/exe's symbol table: is an address rtmem's code?
 *   report.c      min/mean/p99/max tables per allocator, the summary
 *                 across allocators, the TLSF verdict, CSV, traces
 *   report_json.c the --json document (the lab's envelope, machine.c)
 *
 * Parent and child are the same program image (fork, no exec), so a function
 * address means the same thing in both: the tracer plants its breakpoints at
 * &rtm_alloc etc. taken in its own address space.
 */
#ifndef RTM_TOOLS_WCET_H
#define RTM_TOOLS_WCET_H

#include <stddef.h>
#include <stdint.h>

/* The budget the issue sets for the worst alloc and the worst free. */
#define WCET_TARGET 120u
/* The mt heap's targets (issue 31), on TLSF shards: the remote free's
 * budget, and the fixed overhead an owner call may add to TLSF's own worst
 * path plus RTM_MT_BATCH TLSF frees. */
#define WCET_MT_REMOTE_TARGET 40u
#define WCET_MT_SLACK         40u

/* --- allocators ---------------------------------------------------------- */

/* Every rtm algorithm (rtm_algorithms()) with the parameters it is measured
 * with, and glibc's malloc, statically linked into this executable. */
enum wcet_allocator {
    AL_TLSF,
    AL_TLSF_CACHED, /* TLSF behind a deferred-coalescing cache: scenarios_tlsf_cached.c */
    AL_POOL,
    AL_BUDDY,
    AL_HALFFIT,
    AL_SLAB,
    AL_HEAPMEM,
    AL_XVMALLOC,
    AL_GLIBC,
    AL_ZSMALLOC, /* typed API only (rtm_zs_*): scenarios_zsmalloc.c */
    AL_MT_TLSF,  /* "mt:tlsf": rtm_mt_create's heap of TLSF shards: scenarios_mt.c */
    AL_COUNT
};

typedef struct wcet_allocator_info {
    const char *name; /* --allocators name; rtm_algorithms()'s for rtm ones */
    const char *spec; /* rtm_heap_create() name with parameters; NULL: glibc */
    const char *note; /* the parameters, in words, for the report           */
} wcet_allocator_info;

extern const wcet_allocator_info wcet_allocators[AL_COUNT];

/* --- measured functions ("rows" of the report) -------------------------- */

/* What a measured call is, for the verdict: self-tests check the counter,
 * ALLOC and FREE rows are held to WCET_TARGET, EXTRA rows are reported only. */
enum wcet_row_kind { WCET_SELFTEST, WCET_ALLOC, WCET_FREE, WCET_EXTRA };

enum wcet_row {
    ROW_SELF_STRAIGHT,  /* probes.c: fixed straight-line function        */
    ROW_SELF_LOOP,      /* probes.c: loop with a nested call per turn    */
    ROW_SELF_REP,       /* probes.c: one rep stosb of n bytes            */
    ROW_SELF_TAIL,      /* probes.c: tail call (jmp) into another function */
    ROW_ALLOC,          /* rtm_alloc: the generic API users call          */
    ROW_FREE,           /* rtm_free                                       */
    ROW_TLSF_ALLOC,     /* rtm_tlsf_alloc: the typed API                  */
    ROW_TLSF_FREE,      /* rtm_tlsf_free                                  */
    ROW_ALIGNED_64,     /* rtm_aligned_alloc(h, 64, n)                    */
    ROW_ALIGNED_4096,   /* rtm_aligned_alloc(h, 4096, n)                  */
    ROW_REALLOC_GROW,   /* rtm_realloc growing in place                   */
    ROW_REALLOC_SHRINK, /* rtm_realloc shrinking in place                */
    ROW_MALLOC,         /* glibc malloc                                   */
    ROW_MFREE,          /* glibc free                                     */
    ROW_ZS_MALLOC,      /* rtm_zs_malloc (zsmalloc's rows: its typed API) */
    ROW_ZS_FREE,        /* rtm_zs_free                                    */
    ROW_ZS_MAP,         /* rtm_zs_map                                     */
    ROW_ZS_UNMAP,       /* rtm_zs_unmap                                   */
    ROW_ZS_COMPACT,     /* rtm_zs_compact (one call: at most one span)    */
    ROW_ZS_CHECK,       /* rtm_zs_check (O(pages + handles))              */
    ROW_MT_REMOTE_FREE, /* rtm_free of another shard's block (mt heap)    */
    ROW_COUNT
};

typedef struct wcet_row_info {
    const char *name;     /* short name used in tables and JSON */
    const char *function; /* the function whose entry is the breakpoint */
    enum wcet_row_kind kind;
} wcet_row_info;

/* --- scenarios ---------------------------------------------------------- */

enum wcet_scenario {
    SC_SELFTEST,       /* the counter's own check, run first in every task  */
    SC_RANDOM_REPLACE, /* the TLSF study's loop: 10,000 slots, [16, 4096)   */
    SC_SPLIT_HUGE,     /* small request split from one huge free block      */
    SC_EXACT_FIT,      /* the only free block has exactly the request's span */
    SC_PROBE_FIT,      /* good-fit search misses, own list's largest fits   */
    SC_GOOD_FIT,       /* list shapes of the found list and of the tail's   */
    SC_CLASSES,        /* a free block in every class, requests at each     */
    SC_MERGE_NONE,     /* free between two used neighbours                  */
    SC_MERGE_LEFT,     /* free with a free left neighbour only              */
    SC_MERGE_RIGHT,    /* free with a free right neighbour only             */
    SC_MERGE_BOTH,     /* free between two free neighbours                  */
    SC_ENOMEM,         /* allocations that fail                             */
    SC_DOUBLE_FREE,    /* second free of a block, detected                  */
    SC_ALIGNED,        /* aligned_alloc 64 / 4096 at every start offset     */
    SC_REALLOC,        /* realloc grow in place / shrink in place           */
    /* pool (scenarios_rtm.c) */
    SC_POOL_OPS, /* fresh block, reused block, full pool, double free  */
    /* buddy */
    SC_BUDDY_CHAIN,  /* one page split from / merged into a 2^j-page block */
    SC_BUDDY_ORDERS, /* every order requested from one top-order block     */
    SC_BUDDY_FAIL,   /* full heap, too large, double free                  */
    /* halffit */
    SC_HF_CHAIN, /* longest halving chain and merge chain              */
    SC_HF_FAIL,  /* full heap, too large, double free                  */
    /* slab */
    SC_SLAB_LIFE,  /* a slab's life: new from the buddy, last slot, empty */
    SC_SLAB_LARGE, /* large blocks split from / merged into the buddy    */
    SC_SLAB_FAIL,  /* buddy exhausted, double free                       */
    /* heapmem */
    SC_HM_BUCKET, /* bucket page taken, last slot, page given back      */
    SC_HM_RANGE,  /* range split, exact, coalescing none/left/right/both */
    SC_HM_FAIL,   /* no page: larger class serves; full; double free    */
    /* glibc (scenarios_glibc.c) */
    SC_G_FASTBINS, /* malloc_consolidate of n fastbin chunks             */
    SC_G_UNSORTED, /* a malloc sorting n unsorted chunks into bins       */
    SC_G_TOP,      /* requests from the top chunk, growing it by brk     */
    SC_G_MMAP,     /* chunks above the mmap threshold: mmap / munmap     */
    SC_G_FREE,     /* free merging both sides, trimming the top          */
    /* xvmalloc (scenarios_rtm.c; after glibc's: added later) */
    SC_XV_ALLOC, /* fresh / stacked page, probe, good fit one level up */
    SC_XV_FREE,  /* merges none/left/right/both, list middles, page back */
    SC_XV_FAIL,  /* above a page, full, interior pointer, double free  */
    /* zsmalloc (scenarios_zsmalloc.c) */
    SC_ZS_MALLOC,  /* reuse, fill a span, new span by splits, refusals    */
    SC_ZS_FREE,    /* partial, drain a span (pages back), mapped, refused */
    SC_ZS_MAP,     /* map / unmap: first, nested, last, refused           */
    SC_ZS_COMPACT, /* no room (full scan), half spans, most moves, pinned */
    SC_ZS_CHECK,   /* full pools of 4..256 pages (O(pages) shown)       */
    /* tlsf_cached (scenarios_tlsf_cached.c; added after zsmalloc's) */
    SC_TC_HIT,   /* allocs served by the probes, frees pushed with room  */
    SC_TC_EVICT, /* full ring or cache: oldest to TLSF, merging both     */
    SC_TC_FLUSH, /* TLSF refuses: the whole cache coalesced, then retry  */
    /* mt:tlsf (scenarios_mt.c; added after tlsf_cached's) */
    SC_MT_OWNER,    /* owner alloc / free with 0, K, 2K remote frees pending */
    SC_MT_REMOTE,   /* the remote free: empty inbox, stacked, unattached      */
    SC_MT_TAKEBACK, /* full shard refuses: every pending block taken back    */
    SC_COUNT
};

/* The allocator a scenario belongs to (random-replace: AL_COUNT, all). */
extern const enum wcet_allocator wcet_scenario_owner[SC_COUNT];

/* Which API a task drives: the generic rtm_* calls or the typed rtm_tlsf_*
 * (TLSF only; every other allocator runs on API_GENERIC: rtm_alloc /
 * rtm_free, or malloc / free for glibc). */
enum wcet_api { API_GENERIC, API_TYPED };

/* How big a run is. */
typedef struct wcet_config {
    unsigned long iterations; /* random-replace measured iterations      */
    uint64_t seed;            /* random-replace PRNG seed                */
    int quick;                /* CI profile: fewer sizes and variants    */
    unsigned class_top_log2;  /* classes: largest size class, log2       */
    unsigned per_octave;      /* classes: request sizes per power of two */
} wcet_config;

/* System calls seen inside a measured call (by number, from orig_rax). */
#define WCET_SYS_BRK     1u
#define WCET_SYS_MMAP    2u
#define WCET_SYS_MUNMAP  4u
#define WCET_SYS_MREMAP  8u
#define WCET_SYS_MADVISE 16u
#define WCET_SYS_OTHER   32u

/* One measured call, as the tracer saw it. Both runs of a task must produce
 * the same sequence of these, field for field. */
typedef struct wcet_sample {
    uint16_t row;           /* enum wcet_row                                */
    uint16_t scenario;      /* enum wcet_scenario                           */
    uint32_t variant;       /* scenario-specific: which state (describe())  */
    uint64_t size;          /* the request or block size involved           */
    uint32_t count;         /* instructions from entry to return, inclusive */
    uint32_t foreign;       /* of those, executed outside rtmem's code      */
    uint32_t syscalls;      /* syscall instructions among the foreign ones  */
    uint8_t allocator;      /* enum wcet_allocator                          */
    uint8_t sysmask;        /* WCET_SYS_* bits: which system calls ran      */
    uint16_t reserved;      /* zero; keeps the record 8-aligned             */
    uint64_t first_foreign; /* address of the first foreign instruction     */
} wcet_sample;

/* The instruction addresses of one measured call (the worst of its row). */
typedef struct wcet_trace {
    wcet_sample sample;
    size_t len;
    uint64_t *rip; /* len addresses, in execution order */
} wcet_trace;

/* Everything one task (one scenario, one API, one run) produced. */
typedef struct wcet_result {
    wcet_sample *samples;
    size_t count, cap;
    wcet_trace worst[ROW_COUNT]; /* first call reaching the row's maximum */
    char error[256];             /* empty when the task succeeded         */
} wcet_result;

/* --- probes.c ----------------------------------------------------------- */

/* Announces the next measured call to the tracer: stops the child with an
 * int3 and returns. Only meaningful under the tracer. */
void wcet_marker(unsigned row, unsigned scenario, unsigned variant, uint64_t size);

/* Self-test functions with instruction counts fixed by their assembly. */
uint64_t wcet_selftest_straight(uint64_t a, uint64_t b); /* 5 instructions */
uint64_t wcet_selftest_loop(uint64_t n);                 /* 4 + 5n          */
uint64_t wcet_selftest_rep(uint64_t n);                  /* 8, n <= 256     */
uint64_t wcet_selftest_tail(uint64_t a);                 /* 2 + 5           */

/* The instructions a self-test row must count for argument n. */
uint32_t wcet_selftest_expected(enum wcet_row row, uint64_t n);

/* --- symbols.c ---------------------------------------------------------- */

/* Loads /proc/self/exe's symbol table; library_files is the list of rtmem's
 * source file names (their local functions are rtmem's code too). Returns 0
 * or -1 with a message in err. */
int wcet_symbols_load(const char *library_files, char *err, size_t errlen);

/* 1 if addr lies in an executable segment of this program. */
int wcet_symbols_in_text(uint64_t addr);

/* 1 if addr lies in a function of rtmem (global rtm_* or a local function
 * of one of rtmem's source files), else 0. */
int wcet_symbols_is_library(uint64_t addr);

/* The function containing addr and the offset into it, or NULL when addr is
 * in no known function (then *offset is 0). */
const char *wcet_symbols_name(uint64_t addr, uint64_t *offset);

/* --- tracer.c ----------------------------------------------------------- */

/* The entry address of a row's function. */
uintptr_t wcet_row_entry(enum wcet_row row);

/* Runs one task: forks a child running the scenario, traces it, fills res.
 * Returns 0, or -1 with res->error set. */
int wcet_run_task(const wcet_config *cfg, enum wcet_allocator al, enum wcet_scenario sc,
                  enum wcet_api api, wcet_result *res);

void wcet_result_free(wcet_result *res);

/* The general form of wcet_run_task: forks a child that runs body(arg)
 * under the tracer (its return value is the child's exit status; it must
 * announce each measured call with wcet_marker and should call
 * wcet_selftest_calls first) and counts every announced call into res. The
 * child is a fork, so body sees this process's memory as it was. Returns 0,
 * or -1 with res->error set (also when ptrace is not permitted: then the
 * message says so). replay.c's trace replays use it. */
typedef int (*wcet_child_fn)(void *arg);
int wcet_run_child(wcet_child_fn body, void *arg, enum wcet_allocator al, wcet_result *res);

/* --- replay_trace.c: `rtmem-wcet replay FILE` (a recorded trace) ------- */

/* argv[0] is "replay". Returns the exit status. */
int wcet_replay_main(int argc, char **argv, const char *library_files);

/* A child's exit status when PTRACE_TRACEME failed. */
#define WCET_EXIT_NO_PTRACE 99

/* --- scenarios.c (runs in the traced child) ----------------------------- */

/* The self-test calls alone (announced; the tracer checks their counts).
 * Returns 0, or 1 with a message. */
int wcet_selftest_calls(void);

/* Runs the self-test calls, then scenario sc of allocator al. Returns 0, or
 * 1 after printing why the heap did not reach the state the scenario needs. */
int wcet_child_main(const wcet_config *cfg, enum wcet_allocator al, enum wcet_scenario sc,
                    enum wcet_api api);

/* Whether allocator al measures scenario sc through api (TLSF's aligned and
 * realloc run on the generic API only; other allocators have no typed
 * rows). */
int wcet_scenario_uses(enum wcet_allocator al, enum wcet_scenario sc, enum wcet_api api);

/* Rough cost of a task in measured calls, to start the big ones first. */
unsigned long wcet_scenario_weight(const wcet_config *cfg, enum wcet_allocator al,
                                   enum wcet_scenario sc);

/* Writes a human description of (scenario, variant, size) into buf. */
void wcet_describe(char *buf, size_t len, unsigned scenario, unsigned variant, uint64_t size);

/* --- scenarios_rtm.c, scenarios_glibc.c (in the traced child) ----------- */

struct wcet_heap;
int wcet_rtm_scenario(struct wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc);
int wcet_glibc_scenario(const wcet_config *cfg, enum wcet_scenario sc);
/* describe() for their scenarios; 0 when sc is not theirs. */
int wcet_rtm_describe(char *buf, size_t len, unsigned sc, unsigned variant, uint64_t size);
int wcet_glibc_describe(char *buf, size_t len, unsigned sc, unsigned variant, uint64_t size);
unsigned long wcet_rtm_weight(const wcet_config *cfg, enum wcet_scenario sc);
/* scenarios_zsmalloc.c: its scenarios (and random-replace on rtm_zs_*). */
int wcet_zs_scenario(const wcet_config *cfg, enum wcet_scenario sc);
int wcet_zs_describe(char *buf, size_t len, unsigned sc, unsigned variant, uint64_t size);
unsigned long wcet_zs_weight(const wcet_config *cfg, enum wcet_scenario sc);
/* scenarios_tlsf_cached.c: its scenarios (random-replace is scenarios.c's). */
int wcet_tc_scenario(struct wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc);
int wcet_tc_describe(char *buf, size_t len, unsigned sc, unsigned variant, uint64_t size);
unsigned long wcet_tc_weight(const wcet_config *cfg, enum wcet_scenario sc);
/* scenarios_mt.c: the mt heap's scenarios (no random-replace: its shards
 * are TLSF heaps, whose random-replace is tlsf's). */
int wcet_mt_scenario(struct wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc);
int wcet_mt_describe(char *buf, size_t len, unsigned sc, unsigned variant, uint64_t size);
unsigned long wcet_mt_weight(const wcet_config *cfg, enum wcet_scenario sc);

/* --- report.c ----------------------------------------------------------- */

extern const wcet_row_info wcet_rows[ROW_COUNT];
extern const char *const wcet_scenario_names[SC_COUNT];

/* All samples of all tasks (run one of each), in task order. */
typedef struct wcet_all {
    const wcet_sample *samples;
    size_t count;
    const wcet_trace *worst[AL_COUNT][ROW_COUNT]; /* the worst call of each row */
    unsigned char selected[AL_COUNT];             /* allocators measured       */
} wcet_all;

/* What report.c computes for one (allocator, row), and report_json.c
 * writes. p99 is the nearest rank. */
typedef struct row_stats {
    size_t n;
    uint32_t min, p99, max;
    double mean;
    uint64_t foreign, syscalls, foreign_calls, syscall_calls;
    unsigned sysmask;       /* WCET_SYS_* of every call together */
    uint64_t foreign_at[4]; /* distinct first foreign addresses  */
    const wcet_sample *worst;
} row_stats;

/* Statistics of allocator al's samples of row (and scenario, unless
 * sc < 0). */
row_stats wcet_stats_of(const wcet_all *all, unsigned al, unsigned row, int sc);

/* The rows table of allocator al (common/table.h): a row per measured
 * function that is not the self-test, in JSON's key order (the "rows" of
 * the allocator's object); fills st[ROW_COUNT] with every row's
 * statistics. Its columns: */
enum wcet_rows_col {
    WR_KIND,
    WR_FUNCTION,
    WR_BUDGETED,
    WR_CALLS,
    WR_MIN,
    WR_MEAN,
    WR_P99,
    WR_MAX,
    WR_WORST_SCENARIO,
    WR_WORST_CASE,
    WR_FOREIGN,
    WR_SYSCALLS,
    WR_SYSCALL_CALLS,
    WR_ROW, /* the wcet_rows index: neither shown nor written */
    WR_NCOLS
};
struct table;
void wcet_rows_table(struct table *t, const wcet_all *all, unsigned al, row_stats *st);

/* The per-scenario table of allocator al: a row per (measured function
 * from ROW_ALLOC on, scenario) that has calls, rows in function order and
 * scenarios in order within each; its JSON cells are the "scenarios" of
 * the function's row, its text the scenario x function grid (pivoted,
 * common/table_pivot.h). Its columns: */
enum wcet_scen_col {
    WS_ROW,      /* the wcet_rows index: the pivot's head, not written */
    WS_LABEL,    /* the scenario's name: the pivot's text row, not written */
    WS_SCENARIO, /* the same, in the JSON */
    WS_CALLS,
    WS_MIN,
    WS_MEAN,
    WS_P99,
    WS_MAX,
    WS_NCOLS
};
void wcet_scenarios_table(struct table *t, const wcet_all *all, unsigned al);

/* "scenario: case" of a sample. */
void wcet_describe_sample(char *buf, size_t len, const wcet_sample *s);

/* The worst row of a kind for allocator al (ROW_COUNT when none). */
unsigned wcet_worst_of_kind(const row_stats *st, enum wcet_row_kind kind);

/* "brk+mmap" for a WCET_SYS_* mask ("" when 0). */
void wcet_sysmask_text(char *buf, size_t len, unsigned mask);

/* The mt heap's targets, judged once for the text and the JSON: the remote
 * free against WCET_MT_REMOTE_TARGET, the owner's alloc and free (mt-owner,
 * up to 2K remote frees pending) against this run's TLSF worst alloc or free
 * + RTM_MT_BATCH TLSF worst frees + WCET_MT_SLACK (bounds 0: TLSF not
 * measured in this run, no verdict). */
typedef struct wcet_mt_judgement {
    int measured; /* mt-owner and mt-remote calls exist */
    row_stats remote, alloc, free, tlsf_alloc, tlsf_free;
    unsigned bound_alloc, bound_free;
} wcet_mt_judgement;
void wcet_mt_judge(const wcet_all *all, wcet_mt_judgement *m);

/* Prints the tables and verdict to stdout. Returns 1 if TLSF's worst alloc
 * and free are within WCET_TARGET, else 0. */
int wcet_report_text(const wcet_all *all, const wcet_config *cfg);

/* The published worst cases the issue compares TLSF with. */
typedef struct wcet_reference {
    const char *name;
    unsigned alloc, free;
} wcet_reference;
extern const wcet_reference wcet_reference_counts[3];
extern const char wcet_reference_source[]; /* where those counts come from */

/* --- report_json.c ------------------------------------------------------ */

/* Writes the JSON document; 0 or -1. */
int wcet_report_json(const char *path, const wcet_all *all, const wcet_config *cfg, int repeat_ok,
                     double seconds, unsigned lanes);

/* Writes every measured call, one CSV line each; 0 or -1. */
int wcet_report_csv(const char *path, const wcet_all *all);

/* Writes the worst call of every row, one instruction per line with its
 * function and offset, plus a per-function breakdown; 0 or -1. */
int wcet_report_traces(const char *path, const wcet_all *all);

#endif /* RTM_TOOLS_WCET_H */
