// SPDX-License-Identifier: MIT
/*
 * tests/shared/test_shared_api.c -- the process-shared heap's API
 * (include/rtmem/shared.h) in one process, and a little fork:
 *  - names: every malformed one refused with EINVAL, the longest accepted;
 *  - sizes: one byte below rtm_shared_min_size() refused, the minimum works;
 *  - algorithms: NULL and "tlsf" accepted, others ENOTSUP, unknown EINVAL;
 *  - a second create of a name: EEXIST, the first heap untouched;
 *  - permissions: rtm_shared_create gives 0600, rtm_shared_create_mode the
 *    exact bits asked for whatever the umask, bits outside 0777 refused;
 *  - attaching to what is not a good heap: missing (ENOENT), empty,
 *    shorter than the header, foreign bytes, truncated or grown heap
 *    (EINVAL), other version / ABI / byte order / inner TLSF layout (EPROTO), half-created
 *    (EAGAIN); never a crash;
 *  - two mappings of one heap at different addresses: offsets mean the
 *    same block in both, a block allocated through one is freed through the
 *    other, stats agree;
 *  - every generic call, including misuse (foreign pointer, double free,
 *    add_pool), aligned blocks, realloc keeping contents and alignment;
 *  - the shared model rig over a shared heap (contents, exact stats, walk,
 *    check after every few steps);
 *  - owners: a child's leaked blocks counted and reclaimed (by pid and as
 *    "dead owners"), an adopted block spared.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "../common/recorder.h"
#include "../model/rig_rtmem.h"
#include "rtmem.h"

#define KiB ((size_t)1024)

static const char *heap_name(const char *what)
{
    static char name[96];
    snprintf(name, sizeof name, "/rtmem-test-api-%ld-%s", (long)getpid(), what);
    return name;
}

static void test_names(void)
{
    const char *bad[] = {"", "/", "a/b", "/a/b", ".", "..", "/..", "sp ace", "tab\t", "x*"};
    size_t min = rtm_shared_min_size();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_shared_create(bad[i], min, NULL) == NULL, "name \"%s\" accepted", bad[i]);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK(rtm_shared_open(bad[i]) == NULL);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK(rtm_shared_unlink(bad[i]) == -1);
        CHECK_ERRNO(EINVAL);
    }
    errno = 0;
    CHECK(rtm_shared_create(NULL, min, NULL) == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_shared_open(NULL) == NULL);
    char longest[202];
    memset(longest, 'n', sizeof longest);
    longest[0] = '/';
    snprintf(longest + 1, 20, "%ld", (long)getpid());
    longest[strlen(longest)] = 'n';
    longest[201] = '\0'; /* 200 characters after the slash */
    rtm_heap *h = rtm_shared_create(longest, min, NULL);
    CHECK(h != NULL);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(longest) == 0);
    char too_long[203];
    memcpy(too_long, longest, 201);
    too_long[201] = 'n';
    too_long[202] = '\0';
    errno = 0;
    CHECK(rtm_shared_create(too_long, min, NULL) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_unlink(heap_name("missing")) == -1);
    CHECK_ERRNO(ENOENT);
    errno = 0;
    CHECK(rtm_shared_open(heap_name("missing")) == NULL);
    CHECK_ERRNO(ENOENT);
}

