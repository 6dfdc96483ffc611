// SPDX-License-Identifier: MIT
/*
 * core/version.c -- rtm_version(): the version of the library linked in.
 *
 * The string is compiled into the library from the same header users
 * compile against (rtmem/version.h), so a program comparing rtm_version()
 * with RTM_VERSION_STRING learns whether the librtmem it runs with is the
 * one its headers came from. Freestanding: a string constant, no libc.
 */
#include "rtmem/version.h"

const char *rtm_version(void) { return RTM_VERSION_STRING; }
