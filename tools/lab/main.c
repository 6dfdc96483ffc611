// SPDX-License-Identifier: MIT
/*
 * main.c -- `rtmem`, the measurement lab: the command table and the
 * top-level usage. Each command lives in its own files (commands.h); this
 * file only maps "rtmem <command> [<subcommand>] [options]" onto them.
 *
 * "bench" groups the two speed benchmarks (random, threads) the way the
 * studies they reproduce call them (docs/METHODS.md); the other commands
 * stand alone.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "common/opts.h"
#include "rtmem.h"

typedef struct command {
    const char *group; /* "bench" or NULL */
    const char *name;
    const char *label; /* argv[0] the command sees: "bench random" */
    int (*run)(int argc, char **argv);
    const char *what;
} command;

static const command commands[] = {
    {NULL, "memcheck", "memcheck", memcheck_main,
     "the Xenomai smokey memcheck method over rtm heaps (times, overhead,\n"
     "                  fragmentation beside the published figures)"},
    {"bench", "random", "bench random", random_main,
     "the TLSF/xvmalloc/zsmalloc study's random-replace loop, rtm heaps\n"
     "                  vs glibc, mimalloc, jemalloc, tcmalloc (per-op percentiles,\n"
     "                  --sweep curves)"},
    {"bench", "zram", "bench zram", zram_main,
     "the TLSF/xvmalloc/zsmalloc study's comparison: time per pair and\n"
     "                  memory efficiency by request size, and the zram case"},
    {"bench", "threads", "bench threads", threads_main,
     "the tcmalloc-style pool benchmark (multi-thread) and a\n"
     "                  producer/consumer run, malloc peers by LD_PRELOAD and\n"
     "                  locked rtm heaps"},
    {NULL, "limits", "limits", limits_main,
     "the Linux memmax/memtim modules' probes: the largest block each\n"
     "                  allocator gives, and cycles per allocation by size"},
    {NULL, "wcet", "wcet", wcet_main,
     "exact instructions per alloc and free by ptrace single-stepping\n"
     "                  (runs rtmem-wcet, built beside rtmem)"},
    {NULL, "latency", "latency", latency_main,
     "the VxWorks bmCtx* context-switch suite and the locked heap's\n"
     "                  priority-inheritance handover, under SCHED_FIFO"},
    {NULL, "record", "record", record_main,
     "runs a program with the allocation recorder preloaded and writes\n"
     "                  its trace (docs/TRACE.md)"},
    {NULL, "trace", "trace", trace_main,
     "a recorded trace: `trace stats` (calls, sizes, peak live bytes),\n"
     "                  `trace dump` (one line per call)"},
    {NULL, "replay", "replay", replay_main,
     "replays a trace on every rtm heap, glibc and the malloc peers:\n"
     "                  refusals, time per call, footprint, live vs held bytes"},
    {NULL, "fit", "fit", fit_main,
     "the smallest region each rtm heap replays a trace in, its worst\n"
     "                  call there, and the headroom to add"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem <command> [options]\n"
               "       rtmem --version\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-15s %s\n", commands[i].label, commands[i].what);
    fprintf(f, "\n"
               "rtmem <command> --help describes each command's options. Every command\n"
               "prints aligned tables and writes --json FILE (schema: docs/RESULTS.md);\n"
               "--json - writes the JSON to stdout and the tables to stderr.\n"
               "Where each method comes from and what differs: docs/METHODS.md.\n"
               "Exit status: 0 when the measurement ran (a FAILed target included), 1 when\n"
               "the method failed or the output could not be written, 2 for misuse.\n");
}

/* "rtmem --version": the lab's version is the library's it runs on. */
static int version(void)
{
    printf("rtmem %s (library %s)\n", RTM_VERSION_STRING, rtm_version());
    return 0;
}

/* The names of a group's commands, "random, threads", for a message. */
static void group_names(FILE *f, const char *group)
{
    const char *sep = "";
    for (size_t i = 0; i < NCOMMANDS; i++) {
        if (commands[i].group != NULL && strcmp(commands[i].group, group) == 0) {
            fprintf(f, "%s%s", sep, commands[i].name);
            sep = ", ";
        }
    }
}

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0;
}

/* Runs commands[i] with argv[at] renamed to its label (opts.c prints it). */
static int run(size_t i, int argc, char **argv, int at)
{
    argv[at] = (char *)commands[i].label;
    return commands[i].run(argc - at, argv + at);
}

/* rc, or 1 when standard output could not be written (opts_close_stdout):
 * also --help and --version, which a script may redirect. */
static int checked(const char *label, int rc)
{
    return opts_close_stdout(label) != 0 && rc == 0 ? 1 : rc;
}

/* Runs the command, then makes sure its text reached standard output: a
 * report written to a full disk is a failed run (status 1), not status 0
 * (a status already non-zero is kept). */
static int run_checked(size_t i, int argc, char **argv, int at)
{
    return checked(commands[i].label, run(i, argc, argv, at));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "rtmem: which command?\n");
        return opts_usage_error(NULL);
    }
    const char *cmd = argv[1];
    if (is_help(cmd)) {
        usage(stdout);
        return checked(NULL, 0);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0)
        return checked(NULL, version());
    int group_known = 0;
    for (size_t i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        if (c->group == NULL && strcmp(cmd, c->name) == 0)
            return run_checked(i, argc, argv, 1);
        if (c->group != NULL && strcmp(cmd, c->group) == 0) {
            group_known = 1;
            if (argc >= 3 && strcmp(argv[2], c->name) == 0)
                return run_checked(i, argc, argv, 2);
        }
    }
    if (group_known && argc >= 3 && is_help(argv[2])) {
        usage(stdout);
        return checked(NULL, 0);
    }
    if (group_known) {
        fprintf(stderr, "rtmem %s: %s (", cmd,
                argc >= 3 ? "unknown benchmark" : "which benchmark?");
        group_names(stderr, cmd);
        fprintf(stderr, ")\n");
    } else
        fprintf(stderr, "rtmem: unknown command '%s'\n", cmd);
    return opts_usage_error(NULL);
}
