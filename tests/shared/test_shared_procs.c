// SPDX-License-Identifier: MIT
/*
 * tests/shared/test_shared_procs.c -- several processes, each with several
 * threads, share one heap:
 *  - two forked children and two separately started executables (this
 *    program re-run with --worker, attaching by name at another address),
 *    two threads each, allocate blocks of random sizes, fill them with a
 *    pattern derived from the block's offset (the same in every process),
 *    resize some, and hand blocks to each other through a mailbox of
 *    offsets that itself lives in the heap; a receiver checks the pattern
 *    and frees the block (freeing other processes' blocks);
 *  - a victim process doing the same is killed with SIGKILL mid-run, twice:
 *    the others go on (repairing when it died holding the lock), and at the
 *    end its leftover blocks are counted and reclaimed;
 *  - at the end every block is accounted for: the heap is one free block
 *    again, rtm_heap_check is clean, no pattern was ever found damaged.
 * Labelled "threads" in ctest.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/rng.h"
#include "rtmem.h"

#define KiB     ((size_t)1024)
#define SLOTS   64
#define THREADS 2
#define HELD    32

/* The mailbox: offsets of blocks in transit, and counters, in the heap. */
typedef struct mailbox {
    _Atomic(rtm_offset) slot[SLOTS];
    atomic_uint bad_patterns;
    atomic_uint transfers;
    atomic_uint stop; /* the victim loops until this is set */
} mailbox;

typedef struct worker {
    rtm_heap *h;
    mailbox *box;
    uint64_t seed;
    size_t ops; /* 0: until box->stop */
} worker;

/* Block layout: [rtm_offset self][uint64 size][bytes f(offset, i)]. */
static unsigned char pat(rtm_offset off, size_t i)
{
    return (unsigned char)(off * 2654435761u + i);
}

static void fill(rtm_heap *h, unsigned char *p, size_t size)
{
    rtm_offset off = rtm_shared_offset(h, p);
    uint64_t sz = size;
    memcpy(p, &off, sizeof off);
    memcpy(p + 8, &sz, sizeof sz);
    for (size_t i = 16; i < size; i++)
        p[i] = pat(off, i);
}

static int intact(rtm_heap *h, const unsigned char *p)
{
    rtm_offset off, self = rtm_shared_offset(h, p);
    uint64_t size;
    memcpy(&off, p, sizeof off);
    memcpy(&size, p + 8, sizeof size);
    if (off != self || size < 16 || size > rtm_usable_size(h, p))
        return 0;
    for (size_t i = 16; i < size; i++)
        if (p[i] != pat(off, i))
            return 0;
    return 1;
}

static void release(worker *w, unsigned char *p)
{
    if (!intact(w->h, p))
        atomic_fetch_add(&w->box->bad_patterns, 1u);
    rtm_free(w->h, p);
}

static void *worker_thread(void *arg)
{
    worker *w = arg;
    rng r = {w->seed};
    unsigned char *held[HELD] = {NULL};
    for (size_t op = 0; w->ops == 0 ? atomic_load(&w->box->stop) == 0 : op < w->ops; op++) {
        size_t k = rng_below(&r, HELD);
        unsigned what = (unsigned)rng_below(&r, 8u);
        if (held[k] == NULL) {
            size_t size = 16u + rng_below(&r, rng_below(&r, 8u) == 0 ? 8000u : 500u);
            held[k] = rtm_alloc(w->h, size);
            if (held[k] != NULL)
                fill(w->h, held[k], size);
        } else if (what < 3) { /* hand over; take what was there */
            rtm_offset give = rtm_shared_offset(w->h, held[k]);
            held[k] = NULL;
            rtm_offset got = atomic_exchange(&w->box->slot[rng_below(&r, SLOTS)], give);
            if (got != 0) {
                atomic_fetch_add(&w->box->transfers, 1u);
                release(w, rtm_shared_pointer(w->h, got));
            }
        } else if (what == 3) {
            size_t size = 16u + rng_below(&r, 3000u);
            if (!intact(w->h, held[k]))
                atomic_fetch_add(&w->box->bad_patterns, 1u);
            unsigned char *q = rtm_realloc(w->h, held[k], size);
            if (q != NULL) {
                held[k] = q;
                fill(w->h, q, size);
            }
        } else {
            release(w, held[k]);
            held[k] = NULL;
        }
    }
    for (size_t k = 0; k < HELD; k++)
        if (held[k] != NULL)
            release(w, held[k]);
    return NULL;
}

/* A worker process: THREADS threads on the heap `name`. Returns the exit
 * status (0 when it could attach and run). */
static int worker_main(const char *name, rtm_offset box_off, uint64_t seed, size_t ops)
{
    rtm_heap *h = rtm_shared_open(name);
    if (h == NULL)
        return 3;
    mailbox *box = rtm_shared_pointer(h, box_off);
    worker w[THREADS];
    pthread_t tid[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (worker){h, box, seed * 100u + i, ops};
        if (pthread_create(&tid[i], NULL, worker_thread, &w[i]) != 0)
            return 4;
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(tid[i], NULL);
    rtm_shared_close(h);
    return 0;
}

static char heap_name[64];
static void unlink_heap(void) { (void)rtm_shared_unlink(heap_name); }

static pid_t start_forked(rtm_offset box_off, uint64_t seed, size_t ops)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(worker_main(heap_name, box_off, seed, ops));
    return pid;
}

