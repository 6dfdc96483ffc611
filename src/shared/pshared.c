// SPDX-License-Identifier: MIT
/*
 * shared/pshared.c -- the process-shared heap's segment: names, creation,
 * attaching with header validation, detaching, offsets and pointers.
 *
 * A shared heap is a guarded heap (guarded.h) at offset 0 of a POSIX
 * shared-memory object, with flags GUARD_SHARED, a robust process-shared PI
 * mutex and a TLSF inner heap right after the guard. Its handle is the
 * guard, i.e. the start of this process's mapping, so offsets are taken
 * from the handle and mean the same in every process.
 *
 * Attaching trusts nothing before checking it, in this order: the object
 * is at least the frozen 32-byte prefix (else EINVAL, nothing mapped);
 * magic (EPROTO if byte-swapped: another byte order; EINVAL if foreign);
 * version and ABI (EPROTO); the recorded size equals the object's (EINVAL:
 * truncated or grown by someone else); kind, flags, ready word (EAGAIN while
 * its creator is still formatting it), inner offset and the inner heap's
 * kind word (EINVAL). Only then is the handle returned.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <string.h>

#include "os/shm.h"
#include "rtmem.h"
#include "shared/guarded.h"

#define PREFIX_BYTES offsetof(rtm_guard, algorithm)

/* "name" or "/name": 1 to RTM_OS_SHM_NAME_MAX of [A-Za-z0-9._-], not "."
 * or "..". Stricter than POSIX on purpose: the name becomes a file name
 * under /dev/shm, and tools print it. */
