// SPDX-License-Identifier: MIT
/*
 * region.h -- the memory region an rtm heap runs over in a measurement:
 * mapped, and every page present and written before any clock starts.
 *
 * Written, not only populated: MAP_POPULATE makes the guest kernel map every
 * page, but on a virtual machine whose host backs guest memory lazily the
 * first write to each page still traps to the host, a cost the guest's
 * fault counters never see (measured on the CI machine kind: 7.5 us per page
 * after MAP_POPULATE alone, 27 ns after a write to each page). A benchmark
 * that skips the write times the host, not the heap, as soon as its blocks
 * reach pages not written before (docs/METHODS.md, "Pre-faulted regions").
 */
#ifndef RTM_LAB_REGION_H
#define RTM_LAB_REGION_H

#include <stdint.h>

/* A private anonymous region of bytes, every page written once (zeroes, so
 * the contents are what mmap gives). NULL with errno when mmap fails. */
void *region_prefaulted(uint64_t bytes);

#endif /* RTM_LAB_REGION_H */
