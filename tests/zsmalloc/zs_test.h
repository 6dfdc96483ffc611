// SPDX-License-Identifier: MIT
/*
 * tests/zsmalloc/zs_test.h -- what the zsmalloc tests share: an
 * independent statement of the class geometry (so the tests do not trust
 * the library's own table), and the handle's index bits (white box: the
 * tests forge never-issued handles from real ones).
 */
#ifndef RTM_TESTS_ZS_TEST_H
#define RTM_TESTS_ZS_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "rtmem/zsmalloc.h"

/* Handle = [ tag 14 | generation 21 | index 29 ] (src/zsmalloc/zs_layout.h). */
#define ZS_TEST_IDX_MASK ((((uint64_t)1) << 29) - 1u)

/* Slot bytes of a request: header plus data, rounded up to 16. */
static inline size_t zs_test_slot(size_t size) { return (size + 8u + 15u) / 16u * 16u; }

/* Pages per span as Linux's get_pages_per_zspage() picks them, written
 * from its description: the highest whole-percent usage, smallest k first. */
static inline size_t zs_test_span_pages(size_t slot)
{
    size_t best = 1, best_pct = 0;
    for (size_t k = 1; k <= 4; k++) {
        size_t span = k * 4096u, pct = (span - span % slot) * 100u / span;
        if (pct > best_pct) {
            best_pct = pct;
            best = k;
        }
    }
    return best;
}

static inline size_t zs_test_objs(size_t slot) { return zs_test_span_pages(slot) * 4096u / slot; }

#endif /* RTM_TESTS_ZS_TEST_H */
