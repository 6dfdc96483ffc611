// SPDX-License-Identifier: MIT
/*
 * replay.h -- replaying a checked trace (trace_read.h) on one allocator:
 * the engine shared by `rtmem replay` (timed, every allocator) and `rtmem
 * fit` (untimed bisection, then one timed run), and the two kinds of target
 * it drives: an rtm heap on a region of this process, and the process's own
 * malloc (glibc, or a peer under LD_PRELOAD in a child: replay_child.c).
 *
 * Order: one thread of calls, in the trace's call order (sequence numbers).
 * A multi-threaded trace is serialised that way, which keeps every block's
 * life as the program saw it (a block freed by another thread is freed after
 * it was allocated) and makes the replay deterministic: the same trace gives
 * the same refusals and footprint on every run. It does not reproduce lock
 * contention; `rtmem bench threads` measures that. docs/TRACE.md says so.
 *
 * What is timed: each call the replay makes, one clock read before and after
 * (clock.h), the clock's cost subtracted. A refused allocation is counted and
 * never timed (a fast NULL is not a fast allocation), and the replay goes on
 * without that block: its later free is skipped, a later resize allocates.
 */
#ifndef RTM_LAB_REPLAY_H
#define RTM_LAB_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/clock.h"
#include "common/hist.h"
#include "trace/trace_read.h"

#define REPLAY_SAMPLES 200 /* points of the live/held chart */

/* One allocator as the engine sees it. held() and note() may be NULL. */
typedef struct replay_target {
    void *ctx;
    void *(*alloc)(void *ctx, size_t size, size_t align); /* align 0: default */
    void *(*resize)(void *ctx, void *p, size_t size);     /* p may be NULL    */
    void (*release)(void *ctx, void *p);
    uint64_t (*held)(void *ctx);            /* bytes the allocator holds now */
    void (*note)(void *ctx, const void *p); /* after each block handed out   */
    /* NULL, or where the engine stores the index of the call it is about to
     * make (rtmem-wcet replay names each counted call by it); t->n while it
     * releases what is left live at the end. */
    uint64_t *cursor;
} replay_target;

typedef struct replay_sample {
    uint64_t call, live, held;
} replay_sample;

typedef struct replay_result {
    uint64_t ops;     /* calls made                                           */
    uint64_t refused; /* allocations and resizes that returned NULL           */
    uint64_t skipped; /* calls not made: refused to the program, or on a block
                         this replay was refused                              */
    hist alloc;       /* ticks of allocations and resizes that succeeded      */
    hist release;     /* ticks of frees                                       */
    hist all;         /* both                                                 */
    replay_sample sample[REPLAY_SAMPLES + 1];
    size_t nsamples;
    uint64_t first_refusal; /* call index of the first refusal (when refused) */
} replay_result;

/* Replays t on tg. clk == NULL: untimed (no histograms). stop_at_refusal:
 * return at the first refusal (fit's question is only "does it fit").
 * Returns 0, or -1 when out of memory. */
int replay_run(const trace *t, const replay_target *tg, const bench_clock *clk, int stop_at_refusal,
               replay_result *r);

/* --- replay_rtm.c: an rtm heap on a private region --------------------------- */

typedef struct replay_rtm {
    void *mem;
    size_t bytes;
    void *heap;   /* rtm_heap *                                       */
    uint64_t hwm; /* highest block end, bytes from the region's start */
} replay_rtm;

/* Maps bytes (pre-faulted when prefault) and creates the named heap on it.
 * Returns 0, or -1 with a reason in why. */
int replay_rtm_open(replay_rtm *h, const char *algorithm, uint64_t bytes, int prefault, char *why,
                    size_t why_n);
void replay_rtm_close(replay_rtm *h);
/* The engine's view of h (track: keep the high-water mark). */
replay_target replay_rtm_target(replay_rtm *h, int track);

/* --- the process's malloc ---------------------------------------------------- */

/* malloc, aligned_alloc, realloc, free; held = resident bytes above base. */
replay_target replay_malloc_target(uint64_t *base_rss);
/* Resident bytes now (/proc/self/statm) and the high-water mark (VmHWM). */
uint64_t replay_rss_now(void);
uint64_t replay_rss_peak(void);

/* --- wcet_bridge.c: exact instruction counts of a replay ---------------------
 * `rtmem replay --wcet` and `rtmem fit --wcet` run `rtmem wcet replay`
 * (tools/wcet/replay_trace.c: the same engine, in a child single-stepped by
 * rtmem-wcet's tracer) and read its lines into these. */

enum { RW_ALLOC, RW_ALIGNED, RW_REALLOC, RW_FREE, RW_KINDS };
extern const char *const rw_kind_names[RW_KINDS]; /* "alloc", "aligned", ... */

typedef struct rw_kind {
    uint64_t calls; /* 0: no call of this kind was counted */
    uint64_t max, p99, worst_call, worst_size, syscalls;
    double mean;
} rw_kind;

typedef struct rw_counts {
    int measured;  /* 1: the lines below came from the counter    */
    char why[256]; /* when not measured: the reason               */
    rw_kind k[RW_KINDS];
    uint64_t calls, refused; /* calls counted; of them refused   */
    uint64_t instructions;   /* all counted calls together      */
    double seconds;          /* wall time of the traced replay  */
} rw_counts;

/* 1 when the counter (rtmem-wcet, beside this executable) is there; else 0
 * with the reason in why. */
int rw_available(char *why, size_t why_n);

/* Counts the first `limit` calls of the trace in file on each of names[0..n)
 * (rtm heap names, or "glibc") on regions of `region` bytes; fills out[i].
 * An allocator the counter could not measure gets measured = 0 and why
 * (ptrace not permitted, for instance). Returns 0 when every one was
 * measured, else -1. */
int rw_count(const char *file, const char *const *names, rw_counts *out, size_t n, uint64_t region,
             uint64_t limit);

#endif /* RTM_LAB_REPLAY_H */
