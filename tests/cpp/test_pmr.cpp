// SPDX-License-Identifier: MIT
/*
 * tests/cpp/test_pmr.cpp -- include/rtmem/pmr.hpp: rtm heaps as
 * std::pmr::memory_resource (rtmem::heap_resource) and as a standard
 * Allocator (rtmem::allocator<T>), with the owning handles rtmem::heap and
 * rtmem::locked_heap.
 *
 * One program, one ctest entry per mode:
 *  --algorithm <label>  the standard containers on one algorithm (tlsf,
 *      halffit, heapmem, slab, buddy = "buddy:64", pool = "pool:256"),
 *      each workload twice: through heap_resource (std::pmr containers,
 *      polymorphic_allocator) and through rtmem::allocator. Workloads:
 *       - list, map<int, string> (the strings on the heap too), unordered_map,
 *         vector growth, string building, allocate_shared; every result is
 *         compared with the same operations on std:: containers; the heap
 *         must hold blocks while they live and none afterwards
 *         (live_blocks == 0, rtm_heap_check == 0);
 *       - exhaustion on a small heap: std::bad_alloc, the container left as
 *         it was (strong guarantee), the heap consistent, failed_allocs
 *         counted; after freeing, allocation works again;
 *       - an alignas(64) type in a vector: every element at a multiple of
 *         64 where the algorithm aligns (tlsf, halffit, heapmem, slab,
 *         buddy; the pool at a region start where its blocks are
 *         64-aligned), std::bad_alloc with ENOTSUP where it cannot (the
 *         pool at a start where they are not), the heap consistent either way;
 *       - direct resource calls at alignments 1 .. 4096: served and aligned
 *         up to what the algorithm documents, else refused with ENOTSUP;
 *       - propagation: move assignment and swap carry the heap with the
 *         storage (no block allocated or freed on either heap), copy
 *         assignment keeps the destination's heap.
 *     The pool's 256-byte blocks hold list and map nodes and small buffers
 *     only, so its workloads stay below 256 bytes per block.
 *  --api   rtmem::heap / locked_heap: std::system_error with errno EINVAL
 *      (unknown algorithm, region too small, no region), the error_code
 *      overloads, moved-from handles (nullptr, destroying them does
 *      nothing, the heap lives on in the new owner), destruction calls
 *      rtm_heap_destroy; equality of resources and allocators; the
 *      allocator traits.
 *  --threads  one rtmem::locked_heap (tlsf, slab) shared by four threads,
 *      each with its own std::pmr::map and rtmem::allocator vector on it,
 *      checked against a model; labelled "threads" (the TSan stage).
 *  --mt  one rtmem::mt_heap (tlsf, halffit): four threads, each holding an
 *      rtmem::mt_attachment, run the same bodies; strings made by an
 *      attached thread are destroyed by another (remote frees); creation
 *      errors; labelled "threads".
 *
 * Regions come from region_map_guarded(): a heap touching a byte outside its
 * region faults at once.
 */
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <memory_resource>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

extern "C" {
#include "../common/region.h"
}
#include "../common/check.h"
#include "../common/rng.h"
#include "rtmem/pmr.hpp"

namespace
{

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * 1024;

/* How each algorithm is expected to behave. */
struct algorithm {
    const char *label; /* ctest name and --algorithm value           */
    const char *name;  /* rtm_heap_create()'s name                    */
    bool mixed;        /* serves blocks of any size (not the pool)    */
    std::size_t align; /* every alignment up to this one is served; 0:
                          what the pool's blocks allow (asked of the heap) */
    bool restores;     /* freeing everything gives back the whole region
                          (slab keeps one empty slab per size class) */
};

const algorithm algorithms[] = {
    {"tlsf", "tlsf", true, 4096, true},       {"halffit", "halffit", true, 65536, true},
    {"heapmem", "heapmem", true, 512, true},  {"slab", "slab", true, 512, false},
    {"buddy", "buddy:64", true, 64, true},    {"pool", "pool:256", false, 0, true},
    {"xvmalloc", "xvmalloc", false, 8, true}, /* no block above a page: small workloads */
};

const algorithm *current = &algorithms[0];

/* A guarded region (PROT_NONE pages on both sides) for one heap. */
class region
{
  public:
    /* lead: the region starts that many bytes into its first page. */
    explicit region(std::size_t bytes, std::size_t lead = 0)
    {
        std::size_t page = region_page_size();
        g_ = region_map_guarded((bytes + page - 1) / page, lead);
    }
    ~region() { region_unmap_guarded(&g_); }
    region(const region &) = delete;
    region &operator=(const region &) = delete;
    void *mem() const { return g_.mem; }
    std::size_t bytes() const { return g_.bytes; }

