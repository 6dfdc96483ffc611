// SPDX-License-Identifier: MIT
/*
 * threads_seed.c -- the tcmalloc-style pool benchmark (seed002), in the child
 * (threads.h has the definitions of malloc, free and wall time).
 *
 * Each worker, as BenchmarkMalloc in the original: a pointer array of ntimes
 * entries (its v.reserve(ntimes); made before the gate opens, so it
 * is not timed); then for each round, ntimes allocations of
 * (16 + i) % 8192 + 1 bytes between two clock reads, and the ntimes frees in
 * the same order between two more. The blocks are not written, as in the
 * original, unless --seed-write asks for every byte of each to be written
 * inside the timed allocation loop (threads.h says why that matters for
 * peak RSS). The four clock reads per round (CLOCK_MONOTONIC, ~20 ns each
 * through the vDSO) are nothing beside 10,000 calls, so nothing is
 * subtracted.
 *
 * A refused allocation (NULL) is counted and stored; free(NULL) is a no-op,
 * so the run completes, and the parent leaves it out of the statistics (a
 * NULL is not a fast allocation).
 *
 * The loop is written once (always_inline) and instantiated for malloc/free
 * and for the shared rtm heap (locked or mt), so the malloc rows make direct
 * calls. On an mt heap each worker attaches to a shard before the gate
 * opens (untimed, as its array) and detaches after its last round.
 */
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "threads/threads.h"
#include "threads/threads_gate.h"
#include "threads/threads_lock.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNLIKELY(x)   __builtin_expect(!!(x), 0)

typedef struct worker {
    tr_thread t; /* first: tr_gate_run() starts it */
    tr_heap *heap;
    int mt; /* heap is an mt heap: attach to a shard */
    uint64_t ntimes, rounds;
    int write; /* --seed-write: fill each block inside the timed loop */
    uint64_t malloc_ns, free_ns, refused;
    int unattached; /* the mt heap refused the attach: the fallback served it */
} worker;

ALWAYS_INLINE void *do_alloc(tr_heap *h, size_t n, int locked)
{
    return locked ? tr_heap_alloc(h, n) : malloc(n);
}

ALWAYS_INLINE void do_free(tr_heap *h, void *p, int locked)
{
    if (locked)
        tr_heap_free(h, p);
    else
        free(p);
}

ALWAYS_INLINE void one_round(worker *w, void **v, int locked, int write)
{
    uint64_t t0 = mono_ns();
    for (uint64_t i = 0; i < w->ntimes; i++) {
        size_t size = tr_seed_size(i);
        void *p = do_alloc(w->heap, size, locked);
        if (UNLIKELY(p == NULL))
            w->refused++;
        else if (write)
            memset(p, (int)(i & 0xffu), size);
        v[i] = p;
    }
    uint64_t t1 = mono_ns();
    for (uint64_t i = 0; i < w->ntimes; i++)
        do_free(w->heap, v[i], locked);
    uint64_t t2 = mono_ns();
    w->malloc_ns += t1 - t0;
    w->free_ns += t2 - t1;
}

ALWAYS_INLINE void work(worker *w, int locked, int write)
{
    /* The array comes from the process's malloc (a peer's in its row,
     * glibc's for a locked heap), never from the measured rtm heap, whose
     * region is sized for the blocks alone. */
    void **v = malloc((size_t)w->ntimes * sizeof *v);
    if (v == NULL)
        w->refused += w->ntimes * w->rounds; /* nothing measured: unclean */
    if (locked)
        w->unattached = !tr_heap_enter(w->heap, w->mt);
    if (tr_gate_wait(w->t.gate) && v != NULL)
        for (uint64_t r = 0; r < w->rounds; r++)
            one_round(w, v, locked, write);
    if (locked)
        tr_heap_leave(w->heap, w->mt);
    free(v);
}

/* The four instances: malloc or shared heap, blocks written or not. */
static void *work_malloc(void *arg)
{
    work(arg, 0, 0);
    return NULL;
}
static void *work_locked(void *arg)
{
    work(arg, 1, 0);
    return NULL;
}
static void *work_malloc_write(void *arg)
{
    work(arg, 0, 1);
    return NULL;
}
static void *work_locked_write(void *arg)
{
    work(arg, 1, 1);
    return NULL;
}

int tr_seed_run(tr_heap *heap, int mt, size_t nworks, uint64_t ntimes, uint64_t rounds, int write,
                tr_seed_out *out, char *why, size_t why_n)
{
    static worker w[TR_MAX_THREADS];
    void *(*fn)(void *) = heap != NULL ? (write ? work_locked_write : work_locked)
                                       : (write ? work_malloc_write : work_malloc);
    for (size_t k = 0; k < nworks; k++)
        w[k] = (worker){{fn, NULL}, heap, mt, ntimes, rounds, write, 0, 0, 0, 0};
    static tr_gate gate;
    *out = (tr_seed_out){0, 0, 0, 0, 0, 0};
    if (tr_gate_run(&gate, nworks, w, sizeof w[0], &out->wall_ns, why, why_n) != 0)
        return -1;
    for (size_t k = 0; k < nworks; k++) {
        out->malloc_ns += w[k].malloc_ns;
        out->free_ns += w[k].free_ns;
        out->refused += w[k].refused;
        out->unattached += (uint64_t)w[k].unattached;
    }
    out->blocks = (uint64_t)nworks * ntimes * rounds;
    return 0;
}
