// SPDX-License-Identifier: MIT
/*
 * core/algorithms.h -- RTM_ALGORITHMS, the list of the heaps the generic
 * API knows, as X(name, RTM_KIND_<NAME>) entries. One list, read by the
 * registry (the kind table, rtm_algorithms()) and by heap.c (whether the
 * TLSF fast path exists), so the two cannot disagree.
 *
 * A firmware build may list fewer (in its RTM_CONFIG_HEADER, core/bits.h)
 * and compile only those heaps' sources: docs/FIRMWARE.md.
 */
#ifndef RTM_CORE_ALGORITHMS_H
#define RTM_CORE_ALGORITHMS_H

#include "core/internal.h"

#ifndef RTM_ALGORITHMS
#define RTM_ALGORITHMS(X)                                                                          \
    X(tlsf, RTM_KIND_TLSF)                                                                         \
    X(pool, RTM_KIND_POOL)                                                                         \
    X(buddy, RTM_KIND_BUDDY)                                                                       \
    X(halffit, RTM_KIND_HALFFIT)                                                                   \
    X(slab, RTM_KIND_SLAB)                                                                         \
    X(heapmem, RTM_KIND_HEAPMEM)                                                                   \
    X(xvmalloc, RTM_KIND_XVMALLOC)                                                                 \
    X(tlsf_cached, RTM_KIND_TLSF_CACHED)
#endif

#endif /* RTM_CORE_ALGORITHMS_H */
