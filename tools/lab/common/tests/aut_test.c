// SPDX-License-Identifier: MIT
/*
 * aut_test.c -- unit test of the allocator-under-test type (common/aut.h):
 * each kind from its name, the command's own names, a kind the command does
 * not accept, empty, too long and unknown names, the list's errors, and a
 * missing peer or drop-in reported as missing (RTMEM_BENCH_LIB_<NAME>
 * pointed at a file that does not exist), a present one as found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/aut.h"
#include "common/tests/check.h"

static const char *const own[] = {"mmap", NULL};
static const aut_rules all = {AUT_ACCEPT(AUT_RTM) | AUT_ACCEPT(AUT_LOCKED) | AUT_ACCEPT(AUT_MT) |
                                  AUT_ACCEPT_MALLOC | AUT_ACCEPT(AUT_OWN),
                              own, "test names"};

static void kinds(void)
{
    aut a;
    char why[160];
    CHECK(aut_parse("tlsf", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_RTM && strcmp(a.heap, "tlsf") == 0 && a.peer == NULL);
    CHECK(!aut_is_malloc(&a) && !aut_preloads(&a));
    CHECK(aut_parse("pool:4096", &all, &a, why, sizeof why) == 0 && a.kind == AUT_RTM);
    CHECK(aut_parse("locked:tlsf", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_LOCKED && strcmp(a.heap, "tlsf") == 0 &&
          strcmp(a.name, "locked:tlsf") == 0);
    CHECK(aut_is_shared_heap(&a));
    CHECK(aut_parse("mt:tlsf", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_MT && strcmp(a.heap, "tlsf") == 0 && aut_is_shared_heap(&a) &&
          !aut_is_malloc(&a) && !aut_preloads(&a));
    CHECK(aut_parse("mt:halffit", &all, &a, why, sizeof why) == 0 && a.kind == AUT_MT);
    CHECK(strcmp(aut_kind_name(AUT_MT), "mt heap") == 0);
    CHECK(aut_parse("glibc", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_LIBC && a.peer != NULL && aut_is_malloc(&a) && !aut_preloads(&a));
    CHECK(aut_parse("mimalloc", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_PEER && strcmp(a.peer->name, "mimalloc") == 0 && aut_preloads(&a));
    CHECK(aut_parse("rtmem", &all, &a, why, sizeof why) == 0);
    CHECK(a.kind == AUT_DROPIN && aut_is_malloc(&a) && aut_preloads(&a));
    CHECK(aut_parse("mmap", &all, &a, why, sizeof why) == 0 && a.kind == AUT_OWN);
    CHECK(strcmp(aut_kind_name(AUT_DROPIN), "drop-in") == 0);
}

static void refusals(void)
{
    aut a;
    char why[160];
    static const aut_rules heaps = {AUT_ACCEPT(AUT_RTM), NULL, "rtm heap names"};
    CHECK(aut_parse("", &all, &a, why, sizeof why) == -1 && strstr(why, "empty") != NULL);
    CHECK(aut_parse("nosuchmalloc", &all, &a, why, sizeof why) == -1);
    CHECK(strstr(why, "unknown allocator 'nosuchmalloc'") && strstr(why, "test names"));
    CHECK(aut_parse("locked:nosuchheap", &all, &a, why, sizeof why) == -1);
    CHECK(aut_parse("locked:glibc", &all, &a, why, sizeof why) == -1);
    /* The mt heap refuses the fixed-size pool and unknown algorithms. */
    CHECK(aut_parse("mt:pool", &all, &a, why, sizeof why) == -1 && strstr(why, "unknown"));
    CHECK(aut_parse("mt:pool:4096", &all, &a, why, sizeof why) == -1);
    CHECK(aut_parse("mt:nosuch", &all, &a, why, sizeof why) == -1);
    CHECK(aut_parse("mt:", &all, &a, why, sizeof why) == -1);
    CHECK(aut_parse("mt:glibc", &all, &a, why, sizeof why) == -1);
    /* Known, but not a kind this command measures. */
    CHECK(aut_parse("glibc", &heaps, &a, why, sizeof why) == -1 && strstr(why, "unknown"));
    CHECK(aut_parse("locked:tlsf", &heaps, &a, why, sizeof why) == -1);
    CHECK(aut_parse("mt:tlsf", &heaps, &a, why, sizeof why) == -1);
    CHECK(aut_parse("mmap", &heaps, &a, why, sizeof why) == -1);
    char longname[AUT_NAME_MAX + 8];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK(aut_parse(longname, &all, &a, why, sizeof why) == -1 && strstr(why, "too long"));
    longname[AUT_NAME_MAX] = '\0'; /* exactly AUT_NAME_MAX characters: one too many */
    CHECK(aut_parse(longname, &all, &a, why, sizeof why) == -1 && strstr(why, "too long"));
}

