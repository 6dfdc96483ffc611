// SPDX-License-Identifier: MIT
/*
 * os/thread.h -- the thread services the multi-threaded heap (src/mt/)
 * needs from the OS: a hook run when a thread exits (pthread keys), one
 * process-wide lock for the rare bookkeeping that spans heaps, and a way to
 * wait a little that lets any other thread run.
 *
 * None of these is on a real-time path: they serve attach, thread exit,
 * create and destroy, and the pause that rtm_heap_check and friends make
 * while an owner finishes its call (src/mt/mt_whole.c).
 */
#ifndef RTM_OS_THREAD_H
#define RTM_OS_THREAD_H

/* Makes exit_fn(arg) run when the calling thread exits (not at process
 * exit), once; a later call of this thread replaces arg. exit_fn is the
 * same for every caller of the process (the first one given is kept).
 * 0, or an error number. */
int rtm_os_thread_on_exit(void (*exit_fn)(void *arg), void *arg);

/* The process-wide lock (a plain mutex; never held across a heap call). */
void rtm_os_global_lock(void);
void rtm_os_global_unlock(void);

/* Waits a little: round `round` of a wait loop. The first rounds yield the
 * CPU (sched_yield); later ones sleep 50 us, so a waiter of higher
 * SCHED_FIFO priority than the thread it waits for lets that thread run on
 * a shared CPU, which a yield alone would not. */
void rtm_os_thread_backoff(unsigned round);

#endif /* RTM_OS_THREAD_H */
