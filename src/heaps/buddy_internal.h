// SPDX-License-Identifier: MIT
/*
 * heaps/buddy_internal.h -- what heaps/slab.c asks of the buddy heap beyond
 * its public API (include/rtmem/buddy.h). Internal to src/heaps/.
 *
 * The public rtm_buddy_usable_size() validates its pointer as
 * rtm_buddy_free() does and reports one that is not a live block (the
 * contract of include/rtmem.h). The slab also asks about pages it did not
 * get from the caller: the buddy page of a slab it may cache, its own slab
 * pages in its check. There "no live block" is an answer, not misuse, so it
 * needs the same lookup without the report.
 */
#ifndef RTM_HEAPS_BUDDY_INTERNAL_H
#define RTM_HEAPS_BUDDY_INTERNAL_H

#include <stddef.h>

#include "rtmem/buddy.h"

/* page << order of the live block ptr starts; 0 for anything else, nothing
 * reported and errno untouched. Reads the page map only for a page of the
 * arena. O(1). */
size_t rtm_buddy_live_bytes(const rtm_buddy *b, const void *ptr);

#endif /* RTM_HEAPS_BUDDY_INTERNAL_H */
