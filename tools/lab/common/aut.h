// SPDX-License-Identifier: MIT
/*
 * aut.h -- the allocator under test: the one definition, for every command,
 * of what a name given to --allocators (or --algorithm) is, and where it is
 * measured.
 *
 *   an rtm heap     any name rtm_heap_create() accepts ("tlsf", "pool:4096"),
 *                   found in the library's algorithm table: measured in the
 *                   measuring process, on a region of its own;
 *   a locked heap   "locked:<rtm heap>": that heap behind a lock (threads);
 *   an mt heap      "mt:<algorithm>": rtm_mt_create()'s multi-threaded heap
 *                   of per-thread shards of that algorithm (rtmem/mt.h); the
 *                   command attaches each of its threads to a shard;
 *   glibc           the C library's malloc, in a child with nothing preloaded;
 *   a malloc peer   mimalloc, jemalloc, tcmalloc: an installed library, put
 *                   in front of malloc by LD_PRELOAD in a child (peers.h);
 *   the drop-in     "rtmem": rtmem's own malloc (librtmem-malloc.so, built
 *                   beside the lab), by LD_PRELOAD in a child like a peer;
 *   the command's   a name only one command measures (limits' mmap, zram's
 *   own             zsmalloc), listed by that command.
 *
 * A command says which kinds it measures (aut_rules); a name of any other
 * kind is an unknown allocator to it, a usage error. A peer whose library is
 * not there is a row with status "not installed" ("not built" for the
 * drop-in), never a crash nor a usage error: aut_locate() says which.
 */
#ifndef RTM_LAB_AUT_H
#define RTM_LAB_AUT_H

#include <stddef.h>

#include "common/peers.h"
#include "common/status.h"

typedef enum aut_kind {
    AUT_RTM,    /* an rtm heap in the measuring process                   */
    AUT_LOCKED, /* "locked:<rtm heap>"                                    */
    AUT_MT,     /* "mt:<algorithm>": the multi-threaded heap of shards     */
    AUT_LIBC,   /* "glibc"                                                */
    AUT_PEER,   /* an installed malloc by LD_PRELOAD                      */
    AUT_DROPIN, /* "rtmem": rtmem's drop-in malloc by LD_PRELOAD          */
    AUT_OWN,    /* one of the names the command lists in aut_rules.own    */
    AUT_NKINDS  /* keep last; kinds are bits of aut_rules.accept */
} aut_kind;

/* aut_rules.accept: the kinds a command measures, or-ed. */
#define AUT_ACCEPT(kind)  (1u << (kind))
#define AUT_ACCEPT_MALLOC (AUT_ACCEPT(AUT_LIBC) | AUT_ACCEPT(AUT_PEER) | AUT_ACCEPT(AUT_DROPIN))

/* Longest name, NUL included ("locked:pool:1048576" is 20). */
#define AUT_NAME_MAX 40

typedef struct aut_rules {
    unsigned accept;        /* AUT_ACCEPT() bits; AUT_OWN needs own       */
    const char *const *own; /* NULL-terminated, or NULL                   */
    const char *known;      /* what an "unknown allocator" message lists  */
} aut_rules;

typedef struct aut {
    char name[AUT_NAME_MAX]; /* as given                                   */
    aut_kind kind;
    const char *heap; /* AUT_RTM, AUT_LOCKED, AUT_MT: the heap name (in name) */
    const peer *peer; /* AUT_LIBC, AUT_PEER, AUT_DROPIN; else NULL        */
} aut;

/* Describes one name. Returns 0, or -1 with the reason in why: an empty
 * name, one of AUT_NAME_MAX characters or more, or a name that is none of
 * the kinds rules accepts ("unknown allocator 'x' (known: ...)"). */
int aut_parse(const char *name, const aut_rules *rules, aut *a, char *why, size_t why_n);

/* Splits a comma-separated list and describes each name (aut_parse).
 * Strict, like opts.c's numbers: an empty name ("a,,b", "a,", ""), a name
 * given twice or more than max names is an error. Returns the count, or 0
 * with the reason in why. */
size_t aut_parse_list(const char *list, const aut_rules *rules, aut *out, size_t max, char *why,
                      size_t why_n);

/* 1 for a malloc (glibc, peer, drop-in): measured in a child process. */
int aut_is_malloc(const aut *a);

/* 1 when the child needs a library in LD_PRELOAD (peer, drop-in). */
int aut_preloads(const aut *a);

/* Where the library of a preloaded kind is (peer_locate). Returns LAB_OK
 * with the path in lib ("" when nothing is preloaded), or, lib "",
 * LAB_NOT_INSTALLED for a peer whose library is not found and LAB_NOT_BUILT
 * for the drop-in when librtmem-malloc.so is not beside the lab. */
lab_status aut_locate(const aut *a, char *lib, size_t lib_n);

/* 1 for a heap shared by threads in the measuring process (locked, mt). */
int aut_is_shared_heap(const aut *a);

/* "rtm heap", "locked heap", "mt heap", "glibc", "peer", "drop-in", "own". */
const char *aut_kind_name(aut_kind k);

#endif /* RTM_LAB_AUT_H */
