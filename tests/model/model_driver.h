// SPDX-License-Identifier: MIT
/*
 * tests/model/model_driver.h -- the one driver of the model tests
 * (test_model_<heap>): each algorithm is a table of cases and a
 * model_entry of hooks; model_driver.c owns everything else.
 *
 * A model test program is model_driver.c (main) linked with one file that
 * defines `model_test`. For every selected case and seed (rig_main: --band,
 * --case, --seed, --steps, -v, RTMEM_SEED, RTMEM_STEPS) the driver
 *  1. asks the entry's create hook for regions, a heap, its rig_ops and
 *     the case's part of the rig_config, and the case's description;
 *  2. adds the regions to the ops, the seed, steps, replay line and sweep
 *     period to the config, and runs the rig;
 *  3. prints "case K [<description>, seed S] ok|FAIL <seconds>s" (with the
 *     result's counts when verbose or failed);
 *  4. judges coverage: a run that was never refused (no ENOMEM), never
 *     emptied the heap (no free-all) or missed what the entry's weak hook
 *     asks for proves less than it seems: "  weak coverage" and a failure,
 *     or only "  note: weak coverage" for an entry whose weak_is_note is set;
 *  5. calls the entry's destroy hook and frees the regions.
 * Seeds are fixed (run k of case i: seed_base + 1000 i + k + 1), so CI is
 * reproducible; a failure prints the command line that replays it.
 */
#ifndef RTM_TESTS_MODEL_DRIVER_H
#define RTM_TESTS_MODEL_DRIVER_H

#include "../common/region.h"
#include "rig.h"

#define MODEL_MAX_REGIONS 4

/* One run's heap, as the create hook leaves it. The hook fills cfg with
 * the case's part (max_live, max_request, max_alignment, check_every); the
 * driver adds seed, steps and replay, and sweep_every when the hook left it
 * 0 (200 for checked runs, 2000 otherwise). */
typedef struct model_heap {
    void *heap;                             /* for the destroy hook                */
    rig_ops ops;                            /* the driver adds the regions         */
    rig_config cfg;                         /* see above                           */
    char what[160];                         /* the label between "[" and ", seed"  */
    size_t units;                           /* blocks or pages, for the weak hook  */
    test_region regions[MODEL_MAX_REGIONS]; /* from model_region(), in order       */
    size_t region_count;
} model_heap;

typedef struct model_entry {
    size_t count;                        /* cases                                */
    rig_case_info (*info)(size_t index); /* the case's band, steps, seeds        */
    uint64_t seed_base;
    /* Makes the case's regions (model_region) and heap, fills h->heap,
     * h->ops, h->cfg and h->what; REQUIREs what must hold. */
    void (*create)(size_t index, model_heap *h);
    /* Non-zero when the run missed something the case is for, beyond an
     * ENOMEM and a free-all (NULL: nothing more). */
    int (*weak)(size_t index, const model_heap *h, const rig_result *res);
    int weak_is_note; /* weak coverage is printed, not failed */
    /* After the run (rc: 0 passed, 1 failed): checks what only the heap
     * can tell once everything is freed (when rc is 0) and releases the
     * heap, before the driver frees the regions. Returns rc, or 1 when a
     * check failed. NULL: nothing to do. */
    int (*destroy)(size_t index, model_heap *h, int rc);
} model_entry;

/* Defines cases_info(), the info hook of a table `cases` whose rows have
 * band, steps and seeds members. */
#define MODEL_CASES_INFO                                                                           \
    static rig_case_info cases_info(size_t index)                                                  \
    {                                                                                              \
        rig_case_info info = {cases[index].band, cases[index].steps, cases[index].seeds};          \
        return info;                                                                               \
    }

/* The entry of this program, defined by its test_model_<heap>.c. */
extern const model_entry model_test;

/* A region of `bytes` starting at `misalign` mod 64, added to h->regions
 * (the rig checks that every block lies in one of them). */
test_region *model_region(model_heap *h, size_t bytes, size_t misalign);

#endif /* RTM_TESTS_MODEL_DRIVER_H */
