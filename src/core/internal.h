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

/* Algorithm ids stored in the generic heap header. Values are part of the
 * in-memory layout (a process-shared heap records them): never renumber. */
enum rtm_algo_id { RTM_ALGO_TLSF = 1 };

typedef struct rtm_algo_spec {
    enum rtm_algo_id id;
    const char *name;   /* base name, as rtm_algorithms() lists it */
    const char *param;  /* text after ':' or NULL */
} rtm_algo_spec;

/* Parses "name" or "name:param". Returns 0, or -1 for an unknown name. */
int rtm_algo_parse(const char *text, rtm_algo_spec *out);
const char *rtm_algo_name(enum rtm_algo_id id);

#endif /* RTM_CORE_INTERNAL_H */
