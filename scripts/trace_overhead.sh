#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: scripts/trace_overhead.sh BUILD_DIR [RUNS]
#
# The recorder's overhead (docs/TRACE.md) on two malloc-heavy programs:
# python3 running scripts/trace_workloads/alloc.py and sqlite3 running
# scripts/trace_workloads/sqlite.sql (when installed), each without and with
# `rtmem record`, RUNS times (default 5), interleaved (plain, recorded,
# plain, ...) so that a disturbance on a shared machine hits both. Counts
# CPU seconds (user + system of the program and its children, from
# /usr/bin/time), not wall-clock time: on a loaded shared machine the wall
# clock mostly measures the wait for a CPU. Prints every run on stderr, then per program the calls
# recorded, min and median of each, and the ratio of the medians.
set -euo pipefail
build=${1:?usage: scripts/trace_overhead.sh BUILD_DIR [RUNS]}
runs=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=$here/trace_workloads
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

secs() { # CMD...: CPU seconds (user + system, children included) of one run
  /usr/bin/time -f '%U %S' -o "$tmp/time" "$@" > /dev/null 2>&1
  awk '{ print $1 + $2 }' "$tmp/time"
}

measure() { # NAME CMD...
  local name=$1 plain=() rec=() i
  shift
  for i in $(seq "$runs"); do
    plain+=("$(secs "$@")")
    rec+=("$(secs "$build/rtmem" record -o "$tmp/t.trace" -- "$@")")
    echo "$name run $i: plain ${plain[-1]} s, recorded ${rec[-1]} s" >&2
  done
  local calls mid pmin pmed rmin rmed
  calls=$("$build/rtmem" trace stats "$tmp/t.trace" | sed -n 's/^calls: \([0-9]*\).*/\1/p')
  printf '%s\n' "${plain[@]}" | sort -n > "$tmp/p"
  printf '%s\n' "${rec[@]}" | sort -n > "$tmp/r"
  mid=$(((runs + 1) / 2))
  pmin=$(head -1 "$tmp/p") pmed=$(sed -n "${mid}p" "$tmp/p")
  rmin=$(head -1 "$tmp/r") rmed=$(sed -n "${mid}p" "$tmp/r")
  printf '| %s | %s | %.3f | %.3f | %.3f | %.3f | %.2f |\n' "$name" "$calls" "$pmin" "$pmed" \
    "$rmin" "$rmed" "$(echo "$rmed / $pmed" | bc -l)"
}

printf '| program | calls | plain min (CPU s) | plain median | recorded min (CPU s) | recorded median | median ratio |\n'
printf '|---|---|---|---|---|---|---|\n'
measure python3 "$py" "$work/alloc.py"
if command -v sqlite3 > /dev/null; then
  measure sqlite3 sqlite3 :memory: ".read $work/sqlite.sql"
fi
