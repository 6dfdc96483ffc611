#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/malloc/check_symbols.sh HEAP_SO MALLOC_SO HEAP_A MALLOC_A -- fails
# when librtmem and librtmem-malloc define a global symbol of the same name:
# exported by both shared libraries (a preloaded librtmem-malloc.so would
# take librtmem.so's calls), or defined by both static archives (linking
# both would fail, or pick one silently). docs/MALLOC.md, "Names".
# Exit 77 (ctest SKIP_RETURN_CODE) when nm is not installed.
set -u
[ $# -eq 4 ] || { echo "usage: $0 HEAP_SO MALLOC_SO HEAP_A MALLOC_A" >&2; exit 2; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed"; exit 77; }

# Defined global (upper-case type) symbol names, one a line, sorted. gcc's
# i386 PIC helpers (__x86.get_pc_thunk.*) are left out: every object that
# needs one carries it in a COMDAT group the linker keeps once, so two
# archives holding them never clash (the -m32 stage listed them).
dynamic() { nm -D --defined-only "$1" | awk 'NF == 3 && $2 ~ /[A-Z]/ { print $3 }' | sort -u; }
archive() {
    nm --defined-only "$1" 2>/dev/null |
        awk 'NF == 3 && $2 ~ /[A-Z]/ && $3 !~ /^__x86\.get_pc_thunk\./ { print $3 }' | sort -u
}

status=0
for kind in dynamic archive; do
    if [ $kind = dynamic ]; then a=$1 b=$2; else a=$3 b=$4; fi
    na=$($kind "$a" | wc -l)
    nb=$($kind "$b" | wc -l)
    # An empty list would make the comparison pass vacuously.
    if [ "$na" -eq 0 ] || [ "$nb" -eq 0 ]; then
        echo "FAIL: no defined symbols read from $a ($na) or $b ($nb)"
        status=1
        continue
    fi
    common=$(comm -12 <($kind "$a") <($kind "$b"))
    if [ -n "$common" ]; then
        echo "FAIL: defined by both $(basename "$a") and $(basename "$b"):"
        echo "$common" | sed 's/^/    /'
        status=1
    else
        echo "ok: $(basename "$a") ($na symbols) and $(basename "$b") ($nb) share no $kind symbol"
    fi
done
exit $status
