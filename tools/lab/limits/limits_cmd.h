// SPDX-License-Identifier: MIT
/*
 * limits_cmd.h -- `rtmem limits`: the two probes of the Linux memmax/memtim
 * kernel modules (docs/METHODS.md), the pieces shared by
 * the parent (limits.c, limits_report.c), the child (limits_child.c) and the
 * probe itself (limits_probe.c).
 *
 * 1. Largest block (memmax's method): double the request from one page
 *    until the allocator refuses, then binary-search between the last
 *    success and the first refusal for the exact largest size. For rtm heaps
 *    on a region of --region bytes; for malloc (glibc, peers) and for
 *    mmap(MAP_NORESERVE) -- the vmalloc analogue -- up to --cap bytes, never
 *    touching the memory of a block.
 * 2. Ticks per allocation (memtim's method) at memtim's sizes, with the
 *    clock's own cost calibrated and subtracted (clock.h).
 *
 * Process model (as in random.h): the parent measures nothing. Every probe
 * and every timing run is a child of /proc/self/exe (a peer's under
 * LD_PRELOAD, verified by peers.h) that prints tab-separated lines:
 *
 *     LARGEST  key=value ...          one per largest-block probe
 *     TIME     key=value ...          one per timing run, then
 *     SIZE     key=value ...          one per size of that run, then
 *     DONE     heap_ok=1 why=...      the heap and leak checks (rtm heaps)
 *
 * A fresh process per run keeps one allocator's state (a grown glibc heap,
 * a retained jemalloc extent, 1 TiB of reserved address space) from
 * colouring the next one's figures.
 */
#ifndef RTM_LAB_LIMITS_CMD_H
#define RTM_LAB_LIMITS_CMD_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/machine.h"
#include "common/aut.h"
#include "common/peers.h"
#include "common/status.h"

/* --- limits_probe.c: the memmax probe, free of any OS or heap ---------- */

/* The allocator under probe, as two callbacks: the probe never sees what it
 * measures, so a fake with a known limit can test it exactly. alloc returns
 * NULL for a refusal; release gets the size back (munmap needs it). */
typedef struct probe_ops {
    void *(*alloc)(void *ctx, uint64_t bytes);
    void (*release)(void *ctx, void *p, uint64_t bytes);
    void *ctx;
} probe_ops;

#define PROBE_MAX_STEPS 64

typedef struct probe_result {
    uint64_t start, cap; /* first request; no request is larger   */
    unsigned nsteps;     /* doubling steps tried                  */
    uint64_t step_bytes[PROBE_MAX_STEPS];
    unsigned char step_ok[PROBE_MAX_STEPS];
    uint64_t last_ok;    /* largest doubling step that succeeded; 0: none          */
    uint64_t first_fail; /* the doubling step that failed; 0: none up to the cap   */
    int capped;          /* no doubling step failed: the limit is >= last_ok       */
    uint64_t exact;      /* largest size that succeeded, exact + 1 refused; when
                          * capped, last_ok (a lower bound); 0: even 1 byte fails */
    unsigned tries;      /* allocation calls made, doubling and search            */
} probe_result;

/* Doubles the request from start (start, 2 start, 4 start, ... while <= cap)
 * until ops->alloc refuses, releasing every success at once; then binary
 * searches (last_ok, first_fail) -- (0, start) when start itself fails -- so
 * that exact succeeded and exact + 1 was refused. That pair is established
 * whatever the allocator does; "exact is THE largest" assumes success is
 * monotone in the size, which holds for every allocator probed here (on an
 * empty heap). Needs 1 <= start <= cap. */
void probe_largest(const probe_ops *ops, uint64_t start, uint64_t cap, probe_result *r);

/* --- allocators -------------------------------------------------------- */

typedef enum lim_kind {
    LIM_RTM,          /* an rtm heap on a pre-faulted region              */
    LIM_MALLOC,       /* malloc/free: glibc, or a peer by LD_PRELOAD      */
    LIM_MMAP,         /* mmap(MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE)    */
    LIM_MMAP_POPULATE /* the same plus MAP_POPULATE: pages at the call,
                       * as vmalloc allocates them                        */
} lim_kind;

#define LIM_MAX_SIZES      16
#define LIM_MAX_ALLOCATORS 24
#define LIM_NAME_MAX       AUT_NAME_MAX

/* Status of a row, a probe or a size (common/status.h): ok, n/a (the
 * allocator cannot serve this: a pool above its block), not installed,
 * invalid (the preload did not take), error (the child failed, a heap check
 * failed). */

typedef struct limits_opts {
    uint64_t region, count, runs, cap;
    const char *sizes_text, *allocators, *json;
    int quick;
    uint64_t sizes[LIM_MAX_SIZES];
    size_t nsizes;
    /* Hidden, set by the parent for a child. */
    const char *child_largest; /* allocator whose largest block to probe  */
    const char *child_time;    /* allocator to time                       */
    const char *child_lib;     /* the library the parent preloaded        */
    double child_tick_ns;      /* the parent's clock calibration ...      */
    uint64_t child_cost;       /* ... and clock cost, so every run shares */
    uint64_t child_tsc;        /* the same conversion                     */
} limits_opts;

