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

/* The typed APIs of the pool, buddy, half-fit, heapmem and slab heaps have
 * one shape (rtm_<heap>_alloc(h, n), ..., a void rtm_<heap>_walk): one
 * template writes the callbacks of each and <heap>_typed_ops(), which
 * fills them in over rtmem_defaults(). */
#define TYPED_ADAPTER(heap)                                                                        \
    static void *heap##_alloc(void *ctx, size_t n) { return rtm_##heap##_alloc(ctx, n); }          \
    static void *heap##_aligned(void *ctx, size_t a, size_t n)                                     \
    {                                                                                              \
        return rtm_##heap##_aligned_alloc(ctx, a, n);                                              \
    }                                                                                              \
    static void *heap##_realloc(void *ctx, void *p, size_t n)                                      \
    {                                                                                              \
        return rtm_##heap##_realloc(ctx, p, n);                                                    \
    }                                                                                              \
    static int heap##_free(void *ctx, void *p) { return rtm_##heap##_free(ctx, p); }               \
    static size_t heap##_usable(void *ctx, const void *p)                                          \
    {                                                                                              \
        return rtm_##heap##_usable_size(ctx, p);                                                   \
    }                                                                                              \
    static void heap##_stats(void *ctx, rtm_stats *out) { *out = rtm_##heap##_stats(ctx); }        \
    static int heap##_check(void *ctx) { return rtm_##heap##_check(ctx); }                         \
    static int heap##_walk(void *ctx, rig_visit v, void *arg)                                      \
    {                                                                                              \
        rtm_##heap##_walk(ctx, v, arg);                                                            \
        return 0;                                                                                  \
    }                                                                                              \
    static rig_ops heap##_typed_ops(void *ctx)                                                     \
    {                                                                                              \
        rig_ops ops = rtmem_defaults(ctx, #heap " typed");                                         \
        ops.alloc = heap##_alloc;                                                                  \
        ops.aligned_alloc = heap##_aligned;                                                        \
        ops.realloc = heap##_realloc;                                                              \
        ops.free = heap##_free;                                                                    \
        ops.usable_size = heap##_usable;                                                           \
        ops.stats = heap##_stats;                                                                  \
        ops.check = heap##_check;                                                                  \
        ops.walk = heap##_walk;                                                                    \
        return ops;                                                                                \
    }

TYPED_ADAPTER(pool)
TYPED_ADAPTER(buddy)
TYPED_ADAPTER(halffit)
TYPED_ADAPTER(heapmem)
TYPED_ADAPTER(slab)

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
    rig_ops ops = pool_typed_ops(p);
    ops.block_overhead = RTM_POOL_HEADER_BYTES;
    ops.flags = RIG_POOL_CONTRACT;
    return ops;
}

rig_ops rig_ops_buddy(rtm_buddy *b)
{
    rig_ops ops = buddy_typed_ops(b);
    ops.alignment = rtm_buddy_page_size(b);
    ops.block_overhead = RTM_BUDDY_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT | RIG_LARGEST_IS_BIGGEST | RIG_ALIGN_ENOTSUP;
    return ops;
}

rig_ops rig_ops_halffit(rtm_halffit *h)
{
    rig_ops ops = halffit_typed_ops(h);
    ops.alignment = 16u;
    ops.block_overhead = RTM_HALFFIT_HEADER_BYTES;
    return ops;
}

rig_ops rig_ops_heapmem(rtm_heapmem *h)
{
    rig_ops ops = heapmem_typed_ops(h);
    ops.alignment = RTM_HEAPMEM_MIN_BUCKET;
    ops.block_overhead = RTM_HEAPMEM_HEADER_BYTES;
    ops.flags = RIG_RTMEM_CONTRACT | RIG_ALIGN_ENOTSUP;
    return ops;
}

rig_ops rig_ops_slab(rtm_slab *s)
{
    rig_ops ops = slab_typed_ops(s);
    ops.block_overhead = 0;
    ops.flags = RIG_STATS_EXACT | RIG_REALLOC_ZERO_FREES | RIG_ERRNO_ENOMEM | RIG_WALK_EXACT |
                RIG_SHRINK_IN_PLACE | RIG_ALIGN_ENOTSUP | RIG_COALESCES;
    return ops;
}
