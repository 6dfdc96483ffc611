// SPDX-License-Identifier: MIT
/*
 * tools/wcet/scenarios_zsmalloc.c -- the pool states rtmem-wcet measures for
 * zsmalloc (include/rtmem/zsmalloc.h), through its typed calls: malloc,
 * free, map, unmap, compact and check each have a row of their own.
 *
 * Why these states: zsmalloc's O(1) calls vary only in which branches they
 * take, and its compaction in how much it moves, so each case forces one:
 *   - malloc: a free slot reused; every slot of a span filled (the first
 *     takes a span, some move the span to a fuller group, the last makes
 *     it full); a new span of every class cut from a 4-page pool's only
 *     block (two splits, and for 3-page spans the fourth page given back);
 *     refusals (too large, size 0, no page, no handle);
 *   - free: from a partial span; every object of a span freed in turn (the
 *     last gives the span back, its pages merging up to a 4-page block); a
 *     mapped object; refused handles (0, stale, another pool's);
 *   - map / unmap: first and nested pins, the last unpin, refusals;
 *   - compact: nothing to do (empty pool; every class with two spans and no
 *     room: the longest scan), two half-full spans of a class, the most
 *     moves one call can make (255 objects of 48-byte slots), and every
 *     candidate pinned;
 *   - check: full pools of 4 to 256 pages (it is O(pages + handles), shown).
 * random-replace runs the study's loop (scenarios.c) on rtm_zs_malloc /
 * rtm_zs_free with the same seed and size sequence as every allocator.
 * Variants pack (case, parameter) as case | parameter << 8.
 */
#include <stdio.h>
#include <string.h>

#include "child.h"

#define MIB          ((size_t)1 << 20)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define V(c, p)      ((unsigned)(c) | (unsigned)(p) << 8)
#define V_CASE(v)    ((v)&0xffu)
#define V_PARAM(v)   ((v) >> 8)
#define CLASSES      257u
#define SLOT(c)      (((size_t)(c) + 1u) * 16u) /* slot bytes of class c     */
/* The largest request of class c (the last class's slot has 8 bytes more
 * than a 4096-byte object needs). */
#define DATA(c)                                                                                    \
    (SLOT(c) - RTM_ZS_HEADER_BYTES > RTM_ZS_MAX_SIZE ? RTM_ZS_MAX_SIZE                             \
                                                     : SLOT(c) - RTM_ZS_HEADER_BYTES)

enum { M_REUSE, M_FILL, M_SPLIT, M_TOO_BIG, M_ZERO, M_NO_PAGE, M_NO_HANDLE };
enum { F_PARTIAL, F_DRAIN, F_MAPPED, F_ZERO, F_STALE, F_FOREIGN };
enum { P_FIRST, P_NESTED, P_BAD, U_NESTED, U_LAST, U_NOT_MAPPED, U_BAD };
enum { C_EMPTY, C_NO_ROOM, C_HALF, C_MOST, C_PINNED };

/* Pages per span and slots per span, as the pool chooses them (Linux's
 * rule, restated here so a state can be planned before it is built). */
static size_t span_pages(size_t slot)
{
    size_t best = 1, best_pct = 0;
    for (size_t k = 1; k <= 4; k++) {
        size_t span = k * RTM_ZS_PAGE, pct = (span - span % slot) * 100u / span;
        if (pct > best_pct) {
            best_pct = pct;
            best = k;
        }
    }
    return best;
}
static size_t span_objs(size_t slot) { return span_pages(slot) * RTM_ZS_PAGE / slot; }

/* A fresh pool of `pages` pages at the region's start (4: the minimum). */
static rtm_zspool *pool_new(size_t pages, size_t offset)
{
    size_t per_page = RTM_ZS_PAGE + 24u + RTM_ZS_PAGE / 128u * 8u; /* page, descriptor, handles */
    size_t bytes = rtm_zs_min_region() + (pages - 4u) * per_page;
    if (wcet_region_reserve(offset + bytes) != 0)
        return NULL;
    rtm_zspool *p = rtm_zs_create(wcet_region() + offset, bytes);
    if (p != NULL && rtm_zs_stats_get(p).pages_total != pages) {
        wcet_fail("pool of %zu pages has %zu", pages, rtm_zs_stats_get(p).pages_total);
        return NULL;
    }
    return p;
}

