// SPDX-License-Identifier: MIT
/*
 * os/shm.h -- POSIX shared memory and process identity for the
 * process-shared heap (src/shared/), behind one small header so that the
 * heap's logic never calls the OS itself (docs/ARCHITECTURE.md).
 *
 * Every function returns 0 or -1 with errno set by the system call that
 * failed; names are passed as validated by the caller (shared/pshared.c)
 * and get the leading '/' POSIX wants added here when missing.
 */
#ifndef RTM_OS_SHM_H
#define RTM_OS_SHM_H

#include <stddef.h>
#include <stdint.h>

/* Longest name accepted, without the leading '/' (NAME_MAX is 255 on
 * Linux, and glibc prepends "/dev/shm/"). */
#define RTM_OS_SHM_NAME_MAX 200u

/* Creates the object `name` exclusively (EEXIST if it exists) with exactly
 * the permission bits `mode` (not masked by the umask), sizes it to `bytes`
 * and maps it read-write, shared. On failure the object is removed again. */
int rtm_os_shm_create(const char *name, size_t bytes, unsigned mode, void **map);

/* Opens and maps an existing object whole; *bytes gets its size. Objects
 * smaller than `min_bytes` are not mapped (errno EINVAL): a truncated or
 * foreign object is refused before anything is read from it. */
int rtm_os_shm_open(const char *name, size_t min_bytes, void **map, size_t *bytes);

/* Unmaps a mapping made by the two calls above. */
int rtm_os_shm_unmap(void *map, size_t bytes);

/* Removes the name; mappings stay valid until unmapped. */
int rtm_os_shm_unlink(const char *name);

/* The calling process's id, cached (no system call after the first one in
 * a process; a fork clears the cache in the child). */
uint32_t rtm_os_pid(void);

/* 1 if a process with this id exists (even one we may not signal), else 0. */
int rtm_os_pid_alive(uint32_t pid);

#endif /* RTM_OS_SHM_H */
