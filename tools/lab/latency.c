/*
 * latency.c -- placeholder for `rtmem latency` while it is being written: it says
 * so and fails, so nothing can mistake it for a measurement.
 */
#include <stdio.h>

#include "commands.h"

int latency_main(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "rtmem %s: not built yet\n", argv[0]);
    return 1;
}
