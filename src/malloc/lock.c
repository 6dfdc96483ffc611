// SPDX-License-Identifier: MIT
/*
 * malloc/lock.c -- the contended half of the spin lock (internal.h).
 *
 * Test-and-test-and-set: a waiter reads the word (shared cache line, no
 * traffic) and only tries the exchange when it reads "free". After 128
 * spins it yields the CPU, except in real-time mode, where it keeps
 * spinning: the promise there is "no system call", and every critical
 * section it waits for is bounded (a batch of at most 256 blocks, or one
 * page-heap operation on the pre-mapped arena).
 */
#include "malloc/internal.h"
#include "os/pages.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void rtmm_lock_slow(rtmm_lock *l)
{
    for (;;) {
        for (int i = 0; i < 128; i++) {
            if (!atomic_load_explicit(&l->held, memory_order_relaxed) &&
                !atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
                return;
            cpu_relax();
        }
        if (!rtmm_rt_mode)
            rtm_os_yield();
    }
}
