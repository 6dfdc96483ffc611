#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#
# Builds rtmem's libFuzzer targets (tests/fuzz/CMakeLists.txt, clang with
# -fsanitize=fuzzer,address,undefined) in BUILD_DIR (default build-fuzz),
# then for each target:
#   1. replays every file of tests/fuzz/regressions/<target>/ once;
#   2. fuzzes for SECONDS_PER_TARGET seconds (default 60), one process, from
#      the committed seeds tests/fuzz/corpus/<target>/ plus the inputs found
#      by earlier runs in BUILD_DIR/corpus/<target>/ (new inputs go there:
#      the committed corpus is never written);
# and prints, per target, the executions (stat::number_of_executed_units)
# and the coverage (cov: and ft: of the last status line).
# An input running over 60 s is a timeout (generous: on a loaded 2-core
# machine ASan's own memory release was seen to stall ~30 s once).
# Exit status: 0 when no target crashed, leaked, timed out or failed a
# regression; 1 otherwise, after printing the end of the failing log and
# where libFuzzer saved the input (BUILD_DIR/artifacts/).
#
# Environment: FUZZ_TARGETS (default: all six), FUZZ_CC (default clang),
# FUZZ_JOBS (build parallelism, default 2), FUZZ_FLAGS (more libFuzzer
# flags, e.g. -max_len=8192).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
secs="${1:-60}"
build="${2:-$root/build-fuzz}"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
targets=(${FUZZ_TARGETS:-fuzz_ops fuzz_misuse fuzz_shared_open fuzz_typed fuzz_zsmalloc fuzz_mt})
cc="${FUZZ_CC:-clang}"

if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -eq 0 ]; then
  echo "usage: $0 [SECONDS_PER_TARGET] [BUILD_DIR]" >&2
  exit 2
fi
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "fuzz: $cc not found (libFuzzer needs clang; Debian: apt-get install clang)" >&2
  exit 1
fi

echo "== fuzz: building ${targets[*]} in $build"
mkdir -p "$build/logs"
cmake -S "$here" -B "$build" -DCMAKE_C_COMPILER="$cc" >"$build/logs/configure.log" 2>&1 ||
  { cat "$build/logs/configure.log"; exit 1; }
cmake --build "$build" -j "${FUZZ_JOBS:-2}" --target "${targets[@]}" >/dev/null

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/artifacts" "$build/logs"
failed=0
summary=()
for t in "${targets[@]}"; do
  bin="$build/$t"
  log="$build/logs/$t.log"
  # 1. Regressions: libFuzzer runs files given on the command line once each.
  regs=()
  if [ -d "$here/regressions/$t" ]; then
    while IFS= read -r f; do regs+=("$f"); done < <(find "$here/regressions/$t" -type f \
        ! -name '.*' ! -name '*.md' | sort)
  fi
  if [ "${#regs[@]}" -gt 0 ]; then
    if ! "$bin" "${regs[@]}" >"$build/logs/$t.regressions.log" 2>&1; then
      echo "FAIL $t: a regression input fails (${#regs[@]} replayed):"
      tail -n 40 "$build/logs/$t.regressions.log"
      failed=1
      summary+=("$t: regression FAILED")
      continue
    fi
  fi
  # 2. Fuzzing from the seeds and what earlier runs found.
  work="$build/corpus/$t"
  mkdir -p "$work"
  seeds=()
  [ -d "$here/corpus/$t" ] && seeds=("$here/corpus/$t")
  echo "== fuzz: $t for ${secs}s (${#regs[@]} regression input(s) replayed)"
  rc=0
  # shellcheck disable=SC2086
  "$bin" "$work" "${seeds[@]}" -max_total_time="$secs" -print_final_stats=1 -timeout=60 \
         -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="$build/artifacts/$t-" \
         ${FUZZ_FLAGS:-} >"$log" 2>&1 || rc=$?
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)"
  status="$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -n 1 || true)"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")"
  corp="$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$status")"
  line="$t: ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
  if [ "$rc" -ne 0 ]; then
    echo "FAIL $t (exit $rc): crash, leak, timeout or broken promise; end of $log:"
    tail -n 60 "$log"
    ls -1 "$build/artifacts/$t-"* 2>/dev/null | sed 's/^/  input saved: /' || true
    failed=1
    line="$line -- FAILED"
  fi
  echo "$line"
  summary+=("$line")
done
# A target that crashed mid-way may leave its shared-memory object behind
# (/dev/shm/rtmem-fuzz-<pid>-<n>): removed once that process is gone.
for f in /dev/shm/rtmem-fuzz-*; do
  [ -e "$f" ] || continue
  pid="${f#/dev/shm/rtmem-fuzz-}"
  pid="${pid%%-*}"
  kill -0 "$pid" 2>/dev/null || rm -f "$f"
done
echo "== fuzz summary (${secs}s per target)"
printf '  %s\n' "${summary[@]}"
exit "$failed"
