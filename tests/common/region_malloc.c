// SPDX-License-Identifier: MIT
/*
 * tests/common/region_malloc.c -- the regions from malloc (region.h), in a
 * file of their own: plain C, so the firmware images (tests/firmware/)
 * use them as they are, while region.c's guarded and sparse regions need
 * mmap.
 */
#include "region.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

test_region region_malloc(size_t bytes, size_t misalign)
{
    test_region r;
    /* 64 bytes of slack to move the start to the wanted residue mod 64,
     * plus 64 so that even misalign 63 leaves `bytes` inside the block. */
    r.raw = malloc(bytes + 128u);
    if (r.raw == NULL) {
        fprintf(stderr, "region_malloc: malloc(%zu) failed\n", bytes + 128u);
        exit(EXIT_FAILURE);
    }
    uintptr_t base = ((uintptr_t)r.raw + 63u) & ~(uintptr_t)63u;
    r.mem = (unsigned char *)r.raw + (base - (uintptr_t)r.raw) + (misalign % 64u);
    r.bytes = bytes;
    return r;
}

void region_free(test_region *r)
{
    free(r->raw);
    r->raw = NULL;
    r->mem = NULL;
    r->bytes = 0;
}
