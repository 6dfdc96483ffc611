// SPDX-License-Identifier: MIT
/*
 * trace_testgen.c -- writes the hand-made traces of the trace tests
 * (tests_trace.cmake) into a folder: small traces whose statistics, replay
 * and fit answers are known in advance, and one file for each kind of bad
 * input the reader must refuse with the byte offset. Generated at test
 * time rather than committed, so the files always match the format header.
 * Built by tests_trace.cmake only (this folder is not part of rtmem).
 *
 *   pool.trace      3 rounds of: 10 x malloc(1000), then the 10 frees.
 *                   Peak live 10000 bytes in 10 blocks; 60 calls.
 *   stats.trace     every operation once or more on two threads, written
 *                   out of call order (the reader sorts by sequence number);
 *                   the expected figures are in tests_trace.cmake.
 *   truncated.trace pool.trace cut 12 bytes into record 5 (offset 264)
 *   corrupt.trace   pool.trace with operation code 99 in record 3 (offset 184)
 *   newer.trace     pool.trace claiming format version 2 (offset 8)
 *   badfree.trace   a free of id 7, never allocated, as record 2 (offset 144)
 *   empty.trace     0 bytes
 *   nocalls.trace   a valid header and no record (a process that made no
 *                   call): fit, replay and trace stats must say so, exit 1
 *   notrace.trace   text, no magic
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_format.h"

static trace_record recs[128];
static size_t nrec;

static void add(uint8_t op, uint16_t thread, uint32_t id, uint32_t old, uint64_t size,
                uint8_t align_log2)
{
    trace_record *r = &recs[nrec];
    memset(r, 0, sizeof *r);
    r->op = op;
    r->thread = thread;
    r->id = id;
    r->old_id = old;
    r->size = size;
    r->align_log2 = align_log2;
    r->seq = nrec;
    r->t_ns = 1000u * nrec;
    nrec++;
}

static trace_header header(uint32_t version)
{
    trace_header h = trace_header_make(4242, 0, "testgen");
    h.version = version;
    return h;
}

/* Writes the header and records [0, nrec) in the order given by order
 * (NULL: as they are), then cuts the file at cut bytes (0: no cut). */
static int write_trace(const char *dir, const char *name, uint32_t version, const size_t *order,
                       size_t cut)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    static unsigned char buf[TRACE_HEADER_BYTES + sizeof recs];
    trace_header h = header(version);
    memcpy(buf, &h, sizeof h);
    size_t len = sizeof h;
    for (size_t i = 0; i < nrec; i++, len += sizeof recs[0])
        memcpy(buf + len, &recs[order != NULL ? order[i] : i], sizeof recs[0]);
    if (cut != 0 && cut < len)
        len = cut;
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

static void pool_pattern(void)
{
    nrec = 0;
    uint32_t id = 1;
    for (int round = 0; round < 3; round++) {
        for (uint32_t i = 0; i < 10; i++)
            add(TOP_MALLOC, 0, id + i, 0, 1000, 0);
        for (uint32_t i = 0; i < 10; i++)
            add(TOP_FREE, 0, 0, id + i, 0, 0);
        id += 10;
    }
}

/* Live bytes after each call in the comment: the peak is 2468 bytes in 4
 * blocks after call 6; 3744 bytes handed out; 64 bytes (1 block) live at the
 * end; thread 0 makes 8 calls, thread 1 makes 7. */
static void stats_pattern(void)
{
    nrec = 0;
    add(TOP_MALLOC, 0, 1, 0, 100, 0);          /* 100                      */
    add(TOP_CALLOC, 0, 2, 0, 150, 0);          /* 250                      */
    add(TOP_REALLOC, 0, 3, 1, 300, 0);         /* 450: 1 -> 3              */
    add(TOP_ALIGNED_ALLOC, 1, 4, 0, 128, 6);   /* 578                      */
    add(TOP_FREE, 1, 0, 2, 0, 0);              /* 428                      */
    add(TOP_NEW, 1, 5, 0, 40, 0);              /* 468                      */
    add(TOP_POSIX_MEMALIGN, 0, 6, 0, 2000, 7); /* 2468: the peak, 4 blocks */
    add(TOP_DELETE, 1, 0, 5, 40, 0);           /* 2428                     */
    add(TOP_FREE, 0, 0, 6, 0, 0);              /* 428                      */
    add(TOP_NEW_ARRAY, 1, 7, 0, 962, 0);       /* 1390                     */
    add(TOP_MALLOC, 0, 0, 0, 5000, 0);         /* refused to the program   */
    add(TOP_DELETE_ARRAY, 1, 0, 7, 0, 0);      /* 428                      */
    add(TOP_REALLOC, 0, 0, 3, 0, 0);           /* 128: realloc(p, 0) frees */
    add(TOP_MEMALIGN, 0, 8, 0, 64, 4);         /* 192                      */
    add(TOP_FREE, 1, 0, 4, 0, 0);              /* 64: 1 block live at end  */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: trace_testgen DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    int bad = 0;
    pool_pattern();
    bad |= write_trace(dir, "pool.trace", TRACE_VERSION, NULL, 0);
    bad |= write_trace(dir, "truncated.trace", TRACE_VERSION, NULL,
                       TRACE_HEADER_BYTES + 5 * TRACE_RECORD_BYTES + 12);
    bad |= write_trace(dir, "newer.trace", TRACE_VERSION + 1, NULL, 0);
    recs[3].op = 99;
    bad |= write_trace(dir, "corrupt.trace", TRACE_VERSION, NULL, 0);
    pool_pattern();
    recs[2].op = TOP_FREE;
    recs[2].id = 0;
    recs[2].old_id = 7;
    recs[2].size = 0;
    bad |= write_trace(dir, "badfree.trace", TRACE_VERSION, NULL, 0);
    /* stats: thread 1's records first, then thread 0's, as two flushed
     * per-thread buffers would leave them. */
    stats_pattern();
    size_t order[128], k = 0;
    for (int th = 1; th >= 0; th--)
        for (size_t i = 0; i < nrec; i++)
            if (recs[i].thread == th)
                order[k++] = i;
    bad |= write_trace(dir, "stats.trace", TRACE_VERSION, order, 0);
    nrec = 0;
    bad |= write_trace(dir, "nocalls.trace", TRACE_VERSION, NULL, 0);
    char path[1024];
    snprintf(path, sizeof path, "%s/empty.trace", dir);
    FILE *f = fopen(path, "wb");
    bad |= f == NULL || fclose(f) != 0;
    snprintf(path, sizeof path, "%s/notrace.trace", dir);
    f = fopen(path, "wb");
    bad |= f == NULL || fputs("hello, not a trace\n", f) < 0 || fclose(f) != 0;
    return bad ? 1 : 0;
}
