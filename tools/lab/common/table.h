// SPDX-License-Identifier: MIT
/*
 * table.h -- the lab's one output pipeline for tables: a command fills a
 * table once (a row per allocator, test, ...) and both its text table and
 * its JSON array are rendered from it, so a figure cannot appear in one and
 * be forgotten in the other, or be formatted twice.
 *
 * A table is a list of columns (table_col: the JSON key, the text header,
 * how the text shows the value) and rows of typed cells filled in column
 * order: a number (NaN is null), an unsigned or signed integer, a string,
 * a boolean or null. table_print() writes the header and the rows, aligned;
 * table_json() writes an array of objects, one per row, with the columns'
 * keys in column order (a column's group nests it in an object of that
 * name, e.g. "latency_ns": {"p50": ...}). A column with no key is derived
 * for reading (text only), one with no header is JSON only.
 *
 * The text may show the columns in another order than the JSON keys
 * (table_text_order: the headers in the order the text shows them; a
 * joined column stays with the one it joins). A group flagged
 * TABLE_NULL_GROUP is written as `group: null` when all its cells are null
 * (a summary of no runs), rather than as an object of nulls. A column's
 * text function may read the whole row (TABLE_ROW), when its text depends
 * on another column.
 *
 * A row may carry a note (table_note): its text then shows the label
 * columns (TABLE_LABEL) and the note instead of the other cells, as a row
 * that was not measured says why; its JSON is unchanged.
 *
 * Errors (a cell before any row, more cells than columns, a row left short,
 * out of memory) are sticky: the table is then "bad", table_print() prints
 * nothing, table_json() writes null for the key, and both return -1.
 */
#ifndef RTM_LAB_TABLE_H
#define RTM_LAB_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"

typedef enum table_kind {
    TABLE_NULL,
    TABLE_NUM, /* double; not finite: null */
    TABLE_U64,
    TABLE_I64,
    TABLE_STR,
    TABLE_BOOL,
} table_kind;

typedef struct table_cell {
    table_kind kind;
    union {
        double num;
        uint64_t u64;
        int64_t i64;
        char *str; /* the table's copy */
        int b;
    } v;
} table_cell;

/* A column's own text for a cell, null included (bytes as "64 MiB", ...):
 * writes buf. With TABLE_ROW, c is the row's first cell instead (c[k] is
 * column k's), for a text that depends on another column: a flag ("none
 * <= cap" when capped), or whichever of two keys is not null. */
typedef void (*table_text_fn)(const table_cell *c, char *buf, size_t n);

/* Column flags. */
#define TABLE_LABEL 1u /* shown in text even when the row has a note */
#define TABLE_JOIN  2u /* text: joined to the previous column, "a / b", under its header */
#define TABLE_RANGE 4u /* text: the same, joined as a range, "a..b" */
#define TABLE_OF    8u /* text: the same, joined as a count of, "a/b" */
#define TABLE_OPTIONAL                                                                             \
    16u /* JSON: left out when null (a group: when all its cells are), rather than null */
#define TABLE_NULL_GROUP                                                                           \
    32u /* JSON: the group is null as a whole when all its cells are (set on all of them) */
#define TABLE_ROW 64u /* text: the column's text function reads the whole row */

typedef struct table_col {
    const char *key;    /* JSON key; NULL: text only */
    const char *head;   /* text header; NULL: JSON only */
    int width;          /* text width; negative: left-aligned */
    int prec;           /* text digits after the point; integers: 0 */
    double div;         /* text shows value / div (0: 1; integers with prec 0: whole division) */
    const char *unit;   /* appended to the text ("k", "%"), or NULL */
    unsigned flags;     /* TABLE_LABEL, TABLE_JOIN, ..., TABLE_NULL_GROUP, TABLE_ROW */
    const char *group;  /* JSON: nested in an object of this key with its neighbours */
    table_text_fn text; /* the text of a cell (null too) instead of the above, or NULL */
} table_col;

/* A column in JSON only (no header), and one in text only (no key). */
#define TABLE_JSON_ONLY(key)                                                                       \
    {                                                                                              \
        key, NULL, 0, 0, 0, NULL, 0, NULL, NULL                                                    \
    }
#define TABLE_TEXT_ONLY(head, width)                                                               \
    {                                                                                              \
        NULL, head, width, 0, 0, NULL, 0, NULL, NULL                                               \
    }

typedef struct table {
    const table_col *cols;
    size_t ncols;
    const char *indent;            /* text: before every line ("" by default) */
    const char *const *text_order; /* text: headers in shown order, or NULL (table_text_order) */
    size_t ntext_order;
    size_t nrows, cap; /* rows filled, rows allocated */
    size_t next;       /* cells filled in the last row */
    table_cell *cells; /* nrows x ncols */
    char **notes;      /* per row, or NULL */
    int bad;
} table;

void table_init(table *t, const table_col *cols, size_t ncols);
void table_free(table *t);

/* Starts a row (the last one must be complete). 0 or -1. */
int table_row(table *t);
/* The next cell of the current row. 0 or -1 (the table is then bad). */
int table_num(table *t, double v);
int table_u64(table *t, uint64_t v);
int table_i64(table *t, int64_t v);
int table_str(table *t, const char *s); /* NULL: null */
int table_bool(table *t, int v);
int table_null(table *t);
/* n null cells: the columns of a group with nothing to show (a summary of
 * no runs). 0 or -1. */
int table_nulls(table *t, size_t n);
/* The current row's note (text only; "" shows the labels alone, NULL
 * clears it). 0 or -1. */
int table_note(table *t, const char *note);

/* The text shows the columns with these headers in this order (each
 * joined column after the one it joins), instead of column order; heads
 * is kept, not copied. Every column with a header must be listed once:
 * otherwise the text renders nothing and returns -1 (the JSON is not
 * affected). */
void table_text_order(table *t, const char *const *heads, size_t n);

/* 1 when the table is complete and good. */
int table_ok(const table *t);
/* The cell at (row, col), or NULL outside the table. */
const table_cell *table_at(const table *t, size_t row, size_t col);

/* Text: the header line, one row, or both for every row. 0 or -1. */
int table_print_header(FILE *f, const table *t);
int table_print_row(FILE *f, const table *t, size_t row);
int table_print(FILE *f, const table *t);

/* One cell as JSON: key: value, or an array element when key is NULL
 * (null for TABLE_NULL and a number that is not finite). */
void table_json_cell(json *j, const char *key, const table_cell *c);
/* The JSON members of one row, written into the object the caller opened
 * (which may hold other members too). 0 or -1 (nothing written). */
int table_json_cells(json *j, const table *t, size_t row);
/* JSON: key: [ {row 0}, {row 1}, ... ]. extra, when not NULL, is called
 * inside each row's object after its columns (nested data that is no
 * column: samples, a histogram). 0 or -1 (then key: null). */
int table_json(json *j, const char *key, const table *t,
               void (*extra)(json *j, size_t row, void *ctx), void *ctx);

/* JSON: key: [cell of row 0, cell of row 1, ...], one column as a flat
 * array on one line (a histogram's counts, whose rows are its buckets).
 * 0 or -1 (then key: null). */
int table_json_column(json *j, const char *key, const table *t, size_t col);

/* JSON: key: {row 0's name: its value, ...}, an object keyed by the
 * string cells of column name_col with the cells of column col (counts by
 * operation). 0 or -1 (then key: null; also when a name is not a string). */
int table_json_map(json *j, const char *key, const table *t, size_t name_col, size_t col);

#endif /* RTM_LAB_TABLE_H */
