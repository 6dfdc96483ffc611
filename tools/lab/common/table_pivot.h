// SPDX-License-Identifier: MIT
/*
 * table_pivot.h -- a filled table (table.h) shown as a cross-tab, for the
 * tables whose JSON is shaped per allocator but whose text is a pivot of
 * it: window x allocator, band x allocator, metric x phase.
 *
 * The table is filled once in the JSON's shape (a row per allocator and
 * window, say) and written to JSON with table_json() or
 * table_json_cells(); the pivot only renders it as text. Every table row
 * names its text column with an unsigned column (col_key: an index into
 * heads[], e.g. the allocator's) and, for the cross-tab, its text row with
 * a string column (row_key: "0-511", a window's x; null: the row is in no
 * text row, e.g. a window the compact text leaves out). Both are usually
 * TABLE_PIVOT_KEY columns (no key, no head): they are not in the JSON.
 *
 *   table rows                       table_pivot_print():
 *   band   head value                x band      tlsf    glibc
 *   0-511  0    51.2                 0-511       51.2     40.1
 *   0-511  1    40.1        ==>      512-1023    60.3        -
 *   512-.. 0    60.3
 *
 * A text row has a cell per head (heads[k] NULL: that text column is left
 * out); a (row, head) that no table row fills shows `absent` (an allocator
 * that is not installed has no rows). A cell's text comes from the cell
 * function, which sees the whole table row, so one cell may combine
 * several columns ("51 R2/8": a mean, marked and windows).
 *
 * table_pivot_print_line() is the transposed view of one column: one text
 * line, a cell per head from that column of the head's row (a table of a
 * row per allocator whose "max" column becomes the line "max  ...").
 *
 * table_pivot_json_column() is the same view in JSON: one head's cells of
 * a column as one array, for the JSON that is itself column-wise (a curve
 * as parallel arrays per allocator, which a plot reads at once).
 * table_pivot_json_row() writes a row as an array instead of an object,
 * its keys listed once by table_pivot_json_keys(), for JSON with
 * positional rows (memcheck's tens of thousands of runs: "row_fields" and
 * "rows"); groups and TABLE_OPTIONAL do not apply there.
 *
 * Lines are indent, the label padded to label_width, then for each head
 * a blank and the cell right-aligned to the head's width: the larger of
 * `width` and the head's length + 1. A table that is not ok prints
 * nothing and returns -1.
 */
#ifndef RTM_LAB_TABLE_PIVOT_H
#define RTM_LAB_TABLE_PIVOT_H

#include <stddef.h>
#include <stdio.h>

#include "common/table.h"

/* A column for the pivot's keys only: neither in the JSON nor in
 * table_print()'s text. */
#define TABLE_PIVOT_KEY                                                                            \
    {                                                                                              \
        NULL, NULL, 0, 0, 0, NULL, 0, NULL, NULL                                                   \
    }

/* The text of the cell in column col of table row `row` (the cross-tab
 * passes its value column), in buf. */
typedef void (*table_pivot_cell_fn)(const table *t, size_t row, size_t col, char *buf, size_t n,
                                    void *ctx);

typedef struct table_pivot {
    const char *indent;        /* before every line, or NULL */
    const char *corner;        /* the label column's header, or NULL */
    int label_width;           /* printf width of the labels (negative: left) */
    int width;                 /* least width of a cell */
    const char *const *heads;  /* the text columns, in order; NULL entries left out */
    size_t nheads;             /* entries in heads */
    size_t col_key;            /* unsigned column: the row's head, index into heads */
    size_t row_key;            /* string column: the row's text row (cross-tab) */
    size_t value;              /* the column the cross-tab's cells show */
    table_pivot_cell_fn cell;  /* a cell's text */
    void *ctx;                 /* for cell */
    const char *absent;        /* a cell no table row fills */
    const char *const *labels; /* the cross-tab's text rows, in order, or NULL */
    size_t nlabels;            /* entries in labels */
} table_pivot;

/* The header line: the corner, then the heads. 0 or -1. */
int table_pivot_print_header(FILE *f, const table_pivot *p);
/* The cross-tab's rows: a line per label (labels[], or when NULL every
 * distinct row_key in order of first appearance), a cell per head from
 * the row with that key and head. Given labels keep their lines when no
 * row has them (every allocator not installed: a line of `absent`).
 * 0 or -1. */
int table_pivot_print_rows(FILE *f, const table *t, const table_pivot *p);
/* Header and rows. 0 or -1. */
int table_pivot_print(FILE *f, const table *t, const table_pivot *p);
/* The transposed view of column col: one line labelled `label`, a cell
 * per head from column col of the head's (first) row. 0 or -1. */
int table_pivot_print_line(FILE *f, const table *t, const table_pivot *p, const char *label,
                           size_t col);

/* JSON: key: [the cells of column col of every row of head, in row
 * order] on one line. 0, or -1 (then key: null) when the table is bad. */
int table_pivot_json_column(json *j, const char *key, const table *t, const table_pivot *p,
                            size_t head, size_t col);

/* JSON: key: [the keys of the columns that have one, in column order] on
 * one line: what each position of table_pivot_json_row()'s arrays holds. */
void table_pivot_json_keys(json *j, const char *key, const table *t);
/* JSON: key: [the cells of row `row` in the columns that have a key] on
 * one line. 0, or -1 (then key: null) when the table is bad or has no
 * such row. */
int table_pivot_json_row(json *j, const char *key, const table *t, size_t row);

#endif /* RTM_LAB_TABLE_PIVOT_H */