/* One size of one timing run; ticks with the clock cost subtracted. */
typedef struct lim_sample {
    lab_status status;
    uint64_t n;       /* timed allocations                                  */
    uint64_t batch;   /* blocks live at once                                */
    uint64_t refused; /* refusals met (each ends a batch early, not timed)  */
    uint64_t min, p50, p99, max;
    double mean;
    char why[160]; /* for n/a or error */
} lim_sample;

/* Who served malloc in a child, and whether that is the allocator named. */
typedef struct lim_ident {
    int ran;   /* the child printed its line */
    int valid; /* peer_verify() held         */
    char why[512], from[256], version[96];
} lim_ident;

typedef struct lim_time_run {
    lim_ident id;
    int done;    /* the child reached its last line                */
    int heap_ok; /* rtm: heap check and leak check held; else 1    */
    char heap_why[160];
    lim_sample size[LIM_MAX_SIZES];
} lim_time_run;

typedef struct lim_largest {
    lim_ident id;
    lab_status status;
    probe_result probe;
    uint64_t largest_free; /* rtm: rtm_heap_stats() of the fresh heap   */
    uint64_t arena;        /* rtm: arena_bytes of the fresh heap        */
    int check_ok;          /* rtm: rtm_heap_check() after the probe     */
} lim_largest;

/* One allocator: what it is, its probe and its timing runs. */
typedef struct lim_row {
    char name[LIM_NAME_MAX];
    lim_kind kind;
    const peer *peer; /* LIM_MALLOC only */
    const aut *aut;   /* what the name is (common/aut.h) */
    char lib[PATH_MAX];
    lab_status status; /* of the row as a whole (not installed, invalid, ...) */
    lim_largest largest;
    lim_time_run *runs; /* o->runs of them */
} lim_row;

/* Aggregate of one (allocator, size) over the runs (limits_report.c). */
typedef struct lim_agg {
    lab_status status;
    size_t runs;                                  /* runs that measured it          */
    uint64_t n, refused, batch;                   /* totals; batch of the first run  */
    double min, max;                              /* over every sample of every run  */
    double med_min, med_med, med_max, med_spread; /* of the per-run medians */
    double p99, mean;                             /* medians over runs               */
    const char *why;
} lim_agg;

/* What the machine's virtual memory allows: it explains the malloc limit. */
typedef struct lim_vm {
    int overcommit;      /* /proc/sys/vm/overcommit_memory, -1 unknown */
    uint64_t mem_total;  /* MemTotal bytes                             */
    uint64_t swap_total; /* SwapTotal bytes                            */
    uint64_t rlimit_as;  /* RLIMIT_AS bytes; 0: unlimited              */
} lim_vm;

#define LIM_CLOCK_MODES 4

typedef struct limits_bench {
    const limits_opts *o;
    bench_clock clk;
    char clock_text[512];
    /* The most frequent empty-interval durations and their shares: on a
     * virtual machine the TSC may advance in steps of tens of ticks, and
     * these show the step that quantises every small figure. */
    uint64_t mode_ticks[LIM_CLOCK_MODES];
    double mode_share[LIM_CLOCK_MODES];
    size_t nmodes;
    machine m;
    lim_vm vm;
    char rt_note[256];
    lim_row *rows;
    size_t nrows;
} limits_bench;

/* --- limits.c ---------------------------------------------------------- */
int limits_main(int argc, char **argv);
/* What --allocators NAME is (aut.h): glibc, the peers and the drop-in
 * (LIM_MALLOC, *p set),
 * "mmap", "mmap-populate", or any name rtm_min_region() accepts. Returns 0,
 * or -1 for an unknown name. */
int limits_kind_of(const char *name, lim_kind *kind, const peer **p);
/* Blocks live at once when timing size bytes: the same for every allocator,
 * min(count, region / (2 x size)), at least 1. */
uint64_t limits_batch(const limits_opts *o, uint64_t size);

/* --- limits_child.c ---------------------------------------------------- */
/* Runs the child named by o->child_largest or o->child_time and prints its
 * lines. Returns the process exit status. */
int limits_child(const limits_opts *o);
/* Parse a child's stdout. Return 0 when the main line was found. */
int limits_parse_largest(const char *text, lim_largest *r);
int limits_parse_time(const char *text, const limits_opts *o, lim_time_run *r);

/* --- limits_report.c --------------------------------------------------- */
lim_agg limits_aggregate(const limits_bench *b, const lim_row *row, size_t size_index);
void limits_print(const limits_bench *b);
/* Returns 0, or -1 when the file could not be written. */
int limits_write_json(const limits_bench *b, const char *path);

#endif /* RTM_LAB_LIMITS_CMD_H */
