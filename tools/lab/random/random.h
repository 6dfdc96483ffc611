// SPDX-License-Identifier: MIT
/*
 * random.h -- `rtmem bench random`: the random-replace benchmark of the
 * TLSF/xvmalloc/zsmalloc study (docs/METHODS.md), the pieces shared by the
 * parent (random.c, random_report.c), the child (random_child.c) and the
 * window sweep (random_sweep.h).
 *
 * Process model: the parent measures nothing itself. For every round and
 * every allocator it re-executes this program (/proc/self/exe) as a child
 * with hidden --child options (and LD_PRELOAD for a peer); the child runs
 * the loop (random_loop.h) once and prints one result line on stdout:
 *
 *     RESULT<TAB>key=value<TAB>key=value...
 *
 * Values never contain a tab or a newline. Running TLSF in a child as well
 * gives every allocator the same fresh process, address space and startup.
 * The child, not the parent, does the real-time setup (rt.h): it is the
 * process that measures.
 */
#ifndef RTM_BENCH_RANDOM_H
#define RTM_BENCH_RANDOM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/machine.h"
#include "common/aut.h"
#include "common/peers.h"
#include "common/status.h"

typedef struct random_opts {
    uint64_t slots, iterations, min, max, runs, seed;
    uint64_t tlsf_region; /* 0: slots x max x 2 (sweep: slots x (x+64) x 2) */
    const char *json, *allocators, *clock;
    int quick;
    int no_rt;   /* skip the children's real-time setup               */
    int64_t cpu; /* CPU the children pin to; < 0: the last allowed    */
    /* --sweep (random_sweep.h): windows [x, x+64), x = 0, step, ... <= max. */
    int sweep;
    uint64_t sweep_step, sweep_max, sweep_iterations;
    /* --grow (random_grow.c): TLSF whole, growing by chunks, growing in a
     * reserved range; growth by max(min_bytes, grow_chunk) bytes. */
    int grow;
    uint64_t grow_chunk;
    /* Hidden, set by the parent for a child. */
    const char *child;      /* allocator the child measures            */
    const char *child_lib;  /* the library the parent preloaded        */
    const char *child_grow; /* --grow: the way the child measures     */
    double child_tick_ns;   /* the parent's clock calibration ...      */
    uint64_t child_cost;    /* ... and clock cost, so every run shares */
    uint64_t child_tsc;     /* the same conversion                     */
} random_opts;

/* Per-op statistics, in this order, in every result. */
enum { LAT_P50, LAT_P99, LAT_P999, LAT_P9999, LAT_MAX, LAT_MEAN, LAT_COUNT };
extern const char *const lat_names[LAT_COUNT];

typedef struct random_result {
    int ok;         /* the child ran to the end and printed a result  */
    int valid;      /* the allocator measured is the one named        */
    int heap_ok;    /* TLSF: heap check and leak check held; else 1   */
    char why[768];  /* why not ok / not valid / not heap_ok           */
    char from[256]; /* object that serves malloc in the child         */
    char version[96];
    char rt[256];       /* the child's real-time setup note */
    double ns_per_pair; /* throughput pass: loop time / iterations        */
    uint64_t refused;   /* refused allocations: fill + both passes        */
    uint64_t region;    /* TLSF: bytes of the pre-faulted region          */
    double alloc_ns[LAT_COUNT], free_ns[LAT_COUNT];
} random_result;

/* A run counts in the statistics only when it is clean: it ran, measured the
 * right allocator, kept the heap sound and refused nothing. */
static inline int random_clean(const random_result *r)
{
    return r->ok && r->valid && r->heap_ok && r->refused == 0;
}

/* A row's status (common/status.h): ok, not installed, invalid, error,
 * refused. */

