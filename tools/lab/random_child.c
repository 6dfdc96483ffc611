/*
 * random_child.c -- one run of seed 003's random-replace loop, in a child
 * process, for one allocator; and the parser of its result line.
 *
 * The loop (seed 003, after tlsf-bsd's bench.c): `slots` blocks are
 * allocated first; then each iteration picks a random slot, frees its block
 * and allocates a block of random size in [min, max) into it. The first byte
 * of every block is written, so that memory an allocator maps lazily is
 * charged to that allocator, the same way for all of them.
 *
 * A run is three passes over one random sequence (splitmix64 from the
 * round's seed, so every allocator replays the same slots and sizes):
 *   1. fill the slots (untimed);
 *   2. throughput: `iterations` replacements between two clock reads, no
 *      clock inside: ns per free+alloc pair = loop time / iterations;
 *   3. latency: `iterations` more replacements with a clock read before the
 *      free, between free and alloc (+touch) and after; each sample has the
 *      clock cost subtracted and goes into a histogram.
 * A refused allocation (NULL) is counted and reported; it is never a fast
 * iteration in disguise (seed 003's trap): the parent excludes such a run.
 *
 * The passes are written once (always_inline) and instantiated for TLSF and
 * for malloc, so that both make direct calls: rtm_alloc()/rtm_free() (the
 * generic API, with its one-compare dispatch) and malloc()/free().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "hist.h"
#include "prng.h"
#include "random.h"
#include "rtmem.h"

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define UNLIKELY(x)   __builtin_expect(!!(x), 0)

const char *const lat_names[LAT_COUNT] = {"p50", "p99", "p99.9", "p99.99", "max", "mean"};
static const char *const lat_keys[LAT_COUNT] = {"p50", "p99", "p999", "p9999", "max", "mean"};

typedef struct ops {
    void *(*alloc)(void *ctx, size_t n);
    void (*free)(void *ctx, void *p);
} ops;

static void *tlsf_alloc(void *ctx, size_t n) { return rtm_alloc(ctx, n); }
static void tlsf_free(void *ctx, void *p) { rtm_free(ctx, p); }
static void *libc_alloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n);
}
static void libc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const ops rtm_ops = {tlsf_alloc, tlsf_free};
static const ops libc_ops = {libc_alloc, libc_free};

typedef struct loop {
    void **slot;
    uint32_t nslots;
    uint32_t min, span; /* sizes are min + [0, span) */
    void *ctx;          /* the rtm heap, or NULL for malloc */
    bench_rng rng;
    uint64_t refused;
    const bench_clock *clk;
} loop;

/* One draw gives the slot (low 32 bits) and the size (high 32 bits). */
ALWAYS_INLINE void draw(loop *s, uint32_t *k, size_t *size)
{
    uint64_t r = rng_next(&s->rng);
    *k = rng_scale32((uint32_t)r, s->nslots);
    *size = s->min + (size_t)rng_scale32((uint32_t)(r >> 32), s->span);
}

ALWAYS_INLINE void touch(void *p, uint64_t i) { *(volatile unsigned char *)p = (unsigned char)i; }

ALWAYS_INLINE void fill(const ops *o, loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        uint32_t unused;
        size_t size;
        draw(s, &unused, &size);
        void *p = o->alloc(s->ctx, size);
        if (p == NULL)
            s->refused++;
        else
            touch(p, k);
        s->slot[k] = p;
    }
}

/* Pass 2: returns the loop's ticks. */
ALWAYS_INLINE uint64_t throughput(const ops *o, loop *s, uint64_t n)
{
    uint64_t t0 = clock_ticks(s->clk);
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k;
        size_t size;
        draw(s, &k, &size);
        o->free(s->ctx, s->slot[k]);
        void *p = o->alloc(s->ctx, size);
        if (UNLIKELY(p == NULL))
            s->refused++;
        else
            touch(p, i);
        s->slot[k] = p;
    }
    return clock_ticks(s->clk) - t0;
}

