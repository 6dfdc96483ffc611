// SPDX-License-Identifier: MIT
/*
 * threads_unit.c -- unit test of the pure pieces of `bench threads`
 * (threads_parse.c) and of the summaries they feed (summary.c): the list
 * parsers on good and bad input, the pool benchmark's sizes against a brute-force
 * count, the result-line round trip, the ratio's refusals.
 *
 * Its own program, lab_threads_unit (tests_threads.cmake).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/result_line.h"
#include "threads/threads.h"
#include "common/tests/check.h"

static int counts_ok(const char *text, size_t expect_n, const size_t *expect)
{
    size_t v[TR_MAX_COUNTS], n;
    char why[160];
    if (tr_parse_counts(text, v, TR_MAX_COUNTS, TR_MAX_THREADS, &n, why, sizeof why) != 0)
        return 0;
    if (n != expect_n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] != expect[i])
            return 0;
    return 1;
}

static int counts_bad(const char *text)
{
    size_t v[TR_MAX_COUNTS], n;
    char why[160] = "";
    int rc = tr_parse_counts(text, v, TR_MAX_COUNTS, TR_MAX_THREADS, &n, why, sizeof why);
    return rc == -1 && why[0] != '\0';
}

static void test_counts(void)
{
    static const size_t a[] = {1, 2, 4}, b[] = {8}, c[] = {64, 3};
    CHECK(counts_ok("1,2,4", 3, a));
    CHECK(counts_ok("8", 1, b));
    CHECK(counts_ok("64,3", 2, c));
    static const char *const bad[] = {"",
                                      "0",
                                      "1,,2",
                                      "1,",
                                      ",1",
                                      "1,2,2",
                                      "65",
                                      "-1",
                                      " 1",
                                      "1 ",
                                      "01",
                                      "1.5",
                                      "a",
                                      "1;2",
                                      "2x",
                                      "1,0",
                                      "99999999999999999999",
                                      "1,2,3,4,5,6,7,8,9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!counts_bad(bad[i])) {
            fprintf(stderr, "accepted bad thread list '%s'\n", bad[i]);
            failures++;
        }
}

static void test_names(void)
{
    char names[4][TR_NAME_MAX], why[160];
    size_t n;
    CHECK(tr_split_names("glibc,locked:pool:64", names, 4, &n, why, sizeof why) == 0);
    CHECK(n == 2 && strcmp(names[0], "glibc") == 0 && strcmp(names[1], "locked:pool:64") == 0);
    CHECK(tr_split_names("a,,b", names, 4, &n, why, sizeof why) == -1);
    CHECK(tr_split_names("", names, 4, &n, why, sizeof why) == -1);
    CHECK(tr_split_names("a,", names, 4, &n, why, sizeof why) == -1);
    CHECK(tr_split_names("a,a", names, 4, &n, why, sizeof why) == -1);
    CHECK(tr_split_names("a,b,c,d,e", names, 4, &n, why, sizeof why) == -1);
    char longname[TR_NAME_MAX + 2];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(tr_split_names(longname, names, 4, &n, why, sizeof why) == -1);
}

/* The sizes, their maximum and their sum against a direct count. */
static void test_seed_sizes(void)
{
    CHECK(tr_seed_size(0) == 17);
    CHECK(tr_seed_size(8175) == 8192);
    CHECK(tr_seed_size(8176) == 1);
    CHECK(tr_seed_size(8192) == 17);
    static const uint64_t ntimes[] = {1, 2, 100, 8175, 8176, 8177, 8192, 10000, 20000, 40000};
    for (size_t k = 0; k < sizeof ntimes / sizeof ntimes[0]; k++) {
        size_t max = 0;
        uint64_t sum = 0;
        for (uint64_t i = 0; i < ntimes[k]; i++) {
            size_t s = tr_seed_size(i);
            max = s > max ? s : max;
            sum += s;
        }
        if (tr_seed_max_size(ntimes[k]) != max || tr_seed_live_bytes(ntimes[k]) != sum) {
            fprintf(stderr, "ntimes %llu: max %zu (want %zu), live %llu (want %llu)\n",
                    (unsigned long long)ntimes[k], tr_seed_max_size(ntimes[k]), max,
                    (unsigned long long)tr_seed_live_bytes(ntimes[k]), (unsigned long long)sum);
            failures++;
        }
        /* The locked heap's region holds every thread's live set. */
        CHECK(tr_seed_region(4, ntimes[k]) > 4 * sum);
    }
    /* Per block: a header, a power of two, at least a 4096-byte page. */
    const uint64_t mib4 = UINT64_C(4) << 20;
    CHECK(tr_seed_region(4, 10000) == UINT64_C(4) * 10000 * 16384 + mib4);
    CHECK(tr_seed_region(1, 100) == UINT64_C(100) * 4096 + mib4);       /* max size 116 */
    CHECK(tr_seed_region(2, 5000) == UINT64_C(2) * 5000 * 8192 + mib4); /* max 5016 */
    CHECK(tr_pc_region(4) == UINT64_C(2) * (TR_PC_QUEUE + 8) * 4096 + mib4);
}

