// SPDX-License-Identifier: MIT
/*
 * trace_format.h -- the on-disk layout of an rtmem allocation trace
 * (docs/TRACE.md), shared by the recorder (tools/record/record.c, which
 * writes it from inside a traced program and so may use nothing but this
 * header) and the lab's reader (trace_read.c).
 *
 * Why fixed-size records: the recorder appends them to a per-thread buffer
 * with one store each and never needs to encode anything, and the reader can
 * name the byte offset of any bad record as header + index * record size.
 * Every field is little-endian (the byte order of every host the recorder
 * builds for; the header carries a marker so a foreign file is refused,
 * never misread).
 */
#ifndef RTM_LAB_TRACE_FORMAT_H
#define RTM_LAB_TRACE_FORMAT_H

#include <stdint.h>
#include <string.h>

#define TRACE_MAGIC        "RTMTRACE" /* 8 bytes, no NUL in the file      */
#define TRACE_VERSION      1u
#define TRACE_HEADER_BYTES 64u
#define TRACE_RECORD_BYTES 40u
#define TRACE_ENDIAN       0x01020304u

/* The header, at byte 0. */
typedef struct trace_header {
    char magic[8];         /* TRACE_MAGIC                                      */
    uint32_t version;      /* TRACE_VERSION of the writer                      */
    uint32_t header_bytes; /* TRACE_HEADER_BYTES                               */
    uint32_t record_bytes; /* TRACE_RECORD_BYTES                               */
    uint32_t pid;          /* the traced process                               */
    uint64_t start_ns;     /* CLOCK_MONOTONIC when recording started           */
    uint32_t endian;       /* TRACE_ENDIAN as written by the host              */
    uint32_t reserved;     /* 0                                                */
    char program[24];      /* basename of the traced executable, NUL-padded    */
} trace_header;

/* One call, after the header; records follow each other without padding. */
typedef struct trace_record {
    uint8_t op;         /* trace_op                                            */
    uint8_t align_log2; /* requested alignment = 1 << align_log2; 0: none      */
    uint16_t thread;    /* 0 for the first thread that allocated, then 1, ...  */
    uint32_t id;        /* block the call returned; 0: none (NULL, or a free)  */
    uint32_t old_id;    /* block the call freed or resized; 0: none            */
    uint32_t reserved;  /* 0                                                   */
    uint64_t size;      /* bytes requested (calloc: n * m; sized delete: m)    */
    uint64_t seq;       /* global order of the calls, from 0, no gaps          */
    uint64_t t_ns;      /* CLOCK_MONOTONIC ns since header.start_ns            */
} trace_record;

/* A header of this format for pid, with program cut to 23 bytes. */
static inline trace_header trace_header_make(uint32_t pid, uint64_t start_ns, const char *program)
{
    trace_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, TRACE_MAGIC, 8);
    h.version = TRACE_VERSION;
    h.header_bytes = TRACE_HEADER_BYTES;
    h.record_bytes = TRACE_RECORD_BYTES;
    h.pid = pid;
    h.start_ns = start_ns;
    h.endian = TRACE_ENDIAN;
    size_t n = strlen(program);
    memcpy(h.program, program, n < sizeof h.program - 1 ? n : sizeof h.program - 1);
    return h;
}

_Static_assert(sizeof(trace_header) == TRACE_HEADER_BYTES, "trace header layout");
_Static_assert(sizeof(trace_record) == TRACE_RECORD_BYTES, "trace record layout");

/* Operations. The numbers are part of the format: never renumber. */
typedef enum trace_op {
    TOP_MALLOC = 1,
    TOP_CALLOC = 2,
    TOP_REALLOC = 3,
    TOP_FREE = 4,
    TOP_ALIGNED_ALLOC = 5,
    TOP_POSIX_MEMALIGN = 6,
    TOP_MEMALIGN = 7,
    TOP_VALLOC = 8,
    TOP_PVALLOC = 9,
    TOP_NEW = 10,
    TOP_NEW_ARRAY = 11,
    TOP_DELETE = 12,
    TOP_DELETE_ARRAY = 13,
    TOP_COUNT = 14 /* one past the last */
} trace_op;

/* What an operation does to the heap, for replay and statistics. */
typedef enum trace_class { TC_ALLOC, TC_REALLOC, TC_FREE } trace_class;

static inline trace_class trace_op_class(unsigned op)
{
    if (op == TOP_REALLOC)
        return TC_REALLOC;
    if (op == TOP_FREE || op == TOP_DELETE || op == TOP_DELETE_ARRAY)
        return TC_FREE;
    return TC_ALLOC;
}

#endif /* RTM_LAB_TRACE_FORMAT_H */
