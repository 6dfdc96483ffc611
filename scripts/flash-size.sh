#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What each heap adds to a Cortex-M4 firmware image, in flash and RAM
# (docs/FIRMWARE.md, "Flash and RAM per heap"). Links
# tests/firmware/flash_size_app.c -nostdlib with -ffunction-sections
# -fdata-sections --gc-sections and NDEBUG, once without a heap (the
# baseline) and once per heap, API (typed alone / through the generic API
# with RTM_ALGORITHMS naming only that heap), optimisation (-Os, -O2) and
# checks (the heap's check function called or not; RTM_DEBUG=1 builds as a
# last column), and prints the text of the functions the linker kept, the
# image's own left out (its entry and its memcpy/memset, which every
# firmware has), with the constants (rodata) and static RAM (data+bss) the
# heap adds over the baseline. The control structure's RAM, which the heap takes from the
# region it is given, is read from rtm_<heap>_control_size() at compile
# time of the target (an object whose size is that value).
#
# tlsf-nogrow is TLSF built with RTM_TLSF_GROWTH 0 (growth on demand left
# out of the build, rtm_tlsf_set_grow gives ENOTSUP). The default build
# links growth only into an image that calls rtm_tlsf_set_grow, so the
# two differ by little here. -Os builds take RTM_SMALL_CODE 1 (core/bits.h);
# halffit-fast is half-fit with RTM_SMALL_CODE 0, its -O2 code shape.
#
# Usage: scripts/flash-size.sh [--budget] [HEAP...]
#   HEAP: tlsf tlsf-nogrow halffit halffit-fast pool buddy heapmem xvmalloc
#   (default: tlsf tlsf-nogrow halffit halffit-fast)
#   --budget: also check the typed -Os figure (checks out, no debug) of
#   each heap against its budget below; exit 1 when one grew past it.
# Exit status 77 when arm-none-eabi-gcc is missing (ctest skips).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
budget=0
if [ "${1:-}" = --budget ]; then budget=1; shift; fi
case "${1:-}" in -*) sed -n '/^# Usage:/,/^# Exit/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;; esac
heaps=("$@")
[ ${#heaps[@]} -gt 0 ] || heaps=(tlsf tlsf-nogrow halffit halffit-fast)
if ! command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  echo "flash-size: skipped, arm-none-eabi-gcc not installed (scripts/deps.sh firmware)" >&2
  exit 77
fi
# Budgets in bytes of text, typed API, -Os, checks out (issue 30's image):
# its targets, TLSF 2,700 (tlsf-bsd's size) and half-fit 1,200. A heap that
# grows past one fails here.
declare -A budgets=([tlsf]=2700 [tlsf-nogrow]=2700 [halffit]=1200)
# Variants: a heap built with one option of docs/FIRMWARE.md's table.
declare -A variants=([tlsf-nogrow]="tlsf -DRTM_TLSF_GROWTH=0" [halffit-fast]="halffit -DRTM_SMALL_CODE=0")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cpu=(-mcpu=cortex-m4 -mthumb -mfloat-abi=soft)
base=(-std=c11 -DNDEBUG -DRTM_FREESTANDING=1 -ffreestanding -ffunction-sections -fdata-sections
      -I"$root/include" -I"$root/src")
# shellcheck disable=SC2054 # commas inside -Wl, arguments
link=(-nostdlib -Wl,--gc-sections -Wl,-e,size_entry)

# Sources per heap: the typed API's, and the generic API's (core added).
heap_sources() { # heap
  case "$1" in
    tlsf) echo src/core/error.c src/heaps/tlsf.c src/heaps/tlsf_check.c ;;
    halffit) echo src/core/error.c src/heaps/halffit.c src/heaps/halffit_check.c ;;
    pool|buddy|heapmem) echo src/core/error.c "src/heaps/$1.c" ;;
    xvmalloc) echo src/core/error.c src/heaps/xvmalloc.c src/heaps/xvmalloc_check.c ;;
    *) return 1 ;;
  esac
}
kind_word() { echo "RTM_KIND_$(echo "$1" | tr '[:lower:]' '[:upper:]')"; }

