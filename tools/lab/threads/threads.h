// SPDX-License-Identifier: MIT
/*
 * threads.h -- `rtmem bench threads`: the tcmalloc-style pool benchmark
 * (multi-thread malloc, "seed002" in --bench and the JSON; docs/METHODS.md)
 * and a producer/consumer cross-thread benchmark; the pieces shared by the
 * parent (threads.c, threads_report.c), the child
 * (threads_child.c, threads_seed.c, threads_pc.c, threads_lock.c) and the
 * pure helpers (threads_parse.c, unit-tested by tests/threads_unit.c).
 *
 * Process model (as random.h): the parent measures nothing itself. For every
 * run, benchmark, thread count and allocator it re-executes this program as
 * a child with hidden --child options (and LD_PRELOAD for a malloc peer);
 * the child runs the benchmark once and prints one line on stdout:
 *
 *     RESULT<TAB>key=value<TAB>key=value...
 *
 * One child per measurement, because peak RSS (getrusage ru_maxrss) is a
 * per-process high-water mark: two measurements in one process would share
 * it, and one allocator's heap would warm the next measurement.
 *
 * Definitions (the pool benchmark's BenchmarkMalloc): each of N threads does `rounds`
 * rounds; a round allocates `ntimes` blocks of (16 + i) % 8192 + 1 bytes
 * (i = 0 .. ntimes-1), timing the allocation loop, then frees them in the
 * same order, timing the free loop.
 *   malloc time = sum over threads and rounds of the allocation loops'
 *                 durations (the original's malloc_costtime);
 *   free time   = the same for the free loops (free_costtime);
 *   wall time   = from the release of all threads (a barrier) to the last
 *                 join: what the benchmark costs the process.
 * The original timed with clock(), which under MSVC (where it ran) is elapsed
 * time; here each loop is timed with CLOCK_MONOTONIC, the same quantity.
 * The original never writes its blocks; nor does this loop unless --seed-write
 * asks for it. Then peak RSS says little about the blocks: an allocator
 * whose metadata lives outside its blocks never faults their pages in. So
 * the RSS target is judged on producer/consumer (every byte written) and on
 * seed002 only under --seed-write.
 * With more threads than CPUs a loop's duration includes time its thread
 * waited for a CPU, as in the original; the wall time does not double-count it.
 */
#ifndef RTM_LAB_THREADS_H
#define RTM_LAB_THREADS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/machine.h"
#include "common/aut.h"
#include "common/peers.h"
#include "common/status.h"
#include "common/summary.h"

#define TR_MAX_COUNTS     8  /* thread counts in --threads          */
#define TR_MAX_THREADS    64 /* largest thread count                */
#define TR_MAX_ALLOCATORS 12 /* entries in --allocators             */
#define TR_NAME_MAX       48 /* longest allocator name, NUL included */

/* Producer/consumer parameters that are not options: block sizes are
 * uniform in [TR_PC_MIN, TR_PC_MAX] and the queue holds TR_PC_QUEUE blocks. */
#define TR_PC_MIN   16u
#define TR_PC_MAX   1024u
#define TR_PC_QUEUE 1024u

enum tr_benchmark { TR_SEED, TR_PC, TR_NBENCH };
extern const char *const tr_bench_names[TR_NBENCH]; /* "seed002", "pc" */

typedef struct threads_opts {
    const char *threads_text, *allocators, *bench_text, *json;
    uint64_t ntimes, rounds, runs, pc_blocks, seed;
    int quick;
    int seed_write;               /* seed002 writes every byte of each block (--seed-write) */
    size_t counts[TR_MAX_COUNTS]; /* parsed --threads */
    size_t ncounts;
    int bench_on[TR_NBENCH]; /* parsed --bench   */
    /* Hidden, set by the parent for a child. */
    const char *child;       /* allocator the child measures          */
    const char *child_lib;   /* the library the parent preloaded      */
    const char *child_bench; /* "seed002" or "pc"                     */
    uint64_t child_threads;  /* threads (seed002) or pairs (pc)       */
} threads_opts;

/* One child run, as parsed from its result line. */
typedef struct tr_result {
    int ok;         /* the child ran to the end and printed a result    */
    int valid;      /* the allocator measured is the one named          */
    int heap_ok;    /* locked rtm heap: check and leak check held; or 1 */
    char why[512];  /* why not ok / not valid / not heap_ok             */
    char from[256]; /* object that serves malloc in the child           */
    char version[96];
    double wall_ns;            /* both benchmarks                          */
    double malloc_ns, free_ns; /* seed002: sums over threads and rounds    */
    uint64_t blocks;           /* blocks allocated and freed, all threads  */
    uint64_t corrupt;          /* pc: blocks whose contents did not match  */
    uint64_t refused;          /* allocations that returned NULL           */
    uint64_t rss_start_kb;     /* VmRSS before the benchmark               */
    uint64_t maxrss_kb;        /* getrusage ru_maxrss at the end           */
    uint64_t region;           /* locked or mt heap: its region in bytes   */
    uint64_t unattached;       /* mt heap: threads the fallback served     */
} tr_result;

/* A run counts in the statistics only when it is clean. A refused
 * allocation makes a run unclean: a NULL is not a fast allocation. */
static inline int tr_clean(const tr_result *r)
{
    return r->ok && r->valid && r->heap_ok && r->refused == 0 && r->corrupt == 0;
}

enum tr_kind { TR_KIND_PEER, TR_KIND_DROPIN, TR_KIND_LOCKED, TR_KIND_MT };
/* What --allocators and --child accept: the mallocs, locked rtm heaps and
 * mt heaps. */
