// SPDX-License-Identifier: MIT
/*
 * record_process.c -- the process side of librtmem-record.so: which trace
 * file a process writes, how an exec hands that trace on to the next image
 * of the same process, and the index that names every trace of a recording
 * (record.c has the calls; record_internal.h the interface between them).
 *
 * The files of one recording, FILE being $RTMEM_RECORD_FILE (absolute when
 * rtmem record sets it):
 *
 *   FILE                  the launched process, through all of its execs
 *   FILE.<pid>.<program>  each other process (started by fork + exec, or
 *                         by posix_spawn, system, popen), through all of
 *                         its execs; <program> is the basename of the image
 *                         that ran last (FILE.<pid>.<program>.<k> when a
 *                         dead process with the same pid left that name)
 *   FILE.index            one line per event: EVENT PID PPID TRACE PROGRAM
 *                         (docs/TRACE.md lists the events)
 *
 * Who is who. The launched process is the first to create FILE (O_EXCL);
 * a later process that finds FILE taken is a child. An exec replaces the
 * image, not the process (chrt, taskset, nice, env, `exec` in a shell
 * script, interpreter shims all do it), so the trace must go on: the
 * wrapper around every exec function has record.c write the image's
 * buffers and freeze its counters (rec_exec_begin), and passes the trace's
 * path and counters to the next image in the environment given to the
 * exec: RTMEM_RECORD_EXEC=<pid>:<seq>:<id>:<thread>:<path>. The next
 * image's recorder takes the variable out of its environment (no
 * descendant ever sees it) and, when the pid is its own, appends to that
 * trace: same header (its program field updated), sequence numbers and
 * block ids going on from the replaced image's.
 *
 * Why the environment, not the file system alone: pids are reused, so "a
 * trace of my pid exists" cannot tell the next image of a process from a
 * new process that got a dead one's pid; and the counters would otherwise
 * have to be read back from the end of a file another thread may still
 * have been writing.
 *
 * Options, from rtmem record: RTMEM_RECORD_FINAL=1, an exec starts the
 * process's trace afresh (it keeps only the last image's calls);
 * RTMEM_RECORD_CHILDREN=0, children are not recorded.
 *
 * Like record.c, nothing here calls malloc: paths live in static buffers,
 * numbers are formatted by hand, the environment for an exec is mmap-ed.
 * An exec wrapper may run in a child between fork and exec, where only
 * async-signal-safe functions may be called: on that path it uses only
 * getpid, open, write, close, mmap, munmap and its own string code.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h> /* rename */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "record_internal.h"
#include "trace/trace_format.h"

#define EXPORT        __attribute__((visibility("default")))
#define EXEC_VAR      "RTMEM_RECORD_EXEC"
#define PATH_BYTES    4096u
#define MAX_SUFFIX    100u /* FILE.<pid>.<program>.<k>: k < 100 */
#define INDEX_HEADING "# rtmem record index: EVENT PID PPID TRACE PROGRAM-OR-PATH (docs/TRACE.md)\n"

extern char **environ;

static char base[PATH_BYTES]; /* FILE; "" when the recorder is not asked for   */
static char mine[PATH_BYTES]; /* the trace this process writes ("": none)      */
static char lib_name[256];    /* this library's file name, as in LD_PRELOAD    */
static int final_only;        /* RTMEM_RECORD_FINAL=1                          */
static int no_children;       /* RTMEM_RECORD_CHILDREN=0                       */

/* --- text without malloc ---------------------------------------------------- */

/* A bounded string being built; full is set when something did not fit. */
typedef struct text {
    char *p;
    size_t cap, len;
    int full;
} text;

static text text_at(char *p, size_t cap)
{
    text t = {p, cap, 0, 0};
    p[0] = '\0';
    return t;
}

static void put_c(text *t, char c)
{
    if (t->len + 1 >= t->cap) {
        t->full = 1;
        return;
    }
    t->p[t->len++] = c;
    t->p[t->len] = '\0';
}

