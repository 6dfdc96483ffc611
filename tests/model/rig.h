// SPDX-License-Identifier: MIT
/*
 * tests/model/rig.h -- the one randomized model-based test rig, shared by
 * every allocator rtmem has or will have (TLSF, the other heaps, the malloc
 * replacement) and by the benchmark tools.
 *
 * The rig drives an allocator only through the callbacks of a rig_ops, and
 * keeps a shadow record of every live block (address, requested size, usable
 * size, alignment, token). After each step it verifies what every allocator
 * owes its caller:
 *  - live blocks never overlap (nor their headers, when the allocator tells
 *    the rig its per-block overhead) and lie inside the regions, if known;
 *  - alignment: ops->alignment for plain allocations, the requested one for
 *    aligned allocations, kept by realloc;
 *  - usable_size >= the requested size, and stable while the block lives;
 *  - contents: every block is filled with a pattern derived from its address
 *    and a per-block token; the pattern is checked before each free, the
 *    preserved prefix after each realloc, and every block at each sweep;
 *  - statistics (when ops->stats exists): used_bytes, live_blocks,
 *    peak_used_bytes and failed_allocs equal the shadow's, errno is ENOMEM
 *    after every refusal;
 *  - honesty (RIG_LARGEST_FREE_EXACT): a plain request succeeds iff it is
 *    <= stats.largest_free, so every ENOMEM is justified and largest_free is
 *    exact; probes allocate largest_free and largest_free + 1 at random points;
 *  - the allocator's own check (ops->check) is clean every check_every steps;
 *  - after freeing everything (at random points and at the end), the heap's
 *    free_bytes and largest_free are back to their initial values.
 *
 * Determinism: everything the rig does follows from cfg->seed. On the first
 * failure the rig prints the seed, the step, the last operations and the
 * command line that replays the run (cfg->replay + --seed/--steps), then
 * returns non-zero.
 */
#ifndef RTM_TESTS_RIG_H
#define RTM_TESTS_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "rtmem/common.h"

#define RIG_MAX_REGIONS 16

typedef struct rig_region {
    const void *base;
    size_t bytes;
} rig_region;

/* Which parts of the rtmem contract the allocator under test promises.
 * rtmem heaps promise all of them (RIG_RTMEM_CONTRACT); a malloc
 * replacement might promise fewer. */
enum rig_flags {
    RIG_STATS_EXACT = 1u << 0,        /* used/live/peak/failed as rtm_stats says    */
    RIG_LARGEST_FREE_EXACT = 1u << 1, /* plain alloc(n) succeeds iff n<=largest_free */
    RIG_COALESCES = 1u << 2,          /* freeing all restores free/largest_free     */
    RIG_REALLOC_ZERO_FREES = 1u << 3, /* realloc(p, 0) frees, NULL, errno untouched */
    RIG_ERRNO_ENOMEM = 1u << 4,       /* every refusal sets errno to ENOMEM         */
    RIG_WALK_EXACT = 1u << 5,         /* walked free blocks sum to free_bytes, used
                                         blocks to used_bytes                       */
    RIG_SHRINK_IN_PLACE = 1u << 6,    /* realloc(p, n <= usable) keeps the address  */
    RIG_LARGEST_IS_BIGGEST = 1u << 7, /* largest_free = the biggest free block: any
                                         free block can be allocated whole          */
    RIG_ALIGN_ENOTSUP = 1u << 8,      /* aligned_alloc may refuse an alignment it can
                                         never give with ENOTSUP, not counted in
                                         failed_allocs (the fixed-block pool)       */
    RIG_GROWS = 1u << 9,              /* the heap grows on demand (rtm_heap_set_grow):
                                         arena_bytes may rise, never fall; a test
                                         also drops LARGEST_FREE_EXACT, COALESCES  */
    /* What rtmem's TLSF promises: everything but LARGEST_IS_BIGGEST. Its
     * largest_free is exact about what alloc grants (LARGEST_FREE_EXACT) but
     * may be below the biggest free block when a merge removed a list's head
     * (docs/TLSF.md, "What remains"); the rig then only counts it. */
    RIG_RTMEM_CONTRACT = 0x7fu
};

typedef void (*rig_visit)(void *ptr, size_t usable, int used, void *arg);

