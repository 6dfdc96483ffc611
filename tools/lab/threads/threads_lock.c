// SPDX-License-Identifier: MIT
/*
 * threads_lock.c -- the shared rtm heaps measured by `bench threads`
 * (threads_lock.h): the library's locked heap and its mt heap, both behind
 * the generic rtm_heap calls, so the benchmark loops call the same
 * functions for either and differ only in the attach at a thread's start.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rtmem/lock.h"
#include "rtmem/mt.h"
#include "threads/threads_lock.h"

tr_heap *tr_heap_create(const aut *a, unsigned threads, void *mem, size_t bytes, char *why,
                        size_t why_n)
{
    int mt = a->kind == AUT_MT;
    rtm_heap *h =
        mt ? rtm_mt_create(a->heap, mem, bytes, threads) : rtm_locked_create(a->heap, mem, bytes);
    if (h == NULL)
        snprintf(why, why_n, "%s(\"%s\", %zu bytes%s) failed: %s",
                 mt ? "rtm_mt_create" : "rtm_locked_create", a->heap, bytes,
                 mt ? ", one shard per thread" : "", strerror(errno));
    return (tr_heap *)h;
}

size_t tr_heap_region(const aut *a, unsigned threads, size_t shard_bytes)
{
    if (a->kind == AUT_MT)
        return rtm_mt_region_size(a->heap, threads, shard_bytes);
    return shard_bytes > SIZE_MAX / threads ? 0 : shard_bytes * threads;
}

int tr_heap_enter(tr_heap *h, int mt) { return !mt || rtm_mt_attach((rtm_heap *)h) >= 0; }

void tr_heap_leave(tr_heap *h, int mt)
{
    if (mt)
        (void)rtm_mt_detach((rtm_heap *)h); /* -1 when it never attached: nothing to undo */
}

int tr_heap_check(tr_heap *h) { return rtm_heap_check((rtm_heap *)h); }
rtm_stats tr_heap_stats(tr_heap *h) { return rtm_heap_stats((rtm_heap *)h); }
void tr_heap_destroy(tr_heap *h) { rtm_heap_destroy((rtm_heap *)h); }

const char *tr_locked_impl(void)
{
    return "rtm_locked_create() from include/rtmem/lock.h (the library's locked heap)";
}

const char *tr_mt_impl(void)
{
    return "rtm_mt_create() from include/rtmem/mt.h, one shard per thread of the run (pc: "
           "producers + consumers), each thread attached at its start";
}