static void put(text *t, const char *s)
{
    while (*s != '\0')
        put_c(t, *s++);
}

static void put_u(text *t, uint64_t v)
{
    char d[24];
    size_t k = 0;
    do
        d[k++] = (char)('0' + v % 10u);
    while ((v /= 10u) != 0);
    while (k > 0)
        put_c(t, d[--k]);
}

/* A file-name part: what is not a letter, digit, '.', '_', '+' or '-' is
 * '_', so that a program name never makes a path or a shell word odd. */
static void put_name(text *t, const char *s)
{
    if (*s == '\0')
        put(t, "unknown");
    for (; *s != '\0'; s++) {
        int ok = (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                 *s == '.' || *s == '_' || *s == '+' || *s == '-';
        put_c(t, ok ? *s : '_');
    }
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

static int write_full(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* --- the index -------------------------------------------------------------- */

/* Appends "EVENT PID PPID TRACE WHAT" to FILE.index. One write of a line
 * with O_APPEND: lines of processes writing at once do not mix. WHAT (a
 * program or a path) comes last, so that a space in it cannot shift a
 * field; a newline in it becomes '?'. */
static void index_line(const char *event, const char *trace, const char *what)
{
    char path[PATH_BYTES + 8], line[PATH_BYTES + 256];
    text p = text_at(path, sizeof path), t = text_at(line, sizeof line);
    put(&p, base);
    put(&p, ".index");
    put(&t, event);
    put_c(&t, ' ');
    put_u(&t, (uint64_t)getpid());
    put_c(&t, ' ');
    put_u(&t, (uint64_t)getppid());
    put_c(&t, ' ');
    put(&t, trace);
    put_c(&t, ' ');
    for (; *what != '\0'; what++)
        put_c(&t, *what == '\n' ? '?' : *what);
    if (p.full || t.full || base[0] == '\0')
        return;
    put_c(&t, '\n');
    /* The process that creates the index (the launched one, before it has
     * children) writes the heading with its line, in the same write. */
    char first[sizeof INDEX_HEADING + sizeof line];
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
        memcpy(first, INDEX_HEADING, sizeof INDEX_HEADING - 1);
        memcpy(first + sizeof INDEX_HEADING - 1, line, t.len);
        (void)write_full(fd, first, sizeof INDEX_HEADING - 1 + t.len);
    } else if ((fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) >= 0) {
        (void)write_full(fd, line, t.len);
    } else {
        return;
    }
    close(fd);
}

static const char *my_trace(void) { return mine[0] != '\0' ? basename_of(mine) : "-"; }

/* --- opening the trace ------------------------------------------------------ */

/* The basename of the running executable, NUL-padded to n bytes. */
static void program_name(char *dst, size_t n)
{
    char path[PATH_BYTES];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    memset(dst, 0, n);
    if (len <= 0)
        return;
    path[len] = '\0';
    const char *b = basename_of(path);
    size_t k = strlen(b);
    memcpy(dst, b, k < n - 1 ? k : n - 1);
}

static int write_header(int fd, const char *prog, uint64_t start_ns)
{
    trace_header h = trace_header_make((uint32_t)getpid(), start_ns, prog);
    return write_full(fd, &h, sizeof h);
}

/* FILE.<pid>.<program>, and .<k> after it for k > 1. */
static int child_path(char *dst, size_t n, const char *prog, unsigned k)
{
    text t = text_at(dst, n);
    put(&t, base);
    put_c(&t, '.');
    put_u(&t, (uint64_t)getpid());
    put_c(&t, '.');
    put_name(&t, prog);
    if (k > 1) {
        put_c(&t, '.');
        put_u(&t, k);
    }
    return t.full ? -1 : 0;
}

/* A child's own trace, under the first free name. */
static int open_child(const char *prog)
{
    for (unsigned k = 1; k < MAX_SUFFIX; k++) {
        if (child_path(mine, sizeof mine, prog, k) != 0)
            break;
        int fd = open(mine, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    mine[0] = '\0';
    return -1;
}

/* After an exec, a child's trace takes the name of the program now
 * running. No other live process has this pid, so a name that is free
 * now stays free until the rename. */
static void rename_child(const char *prog)
{
    char to[PATH_BYTES];
    for (unsigned k = 1; k < MAX_SUFFIX; k++) {
        if (child_path(to, sizeof to, prog, k) != 0 || strcmp(to, mine) == 0)
            return;
        if (access(to, F_OK) != 0 && errno == ENOENT) {
            if (rename(mine, to) == 0)
                memcpy(mine, to, strlen(to) + 1);
            return;
        }
    }
}

/* "123:" -> 123; -1 unless digits end at ':'. */
static int take_number(const char **s, uint64_t *v)
{
    const char *p = *s;
    uint64_t x = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (UINT64_MAX - 9u) / 10u)
            return -1;
        x = x * 10u + (uint64_t)(*p - '0');
    }
    if (*p != ':')
        return -1;
    *s = p + 1;
    *v = x;
    return 0;
}

/* Takes RTMEM_RECORD_EXEC out of the environment. Returns 1 (path and
 * counters filled) when it was written by this very process, before its
 * exec: then this image goes on with that trace. */
static int take_exec_var(rec_counters *c, char *path, size_t n)
{
    const char *v = getenv(EXEC_VAR);
    if (v == NULL)
        return 0;
    uint64_t pid, seq, id, thread;
    int ok = take_number(&v, &pid) == 0 && take_number(&v, &seq) == 0 &&
             take_number(&v, &id) == 0 && take_number(&v, &thread) == 0 && id <= UINT32_MAX &&
             thread <= UINT32_MAX && v[0] != '\0' && strlen(v) < n && pid == (uint64_t)getpid();
    if (ok) {
        memcpy(path, v, strlen(v) + 1);
        c->seq = seq;
        c->id = (uint32_t)id;
        c->thread = (uint32_t)thread;
    }
    unsetenv(EXEC_VAR);
    return ok;
}

/* The next image of a process that was recording: append to its trace
 * (or, with RTMEM_RECORD_FINAL, start it again). The header must be this
 * process's, or the variable is not believed. */
static int continue_trace(const char *path, const rec_counters *from, const char *prog,
                          rec_counters *c)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    trace_header h;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h.magic, TRACE_MAGIC, 8) != 0 ||
        h.pid != (uint32_t)getpid()) {
        close(fd);
        return -1;
    }
    int bad;
    if (final_only) {
        c->start_ns = rec_now_ns(); /* and the counters of a fresh trace */
        bad = ftruncate(fd, 0) != 0 || write_header(fd, prog, c->start_ns) != 0;
    } else {
        *c = *from;
        c->start_ns = h.start_ns;
        bad = pwrite(fd, prog, sizeof h.program, offsetof(trace_header, program)) !=
                  (ssize_t)sizeof h.program ||
              lseek(fd, 0, SEEK_END) < 0;
    }
    if (bad) {
        close(fd);
        return -1;
    }
    memcpy(mine, path, strlen(path) + 1);
    if (strcmp(mine, base) != 0)
        rename_child(prog);
    index_line("exec", my_trace(), prog);
    return fd;
}

