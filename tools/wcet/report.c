// SPDX-License-Identifier: MIT
/*
 * tools/wcet/report.c -- turns the samples into what the issue asks for:
 * per allocator and measured function min / mean / p99 / max with the case
 * that gave the max, a per-scenario table, any code reached outside rtmem
 * (and the system calls glibc made), a summary across allocators (worst
 * alloc, worst free), TLSF's worst alloc and free against the
 * 120-instruction budget next to other allocators' counts (another harness's),
 * plus the CSV and the worst-path traces. The JSON is report_json.c's.
 *
 * p99 is the nearest-rank percentile: the smallest count that at least 99 %
 * of the calls do not exceed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/table.h"
#include "common/table_pivot.h"
#include "rtmem/mt.h"
#include "wcet.h"

const wcet_row_info wcet_rows[ROW_COUNT] = {
    {"self_straight", "wcet_selftest_straight", WCET_SELFTEST},
    {"self_loop", "wcet_selftest_loop", WCET_SELFTEST},
    {"self_rep", "wcet_selftest_rep", WCET_SELFTEST},
    {"self_tail", "wcet_selftest_tail", WCET_SELFTEST},
    {"alloc", "rtm_alloc", WCET_ALLOC},
    {"free", "rtm_free", WCET_FREE},
    {"tlsf_alloc", "rtm_tlsf_alloc", WCET_ALLOC},
    {"tlsf_free", "rtm_tlsf_free", WCET_FREE},
    {"aligned_64", "rtm_aligned_alloc", WCET_EXTRA},
    {"aligned_4096", "rtm_aligned_alloc", WCET_EXTRA},
    {"realloc_grow", "rtm_realloc", WCET_EXTRA},
    {"realloc_shrink", "rtm_realloc", WCET_EXTRA},
    {"alloc", "malloc", WCET_ALLOC},
    {"free", "free", WCET_FREE},
    {"zs_malloc", "rtm_zs_malloc", WCET_ALLOC},
    {"zs_free", "rtm_zs_free", WCET_FREE},
    {"zs_map", "rtm_zs_map", WCET_EXTRA},
    {"zs_unmap", "rtm_zs_unmap", WCET_EXTRA},
    {"zs_compact", "rtm_zs_compact", WCET_EXTRA},
    {"zs_check", "rtm_zs_check", WCET_EXTRA},
    {"mt_remote_free", "rtm_free", WCET_EXTRA},
};

/* Parameters: the pool's blocks hold the largest random-replace request;
 * the page sizes are each algorithm's default (Xenomai's 512 for heapmem). */
const wcet_allocator_info wcet_allocators[AL_COUNT] = {
    {"tlsf", "tlsf", "generic and typed API"},
    {"tlsf_cached", "tlsf_cached", "TLSF behind a cache of up to 128 freed blocks (default)"},
    {"pool", "pool:4096", "4096-byte blocks"},
    {"buddy", "buddy:4096", "4 KiB pages, heaps up to 1 GiB (18 orders)"},
    {"halffit", "halffit", "32-byte units, heaps up to 1 GiB (25 orders)"},
    {"slab", "slab:4096", "4 KiB slabs over a buddy of up to 1 GiB"},
    {"heapmem", "heapmem:512", "512-byte pages"},
    {"xvmalloc", "xvmalloc:8192", "8 KiB pages (random-replace asks up to 4 KiB)"},
    {"glibc", NULL, "glibc malloc/free, statically linked, main arena"},
    {"zsmalloc", "zsmalloc", "typed API rtm_zs_*, 4 KiB pages, spans of 1-4 pages"},
    {"mt:tlsf", "mt:tlsf",
     "rtm_mt_create(\"tlsf\"), 2 shards of 1 MiB, the traced thread attached"},
};

