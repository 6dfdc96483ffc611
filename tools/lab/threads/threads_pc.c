// SPDX-License-Identifier: MIT
/*
 * threads_pc.c -- the producer/consumer cross-thread benchmark, in the child
 * (threads.h).
 *
 * P producers and P consumers ("pairs" = P). Each producer allocates
 * `blocks` blocks of sizes uniform in [TR_PC_MIN, TR_PC_MAX] (splitmix64
 * from seed + producer index: every allocator replays the same sizes),
 * writes every byte of each (a memset with the block's token, the token
 * word at the front: real code writes what it allocates, and an allocator
 * that hands one block out twice is caught), and passes it through one
 * bounded queue. Consumers take blocks in whatever order they come, check
 * the token word and the last byte, and free them: every free is remote
 * (another thread allocated the block), which is what thread-caching
 * allocators handle on their slow path.
 *
 * Time per block = wall time / blocks passed; throughput = blocks / wall.
 * The wall time runs from the gate's opening to the last join
 * (threads_gate.h), so the queue's own cost is in it, the same for every
 * allocator.
 *
 * The queue is Dmitry Vyukov's bounded MPMC queue (a ring of cells, each
 * with a sequence number; one CAS per push or pop, no lock): a locked queue
 * would put a mutex beside the allocator's and blur what is measured. A
 * full or empty queue is retried, yielding the CPU after a few spins, since
 * producers and consumers may outnumber the CPUs. Each producer ends with
 * one stop item (NULL); a consumer exits on the first stop it takes. With
 * as many stops as consumers and a FIFO queue, the last item in the queue
 * is a stop, so every block is taken before the last consumer leaves.
 */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "common/prng.h"
#include "threads/threads.h"
#include "threads/threads_gate.h"
#include "threads/threads_lock.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNLIKELY(x)   __builtin_expect(!!(x), 0)
#define SPINS         64 /* retries before sched_yield() */

/* --- the queue ------------------------------------------------------------ */

typedef struct item {
    void *p; /* NULL: stop */
    uint64_t token;
    uint32_t size;
} item;

typedef struct cell {
    atomic_size_t seq;
    item it;
} cell;

typedef struct queue {
    cell buf[TR_PC_QUEUE];
    alignas(64) atomic_size_t head; /* next pop  */
    alignas(64) atomic_size_t tail; /* next push */
} queue;

_Static_assert((TR_PC_QUEUE & (TR_PC_QUEUE - 1u)) == 0, "queue size must be a power of two");
#define MASK ((size_t)TR_PC_QUEUE - 1u)

static void queue_init(queue *q)
{
    for (size_t i = 0; i < TR_PC_QUEUE; i++)
        atomic_init(&q->buf[i].seq, i);
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
}

/* The cell's sequence against the position: 0 when the cell is ours. */
static inline long lag(size_t seq, size_t pos) { return (long)(seq - pos); }

static int try_push(queue *q, const item *it)
{
    size_t pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    for (;;) {
        cell *c = &q->buf[pos & MASK];
        long d = lag(atomic_load_explicit(&c->seq, memory_order_acquire), pos);
        if (d == 0 && atomic_compare_exchange_weak_explicit(
                          &q->tail, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed)) {
            c->it = *it;
            atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
            return 1;
        }
        if (d < 0)
            return 0; /* full */
        if (d > 0)
            pos = atomic_load_explicit(&q->tail, memory_order_relaxed);
    }
}

static int try_pop(queue *q, item *it)
{
    size_t pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    for (;;) {
        cell *c = &q->buf[pos & MASK];
        long d = lag(atomic_load_explicit(&c->seq, memory_order_acquire), pos + 1);
        if (d == 0 && atomic_compare_exchange_weak_explicit(
                          &q->head, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed)) {
            *it = c->it;
            atomic_store_explicit(&c->seq, pos + MASK + 1, memory_order_release);
            return 1;
        }
        if (d < 0)
            return 0; /* empty */
        if (d > 0)
            pos = atomic_load_explicit(&q->head, memory_order_relaxed);
    }
}

static void backoff(unsigned *spins)
{
    if (++*spins >= SPINS) {
        *spins = 0;
        sched_yield();
    }
}

