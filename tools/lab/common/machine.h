// SPDX-License-Identifier: MIT
/*
 * machine.h -- the description of the machine a result was measured on,
 * printed at the top of every command's tables and written into every JSON
 * file: a figure without its CPU, kernel and frequency governor cannot be
 * compared with anyone else's.
 */
#ifndef RTM_LAB_MACHINE_H
#define RTM_LAB_MACHINE_H

#include <stdio.h>

#include "common/json.h"

typedef struct machine {
    char cpu[128];      /* /proc/cpuinfo "model name", or "unknown"          */
    int cpus_online;    /* sysconf(_SC_NPROCESSORS_ONLN)                     */
    int cpus_allowed;   /* CPUs this process may run on (affinity mask)      */
    char kernel[128];   /* uname: sysname release machine                    */
    char governor[64];  /* cpufreq governor of CPU 0, or "n/a (no cpufreq)"  */
    char rt_limits[96]; /* RLIMIT_RTPRIO and RLIMIT_MEMLOCK as a short text  */
    char date[32];      /* UTC, ISO 8601                                     */
} machine;

/* Fills m; never fails (unknown fields say so). */
void machine_describe(machine *m);
/* "machine: <cpu>, N CPUs (M allowed), <kernel>, governor G, <limits>" */
void machine_print(FILE *f, const machine *m);
/* Writes the "machine" object (docs/RESULTS.md). */
void machine_json(json *j, const machine *m);

#endif /* RTM_LAB_MACHINE_H */
