#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: scripts/trace_bench.sh BUILD_DIR REPORT_DIR
#
# The "Real traces" part of `make bench` (scripts/bench.sh calls it after the
# lab's commands): records a few real programs present on the machine with
# `rtmem record`, then for each trace runs `rtmem trace stats`, `rtmem
# replay` and `rtmem fit`, writing into REPORT_DIR:
#
#   traces/<prog>.trace                 the recording (never committed)
#   trace_<prog>_stats.json / .txt      rtmem trace stats
#   trace_<prog>_replay.json / .txt     rtmem replay (every allocator)
#   trace_<prog>_fit.json / .txt        rtmem fit (every rtm algorithm)
#   traces.tsv                          program, exit status, seconds, command
#
# The programs: python3 running scripts/trace_workloads/alloc.py, sqlite3
# running scripts/trace_workloads/sqlite.sql (when installed: scripts/deps.sh
# bench installs it), and gcc's compiler proper (cc1) compiling one of the
# repo's C files, recorded directly (the gcc driver only spawns it). A
# program that is not installed is listed as skipped. About a minute on two
# quiet cores. Exit 1 when a step failed, 0 otherwise.
#
# `rtmem fit` also counts the first RTMEM_TRACE_WCET_OPS calls (default 200;
# 0: none) of each trace on every fitted region in exact x86-64 instructions
# (--wcet: single-stepping, about 40 us of CPU and 100+ us of wall time per
# instruction on the loaded 2-core development VM: 300 calls on the 5 heaps
# that fit, 3 traces, added 60 s at load average 15-22; whole traces would
# take hours). Skipped where rtmem-wcet is not built.
set -uo pipefail

build=${1:?usage: scripts/trace_bench.sh BUILD_DIR REPORT_DIR}
report=${2:?usage: scripts/trace_bench.sh BUILD_DIR REPORT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
exe=$build/rtmem
work=$here/trace_workloads
mkdir -p "$report/traces"
rm -f "$report"/trace_*.json "$report"/trace_*.txt "$report/traces"/*.trace* "$report/traces.tsv"
status=0

# step NAME SECONDS-FROM CMD...: runs one step, logs it to traces.tsv.
step() {
  local name=$1
  shift
  local t0=$SECONDS rc
  "$@" > "$report/$name.txt" 2> "$report/$name.log"
  rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "$*" >> "$report/traces.tsv"
  if [ "$rc" -ne 0 ]; then
    echo "trace bench: $name exited $rc (see $report/$name.log)" >&2
    status=1
  fi
  return "$rc"
}

# analyse PROG: stats, replay and fit of traces/PROG.trace.
analyse() {
  local p=$1 t=$report/traces/$1.trace
  echo "trace bench: $p: stats, replay, fit" >&2
  step "trace_${p}_stats" "$exe" trace stats "$t" --json "$report/trace_${p}_stats.json"
  step "trace_${p}_replay" "$exe" replay "$t" --json "$report/trace_${p}_replay.json"
  step "trace_${p}_fit" "$exe" fit "$t" ${wcet_args[@]+"${wcet_args[@]}"} --json "$report/trace_${p}_fit.json"
}

wcet_ops=${RTMEM_TRACE_WCET_OPS:-200}
wcet_args=()
if [ "$wcet_ops" != 0 ] && [ -x "$build/rtmem-wcet" ]; then
  wcet_args=(--wcet --wcet-ops "$wcet_ops")
fi

skip() {
  echo "trace bench: $1 skipped: $2" >&2
  printf '%s\tskipped\t\t%s\n' "trace_$1" "$2" >> "$report/traces.tsv"
}

py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
if [ -n "$py" ]; then
  # record's own exit status is the program's: 0 expected.
  step trace_python3_record "$exe" record -o "$report/traces/python3.trace" -- \
    "$py" "$work/alloc.py" && analyse python3
else
  skip python3 "python3 not installed"
fi

if command -v sqlite3 > /dev/null; then
  step trace_sqlite3_record "$exe" record -o "$report/traces/sqlite3.trace" -- \
    sqlite3 :memory: ".read $work/sqlite.sql" && analyse sqlite3
else
  skip sqlite3 "sqlite3 not installed (scripts/deps.sh bench installs it)"
fi

cc1=$(gcc -print-prog-name=cc1 2> /dev/null || true)
if [ -n "$cc1" ] && [ -x "$cc1" ]; then
  src=$root/src/heaps/tlsf.c
  pre=$report/traces/tlsf.i
  if gcc -E -I"$root/include" -I"$root/src" "$src" -o "$pre" 2> "$report/trace_gcc.log"; then
    step trace_gcc_record "$exe" record -o "$report/traces/gcc.trace" -- \
      "$cc1" -quiet -O2 "$pre" -o "$report/traces/tlsf.s" && analyse gcc
  else
    skip gcc "gcc -E $src failed"
  fi
else
  skip gcc "gcc's cc1 not found"
fi
exit $status
