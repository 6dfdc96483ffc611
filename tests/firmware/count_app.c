// SPDX-License-Identifier: MIT
/*
 * tests/firmware/count_app.c -- the Cortex-M image scripts/thumb-count.sh
 * counts instructions in, single-stepping through qemu's gdb stub: each
 * measured call is one call of a function named below, made once, from a
 * state built before it. hand_counted() is the ruler: five instructions,
 * counted by hand, so the method is shown exact on it first.
 */
#include <rtmem/halffit.h>
#include <rtmem/tlsf.h>
#include <stdint.h>

/* 64 KiB; a Cortex-M0 board (16 KiB of RAM) builds the same states in 12. */
#ifndef COUNT_REGION_BYTES
#define COUNT_REGION_BYTES 65536
#endif
static unsigned char region[COUNT_REGION_BYTES] __attribute__((aligned(8)));
/* Slots of the random-replace state (0: left out, as on a Cortex-M0) and its
 * measured iterations. */
#ifndef COUNT_RR_SLOTS
#define COUNT_RR_SLOTS 2000
#endif
#ifndef COUNT_RR_ITERATIONS
#define COUNT_RR_ITERATIONS 200
#endif
volatile uintptr_t sink;

/* Labels the calls counted after it (tests/firmware/count_steps.py); "off"
 * stops the counting while a state is built by many calls. */
__attribute__((noinline)) void count_phase(const char *label);
__attribute__((noinline)) void count_phase(const char *label)
{
    __asm__ volatile("" : : "r"(label) : "memory");
}

/* Five instructions: movs, adds, nop, nop, bx lr. */
__attribute__((naked, noinline)) void hand_counted(void);
__attribute__((naked, noinline)) void hand_counted(void)
{
    /* unified syntax: gcc hands Thumb-1 (Cortex-M0) inline asm the divided one */
    __asm__ volatile(".syntax unified\n movs r0, #1\n adds r0, r0, #2\n nop\n nop\n bx lr\n");
}

/* A free whose block has a free block on each side: two merges. */
static void tlsf_states(void)
{
    rtm_tlsf *t = rtm_tlsf_create(region, sizeof region);
    void *a = rtm_tlsf_alloc(t, 100); /* measured: a split of the one free block */
    void *b = rtm_tlsf_alloc(t, 100);
    void *c = rtm_tlsf_alloc(t, 100);
    void *d = rtm_tlsf_alloc(t, 100);
    (void)rtm_tlsf_free(t, a);
    (void)rtm_tlsf_free(t, c);
    (void)rtm_tlsf_free(t, b); /* measured: merges with a and c */
    sink = (uintptr_t)d;
}

/* The worst states rtmem-wcet finds for TLSF on x86-64 (tools/wcet/), built
 * by ordinary calls in a fresh heap each.
 * Free: the block between two free neighbours, each alone in its list,
 * the merged block inserted into a non-empty list. Spans: 24 + 1056 + 1056
 * = 2136, the span of x, freed before. */
static void tlsf_worst_free(void)
{
    rtm_tlsf *t = rtm_tlsf_create(region, sizeof region);
    void *l = rtm_tlsf_alloc(t, 20);
    void *b = rtm_tlsf_alloc(t, 1052);
    void *r = rtm_tlsf_alloc(t, 1052);
    void *s1 = rtm_tlsf_alloc(t, 20);
    void *x = rtm_tlsf_alloc(t, 2132);
    void *s2 = rtm_tlsf_alloc(t, 20);
    (void)rtm_tlsf_free(t, x);
    (void)rtm_tlsf_free(t, l);
    (void)rtm_tlsf_free(t, r);
    (void)rtm_tlsf_free(t, b); /* measured: two merges, into x's list */
    sink = (uintptr_t)s1 ^ (uintptr_t)s2;
}

/* Alloc: the head of the request's own list too small (the probe fails),
 * good fit from a list above, a split whose tail goes into a non-empty
 * list. Request span 2056: own list [2048, 2560) holds h (2048); f (4000)
 * is the first block above; its tail (1944) joins g's list [1792, 2048). */
static void tlsf_worst_alloc(void)
{
    rtm_tlsf *t = rtm_tlsf_create(region, sizeof region);
    void *f = rtm_tlsf_alloc(t, 3996);
    void *s1 = rtm_tlsf_alloc(t, 20);
    void *g = rtm_tlsf_alloc(t, 1900);
    void *s2 = rtm_tlsf_alloc(t, 20);
    void *h = rtm_tlsf_alloc(t, 2044);
    void *s3 = rtm_tlsf_alloc(t, 20);
    /* the region's rest taken, so that f is the only block above the
     * request's list whatever the region's size (in a 12 KiB region the
     * rest would be that block, and its split a shorter path) */
    void *rest = rtm_tlsf_alloc(t, rtm_tlsf_stats(t).largest_free);
    (void)rtm_tlsf_free(t, f);
    (void)rtm_tlsf_free(t, g);
    (void)rtm_tlsf_free(t, h);
    sink = (uintptr_t)rtm_tlsf_alloc(t, 2052); /* measured */
    sink ^= (uintptr_t)s1 ^ (uintptr_t)s2 ^ (uintptr_t)s3 ^ (uintptr_t)rest;
}

