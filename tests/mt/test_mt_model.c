// SPDX-License-Identifier: MIT
/*
 * tests/mt/test_mt_model.c -- the multi-threaded heap against a model, with
 * threads that pass blocks to each other.
 *
 * Each thread holds a set of blocks (the model: pointer, requested size,
 * alignment, a fill token) and does, at random: allocate (plain or
 * aligned), free one of its blocks, resize one, send one to another
 * thread's mailbox (ownership moves with it: the receiver frees it later,
 * a remote free when the sender's shard made it), and take what others
 * sent. Every block's bytes are checked against its token before it is
 * freed, resized or sent, so a block handed out twice, or memory written
 * by the heap while a thread held it, is found. All but one thread attach
 * to a shard; the last is served by the fallback.
 *
 * At quiescent points (every thread waits at a barrier) thread 0 compares
 * the heap with the model: used_bytes = the sum of rtm_usable_size over
 * every block any thread holds or a mailbox carries, live_blocks = their
 * number, the walk agrees, rtm_heap_check passes. After the last round
 * everything is freed and the heap must be empty.
 *
 * The churn test: rounds of threads that attach, allocate, hand half their
 * blocks to a shared pile and exit attached; the next round's threads
 * attach to the shards they left (with their blocks) and free the pile.
 *
 * Reproducible: --seed S (printed on failure) fixes each thread's choices;
 * the interleaving is the scheduler's. Runs under TSan in CI (label threads).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "../common/rng.h"
#include "rtmem.h"

#define MAX_THREADS 8
#define MAX_HELD    128
#define MAILBOX     256

typedef struct block {
    unsigned char *p;
    size_t size;
    size_t align;
    unsigned token;
} block;

typedef struct mailbox {
    pthread_mutex_t lock;
    block items[MAILBOX];
    size_t count;
} mailbox;

typedef struct world {
    rtm_heap *h;
    unsigned threads;
    unsigned long steps, every;
    uint64_t seed;
    const char *algorithm;
    pthread_barrier_t barrier;
    mailbox box[MAX_THREADS];
    block held[MAX_THREADS][MAX_HELD];
    size_t nheld[MAX_THREADS];
    int attached[MAX_THREADS];
} world;

static void fill(const block *b)
{
    for (size_t i = 0; i < b->size; i++)
        b->p[i] = (unsigned char)(b->token * 31u + i);
}

static int intact(const block *b, size_t upto)
{
    for (size_t i = 0; i < upto && i < b->size; i++)
        if (b->p[i] != (unsigned char)(b->token * 31u + i))
            return 0;
    return 1;
}

static void verify(world *w, const block *b, const char *when)
{
    CHECK_MSG(intact(b, b->size), "%s (seed %llu): block %p of %zu bytes damaged %s", w->algorithm,
              (unsigned long long)w->seed, (void *)b->p, b->size, when);
    CHECK_MSG(((uintptr_t)b->p & (b->align - 1u)) == 0, "%s: block %p lost its alignment %zu",
              w->algorithm, (void *)b->p, b->align);
}

static void op_alloc(world *w, unsigned me, rng *r)
{
    if (w->nheld[me] == MAX_HELD)
        return;
    block b = {NULL, rng_size(r, 11), RTM_ALIGN, (unsigned)rng_next(r)};
    if (rng_below(r, 8) == 0) {
        b.align = (size_t)16 << rng_below(r, 4);
        b.p = rtm_aligned_alloc(w->h, b.align, b.size);
    } else {
        b.p = rtm_alloc(w->h, b.size);
    }
    CHECK_MSG(b.p != NULL, "%s (seed %llu): alloc of %zu refused", w->algorithm,
              (unsigned long long)w->seed, b.size);
    if (b.p == NULL)
        return;
    CHECK(rtm_usable_size(w->h, b.p) >= b.size);
    fill(&b);
    w->held[me][w->nheld[me]++] = b;
}

static block take_held(world *w, unsigned me, rng *r)
{
    size_t i = rng_below(r, w->nheld[me]);
    block b = w->held[me][i];
    w->held[me][i] = w->held[me][--w->nheld[me]];
    return b;
}

static void op_free(world *w, unsigned me, rng *r)
{
    if (w->nheld[me] == 0)
        return;
    block b = take_held(w, me, r);
    verify(w, &b, "before free");
    rtm_free(w->h, b.p);
}

static void op_realloc(world *w, unsigned me, rng *r)
{
    if (w->nheld[me] == 0)
        return;
    size_t i = rng_below(r, w->nheld[me]);
    block *b = &w->held[me][i];
    verify(w, b, "before realloc");
    size_t size = rng_size(r, 11) + 1u;
    unsigned char *n = rtm_realloc(w->h, b->p, size);
    CHECK_MSG(n != NULL, "%s (seed %llu): realloc to %zu refused", w->algorithm,
              (unsigned long long)w->seed, size);
    if (n == NULL)
        return;
    b->p = n;
    size_t kept = b->size < size ? b->size : size;
    CHECK_MSG(intact(b, kept), "%s (seed %llu): realloc lost data", w->algorithm,
              (unsigned long long)w->seed);
    b->size = size;
    fill(b);
}

static void op_send(world *w, unsigned me, rng *r)
{
    if (w->nheld[me] == 0)
        return;
    unsigned to = (unsigned)rng_below(r, w->threads);
    mailbox *m = &w->box[to];
    pthread_mutex_lock(&m->lock);
    if (m->count < MAILBOX) {
        block b = take_held(w, me, r);
        verify(w, &b, "before send");
        m->items[m->count++] = b;
    }
    pthread_mutex_unlock(&m->lock);
}

static void op_receive(world *w, unsigned me)
{
    mailbox *m = &w->box[me];
    pthread_mutex_lock(&m->lock);
    while (m->count > 0 && w->nheld[me] < MAX_HELD)
        w->held[me][w->nheld[me]++] = m->items[--m->count];
    pthread_mutex_unlock(&m->lock);
}

/* ---- the quiescent check ----------------------------------------------- */

