// SPDX-License-Identifier: MIT
/*
 * tests/shared/test_shared_crash.c -- a process dies inside every
 * instruction of every shared-heap operation; the survivors lose nothing.
 *
 * Method (deterministic, no hook in the library): for each scenario the
 * parent resets the shared heap and builds the same state (its own blocks,
 * filled with token-derived patterns, and holes where the scenario needs
 * them), then forks a child that asks to be traced and stops itself just
 * before the operation (rtm_alloc, rtm_aligned_alloc, rtm_free,
 * rtm_realloc or rtm_heap_reset on the shared heap). The parent
 * single-steps the child to the operation's first instruction, then N more
 * instructions, and kills it with SIGKILL. It does that for N = 0, 1, ...,
 * L, where L is the operation's length in instructions (measured by
 * stepping a first child to the operation's return): every instruction of
 * the operation -- the lock, the intent record, each TLSF store, the tag,
 * the unlock -- is a kill point. Same state, same code: each child takes
 * the same path, so N names the same instruction every time.
 *
 * After each kill the parent checks, through the public API:
 *  - rtm_heap_check is clean (the first call takes the lock and repairs if
 *    the child died holding it);
 *  - every block of the parent is live and its pattern intact -- except the
 *    block the child was freeing (live and intact, or gone) or resizing
 *    (the old block live, or a new block with the old contents);
 *  - the child left at most one block (an allocation finished but not yet
 *    returned), found by rtm_shared_owned and freed by
 *    rtm_shared_reclaim;
 *  - after freeing everything the heap is one free block again: stats
 *    exact, nothing lost;
 *  - allocation works.
 * It prints, per scenario, the kill points, how many were repaired with an
 * operation in flight (intent armed), with the lock held but no operation,
 * and outside the lock.
 *
 * x86-64 and i386 only (it reads the instruction and stack pointers);
 * elsewhere it reports itself skipped.
 */
#define _GNU_SOURCE

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "rtmem.h"

#if defined(__x86_64__) || defined(__i386__)

#define KiB        ((size_t)1024)
#define HEAP_BYTES (256 * KiB)
#define MAX_STEPS  200000u

static rtm_heap *heap;

/* --- the parent's blocks ------------------------------------------------- */

typedef struct pblock {
    char *p;
    size_t size;
    uint64_t token;
} pblock;

static void fill(char *p, size_t size, uint64_t token)
{
    for (size_t i = 0; i < size; i++)
        p[i] = (char)((token * 0x9E3779B97F4A7C15ull + i * 131u) >> 56);
}

static int intact(const char *p, size_t size, uint64_t token)
{
    for (size_t i = 0; i < size; i++)
        if (p[i] != (char)((token * 0x9E3779B97F4A7C15ull + i * 131u) >> 56))
            return 0;
    return 1;
}

#define MAX_PBLOCKS 16

typedef struct state {
    pblock b[MAX_PBLOCKS];
    size_t n;
    int target;         /* index of the block the child frees / resizes, -1 none */
    size_t target_size; /* realloc: the new size                                */
    size_t req, align;  /* alloc: the request                                   */
} state;

static char *palloc(state *s, size_t size)
{
    char *p = rtm_alloc(heap, size);
    REQUIRE(p != NULL && s->n < MAX_PBLOCKS);
    uint64_t token = 1000u + s->n;
    fill(p, size, token);
    s->b[s->n++] = (pblock){p, size, token};
    return p;
}

/* Frees parent block i now (to leave a hole); it is no longer tracked. */
static void hole(state *s, size_t i)
{
    rtm_free(heap, s->b[i].p);
    s->b[i].p = NULL;
}

/* --- scenarios ------------------------------------------------------------ */

typedef enum op_kind { OP_ALLOC, OP_ALIGNED, OP_FREE, OP_REALLOC, OP_RESET } op_kind;

typedef struct scenario {
    const char *name;
    op_kind op;
    void (*setup)(state *s);
} scenario;

