// SPDX-License-Identifier: MIT
/*
 * rt.h -- the real-time setup of a measuring process, when permitted:
 * memory locked (mlockall), SCHED_FIFO, one pinned CPU, as Xenomai's smokey
 * memcheck test runs (docs/METHODS.md), saying plainly what was not permitted.
 */
#ifndef RTM_BENCH_RT_H
#define RTM_BENCH_RT_H

#include <stddef.h>
#include <stdint.h>

/* Tries each step (cpu < 0: the highest-numbered CPU this process may use)
 * and writes a one-line note of what was and was not permitted. enabled == 0
 * skips everything and says so. */
void rt_setup(int enabled, int64_t cpu, char *note, size_t n);

#endif /* RTM_BENCH_RT_H */
