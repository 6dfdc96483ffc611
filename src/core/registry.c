/*
 * core/registry.c -- the algorithm names the generic API accepts.
 *
 * A name may carry a parameter after a colon ("pool:64"); the base name picks
 * the algorithm and the parameter goes to it. Adding an algorithm means one
 * row in `algorithms` and one case in core/heap.c's dispatch.
 */
#include "core/internal.h"
#include "rtmem.h"

static const char *const algorithm_names[] = {"tlsf", NULL};

static const struct {
    uint32_t kind;
    const char *name;
} algorithms[] = {
    {RTM_KIND_TLSF, "tlsf"},
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
