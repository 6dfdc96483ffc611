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
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "../common/check.h"
#include "model/rig.h"
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

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_case *c = &cases[index];
    rig_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.name = "rtm_malloc";
    ops.alloc = m_alloc;
    ops.aligned_alloc = m_aligned;
    ops.realloc = m_realloc;
    ops.free = m_free;
    ops.usable_size = m_usable;
    ops.check = m_check;
    ops.alignment = RTM_MALLOC_ALIGN;
    ops.flags = RIG_REALLOC_ZERO_FREES | RIG_ERRNO_ENOMEM;
    limit = c->max_request * 2u;

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, c->band, index);
    rig_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.seed = seed;
    cfg.steps = steps;
    cfg.max_live = c->max_live;
    cfg.max_request = c->max_request;
    cfg.max_alignment = c->max_alignment;
    cfg.check_every = c->check_every;
    cfg.sweep_every = 1000;
    cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&ops, &cfg, &res);
    char label[200];
    snprintf(label, sizeof label, "case %zu [%s, up to %zu B, seed %llu] %s %.2fs", index, c->band,
             c->max_request, (unsigned long long)seed, rc == 0 ? "ok" : "FAIL",
             check_now_seconds() - t0);
    if (verbose || rc != 0)
        rig_print_result(label, &res);
    else
        printf("%s\n", label);
    /* The run must have reached the states it is for. */
    if (rc == 0 && (res.free_alls == 0 || res.realloc_moved == 0 || res.realloc_inplace == 0 ||
                    res.aligned_allocs == 0 || res.enomem == 0)) {
        rig_print_result("  weak coverage", &res);
        rc = 1;
    }
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

static rig_case_info case_info(size_t index)
{
    rig_case_info info = {cases[index].band, cases[index].steps, cases[index].seeds};
    return info;
}

int main(int argc, char **argv)
{
    static const rig_suite suite = {CASE_COUNT, case_info, 9000u, run_case};
    return rig_main(argc, argv, &suite);
}
