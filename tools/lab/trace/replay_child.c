// SPDX-License-Identifier: MIT
/*
 * replay_child.c -- the measuring child of a malloc row of `rtmem replay`
 * (replay.c spawns `rtmem replay FILE --child NAME ...` under LD_PRELOAD).
 *
 * The child checks that the malloc it was asked to measure is the one
 * serving its calls (peers.h), loads the trace, resets the kernel's
 * resident-set high-water mark (/proc/self/clear_refs "5") so the loading
 * does not count, notes the resident set, replays, and prints one RESULT
 * line (result_line.h): the numbers, the footprint (VmHWM minus the resident
 * set before the replay, or the largest sampled growth if larger) and the
 * live/held samples as "call:live:held" triples.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/replay_cmd.h"
#include "common/result_line.h"

/* Tabs and newlines would end a field early. */
static void sanitise(char *s)
{
    for (; *s; s++)
        if (*s == '\t' || *s == '\n')
            *s = ' ';
}

static void reset_hwm(void)
{
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, "5", 1) != 1) {
        /* an older kernel: the high-water mark then includes the loading */
    }
    close(fd);
}

static int fail(const replay_opts *o, const char *why)
{
    printf("RESULT\talloc=%s\tok=0\twhy=%s\n", o->child, why);
    return 1;
}

int replay_child(const replay_opts *o)
{
    static const aut_rules mallocs = {AUT_ACCEPT_MALLOC, NULL, "glibc and the peers"};
    aut a;
    char bad[160];
    if (aut_parse(o->child, &mallocs, &a, bad, sizeof bad) != 0)
        return fail(o, "not a malloc");
    const peer *p = a.peer;
    char why[768], from[256], version[96];
    int valid =
        peer_verify(p, o->child_lib, why, sizeof why, from, sizeof from, version, sizeof version);
    sanitise(why);
    sanitise(from);
    static trace t;
    char err[512];
    if (trace_load(o->file, &t, err, sizeof err) != 0) {
        sanitise(err);
        return fail(o, err);
    }
    trace_truncate(&t, (size_t)o->limit);
    bench_clock clk = {(int)o->child_tsc, o->child_tick_ns, o->child_cost, 0};
    static replay_result res;
    reset_hwm();
    uint64_t base = replay_rss_now();
    replay_target tg = replay_malloc_target(&base);
    if (replay_run(&t, &tg, &clk, 0, &res) != 0)
        return fail(o, "out of memory");
    uint64_t hwm = replay_rss_peak();
    uint64_t foot = hwm > base ? hwm - base : 0;
    for (size_t i = 0; i < res.nsamples; i++)
        if (res.sample[i].held > foot)
            foot = res.sample[i].held;
    static rp_row row;
    replay_fill_row(&row, &res, &clk);
    printf("RESULT\talloc=%s\tok=1\tvalid=%d\twhy=%s\tfrom=%s", o->child, valid, why, from);
    printf("\tops=%llu\trefused=%llu\tskipped=%llu\ttimed=%llu\tfootprint=%llu",
           (unsigned long long)row.ops, (unsigned long long)row.refused,
           (unsigned long long)row.skipped, (unsigned long long)row.timed,
           (unsigned long long)foot);
    for (unsigned k = 0; k < RP_NQ; k++)
        printf("\t%s=%.2f", rp_quantile_names[k], row.q_ns[k]);
    printf("\talloc_max=%.2f\tfree_max=%.2f\talloc_p99=%.2f\tfree_p99=%.2f", row.alloc_max_ns,
           row.free_max_ns, row.alloc_p99_ns, row.free_p99_ns);
    printf("\tsamples=");
    for (size_t i = 0; i < row.nsamples; i++)
        printf("%s%llu:%llu:%llu", i ? "," : "", (unsigned long long)row.sample[i].call,
               (unsigned long long)row.sample[i].live, (unsigned long long)row.sample[i].held);
    printf("\n");
    trace_free(&t);
    return fflush(stdout) == 0 ? 0 : 1;
}

static void parse_samples(const char *line, rp_row *row)
{
    const char *s = strstr(line, "\tsamples=");
    row->nsamples = 0;
    if (s == NULL)
        return;
    s += 9;
    while (*s != '\0' && *s != '\t' && *s != '\n' && row->nsamples < REPLAY_SAMPLES + 1) {
        char *end;
        replay_sample *x = &row->sample[row->nsamples];
        x->call = strtoull(s, &end, 10);
        if (*end != ':')
            return;
        x->live = strtoull(end + 1, &end, 10);
        if (*end != ':')
            return;
        x->held = strtoull(end + 1, &end, 10);
        row->nsamples++;
        s = *end == ',' ? end + 1 : end;
    }
}

int replay_parse_child(const char *out, rp_row *row)
{
    const char *line = strstr(out, "RESULT\t");
    if (line == NULL)
        return -1;
    line_field(line, "why", row->why, sizeof row->why);
    line_field(line, "from", row->from, sizeof row->from);
    if (line_field_u64(line, "ok") != 1)
        return -1;
    if (line_field_u64(line, "valid") != 1) {
        row->status = "invalid";
        return -1;
    }
    row->status = "ok";
    row->why[0] = '\0';
    row->ops = line_field_u64(line, "ops");
    row->refused = line_field_u64(line, "refused");
    row->skipped = line_field_u64(line, "skipped");
    row->timed = line_field_u64(line, "timed");
    row->footprint = line_field_u64(line, "footprint");
    for (unsigned k = 0; k < RP_NQ; k++)
        row->q_ns[k] = line_field_num(line, rp_quantile_names[k]);
    row->alloc_max_ns = line_field_num(line, "alloc_max");
    row->free_max_ns = line_field_num(line, "free_max");
    row->alloc_p99_ns = line_field_num(line, "alloc_p99");
    row->free_p99_ns = line_field_num(line, "free_p99");
    parse_samples(line, row);
    return 0;
}
