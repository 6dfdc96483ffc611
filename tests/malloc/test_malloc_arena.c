// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_arena.c -- the real-time mode: after start-up,
 * no system call and no page fault on any allocation that fits in the
 * arena; exhaustion reported (ENOMEM and a counter), never a fallback.
 *
 * Started with --api, it calls rtm_malloc_arena() before any allocation;
 * with --env it expects RTMEM_ARENA (set by ctest) to have done the same.
 * Then, in the main thread and in a second thread (which takes one of the
 * thread caches prepared at start-up):
 *  - a warm-up pass of random allocations, writes and frees, then the same
 *    pass again while counting: the allocator's OS calls (every mmap,
 *    munmap, madvise and mlock goes through one counter) must not move,
 *    and the thread's minor and major page faults (getrusage RUSAGE_THREAD)
 *    must stay at 0 -- memory handed out is pre-faulted, and so are the
 *    page map, the span records and the caches;
 *  - allocating until the arena is exhausted: NULL with ENOMEM, counted in
 *    arena_exhausted, still no OS call; after freeing, allocation works.
 * mlock may fail under RLIMIT_MEMLOCK: the arena is pre-faulted anyway and
 * the test says so (arena_locked = 0) without failing.
 * Under an emulator (RTMEM_TEST_EMULATOR set, as scripts/test-cross.sh does
 * for qemu-user) the page faults are printed, not checked: getrusage then
 * counts the emulator's own faults too (translating code the guest runs for
 * the first time), which no allocator can prevent. The OS calls are still
 * checked there; the faults are checked in every native run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#define ARENA ((size_t)48 << 20)

static long faults_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Random allocations of up to 64 KiB (some up to 1 MiB), at most 256 live,
 * every block written; everything freed at the end. */
static void pass(uint64_t seed)
{
    void *live[256] = {0};
    uint64_t s = seed;
    for (int i = 0; i < 20000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        unsigned k = (unsigned)(s >> 33) % 256u;
        rtm_malloc_free(live[k]);
        size_t size =
            (s >> 20) % 16u == 0 ? (size_t)((s >> 8) % (1u << 20)) : (size_t)((s >> 8) % 65536u);
        live[k] = rtm_malloc(size + 1u);
        if (live[k] != NULL)
            memset(live[k], i & 0xff, size + 1u);
    }
    for (int k = 0; k < 256; k++)
        rtm_malloc_free(live[k]);
}

static void check_quiet_pass(const char *who)
{
    const char *emulator = getenv("RTMEM_TEST_EMULATOR");
    int emulated = emulator != NULL && emulator[0] != '\0';
    pass(1);
    size_t calls0 = rtm_malloc_stats().os_calls;
    long f0 = faults_now();
    pass(1);
    pass(2);
    long faults = faults_now() - f0;
    size_t calls = rtm_malloc_stats().os_calls - calls0;
    CHECK_MSG(calls == 0, "%s: %zu OS calls after start-up", who, calls);
    if (!emulated)
        CHECK_MSG(faults == 0, "%s: %ld page faults after start-up", who, faults);
    printf("  %s: %zu OS calls, %ld page faults in two passes%s%s%s\n", who, calls, faults,
           emulated ? " (not checked: counted under " : "", emulated ? emulator : "",
           emulated ? ")" : "");
}

static void check_exhaustion(void)
{
    size_t calls0 = rtm_malloc_stats().os_calls;
    size_t exhausted0 = rtm_malloc_stats().arena_exhausted;
    void **blocks = rtm_malloc(4096 * sizeof(void *));
    REQUIRE(blocks != NULL);
    size_t n = 0;
    errno = 0;
    while (n < 4096 && (blocks[n] = rtm_malloc(100000)) != NULL)
        n++;
    CHECK_EQ(errno, ENOMEM);
    CHECK(n > 100 && n < 4096);
    errno = 0;
    CHECK(rtm_malloc(ARENA) == NULL); /* larger than the arena: no fallback */
    CHECK_EQ(errno, ENOMEM);
    rtm_malloc_stats_t st = rtm_malloc_stats();
    CHECK(st.arena_exhausted >= exhausted0 + 2u);
    CHECK(st.failed_allocs >= 2u);
    for (size_t i = 0; i < n; i++)
        rtm_malloc_free(blocks[i]);
    rtm_malloc_free(blocks);
    void *again = rtm_malloc(100000);
    CHECK(again != NULL);
    rtm_malloc_free(again);
    CHECK_EQ(rtm_malloc_stats().os_calls, calls0);
    CHECK_EQ(rtm_malloc_check(), 0);
}

static void *second_thread(void *arg)
{
    (void)arg;
    check_quiet_pass("second thread");
    return NULL;
}

int main(int argc, char **argv)
{
    int by_env = argc > 1 && strcmp(argv[1], "--env") == 0;
    if (!by_env) {
        int rc = rtm_malloc_arena(ARENA, 4);
        REQUIRE(rc == 0);
        errno = 0;
        CHECK_EQ(rtm_malloc_arena(ARENA, 4), -1); /* once only */
        CHECK_EQ(errno, EBUSY);
    }
    rtm_malloc_stats_t st = rtm_malloc_stats();
    REQUIRE(st.arena_bytes >= ARENA - 8192u && st.arena_bytes <= ARENA);
    printf("  arena %zu KiB, locked: %s\n", st.arena_bytes >> 10,
           st.arena_locked ? "yes" : "no (RLIMIT_MEMLOCK; pre-faulted only)");
    CHECK(rtm_malloc_trim() == 0); /* nothing goes back to the OS in RT mode */
    check_quiet_pass("main thread");
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, second_thread, NULL) == 0);
    pthread_join(t, NULL);
    check_exhaustion();
    return check_summary();
}