typedef struct rig_ops {
    const char *name; /* printed in messages */
    void *ctx;        /* first argument of every callback */
    void *(*alloc)(void *ctx, size_t size);
    void *(*aligned_alloc)(void *ctx, size_t alignment, size_t size); /* NULL: unsupported */
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    int (*free)(void *ctx, void *ptr); /* 0, or non-zero if it rejected a live block */
    size_t (*usable_size)(void *ctx, const void *ptr);
    void (*stats)(void *ctx, rtm_stats *out);           /* NULL: no statistics */
    int (*check)(void *ctx);                            /* NULL: none; 0 = clean */
    int (*walk)(void *ctx, rig_visit visit, void *arg); /* NULL: none; 0 = ok */
    size_t alignment;      /* what alloc() guarantees (RTM_ALIGN for rtmem)            */
    size_t block_overhead; /* bytes between the end of one payload and the start of the
                              next one, at least (the header); 0 if unknown            */
    unsigned flags;        /* enum rig_flags */
    size_t region_count;   /* 0: bounds unknown, not checked */
    rig_region regions[RIG_MAX_REGIONS];
} rig_ops;

typedef struct rig_config {
    uint64_t seed;
    size_t steps;
    size_t max_live;      /* live blocks at most (shadow capacity); 0: 4096         */
    size_t max_request;   /* top of the "large" size band; 0: the largest region   */
    size_t max_alignment; /* largest alignment drawn for aligned_alloc; 0: 4096    */
    size_t check_every;   /* ops->check period; 1 = checked run; 0 = at the end only */
    size_t sweep_every;   /* period of the full sweep (every block's contents, the
                             walk); 0: 1000                                          */
    size_t stats_every;   /* read the stats after every k-th step; 0 or 1: after
                             every step. Above 1, state a heap keeps until its stats
                             are read (a cache of freed blocks) lives on between
                             reads, and the honesty checks that need the stats from
                             just before an operation run on the step after a read */
    const char *replay;   /* command line rerunning this case, minus --seed/--steps */
} rig_config;

/* What a run did, so a test can show that it reached the states it meant to
 * (full heap, empty heap, moved reallocs...). */
typedef struct rig_result {
    size_t steps;
    size_t allocs, aligned_allocs, reallocs, frees;
    size_t enomem;          /* refusals seen (all kinds)              */
    size_t unsupported;     /* aligned_allocs refused with ENOTSUP    */
    size_t realloc_moved;   /* reallocs that returned a new address    */
    size_t realloc_inplace; /* reallocs that kept the address          */
    size_t probes;          /* largest_free probes                     */
    size_t probe_grew;      /* probes after which largest_free grew    */
    size_t stale_largest;   /* walks where largest_free < biggest free */
    size_t free_alls;       /* times everything was freed and verified */
    size_t max_live;        /* most blocks alive at once               */
    size_t peak_used;       /* most bytes alive at once (shadow)       */
    size_t checks;          /* ops->check calls                        */
} rig_result;

/* Runs cfg->steps random steps on an allocator that has no live block, then
 * frees everything. Returns 0 when every verification held; otherwise prints
 * the first failure (with seed and replay line) and returns 1. The
 * allocator is left in an unspecified state after a failure. */
int rig_run(const rig_ops *ops, const rig_config *cfg, rig_result *out);

/* Command line shared by rig-driven programs. The environment gives
 * defaults (RTMEM_SEED, RTMEM_STEPS); the command line overrides them. */
typedef struct rig_args {
    int has_seed;
    uint64_t seed; /* --seed N (decimal or 0x...)                  */
    int has_steps;
    size_t steps;     /* --steps N                                    */
    long case_index;  /* --case K: run only case K; -1 = every case   */
    const char *band; /* --band NAME: which group of cases; NULL = all */
    int verbose;      /* -v: print every case's result line           */
} rig_args;

/* Returns 0, or -1 after printing the usage for a bad command line. */
int rig_parse_args(int argc, char **argv, rig_args *out);

/* A model test program: a table of cases, each run with a few seeds. */
typedef struct rig_case_info {
    const char *band; /* ctest runs one band per entry (--band NAME) */
    size_t steps;     /* default steps (--steps overrides)           */
    unsigned seeds;   /* seeds per case (--seed runs just that one)  */
} rig_case_info;

typedef struct rig_suite {
    size_t count;                        /* cases                            */
    rig_case_info (*info)(size_t index); /* the case's band, steps, seeds    */
    uint64_t seed_base;                  /* run k of case i: base+1000i+k+1  */
    /* Runs one case with one seed; returns 0 when it passed. */
    int (*run)(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose);
} rig_suite;

/* main() of a model test: parses the rig's arguments, runs the selected
 * cases and seeds, prints "N run(s), F failed". Returns the exit status:
 * 0 all passed, 1 a failure, 2 a usage error or an empty selection. */
int rig_main(int argc, char **argv, const rig_suite *suite);

/* One line summarising a result, for logs. */
void rig_print_result(const char *label, const rig_result *res);

#endif /* RTM_TESTS_RIG_H */
