// SPDX-License-Identifier: MIT
/*
 * replay_run.c -- the replay engine (replay.h): one pass over the calls,
 * each dispatched by what it does to the heap (allocate, resize, free), with
 * the program's ids mapped to this replay's pointers in a table indexed by
 * id. Refusals are counted and the replay goes on (replay.h says how).
 *
 * The live/held samples are taken every n / REPLAY_SAMPLES calls, outside
 * the timed intervals: live is the sum of the sizes the program asked for
 * (as the trace says), held what the target says it holds at that moment.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/replay.h"

typedef struct engine {
    const replay_target *tg;
    const bench_clock *clk;
    replay_result *r;
    void **ptr;     /* per id: this replay's block, NULL when refused/freed */
    uint64_t *size; /* per id: the requested size                          */
    uint64_t live;
} engine;

static void timed_add(engine *e, hist *h, uint64_t t0, uint64_t t1)
{
    if (e->clk == NULL)
        return;
    uint64_t d = clock_net(e->clk, t0, t1);
    hist_add(h, d);
    hist_add(&e->r->all, d);
}

static uint64_t now(const engine *e) { return e->clk != NULL ? clock_ticks(e->clk) : 0; }

static void do_free(engine *e, uint32_t id)
{
    void *p = e->ptr[id];
    if (p == NULL) {
        e->r->skipped++;
        return;
    }
    uint64_t t0 = now(e);
    e->tg->release(e->tg->ctx, p);
    uint64_t t1 = now(e);
    timed_add(e, &e->r->release, t0, t1);
    e->ptr[id] = NULL;
    e->live -= e->size[id];
    e->r->ops++;
}

/* The block handed out (or refused) under id. Returns 0 when refused. */
static int handed_out(engine *e, uint32_t id, uint64_t size, void *p, uint64_t t0, uint64_t t1,
                      size_t at)
{
    e->r->ops++;
    if (p == NULL) {
        if (e->r->refused++ == 0)
            e->r->first_refusal = at;
        return 0;
    }
    timed_add(e, &e->r->alloc, t0, t1);
    if (e->tg->note != NULL)
        e->tg->note(e->tg->ctx, p);
    e->ptr[id] = p;
    e->size[id] = size;
    e->live += size;
    return 1;
}

static int do_alloc(engine *e, const trace_op_rec *o, size_t at)
{
    size_t align = o->align_log2 ? (size_t)1 << o->align_log2 : 0;
    uint64_t t0 = now(e);
    void *p = e->tg->alloc(e->tg->ctx, (size_t)o->size, align);
    uint64_t t1 = now(e);
    return handed_out(e, o->id, o->size, p, t0, t1, at);
}

/* realloc: to size 0 it is a free (the trace recorded glibc's meaning);
 * on a block this replay was refused it is an allocation; refused, the old
 * block goes on under the new id. */
static int do_resize(engine *e, const trace_op_rec *o, size_t at)
{
    if (o->id == 0 && o->size == 0) {
        do_free(e, o->old_id);
        return 1;
    }
    void *old = o->old_id != 0 ? e->ptr[o->old_id] : NULL;
    uint64_t t0 = now(e);
    void *p = e->tg->resize(e->tg->ctx, old, (size_t)o->size);
    uint64_t t1 = now(e);
    if (old != NULL) {
        e->live -= e->size[o->old_id];
        e->ptr[o->old_id] = NULL;
    }
    if (handed_out(e, o->id, o->size, p, t0, t1, at))
        return 1;
    if (old != NULL) {
        e->ptr[o->id] = old;
        e->size[o->id] = e->size[o->old_id];
        e->live += e->size[o->id];
    }
    return 0;
}

static void sample(engine *e, uint64_t call)
{
    replay_result *r = e->r;
    if (r->nsamples >= REPLAY_SAMPLES + 1)
        return;
    replay_sample *s = &r->sample[r->nsamples++];
    s->call = call;
    s->live = e->live;
    s->held = e->tg->held != NULL ? e->tg->held(e->tg->ctx) : 0;
}

/* One call. Returns 0 when it was refused. */
static int step(engine *e, const trace_op_rec *o, size_t at)
{
    switch (trace_op_class(o->op)) {
    case TC_FREE:
        do_free(e, o->old_id);
        return 1;
    case TC_REALLOC:
        if (o->id == 0 && o->size != 0) {
            e->r->skipped++; /* the program's own refusal: nothing to replay */
            return 1;
        }
        return do_resize(e, o, at);
    case TC_ALLOC:
        break;
    }
    if (o->id == 0) {
        e->r->skipped++;
        return 1;
    }
    return do_alloc(e, o, at);
}

int replay_run(const trace *t, const replay_target *tg, const bench_clock *clk, int stop_at_refusal,
               replay_result *r)
{
    memset(r, 0, sizeof *r);
    engine e = {tg,
                clk,
                r,
                calloc((size_t)t->max_id + 1, sizeof(void *)),
                calloc((size_t)t->max_id + 1, sizeof(uint64_t)),
                0};
    if (e.ptr == NULL || e.size == NULL) {
        free(e.ptr);
        free(e.size);
        return -1;
    }
    size_t every = t->n / REPLAY_SAMPLES + 1;
    for (size_t i = 0; i < t->n; i++) {
        if (clk != NULL && i % every == 0)
            sample(&e, i);
        if (tg->cursor != NULL)
            *tg->cursor = i;
        if (!step(&e, &t->ops[i], i) && stop_at_refusal)
            break;
    }
    if (clk != NULL)
        sample(&e, t->n);
    /* What is still live goes back, untimed: the next target starts clean.
     * The cursor says t->n: no call of the trace (nothing to count). */
    if (tg->cursor != NULL)
        *tg->cursor = t->n;
    for (uint32_t id = 1; id <= t->max_id; id++)
        if (e.ptr[id] != NULL)
            tg->release(tg->ctx, e.ptr[id]);
    free(e.ptr);
    free(e.size);
    return 0;
}
