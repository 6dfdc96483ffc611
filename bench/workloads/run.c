// SPDX-License-Identifier: MIT
/*
 * bench/workloads/run.c -- the launcher scripts/workloads.py measures every
 * run through: forks, execs the command, waits for it with wait4 and writes
 * "wall_s user_s sys_s maxrss_kib exit" to RESULT_FILE.
 *
 * Why not os.wait4 on a process python starts directly: Linux keeps a
 * process's peak RSS across exec (the old address space's high-water mark
 * is folded in), so a child forked from python starts with python's ~10-15
 * MiB as its peak and a small workload's RSS is lost under it. Forked from
 * this small program, the floor is its own ~1 MiB. ru_maxrss covers the
 * command's waited-for children too (gcc's cc1 and as). SIGTERM and SIGINT
 * are passed on to the command. The allocator comes in
 * RTMEM_WORKLOAD_PRELOAD, which becomes the command's LD_PRELOAD (this
 * program itself runs without one, so the floor is the same for all).
 * usage: rtmem-workload-run RESULT_FILE COMMAND [ARGS...]
 * Exit: the command's status (128 + signal when killed), 127 when it could
 * not be started, 2 on misuse.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t child = 0;

static void pass_on(int sig)
{
    if (child > 0)
        kill((pid_t)child, sig);
}

static double secs(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec * 1e-6; }

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rtmem-workload-run RESULT_FILE COMMAND [ARGS...]\n");
        return 2;
    }
    FILE *out = fopen(argv[1], "w");
    if (out == NULL) {
        perror(argv[1]);
        return 2;
    }
    struct sigaction sa = {0};
    sa.sa_handler = pass_on;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 127;
    }
    if (pid == 0) {
        fclose(out);
        const char *lib = getenv("RTMEM_WORKLOAD_PRELOAD");
        if (lib != NULL && lib[0] != '\0')
            setenv("LD_PRELOAD", lib, 1);
        unsetenv("RTMEM_WORKLOAD_PRELOAD");
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    child = pid;
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        ; /* EINTR: a signal passed on */
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    fprintf(out, "%.6f %.6f %.6f %ld %d\n", wall, secs(ru.ru_utime), secs(ru.ru_stime),
            ru.ru_maxrss, code);
    return fclose(out) == 0 ? code : 2;
}
