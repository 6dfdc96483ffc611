// SPDX-License-Identifier: MIT
/*
 * tests/common/region.c -- guarded and sparse regions for the tests (see
 * region.h for why each kind exists; region_malloc.c has the malloc'd
 * ones). POSIX mmap/mprotect.
 */
#include "region.h"

#include "../tracking/track_test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

size_t region_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096u;
}

guarded_region region_map_guarded(size_t pages, size_t lead)
{
    size_t page = region_page_size();
    size_t body = pages * page;
    guarded_region g;
    g.map_bytes = body + 2u * page;
    void *map = mmap(NULL, g.map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        perror("region_map_guarded: mmap");
        exit(EXIT_FAILURE);
    }
    g.map = map;
    if (mprotect(g.map, page, PROT_NONE) != 0 ||
        mprotect(g.map + page + body, page, PROT_NONE) != 0) {
        perror("region_map_guarded: mprotect");
        exit(EXIT_FAILURE);
    }
    g.mem = g.map + page + lead % page;
    g.bytes = body - lead % page;
    return g;
}

/* Mappings go back whole: in an ASan-tracked build a heap made on them and
 * not destroyed left them poisoned, and ASan does not clear poisoning on
 * munmap, so the next mapping at that address would inherit it. (A malloc'd
 * region needs nothing: ASan's malloc unpoisons what it hands out.) */
void region_unmap_guarded(guarded_region *g)
{
    if (g->map != NULL)
        TRACK_OPEN(g->mem, g->bytes);
    munmap(g->map, g->map_bytes);
    g->map = NULL;
    g->mem = NULL;
}

void *region_map_sparse(size_t bytes)
{
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return map == MAP_FAILED ? NULL : map;
}

void region_unmap(void *mem, size_t bytes)
{
    TRACK_OPEN(mem, bytes);
    munmap(mem, bytes);
}

int region_protect_none(void *mem, size_t bytes) { return mprotect(mem, bytes, PROT_NONE); }

int region_protect_rw(void *mem, size_t bytes)
{
    return mprotect(mem, bytes, PROT_READ | PROT_WRITE);
}
