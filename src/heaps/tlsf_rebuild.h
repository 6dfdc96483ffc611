// SPDX-License-Identifier: MIT
/*
 * heaps/tlsf_rebuild.h -- crash recovery for a TLSF heap: undo records of
 * block headers, and the rebuild of every derived structure from a
 * physical walk. Internal (the process-shared heap, src/shared/, is its
 * user); freestanding like the rest of the TLSF core.
 *
 * The idea, in one paragraph. A pool's block structure is fully described
 * by the header words met on the walk from the pool's first block to its
 * sentinel (span and FREE bit); everything else -- free-list links, list
 * heads, bitmaps, footers, PREV_FREE bits, counters -- can be recomputed
 * from that walk. An operation that is interrupted half-way has changed
 * some header words and some derived data. If, before the operation, the
 * caller saved every header word the operation may change *at a block that
 * exists before the operation* (an "undo set", at most 7 words, computed in
 * O(1) from the same state the operation will see), then restoring those
 * words gives back the pre-operation walk: words the operation wrote
 * anywhere else lie inside blocks of the old walk (a split tail inside the
 * block it was cut from, a merged neighbour's header inside the merged
 * block) and are never read by it. rtm_tlsf_rebuild() then recomputes the
 * rest. See docs/SHARED.md for the argument per operation.
 */
#ifndef RTM_HEAPS_TLSF_REBUILD_H
#define RTM_HEAPS_TLSF_REBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "rtmem/tlsf.h"

/* Header words an operation may change at pre-existing blocks: alloc 3
 * candidates; free 4 (predecessor, block, successor, the one after);
 * realloc both. */
#define RTM_TLSF_UNDO_SLOTS 8u

typedef struct rtm_tlsf_undo_slot {
    int64_t off;   /* payload offset of the block from the control */
    uint32_t word; /* its header word before the operation         */
    uint32_t unused;
} rtm_tlsf_undo_slot;

typedef struct rtm_tlsf_undo {
    uint32_t count;
    uint32_t unused;
    rtm_tlsf_undo_slot slot[RTM_TLSF_UNDO_SLOTS];
} rtm_tlsf_undo;

/* Each adds to u the header words the named operation may change (u->count
 * must be set by the caller first, usually to 0). They read the heap only,
 * in O(1) (O(pools) to bound addresses), and never follow a link out of the
 * pools: a bad `ptr` yields fewer slots, not a fault. */
void rtm_tlsf_undo_alloc(const rtm_tlsf *t, size_t align, size_t size, rtm_tlsf_undo *u);
void rtm_tlsf_undo_free(const rtm_tlsf *t, const void *ptr, rtm_tlsf_undo *u);
void rtm_tlsf_undo_realloc(const rtm_tlsf *t, const void *ptr, size_t size, rtm_tlsf_undo *u);

/* Writes the saved header words back (slots outside every pool are
 * skipped). Idempotent. */
void rtm_tlsf_undo_apply(rtm_tlsf *t, const rtm_tlsf_undo *u);

/* Recomputes everything but the header words' spans and FREE bits: merges
 * adjacent free blocks, rewrites PREV_FREE bits, footers and the sentinels,
 * rebuilds the free lists (each list's largest block at its head) and bitmaps, and the
 * used, live and free counters (the peak is raised to the use if below it;
 * failed allocations and the largest alignment are kept; the grow function
 * is cleared, as a segment's must be). Returns 0, or -1
 * when a pool's walk is broken (a span out of range: not repairable from
 * the headers), leaving the heap untouched past that pool. O(blocks);
 * idempotent, so an interrupted rebuild is simply run again. */
int rtm_tlsf_rebuild(rtm_tlsf *t);

/* 1 when every pool record the control names, and each pool's end, lies in
 * [t, t + bytes); 0 otherwise (also for a pool list that loops). Checked
 * with integer arithmetic before any pointer is formed: what crash recovery
 * runs before it trusts the pool list of a segment another process wrote
 * (undo_apply and rebuild follow that list). O(pools). */
int rtm_tlsf_pools_within(const rtm_tlsf *t, size_t bytes);

/* Number of free blocks (stats of heaps that wrap TLSF blocks). O(1). */
size_t rtm_tlsf_free_count(const rtm_tlsf *t);

/* 1 when ptr is 8-aligned and lies inside a pool of t with room for a
 * minimum block (integer compares only). O(pools). */
int rtm_tlsf_in_pool(const rtm_tlsf *t, const void *ptr);

#endif /* RTM_HEAPS_TLSF_REBUILD_H */
