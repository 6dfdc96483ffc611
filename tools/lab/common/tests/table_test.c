// SPDX-License-Identifier: MIT
/*
 * table_test.c -- unit tests of the lab's output tables (common/table.h):
 * every cell kind in text and in JSON, null and NaN, a column's own text,
 * joined columns and JSON groups, a row's note, a text order other than
 * the JSON's, a group null as a whole, a text read from the whole row,
 * a column as a flat array or an object, and the errors (a cell
 * before any row, too many cells, a short row) that must make the table
 * bad -- no text, null in JSON, -1 -- rather than shift or crash.
 *
 * Output goes to temporary files that are read back and compared with
 * the exact expected text.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/table.h"
#include "common/tests/check.h"

/* table_print() of t must succeed and write exactly want. */
static void expect_print(const char *what, const table *t, const char *want)
{
    FILE *f = tmpfile();
    char buf[1024];
    CHECK(f != NULL && table_print(f, t) == 0);
    if (f != NULL) {
        expect_text(what, contents(f, buf, sizeof buf), want);
        fclose(f);
    }
}

static void kib_text(const table_cell *c, char *buf, size_t n)
{
    if (c->kind == TABLE_U64)
        snprintf(buf, n, "%llu KiB", (unsigned long long)(c->v.u64 / 1024));
    else
        snprintf(buf, n, "none");
}

static const table_col cols[] = {
    {"name", "name", -6, 0, 0, NULL, TABLE_LABEL, NULL, NULL},
    {"count", "n", 4, 0, 0, NULL, 0, NULL, NULL},
    {"delta", "d", 4, 0, 0, NULL, 0, NULL, NULL},
    {"lo_us", "lo/hi", 9, 1, 1000, NULL, 0, "range", NULL},
    {"hi_us", NULL, 0, 1, 1000, NULL, TABLE_JOIN, "range", NULL},
    {"size", "size", 8, 0, 0, NULL, 0, NULL, kib_text},
    {"ok", "ok", 3, 0, 0, NULL, 0, NULL, NULL},
    {"why", NULL, 0, 0, 0, NULL, 0, NULL, NULL},
    {NULL, "pct", 6, 1, 0, "%", 0, NULL, NULL},
};
#define NCOLS (sizeof cols / sizeof cols[0])

static void fill(table *t)
{
    table_init(t, cols, NCOLS);
    CHECK(table_row(t) == 0);
    CHECK(table_str(t, "tlsf") == 0);
    CHECK(table_u64(t, 18446744073709551615u) == 0);
    CHECK(table_i64(t, -3) == 0);
    CHECK(table_num(t, 1500.0) == 0);
    CHECK(table_num(t, 2250.0) == 0);
    CHECK(table_u64(t, 4096) == 0);
    CHECK(table_bool(t, 1) == 0);
    CHECK(table_str(t, "a \"quoted\"\nline") == 0);
    CHECK(table_num(t, 12.345) == 0);
    CHECK(table_row(t) == 0);
    CHECK(table_str(t, "glibc") == 0);
    CHECK(table_null(t) == 0);
    CHECK(table_i64(t, 7) == 0);
    CHECK(table_num(t, NAN) == 0); /* NaN: null */
    CHECK(table_num(t, INFINITY) == 0);
    CHECK(table_null(t) == 0);
    CHECK(table_bool(t, 0) == 0);
    CHECK(table_str(t, NULL) == 0);
    CHECK(table_num(t, 0.0) == 0);
    CHECK(table_note(t, "not installed") == 0);
}

