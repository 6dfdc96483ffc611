// SPDX-License-Identifier: MIT
/*
 * memcheck_heap.c -- the heap of one memcheck run: which heap is created,
 * over how large an arena, and how it is torn down (memcheck.h).
 *
 * The method (docs/METHODS.md) wants a heap that offers heap_size usable
 * bytes and not much more (more would flatter OVRH%), which is what Xenomai's
 * get_arena_size() gives each of its heaps. Our equivalent, per kind:
 *
 *   general heaps (tlsf, buddy, halffit, slab, heapmem, xvmalloc, pshared):
 *     the smallest region (multiple of 8) whose fresh heap reports
 *     free_bytes >= heap_size, found by galloping up from heap_size and
 *     bisecting; computed once per heap size and cached. For TLSF a fresh
 *     heap is one free block, so this is also largest_free >= heap_size.
 *   a fixed-block pool ("pool" without a size):
 *     each run gets "pool:<block>" over the region that holds exactly
 *     floor(heap_size / stride) blocks (stride = the block rounded up to 8),
 *     so the pool never offers more than heap_size bytes for that block
 *     size; a pool with a size given ("pool:64") is sized like a general
 *     heap and refuses larger requests (its rows then say FAILED).
 *   pshared: the heap lives in a POSIX shared-memory object created for the
 *     run (rtm_shared_create) and unlinked after it, as an application using
 *     a process-shared heap would; the arena is that object's size.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memcheck/memcheck.h"
#include "rtmem/pool.h"
#if __has_include("rtmem/shared.h")
#include "rtmem/shared.h"
#define MC_HAVE_SHARED 1
#else
#define MC_HAVE_SHARED 0
#endif

int mc_is_pshared(const char *algorithm) { return strcmp(algorithm, "pshared") == 0; }

static int per_block_pool(const char *algorithm) { return strcmp(algorithm, "pool") == 0; }

#if MC_HAVE_SHARED
/* The name of the shared-memory object of this process's runs. */
static const char *shm_name(void)
{
    static char name[64];
    if (name[0] == '\0')
        snprintf(name, sizeof name, "/rtmem-memcheck-%ld", (long)getpid());
    return name;
}
#endif

static rtm_heap *create(mc_ctx *c, const char *algorithm, size_t region)
{
    if (mc_is_pshared(algorithm)) {
#if MC_HAVE_SHARED
        rtm_shared_unlink(shm_name());
        return rtm_shared_create(shm_name(), region, "tlsf");
#else
        errno = ENOTSUP;
        return NULL;
#endif
    }
    return rtm_heap_create(algorithm, c->buf, region);
}

void mc_heap_close(mc_ctx *c, rtm_heap *h)
{
    (void)c;
#if MC_HAVE_SHARED
    if (mc_is_pshared(c->algorithm)) {
        rtm_shared_close(h);
        rtm_shared_unlink(shm_name());
        return;
    }
#endif
    rtm_heap_destroy(h);
}

/* xvmalloc's fresh heap is one free block per page, each a page minus its
 * 8-byte header: its pages, headers included, must cover heap_size (as
 * heapmem's and buddy's pages do, which have no header). Counting payloads
 * alone would add a page whenever heap_size is not a multiple of the
 * payload, and the "too many blocks" check would refuse most runs. */
static int paged_with_headers(const char *algorithm)
{
    return strncmp(algorithm, "xvmalloc", 8) == 0;
}

static void count_free(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    if (!used)
        ++*(size_t *)arg;
}

/* Whether a fresh heap over `region` bytes offers heap_size; *usable gets
 * its free_bytes (0 when the heap cannot be created). */
