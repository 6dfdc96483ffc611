// SPDX-License-Identifier: MIT
/*
 * rec_exec.c -- the wrapper and the parent the recorder's exec tests
 * record (tools/record/tests/record_wrappers.sh): it allocates sizes
 * nothing else asks for, then replaces itself by PROGRAM, or starts
 * PROGRAM as children, so that rec_check.c can tell its calls from
 * PROGRAM's in the traces.
 *
 *   rec_exec HOW PROGRAM   malloc(60001) freed, malloc(60002) kept, a
 *                          thread that makes 10 x malloc(60004) freed and
 *                          then waits, still alive at the exec (its
 *                          buffered records must reach the trace), then
 *                          PROGRAM in this process through the exec
 *                          function HOW: execve execv execvp execvpe execl
 *                          execle execlp fexecve execveat (the p forms are
 *                          given a bare name and search PATH), or clearenv:
 *                          execve with an empty environment, as env -i does
 *   rec_exec spawn PROGRAM two children, one fork + execv(PROGRAM), one
 *                          fork + `sh -c 'exec "$0"' PROGRAM`; waits for
 *                          both, then malloc(60003) freed; exit 0
 *
 * Exit 126 when an exec fails (the test then fails on the status).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Not optimised away (a malloc freed unused may be). */
static void touch_and_free(size_t n)
{
    volatile char *p = malloc(n);
    if (p == NULL)
        exit(1);
    p[0] = 1;
    free((void *)p);
}

static const char *bare(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static int replace(const char *how, const char *prog)
{
    char *argv[] = {(char *)prog, NULL};
    char *no_env[] = {NULL};
    if (strcmp(how, "execve") == 0)
        execve(prog, argv, environ);
    else if (strcmp(how, "execv") == 0)
        execv(prog, argv);
    else if (strcmp(how, "execvp") == 0)
        execvp(bare(prog), argv);
    else if (strcmp(how, "execvpe") == 0)
        execvpe(bare(prog), argv, environ);
    else if (strcmp(how, "execl") == 0)
        execl(prog, prog, (char *)NULL);
    else if (strcmp(how, "execle") == 0)
        execle(prog, prog, (char *)NULL, environ);
    else if (strcmp(how, "execlp") == 0)
        execlp(bare(prog), prog, (char *)NULL);
    else if (strcmp(how, "fexecve") == 0)
        fexecve(open(prog, O_RDONLY | O_CLOEXEC), argv, environ);
    else if (strcmp(how, "execveat") == 0)
        execveat(AT_FDCWD, prog, argv, environ, 0);
    else if (strcmp(how, "clearenv") == 0)
        execve(prog, argv, no_env);
    else {
        fprintf(stderr, "rec_exec: unknown HOW %s\n", how);
        return 2;
    }
    perror("rec_exec: exec");
    return 126;
}

static int ready_pipe[2];

/* Allocates, says so, and waits for the exec to end it. */
static void *busy(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++)
        touch_and_free(60004);
    char c = 1;
    if (write(ready_pipe[1], &c, 1) != 1)
        exit(1);
    for (;;)
        pause();
    return NULL;
}

static int spawn(const char *prog)
{
    pid_t kids[2];
    for (int i = 0; i < 2; i++) {
        kids[i] = fork();
        if (kids[i] < 0)
            return 1;
        if (kids[i] == 0) {
            if (i == 0)
                execv(prog, (char *[]){(char *)prog, NULL});
            else
                execl("/bin/sh", "sh", "-c", "exec \"$0\"", prog, (char *)NULL);
            _exit(126);
        }
    }
    for (int i = 0; i < 2; i++) {
        int st;
        /* rec_prog ends with 3 on purpose; anything else is a failure */
        if (waitpid(kids[i], &st, 0) != kids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
            return 1;
    }
    touch_and_free(60003);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rec_exec HOW|spawn PROGRAM\n");
        return 2;
    }
    if (strcmp(argv[1], "spawn") == 0)
        return spawn(argv[2]);
    touch_and_free(60001);
    volatile char *kept = malloc(60002); /* live when the image is replaced */
    if (kept == NULL)
        return 1;
    kept[0] = 1;
    pthread_t th;
    char c;
    if (pipe(ready_pipe) != 0 || pthread_create(&th, NULL, busy, NULL) != 0 ||
        read(ready_pipe[0], &c, 1) != 1)
        return 1;
    return replace(argv[1], argv[2]);
}