static void test_sizes_and_algorithms(void)
{
    const char *name = heap_name("sizes");
    size_t min = rtm_shared_min_size();
    (void)rtm_shared_unlink(name);
    errno = 0;
    CHECK(rtm_shared_create(name, min - 1u, NULL) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_create(name, 0, NULL) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_create(name, SIZE_MAX, NULL) == NULL);
    CHECK_ERRNO(EINVAL);
    const char *unsupported[] = {"buddy", "pool:64", "halffit", "slab", "heapmem"};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        errno = 0;
        CHECK(rtm_shared_create(name, 64 * KiB, unsupported[i]) == NULL);
        CHECK_ERRNO(ENOTSUP);
    }
    errno = 0; /* xvmalloc, too: TLSF is the only shared inner heap */
    CHECK(rtm_shared_create(name, 64 * KiB, "xvmalloc") == NULL);
    CHECK_ERRNO(ENOTSUP);
    errno = 0;
    CHECK(rtm_shared_create(name, 64 * KiB, "nosuch") == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_create(name, 64 * KiB, "tlsf:8") == NULL);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_shared_open(name) == NULL); /* nothing was left behind */
    rtm_heap *h = rtm_shared_create(name, min, "tlsf");
    REQUIRE(h != NULL);
    CHECK(rtm_heap_check(h) == 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK(st.arena_bytes == min);
    CHECK(st.largest_free > 0);
    void *p = rtm_alloc(h, st.largest_free);
    CHECK(p != NULL);
    errno = 0;
    CHECK(rtm_alloc(h, 1) == NULL);
    CHECK_ERRNO(ENOMEM);
    rtm_free(h, p);
    /* A second create of the same name fails and leaves the heap alone. */
    errno = 0;
    CHECK(rtm_shared_create(name, 64 * KiB, NULL) == NULL);
    CHECK_ERRNO(EEXIST);
    CHECK(rtm_heap_check(h) == 0);
    rtm_heap *again = rtm_shared_open(name);
    CHECK(again != NULL);
    if (again != NULL) {
        CHECK(rtm_heap_stats(again).arena_bytes == min);
        rtm_shared_close(again);
    }
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(name) == 0);
}

/* --- permission bits ----------------------------------------------------- */

/* The permission bits of an object, by fstat of a fresh descriptor. */
static unsigned object_mode(const char *name)
{
    int fd = shm_open(name, O_RDONLY, 0);
    REQUIRE(fd >= 0);
    struct stat st;
    REQUIRE(fstat(fd, &st) == 0);
    close(fd);
    return (unsigned)st.st_mode & 0777u;
}

static void test_modes(void)
{
    const char *name = heap_name("mode");
    size_t min = rtm_shared_min_size();
    (void)rtm_shared_unlink(name);
    /* A umask that would strip group and other bits must not change them. */
    mode_t old = umask(077);
    const unsigned modes[] = {0660u, 0644u, 0600u, 0666u};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        rtm_heap *h = rtm_shared_create_mode(name, 64 * KiB, NULL, modes[i]);
        REQUIRE(h != NULL);
        CHECK_MSG(object_mode(name) == modes[i], "mode %o became %o", modes[i], object_mode(name));
        CHECK(rtm_alloc(h, 64) != NULL);
        rtm_shared_close(h);
        CHECK(rtm_shared_unlink(name) == 0);
    }
    rtm_heap *h = rtm_shared_create(name, min, "tlsf");
    REQUIRE(h != NULL);
    CHECK(object_mode(name) == 0600u);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(name) == 0);
    umask(old);
    const unsigned bad[] = {01000u, 02660u, 04600u, 0x10000u, ~0u};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        CHECK_MSG(rtm_shared_create_mode(name, min, NULL, bad[i]) == NULL, "mode %o accepted",
                  bad[i]);
        CHECK_ERRNO(EINVAL);
        errno = 0;
        CHECK_MSG(rtm_shared_open(name) == NULL, "mode %o created the object", bad[i]);
        CHECK_ERRNO(ENOENT);
    }
    errno = 0;
    CHECK(rtm_shared_create_mode("a/b", min, NULL, 0600u) == NULL);
    CHECK_ERRNO(EINVAL);
}

/* --- objects that are not good heaps ------------------------------------ */

/* Writes `bytes` bytes of `fill` into a new object `name`. */
static void raw_object(const char *name, size_t bytes, int fill)
{
    int fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, (off_t)bytes) == 0);
    if (bytes > 0) {
        void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        REQUIRE(m != MAP_FAILED);
        memset(m, fill, bytes);
        munmap(m, bytes);
    }
    close(fd);
}

/* Maps a heap's object raw, to damage its header. */
static unsigned char *raw_map(const char *name, size_t *bytes)
{
    int fd = shm_open(name, O_RDWR, 0);
    REQUIRE(fd >= 0);
    struct stat st;
    REQUIRE(fstat(fd, &st) == 0);
    *bytes = (size_t)st.st_size;
    void *m = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    close(fd);
    return m;
}

static void expect_open_error(const char *name, int err, const char *what)
{
    errno = 0;
    rtm_heap *h = rtm_shared_open(name);
    CHECK_MSG(h == NULL && errno == err, "%s: open gave %p, errno %d (%s), expected %d (%s)", what,
              (void *)h, errno, strerror(errno), err, strerror(err));
    if (h != NULL)
        rtm_shared_close(h);
}

