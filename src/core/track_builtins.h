// SPDX-License-Identifier: MIT
/*
 * core/track_builtins.h -- forced in front of the allocator sources (and
 * core/heap.c, core/track.c) in ASan-tracked builds only (CMakeLists.txt,
 * RTMEM_UNINSTRUMENTED_SOURCES): their __builtin_memcpy/__builtin_memset
 * become the byte loops below.
 *
 * Why: those files are compiled without ASan instrumentation because they
 * read and write headers and free blocks that core/track.c poisons. A
 * __builtin_memcpy of unknown length still becomes a call to memcpy, which
 * ASan intercepts and checks, so a realloc copying into a (poisoned) free
 * block, or a reset clearing a page map inside the region, would be
 * reported as the user's error. The loops are volatile so that the compiler
 * cannot turn them back into such a call; they run only in ASan builds,
 * where speed is not the point.
 */
#ifndef RTM_CORE_TRACK_BUILTINS_H
#define RTM_CORE_TRACK_BUILTINS_H

#include <stddef.h>

__attribute__((no_sanitize("address"), unused)) static void *
rtm_track_copy(void *dst, const void *src, size_t n)
{
    volatile unsigned char *d = dst;
    const volatile unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
    return dst;
}

__attribute__((no_sanitize("address"), unused)) static void *rtm_track_set(void *dst, int c,
                                                                           size_t n)
{
    volatile unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = (unsigned char)c;
    return dst;
}

#define __builtin_memcpy rtm_track_copy
#define __builtin_memset rtm_track_set

#endif /* RTM_CORE_TRACK_BUILTINS_H */
