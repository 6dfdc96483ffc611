#!/bin/sh
# SPDX-License-Identifier: MIT
# `latency --no-rt` says what happened: SCHED_FIFO was not asked for (never
# "not permitted", which would blame the machine), the header's "no
# pinning" is the main thread's (the test threads are still placed as each
# test's line says, "pinned to CPU 1" included), and no priority is printed
# for threads that run SCHED_OTHER.
# usage: no_rt_says.sh RTMEM
set -u
out=$("$1" latency --no-rt --iterations 20 \
        --tests bmCtxSemPend,bmCtxTaskSwitch,CtxSmpAffinitySemUnPend 2>&1)
rc=$?
printf '%s\n' "$out"
bad=0
fail() { echo "FAIL: $*"; bad=1; }
[ "$rc" -eq 0 ] || fail "exit $rc"
printf '%s\n' "$out" | grep -q "not permitted" && fail "--no-rt reported as 'not permitted'"
printf '%s\n' "$out" | grep -q "skipped: needs SCHED_FIFO (not asked for: --no-rt)" ||
  fail "the task switch's skip does not name --no-rt"
printf '%s\n' "$out" | grep "no pinning" | grep -qv "^main thread: " &&
  fail "'no pinning' not said of the main thread"
printf '%s\n' "$out" | grep "SCHED_OTHER" | grep -q "waiter [0-9]" &&
  fail "SCHED_OTHER threads shown with priorities"
exit "$bad"
