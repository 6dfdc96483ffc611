// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_slab.c -- the model rig (rig.h) over slab heaps
 * (rtmem/slab.h), through the typed API (rig_ops_slab: rig_rtmem.h says
 * what the slab promises the rig). The cases and hooks are here;
 * model_driver.c runs them.
 *
 * Cases cover the smallest page (256) to 4 KiB, tiny heaps (every step
 * checked) up to megabytes, odd start addresses. Requests are drawn up to
 * the whole arena, so both small classes and large buddy blocks are hit.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"
#include "rtmem/slab.h"

typedef struct model_case {
    const char *band;
    size_t page;
    size_t unused;   /* 0                                                 */
    size_t bytes;    /* region bytes                                      */
    size_t misalign; /* start address mod 64                             */
    size_t check_every;
    size_t steps;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 256, 0, 2000, 0, 1, 20000, 2},
    {"small", 256, 0, 6000, 3, 1, 40000, 3},
    {"small", 512, 0, 9000, 5, 1, 40000, 3},
    {"small", 4096, 0, 40000, 7, 1, 20000, 2},
    {"small", 1024, 0, 30000, 63, 1, 40000, 2},
    {"medium", 256, 0, 256 * 1024 + 33, 1, 64, 200000, 2},
    {"medium", 4096, 0, 1024 * 1024 + 5, 9, 16, 200000, 2},
    {"medium", 512, 0, 400000, 2, 32, 200000, 2},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    test_region *region = model_region(h, c->bytes, c->misalign);
    rtm_slab *b = rtm_slab_create(region->mem, region->bytes, c->page);
    REQUIRE(b != NULL);
    size_t pages = c->bytes / c->page;
    h->ops = rig_ops_slab(b);
    h->cfg.max_live = pages * 64u + 16u;
    h->cfg.max_request = pages * c->page;
    h->cfg.max_alignment = c->page * 8u;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s, slab:%zu, %zu pages, %zu B", c->band, c->page, pages,
             region->bytes);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 7000u, .create = create};
