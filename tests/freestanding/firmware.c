// SPDX-License-Identifier: MIT
/*
 * tests/freestanding/firmware.c -- a firmware image in miniature: the
 * generic heap API over every plain algorithm, linked with -nostdlib for a
 * Cortex-M (and the host), so that the link itself proves the generic layer
 * and the heaps need nothing from a C library or an OS
 * (scripts/check-freestanding.sh builds and links it).
 *
 * The image provides what every firmware provides: an entry point, and
 * memcpy/memset/memmove (which the compiler may call for struct copies even
 * in freestanding code). It returns a status through a volatile global
 * rather than printing: there is nothing to print with. On the host the
 * script also runs it and reads the exit status.
 */
#include <stddef.h>
#include <stdint.h>

#include "rtmem.h"

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void firmware_entry(void);
int firmware_run(void);

/* Byte loops, kept out of the optimiser's pattern matching by volatile so
 * they do not become calls to themselves. */
void *memcpy(void *dst, const void *src, size_t n)
{
    volatile unsigned char *d = dst;
    const unsigned char *s = src;
    while (n-- != 0)
        *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    volatile unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n-- != 0)
            *d++ = *s++;
    } else {
        while (n-- != 0)
            d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    volatile unsigned char *d = dst;
    while (n-- != 0)
        *d++ = (unsigned char)c;
    return dst;
}

static _Alignas(16) unsigned char region[96 * 1024];
static _Alignas(16) unsigned char extra[8 * 1024];
static size_t walked;

static void count_block(void *ptr, size_t usable, int used, void *arg)
{
    (void)ptr;
    (void)usable;
    (void)used;
    (void)arg;
    walked++;
}

/* One algorithm through every generic call; 0 when all behaved. */
static int exercise(const char *name)
{
    size_t min = rtm_min_region(name);
    rtm_heap *h = rtm_heap_create(name, region, sizeof region);
    if (min == 0 || h == NULL || rtm_heap_algorithm(h) == NULL)
        return 1;
    void *a = rtm_alloc(h, 24);
    void *b = rtm_aligned_alloc(h, 16, 40);
    if (a == NULL || rtm_usable_size(h, a) < 24)
        return 2;
    memset(a, 0x5a, 24);
    a = rtm_realloc(h, a, 48);
    if (a == NULL || ((unsigned char *)a)[23] != 0x5a)
        return 3;
    walked = 0;
    if (rtm_heap_walk(h, count_block, NULL) != 0 || walked == 0)
        return 4;
    rtm_free(h, a);
    rtm_free(h, b);
    rtm_stats st = rtm_heap_stats(h);
    if (st.live_blocks != 0 || rtm_heap_check(h) != 0)
        return 5;
    /* Only TLSF takes a second region; the others refuse it. */
    int pool = rtm_heap_add_pool(h, extra, sizeof extra);
    if (pool != 0 && rtm_heap_algorithm(h)[0] == 't')
        return 6;
    if (rtm_heap_reset(h) != 0)
        return 7;
    rtm_heap_destroy(h);
    return rtm_heap_check(h) == -1 ? 0 : 8; /* destroyed: refused */
}

/* The RTM_ASSERT hook of rtm_config_tlsf_only.h: a firmware would log and
 * reset; the image records it, which fails the run. */
void firmware_assert_failed(int line);
static volatile int assert_line;
void firmware_assert_failed(int line) { assert_line = line; }

#ifndef RTM_CONFIG_HEADER
/* zsmalloc's typed API (not a generic algorithm): every call once, in the
 * full image only (the TLSF-only firmware does not compile its sources). */
static int exercise_zsmalloc(void)
{
    rtm_zspool *p = rtm_zs_create(region, sizeof region);
    if (p == NULL || rtm_zs_min_region() > sizeof region)
        return 11;
    rtm_zs_handle a = rtm_zs_malloc(p, 100), b = rtm_zs_malloc(p, 3000);
    unsigned char *d = rtm_zs_map(p, a);
    if (a == 0 || b == 0 || d == NULL)
        return 12;
    memset(d, 0x5a, 100);
    rtm_zs_unmap(p, a);
    rtm_zs_free(p, b);
    rtm_zs_free(p, b); /* refused: already freed */
    (void)rtm_zs_compact(p);
    rtm_zs_stats st = rtm_zs_stats_get(p);
    d = rtm_zs_map(p, a);
    if (st.objects != 1 || st.bytes_stored != 100 || d == NULL || d[99] != 0x5a)
        return 13;
    rtm_zs_unmap(p, a);
    rtm_zs_free(p, a);
    return rtm_zs_check(p) == 0 && rtm_zs_stats_get(p).pages_used == 0 ? 0 : 14;
}
#else
static int exercise_zsmalloc(void) { return 0; }
#endif

int firmware_run(void)
{
    int rc = rtm_version() != NULL ? 0 : 9;
    for (const char *const *name = rtm_algorithms(); *name != NULL && rc == 0; name++)
        rc = exercise(*name);
    if (rc == 0)
        rc = exercise_zsmalloc();
    return rc == 0 && assert_line != 0 ? 10 : rc;
}

volatile int firmware_status = -1;

/* The reset handler of a real image would set up the stack and .data
 * first; here the loader (or the host's kernel) already did. The kernel
 * enters with the stack 16-aligned, not as after a call: realign. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
void firmware_entry(void)
{
    firmware_status = firmware_run();
#if defined(__x86_64__) && defined(__linux__)
    /* Host: leave through the exit system call, with the status. */
    __asm__ volatile("syscall" ::"a"(60), "D"(firmware_status));
#endif
    for (;;) {
    }
}
