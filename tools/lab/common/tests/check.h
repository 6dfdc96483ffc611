// SPDX-License-Identifier: MIT
/*
 * check.h -- the one assertion of the lab's unit tests (common/tests/,
 * memcheck/tests/, random/tests/, threads/tests/, zram/tests/): CHECK
 * records a failure with file:line and the expression and goes on, so one
 * run shows every broken check; the test ends by returning non-zero when
 * `failures` is, which is what ctest sees. Header-only, one per test
 * program: the lab's tests stay buildable against an installed rtmem, so
 * they do not reach for the library's tests/common/check.h.
 */
#ifndef RTM_LAB_TESTS_CHECK_H
#define RTM_LAB_TESTS_CHECK_H

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The whole of f, from its start, in buf (NUL-terminated): what a
 * renderer wrote to a tmpfile(). */
static inline const char *contents(FILE *f, char *buf, size_t n)
{
    fflush(f);
    rewind(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    return buf;
}

/* A rendered text against the expected one: a failure shows both. */
static inline void expect_text(const char *what, const char *got, const char *want)
{
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "%s: got\n[%s]\nwanted\n[%s]\n", what, got, want);
        failures++;
    }
}

#endif /* RTM_LAB_TESTS_CHECK_H */
