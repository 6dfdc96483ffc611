// SPDX-License-Identifier: MIT
/*
 * tests/model/rig_rtmem.h -- rig_ops for rtmem's own heaps: the generic API
 * (rtm_heap_*) and the typed APIs (rtm_tlsf_*, rtm_pool_*, rtm_buddy_*,
 * rtm_halffit_*, rtm_heapmem_*, rtm_slab_*), each with the flags saying
 * what that heap promises the rig. Every test that runs the rig over an
 * rtmem heap builds its ops here, so the adapters exist once; other
 * allocators (a malloc replacement, the benchmark's peers) write their own
 * rig_ops the same way.
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

/* The binary buddy: the whole rtmem contract (exact stats and largest_free,
 * full coalescing, realloc(p, 0) frees, ENOMEM, exact walk, shrink in
 * place), RIG_LARGEST_IS_BIGGEST (every free block can be allocated whole:
 * largest_free is page << the highest non-empty order) and
 * RIG_ALIGN_ENOTSUP (alignments above the arena start's alignment or the
 * largest block). Alignment: the page size; overhead 0 (no header). */
rig_ops rig_ops_buddy(rtm_buddy *b);

/* Half-fit: the whole rtmem contract. Not RIG_LARGEST_IS_BIGGEST:
 * largest_free is what alloc grants, (MIN_BLOCK << c) - header for the
 * highest non-empty class c, and a free block of that class may hold up to
 * twice as much. Every alignment the rig draws (up to 4096) is served, so
 * no RIG_ALIGN_ENOTSUP. Plain payloads are 16-aligned; the overhead is the
 * 16-byte header. */
rig_ops rig_ops_halffit(rtm_halffit *h);

/* heapmem: the whole rtmem contract (the walk gives bucket slots and
 * ranges) and RIG_ALIGN_ENOTSUP (alignments above the page size). Not
 * RIG_LARGEST_IS_BIGGEST: largest_free is the head range of the top range
 * list, which may be shorter than another range of that list. Alignment 16
 * (the smallest bucket); overhead 0 (no header). */
rig_ops rig_ops_heapmem(rtm_heapmem *h);

/* The slab: exact stats, realloc(p, 0) frees, ENOMEM, exact walk (object
 * slots and buddy blocks), shrink in place, ENOTSUP for alignments the
 * arena can never give, and coalescing (an empty slab is cached only where
 * it cannot split the buddy's largest blocks, so freeing everything
 * restores free_bytes and largest_free). Not RIG_LARGEST_FREE_EXACT: with
 * the buddy exhausted, largest_free is the largest class with a free slot,
 * while a smaller class may be full. Alignment 8; overhead 0. */
rig_ops rig_ops_slab(rtm_slab *s);

#endif /* RTM_TESTS_RIG_RTMEM_H */
