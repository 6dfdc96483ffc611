// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_version.c -- the version: rtm_version() against the
 * headers' macros and against the project version CMake passes in
 * (RTM_EXPECT_VERSION, from project(rtmem VERSION ...)).
 *
 * Built twice: against librtmem.a (unit_version) and against librtmem.so
 * (unit_version_shared), where it also proves that the shared library
 * exports rtm_version() and that a program using only the public API links
 * against it.
 */
#include <stdio.h>
#include <string.h>

#include "../common/check.h"
#include "rtmem.h"

#ifndef RTM_EXPECT_VERSION
#error "RTM_EXPECT_VERSION (the project version) must be defined by the build"
#endif

/* The library's string is the headers' string and the project's version. */
static void test_string(void)
{
    const char *v = rtm_version();
    REQUIRE(v != NULL);
    CHECK_MSG(strcmp(v, RTM_VERSION_STRING) == 0, "rtm_version() \"%s\", headers \"%s\"", v,
              RTM_VERSION_STRING);
    CHECK_MSG(strcmp(v, RTM_EXPECT_VERSION) == 0, "rtm_version() \"%s\", project \"%s\"", v,
              RTM_EXPECT_VERSION);
    CHECK(rtm_version() == v); /* a static string: the same every call */
}

/* The numbers spell the string, and the combined number agrees. */
static void test_numbers(void)
{
    char text[32];
    snprintf(text, sizeof text, "%d.%d.%d", RTM_VERSION_MAJOR, RTM_VERSION_MINOR,
             RTM_VERSION_PATCH);
    CHECK_MSG(strcmp(text, RTM_VERSION_STRING) == 0, "macros say %s, string %s", text,
              RTM_VERSION_STRING);
    CHECK_EQ(RTM_VERSION_NUMBER,
             RTM_VERSION_MAJOR * 10000 + RTM_VERSION_MINOR * 100 + RTM_VERSION_PATCH);
#if RTM_VERSION_NUMBER < 200
#error "RTM_VERSION_NUMBER must be usable in #if and at least 0.2.0"
#endif
}

int main(void)
{
    RUN_TEST(test_string);
    RUN_TEST(test_numbers);
    printf("rtm_version() = %s\n", rtm_version());
    return check_summary();
}