const char *const wcet_scenario_names[SC_COUNT] = {
    "self-test",     "random-replace", "split-huge",     "exact-fit",      "probe-fit",
    "good-fit",      "classes",        "merge-none",     "merge-left",     "merge-right",
    "merge-both",    "enomem",         "double-free",    "aligned",        "realloc",
    "pool-ops",      "buddy-chain",    "buddy-orders",   "buddy-fail",     "halffit-chain",
    "halffit-fail",  "slab-life",      "slab-large",     "slab-fail",      "heapmem-bucket",
    "heapmem-range", "heapmem-fail",   "glibc-fastbins", "glibc-unsorted", "glibc-top",
    "glibc-mmap",    "glibc-free",     "xvmalloc-alloc", "xvmalloc-free",  "xvmalloc-fail",
    "zs-malloc",     "zs-free",        "zs-map",         "zs-compact",     "zs-check",
    "cache-hit",     "cache-evict",    "cache-flush",    "mt-owner",       "mt-remote",
    "mt-takeback",
};

const enum wcet_allocator wcet_scenario_owner[SC_COUNT] = {
    AL_COUNT,       AL_COUNT,    AL_TLSF,     AL_TLSF,     AL_TLSF,        AL_TLSF,
    AL_TLSF,        AL_TLSF,     AL_TLSF,     AL_TLSF,     AL_TLSF,        AL_TLSF,
    AL_TLSF,        AL_TLSF,     AL_TLSF,     AL_POOL,     AL_BUDDY,       AL_BUDDY,
    AL_BUDDY,       AL_HALFFIT,  AL_HALFFIT,  AL_SLAB,     AL_SLAB,        AL_SLAB,
    AL_HEAPMEM,     AL_HEAPMEM,  AL_HEAPMEM,  AL_GLIBC,    AL_GLIBC,       AL_GLIBC,
    AL_GLIBC,       AL_GLIBC,    AL_XVMALLOC, AL_XVMALLOC, AL_XVMALLOC,    AL_ZSMALLOC,
    AL_ZSMALLOC,    AL_ZSMALLOC, AL_ZSMALLOC, AL_ZSMALLOC, AL_TLSF_CACHED, AL_TLSF_CACHED,
    AL_TLSF_CACHED, AL_MT_TLSF,  AL_MT_TLSF,  AL_MT_TLSF,
};

/* Other allocators' worst cases (alloc / free) that the budget is set
 * against: counts from another single-step harness, not from this tool and
 * not from their authors' publications, so they are labelled as such. */
const wcet_reference wcet_reference_counts[3] = {
    {"TLSF 2.4.6", 193, 218}, {"mattconte/tlsf", 208, 197}, {"o1heap", 104, 98}};
const char wcet_reference_source[] =
    "counted by another single-step harness (x86-64, -O2) and given to the project as a yardstick; "
    "not measured in this run";
#define reference wcet_reference_counts

static int by_count(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void note_foreign(row_stats *st, const wcet_sample *s)
{
    st->foreign += s->foreign;
    st->foreign_calls++;
    for (unsigned i = 0; i < 4; i++) {
        if (st->foreign_at[i] == s->first_foreign)
            return;
        if (st->foreign_at[i] == 0) {
            st->foreign_at[i] = s->first_foreign;
            return;
        }
    }
}

row_stats wcet_stats_of(const wcet_all *all, unsigned al, unsigned row, int sc)
{
    row_stats st;
    memset(&st, 0, sizeof st);
    uint32_t *v = malloc((all->count + 1) * sizeof *v);
    double sum = 0;
    if (v == NULL)
        return st;
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        if (s->row != row || s->allocator != al || (sc >= 0 && s->scenario != (unsigned)sc))
            continue;
        v[st.n++] = s->count;
        sum += s->count;
        if (st.worst == NULL || s->count > st.worst->count)
            st.worst = s;
        if (s->foreign != 0)
            note_foreign(&st, s);
        if (s->syscalls != 0) {
            st.syscalls += s->syscalls;
            st.syscall_calls++;
            st.sysmask |= s->sysmask;
        }
    }
    if (st.n > 0) {
        qsort(v, st.n, sizeof *v, by_count);
        st.min = v[0];
        st.max = v[st.n - 1];
        st.p99 = v[(st.n * 99 + 99) / 100 - 1];
        st.mean = sum / (double)st.n;
    }
    free(v);
    return st;
}

