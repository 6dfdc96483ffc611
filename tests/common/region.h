// SPDX-License-Identifier: MIT
/*
 * tests/common/region.h -- the memory the tests hand to heaps.
 *
 * A heap manages memory the caller gives it, so the tests choose that memory
 * deliberately: from malloc at a chosen misalignment (a heap must accept any
 * start address), from mmap between PROT_NONE guard pages (any byte the heap
 * touches outside its region faults at once), or sparse (a 1 GiB reservation
 * with MAP_NORESERVE where only the pages the heap writes become real).
 *
 * Test code only: the library itself never calls the operating system.
 */
#ifndef RTM_TESTS_REGION_H
#define RTM_TESTS_REGION_H

#include <stddef.h>

/* A region from malloc: `mem` is `raw` plus the requested misalignment. */
typedef struct test_region {
    unsigned char *mem; /* what the heap gets                          */
    size_t bytes;       /* its length                                  */
    void *raw;          /* what to free()                              */
} test_region;

/* bytes at an address whose value modulo 64 is `misalign` (0..63). Exits
 * the test on allocation failure: no test can go on without its memory. */
test_region region_malloc(size_t bytes, size_t misalign);
void region_free(test_region *r);

/* `pages` pages from mmap between two PROT_NONE guard pages; the region
 * starts `lead` bytes (< page size) into the first page and ends flush with
 * the upper guard, so an underrun past the lower page and any overrun fault.
 * bytes = pages * page size - lead. */
typedef struct guarded_region {
    unsigned char *mem;
    size_t bytes;
    unsigned char *map; /* the whole mapping, guards included */
    size_t map_bytes;
} guarded_region;

guarded_region region_map_guarded(size_t pages, size_t lead);
void region_unmap_guarded(guarded_region *g);

/* A reservation of `bytes` (page multiple) with MAP_NORESERVE; only pages
 * that are written take memory. NULL if the system refuses the reservation
 * (the caller decides whether that skips or fails the test). */
void *region_map_sparse(size_t bytes);
void region_unmap(void *mem, size_t bytes);

/* mprotect wrappers on page-aligned ranges; return 0 or -1. */
int region_protect_none(void *mem, size_t bytes);
int region_protect_rw(void *mem, size_t bytes);

size_t region_page_size(void);

#endif /* RTM_TESTS_REGION_H */
