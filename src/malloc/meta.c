// SPDX-License-Identifier: MIT
/*
 * malloc/meta.c -- memory for the allocator's own records: span records,
 * thread caches, transfer-cache arrays. It cannot come from malloc (we are
 * malloc), so it is carved with a bump pointer from 1 MiB OS chunks and
 * never returned; span records are recycled through a free list, thread
 * caches through the registry's free list (tcache.c).
 *
 * In real-time mode one region is mapped, pre-faulted and locked up front
 * (rtmm_meta_reserve) and every later request is carved from it; when it is
 * used up a request fails instead of calling the OS.
 *
 * Lock: meta_lock, innermost of all (taken under the heap lock).
 */
#include <string.h>

#include "malloc/internal.h"
#include "os/pages.h"

#define META_CHUNK ((size_t)1 << 20)

static rtmm_lock meta_lock;
static char *bump, *bump_end;
static size_t meta_total;
static int meta_fixed; /* real-time: no more chunks */
static span *free_spans;

static void *carve(size_t bytes)
{
    bytes = (bytes + 63u) & ~(size_t)63u;
    if ((size_t)(bump_end - bump) < bytes) {
        if (meta_fixed)
            return NULL;
        size_t chunk =
            bytes > META_CHUNK ? (bytes + META_CHUNK - 1u) & ~(META_CHUNK - 1u) : META_CHUNK;
        char *p = rtm_os_map(chunk);
        if (p == NULL)
            return NULL;
        meta_total += chunk;
        bump = p;
        bump_end = p + chunk;
    }
    void *r = bump;
    bump += bytes;
    return r;
}

void *rtmm_meta_alloc(size_t bytes)
{
    lock_take(&meta_lock);
    void *p = carve(bytes);
    lock_give(&meta_lock);
    return p;
}

span *rtmm_span_new(void)
{
    lock_take(&meta_lock);
    span *s = free_spans;
    if (s != NULL)
        free_spans = s->next;
    else
        s = carve(sizeof(span));
    lock_give(&meta_lock);
    if (s != NULL)
        memset(s, 0, sizeof *s);
    return s;
}

void rtmm_span_delete(span *s)
{
    lock_take(&meta_lock);
    s->next = free_spans;
    free_spans = s;
    lock_give(&meta_lock);
}

int rtmm_meta_reserve(size_t bytes)
{
    bytes = (bytes + META_CHUNK - 1u) & ~(META_CHUNK - 1u);
    char *p = rtm_os_map(bytes);
    if (p == NULL)
        return -1;
    (void)rtm_os_prefault_lock(p, bytes);
    lock_take(&meta_lock);
    meta_total += bytes;
    bump = p;
    bump_end = p + bytes;
    meta_fixed = 1;
    lock_give(&meta_lock);
    return 0;
}

size_t rtmm_meta_bytes(void) { return meta_total; }

void rtmm_meta_fork_lock(int take)
{
    if (take > 0)
        lock_take(&meta_lock);
    else if (take == 0)
        lock_give(&meta_lock);
    else
        lock_reset(&meta_lock);
}
