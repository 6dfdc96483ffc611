// SPDX-License-Identifier: MIT
/*
 * tests/tracking/contract.c -- what tracking (src/core/track.c) must leave
 * unchanged and what it must mark, over every heap of rtm_algorithms() and
 * a locked TLSF heap. Runs in every build but the valgrind one (whose CI
 * stage builds only the buggy programs), so the first part also holds
 * untracked:
 *
 *   misuse       a refused free or realloc (a foreign pointer, a double
 *                free right after the free, a realloc of that freed block)
 *                reaches the error handler exactly once, with EINVAL; an
 *                accepted call not at all (the tracked path asks the heap
 *                nothing more than the untracked one)
 *   usable       after rtm_usable_size the whole usable size is writable
 *                (ASan reports the test otherwise), and realloc keeps it
 *
 * and in an ASan-tracked build the marking itself, read from ASan's
 * shadow: a block accessible for exactly its requested size (the byte after
 * it poisoned when it lies inside the block), poisoned from its first byte
 * after free, after a moving realloc (the old block), after a reset; the
 * usable size poisoned whole at free after rtm_usable_size; 5000 live
 * blocks at once (the live table grows) each poisoned at its free; the
 * region ordinary memory after rtm_heap_destroy, also when a second heap
 * was made on it without destroying the first.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/check.h"
#include "common/recorder.h"
#include "common/region.h"
#include "rtmem.h"
#include "rtmem/lock.h"
#include "track_test.h"

#if defined(RTM_TRACK_ASAN) && RTM_TRACK_ASAN
#define ASAN_MARKS 1
#else
#define ASAN_MARKS 0
#endif

#define REGION_BYTES ((size_t)1 << 20)

static rtm_heap *open_heap(const char *name, void *mem, size_t bytes)
{
    if (strncmp(name, "locked:", 7) == 0)
        return rtm_locked_create(name + 7, mem, bytes);
    return rtm_heap_create(name, mem, bytes);
}

/* The heaps: every algorithm, then a locked TLSF heap; NULL-terminated. */
static const char *heap_names[32];

static void list_heaps(void)
{
    size_t n = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL && n < 30; a++)
        heap_names[n++] = *a;
    heap_names[n++] = "locked:tlsf";
    heap_names[n] = NULL;
}

/* One misuse call's reports: EINVAL and exactly one, or neither. */
static void one_or_none(const char *heap, const char *what)
{
    int refused = errno == EINVAL;
    unsigned calls = recorder()->calls;
    CHECK_MSG(refused ? calls == 1 : calls == 0, "%s: %s: errno %d, %u report(s) (want %s)", heap,
              what, errno, calls, refused ? "1" : "0");
    recorder_reset();
}

static void test_misuse_reported_once(void)
{
    for (const char *const *name = heap_names; *name != NULL; name++) {
        test_region r = region_malloc(REGION_BYTES, 0);
        rtm_heap *h = open_heap(*name, r.mem, r.bytes);
        REQUIRE(h != NULL);
        unsigned char stack_block[64];
        void *keep = rtm_alloc(h, 48), *p = rtm_alloc(h, 40);
        REQUIRE(keep != NULL && p != NULL);
        recorder_install();
        recorder_reset();

        errno = 0;
        rtm_free(h, stack_block + 16);
        CHECK_MSG(errno == EINVAL, "%s: free of a foreign pointer: errno %d", *name, errno);
        one_or_none(*name, "free of a foreign pointer");
        errno = 0;
        CHECK(rtm_realloc(h, stack_block + 16, 100) == NULL);
        CHECK_MSG(errno == EINVAL, "%s: realloc of a foreign pointer: errno %d", *name, errno);
        one_or_none(*name, "realloc of a foreign pointer");

        errno = 0;
        rtm_free(h, p);
        CHECK_MSG(errno == 0 && recorder()->calls == 0, "%s: a good free: errno %d, %u report(s)",
                  *name, errno, recorder()->calls);
        errno = 0;
        rtm_free(h, p); /* right after its free: every kind detects it */
        CHECK_MSG(errno == EINVAL, "%s: double free: errno %d", *name, errno);
        one_or_none(*name, "double free");
        errno = 0;
        CHECK(rtm_realloc(h, p, 100) == NULL);
        CHECK_MSG(errno == EINVAL, "%s: realloc of a freed block: errno %d", *name, errno);
        one_or_none(*name, "realloc of a freed block");

        rtm_set_error_handler(NULL, NULL);
        rtm_free(h, keep);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
        region_free(&r);
    }
}

#if ASAN_MARKS
#include <sanitizer/asan_interface.h>
#define POISONED(p)      (__asan_address_is_poisoned((const void *)(p)) != 0)
#define OPEN_RANGE(p, n) (__asan_region_is_poisoned((void *)(p), (size_t)(n)) == NULL)
#else
#define POISONED(p)      1
#define OPEN_RANGE(p, n) 1
#endif

