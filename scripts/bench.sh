#!/usr/bin/env bash
# usage: scripts/bench.sh BUILD_DIR
#
# Runs the benchmark program's two default profiles and writes a report
# folder BUILD_DIR/report/:
#   random.txt, random.json      rtmem bench random (TLSF vs malloc peers)
#   memcheck.txt, memcheck.json  rtmem memcheck --algorithm tlsf
#   REPORT.md                    the key tables and PASS/FAIL lines together
# `make bench` calls it after building. A failing command is still reported;
# the script then exits non-zero. BENCH_QUICK=1 runs the short CI profiles
# instead (--quick), e.g. to try the script itself.
set -uo pipefail

build=${1:?usage: scripts/bench.sh BUILD_DIR}
exe=$build/rtmem
if [ ! -x "$exe" ]; then
  echo "bench: $exe not found; build first (make build)" >&2
  exit 1
fi
report=$build/report
mkdir -p "$report"
quick=
[ "${BENCH_QUICK:-0}" = 1 ] && quick=1
status=0

# run NAME ARGS...: runs rtmem, output to NAME.txt (and the terminal),
# records the exit status and the elapsed time.
run() {
  local name=$1
  shift
  local t0=$SECONDS
  "$exe" "$@" ${quick:+--quick} --json "$report/$name.json" | tee "$report/$name.txt"
  local rc=${PIPESTATUS[0]}
  eval "${name}_rc=$rc ${name}_secs=$((SECONDS - t0))"
  [ "$rc" -eq 0 ] || status=1
}

run random bench random
run memcheck memcheck --algorithm tlsf

commit=$(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$(dirname "$0")/.." status --porcelain 2>/dev/null | grep -q . && echo " (with uncommitted changes)")
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')

{
  echo "# rtmem benchmark report"
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- commit: $commit$dirty"
  echo "- machine: ${cpu:-unknown CPU}, $(nproc) CPUs, Linux $(uname -r)"
  echo "- commands (in the build folder): \`rtmem bench random${quick:+ --quick}\` (exit $random_rc, ${random_secs} s),"
  echo "  \`rtmem memcheck --algorithm tlsf${quick:+ --quick}\` (exit $memcheck_rc, ${memcheck_secs} s)"
  echo "- files: random.txt, random.json, memcheck.txt, memcheck.json"
  echo
  echo "## Speed: seed 003's random-replace loop"
  echo
  echo '```'
  cat "$report/random.txt"
  echo '```'
  echo
  echo "## Memory: the Xenomai memcheck method (overall blocks, published figures, targets)"
  echo
  echo '```'
  sed -n '/^== memcheck summary/,$p' "$report/memcheck.txt"
  echo '```'
  echo
  echo "## PASS/FAIL"
  echo
  grep -E '^  verdict from' "$report/random.txt" | sed 's/^  /- speed: /'
  grep -E '(PASS|FAIL)$' "$report/memcheck.txt" | sed 's/^ */- memcheck: /'
} > "$report/REPORT.md"

echo
echo "bench: report written to $report/REPORT.md (text and JSON beside it)"
exit $status
