// SPDX-License-Identifier: MIT
/*
 * examples/pmr_mt_pipeline.cpp -- two real-time threads that hand
 * std::pmr containers to each other through one rtmem multi-threaded heap,
 * with no lock and no system call after start-up.
 *
 * A sensor thread builds a message per cycle (a std::pmr::vector of samples
 * and a std::pmr::string label, on the heap) and passes its pointer to a
 * planner thread through a single-producer, single-consumer ring of
 * atomics. The planner reduces it into a std::pmr::map of recent results
 * (on the heap too) and destroys it: every block of the message goes back
 * to the sensor's shard through a wait-free remote free (rtmem/mt.h).
 *
 * The recipe (docs/MT.md):
 *  1. start-up, where anything may happen: write every page of the region,
 *     build an rtmem::mt_heap over it with one shard per real-time thread,
 *     start the threads; each takes its shard (rtmem::mt_attachment),
 *     touches its stack and warms its code paths;
 *  2. the loop: allocation, frees of the thread's own blocks and frees of
 *     the other thread's blocks, all without a lock or a system call; the
 *     threads wait for each other by spinning on the ring (a real system
 *     would wait on its period's timer instead).
 * tests/cpp/test_pmr_mt_pipeline.cpp proves step 2: each thread enters
 * seccomp strict mode before its loop (any system call but read, write,
 * exit and sigreturn kills the process).
 *
 * Build and run:
 *   c++ -std=c++17 -O2 -Iinclude examples/pmr_mt_pipeline.cpp build/librtmem.a -lpthread
 *   ./a.out [cycles]
 *
 * The functions in namespace mt_pipeline are what a test links against;
 * define PMR_MT_PIPELINE_NO_MAIN to leave main() out.
 */
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <memory_resource>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "rtmem/pmr.hpp"

namespace mt_pipeline
{

constexpr std::size_t region_bytes = std::size_t{8} << 20;
alignas(4096) unsigned char region[region_bytes];

struct message {
    std::pmr::vector<double> samples;
    std::pmr::string label;
    std::uint64_t seq;
    message(std::pmr::memory_resource *r, std::uint64_t n) : samples(r), label(r), seq(n) {}
};

/* A single-producer, single-consumer ring of message pointers: one atomic
 * index each side, no lock, no system call. nullptr ends the stream. */
class ring
{
  public:
    void push(message *m)
    {
        std::uint64_t t = tail_.load(std::memory_order_relaxed);
        while (t - head_.load(std::memory_order_acquire) == size) {
        } /* full: spin */
        slot_[t % size] = m;
        tail_.store(t + 1, std::memory_order_release);
    }
    message *pop()
    {
        std::uint64_t h = head_.load(std::memory_order_relaxed);
        while (tail_.load(std::memory_order_acquire) == h) {
        } /* empty: spin */
        message *m = slot_[h % size];
        head_.store(h + 1, std::memory_order_release);
        return m;
    }

  private:
    static constexpr std::uint64_t size = 64;
    message *slot_[size] = {};
    alignas(64) std::atomic<std::uint64_t> head_{0};
    alignas(64) std::atomic<std::uint64_t> tail_{0};
};

/* What each worker calls around its loop: nothing in the example; the test
 * enters seccomp strict mode before and leaves by the raw exit call after. */
struct hooks {
    void (*before_loop)() = nullptr;
    void (*after_loop)() = nullptr;
};

struct pipeline {
    rtmem::mt_heap heap;
    rtmem::heap_resource resource;
    ring to_planner;
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::uint64_t sensor_digest = 0, planner_digest = 0;
    std::size_t planner_results = 0;
    int sensor_shard = -1, planner_shard = -1;
    pipeline() : heap("tlsf", region, region_bytes, 2), resource(heap) {}
};

std::optional<pipeline> the_pipeline;

[[gnu::noinline]] void prefault_stack(std::size_t depth)
{
    volatile unsigned char pad[16 * 1024];
    for (std::size_t i = 0; i < sizeof pad; i += 512)
        pad[i] = 1;
    if (depth > 1)
        prefault_stack(depth - 1);
}

/* The sensor's cycle: a message of 16..271 samples and a label. */
message *make_message(pipeline &p, std::uint64_t n)
{
    void *raw = p.resource.allocate(sizeof(message), alignof(message));
    message *m = new (raw) message(&p.resource, n);
    std::size_t count = 16 + (n * 2654435761u) % 256;
    for (std::size_t i = 0; i < count; i++)
        m->samples.push_back(static_cast<double>((n + i) % 1000) * 0.5);
    m->label.append("sensor/front-left/lidar/frame-");
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, n);
    m->label.append(digits, static_cast<std::size_t>(end.ptr - digits));
    return m;
}

