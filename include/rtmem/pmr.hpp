// SPDX-License-Identifier: MIT
/*
 * rtmem/pmr.hpp -- rtmem heaps for C++17: owning heap handles, a
 * std::pmr::memory_resource, and a standard Allocator. Header-only; the
 * rest of rtmem stays C11 (link librtmem as for C: rtmem::rtmem).
 *
 * What it offers (namespace rtmem):
 *  - rtmem::heap, rtmem::locked_heap, rtmem::mt_heap: own one rtm_heap
 *    made by rtm_heap_create() / rtm_locked_create() / rtm_mt_create()
 *    over a region you give
 *    (static, mmap'd, mlock'd: the region stays yours). Non-copyable,
 *    movable (the moved-from object holds nullptr and its destructor does
 *    nothing); the destructor calls rtm_heap_destroy(). Creation failure
 *    throws std::system_error whose code().value() is the errno (EINVAL for
 *    an unknown algorithm or a region smaller than rtm_min_region(); for a
 *    locked heap also the mutex's error, ENOTSUP). The overload taking a
 *    std::error_code& never throws: on failure get() is nullptr.
 *  - rtmem::heap_resource: a std::pmr::memory_resource over an rtm_heap *
 *    it does not own, for std::pmr containers (std::pmr::vector, map,
 *    string, ...). Requests aligned to at most RTM_ALIGN (8) go to
 *    rtm_alloc(), larger alignments to rtm_aligned_alloc().
 *  - rtmem::allocator<T>: a standard Allocator over an rtm_heap *, for
 *    std::vector<T, rtmem::allocator<T>>, std::map, std::unordered_map,
 *    std::basic_string, std::list, std::allocate_shared, ... (the role of
 *    ROS 2's tlsf_cpp allocator, for every rtmem algorithm). alignof(T) >
 *    RTM_ALIGN goes to rtm_aligned_alloc().
 *  Both keep a plain rtm_heap *: moving the owning rtmem::heap object does
 *  not invalidate them; destroying it does.
 *
 * Time bounds: each allocate/deallocate is one rtm_alloc / rtm_aligned_alloc
 * / rtm_free, so it has that algorithm's bound (O(1) for every algorithm;
 * TLSF at most 111 / 116 instructions on x86-64; docs/CHOOSING.md) plus a
 * virtual call for the resource. What the containers do around it (copying
 * elements when a vector grows, rehashing) is the container's own cost. No
 * system call, no lock (plain heaps), no hidden malloc.
 *
 * Thread safety: a plain rtmem::heap is not thread-safe -- containers on one
 * heap must be used by one thread at a time (or under your own lock). For
 * containers used from several threads, or several containers on one heap
 * used by different threads, make the heap an rtmem::mt_heap and give each
 * real-time thread an rtmem::mt_attachment: its calls then take no lock and
 * blocks may be freed by any thread (rtmem/mt.h); or an
 * rtmem::locked_heap, whose every call takes its priority-inheritance
 * mutex (rtmem/lock.h).
 * heap_resource and allocator add no state of their own beyond the pointer.
 *
 * Exhaustion: when the heap refuses (no block fits: ENOMEM; an alignment the
 * algorithm cannot give, e.g. above 8 on halffit: ENOTSUP), allocation
 * throws std::bad_alloc (std::bad_array_new_length for an allocator count
 * whose byte size overflows). The heap is unchanged by a refusal (its
 * failed_allocs counter grows): rtm_heap_check() passes and, after frees,
 * allocation works again. The containers give their usual exception
 * guarantees (push_back leaves the vector as it was).
 *
 * Without exceptions (-fno-exceptions, detected by __cpp_exceptions): the
 * failure calls the handler installed with
 * rtmem::set_allocation_failure_handler(fn), fn(bytes, alignment), errno
 * still set by the heap (ENOMEM, ENOTSUP). The handler must not return (it
 * may log and _exit, longjmp to a recovery point of your own when no C++
 * destructor is skipped, or reset the system); if it returns, or none is
 * installed, the default reports one line on stderr and calls std::abort().
 * rtm's own error handler (rtm_set_error_handler) is for misuse the heaps
 * detect and has no allocation-failure kind, so it is not involved. The
 * throwing constructors of heap / locked_heap abort in such builds: use the
 * std::error_code& overloads. Compile every file that includes this header
 * in the same mode (the member functions are inline).
 *
 * Equality: two heap_resources are equal exactly when they manage the same
 * heap (needs RTTI to look at the other resource; under -fno-rtti a
 * heap_resource equals itself only). Two allocators are equal exactly when
 * they use the same heap, whatever their value types.
 *
 * Propagation (rtmem::allocator; see the traits in the class):
 *  - move assignment and swap: the allocator travels with the storage
 *    (propagate_on_container_move_assignment / _swap = true_type). A block
 *    must go back to the heap it came from, and moving or swapping hands the
 *    blocks over, so the heap goes with them: both are O(1), never
 *    allocate, never throw, and swapping containers on different heaps is
 *    defined (it would be undefined behaviour with false).
 *  - copy assignment: the destination keeps its heap
 *    (propagate_on_container_copy_assignment = false_type). A copy makes
 *    new blocks, and they go where the destination's owner chose to keep its
 *    memory (that thread's heap, that locked heap) -- as std::pmr does.
 *  - is_always_equal = false_type: different heaps are different.
 *
 * std::pmr's own allocator (std::pmr::polymorphic_allocator, over a
 * heap_resource) propagates nothing: there move assignment between
 * containers on different heaps copies elements and may allocate.
 */
