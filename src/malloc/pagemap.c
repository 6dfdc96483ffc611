// SPDX-License-Identifier: MIT
/*
 * malloc/pagemap.c -- the radix tree from page number to span and size
 * class (the structure the thread-caching allocator study, docs/METHODS.md,
 * found it needed: its locked hash map was the bottleneck; a radix tree
 * makes lookups lock-free).
 *
 *   address (48 bits):  | root index (15) | leaf index (20) | offset (13) |
 *                             |                   |
 *   rtmm_pm_root[32768] ---> pm_leaf: classes[1 << 20], spans[1 << 20]
 *
 * The root is 256 KiB of zero-initialised static memory (only the pages
 * holding used entries ever become resident). A leaf is 10 MiB of address
 * space mapped lazily and covers 8 GiB of heap, of which only the entries
 * of pages in use are ever touched: 10 bytes per 8 KiB page, about 0.1 %.
 * A class entry is 16 bits: the class and the span's owner tag (internal.h).
 * Writers hold the heap lock; readers take no lock (internal.h says why
 * that is safe). Leaves are never unmapped.
 */
#include <string.h>

#include "malloc/internal.h"
#include "os/pages.h"

_Atomic(pm_leaf *) rtmm_pm_root[PM_ROOT_SIZE];
static size_t leaf_bytes_total;

static size_t leaf_bytes(void)
{
    size_t ps = rtm_os_page_size();
    return (sizeof(pm_leaf) + ps - 1u) & ~(ps - 1u);
}

int rtmm_pm_ensure(uintptr_t start, size_t pages)
{
    uintptr_t first = start >> (PAGE_SHIFT + PM_LEAF_BITS);
    uintptr_t last = (start + (pages << PAGE_SHIFT) - 1u) >> (PAGE_SHIFT + PM_LEAF_BITS);
    if (last >= PM_ROOT_SIZE)
        return -1; /* beyond 48 bits: not an address we can map */
    for (uintptr_t i = first; i <= last; i++) {
        if (atomic_load_explicit(&rtmm_pm_root[i], memory_order_relaxed) != NULL)
            continue;
        pm_leaf *leaf = rtm_os_map(leaf_bytes());
        if (leaf == NULL)
            return -1;
        leaf_bytes_total += leaf_bytes();
        atomic_store_explicit(&rtmm_pm_root[i], leaf, memory_order_release);
    }
    return 0;
}

static void set_one(uintptr_t page_addr, span *value, unsigned cls)
{
    pm_leaf *l = atomic_load_explicit(&rtmm_pm_root[page_addr >> (PAGE_SHIFT + PM_LEAF_BITS)],
                                      memory_order_relaxed);
    size_t i = pm_index(page_addr);
    atomic_store_explicit(&l->spans[i], value, memory_order_relaxed);
    atomic_store_explicit(&l->classes[i], (uint16_t)cls, memory_order_relaxed);
}

void rtmm_pm_set_owner(span *s, unsigned tag)
{
    uint16_t v = (uint16_t)(s->cls | tag << 8);
    for (size_t k = 0; k < s->pages; k++) {
        uintptr_t a = s->start + (k << PAGE_SHIFT);
        pm_leaf *l = atomic_load_explicit(&rtmm_pm_root[a >> (PAGE_SHIFT + PM_LEAF_BITS)],
                                          memory_order_relaxed);
        atomic_store_explicit(&l->classes[pm_index(a)], v, memory_order_relaxed);
    }
    s->owner = (uint8_t)tag;
}

void rtmm_pm_set_all(const span *s, span *value, unsigned cls)
{
    for (size_t i = 0; i < s->pages; i++)
        set_one(s->start + (i << PAGE_SHIFT), value, cls);
}

void rtmm_pm_set_ends(span *s)
{
    set_one(s->start, s, 0);
    set_one(s->start + ((s->pages - 1u) << PAGE_SHIFT), s, 0);
}

/* Pre-faults and locks the leaf pages holding the range's entries, so the
 * real-time arena's page-map updates never fault. The entries must still
 * be zero (prefaulting writes zeros). */
static void prefault_array(uintptr_t lo, uintptr_t hi)
{
    size_t ps = rtm_os_page_size();
    lo &= ~(uintptr_t)(ps - 1u);
    hi = (hi + ps - 1u) & ~(uintptr_t)(ps - 1u);
    (void)rtm_os_prefault_lock((void *)lo, (size_t)(hi - lo));
}

void rtmm_pm_prefault(uintptr_t start, size_t pages)
{
    uintptr_t last = start + ((pages - 1u) << PAGE_SHIFT);
    for (uintptr_t a = start; a <= last;) {
        pm_leaf *l = pm_leaf_of(a);
        size_t k = pm_index(a);
        size_t n = PM_LEAF_SIZE - k;
        if (n > ((last - a) >> PAGE_SHIFT) + 1u)
            n = ((last - a) >> PAGE_SHIFT) + 1u;
        prefault_array((uintptr_t)&l->spans[k], (uintptr_t)&l->spans[k + n]);
        prefault_array((uintptr_t)&l->classes[k], (uintptr_t)(&l->classes[k + n - 1u] + 1));
        a += n << PAGE_SHIFT;
    }
}

size_t rtmm_pm_bytes(void) { return leaf_bytes_total; }
