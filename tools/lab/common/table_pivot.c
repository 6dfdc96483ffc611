// SPDX-License-Identifier: MIT
/*
 * table_pivot.c -- a filled table shown as a cross-tab or one column of it
 * transposed (table_pivot.h).
 *
 * Only the public table API is used (table_at, table_ok): the pivot is a
 * second text view of the same cells table.c renders as JSON, so the two
 * cannot disagree on a figure; its JSON arrays write each cell with
 * table.c's table_json_cell(). Tables here are small (a row per allocator
 * and window: a few thousand), so rows are found by scanning.
 */
#include <string.h>

#include "common/table_pivot.h"

/* The head index of table row r, or nheads when it has none. */
static size_t head_of(const table *t, const table_pivot *p, size_t r)
{
    const table_cell *c = table_at(t, r, p->col_key);
    if (c == NULL || c->kind != TABLE_U64 || c->v.u64 >= p->nheads)
        return p->nheads;
    return (size_t)c->v.u64;
}

/* The text row of table row r, or NULL (shown in no text row). */
static const char *label_of(const table *t, const table_pivot *p, size_t r)
{
    const table_cell *c = table_at(t, r, p->row_key);
    return c != NULL && c->kind == TABLE_STR ? c->v.str : NULL;
}

/* The width of head k: at least its name and a blank. */
static int width_of(const table_pivot *p, size_t k)
{
    int w = (int)strlen(p->heads[k]) + 1;
    return w > p->width ? w : p->width;
}

static void print_label(FILE *f, const table_pivot *p, const char *label)
{
    fprintf(f, "%s%*s", p->indent != NULL ? p->indent : "", p->label_width,
            label != NULL ? label : "");
}

/* One line: for each head the cell in column col of its first row whose
 * label is `label` (any row when label is NULL). */
static void print_cells(FILE *f, const table *t, const table_pivot *p, const char *label,
                        size_t col)
{
    for (size_t k = 0; k < p->nheads; k++) {
        if (p->heads[k] == NULL)
            continue;
        char buf[128];
        snprintf(buf, sizeof buf, "%s", p->absent != NULL ? p->absent : "");
        for (size_t r = 0; r < t->nrows; r++) {
            const char *l = label != NULL ? label_of(t, p, r) : NULL;
            if (head_of(t, p, r) == k && (label == NULL || (l != NULL && strcmp(l, label) == 0))) {
                p->cell(t, r, col, buf, sizeof buf, p->ctx);
                break;
            }
        }
        fprintf(f, " %*s", width_of(p, k), buf);
    }
    fprintf(f, "\n");
}

int table_pivot_print_header(FILE *f, const table_pivot *p)
{
    print_label(f, p, p->corner);
    for (size_t k = 0; k < p->nheads; k++)
        if (p->heads[k] != NULL)
            fprintf(f, " %*s", width_of(p, k), p->heads[k]);
    fprintf(f, "\n");
    return 0;
}

/* Whether a row before r has the label l (its text row is printed). */
static int seen(const table *t, const table_pivot *p, size_t r, const char *l)
{
    for (size_t q = 0; q < r; q++) {
        const char *m = label_of(t, p, q);
        if (m != NULL && strcmp(m, l) == 0)
            return 1;
    }
    return 0;
}

int table_pivot_print_rows(FILE *f, const table *t, const table_pivot *p)
{
    if (!table_ok(t) || p->cell == NULL)
        return -1;
    for (size_t k = 0; p->labels != NULL && k < p->nlabels; k++) {
        print_label(f, p, p->labels[k]);
        print_cells(f, t, p, p->labels[k], p->value);
    }
    for (size_t r = 0; p->labels == NULL && r < t->nrows; r++) {
        const char *l = label_of(t, p, r);
        if (l == NULL || seen(t, p, r, l))
            continue;
        print_label(f, p, l);
        print_cells(f, t, p, l, p->value);
    }
    return 0;
}

int table_pivot_print(FILE *f, const table *t, const table_pivot *p)
{
    if (!table_ok(t) || p->cell == NULL)
        return -1;
    table_pivot_print_header(f, p);
    return table_pivot_print_rows(f, t, p);
}

int table_pivot_print_line(FILE *f, const table *t, const table_pivot *p, const char *label,
                           size_t col)
{
    if (!table_ok(t) || p->cell == NULL || col >= t->ncols)
        return -1;
    print_label(f, p, label);
    print_cells(f, t, p, NULL, col);
    return 0;
}

int table_pivot_json_column(json *j, const char *key, const table *t, const table_pivot *p,
                            size_t head, size_t col)
{
    if (!table_ok(t) || col >= t->ncols) {
        json_null(j, key);
        return -1;
    }
    json_arr_inline(j, key);
    for (size_t r = 0; r < t->nrows; r++)
        if (head_of(t, p, r) == head)
            table_json_cell(j, NULL, table_at(t, r, col));
    json_arr_end(j);
    return 0;
}

void table_pivot_json_keys(json *j, const char *key, const table *t)
{
    json_arr_inline(j, key);
    for (size_t k = 0; k < t->ncols; k++)
        if (t->cols[k].key != NULL)
            json_str(j, NULL, t->cols[k].key);
    json_arr_end(j);
}

int table_pivot_json_row(json *j, const char *key, const table *t, size_t row)
{
    if (!table_ok(t) || row >= t->nrows) {
        json_null(j, key);
        return -1;
    }
    json_arr_inline(j, key);
    for (size_t k = 0; k < t->ncols; k++)
        if (t->cols[k].key != NULL)
            table_json_cell(j, NULL, table_at(t, row, k));
    json_arr_end(j);
    return 0;
}