/* [A][B][hole 300][C][rest]: the request fits the hole with a split. */
static void setup_alloc_split(state *s)
{
    palloc(s, 100);
    palloc(s, 200);
    palloc(s, 300);
    palloc(s, 50);
    hole(s, 2);
    s->req = 120;
}

/* [A][hole of exactly the request][C][rest]: no split. */
static void setup_alloc_exact(state *s)
{
    palloc(s, 100);
    palloc(s, 296);
    palloc(s, 50);
    hole(s, 1);
    s->req = 296;
}

/* Aligned request: a gap is split off in front of the block. */
static void setup_aligned(state *s)
{
    palloc(s, 100);
    palloc(s, 700);
    palloc(s, 60);
    hole(s, 1);
    s->req = 100;
    s->align = 256;
}

/* [A][hole][X][hole][C]: freeing X merges both ways. */
static void setup_free_merge(state *s)
{
    palloc(s, 100);
    palloc(s, 150);
    palloc(s, 200);
    palloc(s, 250);
    palloc(s, 80);
    hole(s, 1);
    hole(s, 3);
    s->target = 2;
}

/* [A][X][C]: no merge. */
static void setup_free_plain(state *s)
{
    palloc(s, 100);
    palloc(s, 200);
    palloc(s, 80);
    s->target = 1;
}

/* [A][X][hole 400][C]: X grows into the hole. */
static void setup_realloc_grow(state *s)
{
    palloc(s, 100);
    palloc(s, 200);
    palloc(s, 400);
    palloc(s, 80);
    hole(s, 2);
    s->target = 1;
    s->target_size = 450;
}

/* [A][X 600][C]: X shrinks, its tail becomes free. */
static void setup_realloc_shrink(state *s)
{
    palloc(s, 100);
    palloc(s, 600);
    palloc(s, 80);
    s->target = 1;
    s->target_size = 100;
}

/* [hole][X][C] ... X cannot grow: allocate, copy, free (merging left). */
static void setup_realloc_move(state *s)
{
    palloc(s, 300);
    palloc(s, 200);
    palloc(s, 80);
    hole(s, 0);
    s->target = 1;
    s->target_size = 2000;
}

static void setup_reset(state *s)
{
    palloc(s, 100);
    palloc(s, 200);
    palloc(s, 300);
    hole(s, 1);
}

static const scenario scenarios[] = {
    {"alloc-split", OP_ALLOC, setup_alloc_split},
    {"alloc-exact", OP_ALLOC, setup_alloc_exact},
    {"aligned-alloc", OP_ALIGNED, setup_aligned},
    {"free-merge-both", OP_FREE, setup_free_merge},
    {"free-no-merge", OP_FREE, setup_free_plain},
    {"realloc-grow", OP_REALLOC, setup_realloc_grow},
    {"realloc-shrink", OP_REALLOC, setup_realloc_shrink},
    {"realloc-move", OP_REALLOC, setup_realloc_move},
    {"reset", OP_RESET, setup_reset},
};

static uintptr_t op_entry(op_kind op)
{
    switch (op) {
    case OP_ALLOC:
        return (uintptr_t)rtm_alloc;
    case OP_ALIGNED:
        return (uintptr_t)rtm_aligned_alloc;
    case OP_FREE:
        return (uintptr_t)rtm_free;
    case OP_REALLOC:
        return (uintptr_t)rtm_realloc;
    case OP_RESET:
        return (uintptr_t)rtm_heap_reset;
    }
    return 0;
}

/* The child: stop, then the one operation, then leave. */
static void child_run(const scenario *sc, state *s)
{
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
        _exit(90);
    raise(SIGSTOP);
    char *t = s->target >= 0 ? s->b[s->target].p : NULL;
    switch (sc->op) {
    case OP_ALLOC:
        (void)rtm_alloc(heap, s->req);
        break;
    case OP_ALIGNED:
        (void)rtm_aligned_alloc(heap, s->align, s->req);
        break;
    case OP_FREE:
        rtm_free(heap, t);
        break;
    case OP_REALLOC:
        (void)rtm_realloc(heap, t, s->target_size);
        break;
    case OP_RESET:
        (void)rtm_heap_reset(heap);
        break;
    }
    _exit(0);
}