/* Damages one 32-bit field of the frozen prefix, expects err, repairs it. */
static void damage_field(const char *name, size_t at, uint32_t value, int err, const char *what)
{
    size_t bytes;
    unsigned char *m = raw_map(name, &bytes);
    uint32_t saved;
    memcpy(&saved, m + at, 4);
    memcpy(m + at, &value, 4);
    expect_open_error(name, err, what);
    memcpy(m + at, &saved, 4);
    munmap(m, bytes);
}

static void test_bad_objects(void)
{
    const char *name = heap_name("bad");
    (void)rtm_shared_unlink(name);
    raw_object(name, 0, 0);
    expect_open_error(name, EINVAL, "empty object");
    raw_object(name, 16, 0x5a);
    expect_open_error(name, EINVAL, "16-byte object");
    raw_object(name, 64 * KiB, 0);
    expect_open_error(name, EINVAL, "zeros");
    raw_object(name, 64 * KiB, 0xff);
    expect_open_error(name, EINVAL, "0xff bytes");
    CHECK(rtm_shared_unlink(name) == 0);

    rtm_heap *h = rtm_shared_create(name, 64 * KiB, NULL);
    REQUIRE(h != NULL);
    void *keep = rtm_alloc(h, 100);
    REQUIRE(keep != NULL);
    /* The frozen prefix: kind(0) flags(4) magic(8) version(16) abi(20)
     * bytes(24). */
    damage_field(name, 16, 2u, EPROTO, "layout version 2");
    damage_field(name, 20, 0x12345604u, EPROTO, "other ABI");
    {
        size_t bytes;
        unsigned char *m = raw_map(name, &bytes);
        unsigned char magic[8], swapped[8];
        memcpy(magic, m + 8, 8);
        for (int i = 0; i < 8; i++)
            swapped[i] = magic[7 - i];
        memcpy(m + 8, swapped, 8);
        expect_open_error(name, EPROTO, "byte-swapped magic");
        m[8] ^= 1u;
        expect_open_error(name, EINVAL, "foreign magic");
        memcpy(m + 8, magic, 8);
        munmap(m, bytes);
    }
    damage_field(name, 0, 0x31534c54u, EINVAL, "kind word of a plain TLSF heap");
    {
        /* The inner heap (at the guard's "inner" offset, byte 56) of an
         * older TLSF layout, whose free-list links mean something else. */
        size_t bytes;
        unsigned char *m = raw_map(name, &bytes);
        int64_t inner;
        memcpy(&inner, m + 56, sizeof inner);
        munmap(m, bytes);
        REQUIRE(inner > 0 && (size_t)inner < bytes);
        damage_field(name, (size_t)inner, 0x32534c54u, EPROTO, "inner TLSF of layout 2");
        damage_field(name, (size_t)inner, 0x31534c54u, EPROTO, "inner TLSF of layout 1");
        damage_field(name, (size_t)inner, 0x31475244u, EINVAL, "inner heap of another kind");
    }
    damage_field(name, 4, 0u, EINVAL, "flags without SHARED");
    damage_field(name, 24, 4096u, EINVAL, "recorded size differs");
    rtm_heap *ok = rtm_shared_open(name);
    CHECK(ok != NULL);
    if (ok != NULL)
        rtm_shared_close(ok);
    /* Truncated and grown objects. */
    int fd = shm_open(name, O_RDWR, 0);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, (off_t)(128 * KiB)) == 0);
    expect_open_error(name, EINVAL, "grown object");
    REQUIRE(ftruncate(fd, (off_t)(64 * KiB)) == 0);
    close(fd);
    CHECK(rtm_heap_check(h) == 0);
    rtm_free(h, keep);
    rtm_shared_close(h);
    /* A truncated heap (shorter than its header, then shorter than its
     * recorded size) */
    fd = shm_open(name, O_RDWR, 0);
    REQUIRE(fd >= 0);
    REQUIRE(ftruncate(fd, (off_t)(32 * KiB)) == 0);
    expect_open_error(name, EINVAL, "truncated to half");
    REQUIRE(ftruncate(fd, 40) == 0);
    expect_open_error(name, EINVAL, "truncated to 40 bytes");
    close(fd);
    CHECK(rtm_shared_unlink(name) == 0);
}

