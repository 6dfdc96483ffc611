#!/bin/sh
# SPDX-License-Identifier: MIT
# A command's text written to a full device (/dev/full: every write fails
# with ENOSPC) must end in status 1 and a message naming standard output,
# never status 0 with the report lost (opts_close_stdout). Without
# /dev/full (not Linux) the test skips with ctest's skip code.
# usage: stdout_full.sh RTMEM ARGS...
set -u
if [ ! -w /dev/full ]; then
  echo "skipped: no writable /dev/full here"
  exit 77
fi
err=$("$@" 2>&1 >/dev/full)
rc=$?
printf '%s\n' "$err" | tail -n 3
if [ "$rc" -ne 1 ]; then
  echo "FAIL: exit $rc with standard output on a full device, expected 1"
  exit 1
fi
case $err in
*"standard output: "*) echo "ok: exit 1 and the message" ;;
*) echo "FAIL: no message about standard output"; exit 1 ;;
esac
