// SPDX-License-Identifier: MIT
/*
 * table.c -- a table filled once, rendered as text and as JSON (table.h).
 *
 * Cells are kept in one array, row after row; strings are copied, so a
 * command may fill a cell from a buffer on its stack. Every error marks
 * the table bad rather than writing past a row: a bad table renders as
 * nothing (text) or null (JSON), never as a row with shifted columns.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/table.h"

void table_init(table *t, const table_col *cols, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
    t->ncols = ncols;
    t->indent = "";
    t->bad = cols == NULL || ncols == 0;
}

void table_free(table *t)
{
    size_t n = t->nrows * t->ncols;
    for (size_t i = 0; t->cells != NULL && i < n; i++)
        if (t->cells[i].kind == TABLE_STR)
            free(t->cells[i].v.str);
    for (size_t r = 0; t->notes != NULL && r < t->nrows; r++)
        free(t->notes[r]);
    free(t->cells);
    free(t->notes);
    t->cells = NULL;
    t->notes = NULL;
    t->nrows = t->cap = t->next = 0;
}

int table_row(table *t)
{
    if (t->bad || (t->nrows > 0 && t->next != t->ncols)) {
        t->bad = 1;
        return -1;
    }
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        table_cell *c = realloc(t->cells, cap * t->ncols * sizeof *c);
        if (c == NULL) {
            t->bad = 1;
            return -1;
        }
        t->cells = c;
        char **n = realloc(t->notes, cap * sizeof *n);
        if (n == NULL) {
            t->bad = 1;
            return -1;
        }
        t->notes = n;
        t->cap = cap;
    }
    t->notes[t->nrows] = NULL;
    t->nrows++;
    t->next = 0;
    return 0;
}

/* The next cell of the current row, of that kind, or NULL (the table is
 * then bad). */
static table_cell *next_cell(table *t, table_kind kind)
{
    if (t->bad || t->nrows == 0 || t->next >= t->ncols) {
        t->bad = 1;
        return NULL;
    }
    table_cell *c = &t->cells[(t->nrows - 1) * t->ncols + t->next];
    c->kind = kind;
    t->next++;
    return c;
}

/* A copy of s in *out (NULL for NULL); -1 (the table bad) without memory. */
static int copy_of(table *t, const char *s, char **out)
{
    *out = NULL;
    if (s == NULL)
        return 0;
    size_t n = strlen(s) + 1;
    *out = malloc(n);
    if (*out == NULL) {
        t->bad = 1;
        return -1;
    }
    memcpy(*out, s, n);
    return 0;
}

int table_num(table *t, double v)
{
    table_cell *c = next_cell(t, isfinite(v) ? TABLE_NUM : TABLE_NULL);
    if (c != NULL)
        c->v.num = v;
    return c != NULL ? 0 : -1;
}

int table_u64(table *t, uint64_t v)
{
    table_cell *c = next_cell(t, TABLE_U64);
    if (c != NULL)
        c->v.u64 = v;
    return c != NULL ? 0 : -1;
}

int table_i64(table *t, int64_t v)
{
    table_cell *c = next_cell(t, TABLE_I64);
    if (c != NULL)
        c->v.i64 = v;
    return c != NULL ? 0 : -1;
}

int table_str(table *t, const char *s)
{
    char *copy;
    if (copy_of(t, s, &copy) != 0)
        return -1;
    table_cell *c = next_cell(t, s != NULL ? TABLE_STR : TABLE_NULL);
    if (c == NULL) {
        free(copy);
        return -1;
    }
    c->v.str = copy;
    return 0;
}

int table_bool(table *t, int v)
{
    table_cell *c = next_cell(t, TABLE_BOOL);
    if (c != NULL)
        c->v.b = v != 0;
    return c != NULL ? 0 : -1;
}

int table_null(table *t) { return next_cell(t, TABLE_NULL) != NULL ? 0 : -1; }

int table_nulls(table *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (table_null(t) != 0)
            return -1;
    return 0;
}

int table_note(table *t, const char *note)
{
    if (t->bad || t->nrows == 0) {
        t->bad = 1;
        return -1;
    }
    char **slot = &t->notes[t->nrows - 1];
    free(*slot);
    return copy_of(t, note, slot);
}

int table_ok(const table *t) { return !t->bad && (t->nrows == 0 || t->next == t->ncols); }

const table_cell *table_at(const table *t, size_t row, size_t col)
{
    if (row >= t->nrows || col >= t->ncols || (row + 1 == t->nrows && col >= t->next))
        return NULL;
    return &t->cells[row * t->ncols + col];
}

/* --- text ------------------------------------------------------------------ */

static int joined(const table_col *c)
{
    return (c->flags & (TABLE_JOIN | TABLE_RANGE | TABLE_OF)) != 0;
}

