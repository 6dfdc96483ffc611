// SPDX-License-Identifier: MIT
/*
 * region.c -- pre-faulted measurement regions (region.h says why every page
 * is written after MAP_POPULATE).
 */
#include "common/region.h"

#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

void *region_prefaulted(uint64_t bytes)
{
    void *m = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    long page = sysconf(_SC_PAGESIZE);
    size_t step = page > 0 ? (size_t)page : 4096u;
    /* volatile: a store of the zero already there is still a store. */
    volatile unsigned char *p = m;
    for (size_t off = 0; off < (size_t)bytes; off += step)
        p[off] = 0;
    return m;
}
