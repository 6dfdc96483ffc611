// SPDX-License-Identifier: MIT
/*
 * tests/malloc/test_malloc_options.c -- the environment options of
 * docs/MALLOC.md ("Options"), each value in a fresh process: the program
 * re-executes itself (/proc/self/exe --child MODE ...) with exactly the
 * RTMEM_ variables of the case, its stderr in a pipe, and checks what the
 * documentation promises:
 *  - a bad RTMEM_ARENA or RTMEM_ARENA_THREADS (syntax, zero, sign, space,
 *    hex, fraction, unknown suffix, empty, overflow, double suffix, too
 *    small, larger than the machine's memory) prints one line naming the
 *    variable and the value, and every allocation then fails with ENOMEM;
 *    the process is not killed and exits normally;
 *  - a bad RTMEM_DECAY_MS or RTMEM_SHOW_STATS prints one line and the
 *    default stays in force; good values give no message and take effect;
 *  - RTMEM_SHOW_STATS=1 prints the statistics under a first line naming the
 *    program and the pid, to stderr or, with RTMEM_STATS_FILE (%p = pid),
 *    appended to that file -- also when the program closed its stderr --,
 *    and back to stderr with a message when the file cannot be opened.
 *
 * Built twice: over the rtm_malloc_ API (runs under every sanitizer), and
 * with OPTIONS_DROPIN over malloc itself linked from librtmem-malloc.a,
 * where the first allocation may come from libc, and where the exit
 * printout must be linked in although the program never names it.
 *
 * Outside sanitizer builds each child runs under RLIMIT_AS = 4 GiB, so
 * that an allocator that pre-faulted a huge arena would fail to map it
 * rather than bring the OOM killer onto a shared machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/check.h"
#include "rtmem/malloc.h"

#ifdef OPTIONS_DROPIN
#define ALLOC(n) malloc(n)
#define FREE(p)  free(p)
#else
#define ALLOC(n) rtm_malloc(n)
#define FREE(p)  rtm_malloc_free(p)
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

extern char **environ;

/* The text every refused real-time option ends with (docs/MALLOC.md). */
#define RT_REFUSED "; real-time mode not started, every allocation fails with ENOMEM\n"

/* --- the child ------------------------------------------------------------ */

/* Every allocation fails with ENOMEM, counted; the process goes on. */
static int child_fail(void)
{
    for (int i = 0; i < 3; i++) {
        errno = 0;
        void *volatile p = ALLOC(i == 2 ? (size_t)100000 : (size_t)100);
        CHECK(p == NULL);
        CHECK_ERRNO(ENOMEM);
        FREE(p);
    }
    rtm_malloc_stats_t st = rtm_malloc_stats();
    CHECK(st.failed_allocs >= 3u);
    CHECK_EQ(st.arena_bytes, 0);
    return check_summary();
}

/* Allocation works; the arena and the decay in force are as expected. */
static int child_works(size_t arena, long decay)
{
    char *volatile p = ALLOC(1000);
    REQUIRE(p != NULL);
    memset(p, 7, 1000);
    FREE(p);
    rtm_malloc_stats_t st = rtm_malloc_stats();
    if (arena == 0)
        CHECK_EQ(st.arena_bytes, 0);
    else
        CHECK_MSG(st.arena_bytes <= arena && st.arena_bytes + 8192u > arena, "arena %zu, want %zu",
                  st.arena_bytes, arena);
    CHECK_EQ(st.decay_ms, decay);
    CHECK_EQ(rtm_malloc_check(), 0);
    return check_summary();
}

/* A few allocations, so the statistics have something to show; with
 * "closed", stderr is closed before the first one. */
static int child_stats(int closed)
{
    if (closed)
        close(2);
    void *volatile keep[64];
    for (int i = 0; i < 64; i++)
        keep[i] = ALLOC((size_t)(i * 100 + 1));
    for (int i = 0; i < 64; i += 2)
        FREE(keep[i]);
    return 0;
}

