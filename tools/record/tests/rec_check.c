// SPDX-License-Identifier: MIT
/*
 * rec_check.c -- checks a trace recorded from rec_prog (mode "c") or
 * rec_prog_cxx (mode "cxx") against what those programs did: the right
 * operation, size and alignment for each call, ids that link each free or
 * resize to its allocation, one thread index per thread, nothing from a
 * forked child, no call recorded twice (operator new's inner malloc).
 * After an exec (rec_exec.c), mode "exec": rec_prog's calls and, before
 * them, the replaced image's malloc(60001) with its free, malloc(60002)
 * still live, and the 10 x malloc(60004) of its thread alive at the exec; mode "final"
 * (--final-only): rec_prog's calls and nothing of the replaced image; mode "spawn": the parent
 * rec_exec's malloc(60003) and nothing of its children. PROGRAM, when given, is the program the
 * trace's header must name (the image that ran last).
 * Exit 0 when everything holds, 1 with every difference printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_read.h"

static trace t;
static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rec_check: " __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The only record of op with this size; NULL (and a failure) otherwise. */
static const trace_op_rec *only(unsigned op, uint64_t size)
{
    const trace_op_rec *found = NULL;
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].op == op && t.ops[i].size == size) {
            found = &t.ops[i];
            n++;
        }
    CHECK(n == 1, "%zu records of %s(%llu), expected 1", n, trace_op_name(op),
          (unsigned long long)size);
    return n == 1 ? found : NULL;
}

/* Allocations and resizes of this size (a sized delete carries the size
 * too, and is not counted). */
static size_t count_size(uint64_t size)
{
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++)
        n += t.ops[i].size == size && trace_op_class(t.ops[i].op) != TC_FREE;
    return n;
}

/* The block is given back exactly once, by one of ops, after it was made. */
static void freed_by(const trace_op_rec *a, unsigned op1, unsigned op2)
{
    if (a == NULL)
        return;
    if (a->id == 0) {
        CHECK(0, "%s(%llu) has no id", trace_op_name(a->op), (unsigned long long)a->size);
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].old_id == a->id) {
            CHECK(t.ops[i].op == op1 || t.ops[i].op == op2, "id %u given back by %s", a->id,
                  trace_op_name(t.ops[i].op));
            CHECK(&t.ops[i] > a, "id %u given back before it was made", a->id);
            n++;
        }
    CHECK(n == 1, "id %u (%s of %llu) given back %zu times", a->id, trace_op_name(a->op),
          (unsigned long long)a->size, n);
}

static void aligned(const trace_op_rec *r, unsigned log2)
{
    if (r != NULL)
        CHECK(r->align_log2 == log2, "%s(%llu): alignment log2 %u, expected %u",
              trace_op_name(r->op), (unsigned long long)r->size, r->align_log2, log2);
}

/* Every allocation of size is on one thread; returns it (-1: none). */
static int thread_of(uint64_t size, size_t expect)
{
    int th = -1;
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].op == TOP_MALLOC && t.ops[i].size == size) {
            CHECK(th < 0 || th == t.ops[i].thread, "malloc(%llu) on two threads",
                  (unsigned long long)size);
            th = t.ops[i].thread;
            n++;
        }
    CHECK(n == expect, "%zu x malloc(%llu), expected %zu", n, (unsigned long long)size, expect);
    return th;
}

static void check_c(void)
{
    const trace_op_rec *a = only(TOP_MALLOC, 10001), *b = only(TOP_CALLOC, 10002);
    const trace_op_rec *r = only(TOP_REALLOC, 10003);
    if (a != NULL && r != NULL)
        CHECK(r->old_id == a->id && r->id != 0, "realloc: old id %u, expected %u", r->old_id,
              a->id);
    const trace_op_rec *c = only(TOP_ALIGNED_ALLOC, 10048), *d = only(TOP_POSIX_MEMALIGN, 10005);
    const trace_op_rec *e = only(TOP_MEMALIGN, 10006), *f = only(TOP_VALLOC, 10007);
    aligned(c, 6);
    aligned(d, 7);
    aligned(e, 8);
    aligned(f, 12);
    freed_by(b, TOP_FREE, TOP_FREE);
    freed_by(r, TOP_FREE, TOP_FREE);
    freed_by(c, TOP_FREE, TOP_FREE);
    freed_by(d, TOP_FREE, TOP_FREE);
    freed_by(e, TOP_FREE, TOP_FREE);
    freed_by(f, TOP_FREE, TOP_FREE);
    int t1 = thread_of(20001, 100), t2 = thread_of(20002, 100);
    CHECK(t1 >= 0 && t2 >= 0 && t1 != t2, "threads of the workers: %d and %d", t1, t2);
    if (a != NULL)
        CHECK(t1 != a->thread && t2 != a->thread, "a worker shares thread %u with main", a->thread);
    CHECK(count_size(30001) == 0, "the forked child's malloc(30001) was recorded");
    /* 10000 live at once, across the table's growth: each id made once and
     * given back once (freed_by checks the order too). */
    size_t many = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].op == TOP_MALLOC && t.ops[i].size == 50001) {
            CHECK(t.ops[i].id != 0, "malloc(50001) number %zu has no id", many);
            if (t.ops[i].id != 0)
                freed_by(&t.ops[i], TOP_FREE, TOP_FREE);
            many++;
        }
    CHECK(many == 10000, "%zu x malloc(50001), expected 10000", many);
}

