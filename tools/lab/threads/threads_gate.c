// SPDX-License-Identifier: MIT
/*
 * threads_gate.c -- start, release together, join and time the measured
 * threads (threads_gate.h).
 *
 * Threads are created with the default attributes: they inherit the
 * process's scheduling policy and CPU affinity, i.e. they float over every
 * CPU the process may use. Pinning them all to one CPU (what rt_setup()
 * does for single-threaded commands) would serialise them and measure the
 * scheduler instead of the allocator's concurrency.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "threads/threads_gate.h"

static tr_thread *block(void *blocks, size_t stride, size_t i)
{
    return (tr_thread *)(void *)((char *)blocks + i * stride);
}

int tr_gate_run(tr_gate *g, size_t n, void *blocks, size_t stride, uint64_t *wall_ns, char *why,
                size_t why_n)
{
    pthread_t tid[TR_GATE_MAX];
    atomic_init(&g->ready, 0);
    atomic_init(&g->state, 0);
    *wall_ns = 0;
    size_t started = 0;
    int err = n > TR_GATE_MAX ? EAGAIN : 0;
    for (; err == 0 && started < n; started++) {
        tr_thread *t = block(blocks, stride, started);
        t->gate = g;
        err = pthread_create(&tid[started], NULL, t->fn, t);
        if (err != 0)
            break;
    }
    if (err != 0) {
        snprintf(why, why_n, "cannot start thread %zu of %zu: %s", started + 1, n, strerror(err));
        atomic_store(&g->state, -1);
    } else {
        /* Preparation (the threads' untimed allocations) is outside the wall. */
        while (atomic_load(&g->ready) < n)
            sched_yield();
    }
    uint64_t t0 = mono_ns();
    if (err == 0)
        atomic_store(&g->state, 1);
    for (size_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    if (err == 0)
        *wall_ns = mono_ns() - t0;
    return err == 0 ? 0 : -1;
}
