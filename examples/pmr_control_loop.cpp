// SPDX-License-Identifier: MIT
/*
 * examples/pmr_control_loop.cpp -- a periodic control loop that keeps
 * ordinary std::pmr containers (vector, map, unordered_map, string) and
 * still makes no system call and takes no page fault after start-up.
 *
 * The recipe (docs/CPP.md):
 *  1. start-up, where anything may happen: lock the heap's region in RAM
 *     (mlock; best effort, RLIMIT_MEMLOCK may refuse), write every page of
 *     it so that it is resident, touch the stack the loop will use, build
 *     a TLSF heap over the region and the containers over the heap, make
 *     the default pmr resource the null resource (a container that forgot
 *     its resource fails at once instead of calling operator new), and run
 *     the loop for a while to map every code page it needs;
 *  2. the loop: containers grow, shrink, insert and erase freely; every
 *     block comes from TLSF in O(1) (at most 111 / 116 instructions per
 *     alloc / free on x86-64), inside pages already resident. No malloc, no
 *     mmap/brk, no futex, no page fault.
 * tests/cpp/test_pmr_control_loop.cpp proves step 2: it runs run_loop()
 * in a child under seccomp strict mode (any system call but read, write,
 * exit and sigreturn kills it), counts page faults with getrusage and
 * counts calls of operator new around it.
 *
 * Build and run:
 *   c++ -std=c++17 -O2 -Iinclude examples/pmr_control_loop.cpp build/librtmem.a -lpthread
 *   ./a.out [iterations [period_us]] [--mlockall]
 * With --mlockall the whole process is locked (mlockall(MCL_CURRENT |
 * MCL_FUTURE)), as a real deployment does so that code and libraries are
 * never paged out either; it needs RLIMIT_MEMLOCK or CAP_IPC_LOCK.
 *
 * The functions in namespace control_loop are what a test links against;
 * define PMR_CONTROL_LOOP_NO_MAIN to leave main() out.
 */
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <sys/mman.h>

#include "rtmem/pmr.hpp"

namespace control_loop
{

/* The heap's region: static, so it exists before main() and never moves.
 * 4 MiB is far above this loop's peak (printed at the end). */
constexpr std::size_t region_bytes = std::size_t{4} << 20;
alignas(4096) unsigned char region[region_bytes];

/* Counts what passes through to the heap, so that the output (and the
 * test) can show that the loop really allocates and frees. */
class counting_resource : public std::pmr::memory_resource
{
  public:
    explicit counting_resource(std::pmr::memory_resource *upstream) : upstream_(upstream) {}
    std::uint64_t allocations = 0, deallocations = 0;

  private:
    void *do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        ++allocations;
        return upstream_->allocate(bytes, alignment);
    }
    void do_deallocate(void *p, std::size_t bytes, std::size_t alignment) override
    {
        ++deallocations;
        upstream_->deallocate(p, bytes, alignment);
    }
    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override
    {
        return this == &other;
    }
    std::pmr::memory_resource *upstream_;
};

struct track {
    double x, y, vx, vy;
    std::uint32_t age;
};

/* Everything the loop keeps, on the heap. */
struct state {
    rtmem::heap heap;
    rtmem::heap_resource heap_resource;
    counting_resource resource;
    std::pmr::vector<double> history;                               /* recent samples   */
    std::pmr::map<std::uint32_t, track> tracks;                     /* objects in view  */
    std::pmr::unordered_map<std::uint32_t, std::pmr::string> names; /* their labels     */
    std::pmr::string status;                                        /* one line a cycle */
    std::uint64_t rng = 0x2545f4914f6cdd1dull;
    std::uint32_t next_id = 1;
    std::uint64_t iteration = 0;

    state()
        : heap("tlsf", region, region_bytes), heap_resource(heap), resource(&heap_resource),
          history(&resource), tracks(&resource), names(&resource), status(&resource)
    {
    }
};

