// SPDX-License-Identifier: MIT
/*
 * tests/unit/test_tlsf_nogrow.c -- TLSF built with RTM_TLSF_GROWTH 0 (the
 * firmware configuration that leaves growth on demand out, 712 bytes of
 * Cortex-M4 flash: docs/FIRMWARE.md): rtm_tlsf_set_grow refuses with
 * ENOTSUP and a NULL handle still gives EINVAL; alloc and aligned alloc
 * refuse with ENOMEM when nothing fits, counted in failed_allocs, and the
 * heap stays consistent; everything else works as in the default build.
 * Linked against the TLSF sources compiled with the option (tests/
 * CMakeLists.txt, rtmem_tlsf_nogrow), so the option itself is what runs.
 */
#include <errno.h>
#include <stdint.h>

#include "../common/check.h"
#include "../common/region.h"
#include "rtmem/tlsf.h"

enum { HEAP_BYTES = 64 * 1024 };

static void *never_called(void *ctx, size_t min_bytes, size_t *got_bytes)
{
    (void)ctx;
    (void)min_bytes;
    *got_bytes = 0;
    CHECK_MSG(0, "the grow function of a heap built without growth was called");
    return NULL;
}

static void test_set_grow_refused(void)
{
    test_region r = region_malloc(HEAP_BYTES, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, HEAP_BYTES);
    REQUIRE(t != NULL);
    errno = 0;
    CHECK_EQ(rtm_tlsf_set_grow(t, never_called, NULL), -1);
    CHECK_EQ(errno, ENOTSUP);
    errno = 0;
    CHECK_EQ(rtm_tlsf_set_grow(NULL, never_called, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    region_free(&r);
}

static void test_refusals_without_growth(void)
{
    test_region r = region_malloc(HEAP_BYTES, 0);
    rtm_tlsf *t = rtm_tlsf_create(r.mem, HEAP_BYTES);
    REQUIRE(t != NULL);
    (void)rtm_tlsf_set_grow(t, never_called, NULL); /* refused: stays unset */
    size_t n = 0;
    void *blocks[2048];
    while (n < 2048 && (blocks[n] = rtm_tlsf_alloc(t, 100)) != NULL)
        n++;
    CHECK(n > 100 && n < 2048);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(rtm_tlsf_aligned_alloc(t, 256, 100) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK_EQ(rtm_tlsf_stats(t).failed_allocs, 2);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ(rtm_tlsf_free(t, blocks[i]), 0);
    CHECK_EQ(rtm_tlsf_stats(t).live_blocks, 0);
    CHECK_EQ(rtm_tlsf_check(t), 0);
    region_free(&r);
}

int main(void)
{
    RUN_TEST(test_set_grow_refused);
    RUN_TEST(test_refusals_without_growth);
    return check_summary();
}
