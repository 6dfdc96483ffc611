// SPDX-License-Identifier: MIT
/*
 * tools/wcet/tracer.c -- counts, exactly, the user-space instructions of
 * each measured call, by ptrace single-stepping a forked child.
 *
 * Protocol with the child (scenarios.c, probes.c):
 *   1. the child calls wcet_marker(row, scenario, variant, size); its int3
 *      stops the child and the tracer reads the four arguments;
 *   2. the tracer plants an int3 at the entry of the row's function
 *      (PTRACE_POKETEXT; parent and child share one program image, so the
 *      address is the parent's own &rtm_alloc) and lets the child run;
 *   3. the child makes the measured call; the breakpoint stops it at the
 *      call's first instruction; the tracer restores the original byte,
 *      rewinds rip, and single-steps until rsp rises above its value at the
 *      entry, i.e. until the `ret` that leaves the call (tail calls by jmp,
 *      as rtm_alloc -> rtm_tlsf_alloc, and nested calls are counted: rsp
 *      only rises above the entry value when the measured call returns).
 *
 * Breakpoints exist only between a marker and its call, so the unmeasured
 * calls that build a heap state run at full speed and nothing stays planted
 * while stepping.
 *
 * What one step is: the CPU traps after every instruction, except that a
 * rep-prefixed string instruction traps after every iteration with rip
 * unchanged. An instruction is therefore counted when rip moves; the
 * self-test's rep stosb checks this. The count is a property of the code
 * path alone: interrupts, preemption and machine load are invisible to it.
 *
 * Each counted instruction is also classified (symbols.c): instructions
 * outside rtmem's functions are "foreign" (libc's __errno_location, memcpy,
 * the vdso); for glibc's malloc / free every instruction is the
 * allocator's. syscall instructions are counted separately, with the
 * system call they made (orig_rax after the step): a user-space count sees
 * a system call as one instruction and none of its kernel time.
 *
 * A glibc task's child execs this program afresh (with address-space
 * randomisation off: brk and mmap then return the same addresses in both
 * runs), so that malloc's state does not depend on what the lane process
 * allocated before forking it. The binary is static and not PIE, so every
 * function has the same address in the new image; a PIE build would show
 * up as an unexpected trap, never as a wrong count.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtmem.h"
#include "wcet.h"

/* A measured call longer than this is a runaway (a bug), not a path. */
#define STEP_LIMIT 1000000u

uintptr_t wcet_row_entry(enum wcet_row row)
{
    switch (row) {
    case ROW_SELF_STRAIGHT:
        return (uintptr_t)wcet_selftest_straight;
    case ROW_SELF_LOOP:
        return (uintptr_t)wcet_selftest_loop;
    case ROW_SELF_REP:
        return (uintptr_t)wcet_selftest_rep;
    case ROW_SELF_TAIL:
        return (uintptr_t)wcet_selftest_tail;
    case ROW_ALLOC:
        return (uintptr_t)rtm_alloc;
    case ROW_FREE:
    case ROW_MT_REMOTE_FREE:
        return (uintptr_t)rtm_free;
    case ROW_TLSF_ALLOC:
        return (uintptr_t)rtm_tlsf_alloc;
    case ROW_TLSF_FREE:
        return (uintptr_t)rtm_tlsf_free;
    case ROW_ALIGNED_64:
    case ROW_ALIGNED_4096:
        return (uintptr_t)rtm_aligned_alloc;
    case ROW_REALLOC_GROW:
    case ROW_REALLOC_SHRINK:
        return (uintptr_t)rtm_realloc;
    case ROW_MALLOC:
        return (uintptr_t)malloc;
    case ROW_MFREE:
        return (uintptr_t)free;
    case ROW_ZS_MALLOC:
        return (uintptr_t)rtm_zs_malloc;
    case ROW_ZS_FREE:
        return (uintptr_t)rtm_zs_free;
    case ROW_ZS_MAP:
        return (uintptr_t)rtm_zs_map;
    case ROW_ZS_UNMAP:
        return (uintptr_t)rtm_zs_unmap;
    case ROW_ZS_COMPACT:
        return (uintptr_t)rtm_zs_compact;
    case ROW_ZS_CHECK:
        return (uintptr_t)rtm_zs_check;
    case ROW_COUNT:
        break;
    }
    return 0;
}

