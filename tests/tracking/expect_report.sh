#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/tracking/expect_report.sh -- runs tests/tracking/buggy.c over every
# heap and asserts what valgrind memcheck or AddressSanitizer reports.
#
#   expect_report.sh TOOL BUGGY BUG PATTERN
#     TOOL     valgrind (BUGGY built with RTMEM_VALGRIND=ON) or asan (BUGGY
#              built with RTMEM_SANITIZE=address...)
#     BUGGY    the buggy program
#     BUG      one of its bugs (overflow, uaf, ...) or clean
#     PATTERN  extended regex the report must contain; "none" for clean:
#              then the run must succeed and the tool report nothing
#
# Each heap of `BUGGY --list` is one run. The report of every run is kept in
# $TRACK_LOGS (default: a temporary folder) for the closing note. Exit 0
# when every heap behaves, 1 otherwise, 77 (skipped) when the tool is
# missing, with the reason on stdout.
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 valgrind|asan BUGGY BUG PATTERN|none" >&2
  exit 2
fi
tool=$1 buggy=$2 bug=$3 pattern=$4
logs=${TRACK_LOGS:-$(mktemp -d)}
mkdir -p "$logs"

case $tool in
  valgrind)
    if ! command -v valgrind >/dev/null 2>&1; then
      echo "SKIP: valgrind is not installed (Debian: apt-get install valgrind)"
      exit 77
    fi
    # Leaks count as errors only when definite: a leaked rtm block is one.
    run=(valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite
         --show-leak-kinds=definite --error-exitcode=99 "$buggy") ;;
  asan)
    # The first report ends the run (ASan's default); no leak check: ASan
    # cannot see rtm blocks leak (only valgrind can).
    export ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0
    run=("$buggy") ;;
  *)
    echo "$0: unknown tool $tool (valgrind or asan)" >&2
    exit 2 ;;
esac

heaps=$("$buggy" --list) || { echo "FAIL: $buggy --list"; exit 1; }
fail=0
for heap in $heaps; do
  log="$logs/$tool.$bug.${heap//:/_}.log"
  "${run[@]}" "$heap" "$bug" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "n/a  $heap: $(grep -m1 'not applicable' "$log")"
    continue
  fi
  if [ "$pattern" = none ]; then
    # Clean twin: exit 0, and no report from the tool at all.
    if [ $rc -eq 0 ] && ! grep -Eq '^==[0-9]+== (ERROR|Invalid|.*definitely lost)|ERROR: AddressSanitizer' "$log"; then
      echo "ok   $heap: clean, nothing reported"
    else
      echo "FAIL $heap: clean run reported something (exit $rc), $log:"
      sed 's/^/     /' "$log" | head -30
      fail=1
    fi
  elif [ $rc -ne 0 ] && grep -Eq "$pattern" "$log"; then
    echo "ok   $heap: $(grep -Em1 "$pattern" "$log" | sed 's/^==[0-9]*== //')"
  else
    echo "FAIL $heap: expected /$pattern/ and a failing exit (exit $rc), $log:"
    sed 's/^/     /' "$log" | head -30
    fail=1
  fi
done
exit $fail
