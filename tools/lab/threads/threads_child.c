// SPDX-License-Identifier: MIT
/*
 * threads_child.c -- one measurement of `bench threads` in a child process
 * (threads.h says why each is a process of its own): prove which allocator
 * serves malloc, set up the locked rtm heap when one is measured, run one
 * benchmark, read the peak RSS, print the result line.
 *
 * Peak RSS is getrusage(RUSAGE_SELF).ru_maxrss at the end: the process's
 * high-water mark of resident memory in KiB, the same for every allocator
 * (the lab's own start-up included: rss_start_kb says how much that is).
 *
 * A locked heap's region is mapped MAP_NORESERVE and not pre-faulted: its
 * pages become resident when the heap first touches them, as a malloc
 * peer's do, so peak RSS compares like with like. (bench random pre-faults
 * because it times single calls; here a page fault is part of the cost a
 * malloc pays, for every row alike.) The region is sized for the benchmark's
 * live set (tr_seed_region(), tr_pc_region()); anything refused anyway is
 * counted, and the parent leaves that run out. An mt heap gets one shard
 * per thread, and each shard (a thread's free memory serves only that
 * thread) the region a locked heap would get for one thread (seed002) or for
 * the whole queue (pc: a producer's shard may hold every queued block).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "threads/threads.h"
#include "threads/threads_lock.h"

/* Replaces tab and newline so a value stays one field of the result line. */
static void sanitise(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

/* VmRSS from /proc/self/status in KiB, or 0 when unreadable. */
static uint64_t rss_now_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (uint64_t)kb;
}

static uint64_t maxrss_kb(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 && ru.ru_maxrss > 0 ? (uint64_t)ru.ru_maxrss : 0;
}

static int child_fail(const threads_opts *o, const char *why)
{
    char w[512];
    snprintf(w, sizeof w, "%s", why);
    sanitise(w);
    printf("RESULT\talloc=%s\tok=0\twhy=%s\n", o->child, w);
    fflush(stdout);
    return 1;
}

typedef struct child_id {
    int valid;
    char why[512], from[256], version[96];
} child_id;

/* Which object serves malloc here, and whether it is the one named. */
static void identify(const threads_opts *o, const peer *p, child_id *id)
{
    id->valid = peer_verify(p, o->child_lib, id->why, sizeof id->why, id->from, sizeof id->from,
                            id->version, sizeof id->version);
    sanitise(id->why);
    sanitise(id->from);
    sanitise(id->version);
}

/* The shared heap under test: its region and the heap over it. */
typedef struct locked {
    void *mem;
    uint64_t region;
    tr_heap *heap;
} locked;

/* Threads of one run: seed002's workers, pc's producers and consumers. */
static unsigned run_threads(const threads_opts *o, int bench)
{
    return (unsigned)(bench == TR_SEED ? o->child_threads : 2u * o->child_threads);
}

static uint64_t region_of(const threads_opts *o, int bench, const aut *a)
{
    if (a->kind != AUT_MT)
        return bench == TR_SEED ? tr_seed_region(o->child_threads, o->ntimes)
                                : tr_pc_region(o->child_threads);
    uint64_t shard =
        bench == TR_SEED ? tr_seed_region(1, o->ntimes) : tr_pc_region(o->child_threads);
    return tr_heap_region(a, run_threads(o, bench), (size_t)shard);
}

