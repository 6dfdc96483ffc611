// SPDX-License-Identifier: MIT
/*
 * bench/cpp/pmr_bench.cpp -- rtmem-pmr-bench: standard containers on rtm
 * heaps (through rtmem::heap_resource) against the standard library's own
 * memory resources and the malloc behind new/delete.
 *
 * Workloads (each operation timed on its own with steady_clock, which is
 * clock_gettime(CLOCK_MONOTONIC) through the vDSO; the timer's own cost is
 * measured and printed, not subtracted):
 *  map     std::pmr::map<uint64_t, 32-byte payload> churn: 10,000 live keys,
 *          then operations alternating erase of a random live key and
 *          insert of a new one (one node freed / allocated per operation);
 *  vector  frames of 16,384 push_backs spread over 7 std::pmr::vectors of
 *          uint64_t with geometric popularity (the busiest grows to about
 *          64 KiB, the least to about 1 KiB): most push_backs allocate
 *          nothing, the reallocations make the tail; the frame's vectors
 *          are destroyed at its end (monotonic: release());
 *  string  frames of 512 std::pmr::strings, each built from 1..32 appended
 *          pieces of 1..24 characters (a log line; 3-4 reallocations) and
 *          kept until the frame ends.
 * Allocators:
 *  rtm:<algorithm>   rtmem::heap_resource over a 64 MiB heap (tlsf,
 *                    halffit, heapmem, slab, buddy:64), region pre-faulted
 *                    before timing (as a real-time user does);
 *  pmr:pool          std::pmr::unsynchronized_pool_resource over new/delete;
 *  pmr:monotonic     std::pmr::monotonic_buffer_resource over new/delete,
 *                    released at each frame end (vector, string; not map,
 *                    whose churn it would never reuse: "n/a");
 *  new:glibc         std::pmr::new_delete_resource(): the libc malloc;
 *  new:<peer>        the same with mimalloc, jemalloc, tcmalloc or rtmem's
 *                    drop-in malloc LD_PRELOADed (reported "missing" when
 *                    the library is not installed).
 * Every measurement runs in a fresh child process (this program re-executed
 * with --child), so no allocator inherits another's state; rounds
 * interleave the allocators (the order rotates each round), and the table
 * gives, per statistic, the minimum and the median over the rounds.
 * Bytes held at the run's peak: for rtm heaps arena_bytes - free_bytes
 * less its value on the empty heap (blocks with their headers and
 * rounding, without the control structure, whose size follows the 64 MiB
 * region rather than the workload), for the pmr resources the bytes they
 * hold from upstream, for new/delete the growth of the process's resident
 * set (RSS) since just before the workload's first allocation. Beside
 * it, the peak of the bytes the containers had asked for (counted by a
 * thin resource every allocator gets, so all pay the same extra call);
 * held/req is the ratio of the two peaks. Frame workloads run whole
 * frames (the operation count rounds up to a multiple of the frame).
 *
 *   rtmem-pmr-bench [--rounds N] [--ops N] [--quick] [--workloads a,b]
 *                   [--allocators a,b] [--no-peers] [--json FILE]
 *
 * `make bench` runs it (scripts/bench.sh, 3 rounds) and the report shows
 * it; docs/CPP.md shows how to run it alone.
 */
#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory_resource>
#include <optional>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtmem/pmr.hpp"

extern char **environ;

