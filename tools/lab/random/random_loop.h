// SPDX-License-Identifier: MIT
/*
 * random_loop.h -- the random-replace loop of the TLSF/xvmalloc/zsmalloc
 * study (docs/METHODS.md), written once for the two child programs of
 * `rtmem bench random`: the single run (random_child.c) and the window sweep
 * (random_sweep_child.c).
 *
 * The loop (the study's, after tlsf-bsd's bench.c): `nslots` blocks are
 * allocated first; then each iteration picks a random slot, frees its block
 * and allocates a block of random size in [min, min + span) into it. The
 * first byte of every block is written, so that memory an allocator maps
 * lazily is charged to that allocator, the same way for all of them.
 *
 * A refused allocation (NULL) leaves the slot empty and is counted; the
 * caller reports the count and never lets such a run pass for a fast one
 * (the study's trap: its TLSF curve dropped where the pool ran out).
 *
 * Every pass is always_inline and takes a constant `ops`: instantiated in a
 * noinline function with rtm_ops or libc_ops, the indirect calls become
 * direct calls to rtm_alloc()/rtm_free() (the generic API, with its
 * one-compare dispatch) or malloc()/free(), so both sides of the comparison
 * pay the same call cost.
 */
#ifndef RTM_LAB_RANDOM_LOOP_H
#define RTM_LAB_RANDOM_LOOP_H

#include <stdint.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/hist.h"
#include "common/prng.h"
#include "rtmem.h"

#define RL_ALWAYS_INLINE static inline __attribute__((always_inline))
#define RL_UNLIKELY(x)   __builtin_expect(!!(x), 0)

typedef struct rl_ops {
    void *(*alloc)(void *ctx, size_t n);
    void (*free)(void *ctx, void *p);
} rl_ops;

static inline void *rl_rtm_alloc(void *ctx, size_t n) { return rtm_alloc(ctx, n); }
static inline void rl_rtm_free(void *ctx, void *p) { rtm_free(ctx, p); }
static inline void *rl_libc_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}
static inline void rl_libc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const rl_ops rl_rtm = {rl_rtm_alloc, rl_rtm_free};
static const rl_ops rl_libc = {rl_libc_alloc, rl_libc_free};

typedef struct rl_loop {
    void **slot;
    uint32_t nslots;
    uint32_t min, span; /* sizes are min + [0, span) */
    void *ctx;          /* the rtm heap, or NULL for malloc */
    bench_rng rng;
    uint64_t refused;
    const bench_clock *clk;
} rl_loop;

/* One draw gives the slot (low 32 bits) and the size (high 32 bits). */
RL_ALWAYS_INLINE void rl_draw(rl_loop *s, uint32_t *k, size_t *size)
{
    uint64_t r = rng_next(&s->rng);
    *k = rng_scale32((uint32_t)r, s->nslots);
    *size = s->min + (size_t)rng_scale32((uint32_t)(r >> 32), s->span);
}

RL_ALWAYS_INLINE void rl_touch(void *p, uint64_t i)
{
    *(volatile unsigned char *)p = (unsigned char)i;
}

/* Pass 1: every slot gets a block (untimed). */
RL_ALWAYS_INLINE void rl_fill(const rl_ops *o, rl_loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        uint32_t unused;
        size_t size;
        rl_draw(s, &unused, &size);
        void *p = o->alloc(s->ctx, size);
        if (p == NULL)
            s->refused++;
        else
            rl_touch(p, k);
        s->slot[k] = p;
    }
}

/* Pass 2 (throughput): n replacements between two clock reads and no clock
 * inside. Returns the loop's ticks. */
RL_ALWAYS_INLINE uint64_t rl_throughput(const rl_ops *o, rl_loop *s, uint64_t n)
{
    uint64_t t0 = clock_ticks(s->clk);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k;
        size_t size;
        rl_draw(s, &k, &size);
        o->free(s->ctx, s->slot[k]);
        void *p = o->alloc(s->ctx, size);
        if (RL_UNLIKELY(p == NULL))
            s->refused++;
        else
            rl_touch(p, i);
        s->slot[k] = p;
    }
    return clock_ticks(s->clk) - t0;
}

/* Pass 3 (latency): n replacements with a clock read before the free,
 * between free and alloc (+touch) and after; each sample has the clock cost
 * subtracted and goes into its histogram. */
RL_ALWAYS_INLINE void rl_latency(const rl_ops *o, rl_loop *s, uint64_t n, hist *ha, hist *hf)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k;
        size_t size;
        rl_draw(s, &k, &size);
        uint64_t t0 = clock_ticks(s->clk);
        o->free(s->ctx, s->slot[k]);
        uint64_t t1 = clock_ticks(s->clk);
        void *p = o->alloc(s->ctx, size);
        if (p != NULL)
            rl_touch(p, i);
        uint64_t t2 = clock_ticks(s->clk);
        if (RL_UNLIKELY(p == NULL))
            s->refused++;
        s->slot[k] = p;
        hist_add(hf, clock_net(s->clk, t0, t1));
        hist_add(ha, clock_net(s->clk, t1, t2));
    }
}

/* Frees every slot (untimed); an empty slot frees NULL, which both APIs
 * accept. */
RL_ALWAYS_INLINE void rl_drain(const rl_ops *o, rl_loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        o->free(s->ctx, s->slot[k]);
        s->slot[k] = NULL;
    }
}

#endif /* RTM_LAB_RANDOM_LOOP_H */
