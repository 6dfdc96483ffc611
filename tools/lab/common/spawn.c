// SPDX-License-Identifier: MIT
/*
 * spawn.c -- a measured run in a child process (spawn.h): posix_spawn of
 * /proc/self/exe with a rebuilt environment and a pipe for stdout.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/spawn.h"

extern char **environ;

/* The child's environment: ours without LD_PRELOAD, plus the peer's. The
 * strings are shared with environ; *var holds the new LD_PRELOAD entry. */
static char **child_env(const char *preload, char **var)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 2, sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            env[k++] = environ[i];
    *var = NULL;
    if (preload != NULL && preload[0] != '\0') {
        size_t len = strlen(preload) + sizeof "LD_PRELOAD=";
        *var = malloc(len);
        if (*var == NULL) {
            free(env);
            return NULL;
        }
        snprintf(*var, len, "LD_PRELOAD=%s", preload);
        env[k++] = *var;
    }
    env[k] = NULL;
    return env;
}

/* Reads fd to its end into out (NUL-terminated, truncated; the rest is
 * drained so the child never blocks on a full pipe). */
static void read_all(int fd, char *out, size_t n)
{
    size_t len = 0;
    for (;;) {
        char tmp[4096];
        ssize_t got = read(fd, tmp, sizeof tmp);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t room = n - 1 - len;
        size_t take = (size_t)got < room ? (size_t)got : room;
        memcpy(out + len, tmp, take);
        len += take;
    }
    out[len] = '\0';
}

int lab_spawn(char *const argv[], const char *preload, char *out, size_t n, spawn_result *res)
{
    memset(res, 0, sizeof *res);
    out[0] = '\0';
    char *var = NULL;
    int fds[2];
    char **env = child_env(preload, &var);
    if (env == NULL || pipe(fds) != 0) {
        snprintf(res->why, sizeof res->why, "cannot set up the child: %s", strerror(errno));
        free(env);
        free(var);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    fflush(NULL);
    pid_t pid;
    int err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    free(env);
    free(var);
    if (err != 0) {
        close(fds[0]);
        snprintf(res->why, sizeof res->why, "cannot run /proc/self/exe: %s", strerror(err));
        return -1;
    }
    read_all(fds[0], out, n);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    res->ran = 1;
    if (WIFSIGNALED(status)) {
        res->signal = WTERMSIG(status);
        snprintf(res->why, sizeof res->why, "child killed by signal %d (%s)", res->signal,
                 strsignal(res->signal));
        return -1;
    }
    res->exit_status = WEXITSTATUS(status);
    if (res->exit_status != 0)
        snprintf(res->why, sizeof res->why, "child exit status %d", res->exit_status);
    return res->exit_status == 0 ? 0 : -1;
}