  private:
    guarded_region g_;
};

std::size_t live_blocks(rtm_heap *h) { return rtm_heap_stats(h).live_blocks; }

void check_heap_empty(rtm_heap *h, const char *what)
{
    rtm_stats st = rtm_heap_stats(h);
    CHECK_MSG(st.live_blocks == 0, "%s on %s: %zu blocks left", what, current->name,
              st.live_blocks);
    CHECK_MSG(rtm_heap_check(h) == 0, "%s on %s: heap check failed", what, current->name);
}

/* The allocator of the other type, the same heap. */
template <class Alloc, class U>
using rebind = typename std::allocator_traits<Alloc>::template rebind_alloc<U>;

/* The same text for the container and its model. */
std::string text_for(rng *r, std::size_t max_len)
{
    std::size_t len = rng_below(r, max_len + 1);
    std::string s(len, ' ');
    for (std::size_t i = 0; i < len; i++)
        s[i] = static_cast<char>('a' + rng_below(r, 26));
    return s;
}

/* ---- standard containers, compared with std:: models ------------------ */

template <class Alloc> void list_workload(Alloc a, rtm_heap *h)
{
    std::list<int, rebind<Alloc, int>> l(a);
    std::list<int> model;
    rng r{11};
    for (int i = 0; i < 4000; i++) {
        switch (rng_below(&r, 4)) {
        case 0:
        case 1:
            l.push_back(i);
            model.push_back(i);
            break;
        case 2:
            l.push_front(-i);
            model.push_front(-i);
            break;
        default:
            if (!model.empty()) {
                l.pop_front();
                model.pop_front();
            }
        }
    }
    CHECK(live_blocks(h) == model.size());
    CHECK(std::equal(l.begin(), l.end(), model.begin(), model.end()));
}

template <class Alloc> void map_workload(Alloc a, rtm_heap *h, bool mixed)
{
    using string_t = std::basic_string<char, std::char_traits<char>, rebind<Alloc, char>>;
    using map_t =
        std::map<int, string_t, std::less<int>, rebind<Alloc, std::pair<const int, string_t>>>;
    map_t m(a);
    std::map<int, std::string> model;
    rng r{12};
    /* A pool block holds 255 chars; a string grows to twice its capacity. */
    std::size_t max_len = mixed ? 400 : 120;
    for (int i = 0; i < 6000; i++) {
        int k = static_cast<int>(rng_below(&r, 600));
        if (rng_below(&r, 3) == 0) {
            m.erase(k);
            model.erase(k);
            continue;
        }
        std::string t = text_for(&r, max_len);
        auto it = m.find(k);
        if (it == m.end())
            m.emplace(k, string_t(t.data(), t.size(), a));
        else
            it->second.assign(t.data(), t.size());
        model[k] = t;
    }
    /* Nodes and long strings are the heap's blocks. */
    std::size_t long_strings = 0; /* beyond the short-string buffer */
    for (const auto &kv : m)
        long_strings += kv.second.capacity() > string_t(a).capacity() ? 1u : 0u;
    CHECK_EQ(live_blocks(h), model.size() + long_strings);
    CHECK_EQ(m.size(), model.size());
    bool same = std::equal(
        m.begin(), m.end(), model.begin(), model.end(), [](const auto &x, const auto &y) {
            return x.first == y.first && std::string(x.second.data(), x.second.size()) == y.second;
        });
    CHECK(same);
    /* Strings allocated by the map's nodes' allocator: the same heap. */
    if (!m.empty())
        CHECK(m.begin()->second.get_allocator() == a);
}

template <class Alloc> void unordered_workload(Alloc a, rtm_heap *h, bool mixed)
{
    using map_t = std::unordered_map<int, long, std::hash<int>, std::equal_to<int>,
                                     rebind<Alloc, std::pair<const int, long>>>;
    map_t m(a);
    std::unordered_map<int, long> model;
    rng r{13};
    /* A pool block holds a bucket array of up to 32 pointers: the pool's
     * map stays at most 20 keys (29 buckets). */
    std::size_t keys = mixed ? 2000 : 20;
    for (int i = 0; i < 8000; i++) {
        int k = static_cast<int>(rng_below(&r, keys));
        if (rng_below(&r, 3) == 0) {
            m.erase(k);
            model.erase(k);
        } else {
            m[k] += i;
            model[k] += i;
        }
    }
    CHECK(live_blocks(h) >= model.size());
    CHECK_EQ(m.size(), model.size());
    bool same = true;
    for (const auto &kv : model) {
        auto it = m.find(kv.first);
        same = same && it != m.end() && it->second == kv.second;
    }
    CHECK(same);
}

template <class Alloc> void vector_workload(Alloc a, rtm_heap *h, bool mixed)
{
    std::vector<std::int64_t, rebind<Alloc, std::int64_t>> v(a);
    /* Growth by doubling through the heap; the pool's vector stays in one
     * 256-byte block (32 elements). */
    std::size_t n = mixed ? 60000 : 32;
    for (std::size_t i = 0; i < n; i++)
        v.push_back(static_cast<std::int64_t>(i * 7u));
    CHECK_EQ(live_blocks(h), 1);
    bool same = true;
    for (std::size_t i = 0; i < n; i++)
        same = same && v[i] == static_cast<std::int64_t>(i * 7u);
    CHECK(same);
    CHECK(reinterpret_cast<std::uintptr_t>(v.data()) % alignof(std::int64_t) == 0);
    v.resize(n / 2);
    v.shrink_to_fit();
    CHECK_EQ(v.size(), n / 2);
    CHECK_EQ(v[n / 2 - 1], static_cast<std::int64_t>((n / 2 - 1) * 7u));
}

template <class Alloc> void string_workload(Alloc a, rtm_heap *h, bool mixed)
{
    using string_t = std::basic_string<char, std::char_traits<char>, rebind<Alloc, char>>;
    string_t s(a);
    std::string model;
    rng r{14};
    std::size_t limit = mixed ? 20000 : 230; /* capacity 240 < 256 */
    while (model.size() < limit) {
        std::string piece = text_for(&r, 9);
        if (model.size() + piece.size() > limit)
            break;
        s += piece.c_str();
        s.push_back('/');
        model += piece;
        model.push_back('/');
        if (model.size() > limit)
            break;
    }
    CHECK(std::string(s.data(), s.size()) == model);
    CHECK_EQ(live_blocks(h), s.capacity() > string_t(a).capacity() ? 1 : 0);
    string_t copy(s, a); /* polymorphic_allocator copies to the default resource */
    CHECK(copy == s);
    CHECK(copy.get_allocator() == a);
}

struct tracked {
    int id;
    double value;
    tracked(int i, double v) : id(i), value(v) {}
};

template <class Alloc> void shared_workload(Alloc a, rtm_heap *h)
{
    std::size_t before = live_blocks(h);
    {
        auto p = std::allocate_shared<tracked>(rebind<Alloc, tracked>(a), 7, 2.5);
        CHECK_EQ(live_blocks(h), before + 1); /* control block and object: one block */
        CHECK(p->id == 7 && p->value == 2.5);
        std::shared_ptr<tracked> q = p;
        p.reset();
        CHECK_EQ(live_blocks(h), before + 1);
        CHECK_EQ(q.use_count(), 1);
    }
    CHECK_EQ(live_blocks(h), before);
}

template <class Alloc> void containers(Alloc a, rtm_heap *h, const char *how)
{
    bool mixed = current->mixed;
    list_workload(a, h);
    check_heap_empty(h, how);
    map_workload(a, h, mixed);
    check_heap_empty(h, how);
    unordered_workload(a, h, mixed);
    check_heap_empty(h, how);
    vector_workload(a, h, mixed);
    check_heap_empty(h, how);
    string_workload(a, h, mixed);
    check_heap_empty(h, how);
    shared_workload(a, h);
    check_heap_empty(h, how);
}

void test_containers_resource()
{
    region mem(8 * MiB);
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    rtmem::heap_resource res(heap);
    containers(std::pmr::polymorphic_allocator<std::byte>(&res), heap.get(), "resource");
}

void test_containers_allocator()
{
    region mem(8 * MiB);
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    containers(rtmem::allocator<std::byte>(heap), heap.get(), "allocator");
}

/* ---- exhaustion -------------------------------------------------------- */

/* Inserts until the heap refuses; returns how many went in. The map must
 * be unchanged by the refused insert. */
template <class Map> std::size_t fill_until_refused(Map &m, rtm_heap *h)
{
    std::size_t failed0 = rtm_heap_stats(h).failed_allocs;
    std::size_t n = 0;
    bool refused = false;
    while (!refused && n < 1000000) {
        try {
            m.emplace(static_cast<int>(n), static_cast<long>(n) * 3);
            n++;
        } catch (const std::bad_alloc &) {
            refused = true;
        }
    }
    CHECK_MSG(refused, "%s: no std::bad_alloc after %zu inserts", current->name, n);
    CHECK_EQ(m.size(), n);
    CHECK(rtm_heap_stats(h).failed_allocs > failed0);
    CHECK(rtm_heap_check(h) == 0);
    bool same = true;
    for (std::size_t i = 0; i < n; i++) {
        auto it = m.find(static_cast<int>(i));
        same = same && it != m.end() && it->second == static_cast<long>(i) * 3;
    }
    CHECK(same);
    return n;
}

template <class Alloc> void exhaustion(Alloc a, rtm_heap *h, const char *how)
{
    using map_t = std::map<int, long, std::less<int>, rebind<Alloc, std::pair<const int, long>>>;
    std::size_t first;
    {
        map_t m(a);
        first = fill_until_refused(m, h);
        CHECK(first > 10);
    }
    check_heap_empty(h, how);
    if (current->mixed) {
        std::vector<std::int64_t, rebind<Alloc, std::int64_t>> v(a);
        bool refused = false;
        std::size_t n = 0;
        while (!refused && n < 100000000) {
            try {
                v.push_back(static_cast<std::int64_t>(n));
                n++;
            } catch (const std::bad_alloc &) {
                refused = true;
            }
        }
        CHECK_MSG(refused, "%s: vector never refused", current->name);
        CHECK_EQ(v.size(), n); /* push_back's strong guarantee */
        bool same = true;
        for (std::size_t i = 0; i < n; i++)
            same = same && v[i] == static_cast<std::int64_t>(i);
        CHECK(same);
        CHECK(rtm_heap_check(h) == 0);
    }
    check_heap_empty(h, how);
    /* Everything back: the heap serves as much as before. */
    {
        map_t m(a);
        std::size_t again = fill_until_refused(m, h);
        if (current->restores)
            CHECK_MSG(again == first, "%s: %zu inserts before, %zu after freeing", current->name,
                      first, again);
        else
            CHECK_MSG(again > first / 4, "%s: %zu inserts before, %zu after freeing", current->name,
                      first, again);
    }
    check_heap_empty(h, how);
}

std::size_t small_heap_bytes()
{
    return std::max<std::size_t>(64 * KiB, 2 * rtm_min_region(current->name));
}

void test_exhaustion_resource()
{
    region mem(small_heap_bytes());
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    rtmem::heap_resource res(heap);
    exhaustion(std::pmr::polymorphic_allocator<std::byte>(&res), heap.get(), "resource");
}

void test_exhaustion_allocator()
{
    region mem(small_heap_bytes());
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    exhaustion(rtmem::allocator<std::byte>(heap), heap.get(), "allocator");
}

/* ---- over-aligned types ------------------------------------------------- */

struct alignas(64) wide {
    std::uint32_t value;
    explicit wide(std::uint32_t v) : value(v) {}
};
static_assert(alignof(wide) == 64 && alignof(wide) > RTM_ALIGN, "over-aligned type");

/* Whether this heap gives 64-byte alignment: fixed per algorithm, asked of
 * the heap for the pool (its blocks' alignment depends on the region). */
bool expect_overaligned(rtm_heap *h)
{
    if (current->align != 0)
        return current->align >= 64;
    void *p = rtm_aligned_alloc(h, 64, sizeof(wide));
    rtm_free(h, p);
    return p != nullptr;
}

template <class Alloc> void overaligned(Alloc a, rtm_heap *h, const char *how)
{
    bool expect = expect_overaligned(h);
    std::printf("  %s, %s: alignas(64) expected %s\n", current->name, how,
                expect ? "served, aligned" : "refused (ENOTSUP)");
    std::uint32_t n = current->mixed ? 1000 : 4; /* 4 * 64 bytes: one pool block */
    {
        std::vector<wide, rebind<Alloc, wide>> v(a);
        bool refused = false;
        errno = 0;
        try {
            for (std::uint32_t i = 0; i < n; i++)
                v.emplace_back(i);
        } catch (const std::bad_alloc &) {
            refused = true;
        }
        if (expect) {
            CHECK_MSG(!refused, "%s (%s): alignas(64) refused", current->name, how);
            bool aligned = true, same = true;
            for (std::uint32_t i = 0; i < v.size(); i++) {
                aligned = aligned && reinterpret_cast<std::uintptr_t>(&v[i]) % 64 == 0;
                same = same && v[i].value == i;
            }
            CHECK_MSG(aligned, "%s (%s): an element not at a multiple of 64", current->name, how);
            CHECK(same);
            CHECK_EQ(v.size(), n);
        } else {
            CHECK_MSG(refused, "%s (%s): alignas(64) served but never aligned", current->name, how);
            CHECK_ERRNO(ENOTSUP);
            CHECK(v.empty());
        }
        CHECK(rtm_heap_check(h) == 0);
    }
    check_heap_empty(h, how);
}

constexpr std::size_t overaligned_region = 4 * MiB;

void overaligned_at(std::size_t lead)
{
    region mem(overaligned_region, lead);
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    rtmem::heap_resource res(heap);
    overaligned(std::pmr::polymorphic_allocator<std::byte>(&res), heap.get(), "resource");
    overaligned(rtmem::allocator<std::byte>(heap), heap.get(), "allocator");
}

/* Does a pool over a region starting `lead` bytes into a page give
 * 64-byte aligned blocks? (The layout depends on the region's size too.) */
bool pool_aligns_64(std::size_t lead)
{
    region mem(overaligned_region, lead);
    rtm_heap *h = rtm_heap_create(current->name, mem.mem(), mem.bytes());
    void *p = rtm_aligned_alloc(h, 64, 64);
    rtm_free(h, p);
    rtm_heap_destroy(h);
    return p != nullptr;
}

void test_overaligned()
{
    if (current->align != 0) {
        overaligned_at(0);
        return;
    }
    /* The pool's blocks are as aligned as its first block and its stride
     * allow: both paths, at a start where they are 64-aligned and at one
     * where they are not. */
    int served = -1, refused = -1;
    for (int lead = 0; lead < 64; lead += 8)
        (pool_aligns_64(static_cast<std::size_t>(lead)) ? served : refused) = lead;
    CHECK_MSG(served >= 0, "%s: no start address gives 64-aligned blocks", current->name);
    CHECK_MSG(refused >= 0, "%s: every start address gives 64-aligned blocks", current->name);
    if (served >= 0)
        overaligned_at(static_cast<std::size_t>(served));
    if (refused >= 0)
        overaligned_at(static_cast<std::size_t>(refused));
}

/* heap_resource::allocate at every alignment up to 4096: aligned as asked,
 * or refused with std::bad_alloc (algorithms without that alignment). */
void test_resource_alignments()
{
    region mem(1 * MiB);
    rtmem::heap heap(current->name, mem.mem(), mem.bytes());
    rtmem::heap_resource res(heap);
    std::pmr::memory_resource &mr = res;
    bool any_refused = false;
    for (std::size_t align = 1; align <= 4096; align *= 2) {
        std::size_t bytes = current->mixed ? 3 * align + 5 : 100;
        void *p = nullptr;
        try {
            p = mr.allocate(bytes, align);
        } catch (const std::bad_alloc &) {
            any_refused = true;
            /* Up to the documented alignment a refusal is a bug; above it
             * the algorithm says ENOTSUP. */
            CHECK_MSG(align > current->align && align > RTM_ALIGN, "%s: alignment %zu refused",
                      current->name, align);
            CHECK_ERRNO(ENOTSUP);
            continue;
        }
        CHECK_MSG(reinterpret_cast<std::uintptr_t>(p) % align == 0, "%s: %zu-aligned request",
                  current->name, align);
        CHECK(rtm_usable_size(heap.get(), p) >= bytes);
        std::memset(p, 0x5a, bytes);
        mr.deallocate(p, bytes, align);
    }
    if (current->align == 8)
        CHECK(any_refused); /* xvmalloc: ENOTSUP above 8 */
    check_heap_empty(heap.get(), "alignments");
}

/* ---- propagation -------------------------------------------------------- */

void test_propagation()
{
    region m1(1 * MiB), m2(1 * MiB);
    rtmem::heap h1(current->name, m1.mem(), m1.bytes());
    rtmem::heap h2(current->name, m2.mem(), m2.bytes());
    using vec = std::vector<std::int64_t, rtmem::allocator<std::int64_t>>;
    rtmem::allocator<std::int64_t> a1(h1), a2(h2);
    {
        vec a(a1), b(a2);
        for (int i = 0; i < 20; i++)
            a.push_back(i);
        b.push_back(-1);
        std::size_t l1 = live_blocks(h1.get()), l2 = live_blocks(h2.get());
        CHECK_EQ(l1, 1);
        CHECK_EQ(l2, 1);
        const std::int64_t *storage = a.data();
        /* Move assignment: b takes a's block and its heap; b's old block
         * goes back to h2; nothing is allocated. */
        b = std::move(a);
        CHECK(b.get_allocator() == a1);
        CHECK(b.data() == storage);
        CHECK_EQ(b.size(), 20);
        CHECK_EQ(live_blocks(h1.get()), 1);
        CHECK_EQ(live_blocks(h2.get()), 0);
        /* Swap: storage and heaps exchange, nothing allocated. */
        vec c(a2);
        c.push_back(5);
        std::swap(b, c);
        CHECK(b.get_allocator() == a2 && c.get_allocator() == a1);
        CHECK(c.data() == storage && b.size() == 1 && b[0] == 5);
        CHECK_EQ(live_blocks(h1.get()), 1);
        CHECK_EQ(live_blocks(h2.get()), 1);
        /* Copy assignment: the destination keeps its heap and copies into it. */
        vec d(a2);
        d = c;
        CHECK(d.get_allocator() == a2);
        CHECK(d == c);
        CHECK_EQ(live_blocks(h1.get()), 1);
        CHECK_EQ(live_blocks(h2.get()), 2);
        /* A container copy-constructed takes the source's allocator
         * (select_on_container_copy_construction: the default, a copy). */
        vec e(c);
        CHECK(e.get_allocator() == a1);
    }
    check_heap_empty(h1.get(), "propagation h1");
    check_heap_empty(h2.get(), "propagation h2");
}

/* ---- the owning handles, equality, traits (--api) ------------------------ */

template <class Heap> void creation_errors(const char *what)
{
    region mem(64 * KiB);
    struct bad {
        const char *algorithm;
        void *mem;
        std::size_t bytes;
        const char *why;
    } cases[] = {
        {"nosuch", mem.mem(), mem.bytes(), "unknown algorithm"},
        {"tlsf", mem.mem(), rtm_min_region("tlsf") / 2, "region too small"},
        {"pool:0", mem.mem(), mem.bytes(), "bad parameter"},
        {"tlsf", nullptr, mem.bytes(), "no region"},
        {nullptr, mem.mem(), mem.bytes(), "no name"},
    };
    for (const bad &c : cases) {
        int code = 0;
        errno = 0;
        try {
            Heap h(c.algorithm, c.mem, c.bytes);
            CHECK_MSG(false, "%s: %s did not throw", what, c.why);
        } catch (const std::system_error &e) {
            code = e.code().value();
            CHECK(e.code().category() == std::generic_category());
        }
        CHECK_MSG(code == EINVAL, "%s: %s gave %d, expected EINVAL", what, c.why, code);
        std::error_code ec;
        Heap h(c.algorithm, c.mem, c.bytes, ec);
        CHECK_MSG(ec.value() == EINVAL, "%s: %s: error_code %d", what, c.why, ec.value());
        CHECK(h.get() == nullptr && !h);
    }
    /* A region one byte too small for a locked heap is refused as well. */
    std::size_t min = std::is_same<Heap, rtmem::locked_heap>::value ? rtm_locked_min_region("tlsf")
                                                                    : rtm_min_region("tlsf");
    std::error_code ec;
    Heap too_small("tlsf", mem.mem(), min - 1, ec);
    CHECK(ec == std::errc::invalid_argument);
    Heap just_right("tlsf", mem.mem(), mem.bytes(), ec);
    CHECK(!ec && just_right.get() != nullptr);
}

void test_creation_errors()
{
    creation_errors<rtmem::heap>("heap");
    creation_errors<rtmem::locked_heap>("locked_heap");
}

template <class Heap> void moves(const char *what)
{
    region m1(64 * KiB), m2(64 * KiB);
    rtm_heap *raw;
    {
        Heap a("tlsf", m1.mem(), m1.bytes());
        raw = a.get();
        CHECK(raw != nullptr);
        void *p = rtm_alloc(raw, 100);
        {
            Heap b(std::move(a));
            CHECK_MSG(a.get() == nullptr && !a, "%s: moved-from not empty", what);
            CHECK(b.get() == raw);
            {
                Heap dead(std::move(a)); /* moving an empty handle: still empty */
                CHECK(dead.get() == nullptr);
            } /* destroying moved-from handles: no-ops */
            CHECK(rtm_heap_check(raw) == 0);
            CHECK_EQ(live_blocks(raw), 1);
            /* Move assignment destroys the target's own heap first. */
            Heap c("tlsf", m2.mem(), m2.bytes());
            rtm_heap *raw_c = c.get();
            c = std::move(b);
            CHECK(c.get() == raw && b.get() == nullptr);
            errno = 0;
            CHECK(rtm_heap_check(raw_c) == -1); /* destroyed: later calls EINVAL */
            CHECK_ERRNO(EINVAL);
            Heap &same = c;
            c = std::move(same); /* self-move: nothing happens */
            CHECK(c.get() == raw);
            rtm_free(c.get(), p);
            CHECK(c.check() == 0 && c.stats().live_blocks == 0);
            /* release(): ownership leaves the object, the caller destroys. */
            rtm_heap *released = c.release();
            CHECK(released == raw && c.get() == nullptr);
            CHECK(rtm_heap_check(released) == 0);
            rtm_heap_destroy(released);
            a = Heap("tlsf", m1.mem(), m1.bytes()); /* the region again, a new heap */
            CHECK(a.get() != nullptr);
        }
        raw = a.get();
        CHECK(rtm_heap_check(raw) == 0);
    }
    errno = 0;
    CHECK_MSG(rtm_heap_check(raw) == -1, "%s: the destructor did not destroy the heap", what);
    CHECK_ERRNO(EINVAL);
}

void test_moves()
{
    moves<rtmem::heap>("heap");
    moves<rtmem::locked_heap>("locked_heap");
}

void test_equality()
{
    region m1(64 * KiB), m2(64 * KiB);
    rtmem::heap h1("tlsf", m1.mem(), m1.bytes());
    rtmem::heap h2("tlsf", m2.mem(), m2.bytes());
    rtmem::heap_resource r1(h1), r1b(h1.get()), r2(h2);
    CHECK(r1 == r1);
    CHECK(r1 == r1b); /* two resources, one heap: blocks of one free in the other */
    CHECK(r1 != r2);
    CHECK(r1 != *std::pmr::new_delete_resource());
    CHECK(*std::pmr::new_delete_resource() != r1);
    CHECK(r1.get() == h1.get());
    std::pmr::polymorphic_allocator<int> p1(&r1), p1b(&r1b), p2(&r2);
    CHECK(p1 == p1b && p1 != p2);
    /* A block from one resource freed through the other. */
    void *b = r1.allocate(64, 8);
    r1b.deallocate(b, 64, 8);
    CHECK_EQ(live_blocks(h1.get()), 0);

    rtmem::allocator<int> a1(h1), a1b(h1.get()), a2(h2);
    rtmem::allocator<double> d1(a1);
    CHECK(a1 == a1b && a1 == d1 && d1 == a1);
    CHECK(a1 != a2 && d1 != a2);
    CHECK(rtmem::allocator<char>(d1) == a1);
    CHECK(d1.get() == h1.get());
    /* Same heap: a block of one is freed by the other. */
    int *x = a1.allocate(10);
    rtmem::allocator<int>(d1).deallocate(x, 10);
    CHECK_EQ(live_blocks(h1.get()), 0);
}

void test_traits()
{
    using A = rtmem::allocator<int>;
    using T = std::allocator_traits<A>;
    static_assert(std::is_same<T::value_type, int>::value, "value_type");
    static_assert(std::is_same<T::rebind_alloc<long>, rtmem::allocator<long>>::value, "rebind");
    static_assert(!T::propagate_on_container_copy_assignment::value, "POCCA");
    static_assert(T::propagate_on_container_move_assignment::value, "POCMA");
    static_assert(T::propagate_on_container_swap::value, "POCS");
    static_assert(!T::is_always_equal::value, "is_always_equal");
    static_assert(!std::is_default_constructible<A>::value, "a container must name its heap");
    static_assert(!std::is_convertible<rtm_heap *, A>::value, "explicit from rtm_heap *");
    static_assert(std::is_convertible<rtmem::heap &, A>::value, "implicit from rtmem::heap&");
    static_assert(std::is_nothrow_copy_constructible<A>::value, "copy: noexcept");
    static_assert(std::is_nothrow_move_constructible<rtmem::heap>::value, "heap: movable");
    static_assert(!std::is_copy_constructible<rtmem::heap>::value, "heap: not copyable");
    static_assert(!std::is_copy_assignable<rtmem::locked_heap>::value, "not copyable");
    static_assert(std::is_nothrow_move_assignable<rtmem::locked_heap>::value, "movable");
    static_assert(std::is_base_of<std::pmr::memory_resource, rtmem::heap_resource>::value, "pmr");
    /* A vector move-assigned under POCMA never throws. */
    static_assert(std::is_nothrow_move_assignable<std::vector<int, A>>::value, "noexcept move");

    region mem(64 * KiB);
    rtmem::heap h("tlsf", mem.mem(), mem.bytes());
    A a(h);
    CHECK(T::max_size(a) > 0);
    /* An allocator count whose size overflows: bad_array_new_length. */
    bool threw = false;
    try {
        (void)rtmem::allocator<std::int64_t>(a).allocate(static_cast<std::size_t>(-1) / 4);
    } catch (const std::bad_array_new_length &) {
        threw = true;
    }
    CHECK(threw);
    /* Far too large: bad_alloc, the heap counts the refusal. */
    threw = false;
    try {
        (void)a.allocate(1u << 20);
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    CHECK(threw);
    CHECK_EQ(h.stats().failed_allocs, 1);
    CHECK(h.check() == 0);
}

/* ---- threads on one locked heap (--threads) ------------------------------ */

void thread_body(rtm_heap *shared, unsigned seed, int *failures)
{
    rtmem::heap_resource res(shared);
    std::pmr::map<int, std::pmr::string> m(&res);
    std::vector<int, rtmem::allocator<int>> v{rtmem::allocator<int>(shared)};
    std::map<int, std::string> model;
    rng r{seed};
    for (int i = 0; i < 20000; i++) {
        int k = static_cast<int>(rng_below(&r, 300));
        if (rng_below(&r, 3) == 0) {
            m.erase(k);
            model.erase(k);
        } else {
            std::string t = text_for(&r, 60);
            m[k] = std::pmr::string(t.data(), t.size(), &res);
            model[k] = t;
        }
        v.push_back(i);
        if (v.size() > 500)
            v.erase(v.begin(), v.begin() + 250);
    }
    bool same = m.size() == model.size();
    for (const auto &kv : model) {
        auto it = m.find(kv.first);
        same =
            same && it != m.end() && std::string(it->second.data(), it->second.size()) == kv.second;
    }
    if (!same)
        ++*failures;
}

void test_locked_threads()
{
    for (const char *name : {"tlsf", "slab"}) {
        region mem(8 * MiB);
        rtmem::locked_heap heap(name, mem.mem(), mem.bytes());
        int failures[4] = {0, 0, 0, 0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; t++)
            threads.emplace_back(thread_body, heap.get(), 100 + t, &failures[t]);
        for (auto &t : threads)
            t.join();
        for (int f : failures)
            CHECK_MSG(f == 0, "%s: a thread's map differs from its model", name);
        CHECK_EQ(heap.stats().live_blocks, 0);
        CHECK_EQ(heap.stats().failed_allocs, 0);
        CHECK(heap.check() == 0);
    }
}

/* An mt heap: each thread attached (mt_attachment) with its own map and
 * vector, and a hand-over: strings made by one thread are destroyed by the
 * next (remote frees into the maker's shard). */
void handoff_body(std::pmr::vector<std::pmr::string> *out, int *done)
{
    /* The vector gives each string its resource (uses-allocator). */
    for (int i = 0; i < 2000; i++)
        out->emplace_back(static_cast<std::size_t>(20 + i % 200), 'x');
    *done = 1;
}

void test_mt_threads()
{
    for (const char *name : {"tlsf", "halffit"}) {
        region mem(16 * MiB);
        rtmem::mt_heap heap(name, mem.mem(), mem.bytes(), 4);
        int failures[4] = {0, 0, 0, 0};
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < 4; t++)
            threads.emplace_back([&heap, &failures, t] {
                rtmem::mt_attachment shard(heap);
                CHECK(shard.attached());
                thread_body(heap.get(), 200 + t, &failures[t]);
            });
        for (auto &t : threads)
            t.join();
        for (int f : failures)
            CHECK_MSG(f == 0, "mt %s: a thread's map differs from its model", name);
        CHECK_EQ(heap.stats().live_blocks, 0);
        /* Made by an attached thread, destroyed by this (unattached) one. */
        {
            rtmem::heap_resource res(heap);
            std::pmr::vector<std::pmr::string> made(&res);
            int done = 0;
            std::thread maker([&heap, &made, &done] {
                rtmem::mt_attachment shard(heap);
                handoff_body(&made, &done);
            });
            maker.join();
            CHECK(done == 1);
            CHECK(heap.stats().live_blocks > 0);
        }
        CHECK_EQ(heap.stats().live_blocks, 0);
        CHECK_EQ(heap.stats().failed_allocs, 0);
        CHECK(heap.check() == 0);
    }
    /* Creation errors as the other heaps: system_error with EINVAL. */
    region mem(1 * MiB);
    bool threw = false;
    try {
        rtmem::mt_heap bad("tlsf", mem.mem(), mem.bytes(), 0);
    } catch (const std::system_error &e) {
        threw = e.code().value() == EINVAL;
    }
    CHECK(threw);
    std::error_code ec;
    rtmem::mt_heap quiet("pool", mem.mem(), mem.bytes(), 2, ec);
    CHECK(quiet.get() == nullptr && ec.value() == EINVAL);
}

int usage()
{
    std::fprintf(stderr, "usage: test_pmr --api | --threads | --mt | --algorithm");
    for (const algorithm &a : algorithms)
        std::fprintf(stderr, " %s", a.label);
    std::fputc('\n', stderr);
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 2 && std::strcmp(argv[1], "--api") == 0) {
        RUN_TEST(test_creation_errors);
        RUN_TEST(test_moves);
        RUN_TEST(test_equality);
        RUN_TEST(test_traits);
        return check_summary();
    }
    if (argc == 2 && std::strcmp(argv[1], "--threads") == 0) {
        RUN_TEST(test_locked_threads);
        return check_summary();
    }
    if (argc == 2 && std::strcmp(argv[1], "--mt") == 0) {
        RUN_TEST(test_mt_threads);
        return check_summary();
    }
    if (argc != 3 || std::strcmp(argv[1], "--algorithm") != 0)
        return usage();
    current = nullptr;
    for (const algorithm &a : algorithms)
        if (std::strcmp(argv[2], a.label) == 0)
            current = &a;
    if (current == nullptr)
        return usage();
    std::printf("algorithm %s\n", current->name);
    RUN_TEST(test_containers_resource);
    RUN_TEST(test_containers_allocator);
    RUN_TEST(test_exhaustion_resource);
    RUN_TEST(test_exhaustion_allocator);
    RUN_TEST(test_overaligned);
    RUN_TEST(test_resource_alignments);
    RUN_TEST(test_propagation);
    return check_summary();
}