/* Where this library was loaded from: its name is what an LD_PRELOAD that
 * still loads it contains. dladdr of one of its own variables. */
static void find_lib_name(void)
{
    Dl_info info;
    if (dladdr(&base, &info) != 0 && info.dli_fname != NULL) {
        const char *b = basename_of(info.dli_fname);
        if (strlen(b) < sizeof lib_name)
            memcpy(lib_name, b, strlen(b) + 1);
    }
}

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, value) == 0;
}

int rec_open_output(rec_counters *c)
{
    const char *file = getenv("RTMEM_RECORD_FILE");
    if (file == NULL || file[0] == '\0' || strlen(file) + 32 > sizeof base)
        return -1;
    memcpy(base, file, strlen(file) + 1);
    final_only = env_is("RTMEM_RECORD_FINAL", "1");
    no_children = env_is("RTMEM_RECORD_CHILDREN", "0");
    find_lib_name();
    char prog[sizeof((trace_header *)0)->program];
    program_name(prog, sizeof prog);
    char path[PATH_BYTES];
    rec_counters from;
    if (take_exec_var(&from, path, sizeof path)) {
        int fd = continue_trace(path, &from, prog, c);
        if (fd >= 0)
            return fd;
    }
    c->start_ns = rec_now_ns();
    int fd = open(base, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0)
        memcpy(mine, base, strlen(base) + 1);
    else if (errno == EEXIST && !no_children)
        fd = open_child(prog);
    if (fd < 0)
        return -1;
    if (write_header(fd, prog, c->start_ns) != 0) {
        close(fd);
        return -1;
    }
    index_line("start", my_trace(), prog);
    return fd;
}

