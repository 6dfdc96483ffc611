// SPDX-License-Identifier: MIT
/*
 * opts.c -- the option parser (opts.h).
 *
 * Numbers are parsed strictly: no sign, no trailing text, no overflow, so
 * that "--slots -1" or "--iterations 1e6" is a usage error (exit 2) instead
 * of a huge or truncated value silently measured. An output file (--json)
 * that cannot be written is a usage error here too, before the command
 * measures anything: a run of minutes must not end in "cannot write".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/opts.h"

void opts_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rtmem %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int opts_usage_error(const char *cmd)
{
    fprintf(stderr, "Try 'rtmem%s%s --help'.\n", cmd != NULL ? " " : "", cmd != NULL ? cmd : "");
    return 2;
}

int opts_close_stdout(const char *cmd)
{
    /* fflush reports a write that fails now; ferror one that failed in an
     * earlier, automatic flush (a full buffer), whose errno is gone. */
    errno = 0;
    int bad = fflush(stdout) != 0;
    int err = errno;
    if (ferror(stdout))
        bad = 1;
    if (!bad)
        return 0;
    fprintf(stderr, "rtmem%s%s: standard output: %s\n", cmd != NULL ? " " : "",
            cmd != NULL ? cmd : "",
            err != 0 ? strerror(err) : "a write failed, the output is incomplete");
    return -1;
}

