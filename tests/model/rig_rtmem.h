// SPDX-License-Identifier: MIT
/*
 * tests/model/rig_rtmem.h -- rig_ops for rtmem's own heaps: the generic API
 * (rtm_heap_*), the typed TLSF API (rtm_tlsf_*) and the typed pool API
 * (rtm_pool_*). Every test that runs
 * the rig over an rtmem heap builds its ops here, so the adapters exist
 * once; other allocators (a malloc replacement, the benchmark's peers)
 * write their own rig_ops the same way.
 */
#ifndef RTM_TESTS_RIG_RTMEM_H
#define RTM_TESTS_RIG_RTMEM_H

#include "rig.h"
#include "rtmem.h"

/* Ops driving h through rtmem.h, promising the full rtmem contract; the
 * caller adds region bounds (ops.regions / region_count). */
rig_ops rig_ops_heap(rtm_heap *h);

/* The same through rtmem/tlsf.h. */
rig_ops rig_ops_tlsf(rtm_tlsf *t);

/* A "pool:<size>" heap through rtmem.h, promising what the pool promises
 * (RIG_POOL_CONTRACT: everything, no header, and ENOTSUP for alignments the
 * pool never gives). */
rig_ops rig_ops_pool_heap(rtm_heap *h);

/* The same through rtmem/pool.h. */
rig_ops rig_ops_pool(rtm_pool *p);

/* The fixed-block pool keeps the whole rtmem contract and more: its
 * largest_free is always the biggest free block (all blocks are one size),
 * and it refuses an alignment above its block alignment with ENOTSUP. */
#define RIG_POOL_CONTRACT (RIG_RTMEM_CONTRACT | RIG_LARGEST_IS_BIGGEST | RIG_ALIGN_ENOTSUP)

#endif /* RTM_TESTS_RIG_RTMEM_H */
