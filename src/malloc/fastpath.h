// SPDX-License-Identifier: MIT
/*
 * malloc/fastpath.h -- the hot paths, inlined into both the rtm_ API
 * (malloc.c) and the drop-in symbols (dropin.c) so that neither calls the
 * other through the PLT.
 *
 * Budget (x86-64, gcc -O2), counted with rtmem-wcet style single-stepping
 * of the pool benchmark loop: malloc of a small size that hits the thread cache,
 * about 15 instructions, 1 TLS load, 5 loads, 1 store; free of a small
 * block, about 20 instructions, 1 TLS load, 6 loads, 1 store (the span
 * owner tag's compare added 3 instructions and the load of the cache's
 * tag: 33 instead of 30 in objdump of librtmem-malloc.so's free, a hit, with
 * the PLT-free TLS and range checks; 34 with bin_push's order, slot before
 * count, for fork: gcc keeps the count and count + 1 in two registers;
 * 43 and 9 loads since the group test runs on every free, without a
 * branch: the price of no misprediction when own and foreign blocks mix,
 * about 5 ns per free on larson-sized, far more than 9 instructions).
 * No lock, no atomic read-modify-write,
 * no access to the block's own memory. Anything else is a call to a
 * noinline slow path.
 */
#ifndef RTM_MALLOC_FASTPATH_H
#define RTM_MALLOC_FASTPATH_H

#include "malloc/internal.h"

/* Requests above SMALL_MAX (and aligned ones a class cannot serve). */
void *rtmm_alloc_large(size_t size, size_t align);
/* free() of anything the thread cache did not take. */
void rtmm_free_slow(void *p, unsigned cls);

/* Cold: ENOMEM, counted. Always returns NULL. */
void *rtmm_fail(void);
/* A small allocation the thread cache could not serve (malloc.c): the
 * refill, or a thread's first allocation, failures counted. A tail call
 * from the fast paths, so that they need no stack frame (4 instructions
 * fewer per malloc than checking a result here). */
void *rtmm_alloc_small_slow(size_t size);

/* HOT: a block of class cls from the thread cache, or the slow path. */
RTM_INLINE void *fast_alloc_class(unsigned cls, size_t size)
{
    tcache *tc = rtmm_tc_self;
    if (RTM_LIKELY(tc != NULL)) {
        tbin *b = &tc->bins[cls];
        if (RTM_LIKELY(b->count != 0))
            return b->slots[--b->count];
    }
    return rtmm_alloc_small_slow(size);
}

/* HOT: malloc. The class table is read only by a thread that has a cache:
 * having one means this thread went through rtmm_init(), whose acquire load
 * orders the table's initialisation before this read. A thread without a
 * cache may run while another thread is still filling the table, so it
 * goes to the slow path first, which initialises and then looks the class
 * up. */
RTM_INLINE void *fast_malloc(size_t size)
{
    if (RTM_LIKELY(size <= SMALL_MAX)) {
        tcache *tc = rtmm_tc_self;
        if (RTM_LIKELY(tc != NULL)) {
            tbin *b = &tc->bins[rtmm_class_index[class_slot(size)]];
            if (RTM_LIKELY(b->count != 0))
                return b->slots[--b->count];
        }
        return rtmm_alloc_small_slow(size);
    }
    return rtmm_alloc_large(size, 0);
}

/* HOT: free. The page map gives the class and the span's owner tag in two
 * loads; a small block of a span this thread's cache owns goes on its
 * stack, and so does another span's block of a class whose blocks fill
 * whole cache lines (group 1: the slow path put it there too, tcache.c
 * "False sharing"; the class's group is read on every free, one load and
 * a multiply more than the own-span hit took when it was a second branch).
 * Everything else takes the slow path: a foreign block of a class whose
 * blocks share lines, and a page that is not small, whose entry is 0 and
 * so never matches a cache's tag (1 .. 255; rtmm_tc_dead's is 0, and its
 * bins have capacity 0) nor class 0's group (0: the factor group - 1
 * wraps to 2^32 - 1, and tag x (2^32 - 1) is not 0 mod 2^32). Why the
 * second test: in a producer/consumer every free is foreign, and the slow
 * path's call, errno save and second page-map lookup were about 70 of the
 * consumer's 150 instructions per free (docs/MALLOC.md
 * "Producer/consumer"). */
RTM_INLINE void fast_free(void *p)
{
    unsigned e = pm_entry((uintptr_t)p);
    tcache *tc = rtmm_tc_self;
    /* Own tag, or a class of group 1: one test, no branch between the two
     * (the product is 0 iff either factor is), because the second is
     * taken on about half the frees of a server-like program: in
     * mimalloc-bench's larson-sized the `||` mispredicted on 0.5 frees in
     * 1 (cachegrind --branch-sim: 1.26M of 2.5M frees, 98.6 % of all
     * mispredictions; 24k after), one of its largest costs. */
    if (RTM_LIKELY(tc != NULL && ((e >> 8) ^ tc->tag) * (rtmm_class[e & 0xffu].group - 1u) == 0u)) {
        tbin *b = &tc->bins[e & 0xffu];
        if (RTM_LIKELY(b->count < b->cap)) {
            bin_push(b, p);
            return;
        }
    }
    if (p != NULL)
        rtmm_free_slow(p, e & 0xffu);
}

#endif /* RTM_MALLOC_FASTPATH_H */