/* Pass 3: one sample per free and per alloc (+touch). */
ALWAYS_INLINE void latency(const ops *o, loop *s, uint64_t n, hist *ha, hist *hf)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t k;
        size_t size;
        draw(s, &k, &size);
        uint64_t t0 = clock_ticks(s->clk);
        o->free(s->ctx, s->slot[k]);
        uint64_t t1 = clock_ticks(s->clk);
        void *p = o->alloc(s->ctx, size);
        if (p != NULL)
            touch(p, i);
        uint64_t t2 = clock_ticks(s->clk);
        if (UNLIKELY(p == NULL))
            s->refused++;
        s->slot[k] = p;
        hist_add(hf, clock_net(s->clk, t0, t1));
        hist_add(ha, clock_net(s->clk, t1, t2));
    }
}

ALWAYS_INLINE void drain(const ops *o, loop *s)
{
    for (uint32_t k = 0; k < s->nslots; k++) {
        o->free(s->ctx, s->slot[k]);
        s->slot[k] = NULL;
    }
}

typedef struct run_out {
    uint64_t loop_ticks;
    hist alloc, free;
} run_out;

/* An rtm heap's run (TLSF or any other heap name) also checks the heap while
 * it is full and after the drain. */
static __attribute__((noinline)) int run_rtm(loop *s, uint64_t n, run_out *out, char *why,
                                             size_t why_n)
{
    fill(&rtm_ops, s);
    out->loop_ticks = throughput(&rtm_ops, s, n);
    latency(&rtm_ops, s, n, &out->alloc, &out->free);
    int ok = 1;
    if (rtm_heap_check(s->ctx) != 0) {
        snprintf(why, why_n, "rtm_heap_check failed with the slots full (errno %d)", errno);
        ok = 0;
    }
    drain(&rtm_ops, s);
    rtm_stats st = rtm_heap_stats(s->ctx);
    if (ok && (st.used_bytes != 0 || st.live_blocks != 0 || rtm_heap_check(s->ctx) != 0)) {
        snprintf(why, why_n, "after freeing everything: used_bytes %zu, live_blocks %zu, check %s",
                 st.used_bytes, st.live_blocks, rtm_heap_check(s->ctx) == 0 ? "ok" : "failed");
        ok = 0;
    }
    return ok;
}

static __attribute__((noinline)) void run_libc(loop *s, uint64_t n, run_out *out)
{
    fill(&libc_ops, s);
    out->loop_ticks = throughput(&libc_ops, s, n);
    latency(&libc_ops, s, n, &out->alloc, &out->free);
    drain(&libc_ops, s);
}

/* A private anonymous region, every page written before the clock starts:
 * TLSF manages memory handed over at init (seed 003: add_pool up front is
 * faster and steadier than growing on demand). */
static void *prefaulted_region(uint64_t bytes)
{
    void *m = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memset(m, 0, (size_t)bytes);
    return m;
}