/* --- tracing --------------------------------------------------------------- */

static int get_regs(pid_t pid, struct user_regs_struct *r)
{
    return ptrace(PTRACE_GETREGS, pid, NULL, r) == 0 ? 0 : -1;
}

#if defined(__x86_64__)
#define REG_IP(r)        ((r).rip)
#define REG_SP(r)        ((r).rsp)
#define SET_IP(r, value) ((r).rip = (unsigned long long)(value))
#else
#define REG_IP(r)        ((r).eip)
#define REG_SP(r)        ((r).esp)
#define SET_IP(r, value) ((r).eip = (long)(value))
#endif

static int wait_trap(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
        return -1;
    return 0;
}

static int step(pid_t pid)
{
    if (ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) != 0)
        return -1;
    return wait_trap(pid);
}

/* A breakpoint: int3 (0xCC) in the low byte of the text word at addr. The
 * child is a fork of this program, so the parent's own function addresses
 * are the child's; writing its text only changes the child's copy. */
typedef struct breakpoint {
    uintptr_t addr;
    long word;
} breakpoint;

static int bp_plant(pid_t pid, breakpoint *bp, uintptr_t addr)
{
    errno = 0;
    long word = ptrace(PTRACE_PEEKTEXT, pid, (void *)addr, NULL);
    if (errno != 0)
        return -1;
    bp->addr = addr;
    bp->word = word;
    long trapped = (long)(((unsigned long)word & ~0xFFul) | 0xCCul);
    return ptrace(PTRACE_POKETEXT, pid, (void *)addr, (void *)trapped) == 0 ? 0 : -1;
}

static int bp_remove(pid_t pid, const breakpoint *bp)
{
    return ptrace(PTRACE_POKETEXT, pid, (void *)bp->addr, (void *)bp->word) == 0 ? 0 : -1;
}

/* Runs the child until it stops on the breakpoint (rip one past it), then
 * puts rip back on the breakpoint's instruction, which has not run. */
static int bp_run_to(pid_t pid, const breakpoint *bp)
{
    struct user_regs_struct r;
    if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0 || wait_trap(pid) != 0 || get_regs(pid, &r) != 0)
        return -1;
    if ((uintptr_t)REG_IP(r) != bp->addr + 1u)
        return -1;
    SET_IP(r, bp->addr);
    return ptrace(PTRACE_SETREGS, pid, NULL, &r) == 0 ? 0 : -1;
}

/* Forks the child and brings it, stopped, to the operation's first
 * instruction. Returns its pid, or -1. */
static pid_t child_at_entry(const scenario *sc, state *s)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        child_run(sc, s);
    int st;
    breakpoint bp;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP ||
        bp_plant(pid, &bp, op_entry(sc->op)) != 0 || bp_run_to(pid, &bp) != 0 ||
        bp_remove(pid, &bp) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        return -1;
    }
    return pid;
}

static void child_kill(pid_t pid)
{
    int st;
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
}

/* The operation's path: the address of every instruction it executes, in
 * order, up to and including the one after its return (a rep-prefixed
 * instruction, which traps once per iteration, counts once). Returns the
 * number of instructions, -1 on failure. */