/* --- exec ------------------------------------------------------------------- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static struct {
    execve_fn execve, execvpe;
    fexecve_fn fexecve;
    execveat_fn execveat;
} real_exec;

void rec_resolve_exec(void)
{
    LOAD(real_exec.execve, "execve");
    LOAD(real_exec.execvpe, "execvpe");
    LOAD(real_exec.fexecve, "fexecve");
    LOAD(real_exec.execveat, "execveat"); /* NULL before glibc 2.34 */
}

static const char *env_value(char *const *envp, const char *name)
{
    size_t k = strlen(name);
    for (; envp != NULL && *envp != NULL; envp++)
        if (strncmp(*envp, name, k) == 0 && (*envp)[k] == '=')
            return *envp + k + 1;
    return NULL;
}

/* Whether a program started with envp loads this recorder into the same
 * recording. `env -i`, a sandbox, a shim that rebuilds the environment
 * remove it; the index then says so (rtmem record prints why nothing or
 * little was recorded instead of leaving the user to guess). */
static int keeps_recorder(char *const *envp)
{
    const char *file = env_value(envp, "RTMEM_RECORD_FILE");
    const char *preload = env_value(envp, "LD_PRELOAD");
    return file != NULL && strcmp(file, base) == 0 && preload != NULL && lib_name[0] != '\0' &&
           strstr(preload, lib_name) != NULL;
}

/* One exec in progress. */
typedef struct exec_ctx {
    const char *what;  /* the path or file name given to exec     */
    int mine;          /* this process records: rec_exec_end owed */
    int noted;         /* the index has a line for it             */
    const char *trace; /* the index's TRACE field: "-" if not mine */
    void *map;         /* the environment built for the exec      */
    size_t map_len;
} exec_ctx;

/* envp without any RTMEM_RECORD_EXEC, plus this process's. On failure
 * (no memory) envp as it is: the next image then records as a child. */
static char *const *with_exec_var(char *const *envp, const rec_counters *c, exec_ctx *x)
{
    size_t n = 0;
    while (envp != NULL && envp[n] != NULL)
        n++;
    size_t var_len = sizeof EXEC_VAR + 4u * 24u + strlen(mine) + 1u;
    size_t len = (n + 2u) * sizeof(char *) + var_len;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return envp;
    char **out = m;
    text t = text_at((char *)(out + n + 2u), var_len);
    put(&t, EXEC_VAR "=");
    put_u(&t, (uint64_t)getpid());
    put_c(&t, ':');
    put_u(&t, c->seq);
    put_c(&t, ':');
    put_u(&t, c->id);
    put_c(&t, ':');
    put_u(&t, c->thread);
    put_c(&t, ':');
    put(&t, mine);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], EXEC_VAR "=", sizeof EXEC_VAR) != 0)
            out[k++] = envp[i];
    out[k++] = t.p;
    out[k] = NULL;
    x->map = m;
    x->map_len = len;
    return out;
}

/* Before the real exec: the replaced image's records are written, and the
 * environment carries the trace on (or the index says why it cannot). */
