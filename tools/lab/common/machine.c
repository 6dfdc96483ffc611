// SPDX-License-Identifier: MIT
/*
 * machine.c -- the machine description (machine.h), from /proc, /sys,
 * uname and getrlimit: nothing here needs privileges.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/machine.h"

static void read_cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon += 2;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, n, "%s", colon);
            break;
        }
    }
    fclose(f);
}

static void read_first_line(const char *path, char *out, size_t n, const char *absent)
{
    snprintf(out, n, "%s", absent);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(out, (int)n, f) != NULL)
        out[strcspn(out, "\n")] = '\0';
    else
        snprintf(out, n, "%s", absent);
    fclose(f);
}

static void limit_text(int resource, char *out, size_t n)
{
    struct rlimit rl;
    if (getrlimit(resource, &rl) != 0)
        snprintf(out, n, "?");
    else if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(out, n, "unlimited");
    else
        snprintf(out, n, "%llu", (unsigned long long)rl.rlim_cur);
}

void machine_describe(machine *m)
{
    memset(m, 0, sizeof *m);
    read_cpu_model(m->cpu, sizeof m->cpu);
    m->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    m->cpus_allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%s %.40s %.20s", u.sysname, u.release, u.machine);
    else
        snprintf(m->kernel, sizeof m->kernel, "unknown");
    read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", m->governor,
                    sizeof m->governor, "n/a (no cpufreq)");
    char rtprio[24], memlock[24];
    limit_text(RLIMIT_RTPRIO, rtprio, sizeof rtprio);
    limit_text(RLIMIT_MEMLOCK, memlock, sizeof memlock);
    snprintf(m->rt_limits, sizeof m->rt_limits, "RLIMIT_RTPRIO %s, RLIMIT_MEMLOCK %s%s", rtprio,
             memlock, geteuid() == 0 ? " (root)" : "");
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void machine_print(FILE *f, const machine *m)
{
    fprintf(f, "machine: %s, %d CPUs online (%d allowed), %s, governor %s, %s; %s\n", m->cpu,
            m->cpus_online, m->cpus_allowed, m->kernel, m->governor, m->rt_limits, m->date);
}

void machine_json(json *j, const machine *m)
{
    json_obj(j, "machine");
    json_str(j, "cpu", m->cpu);
    json_i64(j, "cpus_online", m->cpus_online);
    json_i64(j, "cpus_allowed", m->cpus_allowed);
    json_str(j, "kernel", m->kernel);
    json_str(j, "governor", m->governor);
    json_str(j, "rt_limits", m->rt_limits);
    json_str(j, "date", m->date);
    json_obj_end(j);
}
