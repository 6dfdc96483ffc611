// SPDX-License-Identifier: MIT
/*
 * random_sweep_child.c -- the child of `rtmem bench random --sweep`: one
 * allocator, one round, every window (random_sweep.h says why one process
 * runs them all, and the line protocol).
 *
 * Per window: the loop state is reseeded with the window's seed (the same
 * for every allocator in this round); an rtm heap is created afresh over
 * the one region, pre-faulted before the first window; fill (untimed), N
 * replacements between two clock reads, and then, untimed: the heap's
 * statistics with the slots full (what the curve's memory looks like),
 * rtm_heap_check, drain, and the leak check (used_bytes and live_blocks
 * back to 0). Each window's line is flushed at once, so a child that dies
 * later still reports what it finished.
 *
 * Only the throughput pass runs here: the per-op percentiles are the
 * single run's job (random_child.c), where the iterations are many enough
 * for a p99.99 to mean something; 256 windows of them would take an hour.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/clock.h"
#include "common/region.h"
#include "random/random.h"
#include "random/random_loop.h"
#include "random/random_sweep.h"
#include "common/rt.h"
#include "rtmem.h"

/* The heap's statistics with the slots full, and its checks. */
static void heap_after(rl_loop *s, sweep_point *pt)
{
    rtm_stats st = rtm_heap_stats(s->ctx);
    pt->used = st.used_bytes;
    pt->free_ = st.free_bytes;
    pt->largest = st.largest_free;
    if (rtm_heap_check(s->ctx) != 0) {
        snprintf(pt->why, sizeof pt->why, "rtm_heap_check failed with the slots full (errno %d)",
                 errno);
        pt->heap_ok = 0;
    }
}

static __attribute__((noinline)) uint64_t window_rtm(rl_loop *s, uint64_t n, sweep_point *pt)
{
    rl_fill(&rl_rtm, s);
    uint64_t ticks = rl_throughput(&rl_rtm, s, n);
    heap_after(s, pt);
    rl_drain(&rl_rtm, s);
    rtm_stats st = rtm_heap_stats(s->ctx);
    if (pt->heap_ok && (st.used_bytes != 0 || st.live_blocks != 0)) {
        snprintf(pt->why, sizeof pt->why,
                 "after freeing everything: used_bytes %zu, live_blocks %zu", st.used_bytes,
                 st.live_blocks);
        pt->heap_ok = 0;
    }
    return ticks;
}

static __attribute__((noinline)) uint64_t window_libc(rl_loop *s, uint64_t n)
{
    rl_fill(&rl_libc, s);
    uint64_t ticks = rl_throughput(&rl_libc, s, n);
    rl_drain(&rl_libc, s);
    return ticks;
}

static void print_window(size_t i, const sweep_window *w, const sweep_point *pt)
{
    printf("WINDOW\ti=%zu\tx=%llu\tlo=%llu\thi=%llu\tns_per_pair=%.4f\trefused=%llu\theap_ok=%d", i,
           (unsigned long long)w->x, (unsigned long long)w->lo, (unsigned long long)w->hi,
           pt->ns_per_pair, (unsigned long long)pt->refused, pt->heap_ok);
    printf("\tused=%llu\tfree=%llu\tlargest=%llu\twhy=%s\n", (unsigned long long)pt->used,
           (unsigned long long)pt->free_, (unsigned long long)pt->largest, pt->why);
    fflush(stdout);
}

/* Runs window i; returns 0, or -1 when an rtm heap could not be created
 * (the region is the same for every window: the next would fail too). */
static int run_window(const random_opts *o, rl_loop *s, void *mem, uint64_t region, size_t i)
{
    sweep_window w = sweep_window_at(o->sweep_step, i);
    sweep_point pt;
    memset(&pt, 0, sizeof pt);
    pt.heap_ok = 1;
    s->min = (uint32_t)w.lo;
    s->span = (uint32_t)(w.hi - w.lo);
    s->refused = 0;
    rng_seed(&s->rng, sweep_window_seed(o->seed, i));
    uint64_t ticks;
    if (mem != NULL) {
        s->ctx = rtm_heap_create(o->child, mem, (size_t)region);
        if (s->ctx == NULL) {
            snprintf(pt.why, sizeof pt.why, "rtm_heap_create() failed (errno %d)", errno);
            pt.heap_ok = 0;
            print_window(i, &w, &pt);
            return -1;
        }
        ticks = window_rtm(s, o->sweep_iterations, &pt);
        rtm_heap_destroy(s->ctx);
    } else {
        ticks = window_libc(s, o->sweep_iterations);
    }
    pt.refused = s->refused;
    pt.ns_per_pair = (double)ticks * o->child_tick_ns / (double)o->sweep_iterations;
    random_sanitise(pt.why);
    print_window(i, &w, &pt);
    return 0;
}

static int sweep_fail(const random_opts *o, const char *why)
{
    printf("SWEEP\talloc=%s\tvalid=0\twhy=%s\n", o->child, why);
    return 1;
}

int random_sweep_child(const random_opts *o)
{
    aut a;
    char bad[160];
    if (aut_parse(o->child, &random_aut_rules, &a, bad, sizeof bad) != 0)
        return sweep_fail(o, "unknown allocator");
    const peer *p = a.peer;
    int is_rtm = a.kind == AUT_RTM; /* "tlsf", "pool:4096", ... */
    char why[768], from[256], version[96], rt[256];
    int valid =
        peer_verify(p, o->child_lib, why, sizeof why, from, sizeof from, version, sizeof version);
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    rl_loop s = {NULL, (uint32_t)o->slots, 1, 1, NULL, {0}, 0, &clk};
    s.slot = calloc((size_t)o->slots, sizeof *s.slot);
    if (s.slot == NULL)
        return sweep_fail(o, "cannot allocate the slot array");
    uint64_t region = 0;
    void *mem = NULL;
    if (is_rtm) {
        region = random_region_bytes(o); /* the parent passes --tlsf-region */
        mem = region_prefaulted(region);
        if (mem == NULL) {
            free(s.slot);
            return sweep_fail(o, "cannot map the heaps' region");
        }
    }
    /* After the region exists: mlockall(MCL_CURRENT) locks it once. */
    rt_setup(!o->no_rt, o->cpu, rt, sizeof rt);
    random_sanitise(why);
    random_sanitise(from);
    random_sanitise(version);
    random_sanitise(rt);
    printf("SWEEP\talloc=%s\tvalid=%d\tfrom=%s\tversion=%s\twhy=%s\trt=%s\tregion=%llu\n", o->child,
           valid, from, version, why, rt, (unsigned long long)region);
    size_t nwin = sweep_window_count(o->sweep_step, o->sweep_max), done = 0;
    while (done < nwin && run_window(o, &s, mem, region, done) == 0)
        done++;
    if (done == nwin)
        printf("END\twindows=%zu\n", done);
    free(s.slot);
    if (mem != NULL)
        munmap(mem, (size_t)region);
    return fflush(stdout) == 0 && done == nwin ? 0 : 1;
}
