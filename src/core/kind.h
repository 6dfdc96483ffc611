// SPDX-License-Identifier: MIT
/*
 * core/kind.h -- the descriptor of a heap kind: the table of operations the
 * generic API (core/heap.c) dispatches through.
 *
 * Every algorithm's control structure starts with a 32-bit kind word
 * (RTM_KIND_* in core/internal.h). The generic API maps that word to one
 * `rtm_heap_kind`, a const table of operations that lives in the program's
 * read-only data: the region itself still holds no pointer, so a heap mapped
 * into another process (at another address, with the code elsewhere) keeps
 * working there.
 *
 * A kind is one file: the heap's source file defines its descriptor
 * `const rtm_heap_kind rtm_kind_<name>` at its end, with small adapters from
 * the generic handle to its typed API. The compiler checks each adapter's
 * shape against the fields below, which a cast of the typed functions would
 * not. core/algorithms.h lists the named algorithms (one entry each); kinds
 * that are layers over another heap rather than algorithms (the guarded
 * heaps of src/shared/) register at run time with rtm_kind_register(), so
 * the core never names them and links without them (firmware).
 */
#ifndef RTM_CORE_KIND_H
#define RTM_CORE_KIND_H

#include "core/internal.h"
#include "rtmem.h"

typedef struct rtm_heap_kind {
    uint32_t kind;        /* the kind word of the control structure       */
    size_t default_param; /* value of "name" alone; 0: takes no ":param" */

    /* Creation, by name (NULL for kinds that are not algorithms). */
    size_t (*min_region)(size_t param); /* 0: bad param */
    rtm_heap *(*create)(void *mem, size_t bytes, size_t param);

    /* Operations; h is never NULL and has this kind word. */
    void *(*alloc)(rtm_heap *h, size_t size);
    void (*free)(rtm_heap *h, void *ptr);
    void *(*aligned_alloc)(rtm_heap *h, size_t alignment, size_t size);
    void *(*realloc)(rtm_heap *h, void *ptr, size_t size);
    size_t (*usable_size)(rtm_heap *h, const void *ptr);
    rtm_stats (*stats)(rtm_heap *h);
    int (*check)(rtm_heap *h);
    int (*walk)(rtm_heap *h, rtm_walker walker, void *arg);
    int (*reset)(rtm_heap *h);
    int (*add_pool)(rtm_heap *h, void *mem, size_t bytes);     /* NULL: ENOTSUP    */
    int (*set_grow)(rtm_heap *h, rtm_grow_fn grow, void *ctx); /* NULL: ENOTSUP */
    void (*destroy)(rtm_heap *h);                              /* NULL: kind := 0  */
    const char *(*algorithm)(rtm_heap *h);                     /* NULL: the registry's name */
} rtm_heap_kind;

/* Every kind's descriptor by slot (core/registry.c). A kind's slot is the
 * low 4 bits of the first letter of its tag XOR the third ("TLS3":
 * 'T' ^ 'S' -> 7): distinct for every kind rtmem has. Named algorithms are
 * checked at compile time, registered kinds by rtm_kind_register(). */
#define RTM_KIND_SLOTS      16u
#define RTM_KIND_SLOT(word) (((word) ^ ((word) >> 16)) & (RTM_KIND_SLOTS - 1u))
extern const rtm_heap_kind *rtm_kinds_by_slot[RTM_KIND_SLOTS];

/* The descriptor of a kind word, or NULL: one load and one compare, no
 * call. Never on TLSF's hot paths (core/heap.c). */
static inline const rtm_heap_kind *rtm_kind_find(uint32_t kind)
{
    const rtm_heap_kind *k =
        __atomic_load_n(&rtm_kinds_by_slot[RTM_KIND_SLOT(kind)], __ATOMIC_RELAXED);
    return k != NULL && k->kind == kind ? k : NULL;
}