/* A heap whose creator has not finished (ready word clear): EAGAIN. */
static void test_half_created(void)
{
    const char *name = heap_name("half");
    (void)rtm_shared_unlink(name);
    rtm_heap *h = rtm_shared_create(name, 64 * KiB, NULL);
    REQUIRE(h != NULL);
    size_t bytes;
    unsigned char *m = raw_map(name, &bytes);
    /* ready follows algorithm[24], inner and overhead (8 each) */
    size_t at = 32 + 24 + 8 + 8;
    uint32_t saved;
    memcpy(&saved, m + at, 4);
    CHECK(saved == 0x59444552u);
    memset(m + at, 0, 4);
    expect_open_error(name, EAGAIN, "half-created heap");
    memcpy(m + at, &saved, 4);
    munmap(m, bytes);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(name) == 0);
}

/* --- two mappings, offsets ----------------------------------------------- */

static void test_two_mappings(void)
{
    const char *name = heap_name("two");
    (void)rtm_shared_unlink(name);
    rtm_heap *a = rtm_shared_create(name, 256 * KiB, NULL);
    rtm_heap *b = rtm_shared_open(name);
    REQUIRE(a != NULL && b != NULL);
    CHECK(a != b);
    CHECK(strcmp(rtm_heap_algorithm(b), "tlsf") == 0);
    char *pa = rtm_alloc(a, 1000);
    REQUIRE(pa != NULL);
    for (int i = 0; i < 1000; i++)
        pa[i] = (char)(i * 13);
    rtm_offset off = rtm_shared_offset(a, pa);
    CHECK(off != 0);
    char *pb = rtm_shared_pointer(b, off);
    CHECK(pb != NULL && pb != pa);
    CHECK(pb != NULL && memcmp(pa, pb, 1000) == 0);
    CHECK(rtm_shared_offset(b, pb) == off);
    CHECK(rtm_usable_size(b, pb) == rtm_usable_size(a, pa));
    /* Blocks link to each other by offsets. */
    rtm_offset *list = rtm_alloc(b, 4 * sizeof *list);
    REQUIRE(list != NULL);
    list[0] = off;
    rtm_offset *list_a = rtm_shared_pointer(a, rtm_shared_offset(b, list));
    CHECK(list_a != NULL && rtm_shared_pointer(a, list_a[0]) == pa);
    rtm_stats sa = rtm_heap_stats(a), sb = rtm_heap_stats(b);
    CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
    CHECK(sa.live_blocks == 2);
    rtm_free(b, pb); /* allocated through a, freed through b */
    rtm_free(a, list_a);
    CHECK(rtm_heap_stats(a).live_blocks == 0);
    CHECK(rtm_heap_check(b) == 0);

    /* Offsets and pointers, bad inputs. */
    int local;
    CHECK(rtm_shared_offset(a, NULL) == 0);
    errno = 0;
    CHECK(rtm_shared_offset(a, &local) == 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_offset(NULL, pa) == 0);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_shared_pointer(a, 0) == NULL);
    errno = 0;
    CHECK(rtm_shared_pointer(a, sa.arena_bytes) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_pointer(a, UINT64_MAX) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_pointer(NULL, 64) == NULL);
    CHECK_ERRNO(EINVAL);
    static unsigned char region[64 * 1024];
    rtm_heap *plain = rtm_heap_create("tlsf", region, sizeof region);
    errno = 0;
    CHECK(rtm_shared_offset(plain, region + 100) == 0);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    rtm_shared_close(plain);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_heap_check(plain) == 0);
    rtm_shared_close(NULL);
    rtm_shared_close(b);
    rtm_heap_destroy(a); /* = close for a shared heap */
    CHECK(rtm_shared_unlink(name) == 0);
}

/* --- generic calls ------------------------------------------------------- */

