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
 *
 * It also owns the other direction: `rtmem replay --wcet` and `rtmem fit
 * --wcet` get exact instruction counts of a trace's calls by running
 * `rtmem wcet replay` (tools/wcet/replay_trace.c) and reading its result
 * lines (rw_count, declared in replay.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "trace/replay.h"
#include "common/spawn.h"

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

/* --- `rtmem replay --wcet`, `rtmem fit --wcet` ---------------------------------
 * They run `rtmem wcet replay FILE ...` (a child of this executable through
 * lab_spawn, which execs the counter as above) and read its result lines:
 *   wcet ALG KIND calls=N max=M p99=P mean=A worst_call=I worst_size=S syscalls=K
 *   wcet ALG replayed ops=N refused=R skipped=S
 *   wcet ALG done seconds=T instructions=N
 *   wcet ALG error MESSAGE                                                      */

const char *const rw_kind_names[RW_KINDS] = {"alloc", "aligned", "realloc", "free"};

int rw_available(char *why, size_t why_n)
{
    char path[PATH_MAX];
    if (own_folder(path, sizeof path - sizeof "rtmem-wcet") != 0) {
        snprintf(why, why_n, "cannot find this executable's folder");
        return 0;
    }
    strcat(path, "rtmem-wcet");
    if (access(path, X_OK) != 0) {
        snprintf(why, why_n,
                 "the instruction counter %s is not there (it is built on x86-64 Linux only)",
                 path);
        return 0;
    }
    return 1;
}

/* The value of "key=" in line, or 0 (found: *ok stays 1). */
static uint64_t field(const char *line, const char *key, int *ok)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    if (p == NULL) {
        *ok = 0;
        return 0;
    }
    return strtoull(p + strlen(pat), NULL, 10);
}

static double field_dbl(const char *line, const char *key, int *ok)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(line, pat);
    if (p == NULL) {
        *ok = 0;
        return 0;
    }
    return strtod(p + strlen(pat), NULL);
}

/* One line "wcet ALG WHAT ..." into out[] (the entry named ALG). */
static void parse_line(const char *line, const char *const *names, rw_counts *out, size_t n)
{
    char alg[80], what[32];
    if (sscanf(line, "wcet %79s %31s", alg, what) != 2)
        return;
    rw_counts *c = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], alg) == 0)
            c = &out[i];
    if (c == NULL)
        return;
    int ok = 1;
    if (strcmp(what, "error") == 0) {
        const char *msg = strstr(line, " error ") + 7;
        snprintf(c->why, sizeof c->why, "%.*s", (int)strcspn(msg, "\n"), msg);
        return;
    }
    if (strcmp(what, "replayed") == 0) {
        c->calls = field(line, "ops", &ok);
        c->refused = field(line, "refused", &ok);
        return;
    }
    if (strcmp(what, "done") == 0) {
        c->seconds = field_dbl(line, "seconds", &ok);
        c->instructions = field(line, "instructions", &ok);
        c->measured = ok;
        return;
    }
    for (unsigned k = 0; k < RW_KINDS; k++) {
        if (strcmp(what, rw_kind_names[k]) != 0)
            continue;
        rw_kind *r = &c->k[k];
        r->calls = field(line, "calls", &ok);
        r->max = field(line, "max", &ok);
        r->p99 = field(line, "p99", &ok);
        r->mean = field_dbl(line, "mean", &ok);
        r->worst_call = field(line, "worst_call", &ok);
        r->worst_size = field(line, "worst_size", &ok);
        r->syscalls = field(line, "syscalls", &ok);
        if (!ok)
            memset(r, 0, sizeof *r);
    }
}

int rw_count(const char *file, const char *const *names, rw_counts *out, size_t n, uint64_t region,
             uint64_t limit)
{
    static char buf[1 << 16];
    char list[1024], reg[24], lim[24];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        len += (size_t)snprintf(list + len, len < sizeof list ? sizeof list - len : 0, "%s%s",
                                i ? "," : "", names[i]);
    }
    if (n == 0)
        return 0;
    snprintf(reg, sizeof reg, "%" PRIu64, region);
    snprintf(lim, sizeof lim, "%" PRIu64, limit);
    char *argv[] = {"rtmem", "wcet",    "replay", (char *)file, "--allocators", list, "--region",
                    reg,     "--limit", lim,      NULL};
    spawn_result sp;
    lab_spawn(argv, NULL, buf, sizeof buf, &sp);
    for (char *line = buf; *line != '\0';) {
        size_t l = strcspn(line, "\n");
        char save = line[l];
        line[l] = '\0';
        parse_line(line, names, out, n);
        line[l] = save;
        line += l + (save != '\0');
    }
    int all = 1;
    for (size_t i = 0; i < n; i++) {
        if (out[i].measured)
            continue;
        all = 0;
        if (out[i].why[0] == '\0')
            snprintf(out[i].why, sizeof out[i].why, "the counter gave no result (%.200s)",
                     !sp.ran     ? sp.why
                     : sp.signal ? "killed by a signal"
                                 : "see its messages above");
    }
    return all ? 0 : -1;
}