/* One traced child. */
typedef struct tracee {
    pid_t pid;
    wcet_result *res;
    int armed;        /* a breakpoint is planted at bp            */
    uintptr_t bp;     /* its address                              */
    long bp_word;     /* the original text word at bp             */
    wcet_sample next; /* the call the last marker announced       */
    uint64_t *rip;    /* addresses of the call being stepped      */
    size_t rip_len, rip_cap;
    enum wcet_allocator al; /* the task's allocator, for every sample */
} tracee;

static int task_error(tracee *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records the task's first error (later ones are consequences); -1. */
static int task_error(tracee *c, const char *fmt, ...)
{
    if (c->res->error[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->res->error, sizeof c->res->error, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int wait_stop(tracee *c, int *sig)
{
    int st;
    if (waitpid(c->pid, &st, 0) != c->pid)
        return task_error(c, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st))
        return task_error(c, "child exited (status %d) inside a measured call", WEXITSTATUS(st));
    if (WIFSIGNALED(st))
        return task_error(c, "child killed by signal %d", WTERMSIG(st));
    *sig = WSTOPSIG(st);
    return 0;
}

static int get_regs(tracee *c, struct user_regs_struct *r)
{
    if (ptrace(PTRACE_GETREGS, c->pid, NULL, r) != 0)
        return task_error(c, "PTRACE_GETREGS: %s", strerror(errno));
    return 0;
}

static int peek(tracee *c, enum __ptrace_request req, uintptr_t addr, long *word)
{
    errno = 0;
    *word = ptrace(req, c->pid, (void *)addr, NULL);
    if (errno != 0)
        return task_error(c, "PTRACE_PEEK at %#lx: %s", (unsigned long)addr, strerror(errno));
    return 0;
}

static int poke_text(tracee *c, uintptr_t addr, long word)
{
    if (ptrace(PTRACE_POKETEXT, c->pid, (void *)addr, (void *)word) != 0)
        return task_error(c, "PTRACE_POKETEXT at %#lx: %s", (unsigned long)addr, strerror(errno));
    return 0;
}

/* --- counting ----------------------------------------------------------- */

static int trace_push(tracee *c, uint64_t addr)
{
    if (c->rip_len == c->rip_cap) {
        size_t cap = c->rip_cap ? 2 * c->rip_cap : 1024;
        uint64_t *p = realloc(c->rip, cap * sizeof *p);
        if (p == NULL)
            return task_error(c, "out of memory");
        c->rip = p;
        c->rip_cap = cap;
    }
    c->rip[c->rip_len++] = addr;
    return 0;
}

/* The first two bytes of the instruction at addr. Inside our own text they
 * are read from our own memory, which holds the same program (and never a
 * planted breakpoint: those are written into the child only); elsewhere
 * (the vdso) from the child's. Returns 0 or -1. */
static int opcode_at(tracee *c, uint64_t addr, unsigned *op)
{
    if (wcet_symbols_in_text(addr) && wcet_symbols_in_text(addr + 1)) {
        const unsigned char *b = (const unsigned char *)(uintptr_t)addr;
        *op = b[0] | (unsigned)b[1] << 8;
        return 0;
    }
    long word;
    if (peek(c, PTRACE_PEEKTEXT, (uintptr_t)addr, &word) != 0)
        return -1;
    *op = (unsigned)word & 0xffffu; /* little endian: first two bytes */
    return 0;
}

static unsigned sys_bit(unsigned long long nr)
{
    switch (nr) {
    case SYS_brk:
        return WCET_SYS_BRK;
    case SYS_mmap:
        return WCET_SYS_MMAP;
    case SYS_munmap:
        return WCET_SYS_MUNMAP;
    case SYS_mremap:
        return WCET_SYS_MREMAP;
    case SYS_madvise:
        return WCET_SYS_MADVISE;
    default:
        return WCET_SYS_OTHER;
    }
}

/* Accounts for one completed instruction that started at addr; after is
 * the register state once it ran (orig_rax: the system call it made). */
static int account(tracee *c, wcet_sample *s, uint64_t addr, const struct user_regs_struct *after)
{
    unsigned op;
    s->count++;
    int glibc_row = s->row == ROW_MALLOC || s->row == ROW_MFREE; /* all glibc's own */
    if (!glibc_row && !wcet_symbols_is_library(addr)) {
        s->foreign++;
        if (s->first_foreign == 0)
            s->first_foreign = addr;
    }
    if (opcode_at(c, addr, &op) != 0)
        return -1;
    if (op == 0x050fu || op == 0x340fu || op == 0x80cdu) { /* syscall, sysenter, int 0x80 */
        s->syscalls++;
        s->sysmask = (uint8_t)(s->sysmask | sys_bit(after->orig_rax));
    }
    return trace_push(c, addr);
}

/* Single-steps the call whose first instruction is at regs->rip until it
 * returns to its caller; fills s. */
static int step_call(tracee *c, struct user_regs_struct *regs, wcet_sample *s)
{
    uint64_t entry_sp = regs->rsp;
    long ret_word;
    if (peek(c, PTRACE_PEEKDATA, (uintptr_t)entry_sp, &ret_word) != 0)
        return -1;
    uint64_t prev = regs->rip;
    c->rip_len = 0;
    for (unsigned steps = 0;; steps++) {
        int sig = 0;
        if (steps > STEP_LIMIT)
            return task_error(c, "measured call ran over %u steps", STEP_LIMIT);
        if (ptrace(PTRACE_SINGLESTEP, c->pid, NULL, NULL) != 0)
            return task_error(c, "PTRACE_SINGLESTEP: %s", strerror(errno));
        if (wait_stop(c, &sig) != 0)
            return -1;
        if (sig != SIGTRAP)
            return task_error(c, "signal %d (%s) inside a measured call at %#llx", sig,
                              strsignal(sig), (unsigned long long)prev);
        if (get_regs(c, regs) != 0)
            return -1;
        if (regs->rip != prev && account(c, s, prev, regs) != 0)
            return -1; /* rip unchanged: one more iteration of a rep prefix */
        prev = regs->rip;
        if (regs->rsp > entry_sp)
            break;
    }
    if (regs->rip != (uint64_t)ret_word)
        return task_error(c, "call left at %#llx, not its return address %#llx",
                          (unsigned long long)regs->rip, (unsigned long long)ret_word);
    return 0;
}

/* --- results ------------------------------------------------------------ */

static int keep_sample(tracee *c, const wcet_sample *s)
{
    wcet_result *res = c->res;
    if (res->count == res->cap) {
        size_t cap = res->cap ? 2 * res->cap : 4096;
        wcet_sample *p = realloc(res->samples, cap * sizeof *p);
        if (p == NULL)
            return task_error(c, "out of memory");
        res->samples = p;
        res->cap = cap;
    }
    res->samples[res->count++] = *s;
    wcet_trace *w = &res->worst[s->row];
    if (w->rip == NULL || s->count > w->sample.count) { /* first call to reach the max */
        uint64_t *copy = realloc(w->rip, c->rip_len * sizeof *copy);
        if (copy == NULL)
            return task_error(c, "out of memory");
        memcpy(copy, c->rip, c->rip_len * sizeof *copy);
        w->rip = copy;
        w->len = c->rip_len;
        w->sample = *s;
    }
    return 0;
}

/* Checks what can be checked at once: self-tests count exactly what their
 * assembly says, and measured rtmem functions start in rtmem's code (else
 * the classifier is broken and every foreign count is meaningless). */
static int check_sample(tracee *c, const wcet_sample *s)
{
    if (wcet_rows[s->row].kind == WCET_SELFTEST) {
        uint32_t want = wcet_selftest_expected((enum wcet_row)s->row, s->size);
        if (s->count != want)
            return task_error(c, "self-test %s(%llu): counted %u instructions, expected %u",
                              wcet_rows[s->row].function, (unsigned long long)s->size, s->count,
                              want);
        if (s->foreign != s->count)
            return task_error(c,
                              "self-test %s: classifier calls %u of %u probe instructions "
                              "rtmem's",
                              wcet_rows[s->row].function, s->count - s->foreign, s->count);
    } else if (s->row != ROW_MALLOC && s->row != ROW_MFREE && c->rip_len > 0 &&
               !wcet_symbols_is_library(c->rip[0])) {
        return task_error(c, "classifier does not recognise %s's entry as rtmem code",
                          wcet_rows[s->row].function);
    }
    return 0;
}

/* --- the event loop ----------------------------------------------------- */

static int on_marker(tracee *c, const struct user_regs_struct *r)
{
    if (c->armed)
        return task_error(c, "marker for row %llu before the announced call to %s was made",
                          (unsigned long long)r->rdi, wcet_rows[c->next.row].function);
    if (r->rdi >= ROW_COUNT || r->rsi >= SC_COUNT)
        return task_error(c, "marker with bad row %llu / scenario %llu", (unsigned long long)r->rdi,
                          (unsigned long long)r->rsi);
    memset(&c->next, 0, sizeof c->next);
    c->next.row = (uint16_t)r->rdi;
    c->next.scenario = (uint16_t)r->rsi;
    c->next.variant = (uint32_t)r->rdx;
    c->next.size = r->rcx;
    c->next.allocator = (uint8_t)c->al;
    c->bp = wcet_row_entry((enum wcet_row)r->rdi);
    if (peek(c, PTRACE_PEEKTEXT, c->bp, &c->bp_word) != 0)
        return -1;
    long planted = (long)(((unsigned long)c->bp_word & ~0xfful) | 0xccul);
    if (poke_text(c, c->bp, planted) != 0)
        return -1;
    c->armed = 1;
    return 0;
}

static int on_breakpoint(tracee *c, struct user_regs_struct *r)
{
    if (poke_text(c, c->bp, c->bp_word) != 0)
        return -1;
    c->armed = 0;
    r->rip = c->bp;
    if (ptrace(PTRACE_SETREGS, c->pid, NULL, r) != 0)
        return task_error(c, "PTRACE_SETREGS: %s", strerror(errno));
    wcet_sample s = c->next;
    if (step_call(c, r, &s) != 0 || check_sample(c, &s) != 0)
        return -1;
    return keep_sample(c, &s);
}

/* Handles stops until the child exits. */
static int trace_loop(tracee *c)
{
    const uint64_t marker_trap = (uint64_t)(uintptr_t)wcet_marker + 1u; /* rip after int3 */
    for (;;) {
        int st, sig = 0;
        if (ptrace(PTRACE_CONT, c->pid, NULL, NULL) != 0)
            return task_error(c, "PTRACE_CONT: %s", strerror(errno));
        if (waitpid(c->pid, &st, 0) != c->pid)
            return task_error(c, "waitpid: %s", strerror(errno));
        if (WIFEXITED(st)) {
            if (WEXITSTATUS(st) != 0)
                return task_error(c, "child failed (exit %d); see its message above",
                                  WEXITSTATUS(st));
            if (c->armed)
                return task_error(c, "child exited before making the announced call");
            return 0;
        }
        if (WIFSIGNALED(st))
            return task_error(c, "child killed by signal %d (%s)", WTERMSIG(st),
                              strsignal(WTERMSIG(st)));
        sig = WSTOPSIG(st);
        struct user_regs_struct r;
        if (st >> 8 == (SIGTRAP | PTRACE_EVENT_EXEC << 8))
            continue; /* a glibc child's fresh image: let it run */
        if (sig != SIGTRAP)
            return task_error(c, "child stopped by signal %d (%s)", sig, strsignal(sig));
        if (get_regs(c, &r) != 0)
            return -1;
        if (r.rip == marker_trap) {
            if (on_marker(c, &r) != 0)
                return -1;
        } else if (c->armed && r.rip == c->bp + 1u) {
            if (on_breakpoint(c, &r) != 0)
                return -1;
        } else {
            return task_error(c, "unexpected trap at %#llx", (unsigned long long)r.rip);
        }
    }
}

/* A glibc child: this program again, told what to run (main.c's --child),
 * at fixed addresses. Returns only when exec failed. */
static void exec_child(const wcet_config *cfg, enum wcet_allocator al, enum wcet_scenario sc,
                       enum wcet_api api)
{
    char a[6][32];
    snprintf(a[0], sizeof a[0], "%d,%d,%d", (int)al, (int)sc, (int)api);
    snprintf(a[1], sizeof a[1], "%lu", cfg->iterations);
    snprintf(a[2], sizeof a[2], "%llu", (unsigned long long)cfg->seed);
    snprintf(a[3], sizeof a[3], "%d", cfg->quick);
    snprintf(a[4], sizeof a[4], "%u", cfg->class_top_log2);
    snprintf(a[5], sizeof a[5], "%u", cfg->per_octave);
    char *argv[] = {"rtmem-wcet", "--child", a[0], a[1], a[2], a[3], a[4], a[5], NULL};
    if (personality(ADDR_NO_RANDOMIZE) == -1)
        fprintf(stderr, "rtmem-wcet: note: personality(ADDR_NO_RANDOMIZE): %s\n", strerror(errno));
    execv("/proc/self/exe", argv);
    fprintf(stderr, "rtmem-wcet: exec /proc/self/exe: %s\n", strerror(errno));
}

/* What wcet_run_task's child runs: a scenario, or for glibc the exec. */
typedef struct task_body {
    const wcet_config *cfg;
    enum wcet_allocator al;
    enum wcet_scenario sc;
    enum wcet_api api;
} task_body;

static int run_task_body(void *arg)
{
    const task_body *t = arg;
    if (t->al == AL_GLIBC) {
        exec_child(t->cfg, t->al, t->sc, t->api);
        return 3;
    }
    return wcet_child_main(t->cfg, t->al, t->sc, t->api);
}

/* The child: become traceable, stop so the tracer can set options, run. */
static void child(wcet_child_fn body, void *arg)
{
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) {
        fprintf(stderr, "rtmem-wcet: PTRACE_TRACEME: %s\n", strerror(errno));
        _exit(WCET_EXIT_NO_PTRACE);
    }
    raise(SIGSTOP);
    int rc = body(arg);
    fflush(NULL);
    _exit(rc);
}

int wcet_run_child(wcet_child_fn body, void *arg, enum wcet_allocator al, wcet_result *res)
{
    tracee c;
    memset(&c, 0, sizeof c);
    c.res = res;
    c.al = al;
    fflush(NULL); /* the child must not flush our buffers a second time */
    c.pid = fork();
    if (c.pid < 0)
        return task_error(&c, "fork: %s", strerror(errno));
    if (c.pid == 0)
        child(body, arg);
    int st, rc = 0;
    if (waitpid(c.pid, &st, 0) != c.pid) {
        rc = task_error(&c, "waitpid: %s", strerror(errno));
    } else if (WIFEXITED(st) && WEXITSTATUS(st) == WCET_EXIT_NO_PTRACE) {
        return task_error(&c, "ptrace is not permitted here (PTRACE_TRACEME failed: this process "
                              "is already traced, or a container without CAP_SYS_PTRACE, or a "
                              "seccomp or Yama policy)");
    } else if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP) {
        rc = task_error(&c, "child did not stop before starting (status %#x)", st);
    }
    if (rc == 0 && ptrace(PTRACE_SETOPTIONS, c.pid, NULL,
                          (void *)(PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC)) != 0)
        rc = task_error(&c, "PTRACE_SETOPTIONS: %s", strerror(errno));
    if (rc == 0)
        rc = trace_loop(&c);
    if (rc != 0) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, NULL, 0);
    }
    free(c.rip);
    return rc;
}

int wcet_run_task(const wcet_config *cfg, enum wcet_allocator al, enum wcet_scenario sc,
                  enum wcet_api api, wcet_result *res)
{
    task_body t = {cfg, al, sc, api};
    return wcet_run_child(run_task_body, &t, al, res);
}

void wcet_result_free(wcet_result *res)
{
    free(res->samples);
    for (unsigned r = 0; r < ROW_COUNT; r++)
        free(res->worst[r].rip);
    memset(res, 0, sizeof *res);
}