static long trace_path(const scenario *sc, state *s, uintptr_t *path, size_t cap, pid_t *child)
{
    pid_t pid = child_at_entry(sc, s);
    if (pid < 0)
        return -1;
    *child = pid;
    struct user_regs_struct r;
    if (get_regs(pid, &r) != 0)
        return -1;
    uintptr_t entry_sp = (uintptr_t)REG_SP(r);
    size_t n = 0;
    path[n++] = (uintptr_t)REG_IP(r);
    while (n < cap) {
        if (step(pid) != 0 || get_regs(pid, &r) != 0)
            break;
        if ((uintptr_t)REG_IP(r) != path[n - 1])
            path[n++] = (uintptr_t)REG_IP(r);
        if ((uintptr_t)REG_SP(r) > entry_sp) { /* the `ret` leaving it ran */
            child_kill(pid);
            return (long)n - 1; /* path[n - 1] is the caller's next instruction */
        }
    }
    child_kill(pid);
    return -1;
}

/* Kill point n: a child stopped with path[0..n) executed and path[n] next
 * (reached by a breakpoint hit as many times as path[n] occurs in
 * path[0..n], plus one), then killed. Returns 0, or -1 on a tracing
 * failure. */
static int kill_at(const scenario *sc, state *s, const uintptr_t *path, size_t n, pid_t *child)
{
    pid_t pid = child_at_entry(sc, s);
    if (pid < 0)
        return -1;
    *child = pid;
    size_t hits = 1;
    for (size_t i = 0; i < n; i++)
        hits += path[i] == path[n];
    breakpoint bp;
    int rc = 0;
    if (bp_plant(pid, &bp, path[n]) != 0)
        rc = -1;
    while (rc == 0 && hits-- > 0) {
        if (bp_run_to(pid, &bp) != 0) {
            rc = -1;
        } else if (hits > 0) { /* an earlier visit: let it run on */
            rc = bp_remove(pid, &bp) || step(pid) || bp_plant(pid, &bp, path[n]) ? -1 : 0;
        }
    }
    child_kill(pid);
    return rc;
}

/* --- verification ---------------------------------------------------------- */

typedef struct live_walk {
    char *ptr[64];
    size_t usable[64];
    size_t n;
} live_walk;

static void collect(void *ptr, size_t usable, int used, void *arg)
{
    live_walk *w = arg;
    if (used && w->n < 64) {
        w->ptr[w->n] = ptr;
        w->usable[w->n++] = usable;
    }
}

static int is_live(const live_walk *w, const char *p, size_t *usable)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->ptr[i] == p) {
            *usable = w->usable[i];
            return 1;
        }
    return 0;
}

typedef struct tally {
    size_t points, armed, idle_locked, outside, leaked, completed, realloc_changed;
} tally;

