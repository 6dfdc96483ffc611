// SPDX-License-Identifier: MIT
/*
 * aut.c -- naming, sorting and locating the allocator under test (aut.h).
 * The rtm heaps come from the library's own table (rtm_min_region() knows
 * every name rtm_heap_create() accepts); the mallocs from peers.c.
 */
#include <stdio.h>
#include <string.h>

#include "common/aut.h"
#include "rtmem.h"

/* The prefixed kinds: "<prefix><heap>" names a heap built over an rtm heap
 * of that name; the kind exists only when the library accepts the rest
 * (rtm_mt_min_region() refuses "pool" and unknown names, as rtm_mt_create
 * does, so "mt:pool" is an unknown allocator, never a failed run). */
static size_t mt_accepts(const char *heap) { return rtm_mt_min_region(heap, 1); }

static const struct prefixed {
    const char *prefix;
    aut_kind kind;
    size_t (*accepts)(const char *heap); /* nonzero: a valid heap name */
} prefixed[] = {
    {"locked:", AUT_LOCKED, rtm_min_region},
    {"mt:", AUT_MT, mt_accepts},
};
#define NPREFIXED (sizeof prefixed / sizeof prefixed[0])

/* The entry of prefixed[] whose prefix starts name, or NULL. */
static const struct prefixed *prefix_of(const char *name)
{
    for (size_t i = 0; i < NPREFIXED; i++)
        if (strncmp(name, prefixed[i].prefix, strlen(prefixed[i].prefix)) == 0)
            return &prefixed[i];
    return NULL;
}

static int own_name(const aut_rules *r, const char *name)
{
    if (!(r->accept & AUT_ACCEPT(AUT_OWN)) || r->own == NULL)
        return 0;
    for (const char *const *o = r->own; *o != NULL; o++)
        if (strcmp(*o, name) == 0)
            return 1;
    return 0;
}

/* The kind of a name, whatever the command accepts; AUT_NKINDS: none. */
static aut_kind kind_of(const aut_rules *r, const char *name, const peer **p)
{
    *p = peer_find(name);
    if (*p != NULL)
        return (*p)->marker == NULL ? AUT_LIBC : peer_is_local(*p) ? AUT_DROPIN : AUT_PEER;
    if (own_name(r, name))
        return AUT_OWN;
    const struct prefixed *x = prefix_of(name);
    if (x != NULL)
        return x->accepts(name + strlen(x->prefix)) != 0 ? x->kind : AUT_NKINDS;
    return rtm_min_region(name) != 0 ? AUT_RTM : AUT_NKINDS;
}

int aut_parse(const char *name, const aut_rules *rules, aut *a, char *why, size_t why_n)
{
    memset(a, 0, sizeof *a);
    size_t len = strlen(name);
    if (len == 0) {
        snprintf(why, why_n, "empty allocator name");
        return -1;
    }
    if (len >= AUT_NAME_MAX) {
        snprintf(why, why_n, "allocator name '%.*s...' too long (at most %d characters)", 24, name,
                 AUT_NAME_MAX - 1);
        return -1;
    }
    const peer *p = NULL;
    aut_kind k = kind_of(rules, name, &p);
    if (k == AUT_NKINDS || !(rules->accept & AUT_ACCEPT(k))) {
        snprintf(why, why_n, "unknown allocator '%s' (known: %s)", name,
                 rules->known != NULL ? rules->known : "none");
        return -1;
    }
    memcpy(a->name, name, len + 1);
    a->kind = k;
    a->peer = p;
    if (k == AUT_RTM)
        a->heap = a->name;
    else if (k == AUT_LOCKED || k == AUT_MT)
        a->heap = a->name + strlen(prefix_of(name)->prefix);
    return 0;
}

size_t aut_parse_list(const char *list, const aut_rules *rules, aut *out, size_t max, char *why,
                      size_t why_n)
{
    size_t n = 0;
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            snprintf(why, why_n, "%s in '%s'", list[0] ? "empty name" : "empty list", list);
            return 0;
        }
        if (n == max) {
            snprintf(why, why_n, "more than %zu allocators in '%s'", max, list);
            return 0;
        }
        char name[AUT_NAME_MAX + 1]; /* one more: aut_parse says "too long" */
        snprintf(name, sizeof name, "%.*s", (int)(len < AUT_NAME_MAX ? len : AUT_NAME_MAX), p);
        if (aut_parse(name, rules, &out[n], why, why_n) != 0)
            return 0;
        for (size_t i = 0; i < n; i++)
            if (strcmp(out[i].name, name) == 0) {
                snprintf(why, why_n, "allocator '%s' given twice", name);
                return 0;
            }
        n++;
        p += len;
        if (*p == '\0')
            return n;
    }
}

int aut_is_malloc(const aut *a)
{
    return a->kind == AUT_LIBC || a->kind == AUT_PEER || a->kind == AUT_DROPIN;
}

int aut_is_shared_heap(const aut *a) { return a->kind == AUT_LOCKED || a->kind == AUT_MT; }

int aut_preloads(const aut *a) { return a->kind == AUT_PEER || a->kind == AUT_DROPIN; }

lab_status aut_locate(const aut *a, char *lib, size_t lib_n)
{
    lib[0] = '\0';
    if (!aut_preloads(a))
        return LAB_OK;
    if (peer_locate(a->peer, lib, lib_n) == 0)
        return LAB_OK;
    lib[0] = '\0';
    return a->kind == AUT_DROPIN ? LAB_NOT_BUILT : LAB_NOT_INSTALLED;
}

const char *aut_kind_name(aut_kind k)
{
    static const char *const names[AUT_NKINDS] = {
        [AUT_RTM] = "rtm heap", [AUT_LOCKED] = "locked heap", [AUT_MT] = "mt heap",
        [AUT_LIBC] = "glibc",   [AUT_PEER] = "peer",          [AUT_DROPIN] = "drop-in",
        [AUT_OWN] = "own",
    };
    return (unsigned)k < AUT_NKINDS ? names[k] : "unknown";
}