/* Measured calls: the marker names the row, then the call itself. */
static rtm_zs_handle m_malloc(rtm_zspool *p, unsigned sc, unsigned v, size_t n)
{
    wcet_marker(ROW_ZS_MALLOC, sc, v, n);
    return rtm_zs_malloc(p, n);
}
static void m_free(rtm_zspool *p, unsigned sc, unsigned v, size_t n, rtm_zs_handle h)
{
    wcet_marker(ROW_ZS_FREE, sc, v, n);
    rtm_zs_free(p, h);
}
static void *m_map(rtm_zspool *p, unsigned v, rtm_zs_handle h)
{
    wcet_marker(ROW_ZS_MAP, SC_ZS_MAP, v, 0);
    return rtm_zs_map(p, h);
}
static void m_unmap(rtm_zspool *p, unsigned v, rtm_zs_handle h)
{
    wcet_marker(ROW_ZS_UNMAP, SC_ZS_MAP, v, 0);
    rtm_zs_unmap(p, h);
}
static size_t m_compact(rtm_zspool *p, unsigned v, size_t n)
{
    wcet_marker(ROW_ZS_COMPACT, SC_ZS_COMPACT, v, n);
    return rtm_zs_compact(p);
}

/* The classes a case runs over: every 4th (65 of 257, every span size
 * and split path among them), or every 32nd in --quick; always 48 bytes
 * (256 slots per span, the most) and the last class. */
static int class_used(const wcet_config *cfg, unsigned c)
{
    return c % (cfg->quick ? 32u : 4u) == 0 || c == 2u || c == CLASSES - 1u;
}

/* Fills `n` objects of class c, unmeasured. */
static int fill(rtm_zspool *p, unsigned c, size_t n, rtm_zs_handle *hs)
{
    for (size_t i = 0; i < n; i++) {
        hs[i] = rtm_zs_malloc(p, DATA(c));
        REQUIRE(hs[i] != 0, "fill of class %u refused at %zu", c, i);
    }
    return 0;
}

/* --- random-replace ------------------------------------------------------ */

#define RR_SLOTS 10000u
#define RR_MIN   16u
#define RR_RANGE 4080u

/* splitmix64, the same generator (and seed) as scenarios.c's loop. */
static uint64_t rr_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int random_replace(const wcet_config *cfg)
{
    static rtm_zs_handle slot[RR_SLOTS];
    static size_t slot_size[RR_SLOTS];
    uint64_t rng = cfg->seed;
    TRY(wcet_region_reserve(256 * MIB));
    rtm_zspool *p = rtm_zs_create(wcet_region(), 256 * MIB);
    REQUIRE(p != NULL, "create refused 256 MiB");
    for (unsigned i = 0; i < RR_SLOTS; i++) {
        slot_size[i] = RR_MIN + (size_t)(rr_next(&rng) % RR_RANGE);
        slot[i] = rtm_zs_malloc(p, slot_size[i]);
        REQUIRE(slot[i] != 0, "fill refused %zu bytes", slot_size[i]);
    }
    for (unsigned long it = 0; it < cfg->iterations; it++) {
        unsigned i = (unsigned)(rr_next(&rng) % RR_SLOTS);
        size_t n = RR_MIN + (size_t)(rr_next(&rng) % RR_RANGE);
        m_free(p, SC_RANDOM_REPLACE, (unsigned)it, slot_size[i], slot[i]);
        slot[i] = m_malloc(p, SC_RANDOM_REPLACE, (unsigned)it, n);
        slot_size[i] = n;
        REQUIRE(slot[i] != 0, "refused %zu bytes at iteration %lu", n, it);
    }
    REQUIRE(rtm_zs_check(p) == 0, "check failed after the run");
    return 0;
}

/* --- malloc -------------------------------------------------------------- */

static int malloc_class(const wcet_config *cfg, unsigned c)
{
    static rtm_zs_handle hs[256];
    size_t objs = span_objs(SLOT(c));
    (void)cfg;
    /* A slot from the span's free-slot list. */
    rtm_zspool *p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 2, hs));
    rtm_zs_free(p, hs[0]);
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_REUSE, c), DATA(c)) != 0, "reuse refused");
    /* Every slot of one span, in turn (the first takes the span). */
    p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    for (size_t i = 0; i < objs; i++)
        REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_FILL, c), DATA(c)) != 0, "fill refused");
    REQUIRE(rtm_zs_stats_get(p).pages_used == span_pages(SLOT(c)), "fill took a second span");
    /* A new span from a 4-page pool's only block. */
    p = pool_new(4, 0);
    REQUIRE(p != NULL, "no pool");
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_SPLIT, c), DATA(c)) != 0, "split refused");
    return 0;
}

