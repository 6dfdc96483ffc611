// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_zsmalloc.c -- libFuzzer target: zsmalloc
 * (include/rtmem/zsmalloc.h) driven by the input as a program of
 * operations on one pool, with every handle the fuzzer can make up.
 *
 * The input's first byte picks the pool's size (4 to 67 pages); then each
 * operation is one byte (what) and its arguments:
 *   malloc(size: any 16-bit value, so sizes above a page and 0 too),
 *   free / map / unmap of a live handle, of a freed one, or of any 64-bit
 *   value the input spells out, compact, and map-and-pin / unpin.
 * The target keeps its own table of live handles with a fill byte each:
 * every object is filled on malloc and compared whenever it is mapped and
 * after every compaction (handles must survive moves, pinned objects must
 * not move). A made-up handle must be refused with one report unless it
 * happens to equal a live one. rtm_zs_check must pass after every
 * operation, and the stats must equal the table's counts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "rtmem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LIVE  512u
#define PAGE_COST (4096u + 24u + 256u) /* a page, its descriptor, its handles */

typedef struct live {
    rtm_zs_handle h;
    size_t size;
    uint8_t fill;
    unsigned pins;
    const void *at; /* where it was pinned */
} live;

static live objs[MAX_LIVE];
static size_t nlive, bytes;
static rtm_zs_handle dead[16];
static unsigned long reports;

static void on_error(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail,
                     void *arg)
{
    (void)kind;
    (void)heap;
    (void)ptr;
    (void)detail;
    (void)arg;
    reports++;
}

static void die(const char *what)
{
    fprintf(stderr, "fuzz_zsmalloc: %s\n", what);
    abort();
}

static void verify(rtm_zspool *p, const live *o)
{
    const uint8_t *d = rtm_zs_map(p, o->h);
    if (d == NULL)
        die("a live handle does not map");
    for (size_t i = 0; i < o->size; i++)
        if (d[i] != o->fill)
            die("object bytes changed");
    if (o->pins != 0 && (const void *)d != o->at)
        die("a pinned object moved");
    rtm_zs_unmap(p, o->h);
}

static void op_malloc(rtm_zspool *p, fz_in *in)
{
    size_t n = fz_u16(in);
    rtm_zs_handle h = rtm_zs_malloc(p, n);
    if (h == 0) {
        if (n != 0 && n <= RTM_ZS_MAX_SIZE && errno != ENOMEM)
            die("refused malloc without ENOMEM");
        return;
    }
    if (n == 0 || n > RTM_ZS_MAX_SIZE)
        die("a size out of range was accepted");
    if (nlive == MAX_LIVE) {
        rtm_zs_free(p, h);
        return;
    }
    live *o = &objs[nlive++];
    *o = (live){.h = h, .size = n, .fill = (uint8_t)(h * 31u + n)};
    memset(rtm_zs_map(p, h), o->fill, n);
    rtm_zs_unmap(p, h);
    bytes += n;
}

/* A handle to use: a live one (index into the table), a freed one, or any
 * value. Returns the live entry it names, or NULL. */
static live *pick(fz_in *in, rtm_zs_handle *h)
{
    uint8_t how = fz_u8(in);
    if (how % 3u == 0 && nlive != 0) {
        live *o = &objs[fz_u16(in) % nlive];
        *h = o->h;
        return o;
    }
    *h = how % 3u == 1u ? dead[fz_u8(in) % 16u] : fz_u64(in);
    for (size_t i = 0; i < nlive; i++)
        if (objs[i].h == *h)
            return &objs[i];
    return NULL;
}

/* A bad handle's call: one report, nothing changed. */
static void expect_refused(rtm_zspool *p, unsigned long before)
{
    if (reports != before + 1u)
        die("a bad handle was not reported exactly once");
    (void)p;
}

static void op_free(rtm_zspool *p, fz_in *in)
{
    rtm_zs_handle h;
    live *o = pick(in, &h);
    unsigned long before = reports;
    rtm_zs_free(p, h);
    if (o == NULL) {
        expect_refused(p, before);
        return;
    }
    bytes -= o->size;
    memmove(&dead[1], &dead[0], sizeof dead - sizeof dead[0]);
    dead[0] = h;
    *o = objs[--nlive];
}

static void op_map(rtm_zspool *p, fz_in *in, int pin)
{
    rtm_zs_handle h;
    live *o = pick(in, &h);
    unsigned long before = reports;
    if (o == NULL) {
        if (rtm_zs_map(p, h) != NULL)
            die("a bad handle mapped");
        expect_refused(p, before);
        return;
    }
    verify(p, o);
    if (pin && o->pins < 8u) {
        o->at = rtm_zs_map(p, h);
        o->pins++;
    }
}

static void op_unmap(rtm_zspool *p, fz_in *in)
{
    rtm_zs_handle h;
    live *o = pick(in, &h);
    unsigned long before = reports;
    rtm_zs_unmap(p, h);
    if (o == NULL || o->pins == 0) {
        expect_refused(p, before);
        return;
    }
    o->pins--;
}

static void op_compact(rtm_zspool *p)
{
    size_t used = rtm_zs_stats_get(p).pages_used, got = rtm_zs_compact(p);
    if (got > 4u || rtm_zs_stats_get(p).pages_used != used - got)
        die("compaction's return differs from the pages given back");
    for (size_t i = 0; i < nlive; i++)
        verify(p, &objs[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static _Alignas(64) unsigned char region[80 * PAGE_COST + 16384];
    fz_in in = {data, size};
    size_t pages = 4u + fz_u8(&in) % 64u;
    size_t region_bytes = rtm_zs_min_region() + (pages - 4u) * PAGE_COST;
    rtm_set_error_handler(on_error, NULL);
    rtm_zspool *p = rtm_zs_create(region, region_bytes);
    if (p == NULL)
        die("create refused a region of min_region or more");
    nlive = bytes = 0;
    memset(dead, 0, sizeof dead);
    while (fz_left(&in)) {
        switch (fz_u8(&in) % 7u) {
        case 0:
        case 1:
            op_malloc(p, &in);
            break;
        case 2:
            op_free(p, &in);
            break;
        case 3:
            op_map(p, &in, 0);
            break;
        case 4:
            op_map(p, &in, 1);
            break;
        case 5:
            op_unmap(p, &in);
            break;
        default:
            op_compact(p);
            break;
        }
        rtm_zs_stats st = rtm_zs_stats_get(p);
        if (st.objects != nlive || st.bytes_stored != bytes || st.pages_total != pages)
            die("stats differ from the target's table");
        if (rtm_zs_check(p) != 0)
            die("rtm_zs_check failed");
    }
    rtm_set_error_handler(NULL, NULL);
    return 0;
}
