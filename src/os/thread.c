// SPDX-License-Identifier: MIT
/*
 * os/thread.c -- os/thread.h on POSIX: a pthread key whose destructor is the
 * exit hook, a static mutex, sched_yield and nanosleep.
 */
#define _POSIX_C_SOURCE 200809L

#include "os/thread.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static int key_error;
static void (*exit_hook)(void *);

static void run_exit_hook(void *arg)
{
    if (exit_hook != NULL && arg != NULL)
        exit_hook(arg);
}

static void make_key(void) { key_error = pthread_key_create(&exit_key, run_exit_hook); }

int rtm_os_thread_on_exit(void (*exit_fn)(void *arg), void *arg)
{
    (void)pthread_once(&key_once, make_key);
    if (key_error != 0)
        return key_error;
    rtm_os_global_lock();
    if (exit_hook == NULL)
        exit_hook = exit_fn;
    rtm_os_global_unlock();
    return pthread_setspecific(exit_key, arg);
}

static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;

void rtm_os_global_lock(void) { (void)pthread_mutex_lock(&global); }
void rtm_os_global_unlock(void) { (void)pthread_mutex_unlock(&global); }

void rtm_os_thread_backoff(unsigned round)
{
    if (round < 64u) {
        (void)sched_yield();
        return;
    }
    struct timespec nap = {0, 50000};
    (void)nanosleep(&nap, NULL);
}
