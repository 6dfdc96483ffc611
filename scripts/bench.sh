#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: scripts/bench.sh BUILD_DIR
#
# `make bench` calls this after building: it runs every command of the lab
# (BUILD_DIR/rtmem) with the profile below, chosen so that the whole run
# takes about 11 minutes on a 2-core machine, and writes BUILD_DIR/report/:
#
#   <name>.txt    the command's tables (its stdout)
#   <name>.log    its progress (stderr, also shown on the terminal)
#   <name>.json   its --json results (schemas: docs/RESULTS.md)
#   runs.tsv      each command line, exit status and seconds
#   index.html    the report with PNG charts (scripts/report.py), which
#                 scripts/publish-report.sh copies to docs/images/
#
# Names are the commands with _ for space (bench_random), as the schemas in
# docs/schema/ are named. A command that fails, hangs past BENCH_TIMEOUT
# seconds (default 900) or is not built is recorded as such, the others
# still run, the report is still written, and the script then exits 1.
#
# BENCH_QUICK=1 runs every command's --quick profile instead (about 3
# minutes here: for trying the script; too long for a ctest, whose pieces
# are tested apart: lab.json.* and report.*). BENCH_REPORT=DIR writes the
# report elsewhere. The report folder's generated files are removed first,
# so a report never mixes two runs.
set -uo pipefail

