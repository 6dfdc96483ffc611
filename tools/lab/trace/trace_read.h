// SPDX-License-Identifier: MIT
/*
 * trace_read.h -- loading and checking an allocation trace (trace_format.h,
 * docs/TRACE.md) for `rtmem trace`, `rtmem replay` and `rtmem fit`.
 *
 * The whole file is read into memory, put in call order (by sequence
 * number: the recorder writes per-thread buffers, so the file interleaves
 * threads in chunks) and checked once, here, so that the replays can trust
 * it: every freed or resized id was allocated and is still live, every id
 * is allocated once, no field holds a value the format does not define.
 * Each problem is reported with the byte offset of the record (or header
 * field) that shows it.
 */
#ifndef RTM_LAB_TRACE_READ_H
#define RTM_LAB_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace_format.h"

/* One call in memory: the record plus where it was in the file. */
typedef struct trace_op_rec {
    uint8_t op, align_log2;
    uint16_t thread;
    uint32_t id, old_id;
    uint64_t size, t_ns;
    uint64_t offset; /* byte offset of the record in the file */
} trace_op_rec;

typedef struct trace {
    trace_header hdr;
    trace_op_rec *ops; /* in call order */
    size_t n;
    uint32_t max_id;   /* ids are in [1, max_id]            */
    unsigned nthreads; /* highest thread index + 1          */
} trace;

/* Reads path into t. Returns 0, or -1 with a message in err ("offset N:
 * ..." for a bad file, the system's reason for an unreadable one). */
int trace_load(const char *path, trace *t, char *err, size_t err_n);
void trace_free(trace *t);

/* Name of an operation ("malloc", "new[]", ...), "?" when unknown. */
const char *trace_op_name(unsigned op);

/* Keeps only the first n calls (n < t->n); blocks they leave live stay live. */
void trace_truncate(trace *t, size_t n);

/* --- trace_stats.c: what a trace holds ------------------------------------ */

#define TRACE_SIZE_BUCKETS 65 /* [0], [1], [2,4), ..., [2^63, 2^64) */

typedef struct trace_stats {
    uint64_t calls[TOP_COUNT];              /* per operation                              */
    uint64_t failed;                        /* allocations the program saw refused (id 0) */
    uint64_t *thread_calls;                 /* [nthreads]                                 */
    uint64_t size_hist[TRACE_SIZE_BUCKETS]; /* requests by size (allocations, resizes) */
    uint64_t allocated_bytes;               /* sum of the sizes handed out                */
    uint64_t peak_live_bytes;               /* highest sum of requested sizes live        */
    uint64_t peak_live_blocks;              /* highest number of blocks live              */
    uint64_t peak_at;                       /* call index where the peak bytes were reached */
    uint64_t end_live_bytes, end_live_blocks;
    uint64_t largest_request;
    uint64_t duration_ns; /* last timestamp - first                     */
} trace_stats;

/* Computes s over the (checked) trace. Returns 0, or -1 when out of memory. */
int trace_stats_compute(const trace *t, trace_stats *s);
void trace_stats_free(trace_stats *s);
/* The size-histogram bucket of a request: 0 for 0, else 1 + floor(log2 n). */
unsigned trace_size_bucket(uint64_t n);

#endif /* RTM_LAB_TRACE_READ_H */
