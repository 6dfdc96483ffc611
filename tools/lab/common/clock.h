// SPDX-License-Identifier: MIT
/*
 * clock.h -- the calibrated tick clock used for per-operation timing.
 *
 * On x86 with an invariant TSC the clock is `lfence; rdtsc; lfence`: the
 * cheapest clock x86 has (clock_gettime() through the vDSO reads the same
 * counter and adds its own conversion), never a system call. The fences keep the measured call from
 * leaking out of the interval (the CPU may otherwise start it before the first read or retire it
 * after the second); the "memory" clobber does the same for the compiler. Ticks are converted to
 * nanoseconds with a factor calibrated against CLOCK_MONOTONIC. Elsewhere, or with --clock
 * monotonic, ticks are CLOCK_MONOTONIC nanoseconds.
 *
 * The clock's own cost is the median of many empty intervals (two reads back
 * to back); every per-operation sample has it subtracted, clamped at zero.
 * That is the method of the Linux memtim kernel module (rdtsc with its own
 * cost calibrated and subtracted; docs/METHODS.md).
 */
#ifndef RTM_BENCH_CLOCK_H
#define RTM_BENCH_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

typedef struct bench_clock {
    int use_tsc;             /* 1: rdtsc ticks; 0: CLOCK_MONOTONIC ns       */
    double ns_per_tick;      /* 1.0 for CLOCK_MONOTONIC                     */
    uint64_t cost_ticks;     /* median empty interval: subtracted per sample */
    uint64_t cost_min_ticks; /* smallest empty interval seen, for the report */
} bench_clock;

static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#define BENCH_HAVE_TSC 1
static inline uint64_t tsc_read(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
#else
#define BENCH_HAVE_TSC 0
#endif

static inline uint64_t clock_ticks(const bench_clock *c)
{
#if BENCH_HAVE_TSC
    if (c->use_tsc)
        return tsc_read();
#endif
    (void)c;
    return mono_ns();
}

/* An interval in ticks with the clock's cost taken off, never negative. */
static inline uint64_t clock_net(const bench_clock *c, uint64_t t0, uint64_t t1)
{
    uint64_t d = t1 - t0;
    return d > c->cost_ticks ? d - c->cost_ticks : 0;
}

/* --- clock.c ----------------------------------------------------------- */

/* 1 when this CPU has an invariant TSC (cpuid 0x80000007 EDX bit 8). */
int clock_tsc_usable(void);
/* Calibrates ns_per_tick (about 100 ms) and the clock cost. want_tsc: use
 * the TSC if usable. */
void clock_calibrate(bench_clock *c, int want_tsc);
/* Median and minimum cost of one clock_gettime(CLOCK_MONOTONIC) pair, ns. */
void clock_monotonic_cost(uint64_t *median_ns, uint64_t *min_ns);
/* One line saying which clock is used and what is subtracted. */
void clock_describe(const bench_clock *c, char *buf, size_t n);

#endif /* RTM_BENCH_CLOCK_H */