/* Everything the parent can check after one kill; returns 0 when all hold. */
static int verify(const scenario *sc, state *s, pid_t child, rtm_stats fresh, tally *t,
                  size_t point, int in_flight)
{
    unsigned long before = *check_failure_count();
    CHECK_MSG(rtm_heap_check(heap) == 0, "%s, kill point %zu: heap check failed", sc->name, point);
    live_walk w = {{NULL}, {0}, 0};
    REQUIRE(rtm_heap_walk(heap, collect, &w) == 0);
    int reset_done = sc->op == OP_RESET && w.n == 0;
    /* A repaired operation is completed (free, reset) or undone (alloc,
     * realloc): never left half-way. */
    CHECK_MSG(!in_flight || sc->op != OP_RESET || reset_done,
              "%s, kill point %zu: interrupted reset not completed", sc->name, point);
    for (size_t i = 0; i < s->n; i++) {
        pblock *b = &s->b[i];
        size_t usable = 0;
        if (b->p == NULL || reset_done)
            continue;
        int live = is_live(&w, b->p, &usable);
        if ((int)i == s->target && sc->op == OP_FREE) {
            CHECK_MSG(!live || intact(b->p, b->size, b->token),
                      "%s, kill point %zu: block being freed changed", sc->name, point);
            CHECK_MSG(!in_flight || !live, "%s, kill point %zu: interrupted free not completed",
                      sc->name, point);
            if (!live)
                b->p = NULL; /* the free happened */
            continue;
        }
        if ((int)i == s->target && sc->op == OP_REALLOC)
            continue; /* below */
        CHECK_MSG(live && intact(b->p, b->size, b->token),
                  "%s, kill point %zu: survivor block %zu lost or damaged", sc->name, point, i);
    }
    rtm_shared_usage left;
    REQUIRE(rtm_shared_owned(heap, child, &left) == 0);
    CHECK_MSG(left.blocks <= (in_flight ? 0u : 1u), "%s, kill point %zu: the child left %zu blocks",
              sc->name, point, left.blocks);
    if (s->target >= 0 && sc->op == OP_REALLOC) {
        pblock *b = &s->b[s->target];
        size_t usable = 0;
        int old_live = is_live(&w, b->p, &usable);
        if (left.blocks == 1) { /* finished: the new block is the child's */
            t->completed++;
            CHECK_MSG(!old_live || usable >= s->target_size,
                      "%s, kill point %zu: old and new block both live", sc->name, point);
            /* The new block: b->p itself (in place) or a block the parent
             * does not know; it holds the old contents up to the new size. */
            size_t keep = b->size < s->target_size ? b->size : s->target_size, found = 0;
            for (size_t k = 0; k < w.n; k++) {
                int known = 0;
                for (size_t i = 0; i < s->n; i++)
                    known |= s->b[i].p == w.ptr[k] && (int)i != s->target;
                if (known || w.usable[k] < s->target_size)
                    continue;
                found++;
                CHECK_MSG(intact(w.ptr[k], keep, b->token),
                          "%s, kill point %zu: resized block lost its contents", sc->name, point);
            }
            CHECK_MSG(found == 1, "%s, kill point %zu: %zu candidate resized blocks", sc->name,
                      point, found);
        } else {
            CHECK_MSG(old_live && usable >= b->size, "%s, kill point %zu: resized block lost",
                      sc->name, point);
            if (old_live && !intact(b->p, b->size, b->token))
                t->realloc_changed++; /* rolled back after the shrink began: see below */
            /* What the caller keeps is intact: everything when growing,
             * the first target_size bytes when shrinking (the tail it gave
             * up may hold the split's header before the rollback). */
            size_t keep = s->target_size < b->size ? s->target_size : b->size;
            if (old_live)
                CHECK_MSG(intact(b->p, keep, b->token),
                          "%s, kill point %zu: realloc rolled back, kept bytes changed", sc->name,
                          point);
        }
        b->p = old_live && left.blocks == 0 ? b->p : NULL;
    }
    t->leaked += left.blocks;
    CHECK(rtm_shared_reclaim(heap, child) == (long)left.blocks);
    /* Free the parent's blocks: the heap must be one free block again. */
    for (size_t i = 0; i < s->n; i++)
        if (s->b[i].p != NULL && !reset_done)
            rtm_free(heap, s->b[i].p);
    rtm_stats st = rtm_heap_stats(heap);
    CHECK_MSG(st.live_blocks == 0 && st.used_bytes == 0, "%s, kill point %zu: %zu blocks remain",
              sc->name, point, st.live_blocks);
    CHECK_MSG(st.free_bytes == fresh.free_bytes && st.largest_free == fresh.largest_free,
              "%s, kill point %zu: free %zu / largest %zu, fresh heap %zu / %zu", sc->name, point,
              st.free_bytes, st.largest_free, fresh.free_bytes, fresh.largest_free);
    void *p = rtm_alloc(heap, 1000);
    CHECK(p != NULL);
    rtm_free(heap, p);
    CHECK(rtm_heap_check(heap) == 0);
    return *check_failure_count() == before ? 0 : -1;
}

static void fresh_state(state *s)
{
    memset(s, 0, sizeof *s);
    s->target = -1;
    REQUIRE(rtm_heap_reset(heap) == 0);
}

static size_t total_points;

