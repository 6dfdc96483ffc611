// SPDX-License-Identifier: MIT
/*
 * tests/common/rng.h -- the unit tests' random numbers: splitmix64 (Steele,
 * Lea, Flood, 2014), one word of state, the same sequence on every libc, so
 * a printed seed replays a test exactly.
 */
#ifndef RTM_TESTS_RNG_H
#define RTM_TESTS_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng {
    uint64_t s;
} rng;

static inline uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0 (modulo bias below n / 2^64). */
static inline size_t rng_below(rng *r, size_t n) { return (size_t)(rng_next(r) % n); }

/* Sizes spread evenly over powers of two up to 2^max_log2: small requests
 * dominate as they do in real programs, but every class is reached. */
static inline size_t rng_size(rng *r, unsigned max_log2)
{
    unsigned bits = (unsigned)rng_below(r, max_log2 + 1u);
    return (size_t)(rng_next(r) & (((uint64_t)1 << bits) - 1u));
}

#endif /* RTM_TESTS_RNG_H */
