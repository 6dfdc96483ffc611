// SPDX-License-Identifier: MIT
/*
 * tests/corruption/test_corruption.c -- what each heap does when a user
 * writes 1..8 bytes past a block (issue 17.4), measured, and held: the
 * expected outcomes below are the table of docs/CORRUPTION.md, and
 *   test_corruption                run every experiment, compare with the
 *                                  table of this build (release or debug)
 *   test_corruption --doc FILE     FILE must contain the table, both builds,
 *                                  line for line (so doc and test cannot
 *                                  drift: the doc is the test's output)
 *   test_corruption --table        print the table rows (for the doc)
 *   test_corruption --observe      print what this build does, no assert
 * The build is RTM_CORRUPTION_DEBUG (0 release, 1 RTM_DEBUG), set by
 * tests/corruption/corruption.cmake from the library variant linked.
 *
 * One experiment: a fresh heap in a fixed, page-aligned region (the same
 * layout every time), six live blocks of 40 bytes; A is a block whose next
 * block in address order (rtm_heap_walk) is another of them, N. Scenario
 * "live": N stays allocated. Scenario "free": N is freed first. Then the bug:
 * LEN bytes of PATTERN written from A + rtm_usable_size(A) on (a write past
 * the request but within the usable size harms nothing, so the experiment
 * starts where the block ends). Then the next operation on the neighbour:
 * "live": rtm_free(N); "free": two rtm_alloc(40) (the first may take N's
 * place, the second follows whatever free-list link N held). Then
 * rtm_heap_check. Outcome, one letter:
 *   h / d / f  the operation called the error handler: RTM_ERR_CORRUPT_HEADER,
 *              RTM_ERR_DOUBLE_FREE, RTM_ERR_FOREIGN_POINTER
 *   c          the operation was silent, rtm_heap_check returned -1
 *   !          the operation was silent and handed out a bad block (outside
 *              the region, or overlapping a live block); check passed
 *   C          as !, and rtm_heap_check found it afterwards
 *   -          nothing detected and the heap is consistent: only the
 *              neighbour's bytes changed (or bytes nobody reads)
 *   a          an assertion in the heap stopped the program (RTM_ASSERT's
 *              trap: SIGILL/SIGTRAP, or SIGABRT)
 *   X          the process died in the operation (SIGSEGV...); H: it hung
 * Each experiment runs in a child process, so a crash is an outcome.
 * Patterns: 0x00 (the classic: a string's terminating zero one too far) and
 * 0xA5 (arbitrary data).
 */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/recorder.h"
#include "rtmem.h"
#include "rtmem/lock.h"
#include "rtmem/shared.h"

#ifndef RTM_CORRUPTION_DEBUG
#error "tests/corruption/corruption.cmake sets RTM_CORRUPTION_DEBUG to 0 or 1"
#endif

#if defined(__SANITIZE_ADDRESS__)
#define OVERRUN_ATTR __attribute__((no_sanitize("address"), noinline))
/* A heap that crashes on a corrupt header must die of the signal, as in a
 * release build, not of ASan's report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "handle_segv=0:handle_sigbus=0"; }
#else
#define OVERRUN_ATTR __attribute__((noinline))
#endif

#define REGION_BYTES ((size_t)1 << 20)
#define BLOCKS       6
#define SIZE         40
#define MAX_LEN      8

static _Alignas(4096) unsigned char region[REGION_BYTES];

/* ---- the expected table (docs/CORRUPTION.md) ------------------------- */

enum { LIVE_00, LIVE_A5, FREE_00, FREE_A5, CELLS };
static const char *const cell_names[CELLS] = {"live, 0x00", "live, 0xA5", "free, 0x00",
                                              "free, 0xA5"};

typedef struct {
    const char *heap;
    const char *cells[2][CELLS]; /* [release, debug][scenario and pattern] */
} expectation;

/* Every heap rtm_algorithms() lists and the two guarded heaps over TLSF
 * (locked, shared) has its rows: a heap without them fails the test, so a
 * new algorithm is measured before it is registered. xvmalloc's block
 * header is 16-bit units, 16-bit left size, 32-bit tag (a live N: its sizes
 * damaged with the tag intact is a damaged header, h; the tag damaged, the
 * pointer is no block start, f); tlsf_cached puts its 8-byte check word
 * between TLSF's header and the caller's bytes, and a freed N waits in the
 * cache, handed back whole without its header being read (c: the next
 * allocations are silent, the check finds the damage). */
