#!/usr/bin/env bash
# Proves the allocator cores build freestanding (no libc): compiles the TLSF
# heap, the fixed-block pool and the core error hook with -ffreestanding -nostdlib for the host and,
# when installed, for a Cortex-M4 with arm-none-eabi-gcc, then checks that the
# objects need nothing from outside but memcpy/memset (which a freestanding
# GCC target must provide anyway).
# Usage: scripts/check-freestanding.sh [OUTDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
# Every allocator core, whatever heaps exist, and the core's error hook.
mapfile -t sources < <(cd "$root" && ls src/heaps/*.c && echo src/core/error.c)
flags=(-std=c11 -O2 -ffreestanding -nostdlib -DRTM_FREESTANDING=1
       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wcast-align -Wundef -Werror
       -I"$root/include" -I"$root/src")
allowed='^(memcpy|memset|memmove)$'

check_target() { # name compiler nm extra-flags...
  local name=$1 cc=$2 nm=$3; shift 3
  local objs=()
  for s in "${sources[@]}"; do
    local o="$out/$name-$(basename "${s%.c}").o"
    "$cc" "${flags[@]}" "$@" -c "$root/$s" -o "$o"
    objs+=("$o")
  done
  # Symbols some object needs that no object defines.
  local undefined defined
  defined=$("$nm" --defined-only "${objs[@]}" | awk 'NF==3 {print $3}' | sort -u)
  undefined=$("$nm" -u "${objs[@]}" | awk 'NF==2 {print $2}' | sort -u \
    | grep -Fvx -f <(echo "$defined") | grep -Ev "$allowed" || true)
  if [ -n "$undefined" ]; then
    echo "freestanding[$name]: FAIL, objects need symbols from outside: $undefined" >&2
    return 1
  fi
  echo "freestanding[$name]: ok (${#objs[@]} objects, external symbols limited to memcpy/memset)"
}

check_target host "${CC:-cc}" nm
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  check_target cortex-m4 arm-none-eabi-gcc arm-none-eabi-nm -mcpu=cortex-m4 -mthumb
else
  echo "freestanding[cortex-m4]: skipped, arm-none-eabi-gcc not installed (Debian: gcc-arm-none-eabi)"
fi
