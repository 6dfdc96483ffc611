// SPDX-License-Identifier: MIT
/*
 * spawn.h -- runs one measurement in a child process of this executable,
 * optionally under LD_PRELOAD, and collects its stdout and exit status.
 *
 * Why children: a malloc peer can only be measured by making it the
 * process's malloc (LD_PRELOAD), and one allocator's heap must not warm or
 * fragment the next one's; so every measured run, rtmem's included, is a
 * fresh process of /proc/self/exe with the parent's LD_PRELOAD removed and
 * the peer's (if any) put in. The child reports on stdout in a line format
 * of the command's own; peers.h says how it proves the preload took.
 */
#ifndef RTM_LAB_SPAWN_H
#define RTM_LAB_SPAWN_H

#include <stddef.h>

typedef struct spawn_result {
    int ran;         /* 1: the child was started and waited for          */
    int exit_status; /* when it exited normally                          */
    int signal;      /* when killed by a signal (0 otherwise)            */
    char why[256];   /* when !ran, or for a signal: what happened         */
} spawn_result;

/* Runs /proc/self/exe with argv (argv[0] included, NULL-terminated) and
 * LD_PRELOAD=preload (none when preload is NULL or ""). Its stdout goes into
 * out[0..n) (NUL-terminated, truncated); stderr is inherited. Flushes our
 * stdio first. Returns 0 when the child exited with status 0, else -1 with
 * res saying why. */
int lab_spawn(char *const argv[], const char *preload, char *out, size_t n, spawn_result *res);

#endif /* RTM_LAB_SPAWN_H */