static const expectation expected[] = {
    {"tlsf",
     {{"hhhhhhhh", "ddhhhhhh", "cccccccc", "CCXXXXXX"},
      {"hhhhhhhh", "ddhhhhhh", "aaaaaaaa", "CCXXXXXX"}}},
    {"pool",
     {{"--------", "--------", "--------", "XcXXXXXX"},
      {"--------", "--------", "--------", "XcXXXXXX"}}},
    {"buddy",
     {{"--------", "--------", "-ccccccc", "cCXXXXXX"},
      {"--------", "--------", "-acccccc", "caXXXXXX"}}},
    {"halffit",
     {{"hhhhhhhh", "hhhhhhhh", "cccccccc", "cccccccc"},
      {"hhhhhhhh", "hhhhhhhh", "cccccccc", "cccccccc"}}},
    {"slab",
     {{"--------", "--------", "XXXCCCCC", "XXXXXXXX"},
      {"--------", "--------", "XXXCCCCC", "XXXXXXXX"}}},
    {"heapmem",
     {{"--------", "--------", "--------", "--------"},
      {"--------", "--------", "--------", "--------"}}},
    {"xvmalloc",
     {{"hhhhffff", "chhhffff", "cccccccc", "CCCCCCCC"},
      {"hhhhffff", "chhhffff", "cccccccc", "Caaaaaaa"}}},
    {"tlsf_cached",
     {{"hhhhhhhh", "dddddddd", "cccccccc", "cccccccc"},
      {"hhhhhhhh", "dddddddd", "cccccccc", "cccccccc"}}},
    {"locked:tlsf",
     {{"hhhhhhhh", "ddhhhhhh", "cccccccc", "CCXXXXXX"},
      {"hhhhhhhh", "ddhhhhhh", "aaaaaaaa", "CCXXXXXX"}}},
    {"shared",
     {{"hhhhhhhh", "ddhhhhhh", "cccccccc", "CCXXXXXX"},
      {"hhhhhhhh", "ddhhhhhh", "aaaaaaaa", "CCXXXXXX"}}},
};

/* The same on a big-endian target (measured on s390x under qemu-user).
 * The overrun's first bytes land on the high bytes of the 32-bit header
 * word there, not on the flags and low span bits: 1-3 zero bytes change
 * nothing in a span below 2^24, 0xA5 makes the span huge instead of setting
 * the FREE bit, and a free block's link is hit in its high bytes. */
static const expectation expected_be[] = {
    {"tlsf",
     {{"---hhhhh", "hhhhhhhh", "---ccccc", "XXXXXXXX"},
      {"---hhhhh", "hhhhhhhh", "---aaaaa", "XXXXXXXX"}}},
    {"pool",
     {{"--------", "--------", "--------", "XXXXXXXX"},
      {"--------", "--------", "--------", "XXXXXXXX"}}},
    {"buddy",
     {{"--------", "--------", "-----ccc", "XXXXXXXX"},
      {"--------", "--------", "-----acc", "XXXXXXXX"}}},
    {"halffit",
     {{"---hhhhh", "hhhhhhhh", "---ccccc", "cccccccc"},
      {"---hhhhh", "hhhhhhhh", "---ccccc", "cccccccc"}}},
    {"slab",
     {{"--------", "--------", "XCCCCCCC", "XXXXXXXX"},
      {"--------", "--------", "XCCCCCCC", "XXXXXXXX"}}},
    {"heapmem",
     {{"--------", "--------", "--------", "--------"},
      {"--------", "--------", "--------", "--------"}}},
    {"xvmalloc",
     {{"-hhhffff", "hhhhffff", "-ccccccc", "CCCCCCCC"},
      {"-hhhffff", "hhhhffff", "-ccccccc", "aaaaaaaa"}}},
    {"tlsf_cached",
     {{"---hhhhh", "hhhddddd", "---ccccc", "cccccccc"},
      {"---hhhhh", "hhhddddd", "---ccccc", "cccccccc"}}},
    {"locked:tlsf",
     {{"---hhhhh", "hhhhhhhh", "---ccccc", "XXXXXXXX"},
      {"---hhhhh", "hhhhhhhh", "---aaaaa", "XXXXXXXX"}}},
    {"shared",
     {{"---hhhhh", "hhhhhhhh", "---ccccc", "XXXXXXXX"},
      {"---hhhhh", "hhhhhhhh", "---aaaaa", "XXXXXXXX"}}},
};
_Static_assert(sizeof expected_be / sizeof expected_be[0] == sizeof expected / sizeof expected[0],
               "both byte orders list the same heaps");
