// SPDX-License-Identifier: MIT
/*
 * core/registry.c -- the heap kinds the generic API knows: the named
 * algorithms (built in, listed once in core/algorithms.h) and the kinds
 * registered at run time (the guarded heaps of src/shared/, which are
 * layers, not algorithms).
 *
 * A name may carry a parameter after a colon ("pool:64"); the base name
 * picks the algorithm and the parameter goes to its create function.
 *
 * Adding an algorithm: its source file defines `rtm_kind_<name>`
 * (core/kind.h), and one entry goes into RTM_ALGORITHMS (core/algorithms.h):
 * its name and its kind word; the list of names (rtm_algorithms(), in this
 * order) and the lookups by name and by kind word follow from it.
 *
 * Lookup by kind word is one load from a table of RTM_KIND_SLOTS entries
 * indexed by the kind's slot (core/kind.h) and one compare, whatever the
 * number of kinds. Two named algorithms with one slot would be two
 * initialisers of one entry: a compile error below, and then the new kind
 * takes another tag. Kinds registered at run time take their slot in the
 * same table (the guarded heaps' "GRD1" has a slot of its own).
 */
#include "core/kind.h"

#include "core/algorithms.h"

#define DECLARE_KIND(name, word) extern const rtm_heap_kind rtm_kind_##name;
RTM_ALGORITHMS(DECLARE_KIND)

#define KIND_ADDRESS(name, word) &rtm_kind_##name,
#define KIND_NAME(name, word)    #name,
#define KIND_BY_SLOT(name, word) [RTM_KIND_SLOT(word)] = &rtm_kind_##name,

static const rtm_heap_kind *const builtin_kinds[] = {RTM_ALGORITHMS(KIND_ADDRESS)};
static const char *const algorithm_names[] = {RTM_ALGORITHMS(KIND_NAME) NULL};

/* Two kinds in one slot must not compile (see the file comment). The
 * table is writable only for rtm_kind_register(); the descriptors it points
 * to are const. */
#if defined(__clang__)
#pragma clang diagnostic error "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic error "-Woverride-init"
#endif
const rtm_heap_kind *rtm_kinds_by_slot[RTM_KIND_SLOTS] = {RTM_ALGORITHMS(KIND_BY_SLOT)};

#define BUILTIN_COUNT (sizeof builtin_kinds / sizeof builtin_kinds[0])

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

/* A slot fills once and never empties. The descriptor is const data that
 * existed before the program started, so publishing its address needs no
 * ordering beyond the compare-and-swap itself (readers load it relaxed).
 * Builtins rather than <stdatomic.h> keep the file freestanding (on
 * Cortex-M3/M4 they are ldrex/strex, no library call). */
int rtm_kind_register(const rtm_heap_kind *kind)
{
    const rtm_heap_kind **slot = &rtm_kinds_by_slot[RTM_KIND_SLOT(kind->kind)];
    const rtm_heap_kind *expected = NULL;
    if (__atomic_compare_exchange_n(slot, &expected, kind, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return 0;
    return expected->kind == kind->kind ? 0 : -1; /* already there, or taken */
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
