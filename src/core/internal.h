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

/* --- core/registry.c --------------------------------------------------- */

/* Every algorithm's control structure starts with a 32-bit kind word naming
 * the algorithm and its layout version; the generic API dispatches on it, so
 * the handle of a generic heap is the algorithm's own control structure (no
 * separate header, no pointer adjustment, no function pointer in the region,
 * which another process could not use). Values are part of the in-memory
 * layout: never reuse one; a new layout gets a new value. */
#define RTM_KIND_TLSF    0x31534c54u /* "TLS1": TLSF, layout 1 */
#define RTM_KIND_HALFFIT 0x31464c48u /* "HLF1": half-fit, layout 1 */
#define RTM_KIND_BUDDY   0x31444442u /* "BDD1": binary buddy pages, layout 1 */
#define RTM_KIND_SLAB    0x31424c53u /* "SLB1": slab size classes over buddy */
#define RTM_KIND_HEAPMEM 0x314d5048u /* "HPM1": heapmem, layout 1 */
#define RTM_KIND_POOL    0x314c4f50u /* "POL1": fixed-block pool, layout 1 */
/* Not an algorithm (no registry row): a lock around an inner heap of any
 * algorithm, the locked and the process-shared heaps (src/shared/). */
#define RTM_KIND_GUARDED 0x31445247u /* "GRD1": guarded heap, layout 1 */

typedef struct rtm_algo_spec {
    uint32_t kind;
    const char *name;  /* base name, as rtm_algorithms() lists it */
    const char *param; /* text after ':' or NULL */
} rtm_algo_spec;

/* Parses "name" or "name:param". Returns 0, or -1 for an unknown name. */
int rtm_algo_parse(const char *text, rtm_algo_spec *out);
/* The base name of a kind word, or NULL. */
const char *rtm_algo_name(uint32_t kind);
/* The parameter as a size: decimal digits only, > 0, no overflow; `dflt`
 * when there is none ("pool"). Returns 0, or -1 for "pool:", "pool:0",
 * "pool:-1", "pool:12k", "pool:99999999999999999999". */
int rtm_algo_size_param(const rtm_algo_spec *spec, size_t dflt, size_t *out);

/* --- shared/guarded.c ---------------------------------------------------- */

/* The generic API's branches for RTM_KIND_GUARDED (core/heap.c): each takes
 * the heap's lock, runs the operation on the inner heap (through the owner
 * tags and the intent record for a shared heap) and unlocks. */
struct rtm_heap;
void *rtm_guarded_alloc(struct rtm_heap *h, size_t size);
void *rtm_guarded_aligned_alloc(struct rtm_heap *h, size_t alignment, size_t size);
void *rtm_guarded_realloc(struct rtm_heap *h, void *ptr, size_t size);
void rtm_guarded_free(struct rtm_heap *h, void *ptr);
size_t rtm_guarded_usable_size(struct rtm_heap *h, const void *ptr);
rtm_stats rtm_guarded_stats(struct rtm_heap *h);
int rtm_guarded_check(struct rtm_heap *h);
const char *rtm_guarded_algorithm(struct rtm_heap *h);
int rtm_guarded_walk(struct rtm_heap *h, void (*walker)(void *, size_t, int, void *), void *arg);
int rtm_guarded_reset(struct rtm_heap *h);
int rtm_guarded_add_pool(struct rtm_heap *h, void *mem, size_t bytes);
void rtm_guarded_destroy(struct rtm_heap *h);

#endif /* RTM_CORE_INTERNAL_H */