static void test_generic_calls(void)
{
    const char *name = heap_name("generic");
    (void)rtm_shared_unlink(name);
    rtm_heap *h = rtm_shared_create(name, 512 * KiB, NULL);
    REQUIRE(h != NULL);
    recorder_install();
    rtm_stats st0 = rtm_heap_stats(h);
    CHECK(st0.arena_bytes == 512 * KiB && st0.used_bytes == 0);

    char *a = rtm_alloc(h, 0); /* a unique minimum block */
    CHECK(a != NULL && ((uintptr_t)a & 7u) == 0);
    for (size_t al = 16; al <= 8192; al *= 2) {
        char *p = rtm_aligned_alloc(h, al, 100);
        CHECK_MSG(p != NULL && ((uintptr_t)p & (al - 1u)) == 0, "alignment %zu", al);
        if (p == NULL)
            continue;
        memset(p, 0x3c, 100);
        char *q = rtm_realloc(h, p, 5000); /* moves or grows: keeps alignment */
        CHECK(q != NULL && ((uintptr_t)q & (al - 1u)) == 0);
        if (q != NULL) {
            CHECK(q[0] == 0x3c && q[99] == 0x3c);
            rtm_free(h, q);
        }
    }
    errno = 0;
    CHECK(rtm_aligned_alloc(h, 24, 8) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_alloc(h, SIZE_MAX) == NULL);
    CHECK_ERRNO(ENOMEM);
    errno = 0;
    CHECK(rtm_alloc(h, SIZE_MAX - 4u) == NULL);
    CHECK_ERRNO(ENOMEM);
    CHECK(rtm_heap_stats(h).failed_allocs == 2);

    char *b = rtm_alloc(h, 100);
    REQUIRE(b != NULL);
    CHECK(rtm_usable_size(h, b) >= 100);
    memset(b, 0x77, 100);
    char *c = rtm_realloc(h, b, 40); /* shrink in place */
    CHECK(c == b);
    c = rtm_realloc(h, c, 20000);
    REQUIRE(c != NULL);
    CHECK(c[0] == 0x77 && c[39] == 0x77);
    CHECK(rtm_realloc(h, c, 0) == NULL); /* frees */
    c = rtm_realloc(h, NULL, 10);        /* allocates */
    CHECK(c != NULL);

    /* Misuse: reported, refused, heap untouched. */
    rtm_stats before = rtm_heap_stats(h);
    int local[4] = {0};
    recorder_reset();
    errno = 0;
    rtm_free(h, &local[2]);
    CHECK_ERRNO(EINVAL);
    CHECK(recorder()->by_kind[RTM_ERR_FOREIGN_POINTER] == 1);
    errno = 0;
    rtm_free(h, c + 8); /* inside a block */
    CHECK_ERRNO(EINVAL);
    rtm_free(h, c);
    recorder_reset();
    errno = 0;
    rtm_free(h, c); /* double free */
    CHECK_ERRNO(EINVAL);
    CHECK(recorder()->calls == 1);
    errno = 0;
    CHECK(rtm_realloc(h, &local[2], 10) == NULL);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_usable_size(h, &local[2]) == 0);
    CHECK_ERRNO(EINVAL);
    rtm_stats after = rtm_heap_stats(h);
    CHECK(after.live_blocks == before.live_blocks - 1u);
    CHECK(rtm_heap_check(h) == 0);

    unsigned char extra[4096];
    errno = 0;
    CHECK(rtm_heap_add_pool(h, extra, sizeof extra) == -1);
    CHECK_ERRNO(ENOTSUP);
    CHECK(strcmp(rtm_heap_algorithm(h), "tlsf") == 0);
    rtm_shared_info info;
    CHECK(rtm_shared_info_get(h, &info) == 0);
    CHECK(info.bytes == 512 * KiB && info.version == RTM_SHARED_LAYOUT_VERSION);
    CHECK(info.creator_pid == (uint32_t)getpid() && info.recoveries == 0);
    errno = 0;
    CHECK(rtm_shared_info_get(h, NULL) == -1);
    CHECK_ERRNO(EINVAL);

    CHECK(rtm_heap_reset(h) == 0);
    rtm_stats st = rtm_heap_stats(h);
    CHECK(st.live_blocks == 0 && st.used_bytes == 0 && st.peak_used_bytes == 0);
    CHECK(st.free_bytes == st0.free_bytes && st.largest_free == st0.largest_free);
    CHECK(rtm_heap_check(h) == 0);
    rtm_set_error_handler(NULL, NULL);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(name) == 0);
}

/* The shared model rig: random alloc/aligned/realloc/free with contents,
 * exact stats, walk and check verified against a shadow. */
