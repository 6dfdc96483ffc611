// SPDX-License-Identifier: MIT
/*
 * result_line.c -- the fields of a child's result line (result_line.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/result_line.h"

int line_field(const char *line, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    const char *end = strchr(line, '\n');
    for (const char *p = strchr(line, '\t'); p != NULL && (end == NULL || p < end);
         p = strchr(p + 1, '\t')) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '=') {
            const char *v = p + 2 + klen;
            size_t vlen = strcspn(v, "\t\n");
            snprintf(out, n, "%.*s", (int)(vlen < n ? vlen : n - 1), v);
            return 0;
        }
    }
    out[0] = '\0';
    return -1;
}

double line_field_num(const char *line, const char *key)
{
    char buf[64];
    return line_field(line, key, buf, sizeof buf) == 0 ? strtod(buf, NULL) : 0.0;
}

uint64_t line_field_u64(const char *line, const char *key)
{
    char buf[32];
    return line_field(line, key, buf, sizeof buf) == 0 ? strtoull(buf, NULL, 10) : 0u;
}