static int parse_u64(const char *text, uint64_t *out, char **end)
{
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(text, end, 10);
    if (errno != 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int opts_parse_size(const char *text, uint64_t *out)
{
    char *end;
    uint64_t v;
    if (parse_u64(text, &v, &end) != 0)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0':
        break;
    case 'k':
    case 'K':
        shift = 10;
        break;
    case 'm':
    case 'M':
        shift = 20;
        break;
    case 'g':
    case 'G':
        shift = 30;
        break;
    default:
        return -1;
    }
    if (*end != '\0' && end[1] != '\0')
        return -1;
    if (shift != 0 && v > (UINT64_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

static int parse_i64(const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0')
        return -1;
    *out = (int64_t)v;
    return 0;
}

static int parse_dbl(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Stores text into the option's destination. Returns 0 or -1. */
static int store(opt_spec *s, const char *text)
{
    char *end;
    switch (s->kind) {
    case OPT_U64:
        return parse_u64(text, s->dst, &end) == 0 && *end == '\0' ? 0 : -1;
    case OPT_SIZE:
        return opts_parse_size(text, s->dst);
    case OPT_I64:
        return parse_i64(text, s->dst);
    case OPT_DBL:
        return parse_dbl(text, s->dst);
    case OPT_STR:
        *(const char **)s->dst = text;
        return 0;
    case OPT_FLAG:
        *(int *)s->dst = 1;
        return 0;
    }
    return -1;
}

static opt_spec *find(opt_spec *specs, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(specs[i].name) == len && strncmp(specs[i].name, name, len) == 0)
            return &specs[i];
    return NULL;
}

/* What each kind accepts, for the message naming a bad value. */
static const char *const expected[] = {
    [OPT_U64] = "an unsigned decimal integer",
    [OPT_SIZE] = "a size in bytes (123, 64k, 2m, 1g)",
    [OPT_I64] = "a decimal integer",
    [OPT_DBL] = "a number",
    [OPT_STR] = "a text",
    [OPT_FLAG] = "no value",
};

/* Handles argv[*i]; advances *i past a separate value. */
static int parse_one(const char *cmd, int argc, char **argv, int *i, opt_spec *specs, size_t n)
{
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
        opts_error(cmd, "unexpected argument '%s'", arg);
        return OPTS_BAD;
    }
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq != NULL ? (size_t)(eq - name) : strlen(name);
    opt_spec *s = find(specs, n, name, len);
    if (s == NULL) {
        opts_error(cmd, "unknown option '--%.*s'", (int)len, name);
        return OPTS_BAD;
    }
    const char *value = eq != NULL ? eq + 1 : NULL;
    if (s->kind == OPT_FLAG && value != NULL) {
        opts_error(cmd, "option '--%s' takes no value", s->name);
        return OPTS_BAD;
    }
    if (s->kind != OPT_FLAG && value == NULL) {
        if (*i + 1 >= argc) {
            opts_error(cmd, "option '--%s' needs a value", s->name);
            return OPTS_BAD;
        }
        value = argv[++*i];
    }
    if (store(s, value != NULL ? value : "") != 0) {
        opts_error(cmd, "--%s: expected %s, got '%s'", s->name, expected[s->kind], value);
        return OPTS_BAD;
    }
    s->set = 1;
    return OPTS_OK;
}

/* "--json -": standard output is the JSON's from here on (json.c). */
static int json_to_stdout(const char *cmd, const opt_spec *specs, size_t nspecs)
{
    for (size_t i = 0; i < nspecs; i++) {
        if (strcmp(specs[i].name, "json") != 0 || !specs[i].set || specs[i].kind != OPT_STR)
            continue;
        const char *path = *(const char **)specs[i].dst;
        if (path != NULL && strcmp(path, "-") == 0 && json_claim_stdout() != 0) {
            opts_error(cmd, "--json -: cannot reserve standard output: %s", strerror(errno));
            return OPTS_BAD;
        }
    }
    return OPTS_OK;
}

int opts_writable(const char *path)
{
    struct stat st;
    if (path[0] == '\0') {
        errno = ENOENT;
        return -1;
    }
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return -1;
        }
        return access(path, W_OK);
    }
    if (errno != ENOENT)
        return -1;
    /* A new file: its directory must exist and take new entries. */
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return access(".", W_OK | X_OK);
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(len + 1);
    if (dir == NULL)
        return -1;
    memcpy(dir, path, len);
    dir[len] = '\0';
    int r = -1;
    if (stat(dir, &st) != 0)
        r = -1;
    else if (!S_ISDIR(st.st_mode))
        errno = ENOTDIR;
    else
        r = access(dir, W_OK | X_OK);
    int saved = errno;
    free(dir);
    errno = saved;
    return r;
}

/* Every --json path ("-" aside) must be writable now, not after the run. */
static int outputs_writable(const char *cmd, const opt_spec *specs, size_t nspecs)
{
    for (size_t i = 0; i < nspecs; i++) {
        if (strcmp(specs[i].name, "json") != 0 || !specs[i].set || specs[i].kind != OPT_STR)
            continue;
        const char *path = *(const char **)specs[i].dst;
        if (path != NULL && strcmp(path, "-") != 0 && opts_writable(path) != 0) {
            opts_error(cmd, "cannot write --json %s: %s", path, strerror(errno));
            return OPTS_BAD;
        }
    }
    return OPTS_OK;
}

int opts_parse(int argc, char **argv, opt_spec *specs, size_t nspecs)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return OPTS_HELP;
        if (parse_one(argv[0], argc, argv, &i, specs, nspecs) != OPTS_OK)
            return OPTS_BAD;
    }
    if (outputs_writable(argv[0], specs, nspecs) != OPTS_OK)
        return OPTS_BAD;
    return json_to_stdout(argv[0], specs, nspecs);
}

int opts_parse_or_exit(int argc, char **argv, opt_spec *specs, size_t nspecs, void (*usage)(FILE *))
{
    int r = opts_parse(argc, argv, specs, nspecs);
    if (r == OPTS_HELP) {
        usage(stdout);
        return 0;
    }
    if (r == OPTS_BAD)
        return opts_usage_error(argv[0]);
    return OPTS_GO_ON;
}

int opts_given(const opt_spec *specs, size_t nspecs, const char *name)
{
    for (size_t i = 0; i < nspecs; i++)
        if (strcmp(specs[i].name, name) == 0)
            return specs[i].set;
    return 0;
}
