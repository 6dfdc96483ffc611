#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks what a shared library exports against what its public headers
# declare (ctest exported_symbols.*). The libraries are built with hidden
# visibility, so a name in `nm -D` that no header declares is an internal
# function that lost its `static` or its hiding; a declared function missing
# from `nm -D` lost its export macro (RTM_API, RTM_MALLOC_EXPORT).
#
# Usage:
#   scripts/check-exports.sh library LIB.so EXTRA_REGEX HEADER...
#       every defined dynamic symbol of LIB.so must be a function declared in
#       one of the HEADERs or match EXTRA_REGEX (an extended regular
#       expression; empty: none), and every declared function must be there.
#   scripts/check-exports.sh disjoint A.so B.so
#       no name may be exported by both (a program linking both would get
#       one of them at random, by link order).
#   scripts/check-exports.sh declared HEADER...
#       prints the functions the headers declare (what the checks use).
# NM names the nm to use (default nm). Exit 0: clean; 1: a difference
# (listed), or a list that came out empty (headers that declare no
# function, a library that exports nothing, an nm that failed: a check of
# nothing would pass); 2: misuse.
set -euo pipefail
nm=${NM:-nm}

usage() {
  sed -n '/^# Usage:/,/^# NM names/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The function names declared in C headers: comments, preprocessor lines and
# brace bodies (structs, enums, extern "C") are dropped, the rest is split at
# ';', typedefs are skipped, and a declaration's name is the identifier just
# before its first '(' once attribute-like macros (FOO(...)) are removed.
declared() {
  perl -0777 -ne '
    s{/\*.*?\*/}{ }gs;          # block comments
    s{//[^\n]*}{}g;             # line comments
    s{\\\n}{ }g;                # continued lines
    s{^[ \t]*#[^\n]*}{}mg;      # preprocessor lines
    s{extern\s*"C"\s*\{}{ }g;   # the C++ guard opens a brace
    1 while s{\{[^{}]*\}}{ }g;  # struct, union and enum bodies
    s{\}}{ }g;                  # the C++ guard closes it
    s{__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)}{ }g;
    s{\b[A-Z][A-Z0-9_]*\s*\([^()]*\)}{ }g;   # FOO(x) attribute macros
    for my $decl (split /;/) {
      next if $decl =~ /^\s*typedef\b/;
      print "$1\n" if $decl =~ /^[^(]*?\b([A-Za-z_]\w*)\s*\(/;
    }' "$@" | sort -u
}

# The defined dynamic symbols of a shared library, without version suffixes
# and without the markers some linkers add; exit 1 when nm fails.
exported() {
  local syms
  syms=$("$nm" -D --defined-only "$1") || { echo "check-exports: $nm -D $1 failed" >&2; return 1; }
  echo "$syms" | awk 'NF >= 3 {print $3}' | sed 's/@.*//' \
    | grep -Ev '^(_init|_fini|_edata|_end|__bss_start|_DYNAMIC|_GLOBAL_OFFSET_TABLE_)$' \
    | sort -u || true
}

# Fails the check when a list it compares is empty: every comparison with
# an empty list passes, so it would check nothing.
nonempty() {
  if [ -z "$(echo "$2" | sed '/^$/d')" ]; then
    echo "check-exports: $1: none, so nothing would be checked"
    exit 1
  fi
}

mode=${1:-}
case "$mode" in
  declared)
    shift
    [ $# -ge 1 ] || usage
    declared "$@"
    ;;
  library)
    [ $# -ge 4 ] || usage
    lib=$2 extra=$3
    shift 3
    [ -f "$lib" ] || { echo "check-exports: $lib not found" >&2; exit 2; }
    decl=$(declared "$@")
    exp=$(exported "$lib") || exit 1
    nonempty "functions declared in $*" "$decl"
    nonempty "names exported by $lib" "$exp"
    # Exported, neither declared nor in the allowed family.
    extra_names=$(comm -23 <(echo "$exp") <(echo "$decl") | sed '/^$/d')
    if [ -n "$extra" ]; then
      extra_names=$(echo "$extra_names" | grep -Ev "$extra" || true)
    fi
    missing=$(comm -13 <(echo "$exp") <(echo "$decl") | sed '/^$/d')
    name=$(basename "$lib")
    status=0
    if [ -n "$extra_names" ]; then
      echo "$name exports $(echo "$extra_names" | wc -l) name(s) its public headers do not declare:"
      echo "$extra_names" | sed 's/^/  /'
      status=1
    fi
    if [ -n "$missing" ]; then
      echo "$name does not export $(echo "$missing" | wc -l) function(s) its headers declare:"
      echo "$missing" | sed 's/^/  /'
      status=1
    fi
    if [ $status -eq 0 ]; then
      echo "$name: exports $(echo "$exp" | sed '/^$/d' | wc -l) names, every one declared" \
           "(or allowed), all $(echo "$decl" | sed '/^$/d' | wc -l) declared functions exported"
    fi
    exit $status
    ;;
  disjoint)
    [ $# -eq 3 ] || usage
    for lib in "$2" "$3"; do
      [ -f "$lib" ] || { echo "check-exports: $lib not found" >&2; exit 2; }
    done
    exp2=$(exported "$2") || exit 1
    exp3=$(exported "$3") || exit 1
    nonempty "names exported by $2" "$exp2"
    nonempty "names exported by $3" "$exp3"
    both=$(comm -12 <(echo "$exp2") <(echo "$exp3") | sed '/^$/d')
    if [ -n "$both" ]; then
      echo "$(basename "$2") and $(basename "$3") both export $(echo "$both" | wc -l) name(s):"
      echo "$both" | sed 's/^/  /'
      exit 1
    fi
    echo "$(basename "$2") and $(basename "$3") export no name in common"
    ;;
  *) usage ;;
esac
