// SPDX-License-Identifier: MIT
/*
 * opts.h -- the command-line options of every subcommand, table driven.
 *
 * Each subcommand describes its options in an array of opt_spec; one parser
 * reads "--name value", "--name=value" and flags, and says precisely what
 * was wrong. Misuse is exit status 2 with that one message and a pointer to
 * --help on stderr (opts_usage_error), --help the usage on stdout and status
 * 0: the caller does that from the return value.
 */
#ifndef RTM_BENCH_OPTS_H
#define RTM_BENCH_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum opt_kind {
    OPT_U64,  /* decimal unsigned integer                        -> uint64_t */
    OPT_SIZE, /* unsigned integer with optional k/m/g (x1024)    -> uint64_t */
    OPT_I64,  /* decimal signed integer                          -> int64_t  */
    OPT_DBL,  /* floating-point number                           -> double   */
    OPT_STR,  /* any text                                        -> const char * */
    OPT_FLAG  /* no value                                        -> int (set to 1) */
} opt_kind;

typedef struct opt_spec {
    const char *name; /* without the leading "--" */
    opt_kind kind;
    void *dst;
    int set; /* filled by opts_parse: 1 when given on the command line */
} opt_spec;

enum { OPTS_OK = 0, OPTS_HELP = 1, OPTS_BAD = -1 };
enum { OPTS_GO_ON = -1 }; /* opts_parse_or_exit: the command goes on */

/* Parses argv[1..argc) (argv[0] is the subcommand). Returns OPTS_OK,
 * OPTS_HELP for -h/--help, or OPTS_BAD after printing why to stderr
 * prefixed with "rtmem <cmd>: ". A --json path other than "-" that cannot
 * be written (opts_writable) is OPTS_BAD too. */
int opts_parse(int argc, char **argv, opt_spec *specs, size_t nspecs);

/* The prologue commands share: opts_parse(), then for --help the usage on
 * stdout and exit status 0, for misuse opts_usage_error() and 2. Returns
 * OPTS_GO_ON when the command goes on, else the status to exit with:
 *     int rc = opts_parse_or_exit(argc, argv, specs, n, usage);
 *     if (rc != OPTS_GO_ON)
 *         return rc;                                                      */
int opts_parse_or_exit(int argc, char **argv, opt_spec *specs, size_t nspecs,
                       void (*usage)(FILE *));

/* 0 when path names a file this process could write: an existing regular
 * file with write permission, or a new name in an existing writable
 * directory. -1 with errno otherwise. Creates nothing. */
int opts_writable(const char *path);

/* Whether the option called name was given. */
int opts_given(const opt_spec *specs, size_t nspecs, const char *name);

/* Parses "123", "2048k", "2m", "1g". Returns 0, or -1 for anything else
 * (sign, garbage, overflow). */
int opts_parse_size(const char *text, uint64_t *out);

/* Prints "rtmem <cmd>: <message>" to stderr. */
void opts_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The end of every usage error, after its message (opts_error): the line
 * "Try 'rtmem <cmd> --help'." on stderr, not the whole usage, which would
 * bury the one line that says what was wrong. cmd is the command's label
 * ("bench random"), NULL for rtmem itself. Returns 2, the misuse status. */
int opts_usage_error(const char *cmd);

/* Standard output at exit: flushes it and returns 0, or prints why it could
 * not be written ("rtmem <cmd>: standard output: No space left on device")
 * and returns -1. A report that never reached its file must not end in
 * status 0; the callers make it status 1. cmd as for opts_usage_error. */
int opts_close_stdout(const char *cmd);

#endif /* RTM_BENCH_OPTS_H */