void wcet_describe_sample(char *buf, size_t len, const wcet_sample *s)
{
    char d[200];
    wcet_describe(d, sizeof d, s->scenario, s->variant, s->size);
    snprintf(buf, len, "%s: %s", wcet_scenario_names[s->scenario], d);
}

/* --- text --------------------------------------------------------------- */

static int row_shown(unsigned r, const row_stats *st)
{
    return wcet_rows[r].kind != WCET_SELFTEST && st[r].n > 0;
}

/* --- the rows table: text and JSON (report_json.c) from one fill -------- */

static const table_col rows_cols[WR_NCOLS] = {
    [WR_KIND] = {"kind", "kind", -15, 0, 0, NULL, 0, NULL, NULL},
    [WR_FUNCTION] = {"function", "function", -18, 0, 0, NULL, 0, NULL, NULL},
    [WR_BUDGETED] = TABLE_JSON_ONLY("budgeted"),
    [WR_CALLS] = {"calls", "calls", 7, 0, 0, NULL, 0, NULL, NULL},
    [WR_MIN] = {"min", "min", 5, 0, 0, NULL, 0, NULL, NULL},
    [WR_MEAN] = {"mean", "mean", 7, 1, 0, NULL, 0, NULL, NULL},
    [WR_P99] = {"p99", "p99", 5, 0, 0, NULL, 0, NULL, NULL},
    [WR_MAX] = {"max", "max", 5, 0, 0, NULL, 0, NULL, NULL},
    [WR_WORST_SCENARIO] = {"worst_scenario", "scenario of the max", 0, 0, 0, NULL, 0, NULL, NULL},
    [WR_WORST_CASE] = TABLE_JSON_ONLY("worst_case"),
    [WR_FOREIGN] = TABLE_JSON_ONLY("foreign_instructions"),
    [WR_SYSCALLS] = TABLE_JSON_ONLY("syscalls"),
    [WR_SYSCALL_CALLS] = TABLE_JSON_ONLY("syscall_calls"),
    [WR_ROW] = {NULL, NULL, 0, 0, 0, NULL, 0, NULL, NULL},
};

void wcet_rows_table(table *t, const wcet_all *all, unsigned al, row_stats *st)
{
    table_init(t, rows_cols, WR_NCOLS);
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        st[r] = wcet_stats_of(all, al, r, -1);
        if (!row_shown(r, st))
            continue;
        char d[300];
        wcet_describe_sample(d, sizeof d, st[r].worst);
        table_row(t);
        table_str(t, wcet_rows[r].name);
        table_str(t, wcet_rows[r].function);
        table_bool(t, al == AL_TLSF && wcet_rows[r].kind != WCET_EXTRA);
        table_u64(t, st[r].n);
        table_u64(t, st[r].min);
        table_num(t, st[r].mean);
        table_u64(t, st[r].p99);
        table_u64(t, st[r].max);
        table_str(t, wcet_scenario_names[st[r].worst->scenario]);
        table_str(t, d);
        table_u64(t, st[r].foreign);
        table_u64(t, st[r].syscalls);
        table_u64(t, st[r].syscall_calls);
        table_u64(t, r);
    }
}

/* The table, then the worst case of each row read off its cells. */
static void print_rows(const wcet_all *all, unsigned al, row_stats *st)
{
    table t;
    wcet_rows_table(&t, all, al, st);
    table_print(stdout, &t);
    printf("\nworst case of each kind:\n");
    for (size_t i = 0; i < t.nrows; i++)
        printf("  %-15s %4llu  %s\n", table_at(&t, i, WR_KIND)->v.str,
               (unsigned long long)table_at(&t, i, WR_MAX)->v.u64,
               table_at(&t, i, WR_WORST_CASE)->v.str);
    table_free(&t);
}

/* --- the per-scenario table: text grid and JSON "scenarios" from one fill */

