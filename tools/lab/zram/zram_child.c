// SPDX-License-Identifier: MIT
/*
 * zram_child.c -- the child of `rtmem bench zram`: one allocator, one round,
 * every point (zram.h: the points, the line protocol, what "held" means).
 *
 * The loop is random_loop.h's (fill untimed, N replacements between two
 * clock reads, drain untimed), written again here over 64-bit tokens instead
 * of pointers because zsmalloc names objects by handle: its "alloc" is
 * rtm_zs_malloc + rtm_zs_map + write of the first byte + rtm_zs_unmap, the
 * access zram makes to store a page, where the others write the first byte
 * through the pointer. Each slot also keeps its request size, so that the
 * bytes stored are known exactly; that store is in every allocator's loop.
 * Every pass is always_inline with a constant ops table, so each allocator's
 * calls are direct (random_loop.h says why).
 *
 * After the timed loop, untimed, with the slots full: bytes stored (the
 * sizes), bytes held (zram.h), the heap's check; after the drain the leak
 * check (an rtm heap or pool back to zero live blocks).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/clock.h"
#include "common/prng.h"
#include "common/region.h"
#include "common/result_line.h"
#include "common/rt.h"
#include "rtmem.h"
#include "rtmem/zsmalloc.h"
#include "zram/zram.h"

#define ZC_INLINE static inline __attribute__((always_inline))

/* Writes one byte in every page [p, p + n) overlaps (its first byte, every
 * 4096th after, its last): memory a malloc maps lazily becomes resident and
 * is charged to it, in time and in RSS, as the object's contents would be.
 * At most n / 4096 + 2 stores, the same for every allocator. */
static inline __attribute__((always_inline)) void touch(unsigned char *p, size_t n, unsigned char v)
{
    volatile unsigned char *q = p;
    for (size_t off = 0; off < n; off += ZRAM_PAGE)
        q[off] = v;
    q[n - 1u] = v;
}

typedef struct zc_ops {
    uint64_t (*alloc)(void *ctx, size_t n, unsigned char v); /* 0: refused */
    void (*free)(void *ctx, uint64_t t);
} zc_ops;

static inline uint64_t heap_alloc(void *ctx, size_t n, unsigned char v)
{
    unsigned char *p = rtm_alloc(ctx, n);
    if (p != NULL)
        touch(p, n, v);
    return (uint64_t)(uintptr_t)p;
}
static inline void heap_free(void *ctx, uint64_t t) { rtm_free(ctx, (void *)(uintptr_t)t); }

static inline uint64_t libc_alloc(void *ctx, size_t n, unsigned char v)
{
    (void)ctx;
    unsigned char *p = malloc(n);
    if (p != NULL)
        touch(p, n, v);
    return (uint64_t)(uintptr_t)p;
}
static inline void libc_free(void *ctx, uint64_t t)
{
    (void)ctx;
    free((void *)(uintptr_t)t);
}

static inline uint64_t zs_alloc(void *ctx, size_t n, unsigned char v)
{
    rtm_zs_handle h = rtm_zs_malloc(ctx, n);
    if (h != 0) {
        touch(rtm_zs_map(ctx, h), n, v);
        rtm_zs_unmap(ctx, h);
    }
    return h;
}
static inline void zs_free(void *ctx, uint64_t t)
{
    if (t != 0) /* an empty slot: zsmalloc refuses handle 0 (reported) */
        rtm_zs_free(ctx, t);
}

static const zc_ops ops_heap = {heap_alloc, heap_free};
static const zc_ops ops_libc = {libc_alloc, libc_free};
static const zc_ops ops_zs = {zs_alloc, zs_free};

typedef struct zc_loop {
    uint64_t *tok;
    uint32_t *size;
    uint32_t nslots;
    uint32_t lo, span; /* window: lo + [0, span); span 0: the zram case */
    void *ctx;
    bench_rng rng;
    uint64_t refused;
    const bench_clock *clk;
} zc_loop;

/* The low 32 bits pick the slot, the high 32 the size. */
ZC_INLINE void zc_draw(zc_loop *s, uint32_t *k, uint32_t *size)
{
    uint64_t r = rng_next(&s->rng);
    uint32_t hi = (uint32_t)(r >> 32);
    *k = rng_scale32((uint32_t)r, s->nslots);
    *size = s->span != 0 ? s->lo + rng_scale32(hi, s->span) : zram_dist_size(hi);
}