static void test_text(void)
{
    table t;
    fill(&t);
    t.indent = "  ";
    CHECK(table_ok(&t));
    CHECK(t.nrows == 2);
    CHECK(table_at(&t, 1, 3)->kind == TABLE_NULL);
    CHECK(table_at(&t, 0, 1)->kind == TABLE_U64);
    CHECK(table_at(&t, 2, 0) == NULL);
    CHECK(table_at(&t, 0, NCOLS) == NULL);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f == NULL)
        return;
    CHECK(table_print(f, &t) == 0);
    char buf[4096];
    expect_text("text", contents(f, buf, sizeof buf),
                "  name      n    d     lo/hi     size  ok    pct\n"
                "  tlsf   18446744073709551615   -3 1.5 / 2.2    4 KiB yes  12.3%\n"
                "  glibc  not installed\n");
    fclose(f);
    /* Without the note the row shows its nulls as "-". */
    CHECK(table_note(&t, NULL) == 0);
    f = tmpfile();
    CHECK(table_print_row(f, &t, 1) == 0);
    expect_text("null text", contents(f, buf, sizeof buf),
                "  glibc     -    7     - / -     none  no   0.0%\n");
    CHECK(table_print_row(f, &t, 2) == -1);
    fclose(f);
    /* An empty note: the labels alone. */
    CHECK(table_note(&t, "") == 0);
    f = tmpfile();
    CHECK(table_print_row(f, &t, 1) == 0);
    expect_text("empty note", contents(f, buf, sizeof buf), "  glibc\n");
    fclose(f);
    table_free(&t);

    /* A range: "lo..hi" under one header, left-aligned; a count "a/b". */
    static const table_col range[] = {{"lo", "range", -9, 0, 0, NULL, 0, NULL, NULL},
                                      {"hi", NULL, 0, 0, 0, NULL, TABLE_RANGE, NULL, NULL},
                                      {"n", "n", 5, 0, 0, NULL, 0, NULL, NULL},
                                      {NULL, NULL, 0, 0, 0, NULL, TABLE_OF, NULL, NULL}};
    table_init(&t, range, 4);
    CHECK(table_row(&t) == 0);
    CHECK(table_num(&t, 12.4) == 0);
    CHECK(table_num(&t, 130.6) == 0);
    CHECK(table_u64(&t, 2) == 0);
    CHECK(table_u64(&t, 3) == 0);
    f = tmpfile();
    CHECK(table_print(f, &t) == 0);
    expect_text("range", contents(f, buf, sizeof buf), "range         n\n12..131     2/3\n");
    fclose(f);
    table_free(&t);
}

/* The JSON file of one table under "rows", in buf; table_json's result
 * must be `want` (0 or -1). The table is freed. */
static const char *json_of(table *t, int want, char *buf, size_t n)
{
    char path[] = "/tmp/table_test_XXXXXX";
    int fd = mkstemp(path);
    json j;
    buf[0] = '\0';
    CHECK(fd >= 0);
    if (fd < 0 || json_open(&j, path) != 0) {
        failures++;
        table_free(t);
        return buf;
    }
    CHECK(table_json(&j, "rows", t, NULL, NULL) == want);
    CHECK(json_close(&j) == 0);
    table_free(t);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        contents(f, buf, n);
        fclose(f);
    }
    remove(path);
    close(fd);
    return buf;
}

static void test_json(void)
{
    table t;
    fill(&t);
    char buf[4096];
    expect_text("json", json_of(&t, 0, buf, sizeof buf),
                "{\n"
                "\"rows\": [\n"
                "  {\n"
                "    \"name\": \"tlsf\",\n"
                "    \"count\": 18446744073709551615,\n"
                "    \"delta\": -3,\n"
                "    \"range\": {\n"
                "      \"lo_us\": 1500,\n"
                "      \"hi_us\": 2250\n"
                "    },\n"
                "    \"size\": 4096,\n"
                "    \"ok\": true,\n"
                "    \"why\": \"a \\\"quoted\\\"\\u000aline\"\n"
                "  },\n"
                "  {\n"
                "    \"name\": \"glibc\",\n"
                "    \"count\": null,\n"
                "    \"delta\": 7,\n"
                "    \"range\": {\n"
                "      \"lo_us\": null,\n"
                "      \"hi_us\": null\n"
                "    },\n"
                "    \"size\": null,\n"
                "    \"ok\": false,\n"
                "    \"why\": null\n"
                "  }\n"
                "]\n"
                "}\n");
}