/* The registered name of a kind word ("tlsf", ...), or NULL for an unnamed
 * or unknown kind. */
const char *rtm_kind_name(uint32_t kind);

/* Adds a kind that is not in the registry (a layer over other heaps).
 * Idempotent and thread-safe. Returns 0, or -1 when another kind holds the
 * slot of its kind word. */
int rtm_kind_register(const rtm_heap_kind *kind);

/*
 * The adapters most heaps need: the generic handle cast to the typed one
 * and passed on. RTM_KIND_ADAPTERS(pool, rtm_pool) defines static
 * pool_kind_alloc, pool_kind_free, ... calling rtm_pool_alloc, ...; a heap
 * whose typed API differs (TLSF's usable_size takes no heap) writes that
 * adapter itself and uses the narrower macros.
 */
#define RTM_KIND_AS(type, h) ((type *)(void *)(h))

#define RTM_KIND_ADAPT_BLOCKS(name, type)                                                          \
    static void *name##_kind_alloc(rtm_heap *h, size_t size)                                       \
    {                                                                                              \
        return rtm_##name##_alloc(RTM_KIND_AS(type, h), size);                                     \
    }                                                                                              \
    static void name##_kind_free(rtm_heap *h, void *ptr)                                           \
    {                                                                                              \
        (void)rtm_##name##_free(RTM_KIND_AS(type, h), ptr);                                        \
    }                                                                                              \
    static void *name##_kind_aligned_alloc(rtm_heap *h, size_t alignment, size_t size)             \
    {                                                                                              \
        return rtm_##name##_aligned_alloc(RTM_KIND_AS(type, h), alignment, size);                  \
    }                                                                                              \
    static void *name##_kind_realloc(rtm_heap *h, void *ptr, size_t size)                          \
    {                                                                                              \
        return rtm_##name##_realloc(RTM_KIND_AS(type, h), ptr, size);                              \
    }

#define RTM_KIND_ADAPT_WHOLE(name, type)                                                           \
    static rtm_stats name##_kind_stats(rtm_heap *h)                                                \
    {                                                                                              \
        return rtm_##name##_stats(RTM_KIND_AS(type, h));                                           \
    }                                                                                              \
    static int name##_kind_check(rtm_heap *h) { return rtm_##name##_check(RTM_KIND_AS(type, h)); } \
    static int name##_kind_walk(rtm_heap *h, rtm_walker walker, void *arg)                         \
    {                                                                                              \
        rtm_##name##_walk(RTM_KIND_AS(type, h), walker, arg);                                      \
        return 0;                                                                                  \
    }                                                                                              \
    static int name##_kind_reset(rtm_heap *h)                                                      \
    {                                                                                              \
        rtm_##name##_reset(RTM_KIND_AS(type, h));                                                  \
        return 0;                                                                                  \
    }

#define RTM_KIND_ADAPTERS(name, type)                                                              \
    RTM_KIND_ADAPT_BLOCKS(name, type)                                                              \
    RTM_KIND_ADAPT_WHOLE(name, type)                                                               \
    static size_t name##_kind_usable_size(rtm_heap *h, const void *ptr)                            \
    {                                                                                              \
        return rtm_##name##_usable_size(RTM_KIND_AS(type, h), ptr);                                \
    }

/* The operation fields of a descriptor whose adapters the macros above
 * made: `.kind = ..., RTM_KIND_OPERATIONS(pool), .min_region = ...`. */
#define RTM_KIND_OPERATIONS(name)                                                                  \
    .alloc = name##_kind_alloc, .free = name##_kind_free,                                          \
    .aligned_alloc = name##_kind_aligned_alloc, .realloc = name##_kind_realloc,                    \
    .usable_size = name##_kind_usable_size, .stats = name##_kind_stats,                            \
    .check = name##_kind_check, .walk = name##_kind_walk, .reset = name##_kind_reset

#endif /* RTM_CORE_KIND_H */