static void lists(void)
{
    aut out[4];
    char why[160];
    CHECK(aut_parse_list("tlsf,glibc,locked:buddy", &all, out, 4, why, sizeof why) == 3);
    CHECK(out[0].kind == AUT_RTM && out[1].kind == AUT_LIBC && out[2].kind == AUT_LOCKED);
    CHECK(aut_parse_list("tlsf", &all, out, 1, why, sizeof why) == 1);
    CHECK(aut_parse_list("", &all, out, 4, why, sizeof why) == 0 && strstr(why, "empty"));
    CHECK(aut_parse_list(",", &all, out, 4, why, sizeof why) == 0 && strstr(why, "empty name"));
    CHECK(aut_parse_list("tlsf,,glibc", &all, out, 4, why, sizeof why) == 0);
    CHECK(aut_parse_list("tlsf,", &all, out, 4, why, sizeof why) == 0);
    CHECK(aut_parse_list("tlsf,tlsf", &all, out, 4, why, sizeof why) == 0 &&
          strstr(why, "twice") != NULL);
    CHECK(aut_parse_list("tlsf,buddy", &all, out, 1, why, sizeof why) == 0 &&
          strstr(why, "more than 1") != NULL);
    CHECK(aut_parse_list("tlsf,nosuch", &all, out, 4, why, sizeof why) == 0 &&
          strstr(why, "'nosuch'") != NULL);
}

static void locate(const char *self)
{
    aut a;
    char why[160], lib[4096];
    CHECK(aut_parse("tlsf", &all, &a, why, sizeof why) == 0);
    CHECK(aut_locate(&a, lib, sizeof lib) == LAB_OK && lib[0] == '\0');
    CHECK(aut_parse("glibc", &all, &a, why, sizeof why) == 0);
    CHECK(aut_locate(&a, lib, sizeof lib) == LAB_OK && lib[0] == '\0');
    /* A missing peer is reported as such, not found elsewhere. */
    setenv("RTMEM_BENCH_LIB_MIMALLOC", "/no/such/dir/libmimalloc.so.2", 1);
    CHECK(aut_parse("mimalloc", &all, &a, why, sizeof why) == 0);
    CHECK(aut_locate(&a, lib, sizeof lib) == LAB_NOT_INSTALLED && lib[0] == '\0');
    setenv("RTMEM_BENCH_LIB_RTMEM", "/no/such/dir/librtmem-malloc.so", 1);
    CHECK(aut_parse("rtmem", &all, &a, why, sizeof why) == 0);
    CHECK(aut_locate(&a, lib, sizeof lib) == LAB_NOT_BUILT && lib[0] == '\0');
    /* A readable file given is found (the check of what it is is the
     * child's: peer_verify). */
    setenv("RTMEM_BENCH_LIB_MIMALLOC", self, 1);
    CHECK(aut_parse("mimalloc", &all, &a, why, sizeof why) == 0);
    CHECK(aut_locate(&a, lib, sizeof lib) == LAB_OK && strcmp(lib, self) == 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    kinds();
    refusals();
    lists();
    locate(argv[0]);
    if (failures != 0) {
        fprintf(stderr, "aut_test: %d checks failed\n", failures);
        return 1;
    }
    printf("aut_test: all checks passed\n");
    return 0;
}
