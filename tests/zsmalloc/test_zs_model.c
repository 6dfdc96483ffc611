// SPDX-License-Identifier: MIT
/*
 * tests/zsmalloc/test_zs_model.c -- zsmalloc against a model: a shadow copy
 * of every live object's bytes, and what the stats must say.
 *
 * Random steps: malloc (then fill), free, map (verify, write a random range,
 * sometimes stay mapped: a pin), unmap, compact (one call, or until it
 * returns 0), and bad handles (freed or stale ones, which must be refused
 * and reported with nothing changed). After every step the stats are
 * compared with the model (objects and bytes exactly, pages at least what
 * the live objects need); after every compaction every object's bytes are
 * compared with the shadow through its unchanged handle, and a pinned
 * object must still be where its map put it; after a full compaction with
 * no pin held, the pages used are exactly what the live objects need
 * (ceil(objects of a class / slots per span) spans of each class).
 * rtm_zs_check() runs every --check-every steps and after every compaction.
 *
 * Usage: test_zs_model [--seed N] [--steps N] [--region BYTES]
 *                      [--pin-rate PERCENT] [--check-every N]
 * Without --seed it runs seeds 1, 2 and 3. A failure prints the seed and
 * the step; the same options replay it exactly.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/check.h"
#include "common/recorder.h"
#include "common/rng.h"
#include "rtmem/zsmalloc.h"
#include "zsmalloc/zs_test.h"

typedef struct obj {
    rtm_zs_handle h;
    size_t size;
    unsigned char *shadow;
    unsigned pins;       /* maps held by the model */
    const void *pointer; /* where the pinned object is */
} obj;

typedef struct model {
    rtm_zspool *p;
    rng r;
    obj *objs;
    size_t n, cap;
    rtm_zs_handle dead[64]; /* freed handles, to try again */
    size_t ndead;
    size_t bytes, pins_held;
    size_t count_of[RTM_ZS_MAX_SIZE / 16u + 2u]; /* live objects per slot size/16 */
    size_t pages_total;
    uint64_t seed;
    unsigned long step;
    unsigned long refused, compacted_pages, bad_handles; /* printed: what the run exercised */
    int failed;
} model;

typedef struct options {
    uint64_t seed;
    int seed_given;
    unsigned long steps, check_every;
    size_t region;
    unsigned pin_rate;
} options;

static void fail(model *m, const char *what)
{
    if (!m->failed)
        fprintf(stderr, "zs model FAILED: %s (--seed %llu, step %lu)\n", what,
                (unsigned long long)m->seed, m->step);
    m->failed = 1;
    CHECK_MSG(0, "%s: seed %llu step %lu", what, (unsigned long long)m->seed, m->step);
}

static size_t random_size(model *m)
{
    switch (rng_below(&m->r, 4)) {
    case 0:
        return 1u + rng_below(&m->r, 256);
    case 1: /* near half a page, where classes and span choice matter */
        return 1900u + rng_below(&m->r, 300);
    default:
        return 1u + rng_below(&m->r, RTM_ZS_MAX_SIZE);
    }
}

/* Pages the live objects need at least (and exactly, fully compacted). */
static size_t pages_needed(const model *m)
{
    size_t pages = 0;
    for (size_t c = 1; c < sizeof m->count_of / sizeof m->count_of[0]; c++) {
        size_t slot = c * 16u, objs = zs_test_objs(slot);
        pages += (m->count_of[c] + objs - 1u) / objs * zs_test_span_pages(slot);
    }
    return pages;
}

static void check_stats(model *m)
{
    rtm_zs_stats st = rtm_zs_stats_get(m->p);
    if (st.objects != m->n || st.bytes_stored != m->bytes || st.pages_total != m->pages_total)
        fail(m, "stats differ from the model");
    if (st.pages_used < pages_needed(m) || st.pages_used > st.pages_total)
        fail(m, "pages_used below what the live objects need");
}

static void check_pool(model *m)
{
    recorder_reset();
    if (rtm_zs_check(m->p) != 0)
        fail(m, recorder()->last_detail ? recorder()->last_detail : "rtm_zs_check failed");
}

