// SPDX-License-Identifier: MIT
/*
 * trace_cli.c -- the trace commands' shared command-line and report pieces
 * (trace_cli.h).
 */
#include <errno.h>
#include <string.h>

#include "common/machine.h"
#include "common/opts.h"
#include "trace/trace_cli.h"

const char *trace_cli_take_file(int *argc, char **argv)
{
    if (*argc < 2 || argv[1][0] == '-')
        return NULL;
    const char *file = argv[1];
    for (int i = 1; i + 1 < *argc; i++)
        argv[i] = argv[i + 1];
    (*argc)--;
    argv[*argc] = NULL;
    return file;
}

int trace_cli_load(const char *cmd, const char *path, trace *t)
{
    char err[512];
    if (trace_load(path, t, err, sizeof err) == 0)
        return 0;
    opts_error(cmd, "%s: %s", path, err);
    return -1;
}

int trace_cli_need_calls(const char *cmd, const char *path, const trace *t, const char *consequence)
{
    if (t->n > 0)
        return 0;
    opts_error(cmd,
               "%s: no calls in this trace (of %.24s), %s; rtmem record's closing lines and "
               "%s.index say where the program's calls went",
               path, t->hdr.program, consequence, path);
    return -1;
}

int trace_cli_json_open(json *j, const char *cmd, const char *path, const char *rt_setup)
{
    if (json_open(j, path) != 0) {
        opts_error(cmd, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    machine m;
    machine_describe(&m);
    json_str(j, "tool", "rtmem");
    json_str(j, "command", cmd);
    json_u64(j, "schema_version", 1);
    machine_json(j, &m);
    json_str(j, "rt_setup", rt_setup);
    return 0;
}

const char *trace_cli_bytes(uint64_t v, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double x = (double)v;
    unsigned u = 0;
    while (x >= 1024.0 && u < 4) {
        x /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%llu B", (unsigned long long)v);
    else
        snprintf(buf, n, "%.1f %s", x, unit[u]);
    return buf;
}
