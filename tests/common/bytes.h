// SPDX-License-Identifier: MIT
/*
 * tests/common/bytes.h -- small helpers the heap tests share for looking at
 * memory and statistics: whole-struct comparison of rtm_stats, unaligned
 * 32-bit reads and writes of header words (memcpy, so UBSan and strict
 * aliasing stay quiet), and "every byte is v".
 */
#ifndef RTM_TESTS_BYTES_H
#define RTM_TESTS_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rtmem/common.h"

static inline int stats_equal(rtm_stats a, rtm_stats b)
{
    return a.arena_bytes == b.arena_bytes && a.used_bytes == b.used_bytes &&
           a.free_bytes == b.free_bytes && a.largest_free == b.largest_free &&
           a.live_blocks == b.live_blocks && a.peak_used_bytes == b.peak_used_bytes &&
           a.failed_allocs == b.failed_allocs;
}

static inline uint32_t get32(const void *at)
{
    uint32_t v;
    memcpy(&v, at, sizeof v);
    return v;
}

static inline void put32(void *at, uint32_t v) { memcpy(at, &v, sizeof v); }

static inline int all_bytes(const void *p, size_t n, unsigned char v)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v)
            return 0;
    return 1;
}

#endif /* RTM_TESTS_BYTES_H */
