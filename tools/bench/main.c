/*
 * main.c -- rtmem-bench: the subcommands and the top-level usage.
 *
 *   random    seed 003's random-replace loop, TLSF against malloc peers
 *   memcheck  the Xenomai smokey memcheck method over an rtm heap
 *
 * Conventions for every subcommand: --help prints the usage on stdout and
 * exits 0; misuse prints what was wrong and the usage on stderr and exits 2;
 * a measurement that ran exits 0 even when a target FAILs (the report says
 * so), and 1 when the method itself failed (a crash, a leak, a heap check).
 */
#include <stdio.h>
#include <string.h>

#include "memcheck.h"
#include "random.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: rtmem-bench <command> [options]\n"
               "\n"
               "commands:\n"
               "  random     seed 003's random-replace loop: TLSF vs glibc, mimalloc, jemalloc,\n"
               "             tcmalloc (ns per free+alloc pair, per-op percentiles, verdict)\n"
               "  memcheck   the Xenomai memcheck method over an rtm heap (timings, overhead,\n"
               "             fragmentation, published figures, targets)\n"
               "\n"
               "rtmem-bench <command> --help describes each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "random") == 0)
        return random_main(argc - 1, argv + 1);
    if (strcmp(cmd, "memcheck") == 0)
        return memcheck_main(argc - 1, argv + 1);
    fprintf(stderr, "rtmem-bench: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