image() { # name opt flags... -- sources...: links, prints "text ram"
  local name=$1 opt=$2; shift 2
  local flags=() srcs=()
  while [ "$1" != -- ]; do flags+=("$1"); shift; done; shift
  for s in "$@"; do srcs+=("$root/$s"); done
  if ! arm-none-eabi-gcc "${cpu[@]}" "$opt" "${base[@]}" "${flags[@]}" "${link[@]}" \
       "$root/tests/firmware/flash_size_app.c" "${srcs[@]}" -o "$out/$name.elf" 2>"$out/$name.log"; then
    echo "- - -"
    return 0
  fi
  # text: the functions the linker kept, the image's own left out (its
  # entry and the C runtime's copies); constants and RAM: by section.
  local t
  t=$(arm-none-eabi-nm -S -t d --defined-only "$out/$name.elf" | awk '
    NF == 4 && ($3 == "t" || $3 == "T") && $4 !~ /^(size_entry|memcpy|memmove|memset)$/ {t += $2}
    END {print t + 0}')
  arm-none-eabi-size -A "$out/$name.elf" | awk -v t="$t" '
    $1 == ".rodata" || $1 == ".data" {c += $2}
    $1 == ".data" || $1 == ".bss" {r += $2} END {print t, c + 0, r + 0}'
}
diff_or_na() { # value baseline
  if [ "$1" = - ]; then echo "n/a"; else echo $(($1 - $2)); fi
}

control_size() { # heap: the constant rtm_<heap>_control_size() returns on the target
  arm-none-eabi-gcc "${cpu[@]}" -O2 "${base[@]}" -S -o "$out/$1.s" "$root/src/heaps/$1.c"
  awk '/^rtm_'"$1"'_control_size:/ {f = 1} f && /movs?\tr0, #/ {sub(/.*#/, ""); print; exit}' \
    "$out/$1.s"
}

for heap in "${heaps[@]}"; do
  read -r impl _ <<<"${variants[$heap]:-$heap}"
  heap_sources "$impl" >/dev/null || {
    echo "flash-size: unknown heap $heap (tlsf tlsf-nogrow halffit halffit-fast pool buddy heapmem xvmalloc)" >&2
    exit 2
  }
done
printf '%-12s %-8s %-5s %6s %7s %7s %10s %7s %8s\n' heap api opt text rodata +check +debug "RAM" control
status=0
for opt in -Os -O2; do
  read -r base_text base_const base_ram < <(image baseline "$opt" --)
  for heap in "${heaps[@]}"; do
    read -r impl variant_flag <<<"${variants[$heap]:-$heap}"
    variant=(${variant_flag:+"$variant_flag"})
    read -r -a typed_src <<<"$(heap_sources "$impl")"
    generic_src=(src/core/registry.c src/core/heap.c "${typed_src[@]}")
    algos="-DRTM_ALGORITHMS(X)=X($impl, $(kind_word "$impl"))"
    ctl=$(control_size "$impl")
    for api in typed generic; do
      if [ "$api" = typed ]; then srcs=("${typed_src[@]}"); f=(-DSIZE_API_TYPED "-DSIZE_HEAP=$impl")
      else srcs=("${generic_src[@]}"); f=(-DSIZE_API_GENERIC "-DSIZE_HEAP=$impl" "$algos"); fi
      f+=("${variant[@]}")
      read -r t c r < <(image "$heap-$api" "$opt" "${f[@]}" -- "${srcs[@]}")
      read -r tc _ _ < <(image "$heap-$api-check" "$opt" "${f[@]}" -DSIZE_WITH_CHECK -- "${srcs[@]}")
      read -r td _ _ < <(image "$heap-$api-debug" "$opt" "${f[@]}" -DSIZE_WITH_CHECK -DRTM_DEBUG=1 \
                           -- "${srcs[@]}")
      printf '%-12s %-8s %-5s %6s %7s %7s %10s %7s %8s\n' "$heap" "$api" "$opt" \
        "$(diff_or_na "$t" "$base_text")" "$(diff_or_na "$c" "$base_const")" \
        "$(diff_or_na "$tc" "$base_text")" "$(diff_or_na "$td" "$base_text")" \
        "$(diff_or_na "$r" "$base_ram")" "${ctl:-?}"
      if [ "$t" = - ]; then
        echo "  ($heap $api: does not link from its own sources: $(grep -o "undefined reference to \`[a-z_]*'" \
          "$out/$heap-$api.log" | sort -u | tr '\n' ' '))"
      fi
      if [ "$budget" = 1 ] && [ "$api" = typed ] && [ "$opt" = -Os ] && [ -n "${budgets[$heap]:-}" ]; then
        if [ $((t - base_text)) -gt "${budgets[$heap]}" ]; then
          echo "flash-size: FAIL, $heap (typed, -Os) is $((t - base_text)) bytes, over its budget of ${budgets[$heap]}" >&2
          status=1
        else
          echo "flash-size: $heap (typed, -Os) $((t - base_text)) bytes, within its budget of ${budgets[$heap]}"
        fi
      fi
    done
  done
done
exit $status
