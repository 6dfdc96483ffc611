#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Proves the allocator cores and the generic API build and link freestanding
# (no libc, no OS): compiles every heap (src/heaps/) and the core (registry,
# dispatch, error hook, version) with -ffreestanding for the host and, when
# installed, for a Cortex-M4 with arm-none-eabi-gcc; checks that the objects
# need nothing from outside but memcpy/memset/memmove; then links
# tests/freestanding/firmware.c (every generic call on every plain
# algorithm) with -nostdlib into an image: any unresolved symbol fails the
# link. A second image is a firmware build as docs/FIRMWARE.md describes it:
# an RTM_CONFIG_HEADER (tests/freestanding/rtm_config_tlsf_only.h) that keeps
# only TLSF, with only TLSF's and the core's sources, and RTM_DEBUG
# assertions on through the firmware's own RTM_ASSERT. On an x86-64 Linux
# host both images also run and must exit 0.
# Usage: scripts/check-freestanding.sh [OUTDIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
# Every allocator core, whatever heaps exist, the whole core, and zsmalloc
# (its typed API, which firmware.c calls too).
mapfile -t sources < <(cd "$root" && ls src/heaps/*.c src/core/*.c src/zsmalloc/*.c)
flags=(-std=c11 -O2 -ffreestanding -DRTM_FREESTANDING=1
       -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wcast-align -Wundef -Werror
       -I"$root/include" -I"$root/src")
allowed='^(memcpy|memset|memmove|firmware_assert_failed)$' # the last: the test config's RTM_ASSERT
# The TLSF-only firmware: the core and TLSF's own files, nothing else.
tlsf_only_sources=(src/core/error.c src/core/registry.c src/core/heap.c src/core/version.c
                   src/heaps/tlsf.c src/heaps/tlsf_check.c)
tlsf_only_flags=(-DRTM_CONFIG_HEADER='"rtm_config_tlsf_only.h"' -DRTM_DEBUG=1
                 -I"$root/tests/freestanding")

check_target() { # name compiler nm link-flags compile-flags...
  local name=$1 cc=$2 nm=$3 link=$4; shift 4
  local objs=()
  local -a sources=("${sources[@]}")
  case "$name" in *tlsf-only) sources=("${tlsf_only_sources[@]}") ;; esac
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
  # The generic API, linked into an image with no C library at all.
  local image="$out/$name-firmware.elf"
  # shellcheck disable=SC2086 # link flags are words
  if ! "$cc" "${flags[@]}" "$@" -nostdlib -Wl,-e,firmware_entry $link \
       "$root/tests/freestanding/firmware.c" "${objs[@]}" -o "$image" 2>"$out/$name-link.log"; then
    echo "freestanding[$name]: FAIL, the generic API does not link without libc:" >&2
    cat "$out/$name-link.log" >&2
    return 1
  fi
  echo "freestanding[$name]: ok (${#objs[@]} objects, external symbols limited to memcpy/memset/memmove; $(basename "$image") linked with -nostdlib)"
}

host_link="-static"
case "$(uname -m)-$("${CC:-cc}" -dumpmachine 2>/dev/null)" in
  x86_64-x86_64*linux*) host_link="-static -no-pie" ;;
esac
run_host_image() { # name
  [ "$(uname -m)" = x86_64 ] && [ "$host_link" = "-static -no-pie" ] || return 0
  local rc=0
  "$out/$1-firmware.elf" || rc=$?
  if [ "$rc" != 0 ]; then
    echo "freestanding[$1]: FAIL, the firmware image exited $rc" >&2
    exit 1
  fi
  echo "freestanding[$1]: the image ran every generic call on every algorithm it has: exit 0"
}
check_target host "${CC:-cc}" nm "$host_link"
run_host_image host
check_target host-tlsf-only "${CC:-cc}" nm "$host_link" "${tlsf_only_flags[@]}"
run_host_image host-tlsf-only
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  check_target cortex-m4 arm-none-eabi-gcc arm-none-eabi-nm "" -mcpu=cortex-m4 -mthumb
  check_target cortex-m4-tlsf-only arm-none-eabi-gcc arm-none-eabi-nm "" -mcpu=cortex-m4 -mthumb \
    "${tlsf_only_flags[@]}"
else
  # The host half passed; 77 is ctest's skip (SKIP_RETURN_CODE), so the
  # Cortex-M4 half missing never reads as passed.
  echo "freestanding[cortex-m4]: skipped, arm-none-eabi-gcc not installed (Debian: gcc-arm-none-eabi)"
  exit 77
fi
