/*
 * threads.c -- placeholder for `rtmem threads` while it is being written: it says
 * so and fails, so nothing can mistake it for a measurement.
 */
#include <stdio.h>

#include "commands.h"

int threads_main(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr, "rtmem %s: not built yet\n", argv[0]);
    return 1;
}