static const table_col scen_cols[WS_NCOLS] = {
    [WS_ROW] = TABLE_PIVOT_KEY,
    [WS_LABEL] = TABLE_PIVOT_KEY,
    [WS_SCENARIO] = TABLE_JSON_ONLY("scenario"),
    [WS_CALLS] = TABLE_JSON_ONLY("calls"),
    [WS_MIN] = TABLE_JSON_ONLY("min"),
    [WS_MEAN] = TABLE_JSON_ONLY("mean"),
    [WS_P99] = TABLE_JSON_ONLY("p99"),
    [WS_MAX] = TABLE_JSON_ONLY("max"),
};

void wcet_scenarios_table(table *t, const wcet_all *all, unsigned al)
{
    table_init(t, scen_cols, WS_NCOLS);
    for (unsigned r = ROW_ALLOC; r < ROW_COUNT; r++)
        for (unsigned sc = 1; sc < SC_COUNT; sc++) {
            row_stats s = wcet_stats_of(all, al, r, (int)sc);
            if (s.n == 0)
                continue;
            table_row(t);
            table_u64(t, r);
            table_str(t, wcet_scenario_names[sc]);
            table_str(t, wcet_scenario_names[sc]);
            table_u64(t, s.n);
            table_u64(t, s.min);
            table_num(t, s.mean);
            table_u64(t, s.p99);
            table_u64(t, s.max);
        }
}

static void scen_max_text(const table *t, size_t row, size_t col, char *buf, size_t n, void *ctx)
{
    (void)ctx;
    snprintf(buf, n, "%llu", (unsigned long long)table_at(t, row, col)->v.u64);
}

/* Max per (scenario, row): which states cost most for which call; the
 * scenario table pivoted, a column per measured function. */
static void print_scenarios(const wcet_all *all, unsigned al, const row_stats *all_st)
{
    static const char *const head[ROW_COUNT] = {[ROW_ALLOC] = "alloc",
                                                [ROW_FREE] = "free",
                                                [ROW_TLSF_ALLOC] = "t_alloc",
                                                [ROW_TLSF_FREE] = "t_free",
                                                [ROW_ALIGNED_64] = "al_64",
                                                [ROW_ALIGNED_4096] = "al_4096",
                                                [ROW_REALLOC_GROW] = "re_grow",
                                                [ROW_REALLOC_SHRINK] = "re_shrink",
                                                [ROW_MALLOC] = "malloc",
                                                [ROW_MFREE] = "free",
                                                [ROW_ZS_MALLOC] = "malloc",
                                                [ROW_ZS_FREE] = "free",
                                                [ROW_ZS_MAP] = "map",
                                                [ROW_ZS_UNMAP] = "unmap",
                                                [ROW_ZS_COMPACT] = "compact",
                                                [ROW_ZS_CHECK] = "check",
                                                [ROW_MT_REMOTE_FREE] = "remote_free"};
    const char *heads[ROW_COUNT] = {NULL};
    for (unsigned r = ROW_ALLOC; r < ROW_COUNT; r++)
        heads[r] = all_st[r].n > 0 ? head[r] : NULL;
    /* The text rows: the scenarios any function was measured in, in order. */
    const char *labels[SC_COUNT];
    size_t nlabels = 0;
    table t;
    wcet_scenarios_table(&t, all, al);
    for (unsigned sc = 1; sc < SC_COUNT; sc++)
        for (size_t i = 0; i < t.nrows; i++)
            if (strcmp(table_at(&t, i, WS_LABEL)->v.str, wcet_scenario_names[sc]) == 0) {
                labels[nlabels++] = wcet_scenario_names[sc];
                break;
            }
    table_pivot p = {
        .corner = "scenario",
        .label_width = -15,
        .width = 9,
        .heads = heads,
        .nheads = ROW_COUNT,
        .col_key = WS_ROW,
        .row_key = WS_LABEL,
        .value = WS_MAX,
        .cell = scen_max_text,
        .absent = "-",
        .labels = labels,
        .nlabels = nlabels,
    };
    printf("\nmax instructions per scenario%s:\n",
           al == AL_TLSF ? " (t_ = typed rtm_tlsf_*, - = not measured there)" : "");
    table_pivot_print(stdout, &t, &p);
    table_free(&t);
}

