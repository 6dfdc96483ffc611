// SPDX-License-Identifier: MIT
/*
 * tests/firmware/count_app.c -- the Cortex-M4 image scripts/thumb-count.sh
 * counts instructions in, single-stepping through qemu's gdb stub: each
 * measured call is one call of a function named below, made once, from a
 * state built before it. hand_counted() is the ruler: five instructions,
 * counted by hand, so the method is shown exact on it first.
 */
#include <rtmem/halffit.h>
#include <rtmem/tlsf.h>
#include <stdint.h>

static unsigned char region[65536] __attribute__((aligned(8)));
volatile uintptr_t sink;

/* Five instructions: movs, adds, nop, nop, bx lr. */
__attribute__((naked, noinline)) void hand_counted(void);
__attribute__((naked, noinline)) void hand_counted(void)
{
    __asm__ volatile("movs r0, #1\n adds r0, r0, #2\n nop\n nop\n bx lr\n");
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

int main(void);
int main(void)
{
    hand_counted();
    tlsf_states();
    halffit_states();
    return 0;
}
