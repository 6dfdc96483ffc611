/*
 * tools/wcet/report.c -- turns the samples into what the issue asks for:
 * per measured function min / mean / p99 / max with the case that gave the
 * max, a per-scenario table, any code reached outside rtmem, the worst
 * alloc and free against the 120-instruction budget next to the published
 * figures of other TLSFs, plus the JSON document and the worst-path traces.
 *
 * p99 is the nearest-rank percentile: the smallest count that at least 99 %
 * of the calls do not exceed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
};

const char *const wcet_scenario_names[SC_COUNT] = {
    "self-test",  "random-replace", "split-huge",  "exact-fit",  "probe-fit",
    "good-fit",   "classes",        "merge-none",  "merge-left", "merge-right",
    "merge-both", "enomem",         "double-free", "aligned",    "realloc",
};

/* The published worst cases the issue compares with (alloc / free). */
static const struct {
    const char *name;
    unsigned alloc, free;
} published[] = {{"TLSF 2.4.6", 193, 218}, {"mattconte/tlsf", 208, 197}, {"o1heap", 104, 98}};

typedef struct row_stats {
    size_t n;
    uint32_t min, p99, max;
    double mean;
    uint64_t foreign, syscalls, foreign_calls;
    uint64_t foreign_at[4]; /* distinct first foreign addresses */
    const wcet_sample *worst;
} row_stats;

