// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/fuzz_input.h -- how every fuzz target reads its input: a
 * cursor over libFuzzer's bytes that hands out small integers from the
 * front. An exhausted input reads as zeros, so every byte string is a valid
 * program and a truncated one is simply a shorter program (libFuzzer's
 * mutations then keep meaning something).
 *
 * Header-only: each target is one translation unit plus the engine it uses.
 */
#ifndef RTM_FUZZ_INPUT_H
#define RTM_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct fz_in {
    const uint8_t *p;
    size_t n;
} fz_in;

static inline int fz_left(const fz_in *in) { return in->n > 0; }

static inline uint8_t fz_u8(fz_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint16_t fz_u16(fz_in *in)
{
    uint16_t lo = fz_u8(in);
    return (uint16_t)(lo | (uint16_t)(fz_u8(in) << 8));
}

static inline uint32_t fz_u32(fz_in *in)
{
    uint32_t lo = fz_u16(in);
    return lo | ((uint32_t)fz_u16(in) << 16);
}

static inline uint64_t fz_u64(fz_in *in)
{
    uint64_t lo = fz_u32(in);
    return lo | ((uint64_t)fz_u32(in) << 32);
}

/* A size_t drawn from the whole range, with the values where arithmetic
 * breaks (0, 1, powers of two and their neighbours, the top of the range)
 * much more likely than a uniform 64-bit draw would make them. */
static inline size_t fz_wide_size(fz_in *in)
{
    uint8_t mode = fz_u8(in);
    unsigned k = (unsigned)(fz_u8(in) % (sizeof(size_t) * 8u));
    size_t p2 = (size_t)1 << k;
    switch (mode % 8u) {
    case 0:
        return (size_t)fz_u8(in);
    case 1:
        return (size_t)fz_u16(in);
    case 2:
        return p2;
    case 3:
        return p2 - 1u;
    case 4:
        return p2 + (size_t)(fz_u8(in) % 16u);
    case 5:
        return SIZE_MAX - (size_t)fz_u16(in);
    case 6:
        return (size_t)fz_u64(in);
    default:
        return (size_t)fz_u32(in);
    }
}

#endif /* RTM_FUZZ_INPUT_H */
