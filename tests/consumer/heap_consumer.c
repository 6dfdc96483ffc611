// SPDX-License-Identifier: MIT
/*
 * tests/consumer/heap_consumer.c -- a program as a user of the installed (or
 * embedded) rtmem writes it: only <rtmem.h>, linked through rtmem::rtmem,
 * rtmem::rtmem_shared or `pkg-config --libs rtmem`. It touches each part of
 * the API a consumer's link needs (the generic heaps, a typed API, a locked
 * and a process-shared heap, the version) and checks the results, so a
 * missing export, header or link flag fails here, not in a user's build.
 * Exit status 0 when every check holds; each failure is printed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rtmem.h>

static int failures;
static const char *what = "setup"; /* the part being tried, for messages */

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "heap_consumer: %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, what);   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static _Alignas(64) unsigned char region[1u << 20];

/* One heap of each algorithm the library lists: allocate, resize, free,
 * check, all through the generic API. */
static int try_algorithm(const char *name)
{
    if (rtm_min_region(name) > sizeof region)
        return 0;
    what = name;
    rtm_heap *h = rtm_heap_create(name, region, sizeof region);
    EXPECT(h != NULL);
    if (h == NULL)
        return 0;
    /* Sizes every algorithm serves, a 64-byte pool's included. */
    unsigned char *p = rtm_alloc(h, 48);
    EXPECT(p != NULL && rtm_usable_size(h, p) >= 48);
    if (p != NULL)
        memset(p, 0xA5, 48);
    void *q = rtm_alloc(h, 24);
    EXPECT(q != NULL);
    rtm_stats st = rtm_heap_stats(h);
    EXPECT(st.live_blocks == 2);
    rtm_free(h, q);
    rtm_free(h, p);
    EXPECT(rtm_heap_stats(h).live_blocks == 0);
    EXPECT(rtm_heap_check(h) == 0);
    EXPECT(strcmp(rtm_heap_algorithm(h), name) == 0);
    rtm_heap_destroy(h);
    return 1;
}

/* TLSF through its typed API: no dispatch, same heap format. */
static void try_typed_tlsf(void)
{
    what = "typed tlsf";
    rtm_tlsf *t = rtm_tlsf_create(region, sizeof region);
    EXPECT(t != NULL);
    if (t == NULL)
        return;
    void *p = rtm_tlsf_aligned_alloc(t, 256, 1000);
    EXPECT(p != NULL && ((uintptr_t)p & 255u) == 0);
    p = rtm_tlsf_realloc(t, p, 5000);
    EXPECT(p != NULL);
    EXPECT(rtm_tlsf_free(t, p) == 0);
    EXPECT(rtm_tlsf_check(t) == 0);
}

/* The guarded heaps: a locked heap (pthread mutex) and a process-shared
 * one (POSIX shared memory), which need the library's link dependencies. */
static void try_guarded(void)
{
    what = "locked tlsf";
    rtm_heap *h = rtm_locked_create("tlsf", region, sizeof region);
    EXPECT(h != NULL);
    if (h != NULL) {
        void *p = rtm_alloc(h, 64);
        EXPECT(p != NULL);
        rtm_free(h, p);
        EXPECT(rtm_heap_check(h) == 0);
        rtm_heap_destroy(h);
    }
    what = "shared tlsf";
    char name[64];
    snprintf(name, sizeof name, "/rtmem-consumer-%ld", (long)getpid());
    rtm_heap *s = rtm_shared_create(name, 4 * rtm_shared_min_size(), "tlsf");
    if (s == NULL) {
        /* No /dev/shm in some sandboxes: a skip, not a failure. */
        printf("heap_consumer: shared heap skipped: %s\n", strerror(errno));
        return;
    }
    void *p = rtm_alloc(s, 128);
    EXPECT(p != NULL);
    EXPECT(p == NULL || rtm_shared_pointer(s, rtm_shared_offset(s, p)) == p);
    rtm_free(s, p);
    rtm_shared_close(s);
    EXPECT(rtm_shared_unlink(name) == 0);
}

int main(void)
{
    EXPECT(strcmp(rtm_version(), RTM_VERSION_STRING) == 0);
#if RTM_VERSION_NUMBER < 200
#error "rtmem 0.2 or later expected"
#endif
    int algorithms = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        algorithms += try_algorithm(*a);
    EXPECT(algorithms >= 6);
    try_typed_tlsf();
    try_guarded();
    printf("heap_consumer: rtmem %s (headers %s), %d algorithms: %s\n", rtm_version(),
           RTM_VERSION_STRING, algorithms, failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
