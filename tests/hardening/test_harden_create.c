// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_create.c -- issue 12, case 3: one rule for a
 * region size that wraps the address space. rtm_heap_create(alg, mem, n)
 * with (uintptr_t)mem + n overflowing used to crash tlsf, buddy, halffit
 * and slab, was accepted by pool and refused by heapmem. The rule: NULL with
 * errno EINVAL, nothing written to the region, from the generic create, from
 * every typed create and from rtm_locked_create.
 *
 * Each call runs in a child process, so a crash is a named failure and the
 * other cases still run. Sizes: SIZE_MAX, SIZE_MAX - 1 and the exact
 * wrapping size UINTPTR_MAX - mem + 1, at several start offsets. Each API is
 * also shown to create a heap on the same (real) region, so a create that
 * refuses everything cannot pass.
 *
 *   generic  rtm_heap_create with every name of rtm_algorithms()
 *   typed    rtm_pool_create, rtm_buddy_create, rtm_halffit_create,
 *            rtm_slab_create, rtm_heapmem_create (rtm_tlsf_create is in
 *            tests/hardening/tlsf.cmake's tests)
 *   locked   rtm_locked_create with every name of rtm_algorithms()
 *
 * Usage: test_harden_create [generic|typed|locked|all]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rtmem.h"
#include "rtmem/buddy.h"
#include "rtmem/halffit.h"
#include "rtmem/heapmem.h"
#include "rtmem/lock.h"
#include "rtmem/pool.h"
#include "rtmem/slab.h"

#define REGION  (64u * 1024u)
#define PATTERN 0xc3

/* One way to create a heap; `name` is the algorithm for the named APIs. */
typedef struct creator {
    const char *label;
    const char *name;
    void *(*create)(const char *name, void *mem, size_t bytes);
    void (*destroy)(void *heap);
} creator;

static void *generic(const char *name, void *mem, size_t bytes)
{
    return rtm_heap_create(name, mem, bytes);
}
static void *locked(const char *name, void *mem, size_t bytes)
{
    return rtm_locked_create(name, mem, bytes);
}
static void destroy_generic(void *h) { rtm_heap_destroy(h); }
static void destroy_none(void *h) { (void)h; }

static void *pool(const char *n, void *m, size_t b)
{
    (void)n;
    return rtm_pool_create(m, b, 64);
}
static void *buddy(const char *n, void *m, size_t b)
{
    (void)n;
    return rtm_buddy_create(m, b, 4096);
}
static void *halffit(const char *n, void *m, size_t b)
{
    (void)n;
    return rtm_halffit_create(m, b);
}
static void *slab(const char *n, void *m, size_t b)
{
    (void)n;
    return rtm_slab_create(m, b, 4096);
}
static void *heapmem(const char *n, void *m, size_t b)
{
    (void)n;
    return rtm_heapmem_create(m, b, 512);
}

/* In the child: the call must refuse with EINVAL and leave the region as
 * it was. Returns the exit status. */
static int refused_untouched(const creator *c, unsigned char *mem, size_t bytes)
{
    memset(mem, PATTERN, REGION);
    errno = 0;
    void *h = c->create(c->name, mem, bytes);
    int e = errno;
    if (h != NULL) {
        fprintf(stderr, "    accepted (handle %p)\n", h);
        return 1;
    }
    if (e != EINVAL) {
        fprintf(stderr, "    errno %d (%s), expected EINVAL\n", e, strerror(e));
        return 1;
    }
    for (size_t i = 0; i < REGION; i++)
        if (mem[i] != PATTERN) {
            fprintf(stderr, "    region written at byte %zu\n", i);
            return 1;
        }
    return 0;
}

/* Runs one call that must be refused in a child; a crash or any other
 * failure is reported with the creator, start address and size. */
static void expect_refused(const creator *c, unsigned char *mem, size_t bytes, const char *what)
{
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(refused_untouched(c, mem, bytes));
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        CHECK_MSG(0, "%s: bytes = %s (%zu) at mem %p: crashed with signal %d", c->label, what,
                  bytes, (void *)mem, WTERMSIG(status));
    else
        CHECK_MSG(WEXITSTATUS(status) == 0, "%s: bytes = %s (%zu) at mem %p: not refused cleanly",
                  c->label, what, bytes, (void *)mem);
}

static void run_creator(const creator *c, unsigned char *buf)
{
    static const size_t offsets[] = {0, 1, 3, 7};
    for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
        unsigned char *mem = buf + offsets[o];
        size_t wrap = (size_t)(UINTPTR_MAX - (uintptr_t)mem) + 1u;
        expect_refused(c, mem, SIZE_MAX, "SIZE_MAX");
        expect_refused(c, mem, SIZE_MAX - 1u, "SIZE_MAX - 1");
        expect_refused(c, mem, wrap, "UINTPTR_MAX - mem + 1");
        /* The same region with its real size works. */
        void *h = c->create(c->name, mem, REGION - offsets[o]);
        CHECK_MSG(h != NULL, "%s: the real region (%zu bytes at %p) refused", c->label,
                  REGION - offsets[o], (void *)mem);
        if (h != NULL)
            c->destroy(h);
    }
}

static test_region buffer;

static void for_each_algorithm(const char *api, void *(*fn)(const char *, void *, size_t))
{
    char label[64];
    for (const char *const *n = rtm_algorithms(); *n != NULL; n++) {
        snprintf(label, sizeof label, "%s(\"%s\")", api, *n);
        creator c = {label, *n, fn, destroy_generic};
        run_creator(&c, buffer.mem);
    }
}

static void test_generic(void) { for_each_algorithm("rtm_heap_create", generic); }
static void test_locked(void) { for_each_algorithm("rtm_locked_create", locked); }

static void test_typed(void)
{
    static const creator typed[] = {
        {"rtm_pool_create", NULL, pool, destroy_none},
        {"rtm_buddy_create", NULL, buddy, destroy_none},
        {"rtm_halffit_create", NULL, halffit, destroy_none},
        {"rtm_slab_create", NULL, slab, destroy_none},
        {"rtm_heapmem_create", NULL, heapmem, destroy_none},
    };
    for (size_t i = 0; i < sizeof typed / sizeof typed[0]; i++)
        run_creator(&typed[i], buffer.mem);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int all = strcmp(which, "all") == 0;
    buffer = region_malloc(REGION + 8u, 0); /* room for the offsets */
    if (all || strcmp(which, "generic") == 0)
        RUN_TEST(test_generic);
    if (all || strcmp(which, "typed") == 0)
        RUN_TEST(test_typed);
    if (all || strcmp(which, "locked") == 0)
        RUN_TEST(test_locked);
    region_free(&buffer);
    return check_summary();
}