void wcet_sysmask_text(char *buf, size_t len, unsigned mask)
{
    static const char *const names[] = {"brk", "mmap", "munmap", "mremap", "madvise", "other"};
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < 6; i++)
        if ((mask >> i) & 1u && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "+" : "", names[i]);
}

/* Code outside rtmem (rtm allocators) and system calls (any allocator). */
static void print_foreign(unsigned al, const row_stats *st)
{
    int any = 0;
    if (al == AL_GLIBC)
        printf("\nsystem calls made by measured calls (each counted as one instruction; the "
               "kernel's time is not in any count):");
    else
        printf("\ncode outside rtmem reached by measured calls (libc, vdso, syscalls):");
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        if (wcet_rows[r].kind == WCET_SELFTEST || (st[r].foreign_calls == 0 && st[r].syscalls == 0))
            continue;
        any = 1;
        char sys[64];
        wcet_sysmask_text(sys, sizeof sys, st[r].sysmask);
        if (al == AL_GLIBC) {
            printf("\n  %-15s %llu of %zu calls made %llu system calls (%s)", wcet_rows[r].name,
                   (unsigned long long)st[r].syscall_calls, st[r].n,
                   (unsigned long long)st[r].syscalls, sys);
            continue;
        }
        printf("\n  %-15s %llu calls, %llu instructions, %llu syscalls%s%s; first at",
               wcet_rows[r].name, (unsigned long long)st[r].foreign_calls,
               (unsigned long long)st[r].foreign, (unsigned long long)st[r].syscalls,
               sys[0] ? " " : "", sys);
        for (unsigned i = 0; i < 4 && st[r].foreign_at[i] != 0; i++) {
            uint64_t off;
            const char *name = wcet_symbols_name(st[r].foreign_at[i], &off);
            printf(" %s+%#llx", name ? name : "?", (unsigned long long)off);
        }
    }
    printf("%s\n", any ? "" : " none");
}

/* The worst row of a kind (generic rows come first in the table, so a tie
 * names the generic function users call). */
unsigned wcet_worst_of_kind(const row_stats *st, enum wcet_row_kind kind)
{
    unsigned best = ROW_COUNT;
    for (unsigned r = 0; r < ROW_COUNT; r++)
        if (wcet_rows[r].kind == kind && st[r].n > 0 &&
            (best == ROW_COUNT || st[r].max > st[best].max))
            best = r;
    return best;
}

static const char *spec_of(unsigned al)
{
    return wcet_allocators[al].spec ? wcet_allocators[al].spec : wcet_allocators[al].name;
}

/* One allocator's section: rows, worst cases, scenarios, outside code. */
static void print_allocator(const wcet_all *all, unsigned al, row_stats *st)
{
    printf("== %s (%s) ==\n", spec_of(al), wcet_allocators[al].note);
    print_rows(all, al, st);
    print_scenarios(all, al, st);
    print_foreign(al, st);
    printf("\n");
}

/* Worst alloc and worst free of every allocator, then the case of each. */
static void print_summary(const wcet_all *all)
{
    row_stats st[AL_COUNT][2];
    printf("summary: worst case per allocator, in instructions (rtm_alloc / rtm_free; malloc / "
           "free for glibc)\n");
    printf("%-12s %7s %11s %7s %10s  %s\n", "allocator", "allocs", "worst alloc", "frees",
           "worst free", "system calls (one instruction each)");
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!all->selected[al])
            continue;
        st[al][0] = wcet_stats_of(all, al, al == AL_GLIBC ? ROW_MALLOC : ROW_ALLOC, -1);
        st[al][1] = wcet_stats_of(all, al, al == AL_GLIBC ? ROW_MFREE : ROW_FREE, -1);
        if (al == AL_ZSMALLOC) { /* its own typed rows */
            st[al][0] = wcet_stats_of(all, al, ROW_ZS_MALLOC, -1);
            st[al][1] = wcet_stats_of(all, al, ROW_ZS_FREE, -1);
        }
        char sys[64];
        wcet_sysmask_text(sys, sizeof sys, st[al][0].sysmask | st[al][1].sysmask);
        printf("%-12s %7zu %11u %7zu %10u  %llu%s%s%s\n", spec_of(al), st[al][0].n, st[al][0].max,
               st[al][1].n, st[al][1].max,
               (unsigned long long)(st[al][0].syscalls + st[al][1].syscalls), sys[0] ? " (" : "",
               sys, sys[0] ? ")" : "");
    }
    printf("cases of the worst:\n");
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!all->selected[al])
            continue;
        for (unsigned k = 0; k < 2; k++) {
            char d[300] = "-";
            if (st[al][k].n)
                wcet_describe_sample(d, sizeof d, st[al][k].worst);
            printf("  %-12s %-5s %s\n", spec_of(al), k ? "free" : "alloc", d);
        }
    }
    printf("\n");
}

