// SPDX-License-Identifier: MIT
/*
 * trace_stats.c -- what a trace holds (trace_read.h): calls per operation
 * and thread, requested sizes, and the live requested bytes over time, whose
 * peak is the least any allocator needs (what `rtmem fit` compares a region
 * with). Sizes are the program's requests, not what its malloc rounded them
 * to: the same trace gives the same figures whatever it is replayed on.
 */
#include <stdlib.h>
#include <string.h>

#include "trace/trace_read.h"

unsigned trace_size_bucket(uint64_t n) { return n == 0 ? 0u : 64u - (unsigned)__builtin_clzll(n); }

/* Live accounting: a block's requested size enters when it is handed out
 * and leaves when it is freed or resized away. */
typedef struct live {
    uint64_t *size; /* per id */
    uint64_t bytes, blocks;
} live;

static void live_add(live *l, uint32_t id, uint64_t size)
{
    l->size[id] = size;
    l->bytes += size;
    l->blocks++;
}

static void live_drop(live *l, uint32_t id)
{
    l->bytes -= l->size[id];
    l->blocks--;
}

static void count_call(trace_stats *s, const trace_op_rec *o)
{
    s->calls[o->op]++;
    s->thread_calls[o->thread]++;
    trace_class c = trace_op_class(o->op);
    if (c == TC_FREE || (c == TC_REALLOC && o->size == 0 && o->old_id != 0))
        return;
    s->size_hist[trace_size_bucket(o->size)]++;
    if (o->id == 0) {
        s->failed++;
        return;
    }
    s->allocated_bytes += o->size;
    if (o->size > s->largest_request)
        s->largest_request = o->size;
}

int trace_stats_compute(const trace *t, trace_stats *s)
{
    memset(s, 0, sizeof *s);
    s->thread_calls = calloc(t->nthreads ? t->nthreads : 1, sizeof *s->thread_calls);
    live l = {calloc((size_t)t->max_id + 1, sizeof(uint64_t)), 0, 0};
    if (s->thread_calls == NULL || l.size == NULL) {
        free(l.size);
        trace_stats_free(s);
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        const trace_op_rec *o = &t->ops[i];
        count_call(s, o);
        int failed_resize = o->op == TOP_REALLOC && o->id == 0 && o->size != 0;
        if (o->old_id != 0 && !failed_resize)
            live_drop(&l, o->old_id);
        if (o->id != 0)
            live_add(&l, o->id, o->size);
        if (l.bytes > s->peak_live_bytes) {
            s->peak_live_bytes = l.bytes;
            s->peak_at = i;
        }
        if (l.blocks > s->peak_live_blocks)
            s->peak_live_blocks = l.blocks;
    }
    s->end_live_bytes = l.bytes;
    s->end_live_blocks = l.blocks;
    if (t->n > 0)
        s->duration_ns = t->ops[t->n - 1].t_ns - t->ops[0].t_ns;
    free(l.size);
    return 0;
}

void trace_stats_free(trace_stats *s)
{
    free(s->thread_calls);
    s->thread_calls = NULL;
}