/* Every object's bytes equal its shadow; pinned ones did not move. */
static void check_contents(model *m)
{
    for (size_t i = 0; i < m->n && !m->failed; i++) {
        obj *o = &m->objs[i];
        const unsigned char *d = rtm_zs_map(m->p, o->h);
        if (d == NULL || memcmp(d, o->shadow, o->size) != 0)
            fail(m, "object bytes differ from the shadow (handle not stable?)");
        if (o->pins != 0 && (const void *)d != o->pointer)
            fail(m, "a pinned object moved");
        rtm_zs_unmap(m->p, o->h);
    }
}

static void do_malloc(model *m)
{
    size_t size = random_size(m);
    rtm_zs_stats before = rtm_zs_stats_get(m->p);
    errno = 0;
    rtm_zs_handle h = rtm_zs_malloc(m->p, size);
    if (h == 0) {
        rtm_zs_stats after = rtm_zs_stats_get(m->p);
        if (errno != ENOMEM || after.pages_used != before.pages_used || after.objects != m->n)
            fail(m, "a refused malloc changed the pool or set the wrong errno");
        m->refused++;
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? 2u * m->cap : 256u;
        m->objs = realloc(m->objs, m->cap * sizeof *m->objs);
        REQUIRE(m->objs != NULL);
    }
    obj *o = &m->objs[m->n++];
    *o = (obj){.h = h, .size = size, .shadow = malloc(size)};
    REQUIRE(o->shadow != NULL);
    for (size_t i = 0; i < size; i++)
        o->shadow[i] = (unsigned char)rng_next(&m->r);
    unsigned char *d = rtm_zs_map(m->p, h);
    if (d == NULL) {
        fail(m, "a fresh handle does not map");
        return;
    }
    memcpy(d, o->shadow, size);
    rtm_zs_unmap(m->p, h);
    m->bytes += size;
    m->count_of[zs_test_slot(size) / 16u]++;
}

static void do_free(model *m)
{
    if (m->n == 0)
        return;
    size_t i = rng_below(&m->r, m->n);
    obj *o = &m->objs[i];
    rtm_zs_free(m->p, o->h);
    m->bytes -= o->size;
    m->count_of[zs_test_slot(o->size) / 16u]--;
    m->pins_held -= o->pins;
    if (m->ndead < sizeof m->dead / sizeof m->dead[0])
        m->dead[m->ndead++] = o->h;
    else
        m->dead[rng_below(&m->r, m->ndead)] = o->h;
    free(o->shadow);
    m->objs[i] = m->objs[--m->n];
}

static void do_map(model *m, unsigned pin_rate)
{
    if (m->n == 0)
        return;
    obj *o = &m->objs[rng_below(&m->r, m->n)];
    unsigned char *d = rtm_zs_map(m->p, o->h);
    if (d == NULL || memcmp(d, o->shadow, o->size) != 0) {
        fail(m, "mapped bytes differ from the shadow");
        return;
    }
    size_t at = rng_below(&m->r, o->size), len = 1u + rng_below(&m->r, o->size - at);
    for (size_t i = at; i < at + len; i++)
        d[i] = o->shadow[i] = (unsigned char)rng_next(&m->r);
    if (rng_below(&m->r, 100) < pin_rate) {
        o->pins++;
        o->pointer = d;
        m->pins_held++;
    } else {
        rtm_zs_unmap(m->p, o->h);
    }
}

static void do_unmap(model *m)
{
    for (size_t tries = 0; tries < 8 && m->pins_held != 0 && m->n != 0; tries++) {
        obj *o = &m->objs[rng_below(&m->r, m->n)];
        if (o->pins != 0) {
            rtm_zs_unmap(m->p, o->h);
            o->pins--;
            m->pins_held--;
            return;
        }
    }
}

static void do_compact(model *m)
{
    int full = rng_below(&m->r, 5) == 0;
    size_t used = rtm_zs_stats_get(m->p).pages_used, got;
    do {
        got = rtm_zs_compact(m->p);
        if (got > 4u)
            fail(m, "compaction gave back more than one span");
        if (rtm_zs_stats_get(m->p).pages_used != used - got)
            fail(m, "compaction's return differs from the pages given back");
        used -= got;
        m->compacted_pages += got;
    } while (full && got != 0 && !m->failed);
    check_pool(m);
    check_contents(m);
    if (full && m->pins_held == 0 && used != pages_needed(m))
        fail(m, "fully compacted without pins, but more pages than the objects need");
}