#ifndef RTMEM_PMR_HPP
#define RTMEM_PMR_HPP

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "rtmem/pmr.hpp needs C++17 (std::pmr::memory_resource)"
#endif

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory_resource>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>

#include "../rtmem.h"

namespace rtmem
{

/** Called, without exceptions, when a heap refuses an allocation: the bytes
 *  and alignment requested. Must not return. */
using allocation_failure_handler = void (*)(std::size_t bytes, std::size_t alignment);

namespace detail
{

/* One slot per program (an inline variable has one definition across
 * translation units). Atomic: may be set while other threads allocate. */
inline std::atomic<allocation_failure_handler> failure_handler{nullptr};

#if !defined(__cpp_exceptions)
/* The default without exceptions: one line on stderr, then abort. Not
 * strerror(): it is not thread-safe, and the two causes are known. */
[[noreturn]] inline void default_failure(std::size_t bytes, std::size_t alignment, int err) noexcept
{
    const char *why = err == ENOMEM    ? "no block fits (ENOMEM)"
                      : err == ENOTSUP ? "alignment not supported by the algorithm (ENOTSUP)"
                                       : "refused by the heap";
    std::fprintf(stderr, "rtmem: allocation of %zu bytes (alignment %zu) failed: %s\n", bytes,
                 alignment, why);
    std::abort();
}
#endif

/* The one place an allocation failure goes. Cold: never on the fast path. */
[[noreturn]] inline void allocation_failed(std::size_t bytes, std::size_t alignment)
{
#if defined(__cpp_exceptions)
    (void)bytes;
    (void)alignment;
    throw std::bad_alloc();
#else
    int err = errno;
    allocation_failure_handler fn = failure_handler.load(std::memory_order_acquire);
    if (fn != nullptr) {
        fn(bytes, alignment);
        std::fputs("rtmem: the allocation failure handler returned\n", stderr);
        std::abort();
    }
    default_failure(bytes, alignment, err);
#endif
}

/* An allocator count whose byte size does not fit in size_t. */
[[noreturn]] inline void length_overflow(std::size_t alignment)
{
#if defined(__cpp_exceptions)
    (void)alignment;
    throw std::bad_array_new_length();
#else
    errno = ENOMEM;
    allocation_failed(static_cast<std::size_t>(-1), alignment);
#endif
}

/* The one allocation path of the resource and the allocator. */
inline void *allocate(rtm_heap *h, std::size_t bytes, std::size_t alignment)
{
    void *p = alignment <= RTM_ALIGN ? rtm_alloc(h, bytes) : rtm_aligned_alloc(h, alignment, bytes);
    if (p == nullptr)
        allocation_failed(bytes, alignment);
    return p;
}

using create_fn = rtm_heap *(*)(const char *algorithm, void *mem, std::size_t bytes);

/* What heap and locked_heap share: ownership of one handle. */
class owned_heap
{
  public:
    owned_heap(const owned_heap &) = delete;
    owned_heap &operator=(const owned_heap &) = delete;
    owned_heap(owned_heap &&other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    owned_heap &operator=(owned_heap &&other) noexcept
    {
        if (this != &other) {
            reset();
            h_ = std::exchange(other.h_, nullptr);
        }
        return *this;
    }
    ~owned_heap() { reset(); }

    /** The handle, or nullptr (moved from, released, failed creation). */
    rtm_heap *get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != nullptr; }
    /** rtm_heap_stats() of the heap (all zero for nullptr). O(1). */
    rtm_stats stats() const noexcept { return rtm_heap_stats(h_); }
    /** rtm_heap_check(): 0 when every invariant holds. O(heap). */
    int check() const noexcept { return rtm_heap_check(h_); }
    /** Gives up ownership: the caller destroys the returned handle. */
    rtm_heap *release() noexcept { return std::exchange(h_, nullptr); }

