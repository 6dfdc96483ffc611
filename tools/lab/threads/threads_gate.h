// SPDX-License-Identifier: MIT
/*
 * threads_gate.h -- starting the measured threads of `bench threads`
 * together: every thread prepares (allocates its untimed arrays), reports
 * ready and waits at a gate; the wall clock starts when the gate opens and
 * stops at the last join.
 *
 * Why not pthread_barrier_t: when pthread_create() fails for thread k, the
 * threads already started must be let go without a measurement; a barrier
 * sized for all of them would never open. The gate has a third state for
 * that, and waiting is sched_yield(), so a gate with more threads than CPUs
 * lets the preparing ones run.
 */
#ifndef RTM_LAB_THREADS_GATE_H
#define RTM_LAB_THREADS_GATE_H

#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tr_gate {
    atomic_size_t ready; /* threads prepared and waiting              */
    atomic_int state;    /* 0 closed, 1 open (measure), -1 abandoned  */
} tr_gate;

/* The first member of every measured thread's argument block. */
typedef struct tr_thread {
    void *(*fn)(void *); /* runs with the address of its argument block */
    tr_gate *gate;
} tr_thread;

/* In a measured thread after its preparation: returns 1 to measure, 0 when
 * the run was abandoned (the thread then cleans up and returns). */
static inline int tr_gate_wait(tr_gate *g)
{
    atomic_fetch_add(&g->ready, 1);
    int s;
    while ((s = atomic_load(&g->state)) == 0)
        sched_yield();
    return s > 0;
}

#define TR_GATE_MAX 256 /* threads one gate can start */

/* Starts n <= TR_GATE_MAX threads, thread i running its block's fn on the
 * argument block at (char *)blocks + i * stride (a tr_thread first, its
 * gate set to g), opens g when all are ready and joins them. *wall_ns is
 * the time from the opening to the last join. Returns 0, or -1 with why
 * filled; no thread is left running either way. */
int tr_gate_run(tr_gate *g, size_t n, void *blocks, size_t stride, uint64_t *wall_ns, char *why,
                size_t why_n);

#endif /* RTM_LAB_THREADS_GATE_H */