static void do_bad_handle(model *m)
{
    if (m->ndead == 0)
        return;
    rtm_zs_handle h = m->dead[rng_below(&m->r, m->ndead)];
    rtm_zs_stats before = rtm_zs_stats_get(m->p);
    recorder_reset();
    if (rng_below(&m->r, 2) == 0)
        rtm_zs_free(m->p, h);
    else if (rtm_zs_map(m->p, h) != NULL)
        fail(m, "a freed handle mapped");
    rtm_zs_stats after = rtm_zs_stats_get(m->p);
    if (recorder()->calls != 1 || recorder()->last_kind != RTM_ERR_DOUBLE_FREE ||
        after.objects != before.objects || after.pages_used != before.pages_used)
        fail(m, "a freed handle was not refused and reported");
    m->bad_handles++;
}

static void step(model *m, const options *opt)
{
    size_t roll = rng_below(&m->r, 100);
    if (roll < 36)
        do_malloc(m);
    else if (roll < 62)
        do_free(m);
    else if (roll < 80)
        do_map(m, opt->pin_rate);
    else if (roll < 90)
        do_unmap(m);
    else if (roll < 95)
        do_compact(m);
    else
        do_bad_handle(m);
}

static int run_seed(const options *opt, uint64_t seed)
{
    unsigned char *mem = aligned_alloc(64, opt->region);
    REQUIRE(mem != NULL);
    model m = {.r = {seed}, .seed = seed};
    m.p = rtm_zs_create(mem, opt->region);
    REQUIRE(m.p != NULL);
    m.pages_total = rtm_zs_stats_get(m.p).pages_total;
    recorder_install();
    for (m.step = 0; m.step < opt->steps && !m.failed; m.step++) {
        step(&m, opt);
        check_stats(&m);
        if (m.step % opt->check_every == 0)
            check_pool(&m);
    }
    /* Drain: unmap everything, compact fully, free everything. */
    for (size_t i = 0; i < m.n; i++)
        for (; m.objs[i].pins != 0; m.objs[i].pins--)
            rtm_zs_unmap(m.p, m.objs[i].h);
    m.pins_held = 0;
    while (rtm_zs_compact(m.p) != 0)
        ;
    check_contents(&m);
    if (rtm_zs_stats_get(m.p).pages_used != pages_needed(&m))
        fail(&m, "final compaction left extra pages");
    while (m.n != 0)
        do_free(&m);
    check_stats(&m);
    check_pool(&m);
    if (rtm_zs_stats_get(m.p).pages_used != 0)
        fail(&m, "pages still used after every object was freed");
    printf("seed %llu: %lu steps, %lu mallocs refused, %lu pages given back by compaction, "
           "%lu bad handles refused: %s\n",
           (unsigned long long)seed, m.step, m.refused, m.compacted_pages, m.bad_handles,
           m.failed ? "FAILED" : "ok");
    rtm_set_error_handler(NULL, NULL);
    free(m.objs);
    free(mem);
    return m.failed;
}

static int parse(int argc, char **argv, options *opt)
{
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (i + 1 >= argc)
            return -1;
        unsigned long long v = strtoull(argv[i + 1], &end, 10);
        if (end == argv[i + 1] || *end != '\0')
            return -1;
        if (strcmp(argv[i], "--seed") == 0) {
            opt->seed = v;
            opt->seed_given = 1;
        } else if (strcmp(argv[i], "--steps") == 0) {
            opt->steps = (unsigned long)v;
        } else if (strcmp(argv[i], "--region") == 0 && v >= rtm_zs_min_region()) {
            opt->region = ((size_t)v + 63u) & ~(size_t)63u;
        } else if (strcmp(argv[i], "--pin-rate") == 0 && v <= 100) {
            opt->pin_rate = (unsigned)v;
        } else if (strcmp(argv[i], "--check-every") == 0 && v > 0) {
            opt->check_every = (unsigned long)v;
        } else {
            return -1;
        }
        i++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options opt = {.steps = 20000, .check_every = 8, .region = 1u << 20, .pin_rate = 5};
    if (parse(argc, argv, &opt) != 0) {
        fprintf(stderr,
                "usage: %s [--seed N] [--steps N] [--region BYTES] [--pin-rate PERCENT] "
                "[--check-every N]\n",
                argv[0]);
        return 2;
    }
    int failed = 0;
    if (opt.seed_given) {
        failed = run_seed(&opt, opt.seed);
    } else {
        for (uint64_t s = 1; s <= 3; s++)
            failed |= run_seed(&opt, s);
    }
    return failed ? EXIT_FAILURE : check_summary();
}
