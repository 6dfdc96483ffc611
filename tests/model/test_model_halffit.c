// SPDX-License-Identifier: MIT
/*
 * tests/model/test_model_halffit.c -- the model rig (rig.h) over half-fit
 * heaps (rtmem/halffit.h), through the typed API (rig_ops_halffit:
 * rig_rtmem.h says what half-fit promises the rig). The cases and hooks
 * are here; model_driver.c runs them.
 *
 * Cases: heaps from a few blocks to megabytes, odd start addresses, checked
 * runs (check after every step) and long unchecked ones. Seeds are fixed;
 * RTMEM_SEED or --seed replaces them; a failure prints its replay line.
 */
#include <stdio.h>

#include "../common/check.h"
#include "model_driver.h"
#include "rig_rtmem.h"
#include "rtmem/halffit.h"

typedef struct model_case {
    const char *band;
    size_t bytes;
    size_t misalign;
    size_t check_every;
    size_t steps;
    size_t max_request; /* 0: the rig's default (the region) */
    size_t max_alignment;
    unsigned seeds;
} model_case;

static const model_case cases[] = {
    {"small", 800, 0, 1, 20000, 0, 64, 3},
    {"small", 1000, 3, 1, 30000, 0, 64, 3},
    {"small", 4096 + 600, 7, 1, 60000, 512, 256, 3},
    {"small", 20000, 1, 1, 60000, 2048, 1024, 2},
    {"medium", 100000, 5, 16, 200000, 4096, 4096, 2},
    {"medium", 1u << 20, 0, 64, 200000, 65536, 4096, 2},
    {"medium", 3u << 20, 2, 256, 200000, 0, 4096, 1},
};

#define CASE_COUNT (sizeof cases / sizeof cases[0])

static void create(size_t index, model_heap *h)
{
    const model_case *c = &cases[index];
    test_region *region = model_region(h, c->bytes, c->misalign);
    rtm_halffit *hf = rtm_halffit_create(region->mem, region->bytes);
    REQUIRE(hf != NULL);
    REQUIRE(rtm_halffit_check(hf) == 0);
    h->ops = rig_ops_halffit(hf);
    h->cfg.max_request = c->max_request;
    h->cfg.max_alignment = c->max_alignment;
    h->cfg.check_every = c->check_every;
    snprintf(h->what, sizeof h->what, "%s, %zu B, misalign %zu", c->band, c->bytes, c->misalign);
}

MODEL_CASES_INFO

const model_entry model_test = {
    .count = CASE_COUNT, .info = cases_info, .seed_base = 7000u, .create = create};
