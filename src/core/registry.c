/*
 * core/registry.c -- the algorithm names the generic API accepts.
 *
 * A name may carry a parameter after a colon ("pool:64"); the base name picks
 * the algorithm and the parameter goes to it. Adding an algorithm means one
 * row in `algorithms` and one case in core/heap.c's dispatch.
 */
#include "core/internal.h"
#include "rtmem.h"

static const char *const algorithm_names[] = {"tlsf", "pool",    "buddy", "halffit",
                                              "slab", "heapmem", NULL};

static const struct {
    uint32_t kind;
    const char *name;
} algorithms[] = {
    {RTM_KIND_TLSF, "tlsf"},       {RTM_KIND_POOL, "pool"}, {RTM_KIND_BUDDY, "buddy"},
    {RTM_KIND_HALFFIT, "halffit"}, {RTM_KIND_SLAB, "slab"}, {RTM_KIND_HEAPMEM, "heapmem"},
};

#define ALGORITHM_COUNT (sizeof algorithms / sizeof algorithms[0])

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
    for (size_t k = 0; k < ALGORITHM_COUNT; k++) {
        if (!base_name_equals(text, algorithms[k].name))
            continue;
        const char *colon = text;
        while (*colon != '\0' && *colon != ':')
            colon++;
        out->kind = algorithms[k].kind;
        out->name = algorithms[k].name;
        out->param = *colon == ':' ? colon + 1 : NULL;
        return 0;
    }
    return -1;
}

const char *rtm_algo_name(uint32_t kind)
{
    for (size_t k = 0; k < ALGORITHM_COUNT; k++)
        if (algorithms[k].kind == kind)
            return algorithms[k].name;
    return NULL;
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
