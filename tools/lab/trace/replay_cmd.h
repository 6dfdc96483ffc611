// SPDX-License-Identifier: MIT
/*
 * replay_cmd.h -- `rtmem replay`'s pieces: options and rows (replay.c), the
 * measuring child of a malloc row (replay_child.c), and the report
 * (replay_report.c). The engine itself is replay.h.
 */
#ifndef RTM_LAB_REPLAY_CMD_H
#define RTM_LAB_REPLAY_CMD_H

#include <stdint.h>

#include "common/clock.h"
#include "common/machine.h"
#include "common/aut.h"
#include "common/peers.h"
#include "trace/replay.h"
#include "trace/trace_read.h"

#define RP_MAX_ROWS 32
#define RP_NQ       6 /* p50 p90 p99 p99.9 p99.99 max */

extern const double rp_quantiles[RP_NQ];
extern const char *const rp_quantile_names[RP_NQ];

typedef struct replay_opts {
    const char *file;
    const char *allocators;
    const char *json;
    uint64_t region; /* 0: from the trace's peak */
    int quick;
    uint64_t limit;    /* calls replayed (--limit, --quick) */
    int wcet;          /* --wcet: count instructions (wcet_bridge.c)  */
    uint64_t wcet_ops; /* --wcet-ops: calls counted (UINT64_MAX: all) */
    /* child side */
    const char *child, *child_lib;
    double child_tick_ns;
    uint64_t child_cost, child_tsc;
} replay_opts;

/* What one allocator did: from the engine (rtm rows) or a child's line. */
typedef struct rp_row {
    char name[64];
    int is_rtm;
    const peer *peer;
    aut aut; /* what the name is (common/aut.h) */
    char lib[512];
    const char *status; /* "ok", "not installed", "invalid", "error" */
    char why[512];
    char from[256];
    uint64_t ops, refused, skipped, timed;
    double q_ns[RP_NQ]; /* over every timed call */
    double alloc_max_ns, free_max_ns, alloc_p99_ns, free_p99_ns;
    uint64_t footprint; /* high-water mark (rtm) or peak RSS growth */
    uint64_t region;    /* rtm rows */
    replay_sample sample[REPLAY_SAMPLES + 1];
    size_t nsamples;
    rw_counts wcet; /* --wcet: exact instruction counts, or why not */
} rp_row;

typedef struct replay_bench {
    const replay_opts *o;
    trace t;
    trace_stats st;
    bench_clock clk;
    char clock_text[256];
    machine m;
    rp_row rows[RP_MAX_ROWS];
    size_t nrows;
    uint64_t wcet_calls; /* --wcet: calls the counter replayed (0: no --wcet) */
} replay_bench;

/* Fills the numbers of row from an engine result. */
void replay_fill_row(rp_row *row, const replay_result *r, const bench_clock *clk);

/* replay_child.c: runs the replay in this (child) process on its malloc and
 * prints one RESULT line. Returns the exit status. */
int replay_child(const replay_opts *o);
/* Reads a child's RESULT line into row. Returns 0 or -1. */
int replay_parse_child(const char *out, rp_row *row);

/* replay_report.c */
void replay_print(const replay_bench *b);
int replay_write_json(const replay_bench *b, const char *path);

#endif /* RTM_LAB_REPLAY_CMD_H */
