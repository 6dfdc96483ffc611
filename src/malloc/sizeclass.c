// SPDX-License-Identifier: MIT
/*
 * malloc/sizeclass.c -- the size-class table: which block size serves a
 * request, how many pages a span of each class has, and how many blocks the
 * caches hold.
 *
 * The classes (72 of them, class 0 means "not small"):
 *
 *   16, 32, 48, ..., 128                 16-byte steps        (8 classes)
 *   then 8 steps per doubling up to 32 KiB:
 *   144, 160, ..., 256                   steps of 16
 *   288, 320, ..., 512                   steps of 32
 *   ...                                  ...
 *   28672, 30720, 32768                  steps of 4096        (64 classes)
 *
 * Worst internal waste (block size minus request, over the block size):
 * below 128 bytes the 16-byte alignment decides (17 -> 32 bytes: 15 bytes,
 * 47 %; at most 15 bytes in absolute terms); from 129 up, a request one byte
 * above a class gets the next class, 1/8 of the lower bound further:
 * (s/8 - 1) / (9s/8) < 1/9 = 11.1 % (129 -> 144: 10.4 %). Every class is a
 * multiple of 16, so every block is 16-aligned; every power of two is a
 * class, so aligned requests up to a page find a class whose blocks are
 * naturally aligned within 8 classes.
 *
 * Spans: about 64 blocks (at least one page, at most 256 KiB, at most 512
 * blocks: the bitmap), grown one page at a time until the unusable tail is
 * at most 1/8 of the span.
 *
 * Caches: a thread keeps up to 128 KiB per class (8 to 256 blocks) and
 * moves half of that per refill or flush; the central transfer cache keeps
 * up to 256 KiB per class (32 to 1024 blocks). Summed over the classes:
 * 8 MiB per thread cache, 22 MiB for all transfer caches (docs/MALLOC.md,
 * "Bounds").
 */
#include "malloc/internal.h"

uint8_t rtmm_class_index[CLASS_SLOTS];
/* Entry 0 ("not small") and the entries past rtmm_nclass stay all zero:
 * fast_free() (fastpath.h) reads class 0's group for a page that is not
 * small, and must find it 0, not 1. */
class_info rtmm_class[NCLASS];
unsigned rtmm_nclass;

static uint32_t clamp32(size_t v, uint32_t lo, uint32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

static void span_geometry(class_info *c)
{
    size_t size = c->size;
    size_t want = size * 64u;
    want = want < PAGE_BYTES ? PAGE_BYTES : want > ((size_t)256 << 10) ? (size_t)256 << 10 : want;
    size_t pages = (want + PAGE_BYTES - 1u) / PAGE_BYTES;
    while (((pages * PAGE_BYTES) % size) > (pages * PAGE_BYTES) / 8u)
        pages++;
    size_t nobj = pages * PAGE_BYTES / size;
    if (nobj > SPAN_OBJS) {
        nobj = SPAN_OBJS;
        pages = (nobj * size + PAGE_BYTES - 1u) / PAGE_BYTES;
    }
    c->pages = (uint32_t)pages;
    c->nobj = (uint32_t)(nobj - nobj % c->group); /* whole groups only */
}

/* Blocks per cache-line group (internal.h): 64 / gcd(size, 64); every
 * size is a multiple of 16, so 1, 2 or 4. */
static uint32_t line_group(size_t size)
{
    return size % CACHE_LINE == 0 ? 1u : size % (CACHE_LINE / 2u) == 0 ? 2u : 4u;
}

static void add_class(size_t size)
{
    class_info *c = &rtmm_class[rtmm_nclass++];
    c->size = (uint32_t)size;
    c->group = line_group(size);
    span_geometry(c);
    c->cap = clamp32(((size_t)128 << 10) / size, 8u, 256u);
    /* The most a refill brings: half the bin, and at most 32 KiB, so that a
     * thread that only allocates a class (a producer) holds less than that
     * of it (tcache.c, "Adaptive bins"). */
    c->batch = clamp32(((size_t)32 << 10) / size, 4u, c->cap / 2u);
    c->xcap = clamp32(((size_t)256 << 10) / size, 32u, 1024u);
}

void rtmm_sizeclass_init(void)
{
    rtmm_nclass = 1; /* class 0: not small */
    for (size_t s = 16; s <= 128; s += 16)
        add_class(s);
    for (size_t base = 128; base < SMALL_MAX; base *= 2)
        for (size_t i = 1; i <= 8; i++)
            add_class(base + i * (base / 8u));
    /* The lookup table: for each slot, the first class that fits every
     * size of the slot (slots are 16 or 128 bytes wide, and class sizes are
     * multiples of the width there). */
    unsigned cls = 1;
    for (size_t slot = 0; slot < CLASS_SLOTS; slot++) {
        size_t top = slot <= 64u ? slot * 16u : 1024u + (slot - 64u) * 128u;
        while (rtmm_class[cls].size < top)
            cls++;
        rtmm_class_index[slot] = (uint8_t)cls;
    }
}

unsigned rtmm_class_for_aligned(size_t size, size_t align)
{
    if (size > SMALL_MAX)
        return 0;
    for (unsigned c = rtmm_class_index[class_slot(size)]; c < rtmm_nclass; c++)
        if (rtmm_class[c].size % align == 0)
            return c;
    return 0;
}