static void test_result_line(void)
{
    tr_result r;
    const char *out = "noise from an allocator\n"
                      "RESULT\talloc=glibc\tok=1\tvalid=1\theap_ok=1\tfrom=/lib/libc.so.6\t"
                      "version=glibc 2.36\twhy=\twall_ns=1500000\tmalloc_ns=2000000\t"
                      "free_ns=1000000\tblocks=400\trefused=0\tcorrupt=0\trss_start_kb=2048\t"
                      "maxrss_kb=10240\tregion=0\n"
                      "trailing line\tok=0\n";
    CHECK(tr_parse_result(out, &r) == 0);
    CHECK(r.ok && r.valid && r.heap_ok && tr_clean(&r));
    CHECK(strcmp(r.from, "/lib/libc.so.6") == 0 && strcmp(r.version, "glibc 2.36") == 0);
    CHECK(r.wall_ns == 1500000.0 && r.malloc_ns == 2000000.0 && r.free_ns == 1000000.0);
    CHECK(r.blocks == 400 && r.maxrss_kb == 10240 && r.rss_start_kb == 2048);
    CHECK(tr_parse_result("no result here\n", &r) == -1);
    /* "RESULT" inside a line is not a result line. */
    CHECK(tr_parse_result("xRESULT\tok=1\n", &r) == -1);
    CHECK(tr_parse_result("RESULT\talloc=x\tok=1\tvalid=1\theap_ok=1\trefused=3\n", &r) == 0);
    CHECK(r.refused == 3 && !tr_clean(&r)); /* a refusal is never clean */
    CHECK(tr_parse_result("RESULT\talloc=x\tok=1\tvalid=1\theap_ok=1\tcorrupt=1\n", &r) == 0);
    CHECK(!tr_clean(&r));
    char v[16];
    CHECK(line_field("RESULT\tab=1\ta=2", "a", v, sizeof v) == 0 && strcmp(v, "2") == 0);
    CHECK(line_field("RESULT\tab=1", "a", v, sizeof v) == -1 && v[0] == '\0');
}

static void test_ratio_and_summary(void)
{
    CHECK(tr_ratio(6, 2) == 3);
    CHECK(isnan(tr_ratio(0, 2)) && isnan(tr_ratio(2, 0)) && isnan(tr_ratio(NAN, 1)));
    CHECK(isnan(tr_ratio(INFINITY, 1)) && isnan(tr_ratio(-1, 1)));
    double v[5] = {5, 1, 4, 2, 3};
    summary s = summarize(v, 5);
    CHECK(s.n == 5 && s.min == 1 && s.median == 3 && s.max == 5 && s.spread == 5);
    double w[2] = {4, 2};
    s = summarize(w, 2);
    CHECK(s.median == 3 && s.mean == 3 && s.spread == 2);
    CHECK(summarize(w, 0).n == 0);
}

int main(void)
{
    test_counts();
    test_names();
    test_seed_sizes();
    test_result_line();
    test_ratio_and_summary();
    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("threads unit: all checks passed\n");
    return 0;
}
