// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_model.c -- the shared model rig (tests/model/
 * rig.h) over the thread-caching malloc's own API (rtm_malloc, rtm_malloc_free,
 * rtm_malloc_realloc, rtm_malloc_aligned_alloc, rtm_malloc_usable_size), with
 * rtm_malloc_check() as the allocator's check.
 *
 * What a malloc promises the rig (flags): realloc(p, 0) frees and returns
 * NULL with errno untouched (glibc's behaviour), and every refusal sets
 * ENOMEM. Alignment 16, no region bounds (memory comes from the OS), no
 * rtm_stats (a process-wide malloc has no fixed arena size for the rig's
 * arena_bytes invariant; tests/malloc/test_malloc_api.c checks its own
 * statistics). Not promised: shrinking in place for large blocks (a large
 * block shrunk below half moves, to give its pages back).
 *
 * realloc of a block from aligned_alloc: C has no aligned realloc, and
 * malloc's realloc keeps only the default alignment, while the rig checks
 * that realloc keeps the block's alignment (an rtmem heap promise). The
 * adapter therefore does what a C program must: it remembers the blocks it
 * got from aligned_alloc and reallocates those with aligned_alloc + copy +
 * free when they do not fit in place.
 *
 * The adapter refuses requests above the case's limit with ENOMEM, as a
 * bounded allocator would: the rig's "impossible" sizes include 4 GiB,
 * which a 64-bit malloc grants, and the rig would then fill it.
 *
 * Bands: small (blocks up to 4 KiB: size classes and caches), medium (up
 * to 256 KiB: page-heap runs, aligned runs), large (up to 16 MiB: page
 * runs grown and shrunk in place by realloc; huge mappings on 32-bit).
 * This file holds the adapter, the cases and the hooks; the model tests'
 * driver (tests/model/model_driver.c) runs them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "model/model_driver.h"
#include "rtmem/malloc.h"

static size_t limit;

/* Live blocks from aligned_alloc and their alignment (open addressing). */
#define ALIGNED_SLOTS 8192u
static struct {
    void *p;
    size_t align;
} aligned_set[ALIGNED_SLOTS];

static size_t slot_of(const void *p)
{
    size_t h = (size_t)((uintptr_t)p >> 4) * 2654435761u;
    for (size_t i = 0;; i++) {
        size_t k = (h + i) & (ALIGNED_SLOTS - 1u);
        if (aligned_set[k].p == p || aligned_set[k].p == NULL)
            return k;
    }
}
static void aligned_forget(const void *p)
{
    size_t k = slot_of(p);
    if (aligned_set[k].p != p)
        return;
    /* backward-shift deletion keeps every probe chain intact */
    aligned_set[k].p = NULL;
    for (size_t j = (k + 1u) & (ALIGNED_SLOTS - 1u); aligned_set[j].p != NULL;
         j = (j + 1u) & (ALIGNED_SLOTS - 1u)) {
        void *q = aligned_set[j].p;
        size_t a = aligned_set[j].align;
        aligned_set[j].p = NULL;
        size_t n = slot_of(q);
        aligned_set[n].p = q;
        aligned_set[n].align = a;
    }
}
static void aligned_remember(void *p, size_t align)
{
    size_t k = slot_of(p);
    aligned_set[k].p = p;
    aligned_set[k].align = align;
}

static void *m_alloc(void *ctx, size_t n)
{
    (void)ctx;
    if (n > limit) {
        errno = ENOMEM;
        return NULL;
    }
    return rtm_malloc(n);
}
static void *m_aligned(void *ctx, size_t a, size_t n)
{
    (void)ctx;
    if (n > limit) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = rtm_malloc_aligned_alloc(a, n);
    if (p != NULL)
        aligned_remember(p, a);
    return p;
}
static void *m_realloc(void *ctx, void *p, size_t n)
{
    (void)ctx;
    if (n > limit) {
        errno = ENOMEM;
        return NULL;
    }
    size_t k = slot_of(p);
    if (p == NULL || aligned_set[k].p != p)
        return rtm_malloc_realloc(p, n);
    size_t align = aligned_set[k].align, usable = rtm_malloc_usable_size(p);
    if (n == 0) {
        aligned_forget(p);
        return rtm_malloc_realloc(p, 0);
    }
    if (n <= usable)
        return p; /* fits: keep it (and its alignment) */
    void *q = rtm_malloc_aligned_alloc(align, n);
    if (q == NULL)
        return NULL;
    memcpy(q, p, usable);
    aligned_forget(p);
    rtm_malloc_free(p);
    aligned_remember(q, align);
    return q;
}
static int m_free(void *ctx, void *p)
{
    (void)ctx;
    aligned_forget(p);
    rtm_malloc_free(p);
    return 0;
}
static size_t m_usable(void *ctx, const void *p)
{
    (void)ctx;
    return rtm_malloc_usable_size(p);
}
static int m_check(void *ctx)
{
    (void)ctx;
    return rtm_malloc_check();
}

typedef struct model_case {
    const char *band;
    size_t max_request;
    size_t max_live;
    size_t max_alignment;
    size_t check_every;
    size_t steps;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 4096, 4096, 4096, 50, 60000, 3},
    {"small", 512, 2000, 256, 1, 20000, 1},
    {"medium", 256 * 1024, 1024, 65536, 100, 40000, 2},
    {"large", 16u << 20, 48, 1u << 20, 20, 2500, 2},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    memset(&h->ops, 0, sizeof h->ops);
    h->ops.name = "rtm_malloc";
    h->ops.alloc = m_alloc;
    h->ops.aligned_alloc = m_aligned;
    h->ops.realloc = m_realloc;
    h->ops.free = m_free;
    h->ops.usable_size = m_usable;
    h->ops.check = m_check;
    h->ops.alignment = RTM_MALLOC_ALIGN;
    h->ops.flags = RIG_REALLOC_ZERO_FREES | RIG_ERRNO_ENOMEM;
    limit = c->max_request * 2u;
    h->cfg.max_live = c->max_live;
    h->cfg.max_request = c->max_request;
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    h->cfg.sweep_every = 1000;
    snprintf(h->what, sizeof h->what, "%s, up to %zu B", c->band, c->max_request);
}

/* The run must have reached the states it is for (beyond an ENOMEM and a
 * free-all). */
static int weak(size_t index, const model_heap *h, const rig_result *res)
{
    (void)index;
    (void)h;
    return res->realloc_moved == 0 || res->realloc_inplace == 0 || res->aligned_allocs == 0;
}

/* After a passing run: the allocator checks clean and holds nothing. */
static int destroy(size_t index, model_heap *h, int rc)
{
    (void)index;
    (void)h;
    if (rc == 0 && rtm_malloc_check() != 0) {
        printf("  rtm_malloc_check failed after the run\n");
        rc = 1;
    }
    rtm_malloc_stats_t st = rtm_malloc_stats();
    if (rc == 0 && st.in_use_bytes != 0) {
        printf("  %zu bytes still in use after freeing everything\n", st.in_use_bytes);
        rc = 1;
    }
    return rc;
}

MODEL_CASES_INFO

const model_entry model_test = {.count = CASE_COUNT,
                                .info = cases_info,
                                .seed_base = 9000u,
                                .create = create,
                                .weak = weak,
                                .destroy = destroy};