/* Every kill point in ordinary builds. Sanitizer builds fork a much larger
 * process for each point (about 15x slower here), so they take every
 * STRIDE-th point; RTMEM_CRASH_STRIDE overrides. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEFAULT_STRIDE 4u
#else
#define DEFAULT_STRIDE 1u
#endif

static size_t stride(void)
{
    const char *e = getenv("RTMEM_CRASH_STRIDE");
    size_t v = e != NULL ? (size_t)strtoul(e, NULL, 10) : DEFAULT_STRIDE;
    return v > 0 ? v : 1u;
}

#define MAX_PATH 20000u

static void run_scenario(const scenario *sc, rtm_stats fresh)
{
    static uintptr_t path[MAX_PATH];
    state s;
    tally t = {0, 0, 0, 0, 0, 0, 0};
    pid_t child;
    /* The operation's path, from a child stepped until it returns; that
     * child is killed after the return: the last kill point. */
    fresh_state(&s);
    sc->setup(&s);
    long len = trace_path(sc, &s, path, MAX_PATH, &child);
    REQUIRE(len > 0);
    (void)verify(sc, &s, child, fresh, &t, (size_t)len, 0);
    for (size_t n = 0; n <= (size_t)len; n += stride()) {
        fresh_state(&s);
        sc->setup(&s);
        rtm_shared_info before, after;
        REQUIRE(rtm_shared_info_get(heap, &before) == 0);
        CHECK_MSG(kill_at(sc, &s, path, n, &child) == 0, "%s: tracing kill point %zu failed",
                  sc->name, n);
        REQUIRE(rtm_shared_info_get(heap, &after) == 0); /* repairs here if needed */
        if (after.repairs > before.repairs)
            t.armed++;
        else if (after.recoveries > before.recoveries)
            t.idle_locked++;
        else
            t.outside++;
        CHECK(after.recoveries == before.recoveries || after.last_dead_pid == 0 ||
              after.last_dead_pid == (uint32_t)child);
        t.points++;
        if (verify(sc, &s, child, fresh, &t, n, after.repairs > before.repairs) != 0)
            break; /* the first failure says it; the rest would repeat it */
    }
    total_points += t.points;
    printf("  %-15s %4ld instructions, %4zu kill points: %3zu operation in flight (repaired), "
           "%3zu lock held, nothing in flight, %3zu outside the lock; %3zu blocks reclaimed\n",
           sc->name, len, t.points, t.armed, t.idle_locked, t.outside, t.leaked);
    if (sc->op == OP_REALLOC)
        printf("  %-15s (realloc: finished at %zu points; rolled back with the block's bytes "
               "changed at %zu)\n",
               "", t.completed, t.realloc_changed);
    fflush(stdout);
}

static char heap_name[64];

/* A failed REQUIRE exits: the object must not outlive the test. */
static void unlink_heap(void) { (void)rtm_shared_unlink(heap_name); }

static void test_kill_points(void)
{
    char *name = heap_name;
    snprintf(name, sizeof heap_name, "/rtmem-test-crash-%ld", (long)getpid());
    (void)rtm_shared_unlink(name);
    atexit(unlink_heap);
    heap = rtm_shared_create(name, HEAP_BYTES, NULL);
    REQUIRE(heap != NULL);
    rtm_stats fresh = rtm_heap_stats(heap);
    /* Warm up once so that every later state is identical (largest
     * alignment seen, pid cache). */
    state s;
    fresh_state(&s);
    setup_aligned(&s);
    REQUIRE(rtm_aligned_alloc(heap, 256, 8) != NULL);
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        run_scenario(&scenarios[i], fresh);
    printf("  total: %zu kill points (stride %zu: every instruction when 1)\n", total_points,
           stride());
    rtm_shared_close(heap);
    CHECK(rtm_shared_unlink(name) == 0);
}

int main(void)
{
    RUN_TEST(test_kill_points);
    return check_summary();
}

#else

int main(void)
{
    /* 77: ctest's skip (SKIP_RETURN_CODE), so nothing reads as passed. */
    printf("test_shared_crash: skipped (reads x86 registers; this target is not x86)\n");
    return 77;
}

#endif