typedef struct walked {
    size_t bytes, blocks;
} walked;

static void count_used(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    walked *c = arg;
    if (used) {
        c->bytes += usable;
        c->blocks++;
    }
}

static void compare_with_model(world *w, const char *when)
{
    size_t bytes = 0, blocks = 0;
    for (unsigned t = 0; t < w->threads; t++) {
        for (size_t i = 0; i < w->nheld[t]; i++, blocks++)
            bytes += rtm_usable_size(w->h, w->held[t][i].p);
        for (size_t i = 0; i < w->box[t].count; i++, blocks++)
            bytes += rtm_usable_size(w->h, w->box[t].items[i].p);
    }
    rtm_stats st = rtm_heap_stats(w->h);
    CHECK_MSG(st.used_bytes == bytes && st.live_blocks == blocks,
              "%s (seed %llu) %s: stats say %zu bytes in %zu blocks, the model %zu in %zu",
              w->algorithm, (unsigned long long)w->seed, when, st.used_bytes, st.live_blocks, bytes,
              blocks);
    walked c = {0, 0};
    CHECK(rtm_heap_walk(w->h, count_used, &c) == 0);
    CHECK_MSG(c.bytes == bytes && c.blocks == blocks,
              "%s (seed %llu) %s: walk %zu bytes in %zu blocks, the model %zu in %zu", w->algorithm,
              (unsigned long long)w->seed, when, c.bytes, c.blocks, bytes, blocks);
    CHECK_MSG(rtm_heap_check(w->h) == 0, "%s (seed %llu) %s: check failed", w->algorithm,
              (unsigned long long)w->seed, when);
}

typedef struct worker {
    world *w;
    unsigned me;
} worker;

static void *run_worker(void *arg)
{
    worker *k = arg;
    world *w = k->w;
    unsigned me = k->me;
    rng r = {w->seed * 1000003u + me};
    if (me + 1u < w->threads) /* the last thread stays on the fallback */
        w->attached[me] = rtm_mt_attach(w->h) >= 0;
    for (unsigned long step = 1; step <= w->steps; step++) {
        switch (rng_below(&r, 10)) {
        case 0:
        case 1:
        case 2:
            op_alloc(w, me, &r);
            break;
        case 3:
        case 4:
            op_free(w, me, &r);
            break;
        case 5:
            op_realloc(w, me, &r);
            break;
        case 6:
        case 7:
            op_send(w, me, &r);
            break;
        default:
            op_receive(w, me);
            break;
        }
        if (step % w->every == 0) {
            pthread_barrier_wait(&w->barrier);
            if (me == 0)
                compare_with_model(w, "at a barrier");
            pthread_barrier_wait(&w->barrier);
        }
    }
    pthread_barrier_wait(&w->barrier);
    do {
        op_receive(w, me);
        while (w->nheld[me] > 0)
            op_free(w, me, &r);
    } while (w->box[me].count > 0); /* no one sends any more */
    if (w->attached[me])
        CHECK(rtm_mt_detach(w->h) == 0);
    return NULL;
}

