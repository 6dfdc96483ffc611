// SPDX-License-Identifier: MIT
/*
 * tests/cpp/test_pmr_noexcept.cpp -- include/rtmem/pmr.hpp compiled with
 * -fno-exceptions -fno-rtti, as real-time C++ often is. An allocation the
 * heap refuses cannot throw: it calls the handler installed with
 * rtmem::set_allocation_failure_handler(), fn(bytes, alignment), with errno
 * from the heap; without one (or when it returns) it reports on stderr and
 * calls std::abort().
 *
 * Each case runs in a child process (fork) that ends as the handler or the
 * default makes it end; the parent checks how:
 *  - the resource refusing a request too large for the heap: the handler
 *    sees exactly (bytes, alignment) and errno ENOMEM, and _exits with 42;
 *  - rtmem::allocator<T>::allocate(n): bytes n * sizeof(T), alignof(T);
 *  - a std::pmr::vector growing until the heap is full: the handler runs
 *    (from inside push_back) with ENOMEM;
 *  - an alignas(64) type on xvmalloc: alignment 64 and ENOTSUP (half-fit
 *    serves alignments up to 64 KiB since issue 13);
 *  - an allocator count whose byte size overflows: the handler;
 *  - a handler that returns: SIGABRT;
 *  - no handler: SIGABRT, and stderr names the request;
 *  - the throwing rtmem::heap constructor on a bad algorithm: SIGABRT
 *    (the std::error_code overload is the one to use: tested here too).
 * In the parent: containers that fit work as with exceptions, the handler
 * setter returns the previous handler, and without RTTI a heap_resource
 * equals only itself (documented).
 */
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory_resource>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "rtmem/pmr.hpp"

#if defined(__cpp_exceptions)
#error "this test must be compiled with -fno-exceptions"
#endif

namespace
{

int failures = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "%s:%d: FAIL %s: ", __FILE__, __LINE__, #cond);                   \
            std::fprintf(stderr, __VA_ARGS__);                                                     \
            std::fputc('\n', stderr);                                                              \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

constexpr int handler_status = 42; /* the handler ran with what it expected */
constexpr int wrong_status = 43;   /* the handler ran with something else   */

alignas(64) unsigned char region_a[256 * 1024];
alignas(64) unsigned char region_b[64 * 1024];

/* What the handler expects; 0 means "any". */
std::size_t want_bytes, want_alignment;
int want_errno;

void exiting_handler(std::size_t bytes, std::size_t alignment)
{
    int err = errno;
    bool ok = (want_bytes == 0 || bytes == want_bytes) && alignment == want_alignment &&
              err == want_errno;
    if (!ok)
        std::fprintf(stderr, "handler: bytes %zu alignment %zu errno %d\n", bytes, alignment, err);
    _exit(ok ? handler_status : wrong_status);
}

void returning_handler(std::size_t, std::size_t) {}

/* Runs fn in a child with stderr into a pipe; returns the wait status and
 * what the child wrote to stderr. */
int in_child(void (*fn)(), std::string *err_text)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        fn();
        _exit(0); /* fn came back: no failure happened */
    }
    close(fds[1]);
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        err_text->append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

void expect_handler(const char *what, void (*fn)())
{
    std::string err;
    int status = in_child(fn, &err);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == handler_status,
           "%s: child status %#x, stderr: %s", what, status, err.c_str());
    std::printf("%-44s handler called with the request (exit %d)\n", what,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void expect_abort(const char *what, void (*fn)(), const char *message)
{
    std::string err;
    int status = in_child(fn, &err);
    EXPECT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s: child status %#x", what,
           status);
    EXPECT(err.find(message) != std::string::npos, "%s: stderr \"%s\" lacks \"%s\"", what,
           err.c_str(), message);
    std::printf("%-44s std::abort() after: %s", what, err.c_str());
}

/* ---- the cases, each run in a child ---------------------------------- */

void resource_too_large()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    rtmem::heap_resource res(h);
    rtmem::set_allocation_failure_handler(exiting_handler);
    want_bytes = 1u << 20;
    want_alignment = 16;
    want_errno = ENOMEM;
    std::pmr::memory_resource &mr = res;
    void *p = mr.allocate(1u << 20, 16);
    std::printf("allocated %p\n", p);
}

void allocator_too_large()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    rtmem::set_allocation_failure_handler(exiting_handler);
    want_bytes = 100000 * sizeof(double);
    want_alignment = alignof(double);
    want_errno = ENOMEM;
    rtmem::allocator<double> a(h);
    double *p = a.allocate(100000);
    std::printf("allocated %p\n", static_cast<void *>(p));
}

