// SPDX-License-Identifier: MIT
/*
 * tests/firmware/flash_size_app.c -- the image scripts/flash-size.sh
 * measures a heap's flash in (docs/FIRMWARE.md, "Flash and RAM per heap"):
 * a -nostdlib Cortex-M program that creates a heap on a static region and
 * calls alloc, aligned alloc, realloc and free, through the heap's typed
 * API (SIZE_API_TYPED) or the generic one (SIZE_API_GENERIC, with
 * RTM_ALGORITHMS naming only that heap), optionally its check function
 * too (SIZE_WITH_CHECK). Built without SIZE_HEAP it is the baseline: the
 * same entry, region and memcpy/memset, no heap. What the heap adds is the
 * difference of the two images' text.
 *
 * Sizes come from volatile objects so that nothing folds away.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef SIZE_HEAP
#include <rtmem.h>
#endif

#define CAT2(a, b)     a##b
#define XCAT2(a, b)    CAT2(a, b)
#define CAT3(a, b, c)  a##b##c
#define XCAT3(a, b, c) CAT3(a, b, c)
#define STR(x)         #x
#define XSTR(x)        STR(x)
#define TYPED(f)       XCAT3(rtm_, SIZE_HEAP, _##f)

/* The C runtime's copies (every firmware has its own): left out of the
 * figure by being in the baseline too. */
void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--)
        *d++ = *s++;
    return dst;
}
void *memmove(void *dst, const void *src, size_t n) { return memcpy(dst, src, n); }
void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}
void *(*volatile keep_runtime[])(void *, const void *, size_t) = {memcpy, memmove};
void *(*volatile keep_memset)(void *, int, size_t) = memset;

static unsigned char region[16384] __attribute__((aligned(8)));
volatile size_t in_size = 100, in_align = 64;
volatile uintptr_t sink;

void size_entry(void);
void size_entry(void)
{
#if !defined(SIZE_HEAP)
    sink = (uintptr_t)region + in_size + in_align;
#elif defined(SIZE_API_TYPED)
    XCAT2(rtm_, SIZE_HEAP) *h = TYPED(create)(region, sizeof region);
    void *a = TYPED(alloc)(h, in_size);
    void *b = TYPED(aligned_alloc)(h, in_align, in_size);
    a = TYPED(realloc)(h, a, 2u * in_size);
    sink = (uintptr_t)a ^ (uintptr_t)b;
    (void)TYPED(free)(h, a);
    (void)TYPED(free)(h, b);
#ifdef SIZE_WITH_CHECK
    sink = (uintptr_t)TYPED(check)(h);
#endif
#else
    rtm_heap *h = rtm_heap_create(XSTR(SIZE_HEAP), region, sizeof region);
    void *a = rtm_alloc(h, in_size);
    void *b = rtm_aligned_alloc(h, in_align, in_size);
    a = rtm_realloc(h, a, 2u * in_size);
    sink = (uintptr_t)a ^ (uintptr_t)b;
    rtm_free(h, a);
    rtm_free(h, b);
#ifdef SIZE_WITH_CHECK
    sink = (uintptr_t)rtm_heap_check(h);
#endif
#endif
    for (;;) {
    }
}
