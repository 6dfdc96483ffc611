// SPDX-License-Identifier: MIT
/*
 * os/mutex.h -- the one mutex rtmem's guarded heaps use: a POSIX mutex with
 * the priority-inheritance protocol, optionally process-shared and robust.
 *
 * Why PI: a real-time thread blocked on a heap lock held by a low-priority
 * thread must lend that thread its priority, or a medium-priority thread can
 * delay it without bound (priority inversion). Why robust (shared heaps
 * only): a process can die holding the lock; the next locker must learn it
 * (RTM_OS_OWNER_DEAD) so it can repair the heap, instead of blocking
 * forever.
 *
 * The mutex object lives inside the caller's region (for a shared heap: in
 * shared memory), so it holds no pointer: the kernel keys a process-shared
 * futex by the page it lives on, wherever each process maps that page.
 * Functions return 0 or an error number (pthread style); they never touch
 * errno, so the caller decides what the user sees.
 */
#ifndef RTM_OS_MUTEX_H
#define RTM_OS_MUTEX_H

#include <errno.h>
#include <pthread.h>

/* lock() result: the previous owner died holding the mutex; the caller now
 * owns it and must make the protected data consistent, then call
 * rtm_os_mutex_consistent() before unlocking (else the mutex becomes
 * permanently unusable: RTM_OS_NOT_RECOVERABLE for everyone). */
#define RTM_OS_OWNER_DEAD      EOWNERDEAD
#define RTM_OS_NOT_RECOVERABLE ENOTRECOVERABLE

enum rtm_os_mutex_flags {
    RTM_OS_MUTEX_PSHARED = 1u << 0, /* usable from every process mapping it */
    RTM_OS_MUTEX_ROBUST = 1u << 1   /* the owner's death is reported        */
};

typedef struct rtm_os_mutex {
    pthread_mutex_t m;
} rtm_os_mutex;

/* Initialises a PI mutex with the given flags. 0, or an error number
 * (ENOTSUP when the system has no PI or robust futexes). */
int rtm_os_mutex_init(rtm_os_mutex *m, unsigned flags);
/* 0, RTM_OS_OWNER_DEAD (locked, data to repair), or an error number. */
int rtm_os_mutex_lock(rtm_os_mutex *m);
int rtm_os_mutex_unlock(rtm_os_mutex *m);
/* After RTM_OS_OWNER_DEAD: the data is repaired; later lockers get 0. */
int rtm_os_mutex_consistent(rtm_os_mutex *m);
int rtm_os_mutex_destroy(rtm_os_mutex *m);

#endif /* RTM_OS_MUTEX_H */
