// SPDX-License-Identifier: MIT
/*
 * tests/cpp/test_pmr_mt_pipeline.cpp -- the real-time claim of
 * examples/pmr_mt_pipeline.cpp: after start-up, its two threads hand
 * std::pmr containers to each other through an rtmem mt heap (allocations
 * on their own shards, frees of the other thread's blocks) with
 *  - no system call: in a child process (forked before any thread exists),
 *    both threads enter seccomp strict mode right before their loops (any
 *    system call but read, write, exit and sigreturn kills the thread that
 *    makes it: strict mode's kill is the thread's), count themselves
 *    finished after their loops and leave by the raw exit call; the
 *    child's main thread, outside strict mode, joins them and reports
 *    through a pipe. Both must have finished. Control: threads making one
 *    system call (getpid) in strict mode never finish, so the method can
 *    fail;
 *  - no page fault: the process's faults (getrusage RUSAGE_SELF, by the
 *    idle main thread) from the start signal to the join stay 0. Control:
 *    a fresh page touched in the loop counts;
 * while the loop really allocates (the sensor's shard sees every message)
 * and every block is back at the end (live_blocks 0, the check passes).
 * Not for TSan builds (the runtime's own thread and mappings) nor ASan
 * builds (the block tracker's system calls, the shadow's faults): exit 77.
 * A child that hangs (a thread killed mid-loop) is ended by an alarm.
 */
#define PMR_MT_PIPELINE_NO_MAIN 1
#include "../../examples/pmr_mt_pipeline.cpp"

#include <csignal>

#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"

#if defined(__SANITIZE_THREAD__)
#define RTM_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RTM_TEST_UNDER_TSAN 1
#endif
#endif
#if defined(RTM_TEST_UNDER_TSAN)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
#define RTM_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTM_TEST_UNDER_ASAN 1
#endif
#endif
#if defined(RTM_TEST_UNDER_ASAN)
constexpr bool under_asan = true;
#else
constexpr bool under_asan = false;
#endif

namespace
{

long process_faults()
{
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt + ru.ru_majflt;
}

void enter_strict()
{
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0)
        abort(); /* a failure, never a skip */
}
std::atomic<int> finished{0};
void leave_thread()
{
    finished.fetch_add(1);
    syscall(SYS_exit, 0);
}
void one_system_call()
{
    enter_strict();
    (void)syscall(SYS_getpid);
}
unsigned char *fresh_page;
void touch_fresh_page()
{
    enter_strict();
    fresh_page[0] = 1;
}

long faults_at_start;
void note_start() { faults_at_start = process_faults(); }

struct outcome {
    long faults;
    std::uint64_t sensor, planner;
    std::size_t left, failed;
    int finished;
};

/* Runs the pipeline in a child with the given hooks; the wait status. */
int child_run(std::uint64_t cycles, mt_pipeline::hooks h, outcome *out, bool *got)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::fflush(nullptr);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* A thread killed in strict mode leaves the other waiting for its
         * messages: the alarm ends the child, and the test fails instead of
         * hanging. */
        alarm(120);
        close(fds[0]);
        mt_pipeline::run(cycles, h, note_start);
        outcome o{};
        o.faults = process_faults() - faults_at_start;
        o.finished = finished.load();
        o.sensor = mt_pipeline::the_pipeline->sensor_digest;
        o.planner = mt_pipeline::the_pipeline->planner_digest;
        o.failed = mt_pipeline::the_pipeline->heap.stats().failed_allocs;
        o.left = mt_pipeline::stop();
        ssize_t n = write(fds[1], &o, sizeof o);
        _exit(n == static_cast<ssize_t>(sizeof o) ? 0 : 4);
    }
    close(fds[1]);
    *got = read(fds[0], out, sizeof *out) == static_cast<ssize_t>(sizeof *out);
    close(fds[0]);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    return status;
}

void test_control_seccomp()
{
    outcome o{};
    bool got = false;
    mt_pipeline::hooks h;
    h.before_loop = one_system_call;
    h.after_loop = leave_thread;
    int status = child_run(1000, h, &o, &got);
    CHECK_MSG(WIFEXITED(status) && got, "control run failed (%#x)", status);
    CHECK_MSG(o.finished == 0 && o.sensor == 0 && o.planner == 0,
              "threads making a system call in strict mode finished (%d of 2)", o.finished);
}

void test_control_faults()
{
    fresh_page = static_cast<unsigned char *>(
        mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(fresh_page != MAP_FAILED);
    outcome o{};
    bool got = false;
    mt_pipeline::hooks h;
    h.before_loop = touch_fresh_page;
    h.after_loop = leave_thread;
    int status = child_run(1000, h, &o, &got);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got, "control run failed (%#x)",
              status);
    CHECK_MSG(o.faults >= 1, "a fresh page touched in the loop counted %ld faults", o.faults);
    munmap(fresh_page, 4096);
}

void test_pipeline_strict()
{
    outcome o{};
    bool got = false;
    mt_pipeline::hooks h;
    h.before_loop = enter_strict;
    h.after_loop = leave_thread;
    int status = child_run(10000, h, &o, &got);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got,
              "the pipeline's child failed (status %#x)", status);
    CHECK_MSG(o.finished == 2,
              "%d of 2 threads finished under seccomp strict mode (a thread "
              "that makes a system call is killed)",
              o.finished);
    std::printf("  10000 messages under seccomp strict: %ld page faults, %zu blocks left, "
                "%zu refused\n",
                o.faults, o.left, o.failed);
    CHECK_EQ(o.faults, 0);
    CHECK_EQ(o.left, 0);
    CHECK_EQ(o.failed, 0);
    CHECK(o.sensor != 0 && o.planner != 0);
}

} // namespace

int main()
{
    /* A run-time test, not an #if around the calls: the test functions stay
     * referenced in every build (-Werror=unused-function under TSan). */
    if (under_tsan) {
        std::printf("TSan build: seccomp strict children cannot run beside its runtime; "
                    "skipped\n");
        return 77;
    }
    if (under_asan) {
        /* Its block tracker (RTMEM_ASAN_TRACKING, core/track.c) naps in a
         * system call when its lock is contended, which strict mode kills,
         * and its shadow memory faults on first use. */
        std::printf("ASan build: the block tracker makes system calls; skipped\n");
        return 77;
    }
    RUN_TEST(test_control_seccomp);
    RUN_TEST(test_control_faults);
    RUN_TEST(test_pipeline_strict);
    return check_summary();
}
