// SPDX-License-Identifier: MIT
/*
 * tests/tracking/track_test.h -- for the white-box tests that reach into an
 * rtm heap on purpose: they read or write headers, free blocks, the control
 * structure, or the bytes of a block past its requested size (hardening and
 * corruption tests, layout checks). In a tracked build (src/core/track.h:
 * ASan, which runs the whole suite, or valgrind) those bytes are marked
 * inaccessible for heaps made by rtm_heap_create, and such a test must say
 * that it goes there deliberately:
 *
 *   TRACK_OPEN(p, n)   [p, p + n) accessible from now on (and defined, for
 *                      valgrind); nothing at all in untracked builds
 *
 * Nothing else: a test that overruns a block by mistake stays a test bug
 * the tools report.
 */
#ifndef RTM_TESTS_TRACK_TEST_H
#define RTM_TESTS_TRACK_TEST_H

#include <stddef.h>

#if defined(RTM_TRACK_ASAN) && RTM_TRACK_ASAN
#include <sanitizer/asan_interface.h>
#define TRACK_OPEN(p, n) __asan_unpoison_memory_region((const void *)(p), (size_t)(n))
#define TRACKED_BUILD    1
#elif defined(RTM_TRACK_VALGRIND) && RTM_TRACK_VALGRIND
#include <valgrind/memcheck.h>
#define TRACK_OPEN(p, n) ((void)VALGRIND_MAKE_MEM_DEFINED((p), (n)))
#define TRACKED_BUILD    1
#else
#define TRACK_OPEN(p, n) ((void)(p), (void)(n))
#define TRACKED_BUILD    0
#endif

#endif /* RTM_TESTS_TRACK_TEST_H */