static const char *join_text(const table_col *c)
{
    return c->flags & TABLE_RANGE ? ".." : c->flags & TABLE_OF ? "/" : " / ";
}
static int shown(const table_col *c) { return c->head != NULL || joined(c); }

/* The text of cell k of a row (cells: the row's first). */
static void cell_text(const table_col *col, const table_cell *cells, size_t k, char *buf, size_t n)
{
    const table_cell *c = &cells[k];
    double div = col->div > 0 ? col->div : 1.0;
    const char *unit = col->unit != NULL ? col->unit : "";
    if (col->text != NULL) {
        col->text(col->flags & TABLE_ROW ? cells : c, buf, n);
        return;
    }
    if (c->kind == TABLE_NULL) {
        snprintf(buf, n, "-");
        return;
    }
    switch (c->kind) {
    case TABLE_NUM:
        snprintf(buf, n, "%.*f%s", col->prec, c->v.num / div, unit);
        break;
    case TABLE_U64:
        if (col->prec == 0)
            snprintf(buf, n, "%llu%s", (unsigned long long)(c->v.u64 / (uint64_t)div), unit);
        else
            snprintf(buf, n, "%.*f%s", col->prec, (double)c->v.u64 / div, unit);
        break;
    case TABLE_I64:
        if (col->prec == 0)
            snprintf(buf, n, "%lld%s", (long long)(c->v.i64 / (int64_t)div), unit);
        else
            snprintf(buf, n, "%.*f%s", col->prec, (double)c->v.i64 / div, unit);
        break;
    case TABLE_STR:
        snprintf(buf, n, "%s%s", c->v.str, unit);
        break;
    case TABLE_BOOL:
        snprintf(buf, n, "%s", c->v.b ? "yes" : "no");
        break;
    case TABLE_NULL:
        break;
    }
}

/* The column whose header is head (not a joined one), or ncols. */
static size_t find_head(const table *t, const char *head)
{
    for (size_t k = 0; k < t->ncols; k++)
        if (t->cols[k].head != NULL && !joined(&t->cols[k]) && strcmp(t->cols[k].head, head) == 0)
            return k;
    return t->ncols;
}

void table_text_order(table *t, const char *const *heads, size_t n)
{
    t->text_order = heads;
    t->ntext_order = n;
}

/* Whether the text order, if any, lists every column with a header once:
 * a column left out or named twice would silently drop or repeat figures. */
static int order_ok(const table *t)
{
    if (t->text_order == NULL)
        return 1;
    size_t headed = 0;
    for (size_t k = 0; k < t->ncols; k++)
        headed += t->cols[k].head != NULL && !joined(&t->cols[k]);
    if (t->ntext_order != headed)
        return 0;
    for (size_t i = 0; i < t->ntext_order; i++) {
        if (t->text_order[i] == NULL || find_head(t, t->text_order[i]) == t->ncols)
            return 0;
        for (size_t m = 0; m < i; m++)
            if (strcmp(t->text_order[m], t->text_order[i]) == 0)
                return 0;
    }
    return 1;
}

/* The text of shown column k in a row (its header when heads), with the
 * columns joined to it appended. */
static void column_text(const table *t, size_t row, size_t k, int heads, char *text, size_t n)
{
    const table_col *c = &t->cols[k];
    if (heads) {
        snprintf(text, n, "%s", c->head != NULL ? c->head : "");
        return;
    }
    const table_cell *cells = &t->cells[row * t->ncols];
    cell_text(c, cells, k, text, n);
    for (size_t m = k + 1; m < t->ncols && joined(&t->cols[m]); m++) {
        char more[128];
        size_t used = strlen(text);
        cell_text(&t->cols[m], cells, m, more, sizeof more);
        snprintf(text + used, n - used, "%s%s", join_text(&t->cols[m]), more);
    }
}

/* One line: the shown columns (labels only when note != NULL) in text
 * order, each padded to its width, then the note; trailing blanks cut.
 * heads: the headers. */
static void print_line(FILE *f, const table *t, size_t row, int heads, const char *note)
{
    char line[1024];
    size_t len = 0;
    int first = 1;
    size_t n = t->text_order != NULL ? t->ntext_order : t->ncols;
    len += (size_t)snprintf(line, sizeof line, "%s", t->indent != NULL ? t->indent : "");
    for (size_t i = 0; i < n && len < sizeof line; i++) {
        size_t k = t->text_order != NULL ? find_head(t, t->text_order[i]) : i;
        const table_col *c = &t->cols[k];
        if (!shown(c) || joined(c))
            continue;
        if (note != NULL && !(c->flags & TABLE_LABEL))
            continue;
        char text[256];
        column_text(t, row, k, heads, text, sizeof text);
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%*s", first ? "" : " ", c->width,
                                text);
        first = 0;
    }
    if (note != NULL && len < sizeof line)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", first ? "" : " ", note);
    if (len >= sizeof line)
        len = sizeof line - 1;
    while (len > 0 && line[len - 1] == ' ')
        len--;
    line[len] = '\0';
    fprintf(f, "%s\n", line);
}