/* Replaces tab and newline so a value stays one field of the result line. */
static void sanitise(char *s)
{
    for (; *s != '\0'; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

static void print_lat(const char *prefix, const hist *h, double ns_per_tick)
{
    static const double q[4] = {0.5, 0.99, 0.999, 0.9999};
    for (int i = 0; i < 4; i++)
        printf("\t%s_%s=%.2f", prefix, lat_keys[i], (double)hist_quantile(h, q[i]) * ns_per_tick);
    printf("\t%s_max=%.2f", prefix, (double)h->max * ns_per_tick);
    printf("\t%s_mean=%.3f", prefix,
           h->count ? (double)h->sum / (double)h->count * ns_per_tick : 0.0);
}

typedef struct child_id {
    int valid;
    char why[768], from[256], version[96];
} child_id;

static void print_result(const random_opts *o, const child_id *id, int heap_ok, const char *why,
                         const loop *s, const run_out *out, uint64_t region)
{
    double ns = (double)out->loop_ticks * o->child_tick_ns / (double)o->iterations;
    printf("RESULT\talloc=%s\tok=1\tvalid=%d\theap_ok=%d", o->child, id->valid, heap_ok);
    printf("\tfrom=%s\tversion=%s\twhy=%s", id->from, id->version, why[0] ? why : id->why);
    printf("\tns_per_pair=%.4f\trefused=%llu\tregion=%llu", ns, (unsigned long long)s->refused,
           (unsigned long long)region);
    print_lat("a", &out->alloc, o->child_tick_ns);
    print_lat("f", &out->free, o->child_tick_ns);
    printf("\n");
}

static int child_fail(const random_opts *o, const char *why)
{
    printf("RESULT\talloc=%s\tok=0\twhy=%s\n", o->child, why);
    return 1;
}

int random_child(const random_opts *o)
{
    const peer *p = peer_find(o->child);
    int is_rtm = p == NULL && rtm_min_region(o->child) != 0; /* "tlsf", "pool:4096", ... */
    if (!is_rtm && p == NULL)
        return child_fail(o, "unknown allocator");
    child_id id;
    id.valid = peer_verify(p, o->child_lib, id.why, sizeof id.why, id.from, sizeof id.from,
                           id.version, sizeof id.version);
    sanitise(id.why);
    sanitise(id.from);
    sanitise(id.version);

    static run_out out; /* histograms: 60 KB, kept off the stack */
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    loop s = {NULL, (uint32_t)o->slots, (uint32_t)o->min, (uint32_t)(o->max - o->min), NULL, {0}, 0,
              &clk};
    rng_seed(&s.rng, o->seed);
    s.slot = calloc((size_t)o->slots, sizeof *s.slot);
    if (s.slot == NULL)
        return child_fail(o, "cannot allocate the slot array");

    uint64_t region = 0;
    int heap_ok = 1;
    char why[256] = "";
    void *mem = NULL;
    if (is_rtm) {
        region = random_region_bytes(o);
        mem = prefaulted_region(region);
        s.ctx = mem != NULL ? rtm_heap_create(o->child, mem, (size_t)region) : NULL;
        if (s.ctx == NULL) {
            free(s.slot);
            return child_fail(o, mem == NULL ? "cannot map the heap's region"
                                             : "rtm_heap_create() failed");
        }
        heap_ok = run_rtm(&s, o->iterations, &out, why, sizeof why);
    } else {
        run_libc(&s, o->iterations, &out);
    }
    print_result(o, &id, heap_ok, why, &s, &out, region);
    free(s.slot);
    if (mem != NULL)
        munmap(mem, (size_t)region);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* --- parsing, in the parent --------------------------------------------- */

/* Copies the value of key (up to the next tab or newline) into out. */
static int field(const char *line, const char *key, char *out, size_t n)
{
    size_t klen = strlen(key);
    for (const char *f = line; f != NULL; f = strchr(f, '\t')) {
        if (*f == '\t')
            f++;
        if (strncmp(f, key, klen) == 0 && f[klen] == '=') {
            const char *v = f + klen + 1;
            size_t len = strcspn(v, "\t\n");
            snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), v);
            return 0;
        }
    }
    out[0] = '\0';
    return -1;
}

static double field_num(const char *line, const char *key)
{
    char buf[64];
    return field(line, key, buf, sizeof buf) == 0 ? strtod(buf, NULL) : 0.0;
}

static void parse_lat(const char *line, const char *prefix, double *out)
{
    char key[32];
    for (int i = 0; i < LAT_COUNT; i++) {
        snprintf(key, sizeof key, "%s_%s", prefix, lat_keys[i]);
        out[i] = field_num(line, key);
    }
}

int random_parse_result(const char *text, random_result *r)
{
    memset(r, 0, sizeof *r);
    const char *start = strstr(text, "RESULT\t");
    if (start == NULL || (start != text && start[-1] != '\n'))
        return -1;
    /* Only this line: an allocator may print lines of its own after it. */
    static char line[8192];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(start, "\n"), start);
    r->ok = field_num(line, "ok") != 0.0;
    r->valid = field_num(line, "valid") != 0.0;
    r->heap_ok = field_num(line, "heap_ok") != 0.0;
    field(line, "why", r->why, sizeof r->why);
    field(line, "from", r->from, sizeof r->from);
    field(line, "version", r->version, sizeof r->version);
    r->ns_per_pair = field_num(line, "ns_per_pair");
    r->refused = (uint64_t)field_num(line, "refused");
    r->region = (uint64_t)field_num(line, "region");
    parse_lat(line, "a", r->alloc_ns);
    parse_lat(line, "f", r->free_ns);
    return 0;
}
