// SPDX-License-Identifier: MIT
/*
 * tools/wcet/symbols.c -- which instructions are rtmem's: a function table
 * read from the ELF symbol table of our own executable (/proc/self/exe).
 *
 * Why: the issue asks for a count of rtmem's instructions only, and for a
 * loud report if a measured call strays into libc (errno's
 * __errno_location, memcpy, a syscall) or outside the program text (vdso).
 * The executable is linked statically, so libc's code sits in the same text
 * segment as rtmem's and a segment test alone cannot tell them apart; the
 * symbol table can:
 *  - a global function named rtm_* is rtmem's (the public prefix);
 *  - a local function (static helpers, GCC's "*.cold" parts of hot
 *    functions) is rtmem's when the STT_FILE symbol that precedes it in the
 *    table names one of rtmem's sources (CMake passes their names);
 *  - everything else, and any address outside an executable PT_LOAD
 *    segment, is foreign.
 *
 * The table is loaded once in the parent before any fork, so the tracers
 * share it without copying. Addresses are corrected by the load bias, which
 * is 0 for the static non-PIE build but keeps a static-pie build right.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wcet.h"

typedef struct fn_range {
    uint64_t lo, hi; /* [lo, hi) at run time */
    const char *name;
    int library;
} fn_range;

typedef struct text_range {
    uint64_t lo, hi;
} text_range;

static char *image;   /* the executable's bytes; names point into it */
static fn_range *fns; /* sorted by lo, duplicates merged             */
static size_t fn_count;
static text_range texts[8]; /* executable PT_LOAD segments */
static size_t text_count;

static int fail(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "symbols: %s", what);
    return -1;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && fseek(f, 0, SEEK_SET) == 0) {
            buf = malloc((size_t)n);
            if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                buf = NULL;
            }
            *len = (size_t)n;
        }
    }
    fclose(f);
    return buf;
}

/* Is `file` (an STT_FILE name, maybe with directories) one of the
 * semicolon-separated names in `list`? */
static int file_listed(const char *list, const char *file)
{
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    size_t n = strlen(base);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, base, n) == 0)
            return 1;
        p += len + (end ? 1u : 0u);
    }
    return 0;
}

static int by_address(const void *a, const void *b)
{
    const fn_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return y->library - x->library; /* library aliases first */
}

/* Sorts the table and folds aliases (same start) into one entry that is
 * the library's if any alias is. */
static void sort_and_merge(void)
{
    qsort(fns, fn_count, sizeof *fns, by_address);
    size_t out = 0;
    for (size_t i = 0; i < fn_count; i++) {
        if (out > 0 && fns[out - 1].lo == fns[i].lo) {
            if (fns[i].hi > fns[out - 1].hi)
                fns[out - 1].hi = fns[i].hi;
            continue;
        }
        fns[out++] = fns[i];
    }
    fn_count = out;
}

/* Collects the function symbols of the symbol table at `sh`. */
static int collect(const Elf64_Ehdr *eh, const Elf64_Shdr *sh, const char *library_files)
{
    const Elf64_Shdr *shdrs = (const Elf64_Shdr *)(const void *)(image + eh->e_shoff);
    const char *strtab = image + shdrs[sh->sh_link].sh_offset;
    const Elf64_Sym *syms = (const Elf64_Sym *)(const void *)(image + sh->sh_offset);
    size_t n = sh->sh_size / sizeof(Elf64_Sym);
    fns = calloc(n, sizeof *fns);
    if (fns == NULL)
        return -1;
    const char *file = "";
    for (size_t i = 0; i < n; i++) {
        const Elf64_Sym *s = &syms[i];
        const char *name = strtab + s->st_name;
        if (ELF64_ST_TYPE(s->st_info) == STT_FILE) {
            file = name;
            continue;
        }
        if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || s->st_shndx == SHN_UNDEF || s->st_size == 0)
            continue;
        int local = ELF64_ST_BIND(s->st_info) == STB_LOCAL;
        fns[fn_count].lo = s->st_value;
        fns[fn_count].hi = s->st_value + s->st_size;
        fns[fn_count].name = name;
        fns[fn_count].library =
            local ? file_listed(library_files, file) : strncmp(name, "rtm_", 4) == 0;
        fn_count++;
    }
    return 0;
}

/* The load bias: where wcet_marker runs minus where the table puts it. */
static int apply_bias(void)
{
    uint64_t marker = (uint64_t)(uintptr_t)wcet_marker, table = 0;
    for (size_t i = 0; i < fn_count; i++)
        if (strcmp(fns[i].name, "wcet_marker") == 0)
            table = fns[i].lo;
    if (table == 0)
        return -1;
    uint64_t bias = marker - table;
    for (size_t i = 0; i < fn_count; i++) {
        fns[i].lo += bias;
        fns[i].hi += bias;
    }
    for (size_t i = 0; i < text_count; i++) {
        texts[i].lo += bias;
        texts[i].hi += bias;
    }
    return 0;
}

static void collect_text(const Elf64_Ehdr *eh)
{
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(const void *)(image + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum && text_count < 8; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) != 0) {
            texts[text_count].lo = ph[i].p_vaddr;
            texts[text_count].hi = ph[i].p_vaddr + ph[i].p_memsz;
            text_count++;
        }
    }
}

int wcet_symbols_load(const char *library_files, char *err, size_t errlen)
{
    size_t len = 0;
    image = read_file("/proc/self/exe", &len);
    if (image == NULL || len < sizeof(Elf64_Ehdr))
        return fail(err, errlen, "cannot read /proc/self/exe");
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)image;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return fail(err, errlen, "/proc/self/exe is not a 64-bit ELF file");
    collect_text(eh);
    const Elf64_Shdr *shdrs = (const Elf64_Shdr *)(const void *)(image + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (shdrs[i].sh_type == SHT_SYMTAB) {
            if (collect(eh, &shdrs[i], library_files) != 0)
                return fail(err, errlen, "out of memory");
            break;
        }
    }
    if (fn_count == 0)
        return fail(err, errlen, "no symbol table (stripped binary?): cannot classify code");
    if (apply_bias() != 0)
        return fail(err, errlen, "wcet_marker not in the symbol table");
    sort_and_merge();
    return 0;
}

static const fn_range *lookup(uint64_t addr)
{
    size_t lo = 0, hi = fn_count;
    while (lo < hi) { /* first entry with lo > addr */
        size_t mid = lo + (hi - lo) / 2;
        if (fns[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || addr >= fns[lo - 1].hi)
        return NULL;
    return &fns[lo - 1];
}

int wcet_symbols_in_text(uint64_t addr)
{
    for (size_t i = 0; i < text_count; i++)
        if (addr >= texts[i].lo && addr < texts[i].hi)
            return 1;
    return 0;
}

int wcet_symbols_is_library(uint64_t addr)
{
    if (!wcet_symbols_in_text(addr))
        return 0;
    const fn_range *f = lookup(addr);
    return f != NULL && f->library;
}

const char *wcet_symbols_name(uint64_t addr, uint64_t *offset)
{
    const fn_range *f = lookup(addr);
    *offset = f ? addr - f->lo : 0;
    return f ? f->name : NULL;
}