static int malloc_refusals(void)
{
    static rtm_zs_handle hs[1024];
    rtm_zspool *p = pool_new(4, 0);
    REQUIRE(p != NULL, "no pool");
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_TOO_BIG, 0), RTM_ZS_MAX_SIZE + 1u) == 0, "too big");
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_ZERO, 0), 0) == 0, "size 0 accepted");
    /* No page: a 4-page span holds the pool; a 1-page class needs a span. */
    TRY(fill(p, CLASSES - 1u, span_objs(SLOT(CLASSES - 1u)), hs));
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_NO_PAGE, 0), 8) == 0, "no-page accepted");
    /* No handle: 4 pages have 128 handles; 1-byte objects use them up. */
    p = pool_new(4, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, 0, 4u * RTM_ZS_PAGE / 128u, hs));
    REQUIRE(m_malloc(p, SC_ZS_MALLOC, V(M_NO_HANDLE, 0), 8) == 0, "no-handle accepted");
    return 0;
}

static int zs_malloc(const wcet_config *cfg)
{
    for (unsigned c = 0; c < CLASSES; c++)
        if (class_used(cfg, c))
            TRY(malloc_class(cfg, c));
    return malloc_refusals();
}

/* --- free ---------------------------------------------------------------- */

static int free_class(unsigned c)
{
    static rtm_zs_handle hs[256];
    size_t objs = span_objs(SLOT(c));
    /* Partial: two objects in a span, one freed. */
    rtm_zspool *p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 2, hs));
    m_free(p, SC_ZS_FREE, V(F_PARTIAL, c), DATA(c), hs[0]);
    /* Drain: every object of a full span freed; the last gives the span
     * back to an 8-page pool (256 handles), merging its pages into a
     * 4-page block. */
    p = pool_new(8, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, objs, hs));
    for (size_t i = 0; i < objs; i++)
        m_free(p, SC_ZS_FREE, V(F_DRAIN, c), DATA(c), hs[i]);
    REQUIRE(rtm_zs_stats_get(p).pages_used == 0, "drained span not given back");
    /* A mapped object. */
    p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 2, hs));
    REQUIRE(rtm_zs_map(p, hs[1]) != NULL, "map refused");
    m_free(p, SC_ZS_FREE, V(F_MAPPED, c), DATA(c), hs[1]);
    return 0;
}

static int free_refusals(void)
{
    rtm_zspool *p = pool_new(4, 0), *q;
    REQUIRE(p != NULL, "no pool");
    rtm_zs_handle h = rtm_zs_malloc(p, 100);
    REQUIRE(h != 0, "malloc refused");
    m_free(p, SC_ZS_FREE, V(F_ZERO, 0), 0, 0);
    rtm_zs_free(p, h);
    REQUIRE(rtm_zs_malloc(p, 100) != 0, "malloc refused");
    m_free(p, SC_ZS_FREE, V(F_STALE, 0), 100, h); /* its slot was issued again */
    q = pool_new(4, 1 * MIB);
    REQUIRE(q != NULL, "no pool");
    h = rtm_zs_malloc(q, 100);
    m_free(p, SC_ZS_FREE, V(F_FOREIGN, 0), 100, h);
    REQUIRE(rtm_zs_stats_get(p).objects == 1 && rtm_zs_check(p) == 0, "a refusal changed p");
    return 0;
}

static int zs_free(const wcet_config *cfg)
{
    for (unsigned c = 0; c < CLASSES; c++)
        if (class_used(cfg, c))
            TRY(free_class(c));
    return free_refusals();
}

/* --- map / unmap ---------------------------------------------------------- */