static void test_model_rig(void)
{
    const char *name = heap_name("rig");
    (void)rtm_shared_unlink(name);
    const size_t sizes[] = {16 * KiB, 1024 * KiB};
    for (size_t i = 0; i < 2; i++) {
        rtm_heap *h = rtm_shared_create(name, sizes[i], NULL);
        REQUIRE(h != NULL);
        rig_ops ops = rig_ops_heap(h);
        ops.name = "pshared";
        ops.block_overhead = RTM_TLSF_HEADER_BYTES + RTM_SHARED_TAG_BYTES;
        ops.region_count = 1;
        ops.regions[0].base = h;
        ops.regions[0].bytes = sizes[i];
        rig_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.seed = 7000u + i;
        cfg.steps = 20000;
        cfg.max_request = sizes[i] / 8u;
        cfg.check_every = 97;
        cfg.replay = "build/tests/test_shared_api";
        rig_result res;
        CHECK(rig_run(&ops, &cfg, &res) == 0);
        CHECK(res.enomem > 0 && res.realloc_moved > 0 && res.free_alls > 0);
        rtm_shared_close(h);
        CHECK(rtm_shared_unlink(name) == 0);
    }
}

/* --- owners --------------------------------------------------------------- */

static void test_owners_and_reclaim(void)
{
    const char *name = heap_name("owners");
    (void)rtm_shared_unlink(name);
    rtm_heap *h = rtm_shared_create(name, 256 * KiB, NULL);
    REQUIRE(h != NULL);
    rtm_stats st0 = rtm_heap_stats(h);
    rtm_offset *box = rtm_alloc(h, 2 * sizeof *box); /* the child leaves an offset here */
    REQUIRE(box != NULL);
    box[0] = 0;
    void *mine = rtm_alloc(h, 300);
    REQUIRE(mine != NULL);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        rtm_heap *c = rtm_shared_open(name); /* attach by name, other address */
        if (c == NULL)
            _exit(3);
        for (int i = 0; i < 10; i++)
            if (rtm_alloc(c, (size_t)(50 + i)) == NULL)
                _exit(4);
        void *gift = rtm_alloc(c, 64);
        if (gift == NULL)
            _exit(5);
        rtm_offset *cbox = rtm_shared_pointer(c, rtm_shared_offset(h, box));
        cbox[0] = rtm_shared_offset(c, gift);
        _exit(0); /* leaks 11 blocks */
    }
    int status;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    rtm_shared_usage use;
    CHECK(rtm_shared_owned(h, child, &use) == 0);
    CHECK(use.blocks == 11);
    CHECK(rtm_shared_owned(h, getpid(), &use) == 0);
    CHECK(use.blocks == 2);
    void *gift = rtm_shared_pointer(h, box[0]);
    CHECK(gift != NULL && rtm_usable_size(h, gift) >= 64);
    CHECK(rtm_shared_adopt(h, gift) == 0);
    errno = 0;
    CHECK(rtm_shared_adopt(h, box + 1) == -1);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_shared_owned(h, 0, &use) == 0); /* owners that no longer exist */
    CHECK(use.blocks == 10);
    CHECK(rtm_shared_reclaim(h, 0) == 10);
    CHECK(rtm_shared_reclaim(h, child) == 0);
    CHECK(rtm_shared_owned(h, getpid(), &use) == 0);
    CHECK(use.blocks == 3);
    errno = 0;
    CHECK(rtm_shared_reclaim(h, -1) == -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_owned(h, 1, NULL) == -1);
    CHECK_ERRNO(EINVAL);
    errno = 0;
    CHECK(rtm_shared_reclaim(NULL, 0) == -1);
    CHECK_ERRNO(EINVAL);
    CHECK(rtm_shared_reclaim(h, getpid()) == 3); /* everything of ours */
    rtm_stats st = rtm_heap_stats(h);
    CHECK(st.live_blocks == 0 && st.free_bytes == st0.free_bytes);
    CHECK(rtm_heap_check(h) == 0);
    rtm_shared_close(h);
    CHECK(rtm_shared_unlink(name) == 0);
}

int main(void)
{
    RUN_TEST(test_names);
    RUN_TEST(test_sizes_and_algorithms);
    RUN_TEST(test_modes);
    RUN_TEST(test_bad_objects);
    RUN_TEST(test_half_created);
    RUN_TEST(test_two_mappings);
    RUN_TEST(test_generic_calls);
    RUN_TEST(test_model_rig);
    RUN_TEST(test_owners_and_reclaim);
    return check_summary();
}
