// SPDX-License-Identifier: MIT
/*
 * tests/consumer/malloc_consumer.c -- a program linking rtmem's drop-in
 * malloc (rtmem::malloc, or `pkg-config --libs rtmem-malloc`): its own API
 * from <rtmem/malloc.h>, and plain malloc/free, which the library replaces.
 * The statistics prove that both reached rtmem's allocator. Exit status 0
 * when every check holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rtmem/malloc.h>

static int failures;

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "malloc_consumer: %s:%d: %s\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void)
{
    rtm_malloc_stats_t before = rtm_malloc_stats();
    char *p = rtm_malloc(100);
    EXPECT(p != NULL && rtm_malloc_usable_size(p) >= 100);
    /* Plain malloc: the drop-in's, so rtmem knows the block. */
    char *q = malloc(1000);
    EXPECT(q != NULL && rtm_malloc_usable_size(q) >= 1000);
    if (p != NULL && q != NULL) {
        memset(p, 1, 100);
        memset(q, 2, 1000);
    }
    rtm_malloc_stats_t during = rtm_malloc_stats();
    EXPECT(during.in_use_bytes >= before.in_use_bytes + 1100);
    free(q); /* the drop-in free */
    rtm_malloc_free(p);
    rtm_malloc_stats_t after = rtm_malloc_stats();
    EXPECT(after.foreign_frees == before.foreign_frees);
    EXPECT(rtm_malloc_check() == 0);
    printf("malloc_consumer: %zu bytes in use during, malloc and rtm_malloc both rtmem's: %s\n",
           during.in_use_bytes, failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
