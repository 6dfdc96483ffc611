// SPDX-License-Identifier: MIT
/*
 * tests/model/rig_rtmem.c -- the rig adapters for rtmem heaps (see
 * rig_rtmem.h). Thin on purpose: anything more than a call would be logic
 * the rig does not verify.
 */
#include "rig_rtmem.h"

#include <string.h>

static void *gen_alloc(void *ctx, size_t n) { return rtm_alloc(ctx, n); }
static void *gen_aligned(void *ctx, size_t a, size_t n) { return rtm_aligned_alloc(ctx, a, n); }
static void *gen_realloc(void *ctx, void *p, size_t n) { return rtm_realloc(ctx, p, n); }
static int gen_free(void *ctx, void *p)
{
    rtm_free(ctx, p); /* void: a rejected free shows in stats and check */
    return 0;
}
static size_t gen_usable(void *ctx, const void *p) { return rtm_usable_size(ctx, p); }
static void gen_stats(void *ctx, rtm_stats *out) { *out = rtm_heap_stats(ctx); }
static int gen_check(void *ctx) { return rtm_heap_check(ctx); }
static int gen_walk(void *ctx, rig_visit v, void *arg) { return rtm_heap_walk(ctx, v, arg); }

static void *typ_alloc(void *ctx, size_t n) { return rtm_tlsf_alloc(ctx, n); }
static void *typ_aligned(void *ctx, size_t a, size_t n)
{
    return rtm_tlsf_aligned_alloc(ctx, a, n);
}
static void *typ_realloc(void *ctx, void *p, size_t n) { return rtm_tlsf_realloc(ctx, p, n); }
static int typ_free(void *ctx, void *p) { return rtm_tlsf_free(ctx, p); }
static size_t typ_usable(void *ctx, const void *p)
{
    (void)ctx;
    return rtm_tlsf_usable_size(p);
}
static void typ_stats(void *ctx, rtm_stats *out) { *out = rtm_tlsf_stats(ctx); }
static int typ_check(void *ctx) { return rtm_tlsf_check(ctx); }
static int typ_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_tlsf_walk(ctx, v, arg);
    return 0;
}

static void *pool_alloc(void *ctx, size_t n) { return rtm_pool_alloc(ctx, n); }
static void *pool_aligned(void *ctx, size_t a, size_t n)
{
    return rtm_pool_aligned_alloc(ctx, a, n);
}
static void *pool_realloc(void *ctx, void *p, size_t n) { return rtm_pool_realloc(ctx, p, n); }
static int pool_free(void *ctx, void *p) { return rtm_pool_free(ctx, p); }
static size_t pool_usable(void *ctx, const void *p) { return rtm_pool_usable_size(ctx, p); }
static void pool_stats(void *ctx, rtm_stats *out) { *out = rtm_pool_stats(ctx); }
static int pool_check(void *ctx) { return rtm_pool_check(ctx); }
static int pool_walk(void *ctx, rig_visit v, void *arg)
{
    rtm_pool_walk(ctx, v, arg);
    return 0;
}

static rig_ops rtmem_defaults(void *ctx, const char *name)
{
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = name;
    ops.ctx = ctx;
    ops.alignment = RTM_ALIGN;
    ops.block_overhead = RTM_TLSF_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT;
    return ops;
}

rig_ops rig_ops_heap(rtm_heap *h)
{
    rig_ops ops = rtmem_defaults(h, "tlsf");
    ops.alloc = gen_alloc;
    ops.aligned_alloc = gen_aligned;
    ops.realloc = gen_realloc;
    ops.free = gen_free;
    ops.usable_size = gen_usable;
    ops.stats = gen_stats;
    ops.check = gen_check;
    ops.walk = gen_walk;
    return ops;
}

rig_ops rig_ops_tlsf(rtm_tlsf *t)
{
    rig_ops ops = rtmem_defaults(t, "tlsf typed");
    ops.alloc = typ_alloc;
    ops.aligned_alloc = typ_aligned;
    ops.realloc = typ_realloc;
    ops.free = typ_free;
    ops.usable_size = typ_usable;
    ops.stats = typ_stats;
    ops.check = typ_check;
    ops.walk = typ_walk;
    return ops;
}

rig_ops rig_ops_pool_heap(rtm_heap *h)
{
    rig_ops ops = rig_ops_heap(h);
    ops.name = "pool";
    ops.block_overhead = RTM_POOL_HEADER_BYTES;
    ops.flags = RIG_POOL_CONTRACT;
    return ops;
}

rig_ops rig_ops_pool(rtm_pool *p)
{
    rig_ops ops = rtmem_defaults(p, "pool typed");
    ops.alloc = pool_alloc;
    ops.aligned_alloc = pool_aligned;
    ops.realloc = pool_realloc;
    ops.free = pool_free;
    ops.usable_size = pool_usable;
    ops.stats = pool_stats;
    ops.check = pool_check;
    ops.walk = pool_walk;
    ops.block_overhead = RTM_POOL_HEADER_BYTES;
    ops.flags = RIG_POOL_CONTRACT;
    return ops;
}