extern const aut_rules tr_aut_rules;
/* A cell's or a row's status (common/status.h): ok, not installed, not
 * built, invalid, error, refused. */

/* One allocator, one benchmark, one thread count: its runs and summaries
 * over the clean ones. */
typedef struct tr_cell {
    tr_result *runs;
    size_t clean;
    lab_status status;
    summary wall_ms, malloc_ms, free_ms, sum_ms; /* sum: malloc + free     */
    summary ns_per_block, mblocks_per_s;         /* pc (wall / blocks)     */
    summary rss_mib;                             /* peak RSS               */
    uint64_t refused;                            /* over all runs          */
} tr_cell;

typedef struct tr_row {
    char name[TR_NAME_MAX]; /* "glibc", "rtmem", "locked:tlsf", ...  */
    enum tr_kind kind;
    const peer *peer; /* NULL for a locked rtm heap            */
    const aut *aut;   /* what the name is (common/aut.h)       */
    char lib[PATH_MAX];
    int missing; /* the peer's library was not found       */
    tr_cell cell[TR_NBENCH][TR_MAX_COUNTS];
    lab_status status; /* the worst of its cells               */
} tr_row;

typedef struct tr_bench {
    const threads_opts *o;
    machine m;
    char rt_note[512];
    char env_note[256];
    char locked_impl[160]; /* which locked heap the build uses */
    char mt_impl[160];     /* and which mt heap                */
    tr_row rows[TR_MAX_ALLOCATORS];
    size_t nrows;
} tr_bench;

/* --- threads.c ------------------------------------------------------------ */
int threads_main(int argc, char **argv);

/* The pool benchmark's request size for index i: (16 + i) % 8192 + 1.
 * Inline: it sits in the timed loop, as in the original. */
static inline size_t tr_seed_size(uint64_t i) { return (size_t)((16u + i) % 8192u + 1u); }

/* --- threads_parse.c: pure helpers (no allocator, no I/O) ------------------ */

/* Parses a strictly formed list of thread counts ("1,2,4"): decimal numbers
 * in [1, max_value] separated by single commas, no duplicates, at most
 * max_n of them. Returns 0, or -1 with the reason in why. */
int tr_parse_counts(const char *text, size_t *out, size_t max_n, size_t max_value, size_t *n,
                    char *why, size_t why_n);
/* Splits a comma list of names into out[][TR_NAME_MAX]: no empty element,
 * no name longer than TR_NAME_MAX - 1, no duplicate, at most max_n. Returns
 * 0, or -1 with the reason in why. */
int tr_split_names(const char *text, char out[][TR_NAME_MAX], size_t max_n, size_t *n, char *why,
                   size_t why_n);
/* The largest request of one round of ntimes allocations. */
size_t tr_seed_max_size(uint64_t ntimes);
/* Bytes one thread holds at the end of its allocation loop. */
uint64_t tr_seed_live_bytes(uint64_t ntimes);
/* Region of a locked rtm heap for the pool benchmark (seed002): every thread's
 * ntimes blocks at the most any rtm heap takes for the largest request (a
 * header, rounded up to a power of two, at least a 4096-byte buddy page),
 * plus 4 MiB. Mapped without reserve: only what the heap touches becomes
 * resident. */
uint64_t tr_seed_region(uint64_t nworks, uint64_t ntimes);
/* Region for producer/consumer: the blocks that can be live at once (a full
 * queue plus one in each producer's and consumer's hands), twice over at
 * the same per-block bound, plus 4 MiB. */
uint64_t tr_pc_region(uint64_t pairs);
/* a / b, or NAN when either is not a positive finite number. */
double tr_ratio(double a, double b);
/* Parses a child's stdout. Returns 0 when a result line was found. */
int tr_parse_result(const char *text, tr_result *r);

/* --- threads_child.c ------------------------------------------------------ */
/* Runs one benchmark for o->child and prints the result line. Returns the
 * process exit status. */
int threads_child(const threads_opts *o);

/* --- threads_seed.c, threads_pc.c: the benchmarks, in the child ------------ */
struct tr_heap;
/* heap == NULL: malloc and free; else the shared rtm heap (threads_lock.h),
 * mt: it is an mt heap and every thread attaches to a shard. */
typedef struct tr_seed_out {
    uint64_t wall_ns, malloc_ns, free_ns, blocks, refused;
    uint64_t unattached; /* threads an mt heap served from its fallback */
} tr_seed_out;
/* Returns 0, or -1 when the threads could not be started (why filled). */
/* write: fill every block inside the timed allocation loop (--seed-write). */
int tr_seed_run(struct tr_heap *heap, int mt, size_t nworks, uint64_t ntimes, uint64_t rounds,
                int write, tr_seed_out *out, char *why, size_t why_n);

typedef struct tr_pc_out {
    uint64_t wall_ns, blocks, refused, corrupt, unattached;
} tr_pc_out;
int tr_pc_run(struct tr_heap *heap, int mt, size_t pairs, uint64_t blocks_per_producer,
              uint64_t seed, tr_pc_out *out, char *why, size_t why_n);

/* --- threads_report.c ----------------------------------------------------- */
void tr_summarise(tr_bench *b);
void tr_print(const tr_bench *b);
/* Returns 0, or -1 when the file could not be written. */
int tr_write_json(const tr_bench *b, const char *path);
/* 1 when the method failed (exit status 1): a locked rtm heap's child
 * crashed, failed its heap or leak check, or measured the wrong malloc; or
 * any row's producer/consumer run received a corrupted block. */
int tr_method_failed(const tr_bench *b);

#endif /* RTM_LAB_THREADS_H */