static void check_cxx(void)
{
    const trace_op_rec *s = only(TOP_NEW, 40001), *a = only(TOP_NEW_ARRAY, 40002);
    const trace_op_rec *al = only(TOP_NEW, 40192), *n = only(TOP_NEW_ARRAY, 40004);
    const trace_op_rec *f = only(TOP_NEW, 40005), *g = only(TOP_NEW, 40006);
    aligned(al, 8);
    freed_by(s, TOP_DELETE, TOP_DELETE);
    freed_by(a, TOP_DELETE_ARRAY, TOP_DELETE_ARRAY);
    freed_by(al, TOP_DELETE, TOP_DELETE);
    freed_by(n, TOP_DELETE_ARRAY, TOP_DELETE_ARRAY);
    freed_by(f, TOP_DELETE, TOP_DELETE);
    freed_by(g, TOP_DELETE, TOP_DELETE);
    const uint64_t sizes[] = {40001, 40002, 40192, 40004, 40005, 40006};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        CHECK(count_size(sizes[i]) == 1,
              "%zu records of size %llu: operator new's own malloc "
              "recorded too?",
              count_size(sizes[i]), (unsigned long long)sizes[i]);
}

/* The replaced image's calls, all before the first of rec_prog's. */
static void check_exec(void)
{
    const trace_op_rec *a = only(TOP_MALLOC, 60001), *kept = only(TOP_MALLOC, 60002);
    const trace_op_rec *first = only(TOP_MALLOC, 10001);
    freed_by(a, TOP_FREE, TOP_FREE);
    if (kept != NULL)
        for (size_t i = 0; i < t.n; i++)
            CHECK(t.ops[i].old_id != kept->id, "the block kept over the exec was freed");
    if (a != NULL && kept != NULL && first != NULL)
        CHECK(a < first && kept < first, "the replaced image's calls come after the program's");
    /* a thread still alive at the exec: its buffer was written too */
    size_t n = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.ops[i].op == TOP_MALLOC && t.ops[i].size == 60004) {
            freed_by(&t.ops[i], TOP_FREE, TOP_FREE);
            CHECK(first == NULL || &t.ops[i] < first, "malloc(60004) after the program's calls");
            n++;
        }
    CHECK(n == 10, "%zu x malloc(60004) of the thread alive at the exec, expected 10", n);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"c", "cxx", "exec", "final", "spawn"};
    size_t mode = 0;
    while (argc >= 3 && mode < 5 && strcmp(argv[2], modes[mode]) != 0)
        mode++;
    if ((argc != 3 && argc != 4) || mode == 5) {
        fprintf(stderr, "usage: rec_check TRACE c|cxx|exec|final|spawn [PROGRAM]\n");
        return 2;
    }
    char err[512];
    if (trace_load(argv[1], &t, err, sizeof err) != 0) {
        fprintf(stderr, "rec_check: %s: %s\n", argv[1], err);
        return 1;
    }
    if (mode == 1)
        check_cxx();
    else if (mode == 4) {
        const trace_op_rec *a = only(TOP_MALLOC, 60003);
        freed_by(a, TOP_FREE, TOP_FREE);
        CHECK(count_size(10001) == 0, "a child's calls are in the parent's trace");
    } else
        check_c();
    if (mode == 2)
        check_exec();
    if (mode == 3)
        CHECK(count_size(60001) == 0 && count_size(60002) == 0 && count_size(60004) == 0,
              "the replaced image's calls are in a --final-only trace");
    if (argc == 4)
        CHECK(strncmp(t.hdr.program, argv[3], sizeof t.hdr.program) == 0,
              "the header names program %.24s, expected %s", t.hdr.program, argv[3]);
    printf("rec_check: %zu calls, %u threads, %d failures\n", t.n, t.nthreads, failures);
    trace_free(&t);
    return failures ? 1 : 0;
}
