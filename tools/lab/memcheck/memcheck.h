// SPDX-License-Identifier: MIT
/*
 * memcheck.h -- `rtmem memcheck`: the Xenomai smokey memcheck method
 * (Xenomai's smokey memcheck test, described in docs/METHODS.md)
 * re-implemented over rtm heaps.
 * Shared by the driver (memcheck.c), one run (memcheck_run.c), the
 * arithmetic reference (memcheck_ideal.c) and the report (memcheck_report.c).
 *
 * Vocabulary, as in the method: heap_size is the usable size the heap must
 * offer; the arena is the region it is created over (metadata included);
 * block_size the request of one run; maxblocks = heap_size / block_size;
 * nrblocks the allocations that succeeded; user_size = nrblocks x block_size.
 */
#ifndef RTM_BENCH_MEMCHECK_H
#define RTM_BENCH_MEMCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "common/machine.h"
#include "common/prng.h"
#include "rtmem.h"

/* Run flags; the values are Xenomai's (MEMCHECK_SHUFFLE, _PATTERN, _HOT). */
#define MC_SHUFFLE 2
#define MC_PATTERN 4
#define MC_HOT     8

typedef struct mc_params {
    const char *algorithm; /* one name, or "all" (--all) */
    int all;
    uint64_t seq_heap_size, random_rounds, pattern_heap_size, pattern_rounds;
    int64_t max_results; /* rows per sorted view; -1: every row by heap size */
    uint64_t seed;
    int quick, no_rt;
    int64_t cpu; /* -1: choose */
    const char *json;
} mc_params;

/* One run's figures. Times in ns, each including one clock_gettime() read
 * pair's cost, as in Xenomai. */
typedef struct mc_row {
    size_t heap_size, block_size, nrblocks, user_size;
    uint64_t alloc_sum, alloc_max, free_sum, free_max;
    size_t maximum_free, largest_free;
    double overhead, frag; /* percent */
    int flags;
    double ideal_overhead, ideal_frag; /* the arithmetic limit, same run */
} mc_row;

/* The arena that gives a heap size (memcheck_heap.c says how it is chosen):
 * usable is the fresh heap's free_bytes over it. */
typedef struct mc_arena {
    size_t heap_size, arena, usable;
} mc_arena;

typedef struct mc_phase {
    const char *title;
    mc_row *rows;
    size_t nrows, cap;
    size_t runs, failed; /* failed runs are not in rows */
} mc_phase;

/* Everything one algorithm's sequence produced, kept for the final table
 * and the JSON. */
typedef struct mc_result {
    const char *algorithm;
    mc_phase pow2, rnd;
    int pattern_ok;
    size_t pattern_runs;
    mc_arena arenas[40];
    size_t narenas;
    char **failures; /* one line per failed run */
    size_t nfailures;
} mc_result;

typedef struct mc_ctx {
    const mc_params *p;
    const char *algorithm;  /* the heap being measured ("tlsf", "pool", "pshared") */
    char run_algorithm[40]; /* what this run created, when it differs ("pool:48") */
    unsigned char *buf;     /* pre-faulted, reused for every arena */
    size_t buf_size;
    struct mc_chunk *chunks;
    unsigned char *ideal_map; /* scratch of memcheck_ideal.c */
    size_t *ideal_order;
    size_t max_blocks;
    mc_arena arenas[40];
    size_t narenas;
    bench_rng rng;        /* block sizes, shuffles, patterns */
    bench_rng ideal_rng;  /* the ideal model's shuffles, apart */
    unsigned long misuse; /* reports from the rtm error handler */
    char why[256];        /* why the last run failed */
    char **failures;      /* one line per failed run */
    size_t nfailures;
} mc_ctx;

struct mc_chunk {
    void *ptr;
    unsigned pattern;
};

/* --- memcheck.c -------------------------------------------------------- */
int memcheck_main(int argc, char **argv);
/* Maps the buffers for the largest heap p asks for and seeds the
 * generators. Set c->algorithm before a run. Returns 0 or -1. */
int mc_ctx_init(mc_ctx *c, const mc_params *p);

/* --- memcheck_heap.c --------------------------------------------------- */
/* Creates the heap of one run (heap_size usable bytes for block_size
 * requests), or returns NULL with the reason in c->why. */
rtm_heap *mc_heap_open(mc_ctx *c, size_t heap_size, size_t block_size);
void mc_heap_close(mc_ctx *c, rtm_heap *h);
/* 1 for "pshared", the process-shared heap (not an rtm_heap_create name). */
int mc_is_pshared(const char *algorithm);
/* One line saying how the arena of `algorithm` is sized. */
const char *mc_sizing_rule(const char *algorithm);

/* --- memcheck_run.c ---------------------------------------------------- */
/* One run: returns 0 and fills row, or -1 with the reason in c->why. */
int mc_run(mc_ctx *c, size_t heap_size, size_t block_size, int flags, mc_row *row);

/* --- memcheck_ideal.c -------------------------------------------------- */
/* What a heap with no header and no rounding, placing blocks contiguously,
 * scores on the same run: overhead and fragmentation in percent. */
void mc_ideal(mc_ctx *c, size_t heap_size, size_t block_size, int flags, double *overhead,
              double *frag);

/* --- memcheck_report.c ------------------------------------------------- */
typedef struct mc_overall {
    size_t n;
    double worst_alloc, worst_free, avg_max_alloc, avg_max_free, avg_alloc, avg_free;
    double overhead, frag, ideal_overhead, ideal_frag;
} mc_overall;

mc_overall mc_overall_of(const mc_phase *ph);
/* Prints a phase in Xenomai's memcheck layout: legend, four sorted views, overall. */
void mc_print_phase(const mc_phase *ph, const char *algorithm, int64_t max_results);
/* Prints one heap's summary: arenas, overall blocks, published figures,
 * limits, targets (rtmem's, for its TLSF), failures. */
void mc_print_summary(const mc_params *p, const mc_result *r, const char *setup_note,
                      const char *clock_note);
/* Prints every heap's overall figures in one table beside the published
 * ones (--all). */
void mc_print_all(const mc_result *res, size_t n);
/* Returns 0, or -1 when the file could not be written. */
int mc_write_json(const mc_params *p, const machine *m, const mc_result *res, size_t n,
                  const char *setup_note, double clock_ns);

#endif /* RTM_BENCH_MEMCHECK_H */
