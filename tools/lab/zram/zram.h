// SPDX-License-Identifier: MIT
/*
 * zram.h -- `rtmem bench zram`: the comparison of the TLSF/xvmalloc/zsmalloc
 * study (docs/METHODS.md, "The zram comparison"), time AND memory, for the
 * two allocators zram has used (xvmalloc, zsmalloc), TLSF, the slab heap,
 * glibc and the malloc peers.
 *
 * Points measured, each with the random-replace loop (SLOTS live objects;
 * each timed iteration frees a random slot's object and stores a new one):
 *   - the study's window sweep: requests in [x, x+64) for x = 0, step, ...
 *     (random_sweep.h's windows, seeds and option rules, reused);
 *   - "the zram case": request sizes of compressed 4 KiB pages, from the
 *     synthetic distribution below (ZRAM_DIST), the load zram puts on them.
 *
 * Per point and allocator: ns per free+alloc pair (min and median over
 * interleaved rounds; a point with a refusal is marked and gets no time), and
 * memory efficiency = bytes stored / bytes held with the slots full:
 *   stored  the sum of the live requests' sizes;
 *   held    rtm heaps (tlsf, slab, xvmalloc): 4 KiB pages holding at least one
 *           byte of a live block (an rtm_heap_walk() after the timed loop):
 *           exactly xvmalloc's pages in use, and for tlsf and slab, which keep
 *           their whole region, what they would hold if every page without
 *           a live block were given back (a lower bound of their need);
 *           zsmalloc: rtm_zs_stats_get().pages_used x 4096;
 *           malloc peers: the child's VmRSS growth over its baseline (taken
 *           before the fill, in a process of its own per point):
 *           page-granular, includes the allocator's metadata and free
 *           memory it keeps.
 *
 * Process model (as random.h): one child per rtm heap or pool and round runs
 * every point; a malloc peer gets one child per point and round, so that its
 * RSS growth is that point's alone (a malloc keeps freed memory: a process
 * running every point would charge one point with another's). Lines on
 * stdout:
 *     ZRAM   alloc= valid= from= version= why= rt= region= baseline_kb=
 *     POINT  i= ns_per_pair= refused= ok= stored= held= why=
 *     END    points=
 * Point i < nwin is window i, i == nwin the zram case.
 */
#ifndef RTM_LAB_ZRAM_H
#define RTM_LAB_ZRAM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/machine.h"
#include "common/aut.h"
#include "common/peers.h"
#include "random/random.h"
#include "random/random_sweep.h"

#define ZRAM_PAGE 4096u /* the page of efficiency, and of the zram case */

/* Defaults: the study's sweep (step 64, 256 windows). Every malloc peer
 * runs a process per point, so the full default with 8 allocators and 2
 * rounds takes several minutes on 2 cores (every 256 bytes: about 4.5 min
 * at load average 20); `make bench` passes --sweep-step 256 --sweep-max
 * 8192 (tools/lab/README.md: the measured times). */
#define ZRAM_DEFAULT_STEP       64u
#define ZRAM_DEFAULT_MAX        16320u
#define ZRAM_DEFAULT_ITERATIONS 20000u
#define ZRAM_QUICK_STEP         1024u
#define ZRAM_QUICK_ITERATIONS   2000u
#define ZRAM_QUICK_SLOTS        2000u
#define ZRAM_DEFAULT_ALLOCATORS "tlsf,xvmalloc,zsmalloc,slab,glibc,mimalloc,jemalloc,tcmalloc"
#define ZRAM_QUICK_ALLOCATORS   "tlsf,xvmalloc,zsmalloc,glibc"
#define ZRAM_MAX_ALLOCATORS     16
#define ZRAM_ALL_POINTS         UINT64_MAX
#define ZRAM_MAX_RUNS           64u /* rounds a point is summarised over */

/* --- the zram case's size distribution (synthetic) ----------------------- */

/* Compressed sizes of 4 KiB pages, as bands drawn uniformly within: a
 * SYNTHETIC distribution, shaped after what zram reports on desktop and
 * Android swap (most pages compress to 1-3 KiB, a few to almost nothing, a
 * few not at all and are stored whole at 4096), not a measured trace.
 * Weights are per mille; their mean is ZRAM_DIST_MEAN. */
typedef struct zram_band {
    uint32_t lo, hi; /* sizes in [lo, hi) */
    uint32_t weight; /* per mille          */
} zram_band;

#define ZRAM_DIST_BANDS 7
static const zram_band zram_dist[ZRAM_DIST_BANDS] = {
    {1, 64, 20},       /* nearly empty pages (all-zero ones zram keeps apart) */
    {64, 512, 110},    /* very compressible                                   */
    {512, 1024, 170},  /*                                                      */
    {1024, 2048, 330}, /* the bulk: ratio 2-4                                  */
    {2048, 3072, 190}, /*                                                      */
    {3072, 4096, 120}, /* barely compressible                                  */
    {4096, 4097, 60},  /* incompressible: stored as the whole page             */
};

