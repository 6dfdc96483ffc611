// SPDX-License-Identifier: MIT
/*
 * tests/hardening/test_harden_tlsf_check.c -- issue 12, TLSF: the heap check
 * on heaps no public call can build any more. White box: it includes the
 * TLSF layout (src/heaps/tlsf_layout.h) and the guard (src/shared/
 * guarded.h) to write those heaps by hand.
 *
 *   overlap   a heap whose second pool lies inside one of its own live
 *             blocks: exactly what rtm_tlsf_add_pool made of an overlapping
 *             region before issue 12 (it formatted the region and linked it
 *             in). rtm_tlsf_check returned 0 on it while alloc handed out
 *             blocks inside the live block; it must fail with EFAULT. Also
 *             a pool list that loops (a hang would be a failure: ctest's
 *             timeout).
 *   shared    a process-shared heap whose guard is valid but whose inner
 *             TLSF control structure (every byte after the kind word, or
 *             parts of it) holds garbage: rtm_heap_check must return -1
 *             with EFAULT and one report, never follow a link out of the
 *             segment. Each trial runs in a child, so a fault is a named
 *             failure; several seeds per variant.
 *
 * Usage: test_harden_tlsf_check overlap|shared [typed|generic]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../common/region.h"
#include "../common/rng.h"
#include "heaps/tlsf_layout.h"
#include "rtmem.h"
#include "shared/guarded.h"
#include "../tracking/track_test.h"

#define KiB ((size_t)1024)

static int generic_api;

/* One failed check: -1, errno EFAULT, exactly one CHECK_FAILED report. */
static int check_fails_cleanly(const rtm_tlsf *t, rtm_heap *h)
{
    recorder_install();
    errno = 0;
    int rc = h != NULL ? rtm_heap_check(h) : rtm_tlsf_check(t);
    int e = errno;
    error_record rec = *recorder();
    rtm_set_error_handler(NULL, NULL);
    return rc == -1 && e == EFAULT && rec.calls == 1 && rec.last_kind == RTM_ERR_CHECK_FAILED;
}

/* ---------------------------------------------------------------------- */
/* overlap                                                                 */
/* ---------------------------------------------------------------------- */

/* What rtm_tlsf_add_pool did before issue 12 with a region [mem, mem +
 * bytes) inside the heap (mem 8-aligned): format it as one free block and
 * link it in, in front of the pool list. Its list must be empty here. */
static void old_add_pool(rtm_tlsf *t, char *mem, size_t bytes)
{
    tlsf_pool *pool = (tlsf_pool *)(void *)mem;
    size_t s = (bytes - POOL_FIRST_PAYLOAD) & ~(GRAN - 1u);
    char *first = pool_first(pool), *end = first + s;
    unsigned idx = list_index(s);
    REQUIRE(t->heads[idx] == 0);
    pool->end = off_of(t, end);
    pool->next = t->first_pool;
    t->first_pool = off_of(t, mem);
    t->total_span += s;
    t->arena_bytes += bytes;
    set_hdr(first, s | BLOCK_FREE);
    set_footer(first, s);
    set_hdr(end, BLOCK_PREV_FREE); /* its sentinel */
    *link_next(first) = 0;
    *link_pprev(first) = link_to(t, (const char *)&t->heads[idx]);
    t->heads[idx] = link_to(t, first);
    t->list_bits[idx >> 6] |= (uint64_t)1 << (idx & 63u);
    t->free_blocks++;
}

typedef struct heap_ut {
    test_region r;
    rtm_tlsf *t;
    rtm_heap *h; /* generic handle, or NULL */
} heap_ut;

static heap_ut make_heap(void)
{
    heap_ut u;
    u.r = region_malloc(64 * KiB, 0);
    u.h = generic_api ? rtm_heap_create("tlsf", u.r.mem, u.r.bytes) : NULL;
    u.t = generic_api ? (rtm_tlsf *)(void *)u.h : rtm_tlsf_create(u.r.mem, u.r.bytes);
    REQUIRE(u.t != NULL);
    /* Typed calls and direct writes to the control structure on a heap made
     * by rtm_heap_create: untracked (opened whole) in tracked builds. */
    TRACK_OPEN(u.r.mem, u.r.bytes);
    return u;
}

static void test_overlap(void)
{
    /* A second pool inside a live block: the heap is consistent in every
     * other respect, and hands out memory the user already holds. */
    heap_ut u = make_heap();
    char *live = rtm_tlsf_alloc(u.t, 3000);
    REQUIRE(live != NULL);
    REQUIRE(rtm_tlsf_check(u.t) == 0);
    old_add_pool(u.t, live, 3000 - 8);
    char *q = rtm_tlsf_alloc(u.t, 2000);
    REQUIRE(q != NULL && q >= live && q < live + 3000); /* the damage it allows */
    CHECK_MSG(check_fails_cleanly(u.t, u.h),
              "check of a heap whose second pool lies inside its own live block: not -1/EFAULT "
              "with one report");
    region_free(&u.r);

    /* A second pool inside the heap's own free space (the free block after
     * a): the lists and the walk still agree, the pools do not. */
    u = make_heap();
    char *a = rtm_tlsf_alloc(u.t, 100);
    REQUIRE(a != NULL);
    char *rest = a + 104;
    old_add_pool(u.t, rest + 64, 2048);
    CHECK_MSG(check_fails_cleanly(u.t, u.h), "check of a heap whose second pool lies in its free "
                                             "space: not -1/EFAULT with one report");
    region_free(&u.r);

    /* A pool list that loops back to its only pool. */
    u = make_heap();
    pool_at(u.t, u.t->first_pool)->next = u.t->first_pool;
    CHECK_MSG(check_fails_cleanly(u.t, u.h), "check of a looping pool list: not -1/EFAULT");
    region_free(&u.r);
}

