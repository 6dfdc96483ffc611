// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_heapmem.c -- the model rig (rig.h) over heapmem
 * heaps (rtmem/heapmem.h), through the typed API (rig_ops_heapmem:
 * rig_rtmem.h says what heapmem promises the rig). The cases and hooks are
 * here; model_driver.c runs them.
 *
 * Cases cover the smallest page (64) to 4 KiB, heaps of one page (every
 * step checked) up to thousands, and odd start addresses. Requests are
 * drawn up to the whole arena, so the rig hits exhaustion and exact
 * largest_free probes both in buckets and in page ranges.
 *
 * Seeds are fixed; RTMEM_SEED or --seed replaces them. A failure prints the
 * command line that replays it.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"
#include "rtmem/heapmem.h"

typedef struct model_case {
    const char *band;
    size_t page;
    size_t pages;    /* region for about `pages` pages, or ...   */
    size_t bytes;    /* ... a region of exactly this many bytes (pages 0) */
    size_t misalign; /* start address mod 64                             */
    size_t check_every;
    size_t steps;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 64, 1, 0, 0, 1, 20000, 2},
    {"small", 64, 16, 0, 3, 1, 40000, 3},
    {"small", 128, 13, 0, 5, 1, 40000, 3},
    {"small", 256, 0, 20000, 7, 1, 40000, 3},
    {"small", 4096, 8, 0, 0, 1, 20000, 2},
    {"small", 512, 40, 0, 0, 1, 40000, 3},
    {"small", 64, 100, 0, 63, 1, 60000, 2},
    {"medium", 64, 1024, 0, 0, 16, 200000, 2},
    {"medium", 4096, 0, 1024 * 1024 + 5, 9, 16, 200000, 2},
    {"medium", 512, 777, 0, 2, 32, 200000, 2},
    {"medium", 64, 0, 256 * 1024 + 33, 1, 64, 200000, 2},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    size_t bytes = c->pages ? (c->pages * (c->page + rtm_heapmem_entry_size(c->page)) +
                               rtm_heapmem_min_region(c->page))
                            : c->bytes;
    test_region *region = model_region(h, bytes, c->misalign);
    rtm_heapmem *b = rtm_heapmem_create(region->mem, region->bytes, c->page);
    REQUIRE(b != NULL);
    size_t pages = rtm_heapmem_page_count(b);
    h->ops = rig_ops_heapmem(b);
    h->cfg.max_live = pages * (c->page / 16u) + 16u > 4096u ? 4096u : pages * (c->page / 16u) + 16u;
    h->cfg.max_request = pages * c->page;
    h->cfg.max_alignment = c->page * 2u;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s, heapmem:%zu, %zu pages, %zu B", c->band, c->page, pages,
             region->bytes);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 9000u, .create = create};