void vector_until_full()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_b, sizeof region_b, ec);
    rtmem::heap_resource res(h);
    rtmem::set_allocation_failure_handler(exiting_handler);
    want_bytes = 0;
    want_alignment = alignof(long);
    want_errno = ENOMEM;
    std::pmr::vector<long> v(&res);
    for (long i = 0; i < 100000000; i++)
        v.push_back(i);
}

struct alignas(64) wide {
    int v;
};

void overaligned_on_xvmalloc()
{
    std::error_code ec;
    rtmem::heap h("xvmalloc", region_a, sizeof region_a, ec);
    rtmem::set_allocation_failure_handler(exiting_handler);
    want_bytes = 4 * sizeof(wide);
    want_alignment = 64;
    want_errno = ENOTSUP;
    std::vector<wide, rtmem::allocator<wide>> v{rtmem::allocator<wide>(h)};
    v.reserve(4);
}

void count_overflows()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    rtmem::set_allocation_failure_handler(exiting_handler);
    want_bytes = static_cast<std::size_t>(-1);
    want_alignment = alignof(std::uint64_t);
    want_errno = ENOMEM;
    rtmem::allocator<std::uint64_t> a(h);
    std::uint64_t *p = a.allocate(static_cast<std::size_t>(-1) / 4);
    std::printf("allocated %p\n", static_cast<void *>(p));
}

void handler_returns()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    rtmem::heap_resource res(h);
    rtmem::set_allocation_failure_handler(returning_handler);
    std::pmr::memory_resource &mr = res;
    std::printf("allocated %p\n", mr.allocate(1u << 20, 8));
}

void default_handler()
{
    std::error_code ec;
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    rtmem::heap_resource res(h);
    rtmem::set_allocation_failure_handler(nullptr);
    std::pmr::memory_resource &mr = res;
    std::printf("allocated %p\n", mr.allocate(1u << 20, 8));
}

void throwing_constructor()
{
    rtmem::heap h("nosuch", region_a, sizeof region_a);
    std::printf("created %p\n", static_cast<void *>(h.get()));
}

/* ---- in the parent ------------------------------------------------------ */

void normal_operation()
{
    std::error_code ec;
    rtmem::heap bad("nosuch", region_a, sizeof region_a, ec);
    EXPECT(ec.value() == EINVAL && bad.get() == nullptr, "error_code %d", ec.value());
    rtmem::heap h("tlsf", region_a, sizeof region_a, ec);
    EXPECT(!ec && h.get() != nullptr, "tlsf heap: %d", ec.value());
    rtmem::heap_resource res(h), other(h.get());
    {
        std::pmr::map<int, std::pmr::string> m(&res);
        for (int i = 0; i < 200; i++)
            m[i] = std::pmr::string(40, static_cast<char>('a' + i % 26), &res);
        std::vector<int, rtmem::allocator<int>> v{rtmem::allocator<int>(h)};
        for (int i = 0; i < 1000; i++)
            v.push_back(i);
        EXPECT(m.size() == 200 && m[7][0] == 'h' && v[999] == 999, "contents");
        EXPECT(h.stats().live_blocks == 200 * 2 + 1, "live blocks %zu", h.stats().live_blocks);
    }
    EXPECT(h.stats().live_blocks == 0 && h.check() == 0, "blocks left: %zu", h.stats().live_blocks);
    /* Without RTTI a resource cannot look at another's heap. */
    EXPECT(res == res && !(res == other), "equality without RTTI");
    EXPECT(rtmem::allocator<int>(h) == rtmem::allocator<char>(h.get()), "allocator equality");
    /* The setter returns the previous handler. */
    EXPECT(rtmem::get_allocation_failure_handler() == nullptr, "default handler");
    EXPECT(rtmem::set_allocation_failure_handler(exiting_handler) == nullptr, "set");
    EXPECT(rtmem::set_allocation_failure_handler(nullptr) == exiting_handler, "previous");
}

} // namespace

int main()
{
    normal_operation();
    expect_handler("resource: request larger than the heap", resource_too_large);
    expect_handler("allocator: request larger than the heap", allocator_too_large);
    expect_handler("pmr::vector growing until the heap is full", vector_until_full);
    expect_handler("alignas(64) on xvmalloc (ENOTSUP)", overaligned_on_xvmalloc);
    expect_handler("allocator count overflowing size_t", count_overflows);
    expect_abort("handler that returns", handler_returns, "handler returned");
    expect_abort("no handler (the default)", default_handler,
                 "rtmem: allocation of 1048576 bytes (alignment 8) failed");
    expect_abort("throwing constructor, unknown algorithm", throwing_constructor,
                 "rtm_heap_create failed (errno 22)");
    if (failures != 0) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("all checks passed\n");
    return 0;
}
