// SPDX-License-Identifier: MIT
/*
 * record.c -- `rtmem record [-o FILE] -- PROGRAM ARGS...`: runs PROGRAM with
 * the allocation recorder (build/librtmem-record.so, tools/record/record.c)
 * preloaded, and exits with PROGRAM's status, so that `rtmem record` can
 * stand in front of any command in a script.
 *
 * The program is a plain fork + execvp child with LD_PRELOAD extended (not
 * replaced: a program that needs its own preload keeps it) and
 * RTMEM_RECORD_FILE set to an absolute path (the program may chdir before
 * its first malloc). What an earlier run left under the same name (FILE,
 * its children's traces, FILE.index) is removed first: the recorder creates
 * FILE with O_EXCL, which is how a later process knows it is a child, and
 * the closing summary counts only this run's children (record_files.c).
 * An exec that fails in the child is reported once, through a close-on-exec
 * pipe, and not again as a missing trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "common/opts.h"
#include "trace/record_files.h"

#define CMD          "record"
#define DEFAULT_FILE "rtmem.trace"
#define LIB_NAME     "librtmem-record.so"

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem record [-o FILE] [--final-only] [--no-children] -- PROGRAM [ARGS...]\n"
               "\n"
               "Runs PROGRAM with the allocation recorder preloaded (" LIB_NAME ",\n"
               "beside rtmem; RTMEM_RECORD_LIB overrides) and writes every malloc,\n"
               "calloc, realloc, free, aligned_alloc, posix_memalign, memalign, valloc,\n"
               "pvalloc and C++ new/delete it makes to FILE (format: docs/TRACE.md).\n"
               "PROGRAM may be a wrapper that execs the real one (chrt, taskset, nice,\n"
               "env, a script ending in exec): an exec goes on in the same FILE. Each\n"
               "process PROGRAM starts (fork + exec) writes FILE.<pid>.<program>, and\n"
               "FILE.index lists every process with its parent and programs; a forked\n"
               "child that does not exec is not recorded. An earlier run's files of the\n"
               "same name are removed first. PROGRAM must be dynamically linked.\n"
               "\n"
               "  -o, --output FILE  the trace (default " DEFAULT_FILE " in the current folder)\n"
               "  --final-only       keep only the program a process runs last: an exec\n"
               "                     starts its trace afresh (the wrappers' calls go)\n"
               "  --no-children      record only the launched process, not those it starts\n"
               "  --help             this text\n"
               "\n"
               "Exit status: PROGRAM's (128 + N when a signal N ended it), 127 when it\n"
               "cannot be started, 2 for misuse.\n");
}

/* The recorder library: $RTMEM_RECORD_LIB, else beside /proc/self/exe. */
static int locate_lib(char *path, size_t n)
{
    const char *env = getenv("RTMEM_RECORD_LIB");
    if (env != NULL && env[0] != '\0') {
        snprintf(path, n, "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (len <= 0)
            return -1;
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(path, n, "%s/%s", exe, LIB_NAME);
    }
    return access(path, R_OK);
}

/* An absolute path for out, which need not exist yet. */
static int absolute(const char *out, char *abs, size_t n)
{
    if (out[0] == '/') {
        snprintf(abs, n, "%s", out);
        return 0;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == NULL)
        return -1;
    snprintf(abs, n, "%s/%s", cwd, out);
    return 0;
}

/* The options that go to the recorder, set or cleared whatever the
 * environment held. */
typedef struct rec_opts {
    int final_only, no_children;
} rec_opts;

static void child(char **prog, const char *lib, const char *file, const rec_opts *o, int err_fd)
{
    const char *old = getenv("LD_PRELOAD");
    char preload[3 * PATH_MAX];
    if (old != NULL && old[0] != '\0')
        snprintf(preload, sizeof preload, "%s:%s", lib, old);
    else
        snprintf(preload, sizeof preload, "%s", lib);
    setenv("LD_PRELOAD", preload, 1);
    setenv("RTMEM_RECORD_FILE", file, 1);
    setenv("RTMEM_RECORD_FINAL", o->final_only ? "1" : "0", 1);
    setenv("RTMEM_RECORD_CHILDREN", o->no_children ? "0" : "1", 1);
    unsetenv("RTMEM_RECORD_EXEC"); /* only ever the recorder's own, across an exec */
    execvp(prog[0], prog);
    int e = errno;
    fprintf(stderr, "rtmem record: cannot run %s: %s\n", prog[0], strerror(e));
    (void)!write(err_fd, &e, sizeof e);
    _exit(127);
}

/* Splits argv at "--" (or at the first word that is not an option). */
static int split(int argc, char **argv, int *prog_at)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            *prog_at = i + 1;
            return i;
        }
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] != '-') {
            *prog_at = i;
            return i;
        }
    }
    *prog_at = argc;
    return argc;
}

int record_main(int argc, char **argv)
{
    int prog_at;
    int nopt = split(argc, argv, &prog_at);
    const char *out = DEFAULT_FILE;
    rec_opts ro = {0, 0};
    for (int i = 1; i < nopt; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < nopt) {
            out = argv[++i];
            continue;
        }
        if (strncmp(argv[i], "--output=", 9) == 0 && argv[i][9] != '\0') {
            out = argv[i] + 9;
            continue;
        }
        if (strcmp(argv[i], "--final-only") == 0 || strcmp(argv[i], "--no-children") == 0) {
            *(argv[i][2] == 'f' ? &ro.final_only : &ro.no_children) = 1;
            continue;
        }
        opts_error(CMD, "%s: %s", argv[i],
                   argv[i][1] == 'o' || strncmp(argv[i], "--output", 8) == 0 ? "needs a FILE"
                                                                             : "unknown option");
        return opts_usage_error(CMD);
    }
    if (prog_at >= argc || out[0] == '\0') {
        opts_error(CMD, out[0] == '\0' ? "empty output name" : "no PROGRAM given");
        return opts_usage_error(CMD);
    }
    /* Before the program runs: a recording that cannot be kept is misuse. */
    if (opts_writable(out) != 0) {
        opts_error(CMD, "cannot write %s: %s", out, strerror(errno));
        return opts_usage_error(CMD);
    }
    char lib[PATH_MAX + 32], file[PATH_MAX + 32];
    if (locate_lib(lib, sizeof lib) != 0) {
        opts_error(CMD, "cannot read the recorder %s: %s (build it: target rtmem-record)", lib,
                   strerror(errno));
        return 1;
    }
    char bad[PATH_MAX + 300];
    snprintf(bad, sizeof bad, "%s", out); /* what failed, when absolute() does */
    if (absolute(out, file, sizeof file) != 0 || record_files_clear(file, bad, sizeof bad) != 0) {
        opts_error(CMD, "cannot replace %s: %s", bad, strerror(errno));
        return 1;
    }
    /* The child writes errno here when its exec fails; a successful exec
     * closes it (O_CLOEXEC) and the read sees end of file. */
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
        opts_error(CMD, "pipe: %s", strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        opts_error(CMD, "fork: %s", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(err_pipe[0]);
        child(argv + prog_at, lib, file, &ro, err_pipe[1]);
    }
    close(err_pipe[1]);
    int exec_errno = 0;
    while (read(err_pipe[0], &exec_errno, sizeof exec_errno) < 0 && errno == EINTR)
        ;
    close(err_pipe[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            opts_error(CMD, "waitpid: %s", strerror(errno));
            return 1;
        }
    if (exec_errno == 0) /* the child said why already */
        record_files_report(file, pid, ro.final_only);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}
