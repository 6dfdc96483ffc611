// SPDX-License-Identifier: MIT
/*
 * tests/tracking/buggy.c -- deliberately buggy users of rtm heaps, for
 * tests/tracking/expect_report.sh: each bug must be reported by valgrind
 * memcheck (RTMEM_VALGRIND=ON build) or AddressSanitizer (RTMEM_SANITIZE=
 * address build) in this, the user's, program; the "clean" twin does the
 * same allocations correctly and must be reported for nothing.
 *
 *   buggy --list            the heaps to try: every rtm_algorithms() name,
 *                           then "locked:tlsf" (a locked heap over TLSF)
 *   buggy HEAP overflow     writes one byte past a 13-byte block
 *   buggy HEAP overflow8    writes one byte past a 24-byte block (the byte
 *                           after a multiple of 8: ASan's granule edge)
 *   buggy HEAP uaf          reads a block after rtm_free
 *   buggy HEAP realloc-uaf  reads the old block after a moving rtm_realloc
 *                           (exit 77 where the block cannot move: pools)
 *   buggy HEAP leak         drops the last pointer to a live block
 *   buggy HEAP clean        the same calls, no bug: nothing to report
 *
 * The region is malloc'd and stays reachable (a global) in the buggy runs,
 * so the only block a leak check can find lost is the leaked rtm block.
 * Accesses go through volatile pointers so the compiler keeps them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtmem.h"
#include "rtmem/lock.h"

#define REGION_BYTES ((size_t)1 << 20)

/* malloc'd, as users typically do: past its end lies the malloc's redzone,
 * which both tools report too (halffit places its first blocks at the
 * region's top, so an overflow there leaves the region). */
static unsigned char *region;

/* Reachable from a root, so a leak check sees the heap itself as in use. */
static rtm_heap *heap;

static rtm_heap *open_heap(const char *name)
{
    if (strncmp(name, "locked:", 7) == 0)
        return rtm_locked_create(name + 7, region, REGION_BYTES);
    return rtm_heap_create(name, region, REGION_BYTES);
}

static void *must_alloc(size_t size)
{
    void *p = rtm_alloc(heap, size);
    if (p == NULL) {
        fprintf(stderr, "buggy: rtm_alloc(%zu) failed on %s\n", size, rtm_heap_algorithm(heap));
        exit(3);
    }
    memset(p, 0x5a, size);
    return p;
}

/* A write of `size` bytes and one more when `bug`. */
static void overflow(size_t size, int bug)
{
    volatile unsigned char *p = must_alloc(size);
    p[size - 1] = 1;
    if (bug)
        p[size] = 1; /* the bug: one past the end */
    rtm_free(heap, (void *)(uintptr_t)p);
}

static int use_after_free(int bug)
{
    volatile unsigned char *p = must_alloc(32);
    int v = p[5];
    rtm_free(heap, (void *)(uintptr_t)p);
    if (bug)
        v += p[5]; /* the bug: read after free */
    return v;
}

/* Grows a block past what fits in place (its neighbour is live), so the
 * heap moves it; the bug reads the old address. */
static int realloc_use(int bug)
{
    volatile unsigned char *p = must_alloc(40);
    void *fence = must_alloc(40);
    volatile unsigned char *q = rtm_realloc(heap, (void *)(uintptr_t)p, 4000);
    if (q == NULL || q == p) {
        /* A pool's blocks cannot grow: nothing moved, no stale pointer. */
        if (bug) {
            printf("buggy: realloc did not move the block here: not applicable\n");
            exit(77);
        }
        rtm_free(heap, q != NULL ? (void *)(uintptr_t)q : (void *)(uintptr_t)p);
        rtm_free(heap, fence);
        return 0;
    }
    q[3999] = 7;
    int v = q[39] + q[3999];
    if (bug)
        v += p[1]; /* the bug: the block moved, p is stale */
    rtm_free(heap, (void *)(uintptr_t)q);
    rtm_free(heap, fence);
    return v;
}

static void leak(int bug)
{
    void *p = must_alloc(40);
    if (!bug)
        rtm_free(heap, p);
    p = NULL; /* the bug, when kept: the block's last pointer is gone */
    (void)p;
}

static int list(void)
{
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        printf("%s\n", *a);
    printf("locked:tlsf\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0)
        return list();
    if (argc != 3) {
        fprintf(stderr, "usage: buggy --list | buggy HEAP "
                        "overflow|overflow8|uaf|realloc-uaf|leak|clean\n");
        return 2;
    }
    region = malloc(REGION_BYTES);
    heap = region != NULL ? open_heap(argv[1]) : NULL;
    if (heap == NULL) {
        fprintf(stderr, "buggy: cannot create heap %s\n", argv[1]);
        return 3;
    }
    const char *bug = argv[2];
    int clean = strcmp(bug, "clean") == 0, v = 0;
    void *keep = must_alloc(48); /* neighbours, so nothing is alone */
    if (clean || strcmp(bug, "overflow") == 0)
        overflow(13, !clean);
    if (clean || strcmp(bug, "overflow8") == 0)
        overflow(24, !clean);
    if (clean || strcmp(bug, "uaf") == 0)
        v += use_after_free(!clean);
    if (clean || strcmp(bug, "realloc-uaf") == 0)
        v += realloc_use(!clean);
    if (clean || strcmp(bug, "leak") == 0)
        leak(!clean);
    rtm_free(heap, keep);
    if (rtm_heap_check(heap) != 0) {
        fprintf(stderr, "buggy: rtm_heap_check failed\n");
        return 4;
    }
    if (clean) {
        rtm_heap_destroy(heap);
        free(region);
    }
    printf("buggy %s %s done (%d)\n", argv[1], bug, v & 1);
    return 0;
}