static int by_count(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void note_foreign(row_stats *st, const wcet_sample *s)
{
    st->foreign += s->foreign;
    st->syscalls += s->syscalls;
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

/* Statistics of the samples matching row (and scenario, unless sc < 0). */
static row_stats stats_of(const wcet_all *all, unsigned row, int sc)
{
    row_stats st;
    memset(&st, 0, sizeof st);
    uint32_t *v = malloc((all->count + 1) * sizeof *v);
    double sum = 0;
    if (v == NULL)
        return st;
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        if (s->row != row || (sc >= 0 && s->scenario != (unsigned)sc))
            continue;
        v[st.n++] = s->count;
        sum += s->count;
        if (st.worst == NULL || s->count > st.worst->count)
            st.worst = s;
        if (s->foreign != 0)
            note_foreign(&st, s);
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

static void describe(char *buf, size_t len, const wcet_sample *s)
{
    char d[200];
    wcet_describe(d, sizeof d, s->scenario, s->variant, s->size);
    snprintf(buf, len, "%s: %s", wcet_scenario_names[s->scenario], d);
}

/* --- text --------------------------------------------------------------- */

static void print_rows(const wcet_all *all, row_stats *st)
{
    printf("%-15s %-18s %7s %5s %7s %5s %5s  %s\n", "kind", "function", "calls", "min", "mean",
           "p99", "max", "scenario of the max");
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        st[r] = stats_of(all, r, -1);
        if (wcet_rows[r].kind == WCET_SELFTEST || st[r].n == 0)
            continue;
        printf("%-15s %-18s %7zu %5u %7.1f %5u %5u  %s\n", wcet_rows[r].name, wcet_rows[r].function,
               st[r].n, st[r].min, st[r].mean, st[r].p99, st[r].max,
               wcet_scenario_names[st[r].worst->scenario]);
    }
    printf("\nworst case of each kind:\n");
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        char d[300];
        if (wcet_rows[r].kind == WCET_SELFTEST || st[r].n == 0)
            continue;
        describe(d, sizeof d, st[r].worst);
        printf("  %-15s %4u  %s\n", wcet_rows[r].name, st[r].max, d);
    }
}

/* Max per (scenario, row): which states cost most for which call. */
static void print_scenarios(const wcet_all *all)
{
    static const char *const head[ROW_COUNT] = {
        [ROW_ALLOC] = "alloc",          [ROW_FREE] = "free",
        [ROW_TLSF_ALLOC] = "t_alloc",   [ROW_TLSF_FREE] = "t_free",
        [ROW_ALIGNED_64] = "al_64",     [ROW_ALIGNED_4096] = "al_4096",
        [ROW_REALLOC_GROW] = "re_grow", [ROW_REALLOC_SHRINK] = "re_shrink"};
    printf("\nmax instructions per scenario (t_ = typed rtm_tlsf_*, - = not measured there):\n");
    printf("%-15s", "scenario");
    for (unsigned r = ROW_ALLOC; r < ROW_COUNT; r++)
        printf(" %9s", head[r]);
    printf("\n");
    for (unsigned sc = 1; sc < SC_COUNT; sc++) {
        row_stats st[ROW_COUNT];
        int any = 0;
        for (unsigned r = ROW_ALLOC; r < ROW_COUNT; r++) {
            st[r] = stats_of(all, r, (int)sc);
            any |= st[r].n > 0;
        }
        if (!any)
            continue;
        printf("%-15s", wcet_scenario_names[sc]);
        for (unsigned r = ROW_ALLOC; r < ROW_COUNT; r++) {
            if (st[r].n > 0)
                printf(" %9u", st[r].max);
            else
                printf(" %9s", "-");
        }
        printf("\n");
    }
}

static void print_foreign(const row_stats *st)
{
    int any = 0;
    printf("\ncode outside rtmem reached by measured calls (libc, vdso, syscalls):");
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        if (wcet_rows[r].kind == WCET_SELFTEST || st[r].foreign_calls == 0)
            continue;
        any = 1;
        printf("\n  %-15s %llu calls, %llu instructions, %llu syscalls; first at",
               wcet_rows[r].name, (unsigned long long)st[r].foreign_calls,
               (unsigned long long)st[r].foreign, (unsigned long long)st[r].syscalls);
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
static unsigned worst_of_kind(const row_stats *st, enum wcet_row_kind kind)
{
    unsigned best = ROW_COUNT;
    for (unsigned r = 0; r < ROW_COUNT; r++)
        if (wcet_rows[r].kind == kind && st[r].n > 0 &&
            (best == ROW_COUNT || st[r].max > st[best].max))
            best = r;
    return best;
}

int wcet_report_text(const wcet_all *all, const wcet_config *cfg)
{
    row_stats st[ROW_COUNT];
    print_rows(all, st);
    print_scenarios(all);
    print_foreign(st);
    unsigned a = worst_of_kind(st, WCET_ALLOC), f = worst_of_kind(st, WCET_FREE);
    if (a == ROW_COUNT || f == ROW_COUNT) {
        printf("\nno alloc or free measured (--only?): no verdict\n");
        return 1;
    }
    char da[300], df[300];
    describe(da, sizeof da, st[a].worst);
    describe(df, sizeof df, st[f].worst);
    printf("\nworst alloc: %u instructions (%s, %s)\n", st[a].max, wcet_rows[a].function, da);
    printf("worst free:  %u instructions (%s, %s)\n", st[f].max, wcet_rows[f].function, df);
    printf("published (alloc/free):");
    for (size_t i = 0; i < sizeof published / sizeof published[0]; i++)
        printf("%s %s %u/%u", i ? "," : "", published[i].name, published[i].alloc,
               published[i].free);
    printf("; rtmem %u/%u\n", st[a].max, st[f].max);
    int pass = st[a].max <= WCET_TARGET && st[f].max <= WCET_TARGET;
    printf("%s: worst alloc %u, worst free %u, target <= %u instructions each%s\n",
           pass ? "PASS" : "FAIL", st[a].max, st[f].max, WCET_TARGET,
           cfg->quick ? " (quick profile: fewer states than the full run)" : "");
    return pass;
}

/* --- JSON --------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_row(FILE *f, const wcet_all *all, unsigned r, const row_stats *st)
{
    char d[300];
    describe(d, sizeof d, st->worst);
    fprintf(f,
            "    {\"kind\": \"%s\", \"function\": \"%s\", \"budgeted\": %s, \"calls\": %zu, "
            "\"min\": %u, \"mean\": %.2f, \"p99\": %u, \"max\": %u, ",
            wcet_rows[r].name, wcet_rows[r].function,
            wcet_rows[r].kind == WCET_EXTRA ? "false" : "true", st->n, st->min, st->mean, st->p99,
            st->max);
    fprintf(f, "\"worst_scenario\": \"%s\", \"worst_case\": ",
            wcet_scenario_names[st->worst->scenario]);
    json_str(f, d);
    fprintf(f, ", \"foreign_instructions\": %llu, \"syscalls\": %llu,\n     \"scenarios\": {",
            (unsigned long long)st->foreign, (unsigned long long)st->syscalls);
    int first = 1;
    for (unsigned sc = 1; sc < SC_COUNT; sc++) {
        row_stats s = stats_of(all, r, (int)sc);
        if (s.n == 0)
            continue;
        fprintf(f,
                "%s\"%s\": {\"calls\": %zu, \"min\": %u, \"mean\": %.2f, \"p99\": %u, "
                "\"max\": %u}",
                first ? "" : ", ", wcet_scenario_names[sc], s.n, s.min, s.mean, s.p99, s.max);
        first = 0;
    }
    fprintf(f, "}}");
}

int wcet_report_json(const char *path, const wcet_all *all, const wcet_config *cfg, int repeat_ok)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    row_stats st[ROW_COUNT];
    for (unsigned r = 0; r < ROW_COUNT; r++)
        st[r] = stats_of(all, r, -1);
    unsigned a = worst_of_kind(st, WCET_ALLOC), fr = worst_of_kind(st, WCET_FREE);
    fprintf(f, "{\n  \"tool\": \"rtmem-wcet\",\n  \"method\": \"ptrace single-step, x86-64\",\n");
    fprintf(f, "  \"profile\": \"%s\", \"seed\": %llu, \"iterations\": %lu,\n",
            cfg->quick ? "quick" : "full", (unsigned long long)cfg->seed, cfg->iterations);
    fprintf(f, "  \"classes_top_log2\": %u, \"classes_per_octave\": %u,\n", cfg->class_top_log2,
            cfg->per_octave);
    fprintf(f, "  \"selftest_ok\": true, \"repeat_identical\": %s,\n  \"rows\": [\n",
            repeat_ok ? "true" : "false");
    int first = 1;
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        if (wcet_rows[r].kind == WCET_SELFTEST || st[r].n == 0)
            continue;
        fprintf(f, "%s", first ? "" : ",\n");
        json_row(f, all, r, &st[r]);
        first = 0;
    }
    fprintf(f, "\n  ],\n  \"target\": %u,\n", WCET_TARGET);
    if (a < ROW_COUNT && fr < ROW_COUNT)
        fprintf(f, "  \"worst_alloc\": %u, \"worst_free\": %u, \"pass\": %s,\n", st[a].max,
                st[fr].max,
                st[a].max <= WCET_TARGET && st[fr].max <= WCET_TARGET ? "true" : "false");
    fprintf(f, "  \"published\": {");
    for (size_t i = 0; i < sizeof published / sizeof published[0]; i++)
        fprintf(f, "%s\"%s\": {\"alloc\": %u, \"free\": %u}", i ? ", " : "", published[i].name,
                published[i].alloc, published[i].free);
    fprintf(f, "}\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

/* --- CSV --------------------------------------------------------------- */

int wcet_report_csv(const char *path, const wcet_all *all)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "kind,function,scenario,variant,size,instructions,foreign,syscalls,case\n");
    for (size_t i = 0; i < all->count; i++) {
        const wcet_sample *s = &all->samples[i];
        char d[300];
        if (wcet_rows[s->row].kind == WCET_SELFTEST)
            continue;
        wcet_describe(d, sizeof d, s->scenario, s->variant, s->size);
        for (char *c = d; *c; c++)
            *c = *c == ',' ? ';' : *c;
        fprintf(f, "%s,%s,%s,%u,%llu,%u,%u,%u,%s\n", wcet_rows[s->row].name,
                wcet_rows[s->row].function, wcet_scenario_names[s->scenario], s->variant,
                (unsigned long long)s->size, s->count, s->foreign, s->syscalls, d);
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
    for (unsigned r = 0; r < ROW_COUNT; r++)
        total += all->worst[r] ? all->worst[r]->len : 0;
    d->addr = malloc((total + 1) * sizeof *d->addr);
    d->text = calloc(total + 1, sizeof *d->text);
    if (d->addr == NULL || d->text == NULL)
        return;
    for (unsigned r = 0; r < ROW_COUNT; r++)
        for (size_t i = 0; all->worst[r] && i < all->worst[r]->len; i++)
            d->addr[d->n++] = all->worst[r]->rip[i];
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
    for (unsigned r = 0; r < ROW_COUNT; r++) {
        const wcet_trace *t = all->worst[r];
        char desc[300];
        if (t == NULL || wcet_rows[r].kind == WCET_SELFTEST)
            continue;
        describe(desc, sizeof desc, &t->sample);
        fprintf(f, "== %s (%s): %u instructions; %s\n", wcet_rows[r].name, wcet_rows[r].function,
                t->sample.count, desc);
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