/* TLSF's worst alloc and free against the budget and other allocators' counts. */
static int tlsf_verdict(const row_stats *st, const wcet_config *cfg)
{
    unsigned a = wcet_worst_of_kind(st, WCET_ALLOC), f = wcet_worst_of_kind(st, WCET_FREE);
    if (a == ROW_COUNT || f == ROW_COUNT) {
        printf("no TLSF alloc or free measured (--only / --allocators?): no verdict\n");
        return 1;
    }
    char da[300], df[300];
    wcet_describe_sample(da, sizeof da, st[a].worst);
    wcet_describe_sample(df, sizeof df, st[f].worst);
    printf("TLSF worst alloc: %u instructions (%s, %s)\n", st[a].max, wcet_rows[a].function, da);
    printf("TLSF worst free:  %u instructions (%s, %s)\n", st[f].max, wcet_rows[f].function, df);
    printf("other allocators (alloc/free; %s):", wcet_reference_source);
    for (size_t i = 0; i < sizeof reference / sizeof reference[0]; i++)
        printf("%s %s %u/%u", i ? "," : "", reference[i].name, reference[i].alloc,
               reference[i].free);
    printf("; rtmem %u/%u (this run)\n", st[a].max, st[f].max);
    int pass = st[a].max <= WCET_TARGET && st[f].max <= WCET_TARGET;
    printf("%s: TLSF worst alloc %u, worst free %u, target <= %u instructions each%s\n",
           pass ? "PASS" : "FAIL", st[a].max, st[f].max, WCET_TARGET,
           cfg->quick ? " (quick profile: fewer states than the full run)" : "");
    return pass;
}

static void trace_breakdown(FILE *f, const wcet_trace *t);

void wcet_mt_judge(const wcet_all *all, wcet_mt_judgement *m)
{
    memset(m, 0, sizeof *m);
    m->remote = wcet_stats_of(all, AL_MT_TLSF, ROW_MT_REMOTE_FREE, SC_MT_REMOTE);
    m->alloc = wcet_stats_of(all, AL_MT_TLSF, ROW_ALLOC, SC_MT_OWNER);
    m->free = wcet_stats_of(all, AL_MT_TLSF, ROW_FREE, SC_MT_OWNER);
    m->tlsf_alloc = wcet_stats_of(all, AL_TLSF, ROW_ALLOC, -1);
    m->tlsf_free = wcet_stats_of(all, AL_TLSF, ROW_FREE, -1);
    m->measured = m->remote.n > 0 && m->alloc.n > 0 && m->free.n > 0;
    if (m->tlsf_alloc.n > 0 && m->tlsf_free.n > 0) {
        unsigned k = RTM_MT_BATCH * m->tlsf_free.max + WCET_MT_SLACK;
        m->bound_alloc = m->tlsf_alloc.max + k;
        m->bound_free = m->tlsf_free.max + k;
    }
}

/* The mt heap's verdicts (wcet_mt_judge), the remote free's instructions
 * by function, and the take-back-all path per pending count. */
