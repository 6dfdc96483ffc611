// SPDX-License-Identifier: MIT
/*
 * limits_probe.c -- the largest-block probe of `rtmem limits` (limits_cmd.h):
 * the Linux memmax kernel module's method (docs/METHODS.md), made exact.
 *
 * memmax doubles the request from one page until kmalloc, __get_free_pages
 * or vmalloc fails, and its author warns that this gives the first size
 * that fails, not the largest that succeeds. So after the doubling we
 * binary-search the gap between the last success L and the first failure F
 * (at most log2(F - L) more calls, 26 for a 64 MiB region, 40 at 1 TiB):
 *
 *     doubling:  4K ok  8K ok ... L ok  F=2L refused
 *     search:    lo = L (ok), hi = F (refused); mid ok -> lo, else -> hi
 *     result:    exact = lo, with exact ok and exact + 1 refused
 *
 * Every block is released before the next request, so the probe asks an
 * empty allocator each time, as memmax did. The probe knows nothing of the
 * allocator (two callbacks), so its arithmetic is tested against a fake
 * with a known limit (tests/limits_probe_test.c).
 */
#include <string.h>

#include "limits/limits_cmd.h"

/* One request: allocate, release at once. Returns 1 when it succeeded. */
static int try_size(const probe_ops *ops, uint64_t bytes, probe_result *r)
{
    r->tries++;
    void *p = ops->alloc(ops->ctx, bytes);
    if (p == NULL)
        return 0;
    ops->release(ops->ctx, p, bytes);
    return 1;
}

/* start, 2 start, 4 start, ... while <= cap, up to the first refusal. */
static void doubling(const probe_ops *ops, probe_result *r)
{
    uint64_t bytes = r->start;
    while (r->nsteps < PROBE_MAX_STEPS) {
        int ok = try_size(ops, bytes, r);
        r->step_bytes[r->nsteps] = bytes;
        r->step_ok[r->nsteps] = (unsigned char)ok;
        r->nsteps++;
        if (!ok) {
            r->first_fail = bytes;
            return;
        }
        r->last_ok = bytes;
        if (bytes > r->cap / 2u) /* the next step would pass the cap */
            break;
        bytes *= 2u;
    }
    r->capped = 1;
}

/* Invariant: lo succeeded (or is 0), hi was refused; ends with hi = lo + 1. */
static uint64_t bisect(const probe_ops *ops, uint64_t lo, uint64_t hi, probe_result *r)
{
    while (hi - lo > 1u) {
        uint64_t mid = lo + (hi - lo) / 2u;
        if (try_size(ops, mid, r))
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

void probe_largest(const probe_ops *ops, uint64_t start, uint64_t cap, probe_result *r)
{
    memset(r, 0, sizeof *r);
    r->start = start;
    r->cap = cap;
    if (start == 0 || start > cap)
        return;
    doubling(ops, r);
    /* Capped: nothing above the cap is ever requested (1 TiB of malloc must
     * not be touched, and need not be), so the answer is a lower bound. */
    r->exact = r->capped ? r->last_ok : bisect(ops, r->last_ok, r->first_fail, r);
}