/* One size from 32 random bits: the low 16 pick the band by weight, the
 * high 16 the size inside it. Always in [1, 4096]. Inline: it runs inside
 * the timed loop, the same for every allocator. */
static inline uint32_t zram_dist_size(uint32_t bits)
{
    uint32_t w = (uint32_t)(((bits & 0xffffu) * 1000u) >> 16); /* [0, 1000) */
    uint32_t b = 0;
    while (b + 1u < ZRAM_DIST_BANDS && w >= zram_dist[b].weight) {
        w -= zram_dist[b].weight;
        b++;
    }
    uint32_t span = zram_dist[b].hi - zram_dist[b].lo;
    return zram_dist[b].lo + (uint32_t)(((bits >> 16) * span) >> 16);
}

/* --- zram_plan.c: pure functions (unit-tested) --------------------------- */

/* The distribution's exact mean (what zram_dist_size gives on average,
 * up to its 16-bit rounding). */
double zram_dist_mean(void);
/* stored / held; NAN when held is 0 (nothing to divide by). */
double zram_efficiency(uint64_t stored, uint64_t held);

/* A set of pages of a region, to count those holding live bytes. */
typedef struct zram_pageset {
    uint64_t *bits;
    size_t npages;
    size_t count; /* pages marked */
} zram_pageset;
/* Marks the pages of [off, off + len) (offsets from the region's start,
 * pages of ZRAM_PAGE); parts beyond npages are ignored; len 0 marks none. */
void zram_pageset_mark(zram_pageset *s, uint64_t off, uint64_t len);

/* VmRSS in kB from the text of /proc/self/status. 0, or -1 when absent. */
int zram_parse_vmrss(const char *status, uint64_t *kb);
/* Bytes of RSS growth from base_kb to now_kb; 0 when it did not grow. */
uint64_t zram_rss_growth(uint64_t base_kb, uint64_t now_kb);

/* The text summary's size bands (by window start x). */
#define ZRAM_XBANDS 7
extern const uint32_t zram_xband_lo[ZRAM_XBANDS + 1]; /* last: UINT32_MAX */
/* The band of window start x. */
size_t zram_xband_of(uint64_t x);

/* The mean of the finite values among v[0..n) whose index passes keep[]
 * (NULL: all); NAN when none. count: how many were used. */
double zram_mean_finite(const double *v, const unsigned char *keep, size_t n, size_t *count);

/* --- the measurement ------------------------------------------------------ */

enum zram_kind { ZK_HEAP, ZK_ZSMALLOC, ZK_MALLOC };

typedef struct zram_opts {
    uint64_t slots, runs, seed, iterations, region;
    uint64_t sweep_step, sweep_max;
    const char *json, *allocators, *clock;
    int quick, no_rt;
    int64_t cpu;
    /* Hidden, set by the parent for a child. */
    const char *child, *child_lib;
    uint64_t child_point; /* ZRAM_ALL_POINTS, or the one point to run */
    double child_tick_ns;
    uint64_t child_cost, child_tsc;
} zram_opts;

/* What a child reported for one point in one round. */
typedef struct zram_point {
    int done, ok; /* reported; heap checks held and stored matched      */
    double ns_per_pair;
    uint64_t refused;
    uint64_t stored, held; /* bytes, with the slots full */
    char why[160];
} zram_point;

typedef struct zram_run {
    int ran, ended, valid;
    char why[512], from[256], version[96], rt[256];
    double seconds;
    zram_point *pts;
} zram_run;

/* One point of one allocator over the rounds. */
typedef struct zram_cell {
    sweep_cell t;          /* time: min, median, clean and refused rounds */
    double efficiency;     /* median over rounds that reported it; NAN: none */
    uint64_t stored, held; /* of the first round that reported it       */
} zram_cell;

typedef struct zram_row {
    const char *name;
    enum zram_kind kind;
    const peer *peer;
    const aut *aut; /* what the name is (common/aut.h) */
    char lib[PATH_MAX];
    int missing;
    zram_run *runs;
    zram_cell *cells;
    /* zram_summarise() */
    lab_status status;
    size_t marked, bad; /* points with a refusal; points whose checks failed */
} zram_row;

typedef struct zram_bench {
    zram_opts *o;
    machine m;
    double tick_ns, cost_ns;
    char clock_text[512], rt_note[512], env_note[256];
    size_t nwin, npts; /* npts = nwin + 1 (the zram case) */
    zram_row rows[ZRAM_MAX_ALLOCATORS];
    size_t nrows;
    double seconds;
} zram_bench;

/* zram.c */
const char *zram_kind_name(enum zram_kind k);
/* What --allocators and --child accept: rtm heaps, mallocs, zsmalloc. */
extern const aut_rules zram_aut_rules;
/* The row kind of an allocator under test. */
enum zram_kind zram_kind_of(const aut *a);
/* zram_child.c */
int zram_child(const zram_opts *o);
/* zram_report.c */
void zram_summarise(zram_bench *s);
void zram_print(const zram_bench *s);
int zram_write_json(const zram_bench *s, const char *path);

#endif /* RTM_LAB_ZRAM_H */
