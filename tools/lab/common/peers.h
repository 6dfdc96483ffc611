// SPDX-License-Identifier: MIT
/*
 * peers.h -- the general-purpose allocators TLSF is compared against, how to
 * find their libraries, and how a child process proves that the one it was
 * asked to measure is really the one serving malloc.
 *
 * A peer is measured by re-executing this program with LD_PRELOAD set to
 * the peer's library. LD_PRELOAD fails quietly (ld.so prints a line and goes
 * on with glibc) when the file is of another architecture or unreadable, so
 * the child never trusts it: it asks the dynamic linker which object defines
 * malloc and free, and whether that object also exports a symbol only the
 * peer has (mi_version, mallctl, tc_version). A row whose check fails is
 * marked invalid, never silently reported as the peer.
 */
#ifndef RTM_BENCH_PEERS_H
#define RTM_BENCH_PEERS_H

#include <stddef.h>

typedef struct peer {
    const char *name;     /* as given to --allocators                        */
    const char *marker;   /* symbol only this allocator exports; NULL: glibc */
    const char *files[3]; /* library file names, preferred first             */
} peer;

/* The peer called name ("glibc", "mimalloc", "jemalloc", "tcmalloc", and
 * "rtmem": rtmem's own drop-in malloc, build/librtmem-malloc.so) or NULL. */
const peer *peer_find(const char *name);

/* Looks for the peer's library in the directory of the running libc, the
 * multiarch directories of this target, and the usual library directories
 * (a file name "$ORIGIN/<name>": only in the directory of /proc/self/exe);
 * an environment variable RTMEM_BENCH_LIB_<NAME> (e.g.
 * RTMEM_BENCH_LIB_MIMALLOC) overrides the search. Writes the path and returns
 * 0, or returns -1 when no readable file is found. glibc needs no library
 * and returns -1. */
int peer_locate(const peer *p, char *path, size_t n);

/* 1 when the peer's library is built by this project beside the program
 * (a file name "$ORIGIN/..."): its absence means "not built", not "not
 * installed". */
int peer_is_local(const peer *p);

/* In the child: checks that malloc and free come from the expected object.
 * p == NULL (TLSF): no peer marker may be visible. glibc: neither, and
 * malloc must come from libc (not, say, a sanitizer's). Otherwise malloc, free and the peer's
 * marker must all come from the object at expect_path. Returns 1 when the check holds, else 0 with
 * the reason in why. Fills from (the object defining malloc) and version
 * (what the allocator reports about itself, or ""). */
int peer_verify(const peer *p, const char *expect_path, char *why, size_t why_n, char *from,
                size_t from_n, char *version, size_t version_n);

#endif /* RTM_BENCH_PEERS_H */