static void test_usable_size_is_usable(void)
{
    for (const char *const *name = heap_names; *name != NULL; name++) {
        test_region r = region_malloc(REGION_BYTES, 0);
        rtm_heap *h = open_heap(*name, r.mem, r.bytes);
        REQUIRE(h != NULL);
        unsigned char *p = rtm_alloc(h, 13);
        REQUIRE(p != NULL);
        size_t n = rtm_usable_size(h, p);
        REQUIRE(n >= 13);
        memset(p, 0x3c, n); /* every usable byte: allowed once asked */
        CHECK_MSG(OPEN_RANGE(p, n), "%s: usable size %zu not opened", *name, n);
        unsigned char *q = rtm_realloc(h, p, n + 4000); /* moves (or grows) */
        if (q != NULL) {
            size_t kept = 0;
            while (kept < n && q[kept] == 0x3c)
                kept++;
            CHECK_MSG(kept == n, "%s: realloc kept %zu of %zu bytes", *name, kept, n);
            p = q;
            n = rtm_usable_size(h, p);
            memset(p, 0x3d, n);
        }
        rtm_free(h, p);
        if (ASAN_MARKS)
            CHECK_MSG(POISONED(p) && POISONED(p + n - 1), "%s: usable size not poisoned at free",
                      *name);
        CHECK_EQ(rtm_heap_check(h), 0);
        rtm_heap_destroy(h);
        region_free(&r);
    }
}

#if ASAN_MARKS
static void test_asan_marks(void)
{
    enum { MANY = 5000 };
    static unsigned char *many[MANY];
    for (const char *const *name = heap_names; *name != NULL; name++) {
        test_region r = region_malloc(REGION_BYTES, 0);
        rtm_heap *h = open_heap(*name, r.mem, r.bytes);
        REQUIRE(h != NULL);
        CHECK_MSG(POISONED(h) || strncmp(*name, "locked:", 7) == 0, "%s: control structure open",
                  *name);

        /* exact size: the byte after a 13-byte block is poisoned (checked
         * before anything asks the usable size) */
        unsigned char *a = rtm_alloc(h, 13), *b = rtm_alloc(h, 24);
        REQUIRE(a != NULL && b != NULL);
        CHECK_MSG(OPEN_RANGE(a, 13) && POISONED(a + 13), "%s: 13-byte block marks", *name);
        CHECK_MSG(OPEN_RANGE(b, 24) && POISONED(b + 24), "%s: 24-byte block marks", *name);
        rtm_free(h, a);
        CHECK_MSG(POISONED(a), "%s: freed block open", *name);

        /* a moving realloc: the old block poisoned, the new open */
        unsigned char *fence = rtm_alloc(h, 40);
        REQUIRE(fence != NULL);
        unsigned char *q = rtm_realloc(h, b, 3000); /* NULL: cannot grow (pool) */
        if (q != NULL) {
            CHECK_MSG(OPEN_RANGE(q, 3000), "%s: the realloc'd block not open", *name);
            if (q != b)
                CHECK_MSG(POISONED(b), "%s: old block open after a moving realloc", *name);
        }
        rtm_free(h, q != NULL ? q : b);
        rtm_free(h, fence);

        /* many live blocks: each poisoned at its free, in a mixed order */
        size_t n = 0;
        while (n < MANY && (many[n] = rtm_alloc(h, 16 + n % 5)) != NULL)
            n++;
        /* TLSF holds them all: the table grows past its first 3072 entries */
        CHECK_MSG(strcmp(*name, "tlsf") == 0 ? n == MANY : n > 200, "%s: only %zu blocks", *name,
                  n);
        size_t open_live = 0, open_freed = 0;
        for (size_t i = 0; i < n; i += 2) {
            rtm_free(h, many[i]);
            open_freed += !POISONED(many[i]);
        }
        for (size_t i = 1; i < n; i += 2)
            open_live += OPEN_RANGE(many[i], 16 + i % 5);
        for (size_t i = 1; i < n; i += 2) {
            rtm_free(h, many[i]);
            open_freed += !POISONED(many[i]);
        }
        CHECK_MSG(open_freed == 0 && open_live == n / 2,
                  "%s: %zu freed blocks open, %zu of %zu live open", *name, open_freed, open_live,
                  n / 2);

        /* reset: its live blocks poisoned */
        unsigned char *c = rtm_alloc(h, 40);
        CHECK_MSG(c != NULL, "%s: no 40-byte block after the frees", *name);
        REQUIRE(rtm_heap_reset(h) == 0);
        CHECK_MSG(c == NULL || POISONED(c), "%s: a block live at reset still open", *name);
        c = rtm_alloc(h, 40);
        CHECK_MSG(c != NULL, "%s: no 40-byte block after reset", *name);

        /* a second heap on the region without destroying the first, then
         * destroy: the whole region is ordinary memory again */
        rtm_heap *h2 = open_heap(*name, r.mem, r.bytes);
        REQUIRE(h2 != NULL);
        unsigned char *d = rtm_alloc(h2, 64);
        REQUIRE(d != NULL);
        memset(d, 1, 64);
        rtm_heap_destroy(h2);
        CHECK_MSG(OPEN_RANGE(r.mem, r.bytes), "%s: region not given back by destroy", *name);
        memset(r.mem, 0, r.bytes);
        region_free(&r);
    }
}
#endif

int main(void)
{
    list_heaps();
    RUN_TEST(test_misuse_reported_once);
    RUN_TEST(test_usable_size_is_usable);
#if ASAN_MARKS
    RUN_TEST(test_asan_marks);
#else
    printf("(the ASan marks are checked in ASan-tracked builds only: %s)\n",
           TRACKED_BUILD ? "valgrind build" : "untracked build");
#endif
    return check_summary();
}