static void mt_verdict(const wcet_all *all)
{
    wcet_mt_judgement m;
    wcet_mt_judge(all, &m);
    char d[300];
    printf("\nmt:tlsf (K = RTM_MT_BATCH = %u remote frees taken back per call):\n", RTM_MT_BATCH);
    if (!m.measured) {
        printf("  no mt-owner or mt-remote call measured (--only?): no verdict\n");
        return;
    }
    wcet_describe_sample(d, sizeof d, m.remote.worst);
    printf("  %s: remote free %u instructions, target <= %u (%s)\n",
           m.remote.max <= WCET_MT_REMOTE_TARGET ? "PASS" : "FAIL", m.remote.max,
           WCET_MT_REMOTE_TARGET, d);
    const wcet_trace *t = all->worst[AL_MT_TLSF][ROW_MT_REMOTE_FREE];
    if (t != NULL)
        trace_breakdown(stdout, t);
    const char *what[2] = {"alloc", "free"};
    const row_stats *own[2] = {&m.alloc, &m.free}, *tlsf[2] = {&m.tlsf_alloc, &m.tlsf_free};
    const unsigned bound[2] = {m.bound_alloc, m.bound_free};
    for (int k = 0; k < 2; k++) {
        wcet_describe_sample(d, sizeof d, own[k]->worst);
        if (bound[k] == 0) {
            printf("  n/a: owner %s %u instructions (%s); tlsf not measured in this run "
                   "(--allocators), no bound\n",
                   what[k], own[k]->max, d);
            continue;
        }
        printf("  %s: owner %s %u instructions, target <= %u = tlsf worst %s %u + %u x tlsf "
               "worst free %u + %u (%s)\n",
               own[k]->max <= bound[k] ? "PASS" : "FAIL", what[k], own[k]->max, bound[k], what[k],
               tlsf[k]->max, RTM_MT_BATCH, m.tlsf_free.max, WCET_MT_SLACK, d);
    }
    printf("  refused, then every pending remote free taken back, then retried (no target: "
           "one TLSF free per pending block):\n");
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        if (s->allocator != AL_MT_TLSF || s->scenario != SC_MT_TAKEBACK)
            continue;
        wcet_describe_sample(d, sizeof d, s);
        printf("    %u instructions: %s\n", s->count, d);
    }
}

int wcet_report_text(const wcet_all *all, const wcet_config *cfg)
{
    row_stats st[ROW_COUNT], tlsf[ROW_COUNT];
    memset(tlsf, 0, sizeof tlsf);
    for (unsigned al = 0; al < AL_COUNT; al++) {
        if (!all->selected[al])
            continue;
        print_allocator(all, al, st);
        if (al == AL_TLSF)
            memcpy(tlsf, st, sizeof st);
    }
    print_summary(all);
    int pass = all->selected[AL_TLSF] ? tlsf_verdict(tlsf, cfg) : 1;
    if (all->selected[AL_MT_TLSF])
        mt_verdict(all);
    return pass;
}

/* --- CSV --------------------------------------------------------------- */

int wcet_report_csv(const char *path, const wcet_all *all)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "allocator,kind,function,scenario,variant,size,instructions,foreign,syscalls,"
               "case\n");
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        char d[300];
        if (wcet_rows[s->row].kind == WCET_SELFTEST)
            continue;
        wcet_describe(d, sizeof d, s->scenario, s->variant, s->size);
        for (char *c = d; *c; c++)
            *c = *c == ',' ? ';' : *c;
        fprintf(f, "%s,%s,%s,%s,%u,%llu,%u,%u,%u,%s\n", wcet_allocators[s->allocator].name,
                wcet_rows[s->row].name, wcet_rows[s->row].function,
                wcet_scenario_names[s->scenario], s->variant, (unsigned long long)s->size, s->count,
                s->foreign, s->syscalls, d);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* --- traces ------------------------------------------------------------- */

/* objdump's text for the addresses in the traces, when objdump exists: the
 * trace file then reads as the executed instruction sequence. */
typedef struct disasm {
    uint64_t *addr; /* sorted, unique */
    char **text;
    size_t n;
} disasm;

static int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static const char *disasm_find(const disasm *d, uint64_t a)
{
    const uint64_t *p = d->n ? bsearch(&a, d->addr, d->n, sizeof a, by_addr) : NULL;
    return p ? d->text[p - d->addr] : NULL;
}