/* Optional columns and groups: left out of the JSON when null. */
static void test_optional(void)
{
    static const table_col opt[] = {
        {"a", "a", 3, 0, 0, NULL, 0, NULL, NULL},
        {"x", "x", 3, 0, 0, NULL, TABLE_OPTIONAL, "g", NULL},
        {"y", "y", 3, 0, 0, NULL, TABLE_OPTIONAL, "g", NULL},
        {"z", "z", 3, 0, 0, NULL, TABLE_OPTIONAL, NULL, NULL},
    };
    table t;
    table_init(&t, opt, 4);
    CHECK(table_row(&t) == 0 && table_u64(&t, 1) == 0 && table_null(&t) == 0);
    CHECK(table_num(&t, NAN) == 0 && table_null(&t) == 0);
    CHECK(table_row(&t) == 0 && table_u64(&t, 2) == 0 && table_u64(&t, 3) == 0);
    CHECK(table_null(&t) == 0 && table_u64(&t, 4) == 0);
    char buf[512];
    expect_text("optional", json_of(&t, 0, buf, sizeof buf),
                "{\n\"rows\": [\n  {\n    \"a\": 1\n  },\n  {\n    \"a\": 2,\n    \"g\": {\n"
                "      \"x\": 3,\n      \"y\": null\n    },\n    \"z\": 4\n  }\n]\n}\n");
}

/* A text order other than the JSON's (a joined column following the one
 * it joins), and a group written as null when all its cells are. */
static void test_order(void)
{
    static const table_col cols2[] = {
        {"n", "n", 2, 0, 0, NULL, 0, NULL, NULL},
        {"clean", "clean", 5, 0, 0, NULL, 0, NULL, NULL},
        {NULL, NULL, 0, 0, 0, NULL, TABLE_OF, NULL, NULL},
        {"min", "min", 4, 0, 0, NULL, TABLE_NULL_GROUP, "ms", NULL},
        {"median", "med", 4, 0, 0, NULL, TABLE_NULL_GROUP, "ms", NULL},
        {"max", NULL, 0, 0, 0, NULL, TABLE_NULL_GROUP, "ms", NULL},
    };
    static const char *const order[] = {"n", "med", "min", "clean"};
    table t;
    table_init(&t, cols2, 6);
    table_text_order(&t, order, 4);
    CHECK(table_row(&t) == 0 && table_u64(&t, 1) == 0 && table_u64(&t, 2) == 0);
    CHECK(table_u64(&t, 3) == 0 && table_u64(&t, 4) == 0 && table_u64(&t, 5) == 0);
    CHECK(table_u64(&t, 6) == 0);
    CHECK(table_row(&t) == 0 && table_u64(&t, 2) == 0 && table_u64(&t, 0) == 0);
    CHECK(table_u64(&t, 3) == 0 && table_nulls(&t, 3) == 0);
    CHECK(table_row(&t) == 0 && table_u64(&t, 3) == 0 && table_u64(&t, 1) == 0);
    CHECK(table_u64(&t, 3) == 0 && table_null(&t) == 0 && table_u64(&t, 7) == 0);
    CHECK(table_null(&t) == 0); /* one cell not null: an object with nulls */
    expect_print("order text", &t,
                 " n  med  min clean\n"
                 " 1    5    4   2/3\n"
                 " 2    -    -   0/3\n"
                 " 3    7    -   1/3\n");
    FILE *f;
    char buf[1024];

    static const char *const missing[] = {"n", "med", "clean"};
    static const char *const twice[] = {"n", "med", "min", "min"};
    static const char *const unknown[] = {"n", "med", "min", "mean"};
    const char *const *bad[] = {missing, twice, unknown};
    size_t nbad[] = {3, 4, 4};
    for (size_t i = 0; i < 3; i++) {
        table_text_order(&t, bad[i], nbad[i]);
        f = tmpfile();
        CHECK(table_print(f, &t) == -1);
        CHECK(table_print_row(f, &t, 0) == -1);
        CHECK(strcmp(contents(f, buf, sizeof buf), "") == 0);
        fclose(f);
    }
    expect_text("null group", json_of(&t, 0, buf, sizeof buf),
                "{\n\"rows\": [\n"
                "  {\n    \"n\": 1,\n    \"clean\": 2,\n    \"ms\": {\n"
                "      \"min\": 4,\n      \"median\": 5,\n      \"max\": 6\n    }\n  },\n"
                "  {\n    \"n\": 2,\n    \"clean\": 0,\n    \"ms\": null\n  },\n"
                "  {\n    \"n\": 3,\n    \"clean\": 1,\n    \"ms\": {\n"
                "      \"min\": null,\n      \"median\": 7,\n      \"max\": null\n    }\n  }\n"
                "]\n}\n");
}