/* ---------------------------------------------------------------------- */
/* shared                                                                  */
/* ---------------------------------------------------------------------- */

#define SEGMENT (256u * 1024u)

enum garbage {
    G_ALL,        /* every byte after the kind word                  */
    G_POOL_LINK,  /* the first-pool offset only: any 64-bit value    */
    G_POOL_IN,    /* the first-pool offset: a place in the segment   */
    G_LISTS,      /* list bitmaps and heads                          */
    G_COUNTERS,   /* the counters after the heads                    */
    G_AFTER_POOL, /* the word after the first-pool offset            */
    G_COUNT
};
static const char *const garbage_names[] = {"all",   "pool link", "pool link in segment",
                                            "lists", "counters",  "word after pool link"};
static const unsigned garbage_seeds[] = {24, 8, 24, 8, 4, 4};

static void scramble(rtm_guard *g, enum garbage kind, uint64_t seed)
{
    rtm_tlsf *t = guard_tlsf(g);
    unsigned char *c = (unsigned char *)t;
    rng r = {seed * 0x9E3779B97F4A7C15ull + (uint64_t)kind};
    size_t from = 4, to = rtm_tlsf_control_size();
    if (kind == G_POOL_LINK || kind == G_POOL_IN || kind == G_AFTER_POOL) {
        from = offsetof(struct rtm_tlsf, first_pool) + (kind == G_AFTER_POOL ? 8u : 0u);
        to = from + 8u;
    } else if (kind == G_LISTS) {
        from = offsetof(struct rtm_tlsf, list_bits);
        to = offsetof(struct rtm_tlsf, used_bytes);
    } else if (kind == G_COUNTERS) {
        from = offsetof(struct rtm_tlsf, used_bytes);
        to = offsetof(struct rtm_tlsf, first_pool);
    }
    for (size_t i = from; i < to; i++)
        c[i] = (unsigned char)rng_next(&r);
    if (kind == G_POOL_IN) {
        /* An 8-aligned place anywhere in the segment, not the real one. */
        ptrdiff_t lo = -(ptrdiff_t)((char *)t - (char *)g), real = t->first_pool, off = real;
        while (off == real)
            off = lo + (ptrdiff_t)(rng_below(&r, SEGMENT / 8u) * 8u);
        t->first_pool = off;
    }
}

static void shared_trial(enum garbage kind, uint64_t seed)
{
    char name[96];
    snprintf(name, sizeof name, "/rtmem-harden-tlsf-%ld-%d-%llu", (long)getpid(), (int)kind,
             (unsigned long long)seed);
    (void)rtm_shared_unlink(name);
    rtm_heap *h = rtm_shared_create(name, SEGMENT, NULL);
    REQUIRE(h != NULL);
    void *blocks[12];
    for (size_t i = 0; i < 12; i++)
        REQUIRE((blocks[i] = rtm_alloc(h, 40 + 700 * i)) != NULL);
    for (size_t i = 0; i < 12; i += 3)
        rtm_free(h, blocks[i]);
    REQUIRE(rtm_heap_check(h) == 0);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        scramble(as_guard(h), kind, seed);
        _exit(check_fails_cleanly(NULL, h) ? 0 : 3);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    if (WIFSIGNALED(status))
        CHECK_MSG(0, "garbage in the inner control (%s, seed %llu): check crashed, signal %d",
                  garbage_names[kind], (unsigned long long)seed, WTERMSIG(status));
    else
        CHECK_MSG(WEXITSTATUS(status) == 0,
                  "garbage in the inner control (%s, seed %llu): check did not return -1 with "
                  "EFAULT and one report",
                  garbage_names[kind], (unsigned long long)seed);
    rtm_shared_close(h);
    CHECK_EQ(rtm_shared_unlink(name), 0);
}

static void test_shared(void)
{
    for (int kind = 0; kind < G_COUNT; kind++)
        for (uint64_t seed = 1; seed <= garbage_seeds[kind]; seed++)
            shared_trial((enum garbage)kind, seed);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "overlap") == 0) {
        generic_api = argc >= 3 && strcmp(argv[2], "generic") == 0;
        RUN_TEST(test_overlap);
        return check_summary();
    }
    if (argc >= 2 && strcmp(argv[1], "shared") == 0) {
        RUN_TEST(test_shared);
        return check_summary();
    }
    fprintf(stderr, "usage: %s overlap [typed|generic] | shared\n", argv[0]);
    return 2;
}
