// SPDX-License-Identifier: MIT
/*
 * rec_prog.c -- the program the recorder's tests record (tests_trace.cmake):
 * every C allocation function once with a size nothing else in the process
 * asks for (10001 ...), two threads with 100 allocations each (20001 on one,
 * 20002 on the other), and a forked child that allocates 30001 bytes, which
 * must not appear (a forked child stops recording: docs/TRACE.md), and
 * 10000 blocks of 50001 bytes live at once, which makes the recorder's
 * address table grow twice while it holds them.
 * rec_check.c knows these sizes and checks the trace against them.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
    size_t size = (size_t)(uintptr_t)arg;
    for (int i = 0; i < 100; i++) {
        volatile char *p = malloc(size);
        if (p != NULL)
            p[0] = 1;
        free((void *)p);
    }
    return NULL;
}

int main(void)
{
    /* A failure aborts: the test then fails on the exit status. */
    void *a = malloc(10001);
    void *b = calloc(1, 10002);
    if (a == NULL || b == NULL)
        abort();
    void *a2 = realloc(a, 10003);
    if (a2 == NULL)
        abort();
    a = a2;
    void *c = aligned_alloc(64, 10048);
    void *d = NULL;
    if (c == NULL || posix_memalign(&d, 128, 10005) != 0)
        abort();
    void *e = memalign(256, 10006);
    void *f = valloc(10007);
    if (e == NULL || f == NULL)
        abort();
    free(b);
    free(a);
    free(c);
    free(d);
    free(e);
    free(f);
    static void *many[10000];
    for (int i = 0; i < 10000; i++)
        if ((many[i] = malloc(50001)) == NULL)
            abort();
    for (int i = 0; i < 10000; i++)
        free(many[i]);
    pthread_t t1, t2;
    if (pthread_create(&t1, NULL, worker, (void *)(uintptr_t)20001) != 0 ||
        pthread_join(t1, NULL) != 0 ||
        pthread_create(&t2, NULL, worker, (void *)(uintptr_t)20002) != 0 ||
        pthread_join(t2, NULL) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        free(malloc(30001));
        _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 1;
    return 3; /* rtmem record must pass this status on */
}
