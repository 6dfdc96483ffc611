// SPDX-License-Identifier: MIT
/*
 * record_internal.h -- what the two halves of librtmem-record.so tell each
 * other (nothing here is exported: the library is built with hidden
 * visibility, so only the EXPORT-ed wrappers reach the program).
 *
 *   record.c          the calls: the wrapped allocation functions, the
 *                     address -> id table, the per-thread buffers
 *   record_process.c  the process: which file it writes (the launched
 *                     program's FILE, its continuation after an exec, or a
 *                     child's FILE.<pid>.<program>), the index FILE.index,
 *                     and the exec wrappers that hand a trace to the next
 *                     image of the same process
 *
 * record.c calls rec_open_output() once, when recording starts; the exec
 * wrappers in record_process.c call rec_exec_begin() / rec_exec_end()
 * around the real exec. Neither file ever calls malloc (record.c says why).
 */
#ifndef RTM_RECORD_INTERNAL_H
#define RTM_RECORD_INTERNAL_H

#include <stdint.h>
#include <string.h>

/* POSIX's way to turn dlsym's object pointer into a function pointer (ISO C
 * has no conversion between them): copy the bytes. */
#define LOAD(dst, name)                                                                            \
    do {                                                                                           \
        void *found_ = dlsym(RTLD_NEXT, name);                                                     \
        memcpy(&(dst), &found_, sizeof found_);                                                    \
    } while (0)

/* Where a trace's counters stand: a fresh trace starts at seq 0, id 1,
 * thread 0; the next image of a process after exec goes on from where the
 * replaced image stopped, so that no sequence number or block id repeats in
 * the file (the reader refuses both). */
typedef struct rec_counters {
    uint64_t seq;      /* next sequence number                   */
    uint32_t id;       /* next block id                          */
    uint32_t thread;   /* next thread index                      */
    uint64_t start_ns; /* CLOCK_MONOTONIC of the trace's header */
} rec_counters;

/* --- record.c ----------------------------------------------------------- */

uint64_t rec_now_ns(void);

/* Called by an exec wrapper before the real exec. When this process is
 * recording (not a forked or vforked child of the one that is): takes the
 * table lock (no call gets a sequence number or id from now on), writes
 * every thread's buffer, fills c and returns 1; the caller must then call
 * rec_exec_end() if the exec returns. Otherwise returns 0. */
int rec_exec_begin(rec_counters *c);
void rec_exec_end(void);

/* --- record_process.c ----------------------------------------------------- */

/* Looks up the real exec functions (from record.c's resolve()). */
void rec_resolve_exec(void);

/* Opens the file this process records into and writes (or, continuing
 * after an exec, updates) its header; c holds the counters to go on from.
 * Returns the descriptor, or -1 when this process is not to be recorded
 * (no RTMEM_RECORD_FILE, a child with children not followed, an error). */
int rec_open_output(rec_counters *c);

#endif /* RTM_RECORD_INTERNAL_H */