/* Storage for the state, constructed at start-up (std::optional: no heap). */
std::optional<state> the_state;
bool region_locked = false;
std::pmr::memory_resource *previous_default = nullptr;

inline std::uint64_t next_random(state &s)
{
    s.rng ^= s.rng << 13;
    s.rng ^= s.rng >> 7;
    s.rng ^= s.rng << 17;
    return s.rng;
}

/* Appends a number without allocating anything but the string's growth. */
template <class Int> void append_number(std::pmr::string &out, Int value)
{
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, static_cast<std::size_t>(r.ptr - buf));
}

/* One cycle of the controller. Every container operation may allocate or
 * free; all of it lands on the TLSF heap. Returns a digest of the cycle. */
std::uint64_t step(state &s)
{
    double sample = static_cast<double>(next_random(s) % 10000) / 100.0;
    /* A sliding window that grows to 1024 samples, then drops half. */
    s.history.push_back(sample);
    if (s.history.size() > 1024) {
        s.history.erase(s.history.begin(), s.history.begin() + 512);
        s.history.shrink_to_fit(); /* gives the block back: a realloc a cycle */
    }
    /* Objects appear and disappear: map and hash-map inserts and erases,
     * each with a label long enough to leave the short-string buffer. */
    std::uint64_t r = next_random(s);
    if (r % 3 != 0 && s.tracks.size() < 48) {
        std::uint32_t id = s.next_id++;
        s.tracks.emplace(id, track{sample, -sample, 0.5, -0.25, 0});
        std::pmr::string name(&s.resource);
        name.append("track/sensor-front-left/");
        append_number(name, id);
        s.names.emplace(id, std::move(name));
    }
    if (r % 4 == 0 && !s.tracks.empty()) {
        auto victim = s.tracks.begin();
        std::advance(victim, static_cast<long>((r >> 8) % s.tracks.size()));
        s.names.erase(victim->first);
        s.tracks.erase(victim);
    }
    /* Per-cycle scratch: distances, sorted for a median. */
    std::pmr::vector<double> distance(&s.resource);
    distance.reserve(s.tracks.size());
    for (auto &[id, t] : s.tracks) {
        t.x += t.vx;
        t.y += t.vy;
        t.age++;
        distance.push_back(t.x * t.x + t.y * t.y);
    }
    std::sort(distance.begin(), distance.end());
    double median = distance.empty() ? 0.0 : distance[distance.size() / 2];
    /* The status line, rebuilt each cycle. */
    s.status.clear();
    s.status.append("cycle ");
    append_number(s.status, s.iteration);
    s.status.append(" tracks ");
    append_number(s.status, s.tracks.size());
    s.status.append(" median ");
    append_number(s.status, static_cast<std::uint64_t>(median));
    s.iteration++;
    return s.status.size() * 31u + s.names.size() + static_cast<std::uint64_t>(median);
}

/* Touches `bytes` of stack below the caller, so the loop's frames are
 * resident. noinline: the array must really be on the stack. */
[[gnu::noinline]] void prefault_stack(std::size_t depth)
{
    volatile unsigned char pad[16 * 1024];
    for (std::size_t i = 0; i < sizeof pad; i += 512)
        pad[i] = 1;
    if (depth > 1)
        prefault_stack(depth - 1);
}

/** Start-up: everything that may make system calls or fault pages. Throws
 *  std::system_error if the heap cannot be created. */
void start(std::uint64_t warmup_cycles = 2000)
{
    region_locked = mlock(region, region_bytes) == 0;
    std::memset(region, 0, region_bytes); /* every page resident and written */
    prefault_stack(16);                   /* 256 KiB of stack */
    the_state.emplace();
    state &s = *the_state;
    s.names.reserve(64); /* the bucket array once, not in the loop */
    s.status.reserve(64);
    previous_default = std::pmr::set_default_resource(std::pmr::null_memory_resource());
    for (std::uint64_t i = 0; i < warmup_cycles; i++)
        step(s);
}

