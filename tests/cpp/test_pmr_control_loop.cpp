// SPDX-License-Identifier: MIT
/*
 * tests/cpp/test_pmr_control_loop.cpp -- the real-time claim of
 * examples/pmr_control_loop.cpp, checked in-process: after start-up, its
 * loop of std::pmr containers on a TLSF heap makes
 *  - no system call: a child forked after start-up enters seccomp strict
 *    mode (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT): from then on any
 *    system call but read, write, _exit and sigreturn kills it with
 *    SIGKILL) and runs the loop, writes its digest to a pipe and leaves by
 *    the raw exit system call. The parent expects a normal exit and the
 *    same digest it computes itself from the same state. Control: a child
 *    calling getpid() in strict mode must be killed, so the method can
 *    fail;
 *  - no page fault: getrusage(RUSAGE_THREAD) minor + major faults over the
 *    loop stay 0. Control: touching one fresh page counts a fault;
 *  - no operator new: this program replaces the global operator new /
 *    delete with counting versions, and the count does not move over the
 *    loop (the default pmr resource is the null resource as well, so a
 *    container without its resource would throw);
 * while the loop really allocates (the example's counting resource: more
 * than one heap allocation per cycle) and nothing is refused. At the end
 * every block is back (live_blocks == 0) and the heap check passes.
 * Not for TSan builds: the TSan runtime works beside the program (a
 * background thread, shadow and trace memory mapped on demand), and a
 * seccomp-strict child of it hangs instead of running the loop; the
 * program says so and exits 77 (ctest: skipped). ASan+UBSan builds run it.
 */
#define PMR_CONTROL_LOOP_NO_MAIN 1
#include "../../examples/pmr_control_loop.cpp"

#include <atomic>
#include <csignal>
#include <new>

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"

/* ---- counting operator new / delete ------------------------------------ */

namespace
{
std::atomic<unsigned long> news{0};

void *counted(std::size_t n)
{
    news.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n != 0 ? n : 1);
}
void *counted_aligned(std::size_t n, std::align_val_t a)
{
    news.fetch_add(1, std::memory_order_relaxed);
    void *p = nullptr;
    std::size_t align = std::max(static_cast<std::size_t>(a), sizeof(void *));
    return posix_memalign(&p, align, n != 0 ? n : 1) == 0 ? p : nullptr;
}
void *or_throw(void *p)
{
    if (p == nullptr)
        throw std::bad_alloc();
    return p;
}
} // namespace

