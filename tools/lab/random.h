/*
 * random.h -- `rtmem random`: seed 003's random-replace benchmark, the
 * pieces shared by the parent (random.c, random_report.c) and the child
 * (random_child.c).
 *
 * Process model: the parent measures nothing itself. For every round and
 * every allocator it re-executes this program (/proc/self/exe) as a child
 * with hidden --child options (and LD_PRELOAD for a peer); the child runs
 * the loop once and prints one result line on stdout:
 *
 *     RESULT<TAB>key=value<TAB>key=value...
 *
 * Values never contain a tab or a newline. Running TLSF in a child as well
 * gives every allocator the same fresh process, address space and startup.
 */
#ifndef RTM_BENCH_RANDOM_H
#define RTM_BENCH_RANDOM_H

#include <limits.h>
#include <stdint.h>

#include "peers.h"

typedef struct random_opts {
    uint64_t slots, iterations, min, max, runs, seed;
    uint64_t tlsf_region; /* 0: slots x max x 2 */
    const char *json, *allocators, *clock;
    int quick;
    /* Hidden, set by the parent for a child. */
    const char *child;     /* allocator the child measures            */
    const char *child_lib; /* the library the parent preloaded        */
    double child_tick_ns;  /* the parent's clock calibration ...      */
    uint64_t child_cost;   /* ... and clock cost, so every run shares */
    uint64_t child_tsc;    /* the same conversion                     */
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

enum row_status { ROW_OK, ROW_MISSING, ROW_INVALID, ROW_ERROR, ROW_REFUSED };

/* One allocator across all rounds, and what is derived from its runs. */
typedef struct alloc_row {
    const char *name;
    const peer *peer; /* NULL for TLSF */
    char lib[PATH_MAX];
    int missing;
    random_result *runs;
    /* Filled by random_summarise(). */
    enum row_status status;
    uint64_t clean, refused;
    double min, median, max, spread;
    double alloc_med[LAT_COUNT], free_med[LAT_COUNT];
    double alloc_worst, free_worst;
} alloc_row;

typedef struct random_bench {
    const random_opts *o;
    double tick_ns, cost_ns;
    char clock_text[512];
    char env_note[256];
    uint64_t region;
    alloc_row *rows;
    size_t nrows;
} random_bench;

/* --- random.c ---------------------------------------------------------- */
int random_main(int argc, char **argv);
/* The TLSF region for these options: --tlsf-region, else slots x max x 2;
 * whole pages. */
uint64_t random_region_bytes(const random_opts *o);

/* --- random_child.c ---------------------------------------------------- */
/* Runs the loop once for o->child and prints the result line. Returns the
 * process exit status. */
int random_child(const random_opts *o);
/* Parses a child's stdout. Returns 0 when a result line was found. */
int random_parse_result(const char *text, random_result *r);

/* --- random_report.c --------------------------------------------------- */
void random_summarise(random_bench *b);
void random_print(const random_bench *b);
/* Returns 0, or -1 when the file could not be written. */
int random_write_json(const random_bench *b, const char *path);

#endif /* RTM_BENCH_RANDOM_H */
