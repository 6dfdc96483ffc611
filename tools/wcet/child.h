// SPDX-License-Identifier: MIT
/*
 * tools/wcet/child.h -- what the traced child's scenarios (scenarios.c) use
 * from child.c: one heap driven through either API, measured calls, and
 * builders for heap states.
 *
 * Everything here goes through rtmem's public API, as a user would. Where a
 * scenario relies on a property the API does not promise (carving a fresh
 * pool from its low end, so that consecutive allocations are neighbours),
 * it checks the property and fails with a message instead of silently
 * measuring some other state.
 */
#ifndef RTM_TOOLS_WCET_CHILD_H
#define RTM_TOOLS_WCET_CHILD_H

#include <stddef.h>

#include "rtmem.h"
#include "wcet.h"

/* Payload sizes with spans that are multiples of 8: usable = span - 4. */
#define HDR ((size_t)RTM_TLSF_HEADER_BYTES)

/* The heap a scenario works on, through the API of its task. For glibc
 * there is no heap object: the calls go to malloc / free. */
typedef struct wcet_heap {
    enum wcet_api api;
    rtm_heap *h; /* API_GENERIC */
    rtm_tlsf *t; /* API_TYPED   */
    enum wcet_allocator al;
} wcet_heap;

/* --- failing loudly ----------------------------------------------------- */

/* Prints "rtmem-wcet: <scenario>: <message>" to stderr; returns 1. */
int wcet_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define REQUIRE(cond, ...)                                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return wcet_fail(__VA_ARGS__);                                                         \
    } while (0)
/* Propagates a non-zero status. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int try_rc_ = (expr);                                                                      \
        if (try_rc_ != 0)                                                                          \
            return try_rc_;                                                                        \
    } while (0)

extern const char *wcet_current; /* scenario name for messages */

/* --- the region and the heap -------------------------------------------- */

/* Makes sure the child's region holds at least bytes (an anonymous
 * MAP_NORESERVE mapping: only the pages the heap writes cost memory).
 * The mapping is page-aligned, so alignments up to 4096 land the same way in
 * every run. */
int wcet_region_reserve(size_t bytes);
unsigned char *wcet_region(void);

/* A fresh heap of w->al over region[offset, offset + bytes). */
int wcet_heap_new(wcet_heap *w, size_t offset, size_t bytes);

/* A fresh heap of w->al (not TLSF's typed API) at region offset 0 over the
 * smallest region whose fresh heap has at least `free_bytes` free, and
 * exactly that many. Fresh free bytes grow with the region in every
 * algorithm, so a bisection finds it. Returns 0 or 1 with a message. */
int wcet_heap_with_free(wcet_heap *w, size_t free_bytes);

/* A fresh heap whose only free block has exactly `usable` bytes. */
int wcet_heap_exact(wcet_heap *w, size_t usable);

int wcet_heap_add_pool(wcet_heap *w, void *mem, size_t bytes);

/* Unmeasured calls, for building states. */
void *wcet_raw_alloc(wcet_heap *w, size_t n);
void wcet_raw_free(wcet_heap *w, void *p);
rtm_stats wcet_raw_stats(wcet_heap *w);
int wcet_raw_check(wcet_heap *w);

/* 1 if q is the block right after p in memory. */
int wcet_adjacent(wcet_heap *w, const void *p, const void *q);

/* Allocates n bytes and then a minimum "fence" block right after it, so that
 * the first block keeps a used right neighbour when freed. */
int wcet_carve_fenced(wcet_heap *w, size_t n, void **out);

/* Allocates what is left of the heap's largest free block. */
int wcet_consume_largest(wcet_heap *w);

/* --- measured calls (each preceded by wcet_marker) ----------------------- */

void *wcet_m_alloc(wcet_heap *w, unsigned sc, unsigned variant, size_t n);
/* Returns 0, or -1 when the heap rejected the pointer (double free). */
int wcet_m_free(wcet_heap *w, unsigned sc, unsigned variant, size_t size, void *p);
void *wcet_m_aligned(wcet_heap *w, unsigned sc, unsigned variant, size_t align, size_t n);
void *wcet_m_realloc(wcet_heap *w, enum wcet_row row, unsigned sc, unsigned variant, void *p,
                     size_t n);

/* --- list shapes --------------------------------------------------------- */

/* The position a block of usable size u will have in its free list, made
 * by "companions": fenced free blocks of nearly the same size, freed before
 * the block itself. Lists that keep their largest block first, or that are
 * LIFO, both get different link updates from each shape:
 *   ALONE   no companion: the block is the list's only member
 *   HEAD    two of u-8:   the block goes in first, with followers
 *   MIDDLE  u+8 then u-8: the block lands after a larger head, with a follower
 *   TAIL    one of u+8:   the block lands last, after a larger head       */
enum wcet_shape { SHAPE_ALONE, SHAPE_HEAD, SHAPE_MIDDLE, SHAPE_TAIL, SHAPE_COUNT };
extern const char *const wcet_shape_names[SHAPE_COUNT];

#define MAX_COMPANIONS 8
typedef struct wcet_companions {
    size_t size[MAX_COMPANIONS];
    void *p[MAX_COMPANIONS];
    size_t n;
} wcet_companions;

/* Plans the companions giving a block of usable u the shape sh. */
void wcet_plan_shape(wcet_companions *c, enum wcet_shape sh, size_t u);
/* Carves the planned companions (each fenced); then frees them, in order. */
int wcet_carve_companions(wcet_heap *w, wcet_companions *c);
void wcet_free_companions(wcet_heap *w, wcet_companions *c);

#endif /* RTM_TOOLS_WCET_CHILD_H */