/** The real-time part: `cycles` cycles, no waiting. Returns a digest. */
std::uint64_t run_loop(std::uint64_t cycles)
{
    state &s = *the_state;
    std::uint64_t digest = 0;
    for (std::uint64_t i = 0; i < cycles; i++)
        digest = digest * 1099511628211u + step(s);
    return digest;
}

/** The heap and what went through it. */
rtm_heap *heap() { return the_state->heap.get(); }
std::uint64_t allocations() { return the_state->resource.allocations; }
std::uint64_t deallocations() { return the_state->resource.deallocations; }

/** Tears down: containers first, then the heap. Returns the heap's live
 *  blocks after the containers are gone (0 unless something leaked) or
 *  SIZE_MAX when the heap's check fails. */
std::size_t stop()
{
    state &s = *the_state;
    s.history = std::pmr::vector<double>(&s.resource);
    s.tracks.clear();
    s.names = std::pmr::unordered_map<std::uint32_t, std::pmr::string>(&s.resource);
    s.status.clear();
    s.status.shrink_to_fit(); /* back into the short-string buffer */
    std::size_t live = s.heap.stats().live_blocks;
    bool ok = s.heap.check() == 0;
    the_state.reset();
    std::pmr::set_default_resource(previous_default);
    if (region_locked)
        munlock(region, region_bytes);
    return ok ? live : static_cast<std::size_t>(-1);
}

} // namespace control_loop

#ifndef PMR_CONTROL_LOOP_NO_MAIN
#include <chrono>
#include <ctime>
#include <sys/resource.h>

static long page_faults()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

int main(int argc, char **argv)
{
    std::uint64_t cycles = 5000;
    long period_us = 1000;
    bool lock_all = false;
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--mlockall") == 0)
            lock_all = true;
        else if (positional++ == 0)
            cycles = std::strtoull(argv[i], nullptr, 10);
        else
            period_us = std::strtol(argv[i], nullptr, 10);
    }
    if (lock_all && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        std::perror("mlockall (going on without)");
    control_loop::start();
    std::printf("start-up done: 4 MiB TLSF region %s\n",
                control_loop::region_locked ? "locked (mlock)" : "pre-faulted, NOT locked");

    /* The periodic part: the compute of each cycle (run_loop(1)) between
     * absolute-time sleeps. The sleep is the loop's one system call per
     * period, by design; the cycle itself makes none. */
    timespec next{};
    clock_gettime(CLOCK_MONOTONIC, &next);
    std::uint64_t allocs0 = control_loop::allocations();
    long faults0 = page_faults();
    std::int64_t worst_ns = 0;
    for (std::uint64_t i = 0; i < cycles; i++) {
        auto t0 = std::chrono::steady_clock::now();
        control_loop::run_loop(1);
        auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
        worst_ns = std::max<std::int64_t>(worst_ns, ns);
        next.tv_nsec += period_us * 1000;
        while (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr);
    }
    long faults = page_faults() - faults0;
    rtm_stats st = rtm_heap_stats(control_loop::heap());
    std::printf("%llu cycles of %ld us: %llu heap allocations, worst cycle %lld ns, "
                "%ld page faults in the process (sleeps included)\n",
                static_cast<unsigned long long>(cycles), period_us,
                static_cast<unsigned long long>(control_loop::allocations() - allocs0),
                static_cast<long long>(worst_ns), faults);
    std::printf("heap: peak %zu bytes used of %zu, %zu live blocks, %zu refused\n",
                st.peak_used_bytes, st.arena_bytes, st.live_blocks, st.failed_allocs);
    std::size_t left = control_loop::stop();
    if (left != 0) {
        std::printf("after tear-down: %zu blocks left or a failed heap check\n", left);
        return 1;
    }
    std::printf("after tear-down: every block back, heap check passed\n");
    return st.failed_allocs == 0 ? 0 : 1;
}
#endif
