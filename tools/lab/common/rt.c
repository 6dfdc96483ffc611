// SPDX-License-Identifier: MIT
/*
 * rt.c -- real-time setup (rt.h).
 *
 * Priority 1 is enough: the point is not to be preempted by ordinary tasks,
 * not to outrank kernel threads. Linux's RT throttling (by default 950 ms of
 * every second) still lets the rest of a shared machine breathe, which is
 * what Xenomai's breathe() does by hand on Cobalt.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/rt.h"

static int last_allowed_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    for (size_t cpu = CPU_SETSIZE; cpu-- > 0;)
        if (CPU_ISSET(cpu, &set))
            return (int)cpu;
    return -1;
}

int rt_cpu_usable(int64_t cpu)
{
    cpu_set_t set;
    if (cpu == -1)
        return 1;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    return CPU_ISSET((size_t)cpu, &set) != 0;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((size_t)cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static const char *outcome(int rc, int err, char *buf, size_t n)
{
    if (rc == 0)
        return "ok";
    snprintf(buf, n, "not permitted (%s)", strerror(err));
    return buf;
}

void rt_setup(int enabled, int64_t cpu, char *note, size_t n)
{
    if (!enabled) {
        snprintf(note, n,
                 "real-time setup skipped (--no-rt): no mlockall, SCHED_OTHER, no pinning");
        return;
    }
    char b1[96], b2[96], b3[96];
    int rc_lock = mlockall(MCL_CURRENT | MCL_FUTURE);
    int err_lock = errno;
    int target = cpu >= 0 ? (int)cpu : last_allowed_cpu();
    int rc_pin = target >= 0 && target < CPU_SETSIZE ? pin(target) : -1;
    int err_pin = target >= 0 ? errno : EINVAL;
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = 1;
    int rc_fifo = sched_setscheduler(0, SCHED_FIFO, &sp);
    int err_fifo = errno;
    snprintf(note, n,
             "real-time setup: mlockall(MCL_CURRENT|MCL_FUTURE) %s; SCHED_FIFO priority 1 "
             "%s; pinned to CPU %d %s",
             outcome(rc_lock, err_lock, b1, sizeof b1), outcome(rc_fifo, err_fifo, b2, sizeof b2),
             target, outcome(rc_pin, err_pin, b3, sizeof b3));
}
