// SPDX-License-Identifier: MIT
/*
 * random_sweep.h -- `rtmem bench random --sweep`: the curves of the
 * TLSF/xvmalloc/zsmalloc study (docs/METHODS.md), the time of the
 * random-replace loop against the request size.
 *
 * The study ran its loop (10,000 slots, sizes drawn from [x, x+64)) for every
 * window start x = 0, 64, ..., 16,320 and plotted the average time of one
 * free+alloc pair against x, per allocator. Here:
 *
 *   - one child process per allocator and round runs ALL windows, so that
 *     process start-up, the region's pre-faulting and the peer's library
 *     loading stay out of every window (random.h: why children at all);
 *   - each window: fill the slots (untimed), then N timed replacements
 *     between two clock reads (random_loop.h), then drain (untimed); an rtm
 *     heap is created afresh for every window over one region sized for the
 *     largest window and pre-faulted once; a malloc peer keeps its process
 *     heap across windows, as a program's malloc would;
 *   - rounds are interleaved (round r of every allocator before round r+1);
 *     per window the report gives the minimum and the median over rounds;
 *   - a window in which any allocation was refused is counted, shown and
 *     marked, and its time is left out of the curve: a refused allocation
 *     skips the work, so its time is the study's fake speed-up.
 *
 * Window x = 0 draws from [1, 64), not [0, 64): C lets malloc(0) return
 * NULL or a unique pointer and rtm_alloc(0) returns a minimum block, so a
 * 0-byte request measures each allocator's convention, and a NULL from it
 * would count as a refusal that is none. Every other window is [x, x+64).
 *
 * Child protocol (one line each, tab-separated key=value as in random.h):
 *     SWEEP   alloc= valid= from= version= why= rt= region=
 *     WINDOW  i= x= lo= hi= ns_per_pair= refused= heap_ok= used= free= largest= why=
 *     END     windows=
 * A child that dies leaves the windows it finished; END says it finished.
 */
#ifndef RTM_LAB_RANDOM_SWEEP_H
#define RTM_LAB_RANDOM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "random/random.h"

#define SWEEP_WIDTH        64u /* every window is [x, x + 64), as in the study */
#define SWEEP_GRANULE      8u  /* window starts are multiples of this (below)  */
#define SWEEP_DEFAULT_STEP 64u
#define SWEEP_DEFAULT_MAX  16320u
#define SWEEP_QUICK_STEP   1024u
/* Timed replacements per window. The default keeps the whole default sweep
 * (9 allocators, 256 windows, 3 rounds) near 2 minutes on the 2-core
 * machine this was written on (tools/lab/README.md: how it was chosen). */
#define SWEEP_DEFAULT_ITERATIONS 20000u
#define SWEEP_QUICK_ITERATIONS   2000u
/* Each window is one line of a child's output; this bounds that output. */
#define SWEEP_MAX_WINDOWS 4096u
#define SWEEP_DEFAULT_ALLOCATORS                                                                   \
    "tlsf,tlsf_cached,buddy,halffit,slab,heapmem,glibc,mimalloc,jemalloc,tcmalloc"
#define SWEEP_QUICK_ALLOCATORS "tlsf,glibc"

/* --- random_sweep_plan.c: pure functions (unit-tested) ------------------ */

typedef struct sweep_window {
    uint64_t x;      /* the window's start, as the study plots it */
    uint64_t lo, hi; /* requests are drawn from [lo, hi)         */
} sweep_window;

/* Number of windows x = 0, step, 2 step, ... <= max; 0 when step is 0. */
size_t sweep_window_count(uint64_t step, uint64_t max);
/* Window i: x = i * step, [max(x, 1), x + SWEEP_WIDTH). */
sweep_window sweep_window_at(uint64_t step, size_t i);
/* The seed of window i in a round (round_seed = --seed + round - 1): a
 * splitmix64 output of (a splitmix64 output of round_seed) + i, so windows
 * and rounds are decorrelated (consecutive states of one generator would be
 * one sequence shifted by a draw) and every allocator replays the same
 * sizes and slots in the same window and round. */