namespace
{

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif

/* ---- the allocators --------------------------------------------------- */

struct peer {
    const char *name;
    const char *symbol; /* defined by the library when it is preloaded */
    const char *files[3];
};

const peer peers[] = {
    {"mimalloc", "mi_version", {"libmimalloc.so.2", "libmimalloc.so", nullptr}},
    {"jemalloc", "mallctl", {"libjemalloc.so.2", "libjemalloc.so", nullptr}},
    {"tcmalloc", "tc_version", {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4", nullptr}},
    {"rtmem-malloc", "rtm_malloc_stats", {"librtmem-malloc.so", nullptr, nullptr}},
};

const char *const rtm_algorithms_benched[] = {"tlsf", "halffit", "heapmem", "slab", "buddy:64"};

/* Whether the shared object at path is of this program's ELF class (a
 * 64-bit library cannot be preloaded into a -m32 build). */
bool same_elf_class(const std::string &path)
{
    unsigned char ident[5] = {0, 0, 0, 0, 0};
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (f == nullptr)
        return false;
    std::size_t n = std::fread(ident, 1, sizeof ident, f);
    std::fclose(f);
    unsigned char want = sizeof(void *) == 8 ? 2 : 1; /* ELFCLASS64 : ELFCLASS32 */
    return n == sizeof ident &&
           std::memcmp(ident,
                       "\x7f"
                       "ELF",
                       4) == 0 &&
           ident[4] == want;
}

/* Where a peer library is, or "" (rtmem's drop-in: beside this program). */
std::string locate(const peer &p)
{
    std::string self_dir;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        self_dir = exe;
        self_dir.resize(self_dir.rfind('/'));
    }
    const std::string dirs[] = {self_dir,
                                "/usr/lib/x86_64-linux-gnu",
                                "/lib/x86_64-linux-gnu",
                                "/usr/lib64",
                                "/usr/lib",
                                "/usr/local/lib",
                                "/usr/lib/aarch64-linux-gnu"};
    for (const char *file : p.files) {
        if (file == nullptr)
            break;
        bool ours = std::strcmp(p.name, "rtmem-malloc") == 0;
        for (const std::string &d : dirs) {
            if (d.empty() || (ours && d != self_dir) || (!ours && d == self_dir))
                continue;
            std::string path = d + "/" + file;
            if (access(path.c_str(), R_OK) == 0 && same_elf_class(path))
                return path;
        }
    }
    return "";
}

/* Counts what the containers ask for; every allocator gets one, so every
 * allocator pays the same extra virtual call. */
class counting : public std::pmr::memory_resource
{
  public:
    explicit counting(std::pmr::memory_resource *up) : up_(up) {}
    std::size_t live = 0;

  private:
    void *do_allocate(std::size_t b, std::size_t a) override
    {
        void *p = up_->allocate(b, a);
        live += b;
        return p;
    }
    void do_deallocate(void *p, std::size_t b, std::size_t a) override
    {
        live -= b;
        up_->deallocate(p, b, a);
    }
    bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override
    {
        return this == &o;
    }
    std::pmr::memory_resource *up_;
};

/* An upstream that counts the bytes a pmr resource holds from it. */
class upstream_counter : public std::pmr::memory_resource
{
  public:
    std::size_t held = 0;

  private:
    void *do_allocate(std::size_t b, std::size_t a) override
    {
        void *p = std::pmr::new_delete_resource()->allocate(b, a);
        held += b;
        return p;
    }
    void do_deallocate(void *p, std::size_t b, std::size_t a) override
    {
        held -= b;
        std::pmr::new_delete_resource()->deallocate(p, b, a);
    }
    bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override
    {
        return this == &o;
    }
};

std::size_t rss_bytes()
{
    std::FILE *f = std::fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f != nullptr) {
        if (std::fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        std::fclose(f);
    }
    return static_cast<std::size_t>(resident) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

/* One allocator inside a child: the resource and how to read what it holds. */
class subject
{
  public:
    explicit subject(const std::string &name)
    {
        if (name.rfind("rtm:", 0) == 0) {
            region_bytes_ = std::size_t{64} << 20;
            void *m = mmap(nullptr, region_bytes_, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                std::exit(3);
            region_ = m;
            std::memset(region_, 0, region_bytes_); /* resident before timing */
            heap_.emplace(name.c_str() + 4, region_, region_bytes_);
            heap_res_.emplace(*heap_);
            rtm_stats st = heap_->stats();
            empty_held_ = st.arena_bytes - st.free_bytes;
            base_ = &*heap_res_;
        } else if (name == "pmr:pool") {
            pool_.emplace(&upstream_);
            base_ = &*pool_;
        } else if (name == "pmr:monotonic") {
            mono_.emplace(&upstream_);
            base_ = &*mono_;
        } else {
            base_ = std::pmr::new_delete_resource();
        }
        counter_.emplace(base_);
        rss0_ = rss_bytes();
    }
    ~subject()
    {
        counter_.reset();
        heap_res_.reset();
        heap_.reset();
        if (region_ != nullptr)
            munmap(region_, region_bytes_);
    }
    subject(const subject &) = delete;
    subject &operator=(const subject &) = delete;

    std::pmr::memory_resource *resource() { return &*counter_; }
    std::size_t requested() const { return counter_->live; }
    /* A frame ended and its containers are gone. */
    void frame_end()
    {
        if (mono_)
            mono_->release();
    }
    std::size_t held() const
    {
        if (heap_) {
            rtm_stats st = heap_->stats();
            return st.arena_bytes - st.free_bytes - empty_held_;
        }
        if (pool_ || mono_)
            return upstream_.held;
        std::size_t rss = rss_bytes();
        return rss > rss0_ ? rss - rss0_ : 0;
    }
    /* Just before the workload's first allocation: the RSS baseline. */
    void rebase() { rss0_ = rss_bytes(); }
    bool failed() const { return heap_ && heap_->stats().failed_allocs != 0; }

  private:
    void *region_ = nullptr;
    std::size_t region_bytes_ = 0;
    std::optional<rtmem::heap> heap_;
    std::optional<rtmem::heap_resource> heap_res_;
    upstream_counter upstream_;
    std::optional<std::pmr::unsynchronized_pool_resource> pool_;
    std::optional<std::pmr::monotonic_buffer_resource> mono_;
    std::pmr::memory_resource *base_ = nullptr;
    std::optional<counting> counter_;
    std::size_t rss0_ = 0;
    std::size_t empty_held_ = 0;
};

/* ---- measurement ------------------------------------------------------ */

using clock_type = std::chrono::steady_clock;

struct run_result {
    double p50 = 0, p999 = 0, max = 0, mean = 0; /* ns per operation */
    double held = 0, requested = 0;              /* bytes at the peak */
};

class recorder
{
  public:
    /* The samples' memory is touched now, not while the RSS is watched. */
    explicit recorder(std::size_t ops)
    {
        ns_.resize(ops);
        ns_.clear();
    }
    template <class F> void time(F &&op)
    {
        auto t0 = clock_type::now();
        op();
        auto t1 = clock_type::now();
        auto d = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
        ns_.push_back(static_cast<std::uint32_t>(std::min<long long>(d, UINT32_MAX)));
    }
    /* The peaks of both, each on its own. */
    void sample(const subject &s)
    {
        held_ = std::max(held_, s.held());
        requested_ = std::max(requested_, s.requested());
    }
    run_result result()
    {
        run_result r;
        if (ns_.empty())
            return r;
        double sum = 0;
        for (std::uint32_t v : ns_)
            sum += v;
        r.mean = sum / static_cast<double>(ns_.size());
        r.p50 = at(0.5);
        r.p999 = at(0.999);
        r.max = *std::max_element(ns_.begin(), ns_.end());
        r.held = static_cast<double>(held_);
        r.requested = static_cast<double>(requested_);
        return r;
    }

  private:
    double at(double q)
    {
        auto k = static_cast<std::size_t>(q * static_cast<double>(ns_.size() - 1));
        std::nth_element(ns_.begin(), ns_.begin() + static_cast<long>(k), ns_.end());
        return ns_[k];
    }
    std::vector<std::uint32_t> ns_;
    std::size_t held_ = 0, requested_ = 0;
};

struct xorshift {
    std::uint64_t s;
    std::uint64_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
};

using payload = std::array<std::uint64_t, 4>;

void map_churn(subject &s, std::size_t ops, std::uint64_t seed, recorder &rec)
{
    constexpr std::size_t live = 10000;
    xorshift rng{seed | 1};
    std::vector<std::uint64_t> keys(live + 1); /* touched before the baseline */
    keys.clear();
    s.rebase();
    std::pmr::map<std::uint64_t, payload> m(s.resource());
    while (keys.size() < live) {
        std::uint64_t k = rng.next();
        if (m.emplace(k, payload{k, 0, 0, 0}).second)
            keys.push_back(k);
    }
    auto one = [&](std::size_t i, bool timed) {
        if (i % 2 == 0) {
            std::size_t idx = static_cast<std::size_t>(rng.next() % keys.size());
            std::uint64_t k = keys[idx];
            keys[idx] = keys.back();
            keys.pop_back();
            if (timed)
                rec.time([&] { m.erase(k); });
            else
                m.erase(k);
        } else {
            std::uint64_t k = rng.next();
            if (timed)
                rec.time([&] { m.emplace(k, payload{k, 1, 2, 3}); });
            else
                m.emplace(k, payload{k, 1, 2, 3});
            keys.push_back(k);
        }
    };
    for (std::size_t i = 0; i < ops / 10; i++) /* warm-up */
        one(i, false);
    rec.sample(s);
    for (std::size_t i = 0; i < ops; i++) {
        one(i, true);
        if (i % 1024 == 0)
            rec.sample(s);
    }
    rec.sample(s);
}

void vector_growth(subject &s, std::size_t ops, std::uint64_t seed, recorder &rec)
{
    constexpr std::size_t frame = 16384;
    xorshift rng{seed | 1};
    auto one_frame = [&](std::size_t n, bool timed) {
        {
            std::pmr::vector<std::pmr::vector<std::uint64_t>> vs(s.resource());
            vs.reserve(8);
            for (int j = 0; j < 7; j++)
                vs.emplace_back();
            for (std::size_t i = 0; i < n; i++) {
                std::uint64_t r = rng.next();
                auto j = static_cast<std::size_t>(__builtin_ctzll(r | (std::uint64_t{1} << 6)));
                if (timed)
                    rec.time([&] { vs[j].push_back(r); });
                else
                    vs[j].push_back(r);
            }
            if (timed)
                rec.sample(s);
        }
        s.frame_end();
    };
    s.rebase();
    one_frame(frame, false);                              /* warm-up */
    for (std::size_t done = 0; done < ops; done += frame) /* whole frames */
        one_frame(frame, true);
}

void string_building(subject &s, std::size_t ops, std::uint64_t seed, recorder &rec)
{
    constexpr std::size_t frame = 512;
    static const char text[] = "the quick brown fox jumps over the lazy dog 0123456789";
    xorshift rng{seed | 1};
    auto one_frame = [&](std::size_t n, bool timed) {
        {
            std::pmr::vector<std::pmr::string> kept(s.resource());
            kept.reserve(frame);
            for (std::size_t i = 0; i < n; i++) {
                std::uint64_t r = rng.next();
                auto build = [&] {
                    std::pmr::string line(s.resource());
                    std::uint64_t x = r;
                    int pieces = 1 + static_cast<int>(x % 32);
                    for (int p = 0; p < pieces; p++) {
                        x = x * 6364136223846793005u + 1442695040888963407u;
                        line.append(text + (x >> 59), 1 + static_cast<std::size_t>((x >> 40) % 24));
                    }
                    kept.push_back(std::move(line));
                };
                if (timed)
                    rec.time(build);
                else
                    build();
            }
            if (timed)
                rec.sample(s);
        }
        s.frame_end();
    };
    s.rebase();
    one_frame(frame, false);                              /* warm-up */
    for (std::size_t done = 0; done < ops; done += frame) /* whole frames */
        one_frame(frame, true);
}

/* The child: one allocator, one workload, one run; prints one result line. */
int child(const std::string &alloc, const std::string &workload, std::size_t ops,
          std::uint64_t seed, const char *peer_symbol)
{
    if (peer_symbol != nullptr && peer_symbol[0] != '\0' &&
        dlsym(RTLD_DEFAULT, peer_symbol) == nullptr) {
        std::printf("ERROR preload did not take effect (%s undefined)\n", peer_symbol);
        return 2;
    }
    recorder rec(ops + 16384); /* whole frames: up to one more */
    subject s(alloc);
    if (workload == "map")
        map_churn(s, ops, seed, rec);
    else if (workload == "vector")
        vector_growth(s, ops, seed, rec);
    else if (workload == "string")
        string_building(s, ops, seed, rec);
    else
        return 2;
    if (s.failed()) {
        std::printf("ERROR the heap refused a request\n");
        return 2;
    }
    run_result r = rec.result();
    std::printf("RESULT %.0f %.0f %.0f %.1f %.0f %.0f\n", r.p50, r.p999, r.max, r.mean, r.held,
                r.requested);
    return 0;
}

/* ---- the parent -------------------------------------------------------- */

struct cell {
    std::string workload, allocator, status = "ok", note;
    std::vector<run_result> runs;
};

/* Runs this program as a child; returns its stdout ("" on failure). */
std::string spawn_child(const std::vector<std::string> &args, const std::string &preload)
{
    std::vector<std::string> env_strings;
    for (char **e = environ; *e != nullptr; e++)
        if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0)
            env_strings.emplace_back(*e);
    if (!preload.empty())
        env_strings.push_back("LD_PRELOAD=" + preload);
    std::vector<char *> env, argv;
    for (auto &e : env_strings)
        env.push_back(e.data());
    env.push_back(nullptr);
    std::string self = "/proc/self/exe";
    std::vector<std::string> args_copy = args;
    argv.push_back(self.data());
    for (auto &a : args_copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    int fds[2];
    if (pipe(fds) != 0)
        return "";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    std::string out;
    if (rc == 0) {
        char buf[1024];
        ssize_t n;
        while ((n = read(fds[0], buf, sizeof buf)) > 0)
            out.append(buf, static_cast<std::size_t>(n));
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            out = "ERROR child status " + std::to_string(status) + ": " + out;
    }
    close(fds[0]);
    return out;
}

struct options {
    int rounds = 5;
    std::size_t ops = 200000;
    std::vector<std::string> workloads{"map", "vector", "string"};
    std::vector<std::string> allocators;
    bool peers = true;
    const char *json = nullptr;
};

std::vector<std::string> split(const char *s)
{
    std::vector<std::string> out;
    std::string cur;
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == ',') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(*p);
        }
    }
    if (!cur.empty())
        out.push_back(cur);
    return out;
}

double timer_cost_ns()
{
    std::vector<long long> d(10001);
    for (auto &v : d) {
        auto t0 = clock_type::now();
        auto t1 = clock_type::now();
        v = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    }
    std::nth_element(d.begin(), d.begin() + 5000, d.end());
    return static_cast<double>(d[5000]);
}

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double min_of(const std::vector<double> &v)
{
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

std::vector<double> field(const cell &c, double run_result::*f)
{
    std::vector<double> v;
    for (const run_result &r : c.runs)
        v.push_back(r.*f);
    return v;
}

void print_table(const std::vector<cell> &cells, const options &o, double timer)
{
    std::printf("rtmem-pmr-bench: %d rounds of %zu operations per workload and allocator; "
                "ns per operation (timer cost %.0f ns included), min / median over rounds\n",
                o.rounds, o.ops, timer);
    if (sanitized)
        std::printf("sanitizer build: the numbers measure the sanitizer, not the allocators\n");
    std::string last;
    for (const cell &c : cells) {
        if (c.workload != last) {
            std::printf("\n%-8s %-18s %15s %17s %19s %12s %10s\n", c.workload.c_str(), "allocator",
                        "p50", "p99.9", "max", "held KiB", "held/req");
            last = c.workload;
        }
        if (c.status != "ok") {
            std::printf("%-8s %-18s %s%s%s\n", "", c.allocator.c_str(), c.status.c_str(),
                        c.note.empty() ? "" : ": ", c.note.c_str());
            continue;
        }
        auto p50 = field(c, &run_result::p50), p999 = field(c, &run_result::p999),
             mx = field(c, &run_result::max), held = field(c, &run_result::held),
             req = field(c, &run_result::requested);
        double h = median_of(held), q = median_of(req);
        std::printf("%-8s %-18s %7.0f /%6.0f %8.0f /%7.0f %9.0f /%8.0f %12.0f %10.2f\n", "",
                    c.allocator.c_str(), min_of(p50), median_of(p50), min_of(p999), median_of(p999),
                    min_of(mx), median_of(mx), h / 1024.0, q > 0 ? h / q : 0.0);
    }
}

void json_stat(std::FILE *f, const char *name, const std::vector<double> &v, bool comma)
{
    std::fprintf(f, "\"%s\": {\"min\": %.1f, \"median\": %.1f, \"runs\": [", name, min_of(v),
                 median_of(v));
    for (std::size_t i = 0; i < v.size(); i++)
        std::fprintf(f, "%s%.1f", i ? ", " : "", v[i]);
    std::fprintf(f, "]}%s", comma ? ", " : "");
}

bool write_json(const char *path, const std::vector<cell> &cells, const options &o, double timer)
{
    std::FILE *f = std::fopen(path, "w");
    if (f == nullptr)
        return false;
    std::fprintf(f, "{\n  \"tool\": \"rtmem-pmr-bench\",\n  \"schema_version\": 1,\n");
    std::fprintf(f, "  \"rtmem_version\": \"%s\",\n", RTM_VERSION_STRING);
    std::fprintf(f, "  \"rounds\": %d,\n  \"ops\": %zu,\n  \"timer_ns\": %.1f,\n", o.rounds, o.ops,
                 timer);
    std::fprintf(f,
                 "  \"sanitized\": %s,\n  \"units\": {\"time\": \"ns per operation\", "
                 "\"held\": \"bytes\", \"requested\": \"bytes\"},\n  \"results\": [\n",
                 sanitized ? "true" : "false");
    for (std::size_t i = 0; i < cells.size(); i++) {
        const cell &c = cells[i];
        std::fprintf(f, "    {\"workload\": \"%s\", \"allocator\": \"%s\", \"status\": \"%s\"",
                     c.workload.c_str(), c.allocator.c_str(), c.status.c_str());
        if (!c.note.empty()) {
            std::string note;
            for (char ch : c.note)
                if (ch != '"' && ch != '\\' && ch >= 0x20)
                    note.push_back(ch);
            std::fprintf(f, ", \"note\": \"%s\"", note.c_str());
        }
        if (c.status == "ok") {
            std::fprintf(f, ", ");
            json_stat(f, "p50_ns", field(c, &run_result::p50), true);
            json_stat(f, "p999_ns", field(c, &run_result::p999), true);
            json_stat(f, "max_ns", field(c, &run_result::max), true);
            json_stat(f, "mean_ns", field(c, &run_result::mean), true);
            json_stat(f, "held_bytes", field(c, &run_result::held), true);
            json_stat(f, "requested_bytes", field(c, &run_result::requested), false);
        }
        std::fprintf(f, "}%s\n", i + 1 < cells.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    return std::fclose(f) == 0;
}

int usage()
{
    std::fprintf(stderr,
                 "usage: rtmem-pmr-bench [--rounds N] [--ops N] [--quick] [--workloads map,vector,"
                 "string]\n                       [--allocators a,b,...] [--no-peers] [--json "
                 "FILE]\nallocators: rtm:tlsf rtm:halffit rtm:heapmem rtm:slab rtm:buddy:64 "
                 "pmr:pool pmr:monotonic\n            new:glibc new:mimalloc new:jemalloc "
                 "new:tcmalloc new:rtmem-malloc\n");
    return 2;
}

// A count from the command line, held to what size_t can hold (4 bytes on
// 32-bit targets) rather than wrapped.
std::size_t count_arg(const char *text)
{
    unsigned long long v = std::strtoull(text, nullptr, 10);
    return v > std::numeric_limits<std::size_t>::max() ? std::numeric_limits<std::size_t>::max()
                                                       : static_cast<std::size_t>(v);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 6 && std::strcmp(argv[1], "--child") == 0)
        return child(argv[2], argv[3], count_arg(argv[4]), std::strtoull(argv[5], nullptr, 10),
                     argc > 6 ? argv[6] : nullptr);
    options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool more = i + 1 < argc;
        if (a == "--rounds" && more)
            o.rounds = std::max(1, std::atoi(argv[++i]));
        else if (a == "--ops" && more)
            o.ops = std::max<std::size_t>(1024, count_arg(argv[++i]));
        else if (a == "--quick") {
            o.rounds = 2;
            o.ops = 20000;
        } else if (a == "--workloads" && more)
            o.workloads = split(argv[++i]);
        else if (a == "--allocators" && more)
            o.allocators = split(argv[++i]);
        else if (a == "--no-peers")
            o.peers = false;
        else if (a == "--json" && more)
            o.json = argv[++i];
        else
            return usage();
    }
    if (o.allocators.empty()) {
        for (const char *n : rtm_algorithms_benched)
            o.allocators.push_back(std::string("rtm:") + n);
        for (const char *n : {"pmr:pool", "pmr:monotonic", "new:glibc"})
            o.allocators.push_back(n);
        for (const peer &p : peers)
            o.allocators.push_back(std::string("new:") + p.name);
    }
    for (const std::string &w : o.workloads)
        if (w != "map" && w != "vector" && w != "string")
            return usage();

    /* One cell per (workload, allocator); each knows whether it can run. */
    std::vector<cell> cells;
    std::vector<std::string> preload_of, symbol_of;
    for (const std::string &w : o.workloads) {
        for (const std::string &a : o.allocators) {
            cell c;
            c.workload = w;
            c.allocator = a;
            std::string preload, symbol;
            if (a.rfind("new:", 0) == 0 && a != "new:glibc") {
                const peer *p = nullptr;
                for (const peer &q : peers)
                    if (a.compare(4, std::string::npos, q.name) == 0)
                        p = &q;
                if (p == nullptr) {
                    std::fprintf(stderr, "unknown allocator %s\n", a.c_str());
                    return usage();
                }
                preload = locate(*p);
                symbol = p->symbol;
                if (!o.peers || sanitized) {
                    c.status = "skipped";
                    c.note = sanitized ? "sanitizer build (its runtime owns malloc)" : "--no-peers";
                } else if (preload.empty()) {
                    c.status = "missing";
                    c.note = std::string(p->files[0]) + " not installed";
                }
            } else if (a == "pmr:monotonic" && w == "map") {
                c.status = "n/a";
                c.note = "never reuses erased nodes: churn would grow without bound";
            } else if (a.rfind("rtm:", 0) == 0) {
                if (rtm_min_region(a.c_str() + 4) == 0) {
                    std::fprintf(stderr, "unknown rtm algorithm %s\n", a.c_str());
                    return usage();
                }
            } else if (a != "pmr:pool" && a != "pmr:monotonic" && a != "new:glibc") {
                std::fprintf(stderr, "unknown allocator %s\n", a.c_str());
                return usage();
            }
            cells.push_back(c);
            preload_of.push_back(preload);
            symbol_of.push_back(symbol);
        }
    }

    double timer = timer_cost_ns();
    /* Rounds interleave the allocators; the order rotates every round. */
    std::size_t per_workload = o.allocators.size();
    for (int round = 0; round < o.rounds; round++) {
        std::fprintf(stderr, "round %d/%d\n", round + 1, o.rounds);
        for (std::size_t w = 0; w < o.workloads.size(); w++) {
            for (std::size_t k = 0; k < per_workload; k++) {
                std::size_t idx =
                    w * per_workload + (k + static_cast<std::size_t>(round)) % per_workload;
                cell &c = cells[idx];
                if (c.status != "ok")
                    continue;
                std::string out =
                    spawn_child({"--child", c.allocator, c.workload, std::to_string(o.ops),
                                 std::to_string(1000 + round), symbol_of[idx]},
                                preload_of[idx]);
                run_result r;
                if (std::sscanf(out.c_str(), "RESULT %lf %lf %lf %lf %lf %lf", &r.p50, &r.p999,
                                &r.max, &r.mean, &r.held, &r.requested) == 6) {
                    c.runs.push_back(r);
                } else {
                    c.status = "failed";
                    c.note = out.substr(0, out.find('\n'));
                    if (c.note.empty())
                        c.note = "no result from the child";
                }
            }
        }
    }
    print_table(cells, o, timer);
    if (o.json != nullptr && !write_json(o.json, cells, o, timer)) {
        std::fprintf(stderr, "cannot write %s: %s\n", o.json, std::strerror(errno));
        return 1;
    }
    for (const cell &c : cells)
        if (c.status == "failed")
            return 1;
    return 0;
}
