// SPDX-License-Identifier: MIT
/*
 * rtmem/version.h -- the version of the rtmem headers, and the version of
 * the library a program runs with.
 *
 * The numbers and the string below are the project version of
 * CMakeLists.txt (project(rtmem VERSION ...)): a release changes both, and
 * configuring fails when they disagree, so the header a program compiles
 * against always names the release it came with. The header is kept in the
 * source tree, not generated into the build tree, so that `cc -Iinclude`
 * and a firmware tree holding a copy of include/ keep working without a
 * CMake step.
 *
 * Semantic versioning: while MAJOR is 0, a MINOR step may change the API
 * and ABI (the shared library's soname is librtmem.so.MAJOR.MINOR then).
 */
#ifndef RTMEM_VERSION_H
#define RTMEM_VERSION_H

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RTM_VERSION_MAJOR 0
#define RTM_VERSION_MINOR 2
#define RTM_VERSION_PATCH 0

/** One number for #if comparisons: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define RTM_VERSION_NUMBER (RTM_VERSION_MAJOR * 10000 + RTM_VERSION_MINOR * 100 + RTM_VERSION_PATCH)

/** "MAJOR.MINOR.PATCH" of these headers. */
#define RTM_VERSION_STRING "0.2.0"

/** The version of the library linked in, as "MAJOR.MINOR.PATCH": equal to
 *  RTM_VERSION_STRING when the program runs with the library its headers
 *  came with (compare them to detect a stale librtmem.so). A static string;
 *  never NULL. O(1), thread-safe, freestanding. */
RTM_API const char *rtm_version(void);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_VERSION_H */
