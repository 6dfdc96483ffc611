// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_mt.c -- the multi-threaded heap (rtmem/mt.h) driven by an
 * operation stream whose every operation names the thread that performs
 * it: so the input decides which shard allocates a block and which thread
 * frees it (its owner, another attached thread: a remote free into the
 * owner's inbox, or an unattached thread), and when threads detach and
 * attach again.
 *
 * Four worker threads run the operations one at a time, handed over by a
 * mutex and a condition variable, so a replayed input runs the same way
 * every time (the interleaving is the input's, not the scheduler's).
 * Threads 0 .. shards - 1 start attached, the others use the fallback.
 *
 * Input: algorithm (tlsf, halffit, tlsf_cached, heapmem), shard count
 * (1 .. 3), then per operation: thread, opcode and its arguments.
 * Checked after every operation: each live block's bytes (its fill),
 * used_bytes and live_blocks against the model; rtm_heap_check every 8
 * operations and at the end. Misuse (a pointer freed again, an interior
 * pointer, from any thread) must be reported once, with errno EINVAL, and
 * change nothing. Any broken promise prints what and aborts.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rtmem.h"

#define THREADS 4u
#define SLOTS   48u
#define FREED   8u
#define REGION  (3u << 20)

static const char *const algorithms[] = {"tlsf", "halffit", "tlsf_cached", "heapmem"};

typedef struct slot {
    unsigned char *p;
    size_t size;
    unsigned char fill;
} slot;

enum { OP_ALLOC, OP_ALIGNED, OP_FREE, OP_REALLOC, OP_USABLE, OP_REFREE, OP_INTERIOR, OP_ATTACH };
#define OP_COUNT 8u

typedef struct job {
    unsigned op, slot;
    size_t size, align;
    unsigned char fill;
} job;

static struct {
    rtm_heap *h;
    slot live[SLOTS];
    unsigned char *freed[FREED];
    unsigned reports;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    job current;
    int turn; /* the worker whose job is current; -1: none; -2: quit */
    int attached[THREADS];
    const char *algorithm;
    unsigned step;
} w = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .turn = -1};

static void broken(const char *what)
{
    fprintf(stderr, "fuzz_mt: %s on %s, step %u\n", what, w.algorithm, w.step);
    abort();
}

static void count_report(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                         void *arg)
{
    (void)kind;
    (void)heap;
    (void)ptr;
    (void)detail;
    (void)arg;
    w.reports++;
}

static void forget_freed(const unsigned char *p)
{
    for (unsigned i = 0; i < FREED; i++)
        if (w.freed[i] == p)
            w.freed[i] = NULL;
}

static void take(slot *s, unsigned char *p, size_t size, unsigned char fill)
{
    forget_freed(p); /* handed out again: no longer a stale pointer */
    s->p = p;
    s->size = size;
    s->fill = fill;
    memset(p, fill, size);
}

static void verify(const slot *s)
{
    for (size_t i = 0; i < s->size; i++)
        if (s->p[i] != s->fill)
            broken("a live block's bytes changed");
}

/* A refused pointer: reported once, errno EINVAL, nothing changed. */
static void expect_refused(unsigned char *p)
{
    rtm_stats before = rtm_heap_stats(w.h);
    unsigned reports = w.reports;
    errno = 0;
    rtm_free(w.h, p);
    if (w.reports != reports + 1u || errno != EINVAL)
        broken("misuse not refused");
    rtm_stats after = rtm_heap_stats(w.h);
    if (after.used_bytes != before.used_bytes || after.live_blocks != before.live_blocks)
        broken("a refused free changed the heap");
}

static void run_job(unsigned me, const job *j)
{
    slot *s = &w.live[j->slot];
    switch (j->op) {
    case OP_ALLOC:
    case OP_ALIGNED:
        if (s->p == NULL) {
            unsigned char *p = j->op == OP_ALLOC ? rtm_alloc(w.h, j->size)
                                                 : rtm_aligned_alloc(w.h, j->align, j->size);
            if (p != NULL && ((uintptr_t)p & (j->align - 1u)) != 0)
                broken("alignment not kept");
            if (p != NULL)
                take(s, p, j->size, j->fill);
        }
        break;
    case OP_FREE:
        if (s->p != NULL) {
            verify(s);
            rtm_free(w.h, s->p);
            w.freed[j->slot % FREED] = s->p;
            s->p = NULL;
        }
        break;
    case OP_REALLOC:
        if (s->p != NULL) {
            verify(s);
            unsigned char *n = rtm_realloc(w.h, s->p, j->size + 1u);
            if (n != NULL) {
                size_t kept = s->size < j->size + 1u ? s->size : j->size + 1u;
                for (size_t i = 0; i < kept; i++)
                    if (n[i] != s->fill)
                        broken("realloc lost data");
                unsigned char *old = s->p;
                take(s, n, j->size + 1u, j->fill);
                if (old != n)
                    w.freed[j->slot % FREED] = old;
            }
        }
        break;
    case OP_USABLE:
        if (s->p != NULL && rtm_usable_size(w.h, s->p) < s->size)
            broken("usable size below the request");
        break;
    case OP_REFREE:
        if (w.freed[j->slot % FREED] != NULL)
            expect_refused(w.freed[j->slot % FREED]);
        break;
    case OP_INTERIOR:
        if (s->p != NULL && s->size >= 16)
            expect_refused(s->p + 8u * (1u + j->size % (s->size / 8u)));
        break;
    default: /* OP_ATTACH: detach if attached, else try to attach */
        if (w.attached[me])
            w.attached[me] = rtm_mt_detach(w.h) == 0 ? 0 : (broken("detach failed"), 1);
        else
            w.attached[me] = rtm_mt_attach(w.h) >= 0;
        break;
    }
}