/* One allocator across all rounds, and what is derived from its runs. */
typedef struct alloc_row {
    const char *name;
    const peer *peer; /* NULL for an rtm heap (aut->peer) */
    const aut *aut;   /* what the name is (common/aut.h)  */
    char lib[PATH_MAX];
    int missing;
    random_result *runs;
    /* Filled by random_summarise(). */
    lab_status status;
    uint64_t clean, refused;
    double min, median, max, spread;
    double alloc_med[LAT_COUNT], free_med[LAT_COUNT];
    double alloc_worst, free_worst;
} alloc_row;

typedef struct random_bench {
    const random_opts *o;
    machine m;
    double tick_ns, cost_ns;
    char clock_text[512];
    char env_note[256];
    char rt_note[320]; /* what the children's real-time setup did */
    uint64_t region;
    alloc_row *rows;
    size_t nrows;
} random_bench;

/* Most allocators one run may name (the sweep's default list has 9). */
#define RANDOM_MAX_ALLOCATORS 16

/* A child's command line: "rtmem bench random" and the options the parent
 * passes (random_args_*). */
typedef struct random_args {
    char buf[24][64];
    char *argv[64];
    size_t n, k;
} random_args;

/* --- random.c ---------------------------------------------------------- */
int random_main(int argc, char **argv);
/* The rtm heaps' region for these options: --tlsf-region, else slots x max
 * x 2 (the sweep passes its largest window's end as max); whole pages. */
uint64_t random_region_bytes(const random_opts *o);
/* What --allocators and --child accept: rtm heaps and mallocs (aut.h). */
extern const aut_rules random_aut_rules;
/* Splits --allocators into rows (name, peer, aut). Returns the count, or 0
 * with the message printed. */
size_t random_parse_allocators(const char *list, alloc_row *rows);
/* Finds each peer's library; a peer without one is marked missing. */
void random_locate_libraries(alloc_row *rows, size_t n);
/* Calibrates the clock the children share and fills b's clock, machine and
 * environment fields; stores the clock's cost and kind in o for the
 * children. */
void random_prepare(random_bench *b, random_opts *o);
/* Starts a child's command line: the options every child takes (slots,
 * seed, region, clock, real-time setup, --child name [--child-lib lib]). */
void random_args_init(random_args *a, const random_bench *b, const alloc_row *row, uint64_t seed);
/* Appends "--name value" (printf-formatted value) or a flag. */
void random_args_add(random_args *a, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void random_args_flag(random_args *a, const char *name);
/* Keeps the first child's real-time note (rt) in b->rt_note, or says that
 * the children's notes differ. */
void random_note_rt(random_bench *b, const char *rt);

/* --- random_child.c ---------------------------------------------------- */
/* Runs the loop once for o->child and prints the result line. Returns the
 * process exit status. */
int random_child(const random_opts *o);
/* Parses a child's stdout. Returns 0 when a result line was found. */
int random_parse_result(const char *text, random_result *r);
/* Replaces tab and newline so a value stays one field of a result line. */
void random_sanitise(char *s);

/* --- random_grow.c ----------------------------------------------------- */
/* The ways --grow measures TLSF in: the whole region at start, growing by
 * fresh mmap'd chunks, growing inside one reserved range. */
enum { GROW_WHOLE, GROW_CHUNKS, GROW_RESERVE, GROW_WAYS };
#define GROW_DEFAULT_CHUNK (1024u * 1024u)
/* The way named "whole", "chunks" or "reserve", or -1. */
int random_grow_way(const char *name);
/* The parent of --grow: interleaved child runs, report, JSON. Returns the
 * exit status. */
int random_grow_main(random_opts *o);
/* A --grow child (--child-grow WAY): one run, one result line. */
int random_grow_child(const random_opts *o);

/* --- random_report.c --------------------------------------------------- */
void random_summarise(random_bench *b);
void random_print(const random_bench *b);
/* Returns 0, or -1 when the file could not be written. */
int random_write_json(const random_bench *b, const char *path);

#endif /* RTM_BENCH_RANDOM_H */