uint64_t sweep_window_seed(uint64_t round_seed, size_t i);
/* Checks the sweep options. Rules: step a positive multiple of
 * SWEEP_GRANULE (every allocator here hands out blocks in multiples of at
 * least 8 bytes: a window [x, x+64) with x on the granule covers exactly 8
 * whole granules, one off it covers 9 with the two end ones in part, so
 * neighbouring windows would differ in their mix of block sizes, not only
 * in their sizes); max + 64 <= UINT32_MAX; at most
 * SWEEP_MAX_WINDOWS windows; iterations >= 1; slots x (max + 64) x 2 fits
 * in 64 bits. Returns 0, or -1 with the reason in why. */
int sweep_check(uint64_t step, uint64_t max, uint64_t iterations, uint64_t slots, char *why,
                size_t n);
/* The compact table's rows: every k-th window (k chosen for about 16 rows)
 * and always the last one. */
int sweep_table_row(size_t i, size_t nwin);

/* One window of one allocator over the rounds. */
typedef struct sweep_cell {
    double min, median;    /* ns per pair over clean rounds; NAN: none      */
    uint64_t clean_runs;   /* rounds that finished it, valid, none refused  */
    uint64_t refused;      /* refused allocations, all rounds               */
    uint64_t refused_runs; /* rounds with at least one refusal              */
} sweep_cell;

/* Summarises one window over nruns rounds: ns[r] counts when done[r] and
 * ok[r] and refused[r] == 0. scratch holds nruns doubles. */
sweep_cell sweep_cell_of(const double *ns, const uint64_t *refused, const int *ok, size_t nruns,
                         double *scratch);

/* A curve over the windows: the largest and mean of its finite values
 * (NAN when none) and how many are finite. */
typedef struct sweep_curve_stats {
    double max, mean;
    size_t argmax; /* window of the largest */
    size_t plotted;
} sweep_curve_stats;
sweep_curve_stats sweep_curve_of(const double *v, size_t n);

/* --- the measurement -------------------------------------------------- */

/* What the child reported for one window of one round. */
typedef struct sweep_point {
    int done;    /* the child reported this window                 */
    int heap_ok; /* rtm heap: check and leak check held; peers: 1  */
    double ns_per_pair;
    uint64_t refused;
    uint64_t used, free_, largest; /* rtm heap, slots full; peers: 0 */
    char why[160];
} sweep_point;

/* One child: one allocator, all windows, one round. */
typedef struct sweep_run {
    int ran;   /* the child printed its SWEEP line               */
    int ended; /* it printed END: every window is in             */
    int valid; /* the allocator measured is the one named        */
    char why[512], from[256], version[96], rt[256];
    double seconds; /* the child's wall time */
    sweep_point *pts;
} sweep_run;

typedef struct sweep_row {
    alloc_row id; /* name, peer, library, missing (id.runs unused) */
    sweep_run *runs;
    sweep_cell *cells;
    /* Filled by sweep_summarise(). */
    lab_status status;
    sweep_curve_stats med, min; /* over the median and the min curve */
    size_t marked;              /* windows with a refusal           */
    size_t heap_bad;            /* windows whose heap check failed  */
} sweep_row;

typedef struct sweep_bench {
    random_bench b; /* options, machine, clock, notes, region */
    size_t nwin;
    sweep_row *rows;
    size_t nrows;
    double seconds; /* the whole sweep, wall clock */
} sweep_bench;

/* --- random_sweep.c --------------------------------------------------- */
/* The parent: schedules the children, reports. Returns the exit status. */
int random_sweep_main(random_opts *o, alloc_row *rows, size_t nrows);
/* Parses a child's output into run (pts has nwin entries). */
void sweep_parse(const char *text, size_t nwin, sweep_run *run);

/* --- random_sweep_child.c --------------------------------------------- */
/* Runs every window for o->child and prints the lines above. */
int random_sweep_child(const random_opts *o);

/* --- random_sweep_report.c -------------------------------------------- */
void sweep_summarise(sweep_bench *s);
void sweep_print(const sweep_bench *s);
/* Returns 0, or -1 when the file could not be written. */
int sweep_write_json(const sweep_bench *s, const char *path);

/* --- random_sweep_target.c -------------------------------------------- */
/* Each rtm heap against glibc and mimalloc, and TLSF's sweep target
 * (PASS / FAIL / NOT JUDGED); prints nothing without either peer. */
void sweep_print_targets(const sweep_bench *s);

#endif /* RTM_LAB_RANDOM_SWEEP_H */