int table_print_header(FILE *f, const table *t)
{
    if (!table_ok(t) || !order_ok(t))
        return -1;
    print_line(f, t, 0, 1, NULL);
    return 0;
}

int table_print_row(FILE *f, const table *t, size_t row)
{
    if (!table_ok(t) || !order_ok(t) || row >= t->nrows)
        return -1;
    print_line(f, t, row, 0, t->notes[row]);
    return 0;
}

int table_print(FILE *f, const table *t)
{
    if (table_print_header(f, t) != 0)
        return -1;
    for (size_t r = 0; r < t->nrows; r++)
        table_print_row(f, t, r);
    return 0;
}

/* --- JSON ------------------------------------------------------------------ */

void table_json_cell(json *j, const char *key, const table_cell *c)
{
    switch (c->kind) {
    case TABLE_NULL:
        json_null(j, key);
        break;
    case TABLE_NUM:
        json_num(j, key, c->v.num);
        break;
    case TABLE_U64:
        json_u64(j, key, c->v.u64);
        break;
    case TABLE_I64:
        json_i64(j, key, c->v.i64);
        break;
    case TABLE_STR:
        json_str(j, key, c->v.str);
        break;
    case TABLE_BOOL:
        json_bool(j, key, c->v.b);
        break;
    }
}

/* Whether the columns from k on that share column k's group (just k when
 * it has none) all carry flag and are null in this row: TABLE_OPTIONAL
 * leaves them out of the JSON, TABLE_NULL_GROUP writes the group as null. */
static int all_null(const table *t, size_t row, size_t k, unsigned flag)
{
    const char *group = t->cols[k].group;
    for (size_t m = k; m < t->ncols; m++) {
        const table_col *c = &t->cols[m];
        if (m > k && (group == NULL || c->group == NULL || strcmp(c->group, group) != 0))
            break;
        if (c->key == NULL)
            continue;
        if (!(c->flags & flag) || t->cells[row * t->ncols + m].kind != TABLE_NULL)
            return 0;
    }
    return 1;
}

int table_json_cells(json *j, const table *t, size_t row)
{
    if (!table_ok(t) || row >= t->nrows)
        return -1;
    const char *group = NULL;
    int skip = 0;
    for (size_t k = 0; k < t->ncols; k++) {
        const table_col *c = &t->cols[k];
        if (c->key == NULL)
            continue;
        int same = group != NULL && c->group != NULL && strcmp(c->group, group) == 0;
        if (group != NULL && !same) {
            if (!skip)
                json_obj_end(j);
            group = NULL;
        }
        if (c->group != NULL && group == NULL) {
            group = c->group;
            skip = all_null(t, row, k, TABLE_OPTIONAL);
            if (!skip && all_null(t, row, k, TABLE_NULL_GROUP)) {
                json_null(j, c->group);
                skip = 1;
            } else if (!skip) {
                json_obj(j, c->group);
            }
        }
        if (group != NULL ? skip : all_null(t, row, k, TABLE_OPTIONAL))
            continue;
        table_json_cell(j, c->key, &t->cells[row * t->ncols + k]);
    }
    if (group != NULL && !skip)
        json_obj_end(j);
    return 0;
}

int table_json(json *j, const char *key, const table *t,
               void (*extra)(json *j, size_t row, void *ctx), void *ctx)
{
    if (!table_ok(t)) {
        json_null(j, key);
        return -1;
    }
    json_arr(j, key);
    for (size_t r = 0; r < t->nrows; r++) {
        json_obj(j, NULL);
        table_json_cells(j, t, r);
        if (extra != NULL)
            extra(j, r, ctx);
        json_obj_end(j);
    }
    json_arr_end(j);
    return 0;
}

int table_json_column(json *j, const char *key, const table *t, size_t col)
{
    if (!table_ok(t) || col >= t->ncols) {
        json_null(j, key);
        return -1;
    }
    json_arr_inline(j, key);
    for (size_t r = 0; r < t->nrows; r++)
        table_json_cell(j, NULL, &t->cells[r * t->ncols + col]);
    json_arr_end(j);
    return 0;
}

int table_json_map(json *j, const char *key, const table *t, size_t name_col, size_t col)
{
    int ok = table_ok(t) && name_col < t->ncols && col < t->ncols;
    for (size_t r = 0; ok && r < t->nrows; r++)
        ok = t->cells[r * t->ncols + name_col].kind == TABLE_STR;
    if (!ok) {
        json_null(j, key);
        return -1;
    }
    json_obj(j, key);
    for (size_t r = 0; r < t->nrows; r++)
        table_json_cell(j, t->cells[r * t->ncols + name_col].v.str, &t->cells[r * t->ncols + col]);
    json_obj_end(j);
    return 0;
}