static void halffit_states(void)
{
    rtm_halffit *h = rtm_halffit_create(region, sizeof region);
    void *a = rtm_halffit_alloc(h, 100);
    void *b = rtm_halffit_alloc(h, 100);
    void *c = rtm_halffit_alloc(h, 100);
    void *d = rtm_halffit_alloc(h, 100);
    (void)rtm_halffit_free(h, a);
    (void)rtm_halffit_free(h, c);
    (void)rtm_halffit_free(h, b);
    sink = (uintptr_t)d;
}

/* The state of rtmem wcet's worst half-fit free on x86-64: blocks of one
 * unit, the freed one between two free neighbours each alone in its list
 * (l in class 0, r of two units in class 1). */
static void halffit_worst_free(void)
{
    rtm_halffit *h = rtm_halffit_create(region, sizeof region);
    void *p0 = rtm_halffit_alloc(h, 16);
    void *l = rtm_halffit_alloc(h, 16);
    void *b = rtm_halffit_alloc(h, 16);
    void *r = rtm_halffit_alloc(h, 48);
    void *p1 = rtm_halffit_alloc(h, 16);
    (void)rtm_halffit_free(h, l);
    (void)rtm_halffit_free(h, r);
    (void)rtm_halffit_free(h, b); /* measured */
    sink = (uintptr_t)p0 ^ (uintptr_t)p1;
}

#if COUNT_RR_SLOTS
/* rtmem wcet's random-replace loop (tools/wcet/scenarios.c): slots filled
 * with sizes in [16, 4096) from splitmix64 seeded 1, then each iteration
 * frees a random slot and refills it, both calls counted. At COUNT_RR_SLOTS
 * slots instead of 10,000 (20 MiB live would not fit the board's 16 MiB):
 * the same kind of state, not the same heap. */
#include "common/rng.h"

#define RR_MIN   16u
#define RR_RANGE 4080u
static unsigned char rr_region[12u << 20] __attribute__((aligned(8)));
static void *rr_slot[COUNT_RR_SLOTS];

typedef struct rr_heap {
    void *(*alloc)(void *heap, size_t size);
    void (*free)(void *heap, void *ptr);
    void *heap;
} rr_heap;
static void *rr_tlsf_alloc(void *t, size_t n) { return rtm_tlsf_alloc(t, n); }
static void rr_tlsf_free(void *t, void *p) { (void)rtm_tlsf_free(t, p); }
static void *rr_halffit_alloc(void *h, size_t n) { return rtm_halffit_alloc(h, n); }
static void rr_halffit_free(void *h, void *p) { (void)rtm_halffit_free(h, p); }

static int random_replace(const rr_heap *w, const char *label)
{
    rng r = {1};
    count_phase("off");
    for (unsigned i = 0; i < COUNT_RR_SLOTS; i++)
        if ((rr_slot[i] = w->alloc(w->heap, RR_MIN + rng_below(&r, RR_RANGE))) == NULL)
            return -1;
    count_phase(label);
    for (unsigned it = 0; it < COUNT_RR_ITERATIONS; it++) {
        size_t i = rng_below(&r, COUNT_RR_SLOTS);
        size_t n = RR_MIN + rng_below(&r, RR_RANGE);
        w->free(w->heap, rr_slot[i]);
        if ((rr_slot[i] = w->alloc(w->heap, n)) == NULL)
            return -1;
    }
    count_phase("");
    return 0;
}

static int random_states(void)
{
    rr_heap t = {rr_tlsf_alloc, rr_tlsf_free, rtm_tlsf_create(rr_region, sizeof rr_region)};
    rr_heap h = {rr_halffit_alloc, rr_halffit_free, NULL}; /* the same region, after */
    if (random_replace(&t, "random-replace tlsf") != 0)
        return -1;
    h.heap = rtm_halffit_create(rr_region, sizeof rr_region);
    return random_replace(&h, "random-replace halffit");
}
#endif

int main(void);
int main(void)
{
    hand_counted();
    tlsf_states();
    halffit_states();
    tlsf_worst_free();
    tlsf_worst_alloc();
    halffit_worst_free();
#if COUNT_RR_SLOTS
    if (random_states() != 0) {
        count_phase("refused"); /* the heap was too small: no state to count */
        return 1;
    }
#endif
    return 0;
}
