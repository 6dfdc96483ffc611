// SPDX-License-Identifier: MIT
/*
 * core/bits.h -- compiler helpers every layer may use: branch hints, bit
 * scans, the errno hook. Freestanding-safe: it includes nothing from libc
 * unless the build is hosted.
 *
 * Bit scans use the compiler builtins, which become one instruction (bsr /
 * tzcnt / clz) on every target rtmem cares about; that is what keeps the
 * TLSF mapping and search loop-free.
 */
#ifndef RTM_CORE_BITS_H
#define RTM_CORE_BITS_H

/*
 * Build-time configuration. A firmware build may put its settings in a
 * header of its own and name it, as o1heap does:
 *     -DRTM_CONFIG_HEADER='"rtm_config.h"'
 * It is included here, before anything else of rtmem, so it can set any of:
 *   RTM_FREESTANDING   1: no libc, no errno (default 0: hosted)
 *   RTM_DEBUG          1: debug checks (foreign pointers, overwritten
 *                      headers) and internal assertions (default 0)
 *   RTM_ASSERT(cond)   what an internal assertion does (below)
 *   RTM_TLSF_COUNT_STEPS  1: TLSF counts its loop steps (tests only)
 *   RTM_SMALL_CODE     1: code shaped for flash over speed where the two
 *                      differ (default: 1 when compiling with -Os)
 * docs/FIRMWARE.md lists the files to copy into a build without CMake.
 */
#ifdef RTM_CONFIG_HEADER
/* cppcheck-suppress preprocessorErrorDirective ; a computed include is the point */
#include RTM_CONFIG_HEADER
#endif

#include <stddef.h>
#include <stdint.h>

#define RTM_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RTM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RTM_NOINLINE    __attribute__((noinline))
#define RTM_COLD        __attribute__((cold, noinline))
#define RTM_INLINE      static inline __attribute__((always_inline))

/* Where a hot path holds a second, inline copy of code for speed (an
 * inline validation beside the general one), a build for size keeps only
 * the general one. The default follows the compiler's -Os, since that is
 * what a firmware build asking for flash sets; a config header may choose
 * either way. */
#ifndef RTM_SMALL_CODE
#ifdef __OPTIMIZE_SIZE__
#define RTM_SMALL_CODE 1
#else
#define RTM_SMALL_CODE 0
#endif
#endif
/* A helper the fast paths inline wherever they call it (for speed): in a
 * build for size, the compiler chooses. */
#if RTM_SMALL_CODE
#define RTM_FAST_INLINE static inline
#else
#define RTM_FAST_INLINE RTM_INLINE
#endif

/* Index of the most significant set bit; x must not be 0. Written as
 * clz ^ (width - 1), which compilers fold to one bsr on x86 (the form
 * width - 1 - clz costs two more instructions). */
RTM_INLINE unsigned rtm_fls32(uint32_t x) { return (unsigned)__builtin_clz(x) ^ 31u; }
RTM_INLINE unsigned rtm_fls_size(size_t x)
{
    return (unsigned)__builtin_clzl((unsigned long)x) ^ (unsigned)(sizeof(long) * 8u - 1u);
}
/* Index of the least significant set bit; x must not be 0. */
RTM_INLINE unsigned rtm_ctz32(uint32_t x) { return (unsigned)__builtin_ctz(x); }
/* 64-bit scans: one instruction on 64-bit targets; on 32-bit ones two
 * 32-bit scans, because the builtins would call libgcc (__ctzdi2), which a
 * freestanding firmware build may not link. */
RTM_INLINE unsigned rtm_ctz64(uint64_t x)
{
    if (sizeof(long) >= 8)
        return (unsigned)__builtin_ctzl((unsigned long)x);
    return (uint32_t)x != 0 ? rtm_ctz32((uint32_t)x) : 32u + rtm_ctz32((uint32_t)(x >> 32));
}
RTM_INLINE unsigned rtm_fls64(uint64_t x)
{
    if (sizeof(long) >= 8)
        return (unsigned)__builtin_clzl((unsigned long)x) ^ 63u;
    return (x >> 32) != 0 ? 32u + rtm_fls32((uint32_t)(x >> 32)) : rtm_fls32((uint32_t)x);
}

/* Rotations; compilers turn these into one rol. rtm_rotl64(~1, n) is "all
 * bits but n" in one instruction, where ~(1 << n) takes three. */
RTM_INLINE uint32_t rtm_rotl32(uint32_t x, unsigned n)
{
    return (x << (n & 31u)) | (x >> ((32u - n) & 31u));
}
RTM_INLINE uint64_t rtm_rotl64(uint64_t x, unsigned n)
{
    return (x << (n & 63u)) | (x >> ((64u - n) & 63u));
}

RTM_INLINE int rtm_is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* errno exists only in hosted builds; freestanding cores report through
 * return values alone. */
#if defined(RTM_FREESTANDING) && RTM_FREESTANDING
#define RTM_SET_ERRNO(e) ((void)0)
#define RTM_EINVAL       22
#define RTM_ENOMEM       12
#define RTM_EFAULT       14
#define RTM_ENOTSUP      95
#else
#include <errno.h>
#define RTM_SET_ERRNO(e) (errno = (e))
#define RTM_EINVAL       EINVAL
#define RTM_ENOMEM       ENOMEM
#define RTM_EFAULT       EFAULT
#define RTM_ENOTSUP      ENOTSUP
#endif

#ifndef RTM_DEBUG
#define RTM_DEBUG 0
#endif

/* Internal invariants of the heaps (never the user's input: misuse is
 * detected and reported without asserting). Off by default and free when
 * off; on in debug builds, where a broken invariant is reported to the
 * error handler as RTM_ERR_CHECK_FAILED and then traps, because the heap's
 * memory can no longer be trusted. A build may define its own, e.g.
 * `#define RTM_ASSERT(c) configASSERT(c)` in its RTM_CONFIG_HEADER. */
void rtm_assert_failed(const char *what); /* core/error.c */
#ifndef RTM_ASSERT
#if RTM_DEBUG
#define RTM_ASSERT(cond)                                                                           \
    (RTM_LIKELY(cond) ? (void)0 : rtm_assert_failed(__FILE__ ": assertion failed: " #cond))
#else
#define RTM_ASSERT(cond) ((void)0)
#endif
#endif

#endif /* RTM_CORE_BITS_H */
