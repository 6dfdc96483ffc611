#!/bin/sh
# SPDX-License-Identifier: MIT
# lab.latency.contended: the contended runs of `rtmem latency`, on the locked
# and the mt heap, both clean (the command exits 0: each run fails when its
# heap is not sound and empty at the end, an allocation was refused or a
# thread could not attach), and the report's line comparing H's worst calls.
# Usage: contended.sh RTMEM
lab="$1"
out=$("$lab" latency --quick --tests HeapContendedLocked,HeapContendedMt)
status=$?
printf '%s\n' "$out"
if [ "$status" -ne 0 ]; then
  echo "contended.sh: rtmem latency exited $status" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q "contended heap (HeapContended\*): H's worst call .* locked / mt = "; then
  echo "contended.sh: no comparison line" >&2
  exit 1
fi
