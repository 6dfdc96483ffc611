// SPDX-License-Identifier: MIT
/*
 * tests/firmware/board.c -- what a firmware test image needs besides the
 * C library (picolibc with semihosting) and the test sources themselves:
 *
 *  - timespec_get (board.h says why);
 *  - the rest of the test kit's regions (tests/common/region.h; the
 *    malloc'd ones are region_malloc.c's, from the C library's heap, the
 *    board's RAM above .bss): no guard pages, no sparse reservations, no
 *    mprotect on a board: those calls fail, and the tests that need them
 *    are left out;
 *  - the test functions this image leaves out and why (board_left_out,
 *    asked by check.h's runner before each test function);
 *  - link-time stand-ins for what a board has not got (fork and waitpid,
 *    the locked and process-shared heaps, which need POSIX threads and
 *    shared memory): they are reachable only from left-out tests, and if
 *    one ever ran it fails with ENOSYS instead of pretending to work.
 *
 * FW_PROGRAM (set by scripts/test-firmware.sh) names the test program this
 * image is built from.
 */
#include "common/region.h"

#include <errno.h>
#include <rtmem.h>
#include <rtmem/lock.h>
#include <rtmem/shared.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#ifndef FW_PROGRAM
#error "FW_PROGRAM (the test program's name) must be defined by scripts/test-firmware.sh"
#endif

int timespec_get(struct timespec *ts, int base)
{
    ts->tv_sec = time(NULL);
    ts->tv_nsec = 0;
    return base;
}

/* --- what is left out ---------------------------------------------------------------------- */

#define NEEDS_GUARD "needs guard pages (mmap + mprotect): a board has no MMU"
#define NEEDS_FORK  "runs a crash candidate in a child process (fork): a board has one program"
#define NEEDS_LOCK  "calls rtm_locked_create: the locked heaps need POSIX threads"
#define NEEDS_SHM   "calls rtm_shared_create: the process-shared heaps need shared memory"
#define NEEDS_RAM   "needs a region larger than the board's 16 MiB of RAM"

static const struct {
    const char *program, *test, *why;
} left_out[] = {
    {"test_tlsf", "test_metadata_inside_region", NEEDS_GUARD},
    {"test_tlsf", "test_position_independence", NEEDS_GUARD},
    {"test_debug", "test_foreign_pointer_at_page_start", NEEDS_FORK " and " NEEDS_GUARD},
    {"test_tlsf_grow", "test_algorithms_and_bad_args", NEEDS_LOCK},
    {"test_tlsf_grow", "test_shared_refuses", NEEDS_SHM},
    {"test_tlsf_grow", "test_extension_capped",
     "reserves 1 GiB sparse (mmap MAP_NORESERVE): a board has megabytes"},
    {"test_harden_tlsf", "foreign", NEEDS_FORK " and " NEEDS_GUARD},
    {"test_harden_tlsf", "wrap", NEEDS_FORK},
    {"test_harden_tlsf_api", "test_check_region", NEEDS_FORK " and " NEEDS_GUARD},
    {"test_harden_tlsf", "pool", NEEDS_GUARD},
    {"test_api", "test_tlsf_region_for", NEEDS_RAM},
    {"test_tlsf", "test_aligned_alloc_all_powers", NEEDS_RAM},
    {"test_halffit", "test_bound_never_fails", NEEDS_RAM},
};

const char *board_left_out(const char *test);
const char *board_left_out(const char *test)
{
    for (size_t i = 0; i < sizeof left_out / sizeof left_out[0]; i++)
        if (strcmp(left_out[i].program, FW_PROGRAM) == 0 && strcmp(left_out[i].test, test) == 0)
            return left_out[i].why;
    return NULL;
}

/* --- regions ------------------------------------------------------------------------------- */

size_t region_page_size(void) { return 4096u; }

guarded_region region_map_guarded(size_t pages, size_t lead)
{
    (void)pages;
    (void)lead;
    fprintf(stderr, "region_map_guarded: " NEEDS_GUARD "\n");
    exit(EXIT_FAILURE);
}

void region_unmap_guarded(guarded_region *g) { (void)g; }

void *region_map_sparse(size_t bytes)
{
    (void)bytes;
    errno = ENOSYS;
    return NULL;
}

void region_unmap(void *mem, size_t bytes)
{
    (void)mem;
    (void)bytes;
}

int region_protect_none(void *mem, size_t bytes)
{
    (void)mem;
    (void)bytes;
    errno = ENOSYS;
    return -1;
}

int region_protect_rw(void *mem, size_t bytes) { return region_protect_none(mem, bytes); }

/* --- stand-ins for what a board has not got ------------------------------------------------ */

pid_t fork(void);
pid_t waitpid(pid_t pid, int *status, int options);
pid_t getpid(void);

pid_t fork(void)
{
    errno = ENOSYS;
    return -1;
}

pid_t waitpid(pid_t pid, int *status, int options)
{
    (void)pid;
    (void)status;
    (void)options;
    errno = ECHILD;
    return -1;
}

pid_t getpid(void) { return 1; }

size_t rtm_locked_min_region(const char *algo)
{
    (void)algo;
    return 0;
}

rtm_heap *rtm_locked_create(const char *algo, void *mem, size_t bytes)
{
    (void)algo;
    (void)mem;
    (void)bytes;
    errno = ENOSYS;
    return NULL;
}

rtm_heap *rtm_shared_create(const char *name, size_t bytes, const char *algo)
{
    (void)name;
    (void)bytes;
    (void)algo;
    errno = ENOSYS;
    return NULL;
}

int rtm_shared_unlink(const char *name)
{
    (void)name;
    errno = ENOSYS;
    return -1;
}
