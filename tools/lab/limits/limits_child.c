// SPDX-License-Identifier: MIT
/*
 * limits_child.c -- the measuring side of `rtmem limits` (limits_cmd.h): one
 * allocator per child process, either its largest-block probe or one timing
 * run over every size; and the parsers of the lines the child prints.
 *
 * Timing (the Linux memtim module's method, with live blocks): for each size, blocks are
 * allocated in batches of limits_batch() live blocks, one clock read before
 * and after each call, the clock's cost subtracted (clock.h); then the batch
 * is freed, untimed. memtim freed each block at once, so that every call
 * reused the block just freed; keeping a batch live makes the allocator
 * walk its free lists and grow as a real burst would. One untimed batch
 * first warms the allocator (a fresh process has not yet faulted in its
 * heap), then `count` calls are timed. A refusal ends a batch early, is
 * counted, and is never a sample (the trap the TLSF/xvmalloc/zsmalloc study
 * fell into: a refused call is fast).
 * Blocks are not touched: memtim did not touch them either, and the lazy
 * mmap row is then the cost of reserving, MAP_POPULATE's that of
 * reserving and faulting in, as vmalloc does.
 *
 * The timed loop is written once (always_inline) and instantiated per kind,
 * so the call inside the interval is a direct call of rtm_alloc, malloc or
 * mmap, as a user's would be.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "limits/limits_cmd.h"
#include "common/result_line.h"
#include "rtmem.h"

#define LIM_INLINE static inline __attribute__((always_inline))

#define MMAP_PROT  (PROT_READ | PROT_WRITE)
#define MMAP_FLAGS (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE)

/* --- the allocators, by kind -------------------------------------------- */