  protected:
    owned_heap(create_fn create, const char *what, const char *algorithm, void *mem,
               std::size_t bytes)
        : owned_heap(create(algorithm, mem, bytes), what)
    {
    }
    /* A handle made by the caller's create (nullptr: throws). */
    owned_heap(rtm_heap *made, const char *what) : h_(made)
    {
        if (h_ == nullptr)
            creation_failed(what);
    }
    owned_heap(rtm_heap *made, std::error_code &ec) noexcept : h_(made)
    {
        if (h_ == nullptr)
            ec.assign(errno != 0 ? errno : EINVAL, std::generic_category());
        else
            ec.clear();
    }
    owned_heap(create_fn create, const char *algorithm, void *mem, std::size_t bytes,
               std::error_code &ec) noexcept
        : owned_heap(create(algorithm, mem, bytes), ec)
    {
    }

  private:
    void reset() noexcept
    {
        if (h_ != nullptr)
            rtm_heap_destroy(std::exchange(h_, nullptr));
    }
    [[noreturn]] static void creation_failed(const char *what)
    {
        int err = errno != 0 ? errno : EINVAL;
#if defined(__cpp_exceptions)
        throw std::system_error(err, std::generic_category(), what);
#else
        std::fprintf(stderr, "rtmem: %s failed (errno %d); use the std::error_code overload\n",
                     what, err);
        std::abort();
#endif
    }

    rtm_heap *h_;
};

} // namespace detail

/** Owns a heap made by rtm_heap_create(algorithm, mem, bytes). Not
 *  thread-safe (see the file comment); the region stays the caller's and
 *  must outlive the heap and every block allocated from it. */
class heap : public detail::owned_heap
{
  public:
    /** Throws std::system_error (code().value(): errno, EINVAL) on failure. */
    heap(const char *algorithm, void *mem, std::size_t bytes)
        : owned_heap(rtm_heap_create, "rtm_heap_create", algorithm, mem, bytes)
    {
    }
    /** Never throws: on failure get() is nullptr and ec holds the errno. */
    heap(const char *algorithm, void *mem, std::size_t bytes, std::error_code &ec) noexcept
        : owned_heap(rtm_heap_create, algorithm, mem, bytes, ec)
    {
    }
};

/** Owns a heap made by rtm_locked_create(algorithm, mem, bytes): the same
 *  interface as rtmem::heap, and every operation takes the heap's
 *  priority-inheritance mutex, so threads may share it. */
class locked_heap : public detail::owned_heap
{
  public:
    locked_heap(const char *algorithm, void *mem, std::size_t bytes)
        : owned_heap(rtm_locked_create, "rtm_locked_create", algorithm, mem, bytes)
    {
    }
    locked_heap(const char *algorithm, void *mem, std::size_t bytes, std::error_code &ec) noexcept
        : owned_heap(rtm_locked_create, algorithm, mem, bytes, ec)
    {
    }
};

/** Owns a multi-threaded heap made by rtm_mt_create(algorithm, mem, bytes,
 *  shards) (rtmem/mt.h): the same interface as rtmem::heap, usable from any
 *  thread. A thread that calls attach() (or holds an mt_attachment) gets a
 *  shard of its own: its allocations and the frees of its own blocks take
 *  no lock and make no system call, its frees of other threads' blocks are
 *  wait-free. Threads that do not attach share the PI-locked fallback. */
class mt_heap : public detail::owned_heap
{
  public:
    mt_heap(const char *algorithm, void *mem, std::size_t bytes, unsigned shards)
        : owned_heap(rtm_mt_create(algorithm, mem, bytes, shards), "rtm_mt_create")
    {
    }
    mt_heap(const char *algorithm, void *mem, std::size_t bytes, unsigned shards,
            std::error_code &ec) noexcept
        : owned_heap(rtm_mt_create(algorithm, mem, bytes, shards), ec)
    {
    }
    /** rtm_mt_attach(): the calling thread's shard index, or -1 (errno
     *  EBUSY: every shard held; ENOSPC: the thread holds too many heaps). */
    int attach() const noexcept { return rtm_mt_attach(get()); }
    /** rtm_mt_detach(): 0, or -1 with errno EINVAL (no shard held). */
    int detach() const noexcept { return rtm_mt_detach(get()); }
};

/** Holds the calling thread's shard of an mt_heap for its lifetime: attach
 *  in the constructor, detach in the destructor. attached() says whether a
 *  shard was free (if not, the thread is served by the fallback). Create it
 *  at the top of the thread's function, before the containers it uses. */
class mt_attachment
{
  public:
    explicit mt_attachment(const mt_heap &h) noexcept : heap_(h.get()), shard_(h.attach()) {}
    mt_attachment(const mt_attachment &) = delete;
    mt_attachment &operator=(const mt_attachment &) = delete;
    ~mt_attachment()
    {
        if (shard_ >= 0)
            (void)rtm_mt_detach(heap_);
    }
    bool attached() const noexcept { return shard_ >= 0; }
    /** The shard's index, or -1. */
    int shard() const noexcept { return shard_; }

