/*
 * core/registry.c -- the heap kinds the generic API knows: the named
 * algorithms (built in, listed once below) and the kinds registered at run
 * time (the guarded heaps of src/shared/, which are layers, not algorithms).
 *
 * A name may carry a parameter after a colon ("pool:64"); the base name
 * picks the algorithm and the parameter goes to its create function.
 *
 * Adding an algorithm: its source file defines `rtm_kind_<name>`
 * (core/kind.h), and one entry goes into RTM_ALGORITHMS below; the list of
 * names (rtm_algorithms()) and the lookup by name and by kind word follow
 * from it. The order is the order rtm_algorithms() reports, and the order in
 * which the kind lookup tries them: the most used first.
 */
#include "core/kind.h"

#define RTM_ALGORITHMS(X) X(tlsf) X(pool) X(buddy) X(halffit) X(slab) X(heapmem)

#define DECLARE_KIND(name) extern const rtm_heap_kind rtm_kind_##name;
RTM_ALGORITHMS(DECLARE_KIND)

#define KIND_ADDRESS(name) &rtm_kind_##name,
#define KIND_NAME(name)    #name,

static const rtm_heap_kind *const builtin_kinds[] = {RTM_ALGORITHMS(KIND_ADDRESS)};
static const char *const algorithm_names[] = {RTM_ALGORITHMS(KIND_NAME) NULL};

#define BUILTIN_COUNT (sizeof builtin_kinds / sizeof builtin_kinds[0])

/* Kinds registered at run time. Slots fill once and never empty, so a
 * reader needs only an acquire load; compiler builtins rather than
 * <stdatomic.h> keep the file freestanding (on Cortex-M3/M4 they are
 * ldrex/strex, no library call). */
#define EXTENSION_SLOTS 4u
static const rtm_heap_kind *extension_kinds[EXTENSION_SLOTS];

const char *const *rtm_algorithms(void) { return algorithm_names; }

/* Compares the base part of text (up to ':' or the end) with name. */
static int base_name_equals(const char *text, const char *name)
{
    size_t i = 0;
    for (; text[i] != '\0' && text[i] != ':'; i++)
        if (name[i] != text[i])
            return 0;
    return name[i] == '\0';
}

int rtm_algo_parse(const char *text, rtm_algo_spec *out)
{
    for (size_t k = 0; k < BUILTIN_COUNT; k++) {
        if (!base_name_equals(text, algorithm_names[k]))
            continue;
        const char *colon = text;
        while (*colon != '\0' && *colon != ':')
            colon++;
        out->kind = builtin_kinds[k]->kind;
        out->name = algorithm_names[k];
        out->param = *colon == ':' ? colon + 1 : NULL;
        out->ops = builtin_kinds[k];
        return 0;
    }
    return -1;
}

const char *rtm_kind_name(uint32_t kind)
{
    for (size_t k = 0; k < BUILTIN_COUNT; k++)
        if (builtin_kinds[k]->kind == kind)
            return algorithm_names[k];
    return NULL;
}

const rtm_heap_kind *rtm_kind_find(uint32_t kind)
{
    for (size_t k = 0; k < BUILTIN_COUNT; k++)
        if (builtin_kinds[k]->kind == kind)
            return builtin_kinds[k];
    for (size_t k = 0; k < EXTENSION_SLOTS; k++) {
        const rtm_heap_kind *ext = __atomic_load_n(&extension_kinds[k], __ATOMIC_ACQUIRE);
        if (ext == NULL)
            break; /* slots fill in order */
        if (ext->kind == kind)
            return ext;
    }
    return NULL;
}

int rtm_kind_register(const rtm_heap_kind *kind)
{
    for (size_t k = 0; k < EXTENSION_SLOTS; k++) {
        const rtm_heap_kind *expected = NULL;
        if (__atomic_compare_exchange_n(&extension_kinds[k], &expected, kind, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            return 0;
        if (expected->kind == kind->kind)
            return 0; /* already there (this thread or another put it) */
    }
    return -1;
}

int rtm_algo_size_param(const rtm_algo_spec *spec, size_t dflt, size_t *out)
{
    const char *s = spec->param;
    if (s == NULL) {
        *out = dflt;
        return 0;
    }
    size_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        size_t d = (size_t)(*s - '0');
        if (v > (SIZE_MAX - d) / 10u)
            return -1;
        v = v * 10u + d;
    }
    if (v == 0)
        return -1;
    *out = v;
    return 0;
}
