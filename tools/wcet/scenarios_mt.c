// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios_mt.c -- the multi-threaded heap's states
 * (rtm_mt_create("tlsf", ...), include/rtmem/mt.h), measured as "mt:tlsf":
 * the traced thread (the child's main thread) is attached to shard 0; a
 * second thread, the "peer", attached to shard 1, makes the other side's
 * calls: it frees the main thread's blocks (remote frees, pending in shard
 * 0's inbox) and allocates blocks the main thread then frees remotely.
 *
 * The peer never runs while a call is measured: it is parked on a
 * semaphore and runs one job at a time while the main thread waits for it,
 * so every state is the same in both runs of a task (the counts must
 * repeat) and no untraced thread can reach the breakpoint the tracer
 * plants at a measured function's entry.
 *
 * What is measured (RTM_MT_BATCH = K blocks taken back inside one call):
 *   mt-owner     the main thread's rtm_alloc and rtm_free with 0, K and 2K
 *                remote frees pending, each pending block alone or between
 *                two free neighbours (its take-back is then TLSF's free
 *                merging both sides); the free's own block likewise;
 *   mt-remote    the remote free itself (row mt_remote_free): the main
 *                thread frees a block of the peer's shard, onto an empty
 *                inbox and onto one holding blocks; and from the main
 *                thread detached (no shard of its own);
 *   mt-takeback  the refused-then-take-back-all path: shard 0 is full, P
 *                remote frees are pending whose blocks are neighbours, and
 *                the request fits only the block they merge into, so the
 *                shard refuses it, takes back all P, and retries (P = 8, 32,
 *                128: the count grows by one TLSF free per pending block).
 * Variants pack (case, parameter) as case | parameter << 8.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "rtmem/mt.h"

#define V(c, p)     ((unsigned)(c) | (unsigned)(p) << 8)
#define V_CASE(v)   ((v)&0xffu)
#define V_PARAM(v)  ((v) >> 8)
#define K           RTM_MT_BATCH
#define SHARD_BYTES ((size_t)1 << 20) /* each shard's part of the region */
#define SMALL       64u               /* the blocks states are built of  */
#define MAX_BLOCKS  512u

/* --- the peer thread ------------------------------------------------------ */

typedef struct peer {
    pthread_t t;
    sem_t go, done;
    int (*job)(struct peer *);
    int quit, rc;
    rtm_heap *h;
    void *blocks[MAX_BLOCKS]; /* what a job frees or fills */
    size_t n, size;
} peer;

static void *peer_main(void *arg)
{
    peer *p = arg;
    for (;;) {
        while (sem_wait(&p->go) != 0)
            ;
        if (p->quit)
            return NULL;
        p->rc = p->job(p);
        sem_post(&p->done);
    }
}

/* Runs job on the peer thread and waits for it. Returns the job's status. */
static int peer_run(peer *p, int (*job)(peer *))
{
    p->job = job;
    sem_post(&p->go);
    while (sem_wait(&p->done) != 0)
        ;
    return p->rc;
}

static int job_attach(peer *p) { return rtm_mt_attach(p->h) == 1 ? 0 : -1; }
static int job_detach(peer *p) { return rtm_mt_detach(p->h); }

/* Frees blocks[0 .. n): remote frees of the main thread's blocks. */
static int job_free(peer *p)
{
    for (size_t i = 0; i < p->n; i++) {
        errno = 0;
        rtm_free(p->h, p->blocks[i]);
        if (errno == EINVAL)
            return -1;
    }
    return 0;
}

/* Allocates n blocks of `size` bytes on the peer's shard into blocks[]. */
static int job_alloc(peer *p)
{
    for (size_t i = 0; i < p->n; i++)
        if ((p->blocks[i] = rtm_alloc(p->h, p->size)) == NULL)
            return -1;
    return 0;
}

static int peer_start(peer *p)
{
    memset(p, 0, sizeof *p);
    REQUIRE(sem_init(&p->go, 0, 0) == 0 && sem_init(&p->done, 0, 0) == 0, "sem_init failed");
    REQUIRE(pthread_create(&p->t, NULL, peer_main, p) == 0, "cannot start the peer thread");
    return 0;
}

static void peer_stop(peer *p)
{
    p->quit = 1;
    sem_post(&p->go);
    pthread_join(p->t, NULL);
}

/* --- the heap ------------------------------------------------------------- */

/* A fresh mt heap of 2 shards at region offset 0, the main thread on shard
 * 0 and the peer on shard 1. The previous heap (if any) is left by both
 * and destroyed first: a thread holds at most RTM_MT_THREAD_HEAPS. */
static int fresh_heap(wcet_heap *w, peer *p)
{
    if (w->h != NULL) {
        (void)peer_run(p, job_detach);
        (void)rtm_mt_detach(w->h);
        rtm_heap_destroy(w->h);
        w->h = NULL;
    }
    size_t bytes = rtm_mt_region_size("tlsf", 2, SHARD_BYTES);
    REQUIRE(bytes != 0, "rtm_mt_region_size failed");
    TRY(wcet_region_reserve(bytes));
    w->h = rtm_mt_create("tlsf", wcet_region(), bytes, 2);
    REQUIRE(w->h != NULL, "rtm_mt_create(\"tlsf\", %zu bytes, 2 shards) failed", bytes);
    REQUIRE(rtm_mt_attach(w->h) == 0, "the main thread did not get shard 0");
    p->h = w->h;
    REQUIRE(peer_run(p, job_attach) == 0, "the peer did not get shard 1");
    return 0;
}

/* Allocates on the main thread's shard: n bytes, then a fence right after,
 * so that the block keeps a used right neighbour. */
static int carve(wcet_heap *w, size_t n, void **out)
{
    TRY(wcet_carve_fenced(w, n, out));
    return 0;
}

/* Allocates three neighbours L, B, R (SMALL each) and a fence; the
 * caller frees L and R later, on the main thread (its own frees, straight
 * to its shard), leaving B between two free blocks. Every triple is carved
 * before any is freed: a freed L would otherwise serve the next triple. */
static int triple(wcet_heap *w, void **lbr)
{
    lbr[0] = wcet_raw_alloc(w, SMALL);
    REQUIRE(lbr[0] != NULL, "cannot allocate");
    lbr[1] = wcet_raw_alloc(w, SMALL);
    REQUIRE(lbr[1] != NULL && wcet_adjacent(w, lbr[0], lbr[1]), "B is not L's neighbour");
    TRY(carve(w, SMALL, &lbr[2]));
    REQUIRE(wcet_adjacent(w, lbr[1], lbr[2]), "R is not B's neighbour");
    return 0;
}

/* The state of a case: `mine` (the owner's block to free, between two free
 * ones, when wanted) and n blocks of the main thread's, each alone (fenced)
 * or between two free blocks, then freed by the peer: n remote frees
 * pending in shard 0's inbox. */
static int build(wcet_heap *w, peer *p, void **mine, size_t n, int merge)
{
    static void *lbr[MAX_BLOCKS + 1][3];
    REQUIRE(n <= MAX_BLOCKS, "too many pending blocks");
    size_t t = 0;
    if (mine != NULL) {
        TRY(triple(w, lbr[t++]));
        *mine = lbr[0][1];
    }
    for (size_t i = 0; i < n; i++) {
        if (merge) {
            TRY(triple(w, lbr[t]));
            p->blocks[i] = lbr[t++][1];
        } else {
            TRY(carve(w, SMALL, &p->blocks[i]));
        }
    }
    for (size_t i = 0; i < t; i++) {
        wcet_raw_free(w, lbr[i][0]);
        wcet_raw_free(w, lbr[i][2]);
    }
    p->n = n;
    REQUIRE(peer_run(p, job_free) == 0, "the peer's remote free was refused");
    return 0;
}

/* --- mt-owner --------------------------------------------------------------- */

enum { OWN_ALLOC, OWN_FREE, OWN_CASES };
static const char *const own_cases[OWN_CASES] = {"alloc (split from the shard's free block)",
                                                 "free of a block between two free ones"};

/* param: pending count | merge << 7 */
static int owner_case(wcet_heap *w, peer *p, unsigned c, size_t npend, int merge)
{
    TRY(fresh_heap(w, p));
    void *mine = NULL;
    TRY(build(w, p, c == OWN_FREE ? &mine : NULL, npend, merge));
    unsigned v = V(c, (unsigned)npend | (unsigned)merge << 7);
    if (c == OWN_ALLOC) {
        REQUIRE(wcet_m_alloc(w, SC_MT_OWNER, v, SMALL) != NULL, "the owner's alloc failed");
    } else {
        REQUIRE(wcet_m_free(w, SC_MT_OWNER, v, SMALL, mine) == 0, "the owner's free was refused");
    }
    return wcet_raw_check(w) == 0 ? 0 : wcet_fail("rtm_heap_check failed after the case");
}

static int owner(wcet_heap *w, peer *p)
{
    static const size_t counts[] = {0, K, 2 * K};
    for (unsigned c = 0; c < OWN_CASES; c++)
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
            for (int merge = 0; merge < 2; merge++)
                TRY(owner_case(w, p, c, counts[i], merge));
    return 0;
}

/* --- mt-remote ---------------------------------------------------------------- */

enum { REM_EMPTY, REM_STACKED, REM_DETACHED, REM_CASES };
static const char *const rem_cases[REM_CASES] = {
    "onto the owner's empty inbox", "onto an inbox holding blocks",
    "from a thread holding no shard (main thread detached)"};

static int remote_free(wcet_heap *w, unsigned c, void *q)
{
    errno = 0;
    wcet_marker(ROW_MT_REMOTE_FREE, SC_MT_REMOTE, V(c, 0), SMALL);
    rtm_free(w->h, q);
    REQUIRE(errno != EINVAL, "the remote free was refused");
    return 0;
}

static int remote(wcet_heap *w, peer *p)
{
    TRY(fresh_heap(w, p));
    p->n = 4;
    p->size = SMALL;
    REQUIRE(peer_run(p, job_alloc) == 0, "the peer could not allocate");
    TRY(remote_free(w, REM_EMPTY, p->blocks[0]));
    TRY(remote_free(w, REM_STACKED, p->blocks[1]));
    TRY(remote_free(w, REM_STACKED, p->blocks[2]));
    REQUIRE(rtm_mt_detach(w->h) == 0, "the main thread could not detach");
    TRY(remote_free(w, REM_DETACHED, p->blocks[3]));
    REQUIRE(rtm_mt_attach(w->h) >= 0, "the main thread could not attach again");
    rtm_stats st = wcet_raw_stats(w);
    REQUIRE(st.live_blocks == 0, "%zu blocks live after every remote free", st.live_blocks);
    return 0;
}

/* --- mt-takeback ------------------------------------------------------------- */

/* Fills what is left of the main thread's shard: blocks of halving sizes
 * until even the smallest is refused (a refusal with nothing pending takes
 * nothing back). */
static int fill_shard(wcet_heap *w)
{
    for (size_t n = SHARD_BYTES; n >= 8; n /= 2)
        while (wcet_raw_alloc(w, n) != NULL)
            ;
    return 0;
}

static int takeback_case(wcet_heap *w, peer *p, size_t npend)
{
    TRY(fresh_heap(w, p));
    void *first = NULL;
    for (size_t i = 0; i < npend; i++) {
        p->blocks[i] = wcet_raw_alloc(w, SMALL);
        REQUIRE(p->blocks[i] != NULL &&
                    (i == 0 || wcet_adjacent(w, p->blocks[i - 1], p->blocks[i])),
                "pending block %zu is not its predecessor's neighbour", i);
    }
    first = p->blocks[0];
    TRY(fill_shard(w));
    p->n = npend;
    REQUIRE(peer_run(p, job_free) == 0, "the peer's remote free was refused");
    /* Merged, the npend blocks hold npend * SMALL bytes and more; any
     * smaller free block the fill left is under SMALL bytes. */
    size_t want = npend * SMALL;
    void *got = wcet_m_alloc(w, SC_MT_TAKEBACK, V(0, (unsigned)npend), want);
    REQUIRE(got == first, "the request for %zu bytes did not get the merged pending blocks", want);
    return 0;
}

static int takeback(wcet_heap *w, peer *p)
{
    static const size_t counts[] = {8, 32, 128};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        TRY(takeback_case(w, p, counts[i]));
    return 0;
}

/* --- dispatch ----------------------------------------------------------------- */

int wcet_mt_scenario(wcet_heap *w, const wcet_config *cfg, enum wcet_scenario sc)
{
    (void)cfg;
    static peer p;
    TRY(peer_start(&p));
    int rc = sc == SC_MT_OWNER      ? owner(w, &p)
             : sc == SC_MT_REMOTE   ? remote(w, &p)
             : sc == SC_MT_TAKEBACK ? takeback(w, &p)
                                    : wcet_fail("scenario %d is not an mt scenario", (int)sc);
    if (w->h != NULL)
        (void)peer_run(&p, job_detach);
    peer_stop(&p);
    return rc;
}

int wcet_mt_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    unsigned c = V_CASE(v), param = V_PARAM(v);
    switch (sc) {
    case SC_MT_OWNER:
        snprintf(buf, len, "%s, %llu bytes, %u remote frees pending%s",
                 c < OWN_CASES ? own_cases[c] : "?", (unsigned long long)size, param & 0x7fu,
                 param >> 7 ? ", each between two free blocks" : ", each alone");
        return 1;
    case SC_MT_REMOTE:
        snprintf(buf, len, "remote free of %llu bytes %s", (unsigned long long)size,
                 c < REM_CASES ? rem_cases[c] : "?");
        return 1;
    case SC_MT_TAKEBACK:
        snprintf(buf, len,
                 "request %llu refused by the full shard, %u neighbouring remote frees pending: "
                 "all taken back, retried",
                 (unsigned long long)size, param);
        return 1;
    default:
        return 0;
    }
}

unsigned long wcet_mt_weight(const wcet_config *cfg, enum wcet_scenario sc)
{
    (void)cfg;
    return sc == SC_MT_TAKEBACK ? 400 : 50;
}