void *operator new(std::size_t n) { return or_throw(counted(n)); }
void *operator new[](std::size_t n) { return or_throw(counted(n)); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return counted(n); }
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return counted(n); }
void *operator new(std::size_t n, std::align_val_t a) { return or_throw(counted_aligned(n, a)); }
void *operator new[](std::size_t n, std::align_val_t a) { return or_throw(counted_aligned(n, a)); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace
{

constexpr std::uint64_t cycles = 50000;

long thread_faults()
{
    rusage ru{};
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

/* Forks a child that enters seccomp strict mode and runs body(); body's
 * 8-byte result comes back through a pipe. Returns the wait status. */
int strict_child(std::uint64_t (*body)(), std::uint64_t *result, bool *got_result)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
            std::fprintf(stderr, "prctl(PR_SET_SECCOMP, STRICT): %s\n", std::strerror(errno));
            _exit(3); /* a failure, never a skip: the claim would go unchecked */
        }
        std::uint64_t r = body();
        if (write(fds[1], &r, sizeof r) != static_cast<ssize_t>(sizeof r))
            syscall(SYS_exit, 4);
        syscall(SYS_exit, 0); /* exit_group (what _exit calls) is not allowed */
    }
    close(fds[1]);
    std::uint64_t r = 0;
    *got_result = read(fds[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
    *result = r;
    close(fds[0]);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

std::uint64_t the_loop() { return control_loop::run_loop(cycles); }
std::uint64_t a_system_call() { return static_cast<std::uint64_t>(syscall(SYS_getpid)); }

void describe(const char *what, int status)
{
    if (WIFEXITED(status))
        std::printf("  %s: exited with %d\n", what, WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        std::printf("  %s: killed by signal %d%s\n", what, WTERMSIG(status),
                    WTERMSIG(status) == SIGKILL ? " (seccomp: a system call)" : "");
}

/* The method can fail: a system call in strict mode is fatal. */
void test_control_seccomp()
{
    std::uint64_t r = 0;
    bool got = false;
    int status = strict_child(a_system_call, &r, &got);
    describe("control, getpid() in strict mode", status);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "a system call in seccomp strict mode did not kill the child (status %#x)", status);
    CHECK(!got);
}

/* The method can fail: a fresh page faults. */
void test_control_faults()
{
    long page = sysconf(_SC_PAGESIZE);
    void *m = mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    long f0 = thread_faults();
    static_cast<volatile unsigned char *>(m)[0] = 1;
    long faults = thread_faults() - f0;
    CHECK_MSG(faults >= 1, "touching a fresh page counted %ld faults", faults);
    munmap(m, static_cast<std::size_t>(page));
    unsigned long n0 = news.load();
    int *volatile p = new int(3); /* volatile: the pair cannot be elided */
    delete p;
    CHECK_MSG(news.load() == n0 + 1, "operator new is not the counting one");
}

/* The loop here: no page fault, no operator new, real allocations. Runs
 * before any fork: after a fork every page the parent writes takes a
 * copy-on-write fault. */
void test_loop_no_faults()
{
    rtm_stats st0 = rtm_heap_stats(control_loop::heap());
    std::uint64_t allocs0 = control_loop::allocations();
    std::uint64_t frees0 = control_loop::deallocations();
    unsigned long news0 = news.load();
    long f0 = thread_faults();
    control_loop::run_loop(cycles);
    long faults = thread_faults() - f0;
    unsigned long new_calls = news.load() - news0;
    std::uint64_t allocs = control_loop::allocations() - allocs0;
    std::uint64_t frees = control_loop::deallocations() - frees0;
    rtm_stats st = rtm_heap_stats(control_loop::heap());

    CHECK_MSG(faults == 0, "%ld page faults in %llu cycles", faults,
              static_cast<unsigned long long>(cycles));
    CHECK_MSG(new_calls == 0, "operator new called %lu times in the loop", new_calls);
    CHECK_MSG(allocs > cycles && frees > cycles, "the loop allocated %llu / freed %llu",
              static_cast<unsigned long long>(allocs), static_cast<unsigned long long>(frees));
    CHECK_EQ(st.failed_allocs, st0.failed_allocs);
    CHECK(rtm_heap_check(control_loop::heap()) == 0);
    std::printf("  %llu cycles: %llu heap allocations, %llu frees, %ld page faults, "
                "%lu operator new calls, heap peak %zu bytes\n",
                static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(allocs),
                static_cast<unsigned long long>(frees), faults, new_calls, st.peak_used_bytes);
}

/* The loop in a strict-mode child; the parent runs the same cycles from
 * the same state and must get the same digest (the child did the work). */
void test_loop_no_system_calls()
{
    std::uint64_t child_digest = 0;
    bool got = false;
    int status = strict_child(the_loop, &child_digest, &got);
    describe("the loop in strict mode", status);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the loop made a system call (status %#x: %s)", status,
              WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? "killed by seccomp"
                                                                 : "see above");
    std::uint64_t digest = control_loop::run_loop(cycles);
    CHECK_MSG(got && digest == child_digest, "digests differ: child %llu, here %llu",
              static_cast<unsigned long long>(child_digest),
              static_cast<unsigned long long>(digest));
}

} // namespace

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#endif

int main()
{
#if defined(TEST_UNDER_TSAN)
    std::printf("TSan build: the TSan runtime's own work (background thread, shadow and "
                "trace memory) cannot be kept out of a seccomp-strict child; skipped\n");
    return 77;
#endif
    control_loop::start();
    std::printf("start-up done; region %s\n",
                control_loop::region_locked ? "mlock'ed" : "pre-faulted (mlock refused)");
    RUN_TEST(test_loop_no_faults); /* first: no fork before it */
    RUN_TEST(test_control_faults);
    RUN_TEST(test_control_seccomp);
    RUN_TEST(test_loop_no_system_calls);
    std::size_t left = control_loop::stop();
    CHECK_MSG(left == 0, "after tear-down: %zu blocks left (or a failed check)", left);
    return check_summary();
}