#define TABLE_ROWS (sizeof expected / sizeof expected[0])

/* The table this target's byte order asserts. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define TARGET_BE 1
#else
#define TARGET_BE 0
#endif
static const expectation *table_of(int be) { return be ? expected_be : expected; }

/* Where a 32-bit target differs from its byte order's table (measured on
 * armhf under qemu-user; docs/CORRUPTION.md says it below the tables): the
 * shared heap's owner tag moves the free block's link by 4 bytes, so three
 * 0xA5 bytes spoil a span the check catches instead of a link the next
 * allocation follows. Both builds. Only where a 64-bit field after a 32-bit
 * one is padded to 8 (armhf): i386 aligns it to 4, and its -m32 run gives
 * the table unchanged. xvmalloc and tlsf_cached need no exception: what the
 * overrun reaches in them is fixed-width on every target (xvmalloc's
 * 8-byte header and 32-bit link indices, TLSF's 4-byte header and
 * tlsf_cached's 8-byte check word), and their rows were measured the same
 * on x86-64, i386, aarch64 and armhf. */
struct pad_probe {
    uint32_t a;
    uint64_t b;
};
#define PADS_64_TO_8 (offsetof(struct pad_probe, b) == 8u)
typedef struct {
    const char *heap;
    int cell;
    const char *outcome;
} exception_32;
static const exception_32 exceptions_32[] = {{"shared", 3, "CCcXXXXX"}};

/* The outcome this target expects for heap e, build debug, cell c. */
static const char *expected_cell(const expectation *e, int debug, int c)
{
    if (sizeof(void *) == 4 && !TARGET_BE && PADS_64_TO_8)
        for (size_t i = 0; i < sizeof exceptions_32 / sizeof exceptions_32[0]; i++)
            if (strcmp(exceptions_32[i].heap, e->heap) == 0 && exceptions_32[i].cell == c)
                return exceptions_32[i].outcome;
    return e->cells[debug][c];
}

/* ---- one experiment, in the child ------------------------------------ */

static rtm_heap *heap;
static char shm_name[64];

static rtm_heap *open_heap(const char *name)
{
    if (strcmp(name, "locked:tlsf") == 0)
        return rtm_locked_create("tlsf", region, REGION_BYTES);
    if (strcmp(name, "shared") == 0)
        return rtm_shared_create(shm_name, REGION_BYTES, "tlsf");
    return rtm_heap_create(name, region, REGION_BYTES);
}

typedef struct {
    void *ptr[BLOCKS * 4];
    int used[BLOCKS * 4];
    int n;
} layout;

static void record_block(void *ptr, size_t usable, int used, void *arg)
{
    layout *l = arg;
    (void)usable;
    if (l->n < BLOCKS * 4) {
        l->ptr[l->n] = ptr;
        l->used[l->n] = used;
        l->n++;
    }
}

static int ours(void *const *blocks, const void *p)
{
    for (int i = 0; i < BLOCKS; i++)
        if (blocks[i] == p)
            return 1;
    return 0;
}

/* A (returned) and N (*next): adjacent live blocks of ours; -1 if the heap
 * places none of them next to another. */
static int pick_pair(void *const *blocks, void **a, void **next)
{
    layout l = {.n = 0};
    if (rtm_heap_walk(heap, record_block, &l) != 0)
        return -1;
    for (int i = 0; i + 1 < l.n; i++) {
        if (ours(blocks, l.ptr[i]) && ours(blocks, l.ptr[i + 1])) {
            *a = l.ptr[i];
            *next = l.ptr[i + 1];
            return 0;
        }
    }
    return -1;
}

/* The bug. Uninstrumented under ASan (which would report it: that is
 * tests/tracking/'s business; here the heap's own detection is measured). */
static OVERRUN_ATTR void overrun(unsigned char *end, size_t len, unsigned char pattern)
{
    volatile unsigned char *p = end;
    for (size_t i = 0; i < len; i++)
        p[i] = pattern;
}

/* A block handed out by the corrupted heap is bad when it leaves the
 * heap's memory or overlaps a block that is still live. */
static int bad_block(const unsigned char *p, const unsigned char *lo, size_t bytes,
                     void *const *live, int nlive)
{
    if (p == NULL)
        return 0;
    if (p < lo || p + SIZE > lo + bytes)
        return 1;
    for (int i = 0; i < nlive; i++) {
        const unsigned char *q = live[i];
        if (q != NULL && p < q + SIZE && q < p + SIZE)
            return 1;
    }
    return 0;
}

