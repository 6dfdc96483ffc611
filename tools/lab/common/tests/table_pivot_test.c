// SPDX-License-Identifier: MIT
/*
 * table_pivot_test.c -- unit tests of the pivot view of a table
 * (common/table_pivot.h): a table filled a row per allocator and band is
 * shown as band x allocator, text rows in order of first appearance or as
 * given (a label no row has: a line of absent cells), a head with no rows
 * as `absent`, a left-out head, rows with a null label in no text row, the
 * transposed line of one column, heads wider than the cells, one head's
 * column as a JSON array, rows as JSON arrays with their keys listed once,
 * and a bad table printing nothing (null in JSON).
 *
 * Output goes to a temporary file read back and compared with the exact
 * expected text.
 */
#include <stdio.h>
#include <string.h>

#include "common/table_pivot.h"
#include "common/tests/check.h"

enum { HEAD, LABEL, NS, MARKED };
static const table_col cols[] = {
    TABLE_PIVOT_KEY,
    TABLE_PIVOT_KEY,
    TABLE_JSON_ONLY("ns"),
    TABLE_JSON_ONLY("marked"),
};

/* The cell: the number, or R and the marked count. */
static void cell(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    const table_cell *c = table_at(t, row, col);
    const table_cell *m = table_at(t, row, MARKED);
    CHECK(ctx == (void *)cols);
    if (col == NS && m->v.u64 != 0)
        snprintf(buf, n, "R%llu", (unsigned long long)m->v.u64);
    else if (c->kind == TABLE_NUM)
        snprintf(buf, n, "%.1f", c->v.num);
    else if (c->kind == TABLE_U64)
        snprintf(buf, n, "%llu", (unsigned long long)c->v.u64);
    else
        snprintf(buf, n, "-");
}

static void row(table *t, uint64_t head, const char *label, double ns, uint64_t marked)
{
    CHECK(table_row(t) == 0);
    CHECK(table_u64(t, head) == 0);
    CHECK(table_str(t, label) == 0);
    CHECK(table_num(t, ns) == 0);
    CHECK(table_u64(t, marked) == 0);
}

int main(void)
{
    static const char *const heads[] = {"tlsf", "glibc", "notinstalled", "hidden"};
    table t;
    table_init(&t, cols, sizeof cols / sizeof cols[0]);
    /* Filled per allocator (the JSON's shape); glibc's rows come in a
     * different band order, hidden's are left out, notinstalled has none. */
    row(&t, 0, "0-511", 51.25, 0);
    row(&t, 0, "512-1023", 60.0, 2);
    row(&t, 0, NULL, 99.0, 0); /* in the JSON, in no text row */
    row(&t, 1, "512-1023", 40.0, 0);
    row(&t, 1, "0-511", 45.5, 0);
    row(&t, 3, "0-511", 1.0, 0);
    table_pivot p = {.indent = "  ",
                     .corner = "x band",
                     .label_width = -9,
                     .width = 6,
                     .heads = heads,
                     .nheads = 4,
                     .col_key = HEAD,
                     .row_key = LABEL,
                     .value = NS,
                     .cell = cell,
                     .ctx = (void *)cols,
                     .absent = "n/i"};
    static const char *const three[] = {"tlsf", "glibc", "notinstalled", NULL};
    p.heads = three;

    char buf[2048];
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    CHECK(table_pivot_print(f, &t, &p) == 0);
    expect_text("cross-tab", contents(f, buf, sizeof buf),
                "  x band      tlsf  glibc  notinstalled\n"
                "  0-511       51.2   45.5           n/i\n"
                "  512-1023      R2   40.0           n/i\n");

    /* The transposed line of one column: each head's first row. */
    f = freopen(NULL, "w+", f);
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    CHECK(table_pivot_print_line(f, &t, &p, "marked", MARKED) == 0);
    expect_text("line", contents(f, buf, sizeof buf), "  marked         0      0           n/i\n");
    CHECK(table_pivot_print_line(f, &t, &p, "x", 99) == -1);

    /* Every head shown, the fourth included; no cell function: nothing. */
    p.heads = heads;
    p.indent = NULL;
    f = freopen(NULL, "w+", f);
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    CHECK(table_pivot_print_rows(f, &t, &p) == 0);
    expect_text("four heads", contents(f, buf, sizeof buf),
                "0-511       51.2   45.5           n/i     1.0\n"
                "512-1023      R2   40.0           n/i     n/i\n");
    /* Given labels: their order, and a line of absent cells for one no
     * row has (every allocator not installed). */
    static const char *const labels[] = {"512-1023", ">=8192"};
    p.labels = labels;
    p.nlabels = 2;
    f = freopen(NULL, "w+", f);
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    CHECK(table_pivot_print_rows(f, &t, &p) == 0);
    expect_text("given labels", contents(f, buf, sizeof buf),
                "512-1023      R2   40.0           n/i     n/i\n"
                ">=8192       n/i    n/i           n/i     n/i\n");
    p.labels = NULL;
    p.cell = NULL;
    f = freopen(NULL, "w+", f);
    CHECK(table_pivot_print(f, &t, &p) == -1);
    p.cell = cell;

    /* JSON: one head's cells of a column as an array; a head with no rows
     * an empty one. */
    f = freopen(NULL, "w+", f);
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    json j = {0};
    j.f = f;
    j.first[0] = 1;
    CHECK(table_pivot_json_column(&j, "ns", &t, &p, 0, NS) == 0);
    CHECK(table_pivot_json_column(&j, "marked", &t, &p, 2, MARKED) == 0);
    CHECK(table_pivot_json_column(&j, "x", &t, &p, 0, 99) == -1);
    expect_text("JSON columns", contents(f, buf, sizeof buf),
                "\n\"ns\": [51.25, 60, 99],\n\"marked\": [],\n\"x\": null");

    /* Positional rows: the keys once, a row as an array of its keyed
     * cells (the key-only columns left out). */
    f = freopen(NULL, "w+", f);
    CHECK(f != NULL);
    if (f == NULL)
        return 1;
    j.f = f;
    j.first[0] = 1;
    table_pivot_json_keys(&j, "fields", &t);
    CHECK(table_pivot_json_row(&j, "r", &t, 1) == 0);
    CHECK(table_pivot_json_row(&j, "past", &t, 6) == -1);
    expect_text("JSON rows", contents(f, buf, sizeof buf),
                "\n\"fields\": [\"ns\", \"marked\"],\n\"r\": [60, 2],\n\"past\": null");

    /* A bad table (a cell too many) prints nothing. */
    CHECK(table_u64(&t, 1) == -1);
    f = freopen(NULL, "w+", f);
    CHECK(table_pivot_print(f, &t, &p) == -1);
    CHECK(table_pivot_print_line(f, &t, &p, "ns", NS) == -1);
    expect_text("bad table", contents(f, buf, sizeof buf), "");
    f = freopen(NULL, "w+", f);
    j.f = f;
    j.first[0] = 1;
    CHECK(table_pivot_json_column(&j, "ns", &t, &p, 0, NS) == -1);
    expect_text("bad table, JSON", contents(f, buf, sizeof buf), "\n\"ns\": null");
    table_free(&t);
    fclose(f);
    return failures != 0;
}