ZC_INLINE void zc_put(const zc_ops *o, zc_loop *s, uint32_t k, uint32_t size, uint64_t i)
{
    uint64_t t = o->alloc(s->ctx, size, (unsigned char)i);
    if (__builtin_expect(t == 0, 0)) {
        s->refused++;
        size = 0;
    }
    s->tok[k] = t;
    s->size[k] = size;
}

ZC_INLINE void zc_fill(const zc_ops *o, zc_loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        uint32_t unused, size;
        zc_draw(s, &unused, &size);
        zc_put(o, s, k, size, k);
    }
}

ZC_INLINE uint64_t zc_timed(const zc_ops *o, zc_loop *s, uint64_t n)
{
    uint64_t t0 = clock_ticks(s->clk);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k, size;
        zc_draw(s, &k, &size);
        o->free(s->ctx, s->tok[k]);
        zc_put(o, s, k, size, i);
    }
    return clock_ticks(s->clk) - t0;
}

ZC_INLINE void zc_drain(const zc_ops *o, zc_loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        o->free(s->ctx, s->tok[k]);
        s->tok[k] = 0;
        s->size[k] = 0;
    }
}

static uint64_t stored_bytes(const zc_loop *s)
{
    uint64_t sum = 0;
    for (uint32_t k = 0; k < s->nslots; k++)
        sum += s->size[k];
    return sum;
}

/* --- bytes held, per kind ------------------------------------------------ */

typedef struct walk_ctx {
    zram_pageset set;
    uintptr_t base;
} walk_ctx;

static void walk_block(void *ptr, size_t usable, int used, void *arg)
{
    walk_ctx *w = arg;
    if (used)
        zram_pageset_mark(&w->set, (uint64_t)((uintptr_t)ptr - w->base), usable);
}

/* Pages holding live bytes of the heap over [mem, mem + region). */
static int heap_held(void *heap, void *mem, uint64_t region, uint64_t *bits, uint64_t *held)
{
    walk_ctx w = {{bits, (size_t)(region / ZRAM_PAGE), 0}, (uintptr_t)mem};
    memset(bits, 0, (w.set.npages + 63u) / 64u * sizeof *bits);
    if (rtm_heap_walk(heap, walk_block, &w) != 0)
        return -1;
    *held = (uint64_t)w.set.count * ZRAM_PAGE;
    return 0;
}

static int read_vmrss(uint64_t *kb)
{
    static char text[8192];
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    size_t n = fread(text, 1, sizeof text - 1u, f);
    fclose(f);
    text[n] = '\0';
    return zram_parse_vmrss(text, kb);
}

/* --- one point ----------------------------------------------------------- */

typedef struct child_env {
    const zram_opts *o;
    enum zram_kind kind;
    void *mem;
    uint64_t region;
    uint64_t *bits;   /* page set of the region (heaps) */
    uint64_t base_kb; /* VmRSS baseline (mallocs)        */
} child_env;

static __attribute__((noinline)) uint64_t point_heap(const child_env *e, zc_loop *s, zram_point *pt)
{
    zc_fill(&ops_heap, s);
    uint64_t ticks = zc_timed(&ops_heap, s, e->o->iterations);
    pt->stored = stored_bytes(s);
    if (heap_held(s->ctx, e->mem, e->region, e->bits, &pt->held) != 0)
        snprintf(pt->why, sizeof pt->why, "rtm_heap_walk failed (errno %d)", errno);
    else if (rtm_heap_check(s->ctx) != 0)
        snprintf(pt->why, sizeof pt->why, "rtm_heap_check failed with the slots full");
    zc_drain(&ops_heap, s);
    rtm_stats st = rtm_heap_stats(s->ctx);
    if (pt->why[0] == '\0' && st.live_blocks != 0)
        snprintf(pt->why, sizeof pt->why, "after the drain: %zu live blocks", st.live_blocks);
    return ticks;
}

