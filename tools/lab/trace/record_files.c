// SPDX-License-Identifier: MIT
/*
 * record_files.c -- the files of one `rtmem record` run (record_files.h):
 * clearing what an earlier run left, and reading FILE.index back into the
 * closing summary.
 *
 * The index is the recorder's log, one line per event, written with
 * O_APPEND by every recorded process (tools/record/record_process.c):
 *
 *   start           PID PPID TRACE PROGRAM  a process began TRACE
 *   exec-call       PID PPID TRACE PATH     it is about to exec PATH
 *   exec            PID PPID TRACE PROGRAM  the next image goes on in TRACE
 *                                           (a child's TRACE renamed after it)
 *   exec-failed     PID PPID TRACE PATH     the exec returned
 *   exec-unrecorded PID PPID TRACE PATH     it execs PATH with an environment
 *                                           that no longer loads the recorder
 *
 * TRACE is "-" on the exec lines of a forked child that does not record
 * itself: its program, once started, writes a start line of the same pid,
 * unless it never loaded the recorder.
 *
 * Only this run's lines are there (the file is removed before the program
 * runs; the recorder creates it), so only this run's children are counted, whatever an
 * earlier run left beside FILE; those earlier child traces are removed
 * first anyway, so that a folder never mixes two runs.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/record_files.h"
#include "trace/trace_format.h"

#define SHOWN_CHILDREN 4u /* named one per line; the rest counted */
#define SHOWN_NOTES    4u

/* --- clearing -------------------------------------------------------------- */

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* The folder of path ("." when it has none). */
static void folder_of(const char *path, char *dir, size_t n)
{
    const char *b = base_of(path);
    if (b == path)
        snprintf(dir, n, ".");
    else if (b == path + 1)
        snprintf(dir, n, "/");
    else
        snprintf(dir, n, "%.*s", (int)(b - path - 1), path);
}

/* FILE.<digits> (an older recorder's name) or FILE.<digits>.<anything>. */
static int child_name(const char *name, const char *base)
{
    size_t bl = strlen(base);
    if (strncmp(name, base, bl) != 0 || name[bl] != '.')
        return 0;
    const char *p = name + bl + 1;
    size_t d = strspn(p, "0123456789");
    return d > 0 && (p[d] == '\0' || (p[d] == '.' && p[d + 1] != '\0'));
}

