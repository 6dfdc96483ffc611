// SPDX-License-Identifier: MIT
/*
 * rtmem/shared.h -- a heap in POSIX shared memory that several processes
 * (and their threads) allocate from at once, and that survives the death of
 * any of them, even in the middle of an allocation.
 *
 * Like Xenomai's pshared heap: one named object under /dev/shm, mapped at
 * whatever address each process gets; all metadata is position-independent
 * (offsets), and user data refers to other blocks by rtm_offset, which
 * means the same block in every process. A robust, process-shared,
 * priority-inheritance mutex guards the heap. Unlike Xenomai's, a process
 * that dies holding the lock costs nothing: before every change of the
 * heap's metadata an intent record (the operation, its block, and the few
 * block headers it may change) is written in the segment; the next process
 * to take the lock is told the owner died, rolls the interrupted operation
 * back (or, for a free, forward), rebuilds the free lists from the block
 * headers, verifies the whole heap and carries on. docs/SHARED.md has the
 * layout and the argument.
 *
 *   segment (offset 0 is the handle)
 *   +--------------------------------------------+------------------------+
 *   | header: kind "GRD1", flags, magic, layout  | TLSF heap: control,    |
 *   | version, ABI, size, algorithm, intent      | then blocks, each      |
 *   | record, counters, robust PI mutex          | [hdr][owner tag][data] |
 *   +--------------------------------------------+------------------------+
 *
 * Every generic call of rtmem.h works on the handle from any thread of any
 * attached process and takes the lock: rtm_alloc, rtm_aligned_alloc,
 * rtm_realloc, rtm_free, rtm_usable_size, rtm_heap_stats (exact, with
 * arena_bytes the segment size), rtm_heap_check (TLSF invariants plus every
 * owner tag), rtm_heap_walk, rtm_heap_reset, rtm_heap_algorithm ("tlsf").
 * rtm_heap_add_pool fails with ENOTSUP (the heap is the segment);
 * rtm_heap_destroy is rtm_shared_close. Operations are O(1) plus the lock;
 * a call that finds a dead owner pays one O(blocks) repair and check.
 *
 * Owner tags and leaks. Each block carries 8 bytes in front of the payload
 * naming the process that allocated it (or last resized or adopted it). A
 * process that dies leaves its blocks allocated: rtm_shared_owned() counts
 * them and rtm_shared_reclaim() frees them. A block handed to another
 * process should be adopted by it (rtm_shared_adopt) if it must outlive its
 * allocator. Owners are process ids: they are compared within one pid
 * namespace, and a reused pid makes a dead owner look alive (reclaim by
 * explicit pid then).
 *
 * Errors: NULL / -1 / 0 with errno. EINVAL bad argument or not an rtmem
 * heap (foreign or truncated object); EPROTO an rtmem heap of another
 * layout version, ABI (32- vs 64-bit) or byte order; EEXIST create of an
 * existing name; ENOENT open of a missing one; ENOTSUP an algorithm other
 * than "tlsf"; EAGAIN open of a heap still being created (or whose creator
 * died before finishing: unlink it); ENOTRECOVERABLE a heap a repair could
 * not make consistent (never seen in the tests: see docs/SHARED.md).
 */
#ifndef RTMEM_SHARED_H
#define RTMEM_SHARED_H

#include <stddef.h>
#include <stdint.h>

#include "rtmem/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rtm_heap rtm_heap; /* the same opaque handle as rtmem.h's */

/** A position in a shared heap, the same in every process; 0 is never a
 *  valid block. */
typedef uint64_t rtm_offset;

/** The layout version this library writes and accepts. */
#define RTM_SHARED_LAYOUT_VERSION 1u
/** Bytes of owner tag in front of every block's payload. */
#define RTM_SHARED_TAG_BYTES 8u

/** The smallest `bytes` rtm_shared_create() accepts. O(1). */
RTM_API size_t rtm_shared_min_size(void);

/** Creates the shared-memory object `name` ("name" or "/name": 1 to 200 of
 *  [A-Za-z0-9._-], not "." or "..") of `bytes` bytes and a heap of
 *  `algorithm` (NULL or "tlsf") in it, readable and writable by the owner
 *  only (0600; rtm_shared_create_mode() takes other bits), and attaches the
 *  caller. Returns the handle, or NULL with errno EINVAL (bad name or size), EEXIST, ENOTSUP
 *  (other algorithm) or the system's error (EACCES, ENOSPC...). The object
 *  outlives every process until rtm_shared_unlink(). O(1) (pages are
 *  touched lazily). */