static __attribute__((noinline)) uint64_t point_zs(const child_env *e, zc_loop *s, zram_point *pt)
{
    zc_fill(&ops_zs, s);
    uint64_t ticks = zc_timed(&ops_zs, s, e->o->iterations);
    pt->stored = stored_bytes(s);
    rtm_zs_stats st = rtm_zs_stats_get(s->ctx);
    pt->held = (uint64_t)st.pages_used * ZRAM_PAGE;
    if (st.bytes_stored != pt->stored)
        snprintf(pt->why, sizeof pt->why, "rtm_zs_stats bytes_stored %zu, the slots hold %llu",
                 st.bytes_stored, (unsigned long long)pt->stored);
    else if (rtm_zs_check(s->ctx) != 0)
        snprintf(pt->why, sizeof pt->why, "rtm_zs_check failed with the slots full");
    zc_drain(&ops_zs, s);
    st = rtm_zs_stats_get(s->ctx);
    if (pt->why[0] == '\0' && (st.objects != 0 || st.pages_used != 0))
        snprintf(pt->why, sizeof pt->why, "after the drain: %zu objects, %zu pages", st.objects,
                 st.pages_used);
    return ticks;
}

static __attribute__((noinline)) uint64_t point_libc(const child_env *e, zc_loop *s, zram_point *pt)
{
    zc_fill(&ops_libc, s);
    uint64_t ticks = zc_timed(&ops_libc, s, e->o->iterations);
    pt->stored = stored_bytes(s);
    uint64_t kb;
    if (read_vmrss(&kb) != 0)
        snprintf(pt->why, sizeof pt->why, "no VmRSS in /proc/self/status");
    else
        pt->held = zram_rss_growth(e->base_kb, kb);
    zc_drain(&ops_libc, s);
    return ticks;
}

/* Creates the point's heap or pool over the region; NULL for a malloc. */
static int open_ctx(const child_env *e, zc_loop *s, zram_point *pt)
{
    s->ctx = NULL;
    if (e->kind == ZK_HEAP)
        s->ctx = rtm_heap_create(e->o->child, e->mem, (size_t)e->region);
    else if (e->kind == ZK_ZSMALLOC)
        s->ctx = rtm_zs_create(e->mem, (size_t)e->region);
    else
        return 0;
    if (s->ctx != NULL)
        return 0;
    snprintf(pt->why, sizeof pt->why, "creating the %s over the region failed (errno %d)",
             e->kind == ZK_HEAP ? "heap" : "pool", errno);
    return -1;
}

static void print_point(size_t i, const zram_point *pt)
{
    printf("POINT\ti=%zu\tns_per_pair=%.4f\trefused=%llu\tok=%d\tstored=%llu\theld=%llu\twhy=%s\n",
           i, pt->ns_per_pair, (unsigned long long)pt->refused, pt->ok,
           (unsigned long long)pt->stored, (unsigned long long)pt->held, pt->why);
    fflush(stdout);
}

/* Runs point i (window i, or the zram case when i == nwin). Returns 0, or
 * -1 when the heap could not be created (the next would fail too). */
static int run_point(const child_env *e, zc_loop *s, size_t i, size_t nwin)
{
    zram_point pt;
    memset(&pt, 0, sizeof pt);
    if (i < nwin) {
        sweep_window w = sweep_window_at(e->o->sweep_step, i);
        s->lo = (uint32_t)w.lo;
        s->span = (uint32_t)(w.hi - w.lo);
    } else {
        s->lo = 0;
        s->span = 0;
    }
    s->refused = 0;
    rng_seed(&s->rng, sweep_window_seed(e->o->seed, i));
    if (open_ctx(e, s, &pt) != 0) {
        print_point(i, &pt);
        return -1;
    }
    uint64_t ticks = e->kind == ZK_HEAP       ? point_heap(e, s, &pt)
                     : e->kind == ZK_ZSMALLOC ? point_zs(e, s, &pt)
                                              : point_libc(e, s, &pt);
    if (e->kind == ZK_HEAP)
        rtm_heap_destroy(s->ctx);
    pt.ok = pt.why[0] == '\0';
    pt.refused = s->refused;
    pt.ns_per_pair = (double)ticks * e->o->child_tick_ns / (double)e->o->iterations;
    random_sanitise(pt.why);
    print_point(i, &pt);
    return 0;
}

static int child_fail(const zram_opts *o, const char *why)
{
    printf("ZRAM\talloc=%s\tvalid=0\twhy=%s\n", o->child, why);
    return 1;
}

/* A malloc peer's held bytes are its RSS growth, so its child locks no
 * memory: mlockall() faults in every page mapped (MCL_CURRENT: a peer's
 * reserved arenas too; MCL_FUTURE: every later mapping, used or not), and
 * the growth would be its address-space reservations. It still runs pinned
 * under SCHED_FIFO, as rt_setup() would set it (rt.c has no lock-free
 * variant; these lines do the same two steps). */
