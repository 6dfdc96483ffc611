// SPDX-License-Identifier: MIT
/*
 * tests/common/check.h -- the suite's whole test framework: assertions that
 * print file:line and the failed expression, and a runner for test functions.
 *
 * Two kinds of assertion, as in most C test kits:
 *  - CHECK*: record the failure and go on, so one run shows every broken
 *    contract of a function instead of the first one only;
 *  - REQUIRE*: stop the process at once, for a precondition the rest of the
 *    test cannot survive (a NULL heap would only crash the next line).
 * A test program ends with `return check_summary();`, which is non-zero when
 * any assertion failed: that is what ctest sees.
 *
 * Header-only and C11 without extensions, so every test (and the rig) can use
 * it without linking anything. The failure counter lives in a function-local
 * static: one counter per program, no "defined but not used" warning in
 * translation units that include the header and never fail.
 */
#ifndef RTM_TESTS_CHECK_H
#define RTM_TESTS_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline unsigned long *check_failure_count(void)
{
    static unsigned long failures;
    return &failures;
}

/* The test running now, so a failure message says where it came from. */
static inline const char **check_current_test(void)
{
    static const char *name = "";
    return &name;
}

static inline void check_failed(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    ++*check_failure_count();
    fprintf(stderr, "%s:%d: FAIL [%s] ", file, line, *check_current_test());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

/* Non-fatal: record and continue. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if (!(expr))                                                                               \
            check_failed(__FILE__, __LINE__, "%s", #expr);                                         \
    } while (0)

#define CHECK_MSG(expr, ...)                                                                       \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            check_failed(__FILE__, __LINE__, "%s", #expr);                                         \
            fprintf(stderr, "    ");                                                               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

/* Integer equality; both sides are printed, as unsigned and signed, because
 * a size that went "negative" is easier to recognise as -8 than as 2^64-8. */
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        unsigned long long check_a_ = (unsigned long long)(a);                                     \
        unsigned long long check_b_ = (unsigned long long)(b);                                     \
        if (check_a_ != check_b_)                                                                  \
            check_failed(__FILE__, __LINE__, "%s == %s: got %llu (%lld), expected %llu (%lld)",    \
                         #a, #b, check_a_, (long long)check_a_, check_b_, (long long)check_b_);    \
    } while (0)

#define CHECK_PTR_EQ(a, b)                                                                         \
    do {                                                                                           \
        const void *check_a_ = (const void *)(a);                                                  \
        const void *check_b_ = (const void *)(b);                                                  \
        if (check_a_ != check_b_)                                                                  \
            check_failed(__FILE__, __LINE__, "%s == %s: got %p, expected %p", #a, #b, check_a_,    \
                         check_b_);                                                                \
    } while (0)

/* errno after a call; the value names are printed for readability. */
#define CHECK_ERRNO(expected)                                                                      \
    do {                                                                                           \
        int check_e_ = errno;                                                                      \
        if (check_e_ != (expected))                                                                \
            check_failed(__FILE__, __LINE__, "errno == %s: got %d (%s), expected %d (%s)",         \
                         #expected, check_e_, strerror(check_e_), (int)(expected),                 \
                         strerror(expected));                                                      \
    } while (0)

/* Fatal: record and leave the process now. */
#define REQUIRE(expr)                                                                              \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            check_failed(__FILE__, __LINE__, "%s (fatal)", #expr);                                 \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

static inline double check_now_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs one test function and prints its name, duration and verdict, so a
 * ctest log shows which part of a program failed and what took the time. */
#ifdef CHECK_LEFT_OUT_HOOK
/* A build that cannot run some test functions (a firmware image:
 * tests/firmware/board.h) names them and says why; the runner prints that
 * instead of running them. NULL: run it. */
const char *CHECK_LEFT_OUT_HOOK(const char *name);
#endif

static inline void check_run(const char *name, void (*fn)(void))
{
#ifdef CHECK_LEFT_OUT_HOOK
    const char *left_out = CHECK_LEFT_OUT_HOOK(name);
    if (left_out != NULL) {
        printf("%-40s left out: %s\n", name, left_out);
        fflush(stdout);
        return;
    }
#endif
    unsigned long before = *check_failure_count();
    double t0 = check_now_seconds();
    *check_current_test() = name;
    fn();
    *check_current_test() = "";
    unsigned long failed = *check_failure_count() - before;
    printf("%-40s %s (%.2f s)%s\n", name, failed ? "FAIL" : "ok", check_now_seconds() - t0,
           failed ? "  <-- see stderr" : "");
    fflush(stdout);
}

#define RUN_TEST(fn) check_run(#fn, fn)

/* The program's exit status: 0 iff no assertion failed. */
static inline int check_summary(void)
{
    unsigned long failures = *check_failure_count();
    if (failures != 0) {
        fprintf(stderr, "%lu check(s) failed\n", failures);
        return EXIT_FAILURE;
    }
    printf("all checks passed\n");
    return EXIT_SUCCESS;
}

#endif /* RTM_TESTS_CHECK_H */