static int region_gives(mc_ctx *c, size_t region, size_t heap_size, size_t *usable)
{
    rtm_heap *h = create(c, c->algorithm, region);
    *usable = 0;
    if (h == NULL)
        return 0;
    *usable = rtm_heap_stats(h).free_bytes;
    size_t headers = 0;
    if (paged_with_headers(c->algorithm) && rtm_heap_walk(h, count_free, &headers) == 0)
        headers *= 8u;
    else
        headers = 0;
    mc_heap_close(c, h);
    return *usable + headers >= heap_size;
}

/* Smallest multiple of 8 in (lo, hi] that gives heap_size; hi gives it. */
static size_t bisect(mc_ctx *c, size_t lo, size_t hi, size_t heap_size)
{
    size_t usable;
    while (hi - lo > 8) {
        size_t mid = lo + ((hi - lo) / 2 & ~(size_t)7);
        if (region_gives(c, mid, heap_size, &usable))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

static const mc_arena *general_arena(mc_ctx *c, size_t heap_size)
{
    for (size_t i = 0; i < c->narenas; i++)
        if (c->arenas[i].heap_size == heap_size)
            return &c->arenas[i];
    if (c->narenas == sizeof c->arenas / sizeof c->arenas[0]) {
        snprintf(c->why, sizeof c->why, "too many heap sizes");
        return NULL;
    }
    size_t region = (heap_size + 7u) & ~(size_t)7, step = 8, failed = 0, usable;
    while (!region_gives(c, region, heap_size, &usable)) {
        failed = region;
        region += step;
        step *= 2;
        if (region > c->buf_size) {
            snprintf(c->why, sizeof c->why, "no region up to %zu bytes offers %zu usable bytes",
                     c->buf_size, heap_size);
            return NULL;
        }
    }
    if (failed != 0)
        region = bisect(c, failed, region, heap_size);
    region_gives(c, region, heap_size, &usable);
    mc_arena *a = &c->arenas[c->narenas++];
    a->heap_size = heap_size;
    a->arena = region;
    a->usable = usable;
    return a;
}

static rtm_heap *open_pool(mc_ctx *c, size_t heap_size, size_t block_size)
{
    size_t stride = rtm_pool_block_size_for(block_size);
    size_t count = stride != 0 ? heap_size / stride : 0;
    size_t region = count != 0 ? rtm_pool_region_for(count, block_size) : 0;
    if (region == 0 || region > c->buf_size) {
        snprintf(c->why, sizeof c->why, "no pool of %zu-byte blocks fits a %zu-byte heap",
                 block_size, heap_size);
        return NULL;
    }
    snprintf(c->run_algorithm, sizeof c->run_algorithm, "pool:%zu", block_size);
    rtm_heap *h = rtm_heap_create(c->run_algorithm, c->buf, region);
    if (h == NULL)
        snprintf(c->why, sizeof c->why, "rtm_heap_create(\"%s\") over %zu bytes failed (errno %d)",
                 c->run_algorithm, region, errno);
    return h;
}

rtm_heap *mc_heap_open(mc_ctx *c, size_t heap_size, size_t block_size)
{
    if (per_block_pool(c->algorithm))
        return open_pool(c, heap_size, block_size);
    const mc_arena *a = general_arena(c, heap_size);
    if (a == NULL)
        return NULL;
    rtm_heap *h = create(c, c->algorithm, a->arena);
    if (h == NULL)
        snprintf(c->why, sizeof c->why, "creating '%s' over %zu bytes failed (errno %d)",
                 c->algorithm, a->arena, errno);
    return h;
}

const char *mc_sizing_rule(const char *algorithm)
{
    if (per_block_pool(algorithm))
        return "per run: \"pool:<block>\" holding exactly floor(HEAPSZ / stride) blocks";
    if (mc_is_pshared(algorithm))
        return "the smallest shared-memory object whose fresh heap offers free_bytes >= HEAPSZ";
    if (paged_with_headers(algorithm))
        return "the smallest region whose fresh heap's pages (free_bytes + an 8-byte header "
               "per page) cover HEAPSZ";
    return "the smallest region whose fresh heap offers free_bytes >= HEAPSZ";
}