/* A text that depends on another column (TABLE_ROW): the limit shows "none
 * <= cap" when the row's "capped" is true, and its value otherwise. */
static void capped_text(const table_cell *row, char *buf, size_t n)
{
    if (row[1].kind == TABLE_BOOL && row[1].v.b)
        snprintf(buf, n, "none <= cap");
    else if (row[2].kind == TABLE_U64)
        snprintf(buf, n, "%llu", (unsigned long long)row[2].v.u64);
    else
        snprintf(buf, n, "-");
}

static void test_row_text(void)
{
    static const table_col cols3[] = {
        {"name", "name", -5, 0, 0, NULL, 0, NULL, NULL},
        {"capped", NULL, 0, 0, 0, NULL, 0, NULL, NULL},
        {"limit", "limit", -12, 0, 0, NULL, TABLE_ROW, NULL, capped_text},
    };
    table t;
    table_init(&t, cols3, 3);
    CHECK(table_row(&t) == 0 && table_str(&t, "a") == 0 && table_bool(&t, 1) == 0);
    CHECK(table_null(&t) == 0);
    CHECK(table_row(&t) == 0 && table_str(&t, "b") == 0 && table_bool(&t, 0) == 0);
    CHECK(table_u64(&t, 42) == 0);
    CHECK(table_row(&t) == 0 && table_str(&t, "c") == 0 && table_bool(&t, 0) == 0);
    CHECK(table_null(&t) == 0);
    char buf[512];
    expect_print("row text", &t,
                 "name  limit\n"
                 "a     none <= cap\n"
                 "b     42\n"
                 "c     -\n");
    expect_text("row text json", json_of(&t, 0, buf, sizeof buf),
                "{\n\"rows\": [\n"
                "  {\n    \"name\": \"a\",\n    \"capped\": true,\n    \"limit\": null\n  },\n"
                "  {\n    \"name\": \"b\",\n    \"capped\": false,\n    \"limit\": 42\n  },\n"
                "  {\n    \"name\": \"c\",\n    \"capped\": false,\n    \"limit\": null\n  }\n"
                "]\n}\n");
}

/* One column as a flat array, or as an object keyed by another column; a
 * column past the table, names that are not strings or a bad table: null
 * and -1. */
static void test_column(void)
{
    static const table_col cols4[] = {
        {NULL, "from", 5, 1, 0, NULL, 0, NULL, NULL},
        {"count", "count", 5, 0, 0, NULL, 0, NULL, NULL},
    };
    table t;
    table_init(&t, cols4, 2);
    for (uint64_t i = 0; i < 3; i++)
        CHECK(table_row(&t) == 0 && table_num(&t, (double)i / 2) == 0 && table_u64(&t, i * 7) == 0);
    char path[] = "/tmp/table_test_XXXXXX";
    int fd = mkstemp(path);
    json j;
    CHECK(fd >= 0 && json_open(&j, path) == 0);
    CHECK(table_json_column(&j, "counts", &t, 1) == 0);
    CHECK(table_json_column(&j, "from", &t, 0) == 0);
    CHECK(table_json_column(&j, "past", &t, 2) == -1);
    CHECK(table_json_map(&j, "by_name", &t, 0, 1) == -1); /* names not strings */
    CHECK(table_num(&t, 1) == -1);                        /* one cell too many: the table is bad */
    CHECK(table_json_column(&j, "bad", &t, 1) == -1);
    table_free(&t);
    static const table_col named[] = {
        {"op", "op", -6, 0, 0, NULL, 0, NULL, NULL},
        {"calls", "calls", 5, 0, 0, NULL, 0, NULL, NULL},
    };
    table_init(&t, named, 2);
    CHECK(table_row(&t) == 0 && table_str(&t, "malloc") == 0 && table_u64(&t, 3) == 0);
    CHECK(table_row(&t) == 0 && table_str(&t, "new[]") == 0 && table_null(&t) == 0);
    CHECK(table_json_map(&j, "ops", &t, 0, 1) == 0);
    CHECK(table_json_map(&j, "past", &t, 0, 2) == -1);
    CHECK(json_close(&j) == 0);
    table_free(&t);
    char buf[512];
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (f != NULL) {
        expect_text("column", contents(f, buf, sizeof buf),
                    "{\n\"counts\": [0, 7, 14],\n\"from\": [0, 0.5, 1],\n\"past\": null,\n"
                    "\"by_name\": null,\n\"bad\": null,\n\"ops\": {\n  \"malloc\": 3,\n"
                    "  \"new[]\": null\n},\n\"past\": null\n}\n");
        fclose(f);
    }
    remove(path);
    close(fd);
}