static void *worker(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    pthread_mutex_lock(&w.lock);
    for (;;) {
        while (w.turn != (int)me && w.turn != -2)
            pthread_cond_wait(&w.cond, &w.lock);
        if (w.turn == -2)
            break;
        job j = w.current;
        pthread_mutex_unlock(&w.lock);
        run_job(me, &j);
        pthread_mutex_lock(&w.lock);
        w.turn = -1;
        pthread_cond_broadcast(&w.cond);
    }
    if (w.attached[me])
        (void)rtm_mt_detach(w.h);
    pthread_mutex_unlock(&w.lock);
    return NULL;
}

static void hand_over(unsigned thread, const job *j)
{
    pthread_mutex_lock(&w.lock);
    w.current = *j;
    w.turn = (int)thread;
    pthread_cond_broadcast(&w.cond);
    while (w.turn != -1)
        pthread_cond_wait(&w.cond, &w.lock);
    pthread_mutex_unlock(&w.lock);
}

static void compare_with_model(int check)
{
    size_t used = 0, live = 0;
    for (unsigned i = 0; i < SLOTS; i++)
        if (w.live[i].p != NULL) {
            used += rtm_usable_size(w.h, w.live[i].p);
            live++;
        }
    rtm_stats st = rtm_heap_stats(w.h);
    if (st.used_bytes != used || st.live_blocks != live)
        broken("stats differ from the model");
    if (check && rtm_heap_check(w.h) != 0)
        broken("rtm_heap_check failed");
}

static job read_job(fz_in *in)
{
    job j;
    j.op = fz_u8(in) % OP_COUNT;
    j.slot = fz_u8(in) % SLOTS;
    j.size = fz_u16(in) % 3000u;
    j.align = j.op == OP_ALIGNED ? (size_t)1 << (3u + fz_u8(in) % 10u) : 8u;
    j.fill = (unsigned char)(j.slot * 7u + 1u);
    return j;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned char *region;
    if (region == NULL && (region = aligned_alloc(64, REGION)) == NULL)
        return 0;
    fz_in in = {data, size};
    w.algorithm = algorithms[fz_u8(&in) % 4u];
    unsigned shards = 1u + fz_u8(&in) % 3u;
    w.h = rtm_mt_create(w.algorithm, region, REGION, shards);
    if (w.h == NULL)
        broken("create failed");
    rtm_set_error_handler(count_report, NULL);
    memset(w.live, 0, sizeof w.live);
    memset(w.freed, 0, sizeof w.freed);
    w.reports = 0;
    w.turn = -1;
    pthread_t tid[THREADS];
    for (unsigned t = 0; t < THREADS; t++) {
        w.attached[t] = 0;
        pthread_create(&tid[t], NULL, worker, (void *)(uintptr_t)t);
    }
    job attach = {OP_ATTACH, 0, 0, 8, 0};
    for (unsigned t = 0; t < shards; t++)
        hand_over(t, &attach);
    for (w.step = 0; fz_left(&in) && w.step < 4000u; w.step++) {
        unsigned thread = fz_u8(&in) % THREADS;
        job j = read_job(&in);
        hand_over(thread, &j);
        compare_with_model(w.step % 8u == 7u);
    }
    /* Everything freed, by whichever thread the slot says. */
    for (unsigned i = 0; i < SLOTS; i++) {
        job j = {OP_FREE, i, 0, 8, 0};
        hand_over(i % THREADS, &j);
    }
    pthread_mutex_lock(&w.lock);
    w.turn = -2;
    pthread_cond_broadcast(&w.cond);
    pthread_mutex_unlock(&w.lock);
    for (unsigned t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);
    compare_with_model(1);
    if (rtm_heap_stats(w.h).live_blocks != 0)
        broken("blocks left after every free");
    rtm_heap_destroy(w.h);
    rtm_set_error_handler(NULL, NULL);
    return 0;
}
