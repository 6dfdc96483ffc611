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

/* Whether --cpu cpu names a CPU this process may run on (-1, "the default",
 * counts as one). A command checks it with its options: pinning to a CPU
 * that is not there would only be "not permitted" in the report, and the
 * run would measure on some other CPU than the one asked for. */
int rt_cpu_usable(int64_t cpu);

#endif /* RTM_BENCH_RT_H */