LIM_INLINE void *kind_alloc(lim_kind k, rtm_heap *h, size_t n)
{
    void *p;
    switch (k) {
    case LIM_RTM:
        return rtm_alloc(h, n);
    case LIM_MALLOC:
        return malloc(n);
    case LIM_MMAP:
        p = mmap(NULL, n, MMAP_PROT, MMAP_FLAGS, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    case LIM_MMAP_POPULATE:
        p = mmap(NULL, n, MMAP_PROT, MMAP_FLAGS | MAP_POPULATE, -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    return NULL;
}

LIM_INLINE void kind_free(lim_kind k, rtm_heap *h, void *p, size_t n)
{
    switch (k) {
    case LIM_RTM:
        rtm_free(h, p);
        break;
    case LIM_MALLOC:
        free(p);
        break;
    case LIM_MMAP:
    case LIM_MMAP_POPULATE:
        munmap(p, n);
        break;
    }
}

/* Allocates up to want blocks, timing each call; stops at the first
 * refusal. Returns how many it got (live[0..got), samples[0..got)). */
LIM_INLINE size_t timed_batch(lim_kind k, rtm_heap *h, const bench_clock *clk, size_t size,
                              size_t want, void **live, uint64_t *samples)
{
    for (size_t i = 0; i < want; i++) {
        uint64_t t0 = clock_ticks(clk);
        void *p = kind_alloc(k, h, size);
        uint64_t t1 = clock_ticks(clk);
        if (p == NULL)
            return i;
        live[i] = p;
        samples[i] = clock_net(clk, t0, t1);
    }
    return want;
}

#define INSTANTIATE(fn, kind)                                                                      \
    static __attribute__((noinline)) size_t fn(rtm_heap *h, const bench_clock *clk, size_t size,   \
                                               size_t want, void **live, uint64_t *samples)        \
    {                                                                                              \
        return timed_batch(kind, h, clk, size, want, live, samples);                               \
    }
INSTANTIATE(batch_rtm, LIM_RTM)
INSTANTIATE(batch_malloc, LIM_MALLOC)
INSTANTIATE(batch_mmap, LIM_MMAP)
INSTANTIATE(batch_mmap_populate, LIM_MMAP_POPULATE)
#undef INSTANTIATE

/* --- timing one size ---------------------------------------------------- */

typedef struct timer {
    lim_kind kind;
    rtm_heap *h; /* LIM_RTM only */
    bench_clock clk;
    void **live;
    uint64_t *samples;
} timer;

static size_t run_batch(timer *t, size_t size, size_t want, uint64_t *samples)
{
    switch (t->kind) {
    case LIM_RTM:
        return batch_rtm(t->h, &t->clk, size, want, t->live, samples);
    case LIM_MALLOC:
        return batch_malloc(t->h, &t->clk, size, want, t->live, samples);
    case LIM_MMAP:
        return batch_mmap(t->h, &t->clk, size, want, t->live, samples);
    case LIM_MMAP_POPULATE:
        return batch_mmap_populate(t->h, &t->clk, size, want, t->live, samples);
    }
    return 0;
}

static void release_batch(timer *t, size_t got, size_t size)
{
    for (size_t i = 0; i < got; i++)
        kind_free(t->kind, t->h, t->live[i], size);
}

static int cmp_u64(const void *l, const void *r)
{
    uint64_t a = *(const uint64_t *)l, b = *(const uint64_t *)r;
    return (a > b) - (a < b);
}

/* The ceil(q n)-th smallest of sorted v[0..n), n >= 1 (nearest rank). */
static uint64_t rank(const uint64_t *v, uint64_t n, double q)
{
    uint64_t k = (uint64_t)((double)n * q);
    if ((double)k < (double)n * q)
        k++;
    return v[(k < 1 ? 1 : k > n ? n : k) - 1];
}

static void sample_stats(uint64_t *v, uint64_t n, lim_sample *s)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    double sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += (double)v[i];
    s->n = n;
    s->min = v[0];
    s->p50 = rank(v, n, 0.50);
    s->p99 = rank(v, n, 0.99);
    s->max = v[n - 1];
    s->mean = sum / (double)n;
}

/* Times o->count allocations of size bytes after one warm-up batch. */
static void time_size(timer *t, const limits_opts *o, uint64_t size, lim_sample *s)
{
    memset(s, 0, sizeof *s);
    s->batch = limits_batch(o, size);
    if (t->kind == LIM_RTM && rtm_heap_stats(t->h).largest_free < size) {
        s->status = LAB_NA;
        snprintf(s->why, sizeof s->why, "its largest block is %zu bytes",
                 rtm_heap_stats(t->h).largest_free);
        return;
    }
    size_t got = run_batch(t, (size_t)size, (size_t)s->batch, t->samples);
    release_batch(t, got, (size_t)size);
    uint64_t done = 0;
    while (got != 0 && done < o->count) {
        uint64_t want = o->count - done < s->batch ? o->count - done : s->batch;
        got = run_batch(t, (size_t)size, (size_t)want, t->samples + done);
        release_batch(t, got, (size_t)size);
        if (got < want)
            s->refused++;
        done += got;
    }
    if (got == 0) { /* refused with nothing live: it cannot serve the size */
        s->status = LAB_ERROR;
        snprintf(s->why, sizeof s->why, "refused a %llu-byte block with nothing allocated (%s)",
                 (unsigned long long)size, strerror(errno));
        return;
    }
    sample_stats(t->samples, done, s);
    s->status = LAB_OK;
}

/* --- child plumbing ----------------------------------------------------- */

/* Replaces tab and newline so a value stays one field of a line. */
static void sanitise(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

/* A pre-faulted private region: an rtm heap is handed its memory up front,
 * so its timings never include a page fault. */
static void *prefaulted_region(uint64_t bytes)
{
    void *m =
        mmap(NULL, (size_t)bytes, MMAP_PROT, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memset(m, 0, (size_t)bytes);
    return m;
}

static void identify(lim_kind k, const peer *p, const char *lib, lim_ident *id)
{
    id->valid = peer_verify(k == LIM_MALLOC ? p : NULL, lib, id->why, sizeof id->why, id->from,
                            sizeof id->from, id->version, sizeof id->version);
    sanitise(id->why);
    sanitise(id->from);
    sanitise(id->version);
}

static void print_ident(const char *tag, const char *name, const lim_ident *id)
{
    printf("%s\talloc=%s\tvalid=%d\tfrom=%s\tversion=%s\twhy=%s", tag, name, id->valid, id->from,
           id->version, id->why);
}

/* --- the largest-block probe -------------------------------------------- */

static void *probe_rtm_alloc(void *ctx, uint64_t n) { return rtm_alloc(ctx, (size_t)n); }
static void probe_rtm_free(void *ctx, void *p, uint64_t n)
{
    (void)n;
    rtm_free(ctx, p);
}
static void *probe_malloc(void *ctx, uint64_t n)
{
    (void)ctx;
    return malloc((size_t)n); /* n <= --cap, checked to fit size_t */
}
static void probe_free(void *ctx, void *p, uint64_t n)
{
    (void)ctx;
    (void)n;
    free(p);
}
/* MAP_NORESERVE and no MAP_POPULATE: a 1 TiB request reserves address space
 * and touches nothing. */
static void *probe_mmap(void *ctx, uint64_t n)
{
    (void)ctx;
    void *p = mmap(NULL, (size_t)n, MMAP_PROT, MMAP_FLAGS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
static void probe_munmap(void *ctx, void *p, uint64_t n)
{
    (void)ctx;
    munmap(p, (size_t)n);
}

/* An rtm heap on a fresh pre-faulted region of --region bytes, probed from
 * one page up to the region, then checked. */
static void largest_rtm(const limits_opts *o, const char *name, lim_largest *r, char *why,
                        size_t why_n)
{
    void *mem = prefaulted_region(o->region);
    rtm_heap *h = mem != NULL ? rtm_heap_create(name, mem, (size_t)o->region) : NULL;
    if (h == NULL) {
        r->status = LAB_ERROR;
        snprintf(why, why_n, "cannot %s (%s)", mem ? "create the heap" : "map the region",
                 strerror(errno));
        if (mem != NULL)
            munmap(mem, (size_t)o->region);
        return;
    }
    rtm_stats st = rtm_heap_stats(h);
    r->largest_free = st.largest_free;
    r->arena = st.arena_bytes;
    probe_ops ops = {probe_rtm_alloc, probe_rtm_free, h};
    probe_largest(&ops, 4096, o->region, &r->probe);
    st = rtm_heap_stats(h);
    r->check_ok = rtm_heap_check(h) == 0 && st.live_blocks == 0;
    r->status = r->check_ok ? LAB_OK : LAB_ERROR;
    if (!r->check_ok)
        snprintf(why, why_n, "after the probe: heap check %s, %zu blocks live",
                 rtm_heap_check(h) == 0 ? "ok" : "FAILED", st.live_blocks);
    munmap(mem, (size_t)o->region);
}

static void largest_of(const limits_opts *o, lim_kind k, lim_largest *r, char *why, size_t why_n)
{
    probe_ops malloc_ops = {probe_malloc, probe_free, NULL};
    probe_ops mmap_ops = {probe_mmap, probe_munmap, NULL};
    switch (k) {
    case LIM_RTM:
        largest_rtm(o, o->child_largest, r, why, why_n);
        return;
    case LIM_MALLOC:
        probe_largest(&malloc_ops, 4096, o->cap, &r->probe);
        break;
    case LIM_MMAP:
        probe_largest(&mmap_ops, 4096, o->cap, &r->probe);
        break;
    case LIM_MMAP_POPULATE:
        r->status = LAB_NA;
        snprintf(why, why_n, "not probed: MAP_POPULATE would fault in every page up to the cap");
        return;
    }
    r->status = LAB_OK;
}

static int child_largest(const limits_opts *o, lim_kind k, const peer *p)
{
    lim_largest r;
    memset(&r, 0, sizeof r);
    identify(k, p, o->child_lib, &r.id);
    char why[256] = "";
    if (r.id.valid)
        largest_of(o, k, &r, why, sizeof why);
    else
        r.status = LAB_INVALID;
    sanitise(why);
    print_ident("LARGEST", o->child_largest, &r.id);
    const probe_result *q = &r.probe;
    printf("\tstatus=%d\tdetail=%s\tstart=%llu\tcap=%llu\tlast_ok=%llu\tfirst_fail=%llu"
           "\tcapped=%d\texact=%llu\ttries=%u\tlargest_free=%llu\tarena=%llu\tcheck_ok=%d\tsteps=",
           (int)r.status, why, (unsigned long long)q->start, (unsigned long long)q->cap,
           (unsigned long long)q->last_ok, (unsigned long long)q->first_fail, q->capped,
           (unsigned long long)q->exact, q->tries, (unsigned long long)r.largest_free,
           (unsigned long long)r.arena, r.check_ok);
    for (unsigned i = 0; i < q->nsteps; i++)
        printf("%s%llu:%d", i ? "," : "", (unsigned long long)q->step_bytes[i], q->step_ok[i]);
    printf("\n");
    return 0;
}

/* --- a timing run -------------------------------------------------------- */

/* Sets up the allocator (an rtm heap on its region), times every size,
 * checks the heap. Returns 0, or 1 when the setup failed. */
static int child_time(const limits_opts *o, lim_kind k, const peer *p)
{
    lim_ident id;
    identify(k, p, o->child_lib, &id);
    print_ident("TIME", o->child_time, &id);
    printf("\n");
    timer t = {k, NULL, {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0}, NULL, NULL};
    void *mem = NULL;
    if (k == LIM_RTM) {
        mem = prefaulted_region(o->region);
        t.h = mem != NULL ? rtm_heap_create(o->child_time, mem, (size_t)o->region) : NULL;
        if (t.h == NULL) {
            printf("DONE\theap_ok=0\twhy=cannot set up the heap (%s)\n", strerror(errno));
            return 1;
        }
    }
    t.live = calloc((size_t)o->count, sizeof *t.live);
    t.samples = calloc((size_t)o->count, sizeof *t.samples);
    if (t.live == NULL || t.samples == NULL) {
        printf("DONE\theap_ok=0\twhy=out of memory for %llu samples\n",
               (unsigned long long)o->count);
        return 1;
    }
    for (size_t i = 0; id.valid && i < o->nsizes; i++) {
        lim_sample s;
        time_size(&t, o, o->sizes[i], &s);
        sanitise(s.why);
        printf("SIZE\ti=%zu\tbytes=%llu\tstatus=%d\tn=%llu\tbatch=%llu\trefused=%llu\tmin=%llu"
               "\tp50=%llu\tp99=%llu\tmax=%llu\tmean=%.3f\twhy=%s\n",
               i, (unsigned long long)o->sizes[i], (int)s.status, (unsigned long long)s.n,
               (unsigned long long)s.batch, (unsigned long long)s.refused,
               (unsigned long long)s.min, (unsigned long long)s.p50, (unsigned long long)s.p99,
               (unsigned long long)s.max, s.mean, s.why);
    }
    int heap_ok = 1;
    if (t.h != NULL) {
        rtm_stats st = rtm_heap_stats(t.h);
        heap_ok = rtm_heap_check(t.h) == 0 && st.live_blocks == 0 && st.used_bytes == 0;
        printf("DONE\theap_ok=%d\twhy=%s%zu blocks, %zu bytes live at the end\n", heap_ok,
               heap_ok ? "" : "heap check or leak check failed: ", st.live_blocks, st.used_bytes);
        munmap(mem, (size_t)o->region);
    } else {
        printf("DONE\theap_ok=1\twhy=\n");
    }
    free(t.live);
    free(t.samples);
    return heap_ok ? 0 : 1;
}

int limits_child(const limits_opts *o)
{
    const char *name = o->child_largest != NULL ? o->child_largest : o->child_time;
    lim_kind k;
    const peer *p = NULL;
    if (limits_kind_of(name, &k, &p) != 0) {
        printf("DONE\theap_ok=0\twhy=unknown allocator %s\n", name);
        return 1;
    }
    return o->child_largest != NULL ? child_largest(o, k, p) : child_time(o, k, p);
}

/* --- parsing a child's lines -------------------------------------------- */

/* The line starting with tag + tab, or NULL. */
static const char *find_line(const char *text, const char *tag)
{
    size_t len = strlen(tag);
    for (const char *l = text; l != NULL && *l != '\0';) {
        if (strncmp(l, tag, len) == 0 && l[len] == '\t')
            return l;
        l = strchr(l, '\n');
        if (l != NULL)
            l++;
    }
    return NULL;
}

static void parse_ident(const char *line, lim_ident *id)
{
    id->ran = 1;
    id->valid = line_field_u64(line, "valid") != 0;
    line_field(line, "why", id->why, sizeof id->why);
    line_field(line, "from", id->from, sizeof id->from);
    line_field(line, "version", id->version, sizeof id->version);
}

static void parse_steps(const char *line, probe_result *q)
{
    char buf[PROBE_MAX_STEPS * 24];
    line_field(line, "steps", buf, sizeof buf);
    q->nsteps = 0;
    for (char *s = buf; *s != '\0' && q->nsteps < PROBE_MAX_STEPS;) {
        char *end;
        q->step_bytes[q->nsteps] = strtoull(s, &end, 10);
        if (*end != ':')
            break;
        q->step_ok[q->nsteps++] = end[1] == '1';
        s = end + 2;
        if (*s == ',')
            s++;
    }
}

int limits_parse_largest(const char *text, lim_largest *r)
{
    memset(r, 0, sizeof *r);
    const char *line = find_line(text, "LARGEST");
    if (line == NULL)
        return -1;
    parse_ident(line, &r->id);
    probe_result *q = &r->probe;
    r->status = (lab_status)line_field_u64(line, "status");
    char detail[256];
    if (line_field(line, "detail", detail, sizeof detail) == 0 && detail[0] != '\0')
        snprintf(r->id.why, sizeof r->id.why, "%s", detail);
    q->start = line_field_u64(line, "start");
    q->cap = line_field_u64(line, "cap");
    q->last_ok = line_field_u64(line, "last_ok");
    q->first_fail = line_field_u64(line, "first_fail");
    q->capped = (int)line_field_u64(line, "capped");
    q->exact = line_field_u64(line, "exact");
    q->tries = (unsigned)line_field_u64(line, "tries");
    r->largest_free = line_field_u64(line, "largest_free");
    r->arena = line_field_u64(line, "arena");
    r->check_ok = (int)line_field_u64(line, "check_ok");
    parse_steps(line, q);
    return 0;
}

static void parse_size(const char *line, lim_sample *s)
{
    s->status = (lab_status)line_field_u64(line, "status");
    s->n = line_field_u64(line, "n");
    s->batch = line_field_u64(line, "batch");
    s->refused = line_field_u64(line, "refused");
    s->min = line_field_u64(line, "min");
    s->p50 = line_field_u64(line, "p50");
    s->p99 = line_field_u64(line, "p99");
    s->max = line_field_u64(line, "max");
    s->mean = line_field_num(line, "mean");
    line_field(line, "why", s->why, sizeof s->why);
}

int limits_parse_time(const char *text, const limits_opts *o, lim_time_run *r)
{
    memset(r, 0, sizeof *r);
    for (size_t i = 0; i < LIM_MAX_SIZES; i++) {
        r->size[i].status = LAB_ERROR;
        snprintf(r->size[i].why, sizeof r->size[i].why, "not measured");
    }
    const char *line = find_line(text, "TIME");
    if (line == NULL)
        return -1;
    parse_ident(line, &r->id);
    for (const char *l = find_line(line, "SIZE"); l != NULL; l = find_line(l + 1, "SIZE")) {
        uint64_t i = line_field_u64(l, "i");
        if (i < o->nsizes)
            parse_size(l, &r->size[i]);
    }
    const char *done = find_line(line, "DONE");
    if (done != NULL) {
        r->done = 1;
        r->heap_ok = line_field_u64(done, "heap_ok") != 0;
        line_field(done, "why", r->heap_why, sizeof r->heap_why);
    }
    return 0;
}