static int handler_letter(void)
{
    const error_record *r = recorder();
    if (r->calls == 0)
        return 0;
    switch (r->last_kind) {
    case RTM_ERR_CORRUPT_HEADER:
        return 'h';
    case RTM_ERR_DOUBLE_FREE:
        return 'd';
    case RTM_ERR_FOREIGN_POINTER:
        return 'f';
    case RTM_ERR_CHECK_FAILED:
        return 'c';
    }
    return '?';
}

/* The next operation on the neighbour; returns 1 when it handed out a bad
 * block. */
static int next_operation(int freed, void **blocks, void *n, const unsigned char *lo)
{
    if (!freed) {
        rtm_free(heap, n);
        return 0;
    }
    void *live[BLOCKS + 2];
    int nlive = 0;
    for (int i = 0; i < BLOCKS; i++)
        if (blocks[i] != n)
            live[nlive++] = blocks[i];
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        void *p = rtm_alloc(heap, SIZE);
        bad |= bad_block(p, lo, REGION_BYTES, live, nlive);
        live[nlive++] = p;
    }
    return bad;
}

/* The child's whole life: one experiment, the outcome as exit status. */
static int experiment(const char *name, int freed, size_t len, unsigned char pattern)
{
    heap = open_heap(name);
    if (heap == NULL)
        return 'E';
    void *blocks[BLOCKS], *a = NULL, *n = NULL;
    for (int i = 0; i < BLOCKS; i++)
        if ((blocks[i] = rtm_alloc(heap, SIZE)) == NULL)
            return 'E';
    if (pick_pair(blocks, &a, &n) != 0)
        return 'P';
    if (freed)
        rtm_free(heap, n);
    overrun((unsigned char *)a + rtm_usable_size(heap, a), len, pattern);
    recorder_install();
    /* The heap's memory: the region, or the shared mapping (whose start
     * the lowest block bounds from above by less than a page). */
    const unsigned char *lo = region;
    if (shm_name[0] != '\0')
        lo = (const unsigned char *)((uintptr_t)heap & ~(uintptr_t)4095);
    int bad = next_operation(freed, blocks, n, lo);
    int at_op = handler_letter();
    if (at_op != 0)
        return at_op;
    int checked = rtm_heap_check(heap) != 0;
    if (bad)
        return checked ? 'C' : '!';
    return checked ? 'c' : '-';
}

/* RTM_ASSERT ends in __builtin_trap (SIGILL on x86-64, SIGTRAP on some
 * targets); abort() is SIGABRT. */
static int is_assertion(int sig) { return sig == SIGILL || sig == SIGTRAP || sig == SIGABRT; }

static char run_child(const char *name, int freed, size_t len, unsigned char pattern)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 'E';
    if (pid == 0) {
        /* No expected outcome hangs: the alarm only turns a real hang into
         * H. 60 s, not less: under qemu-user on a loaded machine a child
         * took over 10 s and read as H. */
        alarm(60);
        int rc = experiment(name, freed, len, pattern);
        if (shm_name[0] != '\0')
            (void)rtm_shared_unlink(shm_name);
        _exit(rc);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return 'E';
    if (shm_name[0] != '\0')
        (void)rtm_shared_unlink(shm_name); /* when the child died */
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return 'H';
    if (WIFSIGNALED(status))
        return is_assertion(WTERMSIG(status)) ? 'a' : 'X';
    return (char)WEXITSTATUS(status);
}

/* The 8 outcomes (LEN 1..8) of one heap, scenario and pattern. */
static void observe_cell(const char *name, int cell, char out[MAX_LEN + 1])
{
    int freed = cell >= FREE_00;
    unsigned char pattern = (cell == LIVE_00 || cell == FREE_00) ? 0x00 : 0xA5;
    snprintf(shm_name, sizeof shm_name, "%s", "");
    if (strcmp(name, "shared") == 0)
        snprintf(shm_name, sizeof shm_name, "/rtm-corruption-%ld", (long)getpid());
    for (size_t len = 1; len <= MAX_LEN; len++)
        out[len - 1] = run_child(name, freed, len, pattern);
    out[MAX_LEN] = '\0';
}

/* ---- the table -------------------------------------------------------- */

