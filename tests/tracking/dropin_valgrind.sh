#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/tracking/dropin_valgrind.sh -- the drop-in malloc under valgrind
# memcheck (issue 17.3). valgrind replaces malloc only in libc and the
# program by default, so with librtmem-malloc.so preloaded:
#   1. plain `valgrind`: the drop-in's own malloc runs (its blocks are
#      memory valgrind did not hand out, so it checks nothing inside them);
#      the run must be clean: no error, exit 0, and the program's malloc
#      is the drop-in's;
#   2. `valgrind --soname-synonyms=somalloc=librtmem-malloc.so*`: valgrind
#      redirects the drop-in's malloc family to its own and sees every
#      block as a malloc: the clean program stays clean and a one-byte
#      overflow is reported ("Invalid write of size 1").
# That is how to debug a program that uses the drop-in: docs/TESTING.md.
#
#   dropin_valgrind.sh PROGRAM LIBRARY     (exit 77 without valgrind)
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 DROPIN_PROGRAM librtmem-malloc.so" >&2
  exit 2
fi
prog=$1 lib=$2
if ! command -v valgrind >/dev/null 2>&1; then
  echo "SKIP: valgrind is not installed (Debian: apt-get install valgrind)"
  exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
vg=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)
synonym=--soname-synonyms=somalloc=$(basename "$lib" | sed 's/\.so.*/.so*/')

expect() { # NAME WANT_RC PATTERN COMMAND...
  local name=$1 want=$2 pattern=$3
  shift 3
  LD_PRELOAD=$lib "$@" >"$out" 2>&1
  local rc=$?
  if { [ "$want" = 0 ] && [ $rc -eq 0 ]; } || { [ "$want" != 0 ] && [ $rc -ne 0 ]; } &&
     grep -Eq "$pattern" "$out"; then
    echo "ok   $name: $(grep -Em1 "$pattern" "$out" | sed 's/^==[0-9]*== //')"
  else
    echo "FAIL $name (exit $rc, expected /$pattern/):"
    sed 's/^/     /' "$out" | head -40
    fail=1
  fi
}

expect "plain valgrind, drop-in interposed, clean" 0 \
  "malloc provider: .*$(basename "$lib" | sed 's/\.so.*//')" "${vg[@]}" "$prog" clean
grep -q "ERROR SUMMARY: 0 errors" "$out" || { echo "FAIL: errors in the plain run"; fail=1; }
expect "soname synonym, clean" 0 "ERROR SUMMARY: 0 errors" "${vg[@]}" "$synonym" "$prog" clean
expect "soname synonym, overflow reported" 1 "Invalid write of size 1" \
  "${vg[@]}" "$synonym" "$prog" overflow
exit $fail
