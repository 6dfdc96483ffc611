// SPDX-License-Identifier: MIT
/*
 * peers.c -- locating peer allocator libraries and verifying, inside a child
 * process, that LD_PRELOAD took effect (peers.h).
 *
 * Function addresses are compared as object pointers. ISO C has no
 * conversion between the two, so they go through memcpy, which is exact on
 * every POSIX target (POSIX requires dlsym() results to be usable both ways).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "common/peers.h"

static const peer peers[] = {
    {"glibc", NULL, {NULL, NULL, NULL}},
    {"mimalloc", "mi_version", {"libmimalloc.so.2", "libmimalloc.so", NULL}},
    {"jemalloc", "mallctl", {"libjemalloc.so.2", "libjemalloc.so", NULL}},
    /* tcmalloc_minimal is the allocator alone; the full library adds the heap
     * profiler's hooks, so it is only the fallback. */
    {"tcmalloc", "tc_version", {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4", NULL}},
    /* rtmem's own drop-in malloc (src/malloc/), built beside this program:
     * "$ORIGIN/" as ld.so spells it (peer_locate). rtm_malloc_stats is in
     * include/rtmem/malloc.h, which librtmem itself does not define. */
    {"rtmem", "rtm_malloc_stats", {"$ORIGIN/librtmem-malloc.so", NULL, NULL}},
};

#define PEER_COUNT (sizeof peers / sizeof peers[0])

const peer *peer_find(const char *name)
{
    for (size_t i = 0; i < PEER_COUNT; i++)
        if (strcmp(peers[i].name, name) == 0)
            return &peers[i];
    return NULL;
}

/* The Debian/Ubuntu multiarch directory name of the target we were built
 * for; the library of the running libc gives the same answer at run time
 * and is tried first. */
#if defined(__x86_64__) && defined(__ILP32__)
#define MULTIARCH "x86_64-linux-gnux32"
#elif defined(__x86_64__)
#define MULTIARCH "x86_64-linux-gnu"
#elif defined(__i386__)
#define MULTIARCH "i386-linux-gnu"
#elif defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#elif defined(__arm__)
#define MULTIARCH "arm-linux-gnueabihf"
#elif defined(__riscv) && __riscv_xlen == 64
#define MULTIARCH "riscv64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MULTIARCH "powerpc64le-linux-gnu"
#elif defined(__s390x__)
#define MULTIARCH "s390x-linux-gnu"
#else
#define MULTIARCH ""
#endif

static void *fn_to_ptr(void (*fn)(void))
{
    void *p;
    _Static_assert(sizeof p == sizeof fn, "function and object pointers differ in size");
    memcpy(&p, &fn, sizeof p);
    return p;
}

/* The object file that defines the code at addr, or "" when unknown. */
static const char *object_of(void *addr)
{
    Dl_info info;
    if (addr == NULL || dladdr(addr, &info) == 0 || info.dli_fname == NULL)
        return "";
    return info.dli_fname;
}

/* Directory of the running libc (e.g. /lib/x86_64-linux-gnu), or "". */
static void libc_dir(char *out, size_t n)
{
    out[0] = '\0';
    const char *obj = object_of(dlsym(RTLD_DEFAULT, "printf"));
    const char *slash = strrchr(obj, '/');
    if (slash != NULL && (size_t)(slash - obj) < n)
        snprintf(out, n, "%.*s", (int)(slash - obj), obj);
}

static int try_file(const char *dir, const char *file, char *path, size_t n)
{
    int len = snprintf(path, n, "%s/%s", dir, file);
    if (len < 0 || (size_t)len >= n)
        return -1;
    return access(path, R_OK) == 0 ? 0 : -1;
}

#define MAX_DIRS 12

static void add_dir(char dirs[][PATH_MAX], size_t *n, const char *prefix, const char *dir)
{
    if (*n < MAX_DIRS && dir[0] != '\0')
        snprintf(dirs[(*n)++], PATH_MAX, "%s%s", prefix, dir);
}

/* The directories searched, most specific first. */
static size_t search_dirs(char dirs[][PATH_MAX])
{
    size_t n = 0;
    char libc[PATH_MAX];
    libc_dir(libc, sizeof libc);
    add_dir(dirs, &n, "", libc);
    if (strncmp(libc, "/lib", 4) == 0) /* /lib/<triplet> -> /usr/lib/<triplet> */
        add_dir(dirs, &n, "/usr", libc);
    if (MULTIARCH[0] != '\0') {
        add_dir(dirs, &n, "/usr/lib/", MULTIARCH);
        add_dir(dirs, &n, "/lib/", MULTIARCH);
    }
    static const char *const usual[] = {"/usr/local/lib", "/usr/lib64", "/usr/lib", "/lib64",
                                        "/lib"};
    for (size_t i = 0; i < sizeof usual / sizeof usual[0]; i++)
        add_dir(dirs, &n, "", usual[i]);
    return n;
}

/* The override variable's name: RTMEM_BENCH_LIB_ and the upper-case name. */
static void override_name(const peer *p, char *out, size_t n)
{
    snprintf(out, n, "RTMEM_BENCH_LIB_%s", p->name);
    for (char *c = out; *c != '\0'; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
}

#define ORIGIN "$ORIGIN/"

/* A file named "$ORIGIN/<name>": <name> in the directory of this program
 * (/proc/self/exe), and nowhere else: a build's own library must never be
 * confused with an installed one. */
static int try_origin(const char *file, char *path, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return -1;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    return try_file(exe, file + strlen(ORIGIN), path, n);
}

int peer_is_local(const peer *p)
{
    return p != NULL && p->files[0] != NULL && strncmp(p->files[0], ORIGIN, strlen(ORIGIN)) == 0;
}

int peer_locate(const peer *p, char *path, size_t n)
{
    if (p->marker == NULL)
        return -1;
    char env[64];
    override_name(p, env, sizeof env);
    const char *forced = getenv(env);
    if (forced != NULL && forced[0] != '\0') {
        snprintf(path, n, "%s", forced);
        return access(path, R_OK) == 0 ? 0 : -1;
    }
    char dirs[MAX_DIRS][PATH_MAX];
    size_t nd = search_dirs(dirs);
    for (size_t f = 0; f < 3 && p->files[f] != NULL; f++) {
        if (strncmp(p->files[f], ORIGIN, strlen(ORIGIN)) == 0) {
            if (try_origin(p->files[f], path, n) == 0)
                return 0;
            continue;
        }
        for (size_t d = 0; d < nd; d++)
            if (try_file(dirs[d], p->files[f], path, n) == 0)
                return 0;
    }
    return -1;
}

/* Whether two object paths name the same file (symlinks resolved). */
static int same_object(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (realpath(a, ra) == NULL || realpath(b, rb) == NULL)
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* What the allocator says about its own version; "" when it cannot. */
static void peer_version(const peer *p, char *out, size_t n)
{
    out[0] = '\0';
    void *sym = p != NULL && p->marker != NULL ? dlsym(RTLD_DEFAULT, p->marker) : NULL;
    if (p == NULL) {
        return; /* TLSF: rtmem is linked in, malloc is not what is measured */
    } else if (p->marker == NULL) {
#ifdef __GLIBC__
        snprintf(out, n, "glibc %s", gnu_get_libc_version());
#endif
    } else if (sym != NULL && strcmp(p->name, "mimalloc") == 0) {
        int (*fn)(void);
        memcpy(&fn, &sym, sizeof fn);
        snprintf(out, n, "mi_version %d", fn());
    } else if (sym != NULL && strcmp(p->name, "jemalloc") == 0) {
        int (*fn)(const char *, void *, size_t *, void *, size_t);
        memcpy(&fn, &sym, sizeof fn);
        const char *v = NULL;
        size_t len = sizeof v;
        if (fn("version", &v, &len, NULL, 0) == 0 && v != NULL)
            snprintf(out, n, "jemalloc %.40s", v);
    } else if (sym != NULL && strcmp(p->name, "tcmalloc") == 0) {
        const char *(*fn)(int *, int *, const char **);
        memcpy(&fn, &sym, sizeof fn);
        const char *v = fn(NULL, NULL, NULL);
        snprintf(out, n, "%.60s", v != NULL ? v : "");
    }
}

/* No peer allocator may be loaded in a TLSF or glibc child. */
static int verify_no_peer(char *why, size_t why_n)
{
    for (size_t i = 0; i < PEER_COUNT; i++) {
        if (peers[i].marker != NULL && dlsym(RTLD_DEFAULT, peers[i].marker) != NULL) {
            snprintf(why, why_n, "%s symbol %s is loaded (LD_PRELOAD leaked in?)", peers[i].name,
                     peers[i].marker);
            return 0;
        }
    }
    return 1;
}

/* The glibc case: libc serves malloc (not, say, a sanitizer's), no peer. */
static int verify_libc(const char *malloc_obj, char *why, size_t why_n)
{
    if (!verify_no_peer(why, why_n))
        return 0;
    if (strncmp(base_name(malloc_obj), "libc.", 5) != 0 &&
        strncmp(base_name(malloc_obj), "libc-", 5) != 0) {
        snprintf(why, why_n, "malloc resolves to %s, not libc", malloc_obj);
        return 0;
    }
    return 1;
}

static int verify_preload(const peer *p, const char *expect, const char *malloc_obj,
                          const char *free_obj, char *why, size_t why_n)
{
    void *marker = dlsym(RTLD_DEFAULT, p->marker);
    if (marker == NULL) {
        snprintf(why, why_n, "%s not found: preload of %s not active", p->marker, expect);
        return 0;
    }
    const char *marker_obj = object_of(marker);
    if (!same_object(malloc_obj, expect) || !same_object(free_obj, expect) ||
        !same_object(marker_obj, expect)) {
        snprintf(why, why_n, "malloc from %s, free from %s, %s from %s; expected %s", malloc_obj,
                 free_obj, p->marker, marker_obj, expect);
        return 0;
    }
    return 1;
}

int peer_verify(const peer *p, const char *expect_path, char *why, size_t why_n, char *from,
                size_t from_n, char *version, size_t version_n)
{
    /* &malloc as this program calls it (through the GOT) must be what the
     * dynamic linker's global scope resolves: otherwise something other than
     * a preload interposes, and the row would measure that. */
    void *mine = fn_to_ptr((void (*)(void))malloc);
    void *global = dlsym(RTLD_DEFAULT, "malloc");
    char malloc_obj[PATH_MAX], free_obj[PATH_MAX];
    snprintf(malloc_obj, sizeof malloc_obj, "%s", object_of(global));
    snprintf(free_obj, sizeof free_obj, "%s", object_of(dlsym(RTLD_DEFAULT, "free")));
    snprintf(from, from_n, "%s", malloc_obj);
    peer_version(p, version, version_n);
    why[0] = '\0';
    if (mine != global) {
        snprintf(why, why_n, "malloc called here (%s) is not the global malloc (%s)",
                 object_of(mine), malloc_obj);
        return 0;
    }
    if (p == NULL) /* TLSF: malloc is not measured, only nothing may be preloaded */
        return verify_no_peer(why, why_n);
    if (p->marker == NULL)
        return verify_libc(malloc_obj, why, why_n);
    if (expect_path == NULL || expect_path[0] == '\0') {
        snprintf(why, why_n, "no library given to verify against");
        return 0;
    }
    return verify_preload(p, expect_path, malloc_obj, free_obj, why, why_n);
}
