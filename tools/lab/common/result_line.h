// SPDX-License-Identifier: MIT
/*
 * result_line.h -- reading a measuring child's result line.
 *
 * Every command's children report on stdout in one format: a line that
 * starts with a tag ("RESULT", "WINDOW", ...) followed by tab-separated
 * key=value fields. Values never hold a tab or a newline (the child replaces
 * them), so a field ends at the next tab or at the end of the line. The
 * parent reads the fields it knows and ignores the rest, so a child may add
 * fields without breaking an older parent.
 */
#ifndef RTM_LAB_RESULT_LINE_H
#define RTM_LAB_RESULT_LINE_H

#include <stddef.h>
#include <stdint.h>

/* Copies the value of "\tkey=" on this line (up to the next tab or newline)
 * into out. Returns 0, or -1 when the key is absent (out is then ""). */
int line_field(const char *line, const char *key, char *out, size_t n);
/* The value of key as a number; 0 when absent. */
double line_field_num(const char *line, const char *key);
/* The value of key as an unsigned decimal integer; 0 when absent. */
uint64_t line_field_u64(const char *line, const char *key);

#endif /* RTM_LAB_RESULT_LINE_H */