static const char *build_name(int debug) { return debug ? "debug" : "release"; }
static const char *order_name(int be) { return be ? ", big-endian" : ""; }

static void print_row(const expectation *e, int debug, int be)
{
    printf("| %s | %s%s |", e->heap, build_name(debug), order_name(be));
    for (int c = 0; c < CELLS; c++)
        printf(" `%s` |", e->cells[debug][c]);
    printf("\n");
}

static int print_table(void)
{
    printf("| heap | build | %s | %s | %s | %s |\n", cell_names[0], cell_names[1], cell_names[2],
           cell_names[3]);
    printf("|---|---|---|---|---|---|\n");
    for (int be = 0; be < 2; be++)
        for (size_t i = 0; i < TABLE_ROWS; i++)
            for (int debug = 0; debug < 2; debug++)
                print_row(&table_of(be)[i], debug, be);
    return 0;
}

/* Every row of the table must be a line of the doc. */
static int check_doc(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return 1;
    }
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = '\0';
    int fail = 0;
    char line[256];
    for (int be = 0; be < 2; be++) {
        for (size_t i = 0; i < TABLE_ROWS; i++) {
            for (int debug = 0; debug < 2; debug++) {
                const expectation *e = &table_of(be)[i];
                snprintf(line, sizeof line, "| %s | %s%s | `%s` | `%s` | `%s` | `%s` |\n", e->heap,
                         build_name(debug), order_name(be), e->cells[debug][0], e->cells[debug][1],
                         e->cells[debug][2], e->cells[debug][3]);
                if (strstr(doc, line) == NULL) {
                    printf("FAIL: %s lacks the row\n  %s", path, line);
                    fail = 1;
                }
            }
        }
    }
    if (!fail)
        printf("ok: %s holds the table of test_corruption\n", path);
    return fail;
}

static const expectation *expectation_of(const char *name)
{
    for (size_t i = 0; i < TABLE_ROWS; i++)
        if (strcmp(table_of(TARGET_BE)[i].heap, name) == 0)
            return &table_of(TARGET_BE)[i];
    return NULL;
}

/* Runs one heap's experiments; 1 when they differ from the table. */
static int run_heap(const char *name, int assert_table)
{
    const expectation *e = expectation_of(name);
    int fail = 0;
    printf("%-12s %-7s", name, build_name(RTM_CORRUPTION_DEBUG));
    char seen[CELLS][MAX_LEN + 1];
    for (int c = 0; c < CELLS; c++) {
        observe_cell(name, c, seen[c]);
        printf(" %s", seen[c]);
    }
    if (e == NULL) {
        /* Under --observe a heap still being written may have no rows. */
        printf("%s\n", assert_table ? "   FAIL: not in the table (measure it: --observe)"
                                    : "   (not in the table)");
        return assert_table;
    }
    for (int c = 0; c < CELLS; c++)
        if (strcmp(seen[c], expected_cell(e, RTM_CORRUPTION_DEBUG, c)) != 0)
            fail = assert_table;
    printf("%s\n", fail ? "   FAIL: the table says" : assert_table ? "   ok" : "");
    if (fail)
        print_row(e, RTM_CORRUPTION_DEBUG, TARGET_BE);
    return fail;
}

static int usage(void)
{
    fprintf(stderr, "usage: test_corruption [--observe | --table | --doc FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    int assert_table = 1;
    if (argc == 2 && strcmp(argv[1], "--table") == 0)
        return print_table();
    if (argc == 3 && strcmp(argv[1], "--doc") == 0)
        return check_doc(argv[2]);
    if (argc == 2 && strcmp(argv[1], "--observe") == 0)
        assert_table = 0;
    else if (argc != 1)
        return usage();
    printf("heap         build   outcomes for LEN 1..8: %s | %s | %s | %s\n", cell_names[0],
           cell_names[1], cell_names[2], cell_names[3]);
    int fail = 0;
    for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
        fail |= run_heap(*a, assert_table);
    fail |= run_heap("locked:tlsf", assert_table);
    fail |= run_heap("shared", assert_table);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        int found =
            strcmp(expected[i].heap, "locked:tlsf") == 0 || strcmp(expected[i].heap, "shared") == 0;
        for (const char *const *a = rtm_algorithms(); *a != NULL; a++)
            found |= strcmp(*a, expected[i].heap) == 0;
        if (!found) {
            printf("FAIL: the table has %s, which is no longer registered\n", expected[i].heap);
            fail = 1;
        }
    }
    return fail;
}