static int zs_map(void)
{
    rtm_zspool *p = pool_new(4, 0);
    REQUIRE(p != NULL, "no pool");
    rtm_zs_handle h = rtm_zs_malloc(p, 100), dead = rtm_zs_malloc(p, 100);
    REQUIRE(h != 0 && dead != 0, "malloc refused");
    rtm_zs_free(p, dead);
    REQUIRE(m_map(p, V(P_FIRST, 0), h) != NULL, "map refused");
    REQUIRE(m_map(p, V(P_NESTED, 0), h) != NULL, "nested map refused");
    REQUIRE(m_map(p, V(P_BAD, 0), dead) == NULL, "freed handle mapped");
    m_unmap(p, V(U_NESTED, 0), h);
    m_unmap(p, V(U_LAST, 0), h);
    m_unmap(p, V(U_NOT_MAPPED, 0), h);
    m_unmap(p, V(U_BAD, 0), dead);
    REQUIRE(rtm_zs_check(p) == 0, "check failed");
    return 0;
}

/* --- compact -------------------------------------------------------------- */

/* Every class with two spans and no room for a move: the longest scan. */
static int compact_no_room(void)
{
    static rtm_zs_handle hs[512];
    rtm_zspool *p = pool_new(2600, 0);
    REQUIRE(p != NULL, "no pool");
    for (unsigned c = 0; c < CLASSES; c++) {
        size_t objs = span_objs(SLOT(c));
        TRY(fill(p, c, 2u * objs, hs));
        rtm_zs_free(p, hs[0]); /* one free slot: less than a span */
    }
    REQUIRE(m_compact(p, V(C_NO_ROOM, 0), 0) == 0, "compaction found room");
    return 0;
}

/* Class c: two half-full spans; one call moves half a span. */
static int compact_half(unsigned c)
{
    static rtm_zs_handle hs[512];
    size_t objs = span_objs(SLOT(c));
    if (objs < 2u)
        return 0; /* 4096-byte slots: one per span, never a partial span */
    rtm_zspool *p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 2u * objs, hs));
    for (size_t i = 1; i < 2u * objs; i += 2)
        rtm_zs_free(p, hs[i]);
    size_t moves = rtm_zs_stats_get(p).objects / 2u;
    REQUIRE(m_compact(p, V(C_HALF, c), moves) == span_pages(SLOT(c)), "no span emptied");
    return 0;
}

/* The most one call moves: 48-byte slots (256 per 3-page span), five full
 * spans; spans 1-4 lose 64 objects each (room 256), span 0 loses one and is
 * then the head of the fullest partial list, the source: 255 moves. */
static int compact_most(void)
{
    static rtm_zs_handle hs[5 * 256];
    const unsigned c = 2;
    size_t objs = span_objs(SLOT(c));
    REQUIRE(objs == 256, "48-byte slots: %zu per span", objs);
    rtm_zspool *p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 5u * objs, hs));
    for (size_t s = 1; s < 5; s++)
        for (size_t i = 0; i < 64; i++)
            rtm_zs_free(p, hs[s * objs + i]);
    rtm_zs_free(p, hs[0]);
    size_t before = rtm_zs_stats_get(p).pages_used;
    REQUIRE(m_compact(p, V(C_MOST, c), 255) == 3, "no span emptied");
    REQUIRE(rtm_zs_stats_get(p).pages_used == before - 3 && rtm_zs_check(p) == 0, "bad state");
    return 0;
}

/* Room for a move, but every span a source could be is pinned: the call
 * looks at the first spans of each list and gives up. 3216-byte slots, 5
 * per 4-page span: 8 spans keep 2 objects each, all mapped. */
static int compact_pinned(void)
{
    static rtm_zs_handle hs[64];
    const unsigned c = 200;
    REQUIRE(span_objs(SLOT(c)) == 5, "3216-byte slots: %zu per span", span_objs(SLOT(c)));
    rtm_zspool *p = pool_new(64, 0);
    REQUIRE(p != NULL, "no pool");
    TRY(fill(p, c, 40, hs));
    for (size_t i = 0; i < 40; i++) {
        if (i % 5u >= 2u)
            rtm_zs_free(p, hs[i]);
        else
            REQUIRE(rtm_zs_map(p, hs[i]) != NULL, "map refused");
    }
    REQUIRE(m_compact(p, V(C_PINNED, c), 0) == 0, "a pinned span was emptied");
    return 0;
}

static int zs_compact(const wcet_config *cfg)
{
    rtm_zspool *p = pool_new(4, 0);
    REQUIRE(p != NULL, "no pool");
    REQUIRE(m_compact(p, V(C_EMPTY, 0), 0) == 0, "empty pool compacted");
    TRY(compact_no_room());
    for (unsigned c = 0; c < CLASSES; c++)
        if (class_used(cfg, c))
            TRY(compact_half(c));
    TRY(compact_most());
    return compact_pinned();
}