static void peer_rt_setup(int enabled, int64_t cpu, char *note, size_t n)
{
    cpu_set_t set;
    int target = (int)cpu;
    if (cpu < 0 && sched_getaffinity(0, sizeof set, &set) == 0)
        for (target = CPU_SETSIZE - 1; target >= 0 && !CPU_ISSET((size_t)target, &set); target--)
            ;
    if (!enabled) {
        snprintf(note, n,
                 "real-time setup skipped (--no-rt): no mlockall, SCHED_OTHER, no pinning");
        return;
    }
    CPU_ZERO(&set);
    int pinned = target >= 0 && target < CPU_SETSIZE;
    if (pinned) {
        CPU_SET((size_t)target, &set);
        pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    }
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = 1;
    int fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
    snprintf(note, n,
             "real-time setup: no mlockall (RSS is measured); SCHED_FIFO priority 1 %s; pinned "
             "to CPU %d %s",
             fifo ? "ok" : "not permitted", target, pinned ? "ok" : "not permitted");
}

static int setup(child_env *e, zc_loop *s)
{
    s->tok = calloc((size_t)e->o->slots, sizeof *s->tok);
    s->size = calloc((size_t)e->o->slots, sizeof *s->size);
    if (s->tok == NULL || s->size == NULL)
        return -1;
    if (e->kind == ZK_MALLOC)
        return 0;
    e->mem = region_prefaulted(e->region);
    e->bits = calloc((size_t)(e->region / ZRAM_PAGE / 64u + 1u), sizeof *e->bits);
    return e->mem == NULL || e->bits == NULL ? -1 : 0;
}

int zram_child(const zram_opts *o)
{
    aut a;
    char bad[160];
    if (aut_parse(o->child, &zram_aut_rules, &a, bad, sizeof bad) != 0)
        return child_fail(o, "unknown allocator");
    enum zram_kind kind = zram_kind_of(&a);
    size_t nwin = sweep_window_count(o->sweep_step, o->sweep_max), done = 0, want = nwin + 1u;
    if (o->child_point != ZRAM_ALL_POINTS && o->child_point > nwin)
        return child_fail(o, "--child-point beyond the zram case");
    const peer *p = a.peer;
    char why[768], from[256], version[96], rt[256];
    int valid =
        peer_verify(p, o->child_lib, why, sizeof why, from, sizeof from, version, sizeof version);
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    child_env e = {o, kind, NULL, o->region, NULL, 0};
    zc_loop s = {NULL, NULL, (uint32_t)o->slots, 1, 1, NULL, {0}, 0, &clk};
    if (setup(&e, &s) != 0)
        return child_fail(o, "cannot allocate the slots or map the region");
    if (e.kind == ZK_MALLOC)
        peer_rt_setup(!o->no_rt, o->cpu, rt, sizeof rt);
    else
        rt_setup(!o->no_rt, o->cpu, rt, sizeof rt);
    /* The baseline after the slots, the region and the real-time setup. */
    if (read_vmrss(&e.base_kb) != 0)
        e.base_kb = 0;
    random_sanitise(why);
    random_sanitise(from);
    random_sanitise(version);
    random_sanitise(rt);
    printf("ZRAM\talloc=%s\tvalid=%d\tfrom=%s\tversion=%s\twhy=%s\trt=%s\tregion=%llu\t"
           "baseline_kb=%llu\n",
           o->child, valid, from, version, why, rt, (unsigned long long)o->region,
           (unsigned long long)e.base_kb);
    /* The zram case first, then the windows (one point only: --child-point). */
    if (o->child_point != ZRAM_ALL_POINTS) { /* one point: a malloc peer's (zram.c) */
        want = 1;
        done = run_point(&e, &s, (size_t)o->child_point, nwin) == 0;
    }
    while (done < want && run_point(&e, &s, done == 0 ? nwin : done - 1u, nwin) == 0)
        done++;
    if (done == want)
        printf("END\tpoints=%zu\n", done);
    free(s.tok);
    free(s.size);
    free(e.bits);
    if (e.mem != NULL)
        munmap(e.mem, (size_t)e.region);
    return fflush(stdout) == 0 && done == want ? 0 : 1;
}