/* The planner's cycle: reduce, keep the last 64 results, destroy. */
std::uint64_t consume(pipeline &p, std::pmr::map<std::uint64_t, double> &recent, message *m)
{
    double sum = 0;
    for (double v : m->samples)
        sum += v;
    recent[m->seq] = sum;
    if (recent.size() > 64)
        recent.erase(recent.begin());
    std::uint64_t d = static_cast<std::uint64_t>(sum) * 31u + m->label.size();
    m->~message(); /* remote frees: the sensor's shard */
    p.resource.deallocate(m, sizeof(message), alignof(message));
    return d;
}

void wait_for_start(pipeline &p)
{
    p.ready.fetch_add(1);
    while (!p.go.load(std::memory_order_acquire)) {
    }
}

void sensor(pipeline &p, std::uint64_t warmup, std::uint64_t cycles, hooks h)
{
    rtmem::mt_attachment shard(p.heap);
    p.sensor_shard = shard.shard();
    prefault_stack(8);
    for (std::uint64_t n = 0; n < warmup; n++)
        p.to_planner.push(make_message(p, n));
    wait_for_start(p);
    if (h.before_loop != nullptr)
        h.before_loop();
    std::uint64_t digest = 0;
    for (std::uint64_t n = warmup; n < warmup + cycles; n++) {
        message *m = make_message(p, n);
        digest = digest * 1099511628211u + m->samples.size();
        p.to_planner.push(m);
    }
    p.to_planner.push(nullptr);
    p.sensor_digest = digest;
    if (h.after_loop != nullptr)
        h.after_loop();
}

void planner(pipeline &p, std::uint64_t warmup, hooks h)
{
    rtmem::mt_attachment shard(p.heap);
    p.planner_shard = shard.shard();
    prefault_stack(8);
    std::pmr::map<std::uint64_t, double> recent(&p.resource);
    for (std::uint64_t n = 0; n < warmup; n++)
        consume(p, recent, p.to_planner.pop());
    wait_for_start(p);
    if (h.before_loop != nullptr)
        h.before_loop();
    std::uint64_t digest = 0;
    for (message *m = p.to_planner.pop(); m != nullptr; m = p.to_planner.pop())
        digest = digest * 1099511628211u + consume(p, recent, m);
    p.planner_digest = digest;
    p.planner_results = recent.size();
    recent.clear();
    if (h.after_loop != nullptr)
        h.after_loop();
}

/** Start-up and the run: returns when both threads are done. The caller
 *  may look at the heap's stats before stop(). */
void run(std::uint64_t cycles, hooks h = hooks{}, void (*at_start)() = nullptr)
{
    std::memset(region, 0, region_bytes); /* every page resident */
    the_pipeline.emplace();
    pipeline &p = *the_pipeline;
    const std::uint64_t warmup = 200;
    std::thread s(sensor, std::ref(p), warmup, cycles, h);
    std::thread c(planner, std::ref(p), warmup, h);
    while (p.ready.load() < 2) {
    }
    if (at_start != nullptr)
        at_start();
    p.go.store(true, std::memory_order_release);
    s.join();
    c.join();
}

/** Tears down; the heap's live blocks (0 unless something leaked), or
 *  SIZE_MAX when its check fails. */
std::size_t stop()
{
    pipeline &p = *the_pipeline;
    std::size_t live = p.heap.stats().live_blocks;
    bool ok = p.heap.check() == 0;
    the_pipeline.reset();
    return ok ? live : static_cast<std::size_t>(-1);
}

} // namespace mt_pipeline

#ifndef PMR_MT_PIPELINE_NO_MAIN
int main(int argc, char **argv)
{
    std::uint64_t cycles = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 100000;
    mt_pipeline::run(cycles);
    mt_pipeline::pipeline &p = *mt_pipeline::the_pipeline;
    rtm_stats st = p.heap.stats();
    std::printf("%llu messages: sensor on shard %d, planner on shard %d; heap peak %zu bytes "
                "(sum of the shards' peaks), %zu refused\n",
                static_cast<unsigned long long>(cycles), p.sensor_shard, p.planner_shard,
                st.peak_used_bytes, st.failed_allocs);
    bool ok = st.failed_allocs == 0 && p.sensor_shard >= 0 && p.planner_shard >= 0;
    std::size_t left = mt_pipeline::stop();
    std::printf(left == 0 ? "after tear-down: every block back, heap check passed\n"
                          : "after tear-down: blocks left or a failed heap check\n");
    return ok && left == 0 ? 0 : 1;
}
#endif