static int locked_open(const threads_opts *o, int bench, const aut *a, locked *l, char *why,
                       size_t why_n)
{
    l->region = region_of(o, bench, a);
    if (l->region == 0) {
        snprintf(why, why_n, "no region size for %s: %s", a->name, strerror(errno));
        return -1;
    }
    l->mem = mmap(NULL, (size_t)l->region, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (l->mem == MAP_FAILED) {
        snprintf(why, why_n, "cannot map %llu bytes: %s", (unsigned long long)l->region,
                 strerror(errno));
        l->mem = NULL;
        return -1;
    }
    l->heap = tr_heap_create(a, run_threads(o, bench), l->mem, (size_t)l->region, why, why_n);
    return l->heap != NULL ? 0 : -1;
}

/* After the benchmark: the heap must be sound and empty. 1 when it is. */
static int locked_close(locked *l, char *why, size_t why_n)
{
    int ok = 1;
    if (tr_heap_check(l->heap) != 0) {
        snprintf(why, why_n, "rtm_heap_check failed after the benchmark (errno %d)", errno);
        ok = 0;
    }
    rtm_stats st = tr_heap_stats(l->heap);
    if (ok && (st.used_bytes != 0 || st.live_blocks != 0)) {
        snprintf(why, why_n, "after freeing everything: used_bytes %zu, live_blocks %zu",
                 st.used_bytes, st.live_blocks);
        ok = 0;
    }
    tr_heap_destroy(l->heap);
    munmap(l->mem, (size_t)l->region);
    return ok;
}

typedef struct outcome {
    uint64_t wall_ns, malloc_ns, free_ns, blocks, refused, corrupt, unattached;
} outcome;

static int run_bench(const threads_opts *o, int bench, tr_heap *heap, int mt, outcome *r, char *why,
                     size_t why_n)
{
    memset(r, 0, sizeof *r);
    size_t n = (size_t)o->child_threads;
    if (bench == TR_SEED) {
        tr_seed_out s;
        if (tr_seed_run(heap, mt, n, o->ntimes, o->rounds, o->seed_write, &s, why, why_n) != 0)
            return -1;
        *r = (outcome){s.wall_ns, s.malloc_ns, s.free_ns, s.blocks, s.refused, 0, s.unattached};
        return 0;
    }
    tr_pc_out p;
    if (tr_pc_run(heap, mt, n, o->pc_blocks, o->seed, &p, why, why_n) != 0)
        return -1;
    *r = (outcome){p.wall_ns, 0, 0, p.blocks, p.refused, p.corrupt, p.unattached};
    return 0;
}

int threads_child(const threads_opts *o)
{
    int bench = strcmp(o->child_bench, tr_bench_names[TR_PC]) == 0 ? TR_PC : TR_SEED;
    aut a;
    char bad[160];
    if (aut_parse(o->child, &tr_aut_rules, &a, bad, sizeof bad) != 0)
        return child_fail(o, "unknown allocator");
    int is_locked = aut_is_shared_heap(&a);
    const peer *p = a.peer;
    static child_id id;
    identify(o, p, &id);
    uint64_t rss_start = rss_now_kb();

    char why[512] = "";
    locked l = {NULL, 0, NULL};
    if (is_locked && locked_open(o, bench, &a, &l, why, sizeof why) != 0)
        return child_fail(o, why);
    outcome r;
    if (run_bench(o, bench, l.heap, a.kind == AUT_MT, &r, why, sizeof why) != 0)
        return child_fail(o, why);
    int heap_ok = is_locked ? locked_close(&l, why, sizeof why) : 1;
    sanitise(why);

    printf("RESULT\talloc=%s\tbench=%s\tthreads=%llu\tok=1\tvalid=%d\theap_ok=%d", o->child,
           tr_bench_names[bench], (unsigned long long)o->child_threads, id.valid, heap_ok);
    printf("\tfrom=%s\tversion=%s\twhy=%s", id.from, id.version, why[0] ? why : id.why);
    printf("\twall_ns=%llu\tmalloc_ns=%llu\tfree_ns=%llu\tblocks=%llu\trefused=%llu\tcorrupt=%llu",
           (unsigned long long)r.wall_ns, (unsigned long long)r.malloc_ns,
           (unsigned long long)r.free_ns, (unsigned long long)r.blocks,
           (unsigned long long)r.refused, (unsigned long long)r.corrupt);
    printf("\trss_start_kb=%llu\tmaxrss_kb=%llu\tregion=%llu\tunattached=%llu\n",
           (unsigned long long)rss_start, (unsigned long long)maxrss_kb(),
           (unsigned long long)l.region, (unsigned long long)r.unattached);
    return fflush(stdout) == 0 ? 0 : 1;
}