static void run_model(const char *algorithm, uint64_t seed, unsigned threads, unsigned long steps)
{
    static world w;
    memset(&w, 0, sizeof w);
    size_t bytes = rtm_mt_region_size(algorithm, threads - 1u, 2u << 20);
    unsigned char *mem = malloc(bytes);
    REQUIRE(mem != NULL);
    w.h = rtm_mt_create(algorithm, mem, bytes, threads - 1u);
    REQUIRE(w.h != NULL);
    w.threads = threads;
    w.steps = steps;
    w.every = steps / 8u + 1u;
    w.seed = seed;
    w.algorithm = algorithm;
    pthread_barrier_init(&w.barrier, NULL, threads);
    for (unsigned t = 0; t < threads; t++)
        pthread_mutex_init(&w.box[t].lock, NULL);
    pthread_t tid[MAX_THREADS];
    worker k[MAX_THREADS];
    for (unsigned t = 0; t < threads; t++) {
        k[t] = (worker){&w, t};
        REQUIRE(pthread_create(&tid[t], NULL, run_worker, &k[t]) == 0);
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    rtm_stats st = rtm_heap_stats(w.h);
    CHECK_MSG(st.live_blocks == 0 && st.used_bytes == 0, "%s (seed %llu): %zu blocks left",
              algorithm, (unsigned long long)seed, st.live_blocks);
    CHECK_EQ(rtm_heap_check(w.h), 0);
    pthread_barrier_destroy(&w.barrier);
    rtm_heap_destroy(w.h);
    free(mem);
}

/* ---- churn: threads that exit attached -------------------------------- */

#define PILE 4096

typedef struct churn {
    rtm_heap *h;
    pthread_mutex_t lock;
    void *pile[PILE];
    size_t piled;
    uint64_t seed;
} churn;

typedef struct churner {
    churn *c;
    unsigned id;
    int attached;
} churner;

static void *churn_thread(void *arg)
{
    churner *me = arg;
    churn *c = me->c;
    rng r = {c->seed + me->id};
    me->attached = rtm_mt_attach(c->h) >= 0;
    /* First the pile a previous round left (remote or own frees). */
    pthread_mutex_lock(&c->lock);
    size_t n = c->piled / 2u;
    for (size_t i = 0; i < n; i++)
        rtm_free(c->h, c->pile[--c->piled]);
    pthread_mutex_unlock(&c->lock);
    for (unsigned i = 0; i < 64; i++) {
        void *p = rtm_alloc(c->h, rng_size(&r, 9));
        CHECK(p != NULL);
        if (p == NULL)
            continue;
        pthread_mutex_lock(&c->lock);
        if (c->piled < PILE && i % 2 == 0)
            c->pile[c->piled++] = p;
        else
            rtm_free(c->h, p);
        pthread_mutex_unlock(&c->lock);
    }
    return NULL; /* exits attached: its shard is released by the exit hook */
}

static void run_churn(uint64_t seed, unsigned rounds)
{
    static churn c;
    memset(&c, 0, sizeof c);
    size_t bytes = rtm_mt_region_size("tlsf", 3, 1u << 20);
    unsigned char *mem = malloc(bytes);
    REQUIRE(mem != NULL);
    c.h = rtm_mt_create("tlsf", mem, bytes, 3);
    REQUIRE(c.h != NULL);
    c.seed = seed;
    pthread_mutex_init(&c.lock, NULL);
    unsigned attached_total = 0;
    for (unsigned round = 0; round < rounds; round++) {
        pthread_t tid[4];
        churner k[4];
        for (unsigned t = 0; t < 4; t++) {
            k[t] = (churner){&c, round * 4u + t, 0};
            REQUIRE(pthread_create(&tid[t], NULL, churn_thread, &k[t]) == 0);
        }
        for (unsigned t = 0; t < 4; t++) {
            pthread_join(tid[t], NULL);
            attached_total += (unsigned)k[t].attached;
        }
        /* The exits released every shard: this thread can take one. */
        int s = rtm_mt_attach(c.h);
        CHECK_MSG(s >= 0, "round %u: no shard free after every thread exited", round);
        if (s >= 0)
            CHECK(rtm_mt_detach(c.h) == 0);
        rtm_stats st = rtm_heap_stats(c.h);
        CHECK_EQ(st.live_blocks, c.piled);
        CHECK_EQ(rtm_heap_check(c.h), 0);
    }
    CHECK(attached_total >= rounds * 3u); /* 3 shards for 4 threads a round */
    while (c.piled > 0)
        rtm_free(c.h, c.pile[--c.piled]);
    CHECK_EQ(rtm_heap_stats(c.h).live_blocks, 0);
    CHECK_EQ(rtm_heap_check(c.h), 0);
    rtm_heap_destroy(c.h);
    free(mem);
}

static void print_report(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                         void *arg)
{
    (void)heap;
    (void)arg;
    fprintf(stderr, "    heap reported (kind %d) at %p: %s\n", (int)kind, ptr, detail);
}

int main(int argc, char **argv)
{
    rtm_set_error_handler(print_report, NULL);
    uint64_t seed = 1;
    unsigned long steps = 4000;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--steps") == 0)
            steps = strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--algorithm") == 0)
            only = argv[i + 1];
    }
    printf("seed %llu, %lu steps per thread\n", (unsigned long long)seed, steps);
    static const char *const algorithms[] = {"tlsf", "halffit", "tlsf_cached", "heapmem"};
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        if (only != NULL && strcmp(only, algorithms[a]) != 0)
            continue;
        run_model(algorithms[a], seed, 4, steps);
        run_model(algorithms[a], seed + 1u, 2, steps);
        printf("%-12s model ok so far: %lu failures\n", algorithms[a], *check_failure_count());
    }
    if (only == NULL)
        run_churn(seed, 6);
    return check_summary();
}
