// SPDX-License-Identifier: MIT
/*
 * os/shm.c -- POSIX implementation of os/shm.h: shm_open, ftruncate, mmap,
 * shm_unlink, getpid, kill(pid, 0).
 *
 * The segment is mapped MAP_SHARED at whatever address the kernel picks;
 * the heap inside it holds offsets only, so each process may see it
 * elsewhere. The file descriptor is closed right after mmap: the mapping
 * keeps the object alive, and no descriptor leaks into exec'd children.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "os/shm.h"

/* "name" or "/name" -> "/name" in buf (the caller validated the length). */
static const char *posix_name(const char *name, char *buf, size_t size)
{
    if (name[0] == '/')
        return name;
    size_t n = strlen(name);
    if (n + 2u > size)
        return NULL;
    buf[0] = '/';
    memcpy(buf + 1, name, n + 1u);
    return buf;
}

#define NAME_BUF (RTM_OS_SHM_NAME_MAX + 2u)

int rtm_os_shm_create(const char *name, size_t bytes, unsigned mode, void **map)
{
    char buf[NAME_BUF];
    const char *pname = posix_name(name, buf, sizeof buf);
    if (pname == NULL || (off_t)bytes < 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = shm_open(pname, O_RDWR | O_CREAT | O_EXCL, (mode_t)mode);
    if (fd < 0)
        return -1;
    void *m = MAP_FAILED;
    /* shm_open's mode passes through the umask; the caller asked for these
     * exact bits (a group-shared heap under the usual umask 022 would
     * otherwise lose its group write bit). */
    if (fchmod(fd, (mode_t)mode) == 0 && ftruncate(fd, (off_t)bytes) == 0)
        m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int err = errno;
    (void)close(fd);
    if (m == MAP_FAILED) {
        (void)shm_unlink(pname);
        errno = err;
        return -1;
    }
    *map = m;
    return 0;
}

int rtm_os_shm_open(const char *name, size_t min_bytes, void **map, size_t *bytes)
{
    char buf[NAME_BUF];
    const char *pname = posix_name(name, buf, sizeof buf);
    if (pname == NULL) {
        errno = EINVAL;
        return -1;
    }
    int fd = shm_open(pname, O_RDWR, 0);
    if (fd < 0)
        return -1;
    struct stat st;
    void *m = MAP_FAILED;
    int err = EINVAL;
    if (fstat(fd, &st) != 0) {
        err = errno;
    } else if (st.st_size >= (off_t)min_bytes && (uintmax_t)st.st_size <= SIZE_MAX) {
        m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        err = errno;
    }
    (void)close(fd);
    if (m == MAP_FAILED) {
        errno = err;
        return -1;
    }
    *map = m;
    *bytes = (size_t)st.st_size;
    return 0;
}

int rtm_os_shm_unmap(void *map, size_t bytes) { return munmap(map, bytes); }

int rtm_os_shm_unlink(const char *name)
{
    char buf[NAME_BUF];
    const char *pname = posix_name(name, buf, sizeof buf);
    if (pname == NULL) {
        errno = EINVAL;
        return -1;
    }
    return shm_unlink(pname);
}

/* --- process identity --------------------------------------------------- */

/* getpid() is a system call on current glibc; the heap tags every block
 * with its owner, so the id is cached. A forked child must not inherit the
 * parent's id: the atfork handler clears the cache in the child. Atomic
 * because any thread may fill it. */
static atomic_uint_least32_t pid_cache;
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;

static void pid_forget(void) { atomic_store_explicit(&pid_cache, 0u, memory_order_relaxed); }
static void pid_register(void) { (void)pthread_atfork(NULL, NULL, pid_forget); }

uint32_t rtm_os_pid(void)
{
    uint32_t pid = (uint32_t)atomic_load_explicit(&pid_cache, memory_order_relaxed);
    if (pid != 0)
        return pid;
    (void)pthread_once(&pid_once, pid_register);
    pid = (uint32_t)getpid();
    atomic_store_explicit(&pid_cache, pid, memory_order_relaxed);
    return pid;
}

int rtm_os_pid_alive(uint32_t pid)
{
    if (pid == 0 || pid > (uint32_t)INT32_MAX)
        return 0;
    int saved = errno;
    int alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
    errno = saved;
    return alive;
}
