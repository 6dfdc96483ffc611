#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Exact Thumb instruction counts of heap calls on a Cortex-M4 or M0
# (docs/FIRMWARE.md, "Instructions per call on Cortex-M4 and M0"): builds
# tests/firmware/count_app.c (states built, then one measured call each)
# against picolibc, boots it halted on qemu (mps2-an386, or microbit), and lets
# gdb-multiarch single-step every call of the counted functions through
# qemu's gdb stub (tests/firmware/count_steps.py). The method is checked on
# hand_counted(), five instructions by hand: any other count fails the run.
# The random-replace state (M4 only: it needs megabytes) prints, per
# function, its calls and the most instructions one took.
# Usage: scripts/thumb-count.sh [--m0] [-O2|-Os] [-DNAME=VALUE...]   (default -O2)
#   --m0: a Cortex-M0 (ARMv6-M, Thumb-1 with a few Thumb-2 instructions: no
#         CLZ, no IT blocks, no wide immediates) on qemu's microbit, with the
#         states built in a 12 KiB region (its RAM is 16 KiB); else a
#         Cortex-M4 on mps2-an386 and a 64 KiB region
#   -D: a build option of docs/FIRMWARE.md's table, e.g. -DRTM_SMALL_CODE=0
# Exit status 77 when the compiler, qemu-system-arm or gdb-multiarch is
# missing (scripts/deps.sh firmware).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { sed -n '/^# Usage:/,/^#   -D/p' "$0" | sed 's/^# //' >&2; exit 2; }
core=m4
if [ "${1:-}" = --m0 ]; then core=m0; shift; fi
opt=${1:--O2}
case "$opt" in -O2|-Os) ;; *) usage ;; esac
[ $# -eq 0 ] || shift
options=("$@")
for o in "${options[@]}"; do
  [[ "$o" =~ ^-DRTM_[A-Z0-9_]+=[0-9]+$ ]] || usage
done
for tool in arm-none-eabi-gcc qemu-system-arm gdb-multiarch; do
  command -v "$tool" >/dev/null 2>&1 \
    || { echo "thumb-count: skipped, $tool not installed (scripts/deps.sh firmware)" >&2; exit 77; }
done
out=$(mktemp -d)
qemu_pid=
cleanup() { [ -z "$qemu_pid" ] || kill "$qemu_pid" 2>/dev/null || true; rm -rf "$out"; }
trap cleanup EXIT
src=(src/core/error.c src/heaps/tlsf.c src/heaps/tlsf_check.c src/heaps/halffit.c
     src/heaps/halffit_check.c)
if [ "$core" = m4 ]; then
  machine=mps2-an386 name=Cortex-M4
  target=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
  memory=(-Wl,--defsym=__flash=0 -Wl,--defsym=__flash_size=0x400000 -Wl,--defsym=__ram=0x21000000
          -Wl,--defsym=__ram_size=0x1000000)
else
  machine=microbit name=Cortex-M0
  target=(-mcpu=cortex-m0 -mthumb -DCOUNT_REGION_BYTES=12288 -DCOUNT_RR_SLOTS=0)
  memory=(-Wl,--defsym=__flash=0 -Wl,--defsym=__flash_size=0x40000 -Wl,--defsym=__ram=0x20000000
          -Wl,--defsym=__ram_size=0x4000 -Wl,--defsym=__stack_size=0x800)
fi
arm-none-eabi-gcc "${target[@]}" "$opt" -g -std=c11 \
  -DNDEBUG "${options[@]}" -I"$root/include" -I"$root/src" -I"$root/tests" --specs=picolibc.specs --oslib=semihost \
  --crt0=semihost "$root/tests/firmware/count_app.c" "${src[@]/#/$root/}" \
  "${memory[@]}" -o "$out/count.elf"
port=$((20000 + RANDOM % 20000))
qemu-system-arm -M "$machine" -nographic -monitor none -serial null \
  -semihosting-config enable=on,target=native -gdb "tcp:127.0.0.1:$port" -S \
  -kernel "$out/count.elf" >"$out/qemu.log" 2>&1 &
qemu_pid=$!
sleep 1
RTM_COUNT_FUNCTIONS="hand_counted rtm_tlsf_alloc rtm_tlsf_free rtm_halffit_alloc rtm_halffit_free" \
  timeout 300 gdb-multiarch -q -batch -ex "target remote 127.0.0.1:$port" \
  -x "$root/tests/firmware/count_steps.py" "$out/count.elf" >"$out/gdb.log" 2>&1 || true
grep '^COUNT' "$out/gdb.log" | sed 's/^COUNT //' >"$out/counts"
if ! grep -qx 'hand_counted #1: 5' "$out/counts"; then
  echo "thumb-count: FAIL, hand_counted() (5 instructions by hand) counted as:" \
       "$(grep hand_counted "$out/counts" || echo nothing)" >&2
  tail -n 20 "$out/gdb.log" >&2
  exit 1
fi
if grep -q '^PHASE refused' "$out/gdb.log"; then
  echo "thumb-count: FAIL, the random-replace heap refused a request (region too small)" >&2
  exit 1
fi
echo "$name, gcc $opt${options[*]:+ ${options[*]}}, instructions per call (gdb single-step through qemu's stub):"
grep -v '^random-replace' "$out/counts" || true
# The random-replace phases: each function's calls and the most of one.
awk -F': ' '/^random-replace/ {
    key = $1 ": " substr($2, 1, index($2, " #") - 1); n[key]++
    if ($3 + 0 > max[key]) {max[key] = $3 + 0; at[key] = substr($2, index($2, "#"))}
  }
  END {for (k in n) printf "%s: %d calls, most %d (%s)\n", k, n[k], max[k], at[k]}' "$out/counts" | sort