static int is_trace(const char *path)
{
    char magic[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int yes = read(fd, magic, sizeof magic) == (ssize_t)sizeof magic &&
              memcmp(magic, TRACE_MAGIC, sizeof magic) == 0;
    close(fd);
    return yes;
}

static int unlink_quiet(const char *path) { return unlink(path) == 0 || errno == ENOENT ? 0 : -1; }

int record_files_clear(const char *file, char *bad, size_t n)
{
    char dir[PATH_MAX], path[PATH_MAX + 300];
    const char *base = base_of(file);
    folder_of(file, dir, sizeof dir);
    snprintf(path, sizeof path, "%s.index", file);
    const char *const gone[] = {file, path};
    for (size_t i = 0; i < 2; i++)
        if (unlink_quiet(gone[i]) != 0) {
            snprintf(bad, n, "%s", gone[i]);
            return -1;
        }
    DIR *d = opendir(dir);
    if (d == NULL) {
        snprintf(bad, n, "%s", dir);
        return -1;
    }
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (!child_name(e->d_name, base))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (is_trace(path) && unlink_quiet(path) != 0) {
            snprintf(bad, n, "%s", path);
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

/* --- the summary ----------------------------------------------------------- */

enum { PEND_NONE, PEND_CALL, PEND_UNRECORDED };

/* One recorded process: its trace and the programs it ran. */
typedef struct proc {
    long pid, ppid;
    char trace[NAME_MAX + 1];
    char first[64], last[64]; /* the first and the last image's program */
    unsigned execs;
    int pending; /* an exec announced, not yet taken up or failed */
    char pending_what[PATH_MAX];
} proc;

/* An exec by a forked child that does not record itself ("-" lines): the
 * program would be a child of its own, and its start line must follow. */
typedef struct loose {
    long pid;
    int pending;
    char what[PATH_MAX];
} loose;

typedef struct summary {
    proc *procs;
    size_t n, cap;
    loose *loose;
    size_t nloose, loose_cap;
    char notes[SHOWN_NOTES][PATH_MAX + 300];
    size_t nnotes; /* all of them; the first SHOWN_NOTES kept */
} summary;

static proc *latest(summary *s, long pid)
{
    for (size_t i = s->n; i-- > 0;)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

/* Why a program ran unrecorded, in the user's words. */
static void note(summary *s, int why, long pid, const char *what)
{
    if (s->nnotes < SHOWN_NOTES && why == PEND_UNRECORDED)
        snprintf(s->notes[s->nnotes], sizeof s->notes[0],
                 "%s (pid %ld) ran without the recorder: its environment dropped LD_PRELOAD or "
                 "RTMEM_RECORD_FILE (as `env -i` does), so none of its calls are recorded; keep "
                 "both variables, or record that program directly",
                 what, pid);
    else if (s->nnotes < SHOWN_NOTES)
        snprintf(s->notes[s->nnotes], sizeof s->notes[0],
                 "%s (pid %ld) did not load the recorder (statically linked, or setuid?): none "
                 "of its calls are recorded",
                 what, pid);
    s->nnotes++;
}

/* Room for one more element of an array that doubles: 0, or -1. */
static int grow(void **items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t bigger = *cap != 0 ? 2 * *cap : 16;
    void *p = realloc(*items, bigger * size);
    if (p == NULL)
        return -1;
    *items = p;
    *cap = bigger;
    return 0;
}

static loose *loose_of(summary *s, long pid)
{
    for (size_t i = s->nloose; i-- > 0;)
        if (s->loose[i].pid == pid && s->loose[i].pending != PEND_NONE)
            return &s->loose[i];
    return NULL;
}

static void take_start(summary *s, long pid, long ppid, const char *trace, const char *what)
{
    loose *l = loose_of(s, pid);
    if (l != NULL)
        l->pending = PEND_NONE; /* the forked child's exec was taken up */
    if (grow((void **)&s->procs, s->n, &s->cap, sizeof *s->procs) != 0)
        return;
    proc *p = &s->procs[s->n++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->ppid = ppid;
    snprintf(p->trace, sizeof p->trace, "%s", trace);
    snprintf(p->first, sizeof p->first, "%s", what);
    snprintf(p->last, sizeof p->last, "%s", what);
}

/* An exec by a process without a trace of its own. */
static void take_loose(summary *s, const char *event, long pid, const char *what)
{
    int call = strcmp(event, "exec-call") == 0;
    if (strcmp(event, "exec-failed") == 0) {
        loose *l = loose_of(s, pid);
        if (l != NULL)
            l->pending = PEND_NONE;
        return;
    }
    if ((!call && strcmp(event, "exec-unrecorded") != 0) ||
        grow((void **)&s->loose, s->nloose, &s->loose_cap, sizeof *s->loose) != 0)
        return;
    loose *l = &s->loose[s->nloose++];
    l->pid = pid;
    l->pending = call ? PEND_CALL : PEND_UNRECORDED;
    snprintf(l->what, sizeof l->what, "%s", what);
}

static void take_line(summary *s, char *line)
{
    char event[32], trace[NAME_MAX + 1];
    long pid, ppid;
    int at = 0;
    if (line[0] == '#' ||
        sscanf(line, "%31s %ld %ld %255s %n", event, &pid, &ppid, trace, &at) != 4 || at == 0)
        return;
    const char *what = line + at;
    proc *p = latest(s, pid);
    if (strcmp(event, "start") == 0)
        take_start(s, pid, ppid, trace, what);
    else if (strcmp(trace, "-") == 0)
        take_loose(s, event, pid, what);
    else if (p == NULL)
        return;
    else if (strcmp(event, "exec") == 0) {
        snprintf(p->trace, sizeof p->trace, "%s", trace);
        snprintf(p->last, sizeof p->last, "%s", what);
        p->execs++;
        p->pending = PEND_NONE;
    } else if (strcmp(event, "exec-call") == 0 || strcmp(event, "exec-unrecorded") == 0) {
        p->pending = event[5] == 'c' ? PEND_CALL : PEND_UNRECORDED;
        snprintf(p->pending_what, sizeof p->pending_what, "%s", what);
    } else if (strcmp(event, "exec-failed") == 0) {
        p->pending = PEND_NONE;
    }
}

static int read_index(const char *file, summary *s)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s.index", file);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[PATH_MAX + 400];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        take_line(s, line);
    }
    fclose(f);
    for (size_t i = 0; i < s->n; i++)
        if (s->procs[i].pending != PEND_NONE)
            note(s, s->procs[i].pending, s->procs[i].pid, s->procs[i].pending_what);
    for (size_t i = 0; i < s->nloose; i++)
        if (s->loose[i].pending != PEND_NONE)
            note(s, s->loose[i].pending, s->loose[i].pid, s->loose[i].what);
    return 0;
}

/* Calls in a trace, from its size; -1 when it cannot be read. */
static long long calls_in(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    long long body = (long long)st.st_size - TRACE_HEADER_BYTES;
    return body > 0 ? body / TRACE_RECORD_BYTES : 0;
}

/* "(taskset, then python3 after 1 exec)" and the like. */
static void programs(const proc *p, int final_only, char *out, size_t n)
{
    if (p == NULL)
        snprintf(out, n, "%s", "");
    else if (p->execs == 0)
        snprintf(out, n, " (%s)", p->first);
    else if (final_only)
        snprintf(out, n, " (%s after %u exec%s; --final-only left out the calls before)", p->last,
                 p->execs, p->execs == 1 ? "" : "s");
    else
        snprintf(out, n, " (%s, then %s after %u exec%s)", p->first, p->last, p->execs,
                 p->execs == 1 ? "" : "s");
}

void record_files_report(const char *file, pid_t pid, int final_only)
{
    summary s;
    memset(&s, 0, sizeof s);
    int have_index = read_index(file, &s) == 0;
    long long calls = calls_in(file);
    const proc *main_proc = NULL;
    for (size_t i = 0; i < s.n && main_proc == NULL; i++)
        if (s.procs[i].pid == (long)pid && strcmp(s.procs[i].trace, base_of(file)) == 0)
            main_proc = &s.procs[i];
    char progs[256];
    programs(main_proc, final_only, progs, sizeof progs);
    if (calls < 0)
        fprintf(stderr,
                "rtmem record: no trace was written to %s (a statically linked program, or one "
                "that replaced its environment?)\n",
                file);
    else
        fprintf(stderr, "rtmem record: %s: %lld calls recorded%s\n", file, calls, progs);
    size_t children = s.n - (main_proc != NULL);
    char dir[PATH_MAX];
    folder_of(file, dir, sizeof dir);
    if (children > 0)
        fprintf(stderr,
                "rtmem record: %zu child process%s recorded, each in its own trace (%s.index "
                "lists pid, parent and program):\n",
                children, children == 1 ? "" : "es", file);
    size_t shown = 0;
    for (size_t i = 0; i < s.n; i++) {
        const proc *p = &s.procs[i];
        if (p == main_proc || shown++ >= SHOWN_CHILDREN)
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", dir, p->trace);
        fprintf(stderr, "rtmem record:   %s: %lld calls (pid %ld, parent %ld)\n", path,
                calls_in(path), p->pid, p->ppid);
    }
    if (children > SHOWN_CHILDREN)
        fprintf(stderr, "rtmem record:   and %zu more\n", children - SHOWN_CHILDREN);
    for (size_t i = 0; i < s.nnotes && i < SHOWN_NOTES; i++)
        fprintf(stderr, "rtmem record: %s\n", s.notes[i]);
    if (s.nnotes > SHOWN_NOTES)
        fprintf(stderr, "rtmem record: and %zu more programs ran unrecorded (%s.index)\n",
                s.nnotes - SHOWN_NOTES, file);
    if (!have_index && calls >= 0)
        fprintf(stderr, "rtmem record: %s.index is missing: children not counted\n", file);
    free(s.procs);
    free(s.loose);
}
