// SPDX-License-Identifier: MIT
/*
 * malloc/dropin.c -- the names a malloc replacement must define (glibc
 * manual, "Replacing malloc"): malloc, free, calloc, realloc,
 * reallocarray, posix_memalign, aligned_alloc, memalign, valloc, pvalloc,
 * malloc_usable_size, malloc_trim, and C++ operator new/delete, every one
 * served by the same allocator as the rtm_malloc_ API. Built into
 * librtmem-malloc.so (LD_PRELOAD) and librtmem-malloc.a (static linking),
 * never into librtmem.
 *
 * The hot paths are inlined from fastpath.h, so malloc() and free() are the
 * fast paths themselves, not calls to rtm_malloc().
 *
 * C++ operator new cannot be written in C as the standard wants it: on
 * failure it must call std::get_new_handler()'s handler and throw
 * std::bad_alloc, and C can neither name the handler nor throw. So on
 * failure ours forwards the request to the next definition in link order
 * (dlsym RTLD_NEXT: libstdc++'s own operator new), which calls malloc --
 * ours -- again, runs the new-handler and throws as the standard says.
 * When there is no such definition (no libstdc++ loaded, or a static link
 * where ours is the only one) it writes a message and aborts, as
 * tcmalloc's C shim does; the nothrow forms simply return NULL.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "malloc/fastpath.h"
#include "os/pages.h"

#define EXPORT __attribute__((visibility("default")))

/* Prototypes for -Wmissing-prototypes; <stdlib.h> declares most, but not
 * every libc declares every name, and these must match glibc's. */
EXPORT void *malloc(size_t size);
EXPORT void free(void *ptr);
EXPORT void *calloc(size_t n, size_t size);
EXPORT void *realloc(void *ptr, size_t size);
EXPORT void *reallocarray(void *ptr, size_t n, size_t size);
EXPORT int posix_memalign(void **out, size_t alignment, size_t size);
EXPORT void *aligned_alloc(size_t alignment, size_t size);
EXPORT void *memalign(size_t alignment, size_t size);
EXPORT void *valloc(size_t size);
EXPORT void *pvalloc(size_t size);
EXPORT size_t malloc_usable_size(void *ptr);
EXPORT int malloc_trim(size_t pad);

void *malloc(size_t size) { return fast_malloc(size); }

void free(void *ptr) { fast_free(ptr); }

void *calloc(size_t n, size_t size) { return rtm_malloc_calloc(n, size); }

void *realloc(void *ptr, size_t size) { return rtm_malloc_realloc(ptr, size); }

void *reallocarray(void *ptr, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return rtm_malloc_realloc(ptr, total);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!rtm_is_pow2(alignment) || alignment % sizeof(void *) != 0)
        return EINVAL;
    int saved = errno;
    void *p = rtm_malloc_aligned_alloc(alignment, size);
    errno = saved; /* POSIX: the result is the return value, errno untouched */
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    return rtm_malloc_aligned_alloc(alignment, size);
}

/* glibc's memalign rounds a non-power-of-two alignment up to one. */
void *memalign(size_t alignment, size_t size)
{
    if (alignment > ((size_t)1 << (sizeof(size_t) * 8u - 2u))) {
        errno = EINVAL;
        return NULL;
    }
    size_t a = MIN_ALIGN;
    while (a < alignment)
        a <<= 1;
    return rtm_malloc_aligned_alloc(a, size);
}

void *valloc(size_t size) { return rtm_malloc_aligned_alloc(rtm_os_page_size(), size); }

void *pvalloc(size_t size)
{
    size_t ps = rtm_os_page_size();
    size_t rounded = (size + ps - 1u) & ~(ps - 1u);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return rtm_malloc_aligned_alloc(ps, rounded ? rounded : ps);
}

size_t malloc_usable_size(void *ptr) { return rtm_malloc_usable_size(ptr); }

int malloc_trim(size_t pad)
{
    (void)pad;
    return rtm_malloc_trim() != 0;
}

/* --- C++ operators new and delete ---------------------------------------------- */

/* Itanium C++ ABI names; size_t mangles as m (unsigned long) on LP64 and j
 * (unsigned int) on ILP32. */
#if __SIZEOF_SIZE_T__ == 8
#define SZ "m"
#else
#define SZ "j"
#endif
#define NOTHROW "RKSt9nothrow_t"
#define ALIGNV  "St11align_val_t"

typedef void *(*new_fn)(size_t);
typedef void *(*new_aligned_fn)(size_t, size_t);

RTM_COLD static void new_abort(void)
{
    static const char msg[] = "rtmem: operator new: out of memory and no C++ runtime to throw "
                              "std::bad_alloc; aborting\n";
    ssize_t w = write(2, msg, sizeof msg - 1u);
    (void)w;
    abort();
}

/* The next operator new in link order (libstdc++'s), which retries malloc,
 * runs the new-handler and throws. Function pointers from dlsym go through
 * memcpy: ISO C has no conversion between object and function pointers. */
RTM_COLD static void *new_failed(const char *symbol, size_t size, size_t align)
{
    void *sym = dlsym(RTLD_NEXT, symbol);
    if (sym == NULL)
        new_abort();
    if (align == 0) {
        new_fn f;
        memcpy(&f, &sym, sizeof f);
        return f(size);
    }
    new_aligned_fn f;
    memcpy(&f, &sym, sizeof f);
    return f(size, align);
}