static const char *self_path;

/* Starts this program again as an independent executable. */
static pid_t start_exec(rtm_offset box_off, uint64_t seed, size_t ops)
{
    char off[32], sd[32], n[32];
    snprintf(off, sizeof off, "%llu", (unsigned long long)box_off);
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
    snprintf(n, sizeof n, "%zu", ops);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        execl(self_path, self_path, "--worker", heap_name, off, sd, n, (char *)NULL);
        _exit(5);
    }
    return pid;
}

static void expect_exit_ok(pid_t pid, const char *what)
{
    int st;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s %ld: status %d", what, (long)pid, st);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_processes_and_threads(void)
{
    snprintf(heap_name, sizeof heap_name, "/rtmem-test-procs-%ld", (long)getpid());
    (void)rtm_shared_unlink(heap_name);
    atexit(unlink_heap);
    rtm_heap *h = rtm_shared_create(heap_name, 2048 * KiB, NULL);
    REQUIRE(h != NULL);
    rtm_stats fresh = rtm_heap_stats(h);
    mailbox *box = rtm_alloc(h, sizeof *box);
    REQUIRE(box != NULL);
    memset(box, 0, sizeof *box);
    rtm_offset box_off = rtm_shared_offset(h, box);

    const size_t ops = 15000;
    pid_t workers[4];
    workers[0] = start_forked(box_off, 1, ops);
    workers[1] = start_forked(box_off, 2, ops);
    workers[2] = start_exec(box_off, 3, ops);
    workers[3] = start_exec(box_off, 4, ops);
    /* Victims: run until stopped, killed at random moments. */
    unsigned kills = 0;
    pid_t victims[2];
    for (int v = 0; v < 2; v++) {
        victims[v] = start_forked(box_off, 10u + (uint64_t)v, 0);
        sleep_ms(30 + 40 * v);
        REQUIRE(kill(victims[v], SIGKILL) == 0);
        int st;
        REQUIRE(waitpid(victims[v], &st, 0) == victims[v]);
        kills += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
    }
    CHECK(kills == 2);
    for (int i = 0; i < 4; i++)
        expect_exit_ok(workers[i], i < 2 ? "forked worker" : "executable worker");

    /* Drain the mailbox (blocks of every process, the victims' included:
     * they were handed over), then reclaim what the victims still held. */
    worker me = {h, box, 0, 0};
    size_t drained = 0;
    for (size_t i = 0; i < SLOTS; i++) {
        rtm_offset off = atomic_exchange(&box->slot[i], 0);
        if (off != 0) {
            release(&me, rtm_shared_pointer(h, off));
            drained++;
        }
    }
    rtm_shared_usage left[2];
    for (int v = 0; v < 2; v++) {
        CHECK(rtm_shared_owned(h, victims[v], &left[v]) == 0);
        CHECK(rtm_shared_reclaim(h, victims[v]) == (long)left[v].blocks);
    }
    /* A victim killed between taking a block out of the mailbox and
     * freeing it strands that block, still tagged with its sender, which
     * has exited since: "owners that no longer exist" finds it. At most one
     * per victim thread. */
    rtm_shared_usage dead;
    CHECK(rtm_shared_owned(h, 0, &dead) == 0);
    CHECK_MSG(dead.blocks <= 2u * THREADS, "%zu blocks of exited owners", dead.blocks);
    CHECK(rtm_shared_reclaim(h, 0) == (long)dead.blocks);
    rtm_shared_info info;
    CHECK(rtm_shared_info_get(h, &info) == 0);
    printf("  %u transfers between processes, %zu drained; victims left %zu + %zu blocks, "
           "%zu in transit (all reclaimed); %llu repairs after a death holding the lock\n",
           atomic_load(&box->transfers), drained, left[0].blocks, left[1].blocks, dead.blocks,
           (unsigned long long)info.recoveries);
    CHECK(atomic_load(&box->bad_patterns) == 0);
    CHECK(atomic_load(&box->transfers) > 1000);
    rtm_free(h, box);
    rtm_stats st = rtm_heap_stats(h);
    CHECK_MSG(st.live_blocks == 0 && st.used_bytes == 0, "%zu blocks left", st.live_blocks);
    CHECK(st.free_bytes == fresh.free_bytes && st.largest_free == fresh.largest_free);
    CHECK(rtm_heap_check(h) == 0);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(heap_name) == 0);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--worker") == 0) {
        if (argc != 6)
            return 2;
        return worker_main(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                           (size_t)strtoull(argv[5], NULL, 10));
    }
    self_path = argv[0];
    RUN_TEST(test_processes_and_threads);
    return check_summary();
}
