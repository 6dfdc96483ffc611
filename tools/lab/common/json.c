// SPDX-License-Identifier: MIT
/*
 * json.c -- the streaming JSON writer (json.h).
 *
 * "--json -" sends the JSON to standard output. The commands print their
 * tables on standard output too, so json_claim_stdout() keeps a copy of the
 * original descriptor for the JSON and points descriptor 1 at standard
 * error: every table, and every child's output, then goes to stderr, and
 * `rtmem <cmd> --json - | jq` reads JSON only, whatever a command prints.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"

/* The descriptor the JSON goes to after json_claim_stdout(), or -1. */
static int stdout_for_json = -1;

int json_claim_stdout(void)
{
    if (stdout_for_json >= 0)
        return 0;
    fflush(stdout);
    int fd = dup(STDOUT_FILENO);
    if (fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        if (fd >= 0)
            (void)close(fd);
        return -1;
    }
    stdout_for_json = fd;
    return 0;
}

/* Writes the separator and, outside one-line arrays, the line break and
 * indentation that come before an element. */
static void element(json *j)
{
    int d = j->depth;
    if (!j->first[d]) {
        fputc(',', j->f);
        if (j->inline_[d])
            fputc(' ', j->f);
    }
    j->first[d] = 0;
    if (!j->inline_[d]) {
        fputc('\n', j->f);
        for (int i = 0; i < d; i++)
            fputs("  ", j->f);
    }
}

static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void begin(json *j, const char *key)
{
    element(j);
    if (key != NULL) {
        write_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(json *j, const char *key, char bracket, int one_line)
{
    begin(j, key);
    fputc(bracket, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->first[j->depth] = 1;
    j->inline_[j->depth] = (unsigned char)(one_line || j->inline_[j->depth - 1]);
}

static void close_level(json *j, char bracket)
{
    int had = !j->first[j->depth];
    int one_line = j->inline_[j->depth];
    j->depth--;
    if (had && !one_line) {
        fputc('\n', j->f);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->f);
    }
    fputc(bracket, j->f);
}

int json_open(json *j, const char *path)
{
    if (strcmp(path, "-") == 0 && json_claim_stdout() == 0)
        j->f = fdopen(dup(stdout_for_json), "w");
    else
        j->f = fopen(path, "w");
    if (j->f == NULL)
        return -1;
    j->depth = 0;
    j->first[0] = 1;
    j->inline_[0] = 0;
    fputc('{', j->f);
    return 0;
}

int json_close(json *j)
{
    fputs("\n}\n", j->f);
    int bad = ferror(j->f);
    return fclose(j->f) != 0 || bad ? -1 : 0;
}

void json_obj(json *j, const char *key) { open_level(j, key, '{', 0); }
void json_obj_end(json *j) { close_level(j, '}'); }
void json_arr(json *j, const char *key) { open_level(j, key, '[', 0); }
void json_arr_inline(json *j, const char *key) { open_level(j, key, '[', 1); }
void json_arr_end(json *j) { close_level(j, ']'); }

void json_str(json *j, const char *key, const char *v)
{
    begin(j, key);
    if (v == NULL)
        fputs("null", j->f);
    else
        write_string(j->f, v);
}

void json_num(json *j, const char *key, double v)
{
    begin(j, key);
    if (isfinite(v))
        fprintf(j->f, "%.10g", v);
    else
        fputs("null", j->f);
}

void json_u64(json *j, const char *key, uint64_t v)
{
    begin(j, key);
    fprintf(j->f, "%" PRIu64, v);
}

void json_i64(json *j, const char *key, int64_t v)
{
    begin(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void json_bool(json *j, const char *key, int v)
{
    begin(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json *j, const char *key)
{
    begin(j, key);
    fputs("null", j->f);
}
