// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_fork.c -- fork() while other threads allocate.
 *
 * THREADS threads allocate and free in a loop; the main thread forks FORKS
 * times. Each child (the only thread there) must be able to allocate at
 * once: if a lock had been held by a thread that does not exist in the
 * child, it would hang, and alarm() turns a hang into a failure. The child
 * also checks the allocator and that every other thread's cache was taken
 * back. Built twice: over the rtm_malloc_ API (any sanitizer; label `threads`)
 * and, with FORK_DROPIN, over malloc itself linked from librtmem-malloc.a,
 * where libc's own allocations in the child (stdio, strdup) go through the
 * allocator too.
 */
#include <pthread.h>
#include <stdint.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#ifdef FORK_DROPIN
#define ALLOC(n) malloc(n)
#define FREE(p)  free(p)
#else
#define ALLOC(n) rtm_malloc(n)
#define FREE(p)  rtm_malloc_free(p)
#endif

#define THREADS 3
#define FORKS   40

static atomic_int stop;

static void *busy(void *arg)
{
    unsigned s = (unsigned)(uintptr_t)arg;
    void *keep[256] = {0};
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        s = s * 1103515245u + 12345u;
        unsigned k = (s >> 8) % 256u;
        FREE(keep[k]);
        size_t size = (s >> 4) % 8u == 0 ? (size_t)(s % 200000u) : (size_t)(s % 600u);
        keep[k] = ALLOC(size + 1u);
        if (keep[k])
            memset(keep[k], 1, 1);
    }
    for (int i = 0; i < 256; i++)
        FREE(keep[i]);
    return NULL;
}

static int child_work(void)
{
    /* A deadlock becomes SIGALRM. 120 s, not less: the child's work takes
     * well under a second, but on a 2-core machine at load 25, or under
     * qemu-user, a child starved by its parent's busy threads was killed by
     * a 20 s alarm without being stuck (docs/TESTING.md). */
    alarm(120);
    void *p[1000];
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 1000; i++) {
            p[i] = ALLOC((size_t)(i * 37 % 70000) + 1u);
            if (p[i] == NULL)
                return 2;
            memset(p[i], i & 0xff, 1);
        }
        for (int i = 0; i < 1000; i++)
            FREE(p[i]);
    }
#ifdef FORK_DROPIN
    char *d = strdup("a string strdup'd in the child");
    char big[512];
    snprintf(big, sizeof big, "%0300d", 7);
    FILE *f = tmpfile();
    if (d == NULL || f == NULL)
        return 3;
    fprintf(f, "%s %s\n", d, big);
    fclose(f);
    free(d);
#endif
    if (rtm_malloc_check() != 0)
        return 4;
    rtm_malloc_stats_t st = rtm_malloc_stats();
    if (st.threads > 1u) /* the parent's other threads' caches were taken back */
        return 5;
    return 0;
}

static void test_fork_while_allocating(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        REQUIRE(pthread_create(&t[i], NULL, busy, (void *)(uintptr_t)(i + 1)) == 0);
    for (int k = 0; k < FORKS; k++) {
        void *mine = ALLOC(100);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
            _exit(child_work());
        int status = 0;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %d: child %s %d", k,
                  WIFEXITED(status) ? "exited with" : "killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        FREE(mine);
        usleep(2000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(rtm_malloc_check(), 0);
}

int main(void)
{
    RUN_TEST(test_fork_while_allocating);
    return check_summary();
}
