// SPDX-License-Identifier: MIT
// rec_prog_cxx.cpp -- the C++ program the recorder's tests record
// (tests_trace.cmake): each operator new/delete form once with a size
// nothing else asks for (40001 ...), and a std::bad_alloc thrown through the
// recorder's operator new[], after which recording must go on (40006).
// rec_check.c knows these sizes.
#include <cstddef>
#include <new>

struct S1 {
    char x[40001];
};
struct S5 {
    char x[40005];
};
struct S6 {
    char x[40006];
};
struct alignas(256) T {
    char x[40192];
};

// Each block passes through a volatile pointer: a new/delete pair whose
// block is never used may be elided by the compiler (C++14), and then there
// would be nothing to record.
static void *volatile sink;

template <class P> static P *keep(P *p)
{
    sink = p;
    return p;
}

int main()
{
    S1 *s = keep(new S1); // operator new(40001)
    delete s;             // sized delete
    char *a = keep(new char[40002]);
    delete[] a;
    T *t = keep(new T); // aligned new (256)
    delete t;
    char *n = keep(new (std::nothrow) char[40004]);
    delete[] n;
    S5 *f = keep(new (std::nothrow) S5);
    delete f;
    try {
        volatile std::size_t huge = ~static_cast<std::size_t>(0) / 2;
        char *h = keep(new char[huge]);
        delete[] h;
        return 1; // should have thrown
    } catch (const std::bad_alloc &) {
    }
    S6 *g = keep(new S6);
    delete g;
    return 0;
}