/* A bad table: every render refuses, and JSON stays well-formed. */
static void expect_bad(table *t, const char *what)
{
    if (table_ok(t)) {
        fprintf(stderr, "%s: the table should be bad\n", what);
        failures++;
    }
    FILE *f = tmpfile();
    char buf[256];
    CHECK(table_print(f, t) == -1);
    CHECK(table_print_row(f, t, 0) == -1);
    CHECK(strcmp(contents(f, buf, sizeof buf), "") == 0);
    fclose(f);
    expect_text(what, json_of(t, -1, buf, sizeof buf), "{\n\"rows\": null\n}\n");
}

static void test_errors(void)
{
    static const table_col two[] = {{"a", "a", 3, 0, 0, NULL, 0, NULL, NULL},
                                    {"b", "b", 3, 0, 0, NULL, 0, NULL, NULL}};
    table t;

    table_init(&t, two, 2); /* a cell before any row */
    CHECK(table_u64(&t, 1) == -1);
    CHECK(table_note(&t, "x") == -1);
    expect_bad(&t, "cell before a row");

    table_init(&t, two, 2); /* too many cells */
    CHECK(table_row(&t) == 0);
    CHECK(table_u64(&t, 1) == 0);
    CHECK(table_u64(&t, 2) == 0);
    CHECK(table_u64(&t, 3) == -1);
    CHECK(table_str(&t, "x") == -1); /* sticky: no later cell lands anywhere */
    CHECK(table_nulls(&t, 2) == -1);
    CHECK(table_row(&t) == -1);
    expect_bad(&t, "too many cells");

    table_init(&t, two, 2); /* a short row followed by another */
    CHECK(table_row(&t) == 0);
    CHECK(table_u64(&t, 1) == 0);
    CHECK(table_row(&t) == -1);
    expect_bad(&t, "short row");

    table_init(&t, two, 2); /* the last row left short */
    CHECK(table_row(&t) == 0);
    CHECK(table_u64(&t, 1) == 0);
    expect_bad(&t, "last row short");

    table_init(&t, NULL, 0); /* no columns */
    CHECK(table_row(&t) == -1);
    expect_bad(&t, "no columns");

    /* Many rows (growth), then an empty table: a header and nothing. */
    table_init(&t, two, 2);
    for (uint64_t i = 0; i < 1000; i++) {
        CHECK(table_row(&t) == 0);
        CHECK(table_u64(&t, i) == 0);
        CHECK(table_u64(&t, i * 2) == 0);
    }
    CHECK(table_ok(&t) && t.nrows == 1000 && table_at(&t, 999, 1)->v.u64 == 1998);
    table_free(&t);
    table_init(&t, two, 2);
    FILE *f = tmpfile();
    char buf[64];
    CHECK(table_print(f, &t) == 0);
    expect_text("empty", contents(f, buf, sizeof buf), "  a   b\n");
    fclose(f);
    table_free(&t);
}

int main(void)
{
    test_text();
    test_json();
    test_optional();
    test_order();
    test_row_text();
    test_column();
    test_errors();
    if (failures != 0) {
        fprintf(stderr, "table_test: %d failures\n", failures);
        return 1;
    }
    printf("table_test: ok\n");
    return 0;
}