static void disasm_load(disasm *d, const wcet_all *all)
{
    size_t total = 0;
    memset(d, 0, sizeof *d);
    const wcet_trace *const *worst = &all->worst[0][0];
    for (unsigned r = 0; r < AL_COUNT * ROW_COUNT; r++)
        total += worst[r] ? worst[r]->len : 0;
    d->addr = malloc((total + 1) * sizeof *d->addr);
    d->text = calloc(total + 1, sizeof *d->text);
    if (d->addr == NULL || d->text == NULL)
        return;
    for (unsigned r = 0; r < AL_COUNT * ROW_COUNT; r++)
        for (size_t i = 0; worst[r] && i < worst[r]->len; i++)
            d->addr[d->n++] = worst[r]->rip[i];
    qsort(d->addr, d->n, sizeof *d->addr, by_addr);
    size_t u = 0;
    for (size_t i = 0; i < d->n; i++)
        if (u == 0 || d->addr[u - 1] != d->addr[i])
            d->addr[u++] = d->addr[i];
    d->n = u;
    char exe[512], cmd[600];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1); /* popen's child is not us */
    if (len <= 0 || strchr(exe, '\'') != NULL)
        return;
    exe[len] = '\0';
    snprintf(cmd, sizeof cmd, "objdump -d --no-show-raw-insn '%s' 2>/dev/null", exe);
    FILE *p = popen(cmd, "r");
    char line[512];
    while (p != NULL && fgets(line, sizeof line, p) != NULL) {
        char *end;
        uint64_t a = strtoull(line, &end, 16);
        if (end == line || *end != ':')
            continue;
        const uint64_t *hit = bsearch(&a, d->addr, d->n, sizeof a, by_addr);
        if (hit != NULL) {
            line[strcspn(line, "\n")] = '\0';
            char *t = end + 1;
            t += strspn(t, " \t");
            d->text[hit - d->addr] = strdup(t);
        }
    }
    if (p != NULL)
        pclose(p);
}

/* Instructions per function along one trace, in order of first appearance. */
static void trace_breakdown(FILE *f, const wcet_trace *t)
{
    const char *names[32];
    unsigned counts[32], n = 0;
    for (size_t i = 0; i < t->len; i++) {
        uint64_t off;
        const char *name = wcet_symbols_name(t->rip[i], &off);
        unsigned j = 0;
        name = name ? name : "?";
        while (j < n && strcmp(names[j], name) != 0)
            j++;
        if (j == n && n < 32) {
            names[n] = name;
            counts[n++] = 0;
        }
        if (j < n)
            counts[j]++;
    }
    fprintf(f, "  by function:");
    for (unsigned j = 0; j < n; j++)
        fprintf(f, " %s %u%s", names[j], counts[j], j + 1 < n ? "," : "\n");
}

int wcet_report_traces(const char *path, const wcet_all *all)
{
    FILE *f = fopen(path, "w");
    disasm d;
    if (f == NULL)
        return -1;
    disasm_load(&d, all);
    for (unsigned k = 0; k < AL_COUNT * ROW_COUNT; k++) {
        unsigned al = k / ROW_COUNT, r = k % ROW_COUNT;
        const wcet_trace *t = all->worst[al][r];
        char desc[300];
        if (t == NULL || wcet_rows[r].kind == WCET_SELFTEST)
            continue;
        wcet_describe_sample(desc, sizeof desc, &t->sample);
        fprintf(f, "== %s %s (%s): %u instructions; %s\n", wcet_allocators[al].name,
                wcet_rows[r].name, wcet_rows[r].function, t->sample.count, desc);
        trace_breakdown(f, t);
        for (size_t i = 0; i < t->len; i++) {
            uint64_t off;
            const char *name = wcet_symbols_name(t->rip[i], &off);
            const char *text = disasm_find(&d, t->rip[i]);
            fprintf(f, "  %4zu  %#llx  %s+%#llx\t%s\n", i + 1, (unsigned long long)t->rip[i],
                    name ? name : "?", (unsigned long long)off, text ? text : "");
        }
        fprintf(f, "\n");
    }
    for (size_t i = 0; i < d.n; i++)
        free(d.text[i]);
    free(d.text);
    free(d.addr);
    return fclose(f) == 0 ? 0 : -1;
}
