// SPDX-License-Identifier: MIT
/*
 * prng.h -- the benchmark's random numbers: splitmix64 (Steele, Lea, Flood,
 * "Fast splittable pseudorandom number generators", 2014).
 *
 * Why not random(): the sequence must be the same on every libc and inside
 * every child process, so that round r of each allocator replays exactly the
 * same slots and sizes from the printed seed; and the generator sits inside
 * the timed throughput loop, where splitmix64 costs a few cycles and touches
 * no memory but its one word of state.
 */
#ifndef RTM_BENCH_PRNG_H
#define RTM_BENCH_PRNG_H

#include <stdint.h>

typedef struct bench_rng {
    uint64_t state;
} bench_rng;

static inline void rng_seed(bench_rng *r, uint64_t seed) { r->state = seed; }

static inline uint64_t rng_next(bench_rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Maps 32 random bits to [0, n) by a multiply-high (Lemire): no division in
 * the hot loop; the bias is below n / 2^32, far under anything measurable. */
static inline uint32_t rng_scale32(uint32_t bits, uint32_t n)
{
    return (uint32_t)(((uint64_t)bits * n) >> 32);
}

/* Uniform in [0, n), n > 0, for the untimed memcheck draws. The modulo bias
 * is below n / 2^64. */
static inline uint64_t rng_below(bench_rng *r, uint64_t n) { return rng_next(r) % n; }

#endif /* RTM_BENCH_PRNG_H */