/* rtm_malloc_arena() with more than the machine's memory: -1 with ENOMEM,
 * no message (the API reports through errno), nothing mapped, and every
 * allocation fails afterwards as documented. */
static int child_api_huge(size_t bytes)
{
    errno = 0;
    CHECK_EQ(rtm_malloc_arena(bytes, 4), -1);
    CHECK_ERRNO(ENOMEM);
    CHECK_EQ(rtm_malloc_stats().os_calls, 0); /* refused before any mmap */
    errno = 0;
    void *volatile p = rtm_malloc(100);
    CHECK(p == NULL);
    CHECK_ERRNO(ENOMEM);
    return check_summary();
}

static int child_main(int argc, char **argv)
{
    const char *mode = argv[2];
    if (strcmp(mode, "fail") == 0)
        return child_fail();
    if (strcmp(mode, "fail-closed") == 0) {
        close(2);
        return child_fail();
    }
    if (strcmp(mode, "works") == 0 && argc == 5)
        return child_works((size_t)strtoull(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
    if (strcmp(mode, "stats") == 0)
        return child_stats(argc > 3 && strcmp(argv[3], "closed") == 0);
    if (strcmp(mode, "api-huge") == 0 && argc == 4)
        return child_api_huge((size_t)strtoull(argv[3], NULL, 10));
    fprintf(stderr, "unknown child mode %s\n", mode);
    return 2;
}

/* --- the parent ---------------------------------------------------------------- */

static const char *self;      /* argv[0] */
static const char *self_name; /* its basename: the program name printed */
static char tmpdir[] = "/tmp/rtmem-options-XXXXXX";

typedef struct run {
    pid_t pid;
    int status;
    char err[65536]; /* the child's stderr */
} run;

static run R;

/* Runs `self --child args...` with the parent's environment minus every
 * RTMEM_ variable plus `vars` (NULL-terminated). */
static void run_child(const char *const *vars, const char *const *args)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        static char *envp[1024];
        static char *argv[8];
        size_t n = 0, a = 0;
        for (char **e = environ; *e != NULL && n < 1000; e++)
            if (strncmp(*e, "RTMEM_", 6) != 0)
                envp[n++] = *e;
        for (; *vars != NULL; vars++)
            envp[n++] = (char *)*vars;
        argv[a++] = (char *)self;
        argv[a++] = (char *)"--child";
        for (; *args != NULL && a < 7; args++)
            argv[a++] = (char *)*args;
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(fds[1], 2);
        close(fds[0]);
#ifndef SANITIZED
        struct rlimit rl = {(rlim_t)4 << 30, (rlim_t)4 << 30};
        if (sizeof(void *) == 8)
            (void)setrlimit(RLIMIT_AS, &rl);
#endif
        execve("/proc/self/exe", argv, envp);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    for (;;) {
        ssize_t r = read(fds[0], R.err + got, sizeof R.err - 1u - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    R.err[got] = '\0';
    close(fds[0]);
    R.pid = pid;
    REQUIRE(waitpid(pid, &R.status, 0) == pid);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* The child exited normally with status 0 (not killed: a SIGKILL from the
 * OOM killer or a crash fails here). */
static void expect_clean_exit(const char *what)
{
    CHECK_MSG(WIFEXITED(R.status) && WEXITSTATUS(R.status) == 0, "%s: child %s %d; its stderr:\n%s",
              what, WIFEXITED(R.status) ? "exited with" : "killed by signal",
              WIFEXITED(R.status) ? WEXITSTATUS(R.status) : WTERMSIG(R.status), R.err);
}

/* Exactly one message line, starting with `head` and containing `why`. */
static void expect_message(const char *what, const char *head, const char *why)
{
    CHECK_MSG(count(R.err, "rtmem-malloc: ") == 1, "%s: want one message, stderr:\n%s", what,
              R.err);
    const char *line = strstr(R.err, head);
    CHECK_MSG(line != NULL && strstr(line, why) != NULL && strchr(line, '\n') != NULL,
              "%s: want \"%s...%s\", stderr:\n%s", what, head, why, R.err);
}

static void expect_no_message(const char *what)
{
    CHECK_MSG(strstr(R.err, "rtmem-malloc") == NULL, "%s: want no message, stderr:\n%s", what,
              R.err);
}

/* The statistics' first line, "rtmem-malloc stats: <program> [pid N]", at
 * the start of `text`, followed by the figures. */
static int stats_head_ok(const char *text, pid_t pid)
{
    char head[512];
    snprintf(head, sizeof head, "rtmem-malloc stats: %s [pid %ld]\n", self_name, (long)pid);
    return strncmp(text, head, strlen(head)) == 0 && strstr(text, "\n  in use bytes: ") != NULL &&
           strstr(text, "\n  decay ms: ") != NULL;
}

static const char *const FAIL[] = {"fail", NULL};

/* A refused real-time option: one message, allocations fail, clean exit. */
static void arena_refused(const char *const *vars, const char *var, const char *value,
                          const char *why)
{
    char head[256], what[256];
    snprintf(head, sizeof head, "rtmem-malloc: %s=\"%s\": ", var, value);
    snprintf(what, sizeof what, "%s=\"%s\"", var, value);
    run_child(vars, FAIL);
    expect_clean_exit(what);
    expect_message(what, head, why);
    CHECK_MSG(strstr(R.err, RT_REFUSED) != NULL, "%s: want \"%s\", stderr:\n%s", what, RT_REFUSED,
              R.err);
}

static void test_arena_bad_values(void)
{
    static const struct {
        const char *value, *why;
    } cases[] = {
        {"abc", "not a size (expected <digits>[k|m|g], e.g. 256m)"},
        {"-5", "not a size"},
        {" 64m", "not a size"},
        {"64m ", "not a size"},
        {"+64m", "not a size"},
        {"0x4000000", "not a size"},
        {"1.5g", "not a size"},
        {"10t", "not a size"},
        {"", "not a size"},
        {"64mm", "not a size"},
        {"64 m", "not a size"},
        {"0", "too small (at least 1m)"},
        {"4k", "too small"},
        {"1048575", "too small"},
        {"99999999999999999999", "larger than "},
        {"100000g", "larger than "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char var[128];
        snprintf(var, sizeof var, "RTMEM_ARENA=%s", cases[i].value);
        const char *vars[] = {var, NULL};
        arena_refused(vars, "RTMEM_ARENA", cases[i].value, cases[i].why);
    }
    /* Closed stderr: the message goes nowhere, nothing breaks. */
    const char *vars[] = {"RTMEM_ARENA=abc", NULL};
    const char *const args[] = {"fail-closed", NULL};
    run_child(vars, args);
    expect_clean_exit("RTMEM_ARENA=abc, stderr closed");
}

/* Just above the machine's memory (the documented limit) and far above:
 * refused with a message, before anything is pre-faulted. */
static void test_arena_larger_than_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    REQUIRE(pages > 0 && psize > 0);
    uint64_t phys_mib = (uint64_t)pages * (uint64_t)psize >> 20;
    char value[64], var[96];
    snprintf(value, sizeof value, "%llum", (unsigned long long)phys_mib + 1u);
    snprintf(var, sizeof var, "RTMEM_ARENA=%s", value);
    const char *vars[] = {var, NULL};
    arena_refused(vars, "RTMEM_ARENA", value, "larger than ");
    const char *vars2[] = {"RTMEM_ARENA=100000g", NULL};
    arena_refused(vars2, "RTMEM_ARENA", "100000g", "larger than ");
    CHECK_MSG(strstr(R.err, " MiB)") != NULL, "the limit is named: %s", R.err);

#ifndef OPTIONS_DROPIN
    if (sizeof(size_t) == 8) {
        char bytes[32];
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long)(phys_mib + 1024u) << 20);
        const char *none[] = {NULL};
        const char *const args[] = {"api-huge", bytes, NULL};
        run_child(none, args);
        expect_clean_exit("rtm_malloc_arena(physical memory + 1 GiB)");
        expect_no_message("rtm_malloc_arena(physical memory + 1 GiB)");
    }
#endif
}

static void test_arena_threads_bad_values(void)
{
    static const char *const values[] = {
        "abc", "0", "-1", "4x", "", " 2", "2 ", "0x10", "65537", "99999999999999999999",
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char var[128];
        snprintf(var, sizeof var, "RTMEM_ARENA_THREADS=%s", values[i]);
        const char *vars[] = {"RTMEM_ARENA=8m", var, NULL};
        arena_refused(vars, "RTMEM_ARENA_THREADS", values[i],
                      "not a thread count (expected 1 to 65536)");
    }
}

static void test_arena_good_values(void)
{
    static const struct {
        const char *arena, *threads, *bytes;
    } cases[] = {
        {"RTMEM_ARENA=8m", NULL, "8388608"},
        {"RTMEM_ARENA=8M", NULL, "8388608"},
        {"RTMEM_ARENA=8192k", "RTMEM_ARENA_THREADS=2", "8388608"},
        {"RTMEM_ARENA=08388608", "RTMEM_ARENA_THREADS=064", "8388608"},
        {"RTMEM_ARENA=1m", "RTMEM_ARENA_THREADS=1", "1048576"},
        /* RTMEM_ARENA_THREADS is read only with RTMEM_ARENA. */
        {"RTMEM_DECAY_MS=1000", "RTMEM_ARENA_THREADS=abc", "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *vars[] = {cases[i].arena, cases[i].threads, NULL};
        const char *const args[] = {"works", cases[i].bytes, "1000", NULL};
        run_child(vars, args);
        expect_clean_exit(cases[i].arena);
        expect_no_message(cases[i].arena);
    }
}

static void test_decay_values(void)
{
    static const char *const bad[] = {
        "abc", "-5", "-",   "1.5", "10s",  "",           " 5",
        "5 ",  "+5", "-1x", "--1", "0x10", "2147483648", "99999999999999999999",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char var[128], head[128];
        snprintf(var, sizeof var, "RTMEM_DECAY_MS=%s", bad[i]);
        snprintf(head, sizeof head, "rtmem-malloc: RTMEM_DECAY_MS=\"%s\": ", bad[i]);
        const char *vars[] = {var, NULL};
        const char *const args[] = {"works", "0", "1000", NULL};
        run_child(vars, args);
        expect_clean_exit(var);
        expect_message(var, head,
                       "not a time (expected milliseconds, 0 to 2147483647, or -1 "
                       "for never); using the default, 1000\n");
    }
    static const char *const good[][2] = {
        {"RTMEM_DECAY_MS=-1", "-1"},
        {"RTMEM_DECAY_MS=0", "0"},
        {"RTMEM_DECAY_MS=250", "250"},
        {"RTMEM_DECAY_MS=2147483647", "2147483647"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *vars[] = {good[i][0], NULL};
        const char *const args[] = {"works", "0", good[i][1], NULL};
        run_child(vars, args);
        expect_clean_exit(good[i][0]);
        expect_no_message(good[i][0]);
    }
}

static const char *const STATS[] = {"stats", NULL};

static void test_show_stats_values(void)
{
    static const char *const bad[] = {"yes", "2", "", " 1", "1 ", "10", "true"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char var[128], head[128];
        snprintf(var, sizeof var, "RTMEM_SHOW_STATS=%s", bad[i]);
        snprintf(head, sizeof head, "rtmem-malloc: RTMEM_SHOW_STATS=\"%s\": ", bad[i]);
        const char *vars[] = {var, NULL};
        run_child(vars, STATS);
        expect_clean_exit(var);
        expect_message(var, head, "expected 0 or 1; statistics not shown\n");
        CHECK_MSG(strstr(R.err, "rtmem-malloc stats") == NULL, "%s: stats shown:\n%s", var, R.err);
    }
    const char *off[] = {"RTMEM_SHOW_STATS=0", NULL};
    run_child(off, STATS);
    expect_clean_exit("RTMEM_SHOW_STATS=0");
    expect_no_message("RTMEM_SHOW_STATS=0");

    /* To stderr, program and pid first. */
    const char *on[] = {"RTMEM_SHOW_STATS=1", NULL};
    run_child(on, STATS);
    expect_clean_exit("RTMEM_SHOW_STATS=1");
    CHECK_MSG(stats_head_ok(R.err, R.pid), "RTMEM_SHOW_STATS=1: stderr:\n%s", R.err);
}

/* The whole content of a file (at most 64 KiB), or "" when it is absent. */
static const char *slurp(const char *path)
{
    static char buf[65536];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return buf;
    size_t n = fread(buf, 1, sizeof buf - 1u, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_stats_file(void)
{
    char var[256], path[256];

    /* %p, and stderr closed by the program before its first allocation. */
    snprintf(var, sizeof var, "RTMEM_STATS_FILE=%s/stats-%%p.txt", tmpdir);
    const char *vars[] = {"RTMEM_SHOW_STATS=1", var, NULL};
    const char *const closed[] = {"stats", "closed", NULL};
    run_child(vars, closed);
    expect_clean_exit(var);
    snprintf(path, sizeof path, "%s/stats-%ld.txt", tmpdir, (long)R.pid);
    CHECK_MSG(stats_head_ok(slurp(path), R.pid), "%s holds:\n%s", path, slurp(path));
    CHECK_MSG(R.err[0] == '\0', "stderr was closed, yet: %s", R.err);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777u & ~0644u) == 0);
    unlink(path);

    /* Appended, not truncated; %% is a percent sign; nothing on stderr. */
    snprintf(path, sizeof path, "%s/stats-100%%.txt", tmpdir);
    FILE *f = fopen(path, "w");
    REQUIRE(f != NULL);
    fputs("previous run\n", f);
    fclose(f);
    snprintf(var, sizeof var, "RTMEM_STATS_FILE=%s/stats-100%%%%.txt", tmpdir);
    run_child(vars, STATS);
    expect_clean_exit(var);
    const char *text = slurp(path);
    CHECK_MSG(strncmp(text, "previous run\n", 13) == 0 && stats_head_ok(text + 13, R.pid),
              "%s holds:\n%s", path, text);
    CHECK_MSG(R.err[0] == '\0', "%s: stderr: %s", var, R.err);
    unlink(path);

    /* Cannot be opened: a message, then the statistics on stderr. */
    snprintf(var, sizeof var, "RTMEM_STATS_FILE=%s/missing/stats.txt", tmpdir);
    run_child(vars, STATS);
    expect_clean_exit(var);
    char head[300];
    snprintf(head, sizeof head,
             "rtmem-malloc: RTMEM_STATS_FILE=\"%s/missing/stats.txt\": ", tmpdir);
    expect_message(var, head,
                   "cannot open it (No such file or directory); the statistics follow on stderr\n");
    const char *stats = strstr(R.err, "rtmem-malloc stats: ");
    CHECK_MSG(stats != NULL && stats_head_ok(stats, R.pid), "%s: stderr:\n%s", var, R.err);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--child") == 0)
        return child_main(argc, argv);
    self = argv[0];
    self_name = strrchr(self, '/') ? strrchr(self, '/') + 1 : self;
    REQUIRE(mkdtemp(tmpdir) != NULL);
    RUN_TEST(test_arena_bad_values);
    RUN_TEST(test_arena_larger_than_memory);
    RUN_TEST(test_arena_threads_bad_values);
    RUN_TEST(test_arena_good_values);
    RUN_TEST(test_decay_values);
    RUN_TEST(test_show_stats_values);
    RUN_TEST(test_stats_file);
    rmdir(tmpdir);
    return check_summary();
}