EXPORT void *rtmm_new(size_t size) __asm__("_Znw" SZ);
EXPORT void *rtmm_new_array(size_t size) __asm__("_Zna" SZ);
EXPORT void *rtmm_new_nothrow(size_t size, const void *tag) __asm__("_Znw" SZ NOTHROW);
EXPORT void *rtmm_new_array_nothrow(size_t size, const void *tag) __asm__("_Zna" SZ NOTHROW);
EXPORT void *rtmm_new_aligned(size_t size, size_t align) __asm__("_Znw" SZ ALIGNV);
EXPORT void *rtmm_new_array_aligned(size_t size, size_t align) __asm__("_Zna" SZ ALIGNV);
EXPORT void *rtmm_new_aligned_nothrow(size_t size, size_t align,
                                      const void *tag) __asm__("_Znw" SZ ALIGNV NOTHROW);
EXPORT void *rtmm_new_array_aligned_nothrow(size_t size, size_t align,
                                            const void *tag) __asm__("_Zna" SZ ALIGNV NOTHROW);
EXPORT void rtmm_delete(void *p) __asm__("_ZdlPv");
EXPORT void rtmm_delete_array(void *p) __asm__("_ZdaPv");
EXPORT void rtmm_delete_sized(void *p, size_t size) __asm__("_ZdlPv" SZ);
EXPORT void rtmm_delete_array_sized(void *p, size_t size) __asm__("_ZdaPv" SZ);
EXPORT void rtmm_delete_nothrow(void *p, const void *tag) __asm__("_ZdlPv" NOTHROW);
EXPORT void rtmm_delete_array_nothrow(void *p, const void *tag) __asm__("_ZdaPv" NOTHROW);
EXPORT void rtmm_delete_aligned(void *p, size_t align) __asm__("_ZdlPv" ALIGNV);
EXPORT void rtmm_delete_array_aligned(void *p, size_t align) __asm__("_ZdaPv" ALIGNV);
EXPORT void rtmm_delete_sized_aligned(void *p, size_t size,
                                      size_t align) __asm__("_ZdlPv" SZ ALIGNV);
EXPORT void rtmm_delete_array_sized_aligned(void *p, size_t size,
                                            size_t align) __asm__("_ZdaPv" SZ ALIGNV);
EXPORT void rtmm_delete_aligned_nothrow(void *p, size_t align,
                                        const void *tag) __asm__("_ZdlPv" ALIGNV NOTHROW);
EXPORT void rtmm_delete_array_aligned_nothrow(void *p, size_t align,
                                              const void *tag) __asm__("_ZdaPv" ALIGNV NOTHROW);

void *rtmm_new(size_t size)
{
    void *p = fast_malloc(size);
    return RTM_LIKELY(p != NULL) ? p : new_failed("_Znw" SZ, size, 0);
}
void *rtmm_new_array(size_t size)
{
    void *p = fast_malloc(size);
    return RTM_LIKELY(p != NULL) ? p : new_failed("_Zna" SZ, size, 0);
}
void *rtmm_new_nothrow(size_t size, const void *tag)
{
    (void)tag;
    return fast_malloc(size);
}
void *rtmm_new_array_nothrow(size_t size, const void *tag)
{
    (void)tag;
    return fast_malloc(size);
}
void *rtmm_new_aligned(size_t size, size_t align)
{
    void *p = rtm_malloc_aligned_alloc(align, size);
    return RTM_LIKELY(p != NULL) ? p : new_failed("_Znw" SZ ALIGNV, size, align);
}
void *rtmm_new_array_aligned(size_t size, size_t align)
{
    void *p = rtm_malloc_aligned_alloc(align, size);
    return RTM_LIKELY(p != NULL) ? p : new_failed("_Zna" SZ ALIGNV, size, align);
}
void *rtmm_new_aligned_nothrow(size_t size, size_t align, const void *tag)
{
    (void)tag;
    return rtm_malloc_aligned_alloc(align, size);
}
void *rtmm_new_array_aligned_nothrow(size_t size, size_t align, const void *tag)
{
    (void)tag;
    return rtm_malloc_aligned_alloc(align, size);
}

void rtmm_delete(void *p) { fast_free(p); }
void rtmm_delete_array(void *p) { fast_free(p); }
void rtmm_delete_sized(void *p, size_t size)
{
    (void)size;
    fast_free(p);
}
void rtmm_delete_array_sized(void *p, size_t size)
{
    (void)size;
    fast_free(p);
}
void rtmm_delete_nothrow(void *p, const void *tag)
{
    (void)tag;
    fast_free(p);
}
void rtmm_delete_array_nothrow(void *p, const void *tag)
{
    (void)tag;
    fast_free(p);
}
void rtmm_delete_aligned(void *p, size_t align)
{
    (void)align;
    fast_free(p);
}
void rtmm_delete_array_aligned(void *p, size_t align)
{
    (void)align;
    fast_free(p);
}
void rtmm_delete_sized_aligned(void *p, size_t size, size_t align)
{
    (void)size;
    (void)align;
    fast_free(p);
}
void rtmm_delete_array_sized_aligned(void *p, size_t size, size_t align)
{
    (void)size;
    (void)align;
    fast_free(p);
}
void rtmm_delete_aligned_nothrow(void *p, size_t align, const void *tag)
{
    (void)align;
    (void)tag;
    fast_free(p);
}
void rtmm_delete_array_aligned_nothrow(void *p, size_t align, const void *tag)
{
    (void)align;
    (void)tag;
    fast_free(p);
}
