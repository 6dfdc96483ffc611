// SPDX-License-Identifier: MIT
/*
 * trace_cli.h -- what the trace commands (trace, replay, fit) share on the
 * command line and in their reports: the positional FILE, loading it with
 * the lab's exit statuses (a bad file is 1, with the reader's offset), the
 * JSON envelope, and byte counts for people ("3.2 MiB").
 */
#ifndef RTM_LAB_TRACE_CLI_H
#define RTM_LAB_TRACE_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"
#include "trace/trace_read.h"

/* Takes FILE from argv[1] when it is not an option: moves it out of argv
 * (argv[1..] shift down, *argc decreases) and returns it; NULL otherwise. */
const char *trace_cli_take_file(int *argc, char **argv);

/* Loads path; on failure prints "rtmem <cmd>: <path>: <why>" and returns -1
 * (the caller exits 1). */
int trace_cli_load(const char *cmd, const char *path, trace *t);

/* 0 when t holds at least one call. Otherwise prints "rtmem <cmd>: <path>:
 * no calls in this trace (of <program>), <consequence>" and where to look
 * for the calls, and returns -1 (the caller exits 1): a region sized or a replay timed for
 * nothing would only look like an answer. */
int trace_cli_need_calls(const char *cmd, const char *path, const trace *t,
                         const char *consequence);

/* Opens path and writes the envelope (tool, command, schema_version 1,
 * machine, rt_setup). Returns 0 or -1 (message printed). */
int trace_cli_json_open(json *j, const char *cmd, const char *path, const char *rt_setup);

/* "3.2 MiB", "512 B", "17.0 KiB" */
const char *trace_cli_bytes(uint64_t v, char *buf, size_t n);

#endif /* RTM_LAB_TRACE_CLI_H */
