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
 * its first malloc). The output file is removed first, because the recorder
 * creates it with O_EXCL: that is how a descendant process knows it is not
 * the first and writes FILE.<pid> instead (docs/TRACE.md).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "common/opts.h"
#include "trace/trace_format.h"

#define CMD          "record"
#define DEFAULT_FILE "rtmem.trace"
#define LIB_NAME     "librtmem-record.so"

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem record [-o FILE] -- PROGRAM [ARGS...]\n"
               "\n"
               "Runs PROGRAM with the allocation recorder preloaded (" LIB_NAME ",\n"
               "beside rtmem; RTMEM_RECORD_LIB overrides) and writes every malloc,\n"
               "calloc, realloc, free, aligned_alloc, posix_memalign, memalign, valloc,\n"
               "pvalloc and C++ new/delete it makes to FILE (format: docs/TRACE.md).\n"
               "A process PROGRAM starts (fork + exec) writes FILE.<pid>; a forked child\n"
               "that does not exec is not recorded. PROGRAM must be dynamically linked.\n"
               "\n"
               "  -o, --output FILE  the trace (default " DEFAULT_FILE " in the current folder)\n"
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

static void child(char **prog, const char *lib, const char *file)
{
    const char *old = getenv("LD_PRELOAD");
    char preload[3 * PATH_MAX];
    if (old != NULL && old[0] != '\0')
        snprintf(preload, sizeof preload, "%s:%s", lib, old);
    else
        snprintf(preload, sizeof preload, "%s", lib);
    setenv("LD_PRELOAD", preload, 1);
    setenv("RTMEM_RECORD_FILE", file, 1);
    execvp(prog[0], prog);
    fprintf(stderr, "rtmem record: cannot run %s: %s\n", prog[0], strerror(errno));
    _exit(127);
}

/* Counts the FILE.<pid> traces that descendants wrote. */
static unsigned count_descendants(const char *file)
{
    char dir[PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    const char *base = slash != NULL ? slash + 1 : file;
    if (slash != NULL)
        *slash = '\0';
    DIR *d = opendir(slash != NULL ? (dir[0] ? dir : "/") : ".");
    if (d == NULL)
        return 0;
    size_t bl = strlen(base);
    unsigned n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, base, bl) == 0 && e->d_name[bl] == '.' &&
            strspn(e->d_name + bl + 1, "0123456789") == strlen(e->d_name + bl + 1) &&
            e->d_name[bl + 1] != '\0')
            n++;
    closedir(d);
    return n;
}

static void report(const char *file)
{
    struct stat st;
    if (stat(file, &st) != 0) {
        fprintf(stderr,
                "rtmem record: no trace was written to %s (a statically linked program, "
                "or one that replaced its environment?)\n",
                file);
        return;
    }
    long long body = (long long)st.st_size - TRACE_HEADER_BYTES;
    fprintf(stderr, "rtmem record: %s: %lld calls recorded", file,
            body > 0 ? body / TRACE_RECORD_BYTES : 0);
    unsigned k = count_descendants(file);
    if (k != 0)
        fprintf(stderr, "; %u more trace%s of child processes as %s.<pid>", k, k == 1 ? "" : "s",
                file);
    fprintf(stderr, "\n");
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
    if (absolute(out, file, sizeof file) != 0 || (unlink(file) != 0 && errno != ENOENT)) {
        opts_error(CMD, "cannot replace %s: %s", out, strerror(errno));
        return 1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        opts_error(CMD, "fork: %s", strerror(errno));
        return 1;
    }
    if (pid == 0)
        child(argv + prog_at, lib, file);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            opts_error(CMD, "waitpid: %s", strerror(errno));
            return 1;
        }
    report(file);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return WEXITSTATUS(st);
}