static char *const *exec_prepare(exec_ctx *x, const char *what, char *const *envp, int is_path)
{
    memset(x, 0, sizeof *x);
    x->what = what != NULL ? what : "?";
    rec_counters c;
    x->mine = rec_exec_begin(&c);
    if (base[0] == '\0')
        return envp;
    int kept = keeps_recorder(envp);
    /* Logged: this process's exec, and a forked child's when the program
     * would be recorded as a child (its start line then follows; a static
     * program's never does). A shell searching PATH tries execve in every
     * folder: only a file that can run is worth a line. */
    x->trace = x->mine ? my_trace() : "-";
    x->noted = (x->mine || (!no_children && keeps_recorder(environ))) &&
               (!is_path || access(x->what, X_OK) == 0);
    if (x->noted)
        index_line(kept ? "exec-call" : "exec-unrecorded", x->trace, x->what);
    return x->mine && kept ? with_exec_var(envp, &c, x) : envp;
}

/* The exec returned: it failed, and this image goes on (recording). */
static int exec_failed(exec_ctx *x)
{
    int e = errno;
    if (x->noted)
        index_line("exec-failed", x->trace, x->what);
    if (x->mine)
        rec_exec_end();
    if (x->map != NULL)
        munmap(x->map, x->map_len);
    errno = e;
    return -1;
}

static int run_execve(const char *path, char *const argv[], char *const envp[])
{
    exec_ctx x;
    char *const *e = exec_prepare(&x, path, envp, 1);
    if (real_exec.execve != NULL)
        real_exec.execve(path, argv, e);
    else
        errno = ENOSYS;
    return exec_failed(&x);
}

static int run_execvpe(const char *file, char *const argv[], char *const envp[])
{
    exec_ctx x;
    char *const *e = exec_prepare(&x, file, envp, 0);
    if (real_exec.execvpe != NULL)
        real_exec.execvpe(file, argv, e);
    else
        errno = ENOSYS;
    return exec_failed(&x);
}

/* glibc's execv, execvp and the execl family call its internal execve, not
 * the exported one: each is wrapped here, and all go through the two
 * above. */
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    return run_execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[]) { return run_execve(path, argv, environ); }

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return run_execvpe(file, argv, envp);
}

EXPORT int execvp(const char *file, char *const argv[]) { return run_execvpe(file, argv, environ); }

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    exec_ctx x;
    char *const *e = exec_prepare(&x, argv[0], envp, 0); /* argv: nonnull in <unistd.h> */
    if (real_exec.fexecve != NULL)
        real_exec.fexecve(fd, argv, e);
    else
        errno = ENOSYS;
    return exec_failed(&x);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);
EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    exec_ctx x;
    char *const *e = exec_prepare(&x, path, envp, 0);
    if (real_exec.execveat != NULL)
        real_exec.execveat(dirfd, path, argv, e, flags);
    else
        errno = ENOSYS;
    return exec_failed(&x);
}

/* The list forms: the arguments up to the NULL into an array on the stack
 * (as glibc does), then the vector forms above. */
#define ARGS_TO_ARGV(first, ap, argv)                                                              \
    size_t argc_ = 1;                                                                              \
    va_start(ap, first);                                                                           \
    while (va_arg(ap, char *) != NULL)                                                             \
        argc_++;                                                                                   \
    va_end(ap);                                                                                    \
    char *argv[argc_ + 1u];                                                                        \
    argv[0] = (char *)first;                                                                       \
    va_start(ap, first);                                                                           \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                                         \
    argv[i_] = va_arg(ap, char *)

EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGS_TO_ARGV(arg, ap, argv);
    va_end(ap);
    return run_execve(path, argv, environ);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    ARGS_TO_ARGV(arg, ap, argv);
    va_end(ap);
    return run_execvpe(file, argv, environ);
}

/* execle: the environment follows the NULL that ends the arguments. */
EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    ARGS_TO_ARGV(arg, ap, argv);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return run_execve(path, argv, envp);
}
