// SPDX-License-Identifier: MIT
/*
 * core/internal.h -- the table of contents of rtmem's cross-file internals,
 * grouped by the file that defines them. Public symbols are in include/;
 * everything here is private to the library.
 *
 * Layering (docs/ARCHITECTURE.md): core and os at the bottom, heaps above
 * core only (so the heaps build freestanding), tools on public headers only.
 */
#ifndef RTM_CORE_INTERNAL_H
#define RTM_CORE_INTERNAL_H

#include "core/bits.h"
#include "rtmem/common.h"

/* --- core/error.c ------------------------------------------------------ */

/* Sends one misuse report to the user's handler, if any. Cold. */
void rtm_report(rtm_error_kind kind, const void *heap, const void *ptr, const char *detail);

/* --- core/registry.c (and core/kind.h) ---------------------------------- */

/* Every algorithm's control structure starts with a 32-bit kind word naming
 * the algorithm and its layout version; the generic API maps it to the
 * kind's descriptor (core/kind.h), so the handle of a generic heap is the
 * algorithm's own control structure (no separate header, no pointer
 * adjustment, no function pointer in the region, which another process
 * could not use). Values are part of the in-memory layout: never reuse one;
 * a new layout gets a new value. The list and the registry (names, lookup,
 * run-time registration) are in core/registry.c. */
/* "TLS3": TLSF, layout 3 (odd free-list links; 2 added the grow fields) */
#define RTM_KIND_TLSF     0x33534c54u
#define RTM_KIND_HALFFIT  0x31464c48u /* "HLF1": half-fit, layout 1 */
#define RTM_KIND_BUDDY    0x31444442u /* "BDD1": binary buddy pages, layout 1 */
#define RTM_KIND_SLAB     0x31424c53u /* "SLB1": slab size classes over buddy */
#define RTM_KIND_HEAPMEM  0x314d5048u /* "HPM1": heapmem, layout 1 */
#define RTM_KIND_POOL     0x314c4f50u /* "POL1": fixed-block pool, layout 1 */
#define RTM_KIND_XVMALLOC 0x31505658u /* "XVP1": xvmalloc (TLSF inside pages), layout 1 */
/* "TCD1": TLSF with a deferred-coalescing cache, layout 1 */
#define RTM_KIND_TLSF_CACHED 0x31444354u
/* Not an algorithm (no registry entry): a lock around an inner heap of any
 * algorithm, the locked and the process-shared heaps (src/shared/), which
 * register their descriptor at run time (rtm_kind_register). */
#define RTM_KIND_GUARDED 0x31445247u /* "GRD1": guarded heap, layout 1 */
/* Not an algorithm either: the multi-threaded heap of shards (src/mt/,
 * rtmem/mt.h), registered at run time like the guarded heaps. */
#define RTM_KIND_MT 0x3154484du /* "MHT1": multi-threaded heap, layout 1 */

struct rtm_heap_kind; /* core/kind.h */
typedef struct rtm_algo_spec {
    uint32_t kind;
    const char *name;                /* base name, as rtm_algorithms() lists it */
    const char *param;               /* text after ':' or NULL                  */
    const struct rtm_heap_kind *ops; /* its descriptor (core/kind.h)            */
} rtm_algo_spec;

/* Parses "name" or "name:param". Returns 0, or -1 for an unknown name. */
int rtm_algo_parse(const char *text, rtm_algo_spec *out);
/* The parameter as a size: decimal digits only, > 0, no overflow; `dflt`
 * when there is none ("pool"). Returns 0, or -1 for "pool:", "pool:0",
 * "pool:-1", "pool:12k", "pool:99999999999999999999". */
int rtm_algo_size_param(const rtm_algo_spec *spec, size_t dflt, size_t *out);

#endif /* RTM_CORE_INTERNAL_H */
