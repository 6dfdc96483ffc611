#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/count_loop.sh -- per free + alloc pair counts of the random-replace
# loop under cachegrind (scripts/count_loop.c): instructions, L1
# data misses (read + write) and mispredicted branches, each the count at
# 400,000 iterations less the count at 100,000, over 300,000. No timing
# noise: the figures repeat exactly on any x86-64 machine with this build.
#
# usage: scripts/count_loop.sh BUILD_DIR ALGORITHM|malloc [PRELOAD_LIBRARY]
#   scripts/count_loop.sh build tlsf_cached
#   scripts/count_loop.sh build malloc /lib/x86_64-linux-gnu/libmimalloc.so.2
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: scripts/count_loop.sh BUILD_DIR ALGORITHM|malloc [PRELOAD_LIBRARY]" >&2
  exit 2
fi
build=$1 algorithm=$2 preload=${3:-}
command -v valgrind >/dev/null 2>&1 || { echo "count_loop.sh: valgrind is not installed (Debian: valgrind)" >&2; exit 1; }
[ -f "$build/librtmem.a" ] || { echo "count_loop.sh: $build/librtmem.a not found (build first: make)" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -I"$here/include" "$here/scripts/count_loop.c" "$build/librtmem.a" -o "$work/count_loop"
count() {
  if [ -n "$preload" ]; then
    LD_PRELOAD=$preload valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
      --cachegrind-out-file=/dev/null "$work/count_loop" "$algorithm" "$1" 2>"$work/$1.txt"
  else
    valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
      --cachegrind-out-file=/dev/null "$work/count_loop" "$algorithm" "$1" 2>"$work/$1.txt"
  fi
}
count 100000
count 400000
python3 - "$work/100000.txt" "$work/400000.txt" "$algorithm" <<'PY'
import re, sys
def totals(path):
    text = open(path).read()
    def n(label):
        return int(re.search(label + r":\s+([\d,]+)", text).group(1).replace(",", ""))
    return n(r"I\s+refs"), n(r"D1\s+misses"), n(r"Mispredicts")
short, long_ = totals(sys.argv[1]), totals(sys.argv[2])
per = [(b - a) / 300000 for a, b in zip(short, long_)]
print("%s: %.1f instructions, %.2f D1 misses, %.2f mispredicted branches per pair"
      % (sys.argv[3], per[0], per[1], per[2]))
PY
