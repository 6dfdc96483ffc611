// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_dropin.c -- the drop-in names, linked from
 * librtmem-malloc.a: they must be this allocator (not glibc's), and behave
 * as glibc documents: malloc(0) unique, free(NULL), free preserving errno,
 * calloc and reallocarray overflow-checked, realloc(p, 0) freeing,
 * posix_memalign's return codes, memalign rounding its alignment up,
 * valloc/pvalloc page-aligned (pvalloc rounding the size), aligned_alloc,
 * malloc_usable_size; libc's internal allocations (strdup, stdio) served;
 * and C++ operator new/delete (called through their mangled names: this
 * project is C) including the nothrow and align_val_t forms, and operator
 * new aborting with a message when it fails with no C++ runtime loaded.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#if __SIZEOF_SIZE_T__ == 8
#define SZ "m"
#else
#define SZ "j"
#endif
void *cxx_new(size_t n) __asm__("_Znw" SZ);
void *cxx_new_array(size_t n) __asm__("_Zna" SZ);
void *cxx_new_nothrow(size_t n, const void *tag) __asm__("_Znw" SZ "RKSt9nothrow_t");
void *cxx_new_aligned(size_t n, size_t a) __asm__("_Znw" SZ "St11align_val_t");
void cxx_delete(void *p) __asm__("_ZdlPv");
void cxx_delete_array(void *p) __asm__("_ZdaPv");
void cxx_delete_sized(void *p, size_t n) __asm__("_ZdlPv" SZ);
void cxx_delete_aligned(void *p, size_t a) __asm__("_ZdlPvSt11align_val_t");

/* Sizes the compiler cannot see (it rejects impossible constants). */
static volatile size_t quarter_max = SIZE_MAX / 4u, near_max = SIZE_MAX - 100u;

static int is_aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1u)) == 0; }

static void test_it_is_us(void)
{
    size_t before = rtm_malloc_stats().in_use_bytes;
    void *p = malloc(1000);
    REQUIRE(p != NULL);
    CHECK_EQ(malloc_usable_size(p), rtm_malloc_usable_size(p));
    CHECK_EQ(rtm_malloc_usable_size(p), 1024);
    CHECK(rtm_malloc_stats().in_use_bytes >= before + 1024u);
    free(p);
    char *d = strdup("served by rtmem"); /* allocated inside libc */
    REQUIRE(d != NULL);
    CHECK(rtm_malloc_usable_size(d) >= 16u);
    free(d);
}

static void test_glibc_semantics(void)
{
    void *a = malloc(0), *b = malloc(0);
    CHECK(a != NULL && b != NULL && a != b);
    free(a);
    free(b);
    errno = 99;
    free(NULL);
    free(malloc(10));
    CHECK_EQ(errno, 99);
    errno = 0;
    CHECK(calloc(quarter_max, 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(reallocarray(NULL, quarter_max, 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
    int *v = reallocarray(NULL, 10, sizeof(int));
    REQUIRE(v != NULL);
    v[9] = 9;
    v = reallocarray(v, 1000, sizeof(int));
    REQUIRE(v != NULL);
    CHECK_EQ(v[9], 9);
    errno = 5;
    CHECK(realloc(v, 0) == NULL);
    CHECK_EQ(errno, 5);
    errno = 0;
    CHECK(malloc(near_max) == NULL);
    CHECK_EQ(errno, ENOMEM);
}

static void test_aligned_family(void)
{
    void *p = NULL;
    CHECK_EQ(posix_memalign(&p, 3, 10), EINVAL);
    CHECK_EQ(posix_memalign(&p, sizeof(void *) / 2u, 10), EINVAL);
    errno = 7;
    CHECK_EQ(posix_memalign(&p, 4096, 10), 0);
    CHECK_EQ(errno, 7);
    CHECK(is_aligned(p, 4096));
    free(p);
    CHECK_EQ(posix_memalign(&p, 64, SIZE_MAX - 10u), ENOMEM);
    p = memalign(48, 100); /* glibc rounds up to 64 */
    REQUIRE(p != NULL);
    CHECK(is_aligned(p, 64));
    free(p);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    p = valloc(10);
    CHECK(p != NULL && is_aligned(p, ps));
    free(p);
    p = pvalloc(ps + 1u);
    REQUIRE(p != NULL);
    CHECK(is_aligned(p, ps));
    CHECK(malloc_usable_size(p) >= 2u * ps);
    free(p);
    p = aligned_alloc(256, 1000);
    CHECK(p != NULL && is_aligned(p, 256));
    free(p);
    p = aligned_alloc(1u << 20, 10);
    CHECK(p != NULL && is_aligned(p, 1u << 20));
    free(p);
}

static void test_cxx(void)
{
    char *p = cxx_new(24);
    REQUIRE(p != NULL);
    memset(p, 1, 24);
    cxx_delete(p);
    p = cxx_new_array(1000);
    REQUIRE(p != NULL);
    cxx_delete_array(p);
    p = cxx_new(40);
    cxx_delete_sized(p, 40);
    p = cxx_new_aligned(100, 512);
    CHECK(p != NULL && is_aligned(p, 512));
    cxx_delete_aligned(p, 512);
    CHECK(cxx_new_nothrow(near_max, NULL) == NULL);
    /* The throwing form in a program with no C++ runtime: abort, with a
     * message, never NULL. */
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        void *q = cxx_new(near_max);
        _exit(q == NULL ? 10 : 11);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
}

static void test_stdio_and_trim(void)
{
    FILE *f = tmpfile();
    REQUIRE(f != NULL);
    for (int i = 0; i < 10000; i++)
        fprintf(f, "%d %s\n", i, "line");
    fclose(f);
    CHECK(malloc_trim(0) >= 0);
    CHECK_EQ(rtm_malloc_check(), 0);
}

int main(void)
{
    RUN_TEST(test_it_is_us);
    RUN_TEST(test_glibc_semantics);
    RUN_TEST(test_aligned_family);
    RUN_TEST(test_cxx);
    RUN_TEST(test_stdio_and_trim);
    return check_summary();
}