/* --- check ---------------------------------------------------------------- */

static int zs_check(const wcet_config *cfg)
{
    static const size_t sizes[] = {4, 16, 64, 256};
    static rtm_zs_handle hs[256 * 4];
    for (size_t i = 0; i < ARRAY_LEN(sizes) - (cfg->quick ? 1u : 0u); i++) {
        size_t pages = sizes[i];
        rtm_zspool *p = pool_new(pages, 0);
        REQUIRE(p != NULL, "no pool");
        /* 1008-byte slots: 4 objects per 1-page span, every page full. */
        TRY(fill(p, 62, pages * 4u, hs));
        wcet_marker(ROW_ZS_CHECK, SC_ZS_CHECK, 0, pages);
        REQUIRE(rtm_zs_check(p) == 0, "check failed");
    }
    return 0;
}

/* --- dispatch, weight, words ---------------------------------------------- */

int wcet_zs_scenario(const wcet_config *cfg, enum wcet_scenario sc)
{
    /* Once, before any pool: a later, larger reservation would move the
     * region (and every pool in it) elsewhere. */
    TRY(wcet_region_reserve(256 * MIB));
    switch (sc) {
    case SC_RANDOM_REPLACE:
        return random_replace(cfg);
    case SC_ZS_MALLOC:
        return zs_malloc(cfg);
    case SC_ZS_FREE:
        return zs_free(cfg);
    case SC_ZS_MAP:
        return zs_map();
    case SC_ZS_COMPACT:
        return zs_compact(cfg);
    case SC_ZS_CHECK:
        return zs_check(cfg);
    default:
        return wcet_fail("scenario %d is not a zsmalloc scenario", (int)sc);
    }
}

unsigned long wcet_zs_weight(const wcet_config *cfg, enum wcet_scenario sc)
{
    switch (sc) {
    case SC_RANDOM_REPLACE:
        return 2 * cfg->iterations;
    case SC_ZS_MALLOC:
    case SC_ZS_FREE:
        return cfg->quick ? 800 : 8000;
    case SC_ZS_COMPACT:
    case SC_ZS_CHECK:
        return cfg->quick ? 400 : 3000;
    default:
        return 20;
    }
}

int wcet_zs_describe(char *buf, size_t len, unsigned sc, unsigned v, uint64_t size)
{
    static const char *const malloc_cases[] = {"free slot reused",
                                               "each slot of one span filled",
                                               "new span from the only 4-page block",
                                               "refused: too large",
                                               "refused: size 0",
                                               "refused: no page for a span",
                                               "refused: no handle"};
    static const char *const free_cases[] = {
        "span stays partial", "each object of a span freed (last: pages back, merged)",
        "a mapped object",    "refused: handle 0",
        "refused: stale",     "refused: another pool's handle"};
    static const char *const map_cases[] = {"first map (pin)",     "nested map", "refused handle",
                                            "nested unmap",        "last unmap", "unmap not mapped",
                                            "unmap refused handle"};
    static const char *const compact_cases[] = {
        "empty pool", "every class two spans, no room (full scan)", "two half-full spans",
        "most moves one call makes", "every candidate pinned"};
    unsigned c = V_CASE(v), param = V_PARAM(v);
    switch (sc) {
    case SC_ZS_MALLOC:
    case SC_ZS_FREE:
        if (c <= (sc == SC_ZS_MALLOC ? M_NO_HANDLE : F_FOREIGN))
            snprintf(buf, len, "%s, %zu-byte slots (%llu bytes)",
                     (sc == SC_ZS_MALLOC ? malloc_cases : free_cases)[c], SLOT(param),
                     (unsigned long long)size);
        return 1;
    case SC_ZS_MAP:
        if (c < ARRAY_LEN(map_cases))
            snprintf(buf, len, "%s", map_cases[c]);
        return 1;
    case SC_ZS_COMPACT:
        if (c < ARRAY_LEN(compact_cases))
            snprintf(buf, len, "%s, %zu-byte slots, %llu moves", compact_cases[c], SLOT(param),
                     (unsigned long long)size);
        return 1;
    case SC_ZS_CHECK:
        snprintf(buf, len, "check of a full pool of %llu pages, 1000-byte objects",
                 (unsigned long long)size);
        return 1;
    default:
        return 0;
    }
}