build=${1:?usage: scripts/bench.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
exe=$build/rtmem
if [ ! -x "$exe" ]; then
  echo "bench: $exe not found; build first (make build)" >&2
  exit 1
fi
report=${BENCH_REPORT:-$build/report}
quick=
[ "${BENCH_QUICK:-0}" = 1 ] && quick=1
limit=${BENCH_TIMEOUT:-900}

# The profile: NAME | ARGUMENTS | ARGUMENTS OF THE FULL PROFILE ONLY; under
# BENCH_QUICK=1 the last field is replaced by --quick.
# Each command's own default profile except the sweep, whose default (256
# windows x 9 allocators) alone would take over 10 minutes here: every 256
# bytes instead of 64 gives 64 windows, enough for the curves' shape. The
# times are estimates for a quiet 2-core machine, from the commands' help
# and their quick runs (a loaded machine stretches them):
#   memcheck --all ~0.5 min, bench random ~0.5-1 min, --sweep ~3 min,
#   bench threads 1.5-3 min, limits ~0.5 min, wcet ~1 min, latency ~1 min (its
#   two contended-heap tests, locked and mt, add a few seconds).
# bench threads runs twice: first with every block written (--seed-write),
#   the comparison that counts and the report's lead; then the original's
#   untouched blocks (seed002 only, 3 runs), which measures page faults
#   avoided and is labelled so (docs/MALLOC.md). The written run adds the mt
#   heap (mt:tlsf, issue 31) to the default allocators and takes 4 runs
#   instead of 5, so that it costs about what it did: its children are the
#   cheap ones (the locked heap's 4-thread runs are the dear ones).
# bench random --grow: 3 rounds of 500,000 replacements instead of 5 of 2,000,000
#   (the tail it shows is in the fill); its default took 50 s wall (12 s user)
#   on a loaded machine, this profile a few seconds.
# bench zram: every 256 bytes up to 8192 (33 windows + the zram case; the
#   page limits of xvmalloc and zsmalloc are at 4096, its full default runs
#   to 16,320 by 64): measured 106 s wall (42 s user + 25 s sys) at load
#   average 20; the malloc peers' per-point processes take most of it.
# cpp_pmr: an ARGUMENTS field starting with @ names another program of the
#   build folder (rtmem-pmr-bench, the C++ container workload of
#   docs/CPP.md; built when a C++17 compiler exists): 3 rounds instead of
#   5 (its --quick, 2 rounds of 20,000 operations, took 82 s wall at load
#   average 20; this profile is not yet timed on a quiet machine).
# workloads: @rtmem-workloads is scripts/workloads.py linked into the build
#   folder (bench/workloads/CMakeLists.txt; docs/MALLOC.md "Workloads"), the
#   classic allocator workloads and real programs under glibc, the peers and
#   rtmem, with its --quick inputs (2 rounds, smaller inputs, about a
#   minute): the default inputs take about 6.5 CPU minutes per round
#   (measured: 2 rounds, 13.8 min wall, 13 min CPU), too close to the 900 s
#   limit; `build/rtmem-workloads` alone runs them.
profile=(
  "memcheck|memcheck --all"
  "bench_random|bench random --allocators tlsf,tlsf_cached,halffit,glibc,mimalloc,jemalloc,tcmalloc"
  "bench_random_sweep|bench random --sweep|--sweep-step 256"
  "bench_random_grow|bench random --grow|--runs 3 --iterations 500000"
  "bench_zram|bench zram|--sweep-step 256 --sweep-max 8192"
  "bench_threads|bench threads --seed-write --allocators glibc,mimalloc,jemalloc,tcmalloc,rtmem,locked:tlsf,mt:tlsf|--runs 4"
  "bench_threads_untouched|bench threads --bench seed002|--runs 3"
  "limits|limits"
  "wcet|wcet"
  "latency|latency"
  "cpp_pmr|@rtmem-pmr-bench|--rounds 3"
  "workloads|@rtmem-workloads|--quick"
)

mkdir -p "$report"
rm -f "$report"/*.txt "$report"/*.log "$report"/*.json "$report"/*.png "$report"/index.html \
  "$report"/runs.tsv
commit=$(git -C "$here/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$here/.." status --porcelain 2>/dev/null | grep -q . && commit="$commit (with uncommitted changes)"
{
  echo "# started: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# commit: $commit"
  if [ -n "$quick" ]; then echo "# profile: quick (BENCH_QUICK=1)"; else echo "# profile: default"; fi
} > "$report/runs.tsv"

status=0
total=${#profile[@]}
t_start=$SECONDS

# run NAME ARGS...: one command, its stdout to NAME.txt, its stderr to the
# terminal and NAME.log, its exit status and seconds to runs.tsv.
run() {
  local name=$1 i=$2
  shift 2
  local prog=$exe shown="rtmem $*"
  if [ "${1#@}" != "$1" ]; then # another program of the build folder
    prog=$build/${1#@}
    shift
    shown="$(basename "$prog") $*"
  fi
  echo "bench: [$i/$total] $shown (elapsed $((SECONDS - t_start)) s)" >&2
  if [ ! -x "$prog" ]; then
    echo "bench: [$i/$total] skipped: $prog is not built (C++17 compiler missing?)" >&2
    printf '%s\tskipped\t\t%s\n' "$name" "$(basename "$prog") not built in this configuration" \
      >> "$report/runs.tsv"
    return
  fi
  if [ "$1" = wcet ] && [ ! -x "$build/rtmem-wcet" ]; then
    echo "bench: [$i/$total] skipped: $build/rtmem-wcet is not built (x86-64 Linux only)" >&2
    printf '%s\tskipped\t\t%s\n' "$name" "rtmem-wcet not built in this configuration" \
      >> "$report/runs.tsv"
    return
  fi
  local t0=$SECONDS rc
  timeout --signal=TERM --kill-after=10 "$limit" \
    "$prog" "$@" --json "$report/$name.json" \
    > "$report/$name.txt" 2> >(tee "$report/$name.log" >&2)
  rc=$?
  [ "$rc" -eq 124 ] && echo "bench: $shown: stopped after $limit s (BENCH_TIMEOUT)" >&2
  printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t0))" "$shown" >> "$report/runs.tsv"
  if [ "$rc" -ne 0 ]; then
    echo "bench: [$i/$total] $shown exited $rc (see $report/$name.txt and .log)" >&2
    status=1
  fi
}

i=0
for entry in "${profile[@]}"; do
  i=$((i + 1))
  IFS='|' read -r name args full <<< "$entry"
  [ -n "$quick" ] && full=--quick
  # shellcheck disable=SC2086  # the arguments are words on purpose
  run "$name" "$i" $args $full
done
wait # the tee of the last command's stderr

# Real traces (docs/TRACE.md): python3, sqlite3 and gcc recorded, replayed
# and fitted; the report's "Real traces" section.
echo "bench: real traces (scripts/trace_bench.sh)" >&2
"$here/trace_bench.sh" "$build" "$report" || status=1

echo "bench: all commands done in $((SECONDS - t_start)) s; writing the report" >&2
py=$(command -v python3 || true)
[ -z "$py" ] && [ -x /usr/bin/python3 ] && py=/usr/bin/python3
if [ -z "$py" ]; then
  echo "bench: python3 not found: no index.html (the text and JSON are in $report;" \
    "scripts/deps.sh bench installs python3 and matplotlib)" >&2
  exit 1
fi
"$py" "$here/report.py" "$report" || status=1
echo "bench: report written to $report/index.html (text and JSON beside it)" >&2
[ "$status" -eq 0 ] || echo "bench: some commands failed: see runs.tsv and the report" >&2
exit $status
