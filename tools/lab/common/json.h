// SPDX-License-Identifier: MIT
/*
 * json.h -- a small streaming JSON writer for the --json reports.
 *
 * The writer keeps only a stack of "first element?" flags, so the report is
 * written as it is computed, without building a tree. Keys are given with
 * each value inside objects and are NULL inside arrays. Arrays opened with
 * json_arr_inline() print on one line (the memcheck rows: tens of thousands
 * of them). Non-finite numbers are written as null: JSON has no NaN.
 */
#ifndef RTM_BENCH_JSON_H
#define RTM_BENCH_JSON_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

typedef struct json {
    FILE *f;
    int depth;
    unsigned char first[JSON_MAX_DEPTH];   /* no element written yet */
    unsigned char inline_[JSON_MAX_DEPTH]; /* elements on one line   */
} json;

/* Opens path for writing ("-": standard output, see json_claim_stdout) and
 * starts the top-level object. Returns 0 or -1 (errno from fopen). */
int json_open(json *j, const char *path);
/* Reserves standard output for the JSON and sends everything else printed
 * there (tables, children) to standard error from now on. Called as soon as
 * "--json -" is parsed, before anything is printed. 0, or -1 (errno). */
int json_claim_stdout(void);
/* Ends the top-level object and closes the file. Returns 0 or -1 when a
 * write failed. */
int json_close(json *j);

void json_obj(json *j, const char *key);
void json_obj_end(json *j);
void json_arr(json *j, const char *key);
void json_arr_inline(json *j, const char *key);
void json_arr_end(json *j);

void json_str(json *j, const char *key, const char *v); /* NULL -> null */
void json_num(json *j, const char *key, double v);
void json_u64(json *j, const char *key, uint64_t v);
void json_i64(json *j, const char *key, int64_t v);
void json_bool(json *j, const char *key, int v);
void json_null(json *j, const char *key);

#endif /* RTM_BENCH_JSON_H */
