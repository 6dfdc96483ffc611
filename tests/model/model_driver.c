// SPDX-License-Identifier: MIT
/*
 * tests/model/model_driver.c -- main() of every model test: runs the cases
 * of the program's model_entry through the rig (model_driver.h says what
 * it does per case), so the test_model_<heap>.c files hold only their
 * cases and hooks.
 */
#include "model_driver.h"

#include <stdio.h>
#include <string.h>

#include "../common/check.h"

test_region *model_region(model_heap *h, size_t bytes, size_t misalign)
{
    REQUIRE(h->region_count < MODEL_MAX_REGIONS);
    test_region *r = &h->regions[h->region_count++];
    *r = region_malloc(bytes, misalign);
    return r;
}

static int run_case(size_t index, uint64_t seed, size_t steps, const char *argv0, int verbose)
{
    const model_entry *e = &model_test;
    model_heap h;
    memset(&h, 0, sizeof h);
    e->create(index, &h);
    h.ops.region_count = h.region_count;
    for (size_t i = 0; i < h.region_count; i++) {
        h.ops.regions[i].base = h.regions[i].mem;
        h.ops.regions[i].bytes = h.regions[i].bytes;
    }

    char replay[256];
    snprintf(replay, sizeof replay, "%s --band %s --case %zu", argv0, e->info(index).band, index);
    h.cfg.seed = seed;
    h.cfg.steps = steps;
    if (h.cfg.sweep_every == 0)
        h.cfg.sweep_every = h.cfg.check_every == 1 ? 200u : 2000u;
    h.cfg.replay = replay;

    rig_result res;
    double t0 = check_now_seconds();
    int rc = rig_run(&h.ops, &h.cfg, &res);
    char label[256];
    snprintf(label, sizeof label, "case %zu [%s, seed %llu] %s %.2fs", index, h.what,
             (unsigned long long)seed, rc == 0 ? "ok" : "FAIL", check_now_seconds() - t0);
    if (verbose || rc != 0)
        rig_print_result(label, &res);
    else
        printf("%s\n", label);
    if (rc == 0 &&
        (res.enomem == 0 || res.free_alls == 0 || (e->weak != NULL && e->weak(index, &h, &res)))) {
        if (e->weak_is_note) {
            rig_print_result("  note: weak coverage", &res);
        } else {
            rig_print_result("  weak coverage", &res);
            rc = 1;
        }
    }
    if (e->destroy != NULL)
        rc = e->destroy(index, &h, rc);
    for (size_t i = 0; i < h.region_count; i++)
        region_free(&h.regions[i]);
    return rc;
}

int main(int argc, char **argv)
{
    rig_suite suite = {model_test.count, model_test.info, model_test.seed_base, run_case};
    return rig_main(argc, argv, &suite);
}
