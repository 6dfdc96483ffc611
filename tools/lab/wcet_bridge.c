// SPDX-License-Identifier: MIT
/*
 * wcet_bridge.c -- `rtmem wcet`: runs rtmem-wcet, the instruction counter,
 * which lives in its own executable beside this one.
 *
 * Why two executables: the counter must be linked statically (no PLT stub or
 * dynamic-loader code inside a measured call, libc's code named by the
 * executable's own symbol table), while `rtmem` must be dynamic so that its
 * benchmark children can run under LD_PRELOAD. The bridge replaces itself
 * with the counter (execv), so options, output and exit status are
 * rtmem-wcet's own.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

/* The folder of this executable, with a trailing '/'. Returns 0 or -1. */
static int own_folder(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0)
        return -1;
    buf[len] = '\0';
    char *slash = strrchr(buf, '/');
    if (slash == NULL)
        return -1;
    slash[1] = '\0';
    return 0;
}

int wcet_main(int argc, char **argv)
{
    (void)argc;
    char path[PATH_MAX];
    if (own_folder(path, sizeof path - sizeof "rtmem-wcet") != 0) {
        fprintf(stderr, "rtmem wcet: cannot find this executable's folder: %s\n", strerror(errno));
        return 1;
    }
    strcat(path, "rtmem-wcet");
    if (access(path, X_OK) != 0) {
        fprintf(stderr,
                "rtmem wcet: %s is not there (it is built on x86-64 Linux only;\n"
                "  run `make build` or `cmake --build build` first)\n",
                path);
        return 1;
    }
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "rtmem wcet: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}
