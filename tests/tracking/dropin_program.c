// SPDX-License-Identifier: MIT
/*
 * tests/tracking/dropin_program.c -- a small malloc user for
 * tests/tracking/dropin_valgrind.sh: the drop-in malloc (librtmem-malloc.so
 * under LD_PRELOAD) run under valgrind memcheck.
 *
 *   dropin_program clean      malloc, calloc, realloc, free used correctly;
 *                             prints which library provides malloc
 *   dropin_program overflow   also writes one byte past a malloc(13) block
 *
 * The provider is printed so the script can assert that the drop-in, not
 * libc, was interposed (dladdr of the malloc the program calls).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *provider(void)
{
    Dl_info info;
    void *sym = dlsym(RTLD_DEFAULT, "malloc");
    return sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL ? info.dli_fname
                                                                            : "(unknown)";
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "clean") != 0 && strcmp(argv[1], "overflow") != 0)) {
        fprintf(stderr, "usage: dropin_program clean|overflow\n");
        return 2;
    }
    printf("malloc provider: %s\n", provider());
    unsigned sum = 0;
    for (size_t n = 1; n < 5000; n = n * 3 + 1) {
        unsigned char *p = malloc(n), *z = calloc(n, 2);
        if (p == NULL || z == NULL)
            return 3;
        memset(p, 7, n);
        p = realloc(p, n * 2);
        if (p == NULL)
            return 3;
        sum += p[n - 1] + z[2 * n - 1];
        free(p);
        free(z);
    }
    volatile unsigned char *q = malloc(13);
    if (q == NULL)
        return 3;
    q[12] = 1;
    volatile size_t past = 13; /* opaque to the compiler's bounds warning */
    if (strcmp(argv[1], "overflow") == 0)
        q[past] = 1; /* the bug */
    free((void *)(uintptr_t)q);
    printf("done (%u)\n", sum & 1u);
    return 0;
}