static void push(queue *q, const item *it)
{
    unsigned spins = 0;
    while (!try_push(q, it))
        backoff(&spins);
}

static void pop(queue *q, item *it)
{
    unsigned spins = 0;
    while (!try_pop(q, it))
        backoff(&spins);
}

/* --- producers and consumers ------------------------------------------------ */

typedef struct role {
    tr_thread t; /* first: tr_gate_run() starts it */
    tr_heap *heap;
    int mt; /* heap is an mt heap: attach to a shard (threads_lock.h) */
    queue *q;
    uint64_t blocks, seed, index;
    uint64_t passed, refused, corrupt, unattached; /* results */
} role;

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

ALWAYS_INLINE void produce(role *r, int locked)
{
    bench_rng rng;
    rng_seed(&rng, r->seed + r->index);
    if (!tr_gate_wait(r->t.gate))
        return;
    for (uint64_t i = 0; i < r->blocks; i++) {
        uint32_t size =
            TR_PC_MIN + rng_scale32((uint32_t)rng_next(&rng), TR_PC_MAX - TR_PC_MIN + 1u);
        void *p = do_alloc(r->heap, size, locked);
        if (UNLIKELY(p == NULL)) {
            r->refused++;
            continue;
        }
        item it = {p, (r->index << 40) ^ (i * UINT64_C(0x9E3779B97F4A7C15)), size};
        memset(p, (int)(it.token & 0xffu), size);
        memcpy(p, &it.token, sizeof it.token);
        push(r->q, &it);
    }
    item stop = {NULL, 0, 0};
    push(r->q, &stop);
}

ALWAYS_INLINE void consume(role *r, int locked)
{
    if (!tr_gate_wait(r->t.gate))
        return;
    for (;;) {
        item it;
        pop(r->q, &it);
        if (it.p == NULL)
            return;
        uint64_t token;
        memcpy(&token, it.p, sizeof token);
        unsigned char last = ((const unsigned char *)it.p)[it.size - 1u];
        if (UNLIKELY(token != it.token || last != (unsigned char)(it.token & 0xffu)))
            r->corrupt++;
        do_free(r->heap, it.p, locked);
        r->passed++;
    }
}

/* Every role on a shared heap: attached (mt) before the gate, untimed,
 * detached after its last call. */
static void enter(role *r) { r->unattached = !tr_heap_enter(r->heap, r->mt); }
static void leave(role *r) { tr_heap_leave(r->heap, r->mt); }

static void *produce_malloc(void *a)
{
    produce(a, 0);
    return NULL;
}
static void *produce_locked(void *a)
{
    enter(a);
    produce(a, 1);
    leave(a);
    return NULL;
}
static void *consume_malloc(void *a)
{
    consume(a, 0);
    return NULL;
}
static void *consume_locked(void *a)
{
    enter(a);
    consume(a, 1);
    leave(a);
    return NULL;
}

int tr_pc_run(tr_heap *heap, int mt, size_t pairs, uint64_t blocks_per_producer, uint64_t seed,
              tr_pc_out *out, char *why, size_t why_n)
{
    static role roles[2 * TR_MAX_THREADS];
    static queue q;
    static tr_gate gate;
    queue_init(&q);
    int locked = heap != NULL;
    for (size_t k = 0; k < 2 * pairs; k++) {
        int producer = k < pairs;
        void *(*fn)(void *) = producer ? (locked ? produce_locked : produce_malloc)
                                       : (locked ? consume_locked : consume_malloc);
        roles[k] = (role){{fn, NULL}, heap, mt, &q, blocks_per_producer, seed, k, 0, 0, 0, 0};
    }
    *out = (tr_pc_out){0, 0, 0, 0, 0};
    if (tr_gate_run(&gate, 2 * pairs, roles, sizeof roles[0], &out->wall_ns, why, why_n) != 0)
        return -1;
    for (size_t k = 0; k < 2 * pairs; k++) {
        out->blocks += roles[k].passed;
        out->refused += roles[k].refused;
        out->corrupt += roles[k].corrupt;
        out->unattached += roles[k].unattached;
    }
    return 0;
}