RTM_API rtm_heap *rtm_shared_create(const char *name, size_t bytes, const char *algorithm);

/** rtm_shared_create() with the object's permission bits: `mode` is 0 to
 *  0777 (the rwx bits of chmod; 0660 lets the owner's group attach too) and
 *  is applied exactly, not masked by the umask. rtm_shared_create() is this
 *  call with 0600. EINVAL for bits outside 0777, as for the other
 *  arguments. The bits only govern rtm_shared_open() by other users: the
 *  creator keeps its mapping whatever they are. */
RTM_API rtm_heap *rtm_shared_create_mode(const char *name, size_t bytes, const char *algorithm,
                                         unsigned mode);

/** Attaches to an existing shared heap. NULL with errno ENOENT, EINVAL (bad
 *  name; not an rtmem heap; truncated), EPROTO (other layout version, ABI
 *  or byte order), EAGAIN (being created) or the system's error. O(1). */
RTM_API rtm_heap *rtm_shared_open(const char *name);

/** Detaches (unmaps) the heap; it lives on for the other processes and the
 *  name. Blocks of this process stay allocated. NULL is ignored; a handle
 *  that is not a shared heap sets errno EINVAL. O(1). */
RTM_API void rtm_shared_close(rtm_heap *h);

/** Removes the name (attached processes keep working). 0, or -1 with errno
 *  EINVAL (bad name) or ENOENT. */
RTM_API int rtm_shared_unlink(const char *name);

/** The offset of ptr (any address inside the segment) from the segment's
 *  start: the same in every process. 0 for NULL; 0 with errno EINVAL for
 *  an address outside the segment or a handle that is not a shared heap.
 *  O(1), no lock. */
RTM_API rtm_offset rtm_shared_offset(rtm_heap *h, const void *ptr);

/** The address of offset off in this process's mapping. NULL for 0; NULL
 *  with errno EINVAL for an offset beyond the segment or a bad handle.
 *  O(1), no lock. */
RTM_API void *rtm_shared_pointer(rtm_heap *h, rtm_offset off);

/** Makes the calling process the owner of a live block (so that the
 *  allocating process's death does not make it reclaimable). 0, or -1 with
 *  errno EINVAL (bad handle or pointer). O(1). */
RTM_API int rtm_shared_adopt(rtm_heap *h, void *ptr);

/** Blocks and their usable bytes owned by a process. */
typedef struct rtm_shared_usage {
    size_t blocks;
    size_t bytes;
} rtm_shared_usage;

/** Counts the live blocks owned by pid (> 0), or with pid 0 by every
 *  process that no longer exists. 0, or -1 with errno EINVAL. O(blocks). */
RTM_API int rtm_shared_owned(rtm_heap *h, long pid, rtm_shared_usage *out);

/** Frees the live blocks owned by pid (> 0), or with pid 0 by every process
 *  that no longer exists (a zombie still exists until reaped). Returns the
 *  number freed, or -1 with errno EINVAL. Each free is crash-safe like
 *  rtm_free. O(blocks x freed / 64). */
RTM_API long rtm_shared_reclaim(rtm_heap *h, long pid);

/** What rtm_shared_info() reports. */
typedef enum rtm_shared_op {
    RTM_SHARED_OP_NONE = 0,
    RTM_SHARED_OP_ALLOC,   /* rtm_alloc / rtm_aligned_alloc: rolled back   */
    RTM_SHARED_OP_FREE,    /* rtm_free, rtm_shared_reclaim: completed      */
    RTM_SHARED_OP_REALLOC, /* rtm_realloc: rolled back (old block kept)    */
    RTM_SHARED_OP_RESET    /* rtm_heap_reset: completed                    */
} rtm_shared_op;

typedef struct rtm_shared_info {
    uint64_t bytes;         /* segment size                                     */
    uint32_t version;       /* layout version                                   */
    uint32_t creator_pid;   /* process that created the heap                    */
    uint64_t recoveries;    /* times a lock holder was found dead               */
    uint64_t repairs;       /* of those, times an operation was in flight       */
    uint32_t last_dead_pid; /* the last dead holder (0 if it died before saying) */
    uint32_t last_op;       /* rtm_shared_op it was doing (NONE: nothing)       */
} rtm_shared_info;

/** Fills *out. 0, or -1 with errno EINVAL. Takes the lock (so it repairs
 *  first if a holder died). O(1). */
RTM_API int rtm_shared_info_get(rtm_heap *h, rtm_shared_info *out);

#ifdef __cplusplus
}
#endif

#endif /* RTMEM_SHARED_H */