static int name_ok(const char *name)
{
    if (name == NULL)
        return 0;
    if (name[0] == '/')
        name++;
    size_t n = 0;
    for (; name[n] != '\0'; n++) {
        char c = name[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (!ok || n >= RTM_OS_SHM_NAME_MAX)
            return 0;
    }
    return n > 0 && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

static rtm_guard *shared_guard(rtm_heap *h)
{
    rtm_guard *g = as_guard(h);
    if (h == NULL || g->kind != RTM_KIND_GUARDED || !guard_is_shared(g)) {
        errno = EINVAL;
        return NULL;
    }
    return g;
}

size_t rtm_shared_min_size(void) { return GUARD_BYTES + rtm_tlsf_min_region(); }

/* ---------------------------------------------------------------------- */
/* Create                                                                  */
/* ---------------------------------------------------------------------- */

/* 0, or -1 with errno: EINVAL for an unknown name or a parameter,
 * ENOTSUP for an algorithm without crash recovery. */
static int algorithm_ok(const char *algorithm)
{
    rtm_algo_spec spec;
    if (rtm_algo_parse(algorithm, &spec) != 0) {
        errno = EINVAL;
        return -1;
    }
    if (spec.kind != RTM_KIND_TLSF) {
        errno = ENOTSUP;
        return -1;
    }
    if (spec.param != NULL) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Formats a fresh (zero-filled) segment; 0 or an error number. */
static int format(rtm_guard *g, size_t bytes)
{
    int rc = rtm_os_mutex_init(&g->mutex, RTM_OS_MUTEX_PSHARED | RTM_OS_MUTEX_ROBUST);
    if (rc != 0)
        return rc;
    rtm_tlsf *t = rtm_tlsf_create((char *)g + GUARD_BYTES, bytes - GUARD_BYTES);
    if (t == NULL)
        return EINVAL;
    strcpy(g->algorithm, "tlsf");
    g->flags = GUARD_SHARED;
    g->magic = GUARD_MAGIC;
    g->version = GUARD_VERSION;
    g->abi = GUARD_ABI;
    g->bytes = bytes;
    g->inner = (int64_t)((char *)t - (char *)g);
    g->overhead = GUARD_BYTES;
    g->creator = rtm_os_pid();
    g->intent.state = INTENT_IDLE;
    g->kind = RTM_KIND_GUARDED;
    /* Everything above is visible before `ready` to any process that sees
     * `ready` (it reads it with an acquire load). A release store rather
     * than a fence and a plain store: the same order, and ThreadSanitizer
     * understands it. */
    __atomic_store_n(&g->ready, GUARD_READY, __ATOMIC_RELEASE);
    return 0;
}

rtm_heap *rtm_shared_create(const char *name, size_t bytes, const char *algorithm)
{
    return rtm_shared_create_mode(name, bytes, algorithm, 0600u);
}

rtm_heap *rtm_shared_create_mode(const char *name, size_t bytes, const char *algorithm,
                                 unsigned mode)
{
    if (!name_ok(name) || bytes < rtm_shared_min_size() || bytes > (size_t)PTRDIFF_MAX ||
        (mode & ~0777u) != 0) {
        errno = EINVAL;
        return NULL;
    }
    if (algorithm_ok(algorithm != NULL ? algorithm : "tlsf") != 0 || rtm_guarded_register() != 0)
        return NULL;
    void *map = NULL;
    if (rtm_os_shm_create(name, bytes, mode, &map) != 0)
        return NULL;
    int rc = format((rtm_guard *)map, bytes);
    if (rc != 0) {
        (void)rtm_os_shm_unmap(map, bytes);
        (void)rtm_os_shm_unlink(name);
        errno = rc;
        return NULL;
    }
    return (rtm_heap *)map;
}

/* ---------------------------------------------------------------------- */
/* Open, close, unlink                                                     */
/* ---------------------------------------------------------------------- */

/* 0, or the errno that refuses the mapping (see the file comment). */
static int validate(const rtm_guard *g, size_t size)
{
    if (g->magic == GUARD_MAGIC_SWAPPED)
        return EPROTO;
    if (g->magic != GUARD_MAGIC)
        return EINVAL;
    if (g->version != GUARD_VERSION || g->abi != GUARD_ABI)
        return EPROTO;
    if (size < GUARD_BYTES + rtm_tlsf_min_region() || g->bytes != size)
        return EINVAL;
    if (g->kind != RTM_KIND_GUARDED || (g->flags & GUARD_SHARED) == 0)
        return EINVAL;
    uint32_t ready = __atomic_load_n(&g->ready, __ATOMIC_ACQUIRE);
    if (ready != GUARD_READY)
        return EAGAIN;
    if (g->inner != (int64_t)GUARD_BYTES ||
        memchr(g->algorithm, '\0', sizeof g->algorithm) == NULL ||
        strcmp(g->algorithm, "tlsf") != 0)
        return EINVAL;
    /* Another layout of TLSF ("TLS1", "TLS2": same first three letters) is
     * another version, not a foreign object: its links would be misread. */
    uint32_t inner_kind = *(const uint32_t *)guard_inner(g);
    if (inner_kind != RTM_KIND_TLSF)
        return ((inner_kind ^ RTM_KIND_TLSF) & 0x00FFFFFFu) == 0 ? EPROTO : EINVAL;
    return 0;
}

rtm_heap *rtm_shared_open(const char *name)
{
    if (!name_ok(name)) {
        errno = EINVAL;
        return NULL;
    }
    if (rtm_guarded_register() != 0)
        return NULL;
    void *map = NULL;
    size_t size = 0;
    if (rtm_os_shm_open(name, PREFIX_BYTES, &map, &size) != 0)
        return NULL;
    int rc = validate((const rtm_guard *)map, size);
    if (rc != 0) {
        (void)rtm_os_shm_unmap(map, size);
        errno = rc;
        return NULL;
    }
    return (rtm_heap *)map;
}

void rtm_shared_close(rtm_heap *h)
{
    if (h == NULL)
        return;
    rtm_guard *g = shared_guard(h);
    if (g != NULL)
        (void)rtm_os_shm_unmap(g, (size_t)g->bytes);
}

int rtm_shared_unlink(const char *name)
{
    if (!name_ok(name)) {
        errno = EINVAL;
        return -1;
    }
    return rtm_os_shm_unlink(name);
}

/* ---------------------------------------------------------------------- */
/* Offsets, information                                                    */
/* ---------------------------------------------------------------------- */

rtm_offset rtm_shared_offset(rtm_heap *h, const void *ptr)
{
    rtm_guard *g = shared_guard(h);
    if (g == NULL || ptr == NULL)
        return 0;
    uintptr_t a = (uintptr_t)ptr, base = (uintptr_t)g;
    if (a < base || a - base >= g->bytes) {
        errno = EINVAL;
        return 0;
    }
    return (rtm_offset)(a - base);
}

void *rtm_shared_pointer(rtm_heap *h, rtm_offset off)
{
    rtm_guard *g = shared_guard(h);
    if (g == NULL || off == 0)
        return NULL;
    if (off >= g->bytes) {
        errno = EINVAL;
        return NULL;
    }
    return (char *)g + (size_t)off;
}

int rtm_shared_info_get(rtm_heap *h, rtm_shared_info *out)
{
    rtm_guard *g = shared_guard(h);
    if (g == NULL || out == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (rtm_guard_lock(g) != 0)
        return -1;
    out->bytes = g->bytes;
    out->version = g->version;
    out->creator_pid = g->creator;
    out->recoveries = g->recoveries;
    out->repairs = g->repairs;
    out->last_dead_pid = g->last_dead;
    out->last_op = g->last_op;
    rtm_guard_unlock(g);
    return 0;
}