  private:
    rtm_heap *heap_;
    int shard_;
};

/** Installs the handler called on allocation failure in builds without
 *  exceptions (nullptr: the default, stderr then std::abort()); returns the
 *  previous one. Thread-safe. In builds with exceptions failures throw
 *  std::bad_alloc and the handler is not called. */
inline allocation_failure_handler
set_allocation_failure_handler(allocation_failure_handler fn) noexcept
{
    return detail::failure_handler.exchange(fn, std::memory_order_acq_rel);
}

/** The handler installed now (nullptr: the default). */
inline allocation_failure_handler get_allocation_failure_handler() noexcept
{
    return detail::failure_handler.load(std::memory_order_acquire);
}

/** A std::pmr::memory_resource over an rtm_heap it does not own. The heap
 *  must outlive the resource and every block it gave. Thread-safe exactly
 *  when the heap is (a locked heap). */
class heap_resource : public std::pmr::memory_resource
{
  public:
    explicit heap_resource(rtm_heap *h) noexcept : heap_(h) {}
    explicit heap_resource(heap &h) noexcept : heap_(h.get()) {}
    explicit heap_resource(locked_heap &h) noexcept : heap_(h.get()) {}
    explicit heap_resource(mt_heap &h) noexcept : heap_(h.get()) {}

    rtm_heap *get() const noexcept { return heap_; }

  protected:
    /* rtm_alloc up to RTM_ALIGN, rtm_aligned_alloc above; std::bad_alloc
     * (or the failure handler) when the heap refuses. */
    void *do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        return detail::allocate(heap_, bytes, alignment);
    }
    void do_deallocate(void *p, std::size_t, std::size_t) override { rtm_free(heap_, p); }
    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override
    {
        if (this == &other)
            return true;
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
        const auto *o = dynamic_cast<const heap_resource *>(&other);
        return o != nullptr && o->heap_ == heap_;
#else
        return false; /* without RTTI the other's type cannot be known */
#endif
    }

  private:
    rtm_heap *heap_;
};

/** A standard Allocator over an rtm_heap it does not own (the heap must
 *  outlive every container using it). No default constructor: a container
 *  names its heap. Propagation: move and swap carry the heap along with the
 *  storage, copy assignment keeps the destination's heap (file comment). */
template <class T> class allocator
{
  public:
    using value_type = T;
    /* Copy assignment allocates anew: in the destination's own heap. */
    using propagate_on_container_copy_assignment = std::false_type;
    /* Move and swap hand blocks over: their heap must go with them, which
     * keeps both O(1) and noexcept (swap with unequal allocators and false
     * would be undefined behaviour). */
    using propagate_on_container_move_assignment = std::true_type;
    using propagate_on_container_swap = std::true_type;
    using is_always_equal = std::false_type;

    template <class U> struct rebind {
        using other = allocator<U>;
    };

    explicit allocator(rtm_heap *h) noexcept : heap_(h) {}
    allocator(heap &h) noexcept : heap_(h.get()) {}        /* NOLINT: implicit on purpose */
    allocator(locked_heap &h) noexcept : heap_(h.get()) {} /* NOLINT */
    allocator(mt_heap &h) noexcept : heap_(h.get()) {}     /* NOLINT */
    template <class U> allocator(const allocator<U> &other) noexcept : heap_(other.get()) {}

    /** n objects' worth of storage aligned to alignof(T); std::bad_alloc
     *  (or the failure handler) when the heap refuses. */
    [[nodiscard]] T *allocate(std::size_t n)
    {
        if (n > static_cast<std::size_t>(-1) / sizeof(T))
            detail::length_overflow(alignof(T));
        return static_cast<T *>(detail::allocate(heap_, n * sizeof(T), alignof(T)));
    }
    void deallocate(T *p, std::size_t) noexcept { rtm_free(heap_, p); }

    rtm_heap *get() const noexcept { return heap_; }

  private:
    rtm_heap *heap_;
};

template <class T, class U> bool operator==(const allocator<T> &a, const allocator<U> &b) noexcept
{
    return a.get() == b.get();
}
template <class T, class U> bool operator!=(const allocator<T> &a, const allocator<U> &b) noexcept
{
    return a.get() != b.get();
}

} // namespace rtmem

#endif /* RTMEM_PMR_HPP */
