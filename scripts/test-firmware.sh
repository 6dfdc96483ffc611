#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the heaps' own tests on emulated Cortex-M boards (`make
# test-firmware`, the CI's firmware stage, ctest's firmware_<board>).
#
# Per board: the allocator cores and the generic API (every algorithm of
# rtm_algorithms()) are compiled with arm-none-eabi-gcc against picolibc,
# and each test program of tests/unit/, tests/model/ and tests/hardening/
# that can run without an operating system becomes one firmware image
# (plus tests/firmware/board.c: regions from the C library's heap, the list
# of left-out test functions). qemu-system-arm boots each image on the
# board's machine; the image prints through semihosting and its exit status
# (main's return, through semihosting SYS_EXIT) is the verdict. Model tests
# run their small band, as ctest's model_<heap>_small does (RTMEM_FW_STEPS
# overrides the steps per case).
#
# What cannot run on a board is left out by name with the reason: whole
# programs here (LEFT_OUT below), single test functions in
# tests/firmware/board.c.
#
# Usage: scripts/test-firmware.sh [-q] [-o OUTDIR] [-j JOBS] [BOARD...]
#   -q: quick, each model case with one seed (--seed 1) instead of its two
#       or three: a third of the emulation time (CI, on the boards beyond
#       the Cortex-M4F).
#   BOARD: an385 (Cortex-M3), an386 (Cortex-M4F), an505 (Cortex-M33),
#          microbit (Cortex-M0); default: all.
# Exit status: 0 all ran tests passed, 1 a test failed or an image did not
# build, 2 usage, 77 the toolchain or qemu is missing (scripts/deps.sh
# firmware installs or names them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-firmware
jobs=2
quick=0
usage() {
  sed -n '/^# Usage:/,/^# firmware/p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while getopts "qo:j:h" opt; do
  case "$opt" in
    q) quick=1 ;;
    o) out=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
boards=("$@")
[ ${#boards[@]} -gt 0 ] || boards=(an385 an386 an505 microbit)
steps=${RTMEM_FW_STEPS:-}
model_args=${steps:+ --steps $steps}
[ "$quick" = 0 ] || model_args+=" --seed 1"
case "$jobs$steps" in *[!0-9]*) usage ;; esac

for tool in arm-none-eabi-gcc qemu-system-arm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "firmware: skipped, $tool not installed (scripts/deps.sh firmware installs it)" >&2
    exit 77
  fi
done
if ! arm-none-eabi-gcc -print-file-name=picolibc.specs 2>/dev/null \
     | grep -q /; then
  echo "firmware: skipped, picolibc not installed (Debian: picolibc-arm-none-eabi)" >&2
  exit 77
fi

# Board: qemu machine, compiler flags, flash and RAM (origin, size) for
# picolibc's linker script, and the stack. The MPS2 boards run code from
# their 4 MiB SSRAM and data from 16 MiB PSRAM: every test runs there (the
# few test functions that need more are left out by name in board.c). The
# micro:bit (nRF51822, ARMv6-M: no unaligned access, no CLZ, no divide
# instruction) has 256 KiB flash and 16 KiB RAM: it runs the programs and
# model cases of small_board_programs below, which fit, built with -Os (so
# with RTM_SMALL_CODE 1, core/bits.h); the other boards with -O2.
board_config() { # board -> sets machine cflags opt flash flash_size ram ram_size stack
  stack=0x8000 opt=-O2
  case "$1" in
    an385) machine=mps2-an385 cflags=(-mcpu=cortex-m3 -mthumb)
           flash=0x00000000 flash_size=0x400000 ram=0x21000000 ram_size=0x1000000 ;;
    an386) machine=mps2-an386 cflags=(-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16)
           flash=0x00000000 flash_size=0x400000 ram=0x21000000 ram_size=0x1000000 ;;
    an505) machine=mps2-an505 cflags=(-mcpu=cortex-m33 -mthumb)
           flash=0x10000000 flash_size=0x400000 ram=0x80000000 ram_size=0x1000000 ;;
    microbit) machine=microbit cflags=(-mcpu=cortex-m0 -mthumb)
           flash=0x00000000 flash_size=0x40000 ram=0x20000000 ram_size=0x4000
           stack=0x1000 opt=-Os ;; # built for size, as such a board's firmware is
    *) echo "firmware: unknown board $1 (an385 an386 an505 microbit)" >&2; exit 2 ;;
  esac
}

# The library as docs/FIRMWARE.md has a firmware team compile it: the
# freestanding sources of CMakeLists.txt (RTMEM_FREESTANDING_SOURCES),
# built hosted here because picolibc is a C library (errno is set, as the
# tests check), plus tlsf_rebuild.c, which test_tlsf_grow calls.
mapfile -t lib_sources < <(sed -n '/^set(RTMEM_FREESTANDING_SOURCES/,/)/p' "$root/CMakeLists.txt" \
  | grep -o 'src/[a-z_/]*\.c')
lib_sources+=(src/heaps/tlsf_rebuild.c)
kit_sources=(tests/model/rig.c tests/model/rig_rtmem.c tests/common/region_malloc.c) # and board.c, once per program
version=$(sed -n 's/^project(rtmem VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")

# Test programs: name, sources beyond the kit, library variant, runs (each
# run: its arguments, ';'-separated runs).
programs=(
  "test_api|tests/unit/test_api.c|lib|"
  "test_tlsf|tests/unit/test_tlsf.c|lib|"
  "test_tlsf_grow|tests/unit/test_tlsf_grow.c|lib|"
  "test_pool|tests/unit/test_pool.c|lib|"
  "test_buddy|tests/unit/test_buddy.c|lib|"
  "test_halffit|tests/unit/test_halffit.c|lib|"
  "test_heapmem|tests/unit/test_heapmem.c|lib|"
  "test_slab|tests/unit/test_slab.c|lib|"
  "test_xvmalloc|tests/unit/test_xvmalloc.c|lib|"
  "test_tlsf_cached|tests/unit/test_tlsf_cached.c|lib|"
  "test_version|tests/unit/test_version.c|lib|"
  "test_debug|tests/unit/test_debug.c|debug|"
)
for heap in tlsf pool buddy halffit heapmem slab xvmalloc tlsf_cached; do
  programs+=("test_model_$heap|tests/model/test_model_$heap.c tests/model/model_driver.c|lib|--band small$model_args")
done
programs+=(
  "test_harden_tlsf|tests/hardening/test_harden_tlsf.c|lib|$(for c in overlap foreign interior stale header pool wrap; do
      for a in typed generic; do printf '%s %s;' "$c" "$a"; done; done)"
  "test_harden_tlsf_api|tests/hardening/test_harden_tlsf_api.c|lib|usable;region;fast_range"
  "test_harden_halffit|tests/hardening/test_harden_halffit.c|lib|merged;stale"
  "test_harden_slab|tests/hardening/test_harden_slab.c|lib|scenario;random"
)
# The micro:bit's share: what fits 16 KiB of RAM with the rig's shadow of
# the heap (found by running everything there: the other model cases and
# unit tests stop at a region or shadow larger than the board's RAM).
small_board_programs=(
  "test_version|tests/unit/test_version.c|lib|"
  "test_harden_halffit|tests/hardening/test_harden_halffit.c|lib|merged;stale"
  "test_model_pool|tests/model/test_model_pool.c tests/model/model_driver.c|lib|--case 0$model_args;--case 1$model_args;--case 2$model_args;--case 3$model_args"
  "test_model_buddy|tests/model/test_model_buddy.c tests/model/model_driver.c|lib|--case 0$model_args;--case 1$model_args;--case 2$model_args"
  "test_model_heapmem|tests/model/test_model_heapmem.c tests/model/model_driver.c|lib|--case 0$model_args;--case 1$model_args;--case 2$model_args"
)
# Whole programs that cannot run on a board.
left_out=(
  "test_determinism: its one test bounds TLSF's steps up to a 1 GiB region (mmap MAP_NORESERVE); a board has megabytes"
  "test_harden_create: every case runs in a child process (fork) so a crash is reported, not fatal"
  "test_harden_tlsf_check: includes the guarded heaps' internals (pthread mutexes, shared memory)"
  "test_harden_tlsf * locked, test_harden_create locked: the locked heaps need POSIX threads"
  "tests/shared, tests/malloc, tests/zsmalloc, tests/cpp, tests/tracking: process-shared and locked heaps, the drop-in malloc, C++, valgrind/ASan: need an operating system"
)

warn=(-std=c11 -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wcast-align -Wundef
      -Werror)
common=(-g -ffunction-sections -fdata-sections --specs=picolibc.specs
        -I"$root/include" -I"$root/src" -I"$root/tests" -include "$root/tests/firmware/board.h")

# Runs "$@" in the background, at most $jobs at a time.
running=0
spawn() {
  if [ "$running" -ge "$jobs" ]; then wait -n || failed_build=1; running=$((running - 1)); fi
  "$@" &
  running=$((running + 1))
}
drain() { while [ "$running" -gt 0 ]; do wait -n || failed_build=1; running=$((running - 1)); done; }

boot() { # elf log args: one run on the board, its status and seconds into log.rc
  local rc=0 t0=$SECONDS qargs=(-semihosting-config "enable=on,target=native")
  # picolibc's crt0 makes the semihosting command line argv[1..] (argv[0] is
  # its fixed "program-name").
  for a in $3; do qargs[1]+=",arg=$a"; done
  timeout 600 qemu-system-arm -M "$machine" -nographic -monitor none -serial null "${qargs[@]}" \
    -kernel "$1" >"$2" 2>&1 </dev/null || rc=$?
  echo "$rc $((SECONDS - t0))" >"$2.rc"
}

compile() { # out source flags...
  local o=$1 s=$2; shift 2
  arm-none-eabi-gcc "${cflags[@]}" "$opt" "${warn[@]}" "${common[@]}" "$@" -c "$root/$s" -o "$o" \
    2>"$o.log" || { echo "firmware[$board]: FAIL, $s does not compile:" >&2; cat "$o.log" >&2; return 1; }
}

total_fail=0
summary=()
all_programs=("${programs[@]}")
for board in "${boards[@]}"; do
  board_config "$board"
  programs=("${all_programs[@]}")
  if [ "$board" = microbit ]; then
    programs=("${small_board_programs[@]}")
    echo "firmware[$board]   left out: every other test program and model case: needs more than the board's 16 KiB of RAM"
  fi
  dir=$out/$board
  mkdir -p "$dir/lib" "$dir/debug" "$dir/obj"
  t0=$(date +%s)
  failed_build=0
  for s in "${lib_sources[@]}"; do
    b=$(basename "${s%.c}")
    spawn compile "$dir/lib/$b.o" "$s"
    spawn compile "$dir/debug/$b.o" "$s" -DRTM_DEBUG=1
  done
  for s in "${kit_sources[@]}"; do
    spawn compile "$dir/obj/$(basename "${s%.c}").o" "$s"
  done
  for p in "${programs[@]}"; do
    IFS='|' read -r name srcs _ _ <<<"$p"
    for s in $srcs; do
      extra=(-DFW_PROGRAM="\"$name\"")
      [ "$name" = test_version ] && extra+=(-DRTM_EXPECT_VERSION="\"$version\"")
      spawn compile "$dir/obj/$name-$(basename "${s%.c}").o" "$s" "${extra[@]}"
    done
  done
  drain
  # board.c is compiled once per program (its FW_PROGRAM differs).
  for p in "${programs[@]}"; do
    IFS='|' read -r name _ _ _ <<<"$p"
    spawn compile "$dir/obj/$name-board.o" tests/firmware/board.c -DFW_PROGRAM="\"$name\""
  done
  drain
  if [ "$failed_build" != 0 ]; then
    total_fail=$((total_fail + 1)); summary+=("$board: build failed"); continue
  fi

  # Link every image, then boot them, $jobs at a time: each run leaves its
  # log and, in $log.rc, its exit status and seconds.
  pass=0 fail=0
  images=()
  for p in "${programs[@]}"; do
    IFS='|' read -r name srcs variant runs <<<"$p"
    objs=()
    for s in $srcs; do objs+=("$dir/obj/$name-$(basename "${s%.c}").o"); done
    objs+=("$dir/obj/rig.o" "$dir/obj/rig_rtmem.o" "$dir/obj/region_malloc.o" "$dir/obj/$name-board.o" "$dir/$variant"/*.o)
    elf=$dir/$name.elf
    if ! arm-none-eabi-gcc "${cflags[@]}" --specs=picolibc.specs --oslib=semihost --crt0=semihost \
         -Wl,--gc-sections -Wl,--defsym=__flash="$flash" -Wl,--defsym=__flash_size="$flash_size" \
         -Wl,--defsym=__ram="$ram" -Wl,--defsym=__ram_size="$ram_size" \
         -Wl,--defsym=__stack_size="$stack" "${objs[@]}" -o "$elf" 2>"$elf.log"; then
      echo "firmware[$board] $name: FAIL, does not link:" >&2; cat "$elf.log" >&2
      fail=$((fail + 1)); continue
    fi
    IFS=';' read -r -a run_list <<<"${runs:-}"
    [ ${#run_list[@]} -gt 0 ] || run_list=("")
    for args in "${run_list[@]}"; do
      images+=("$name|$args")
      spawn boot "$elf" "$dir/$name${args:+-${args// /-}}.log" "$args"
    done
  done
  drain
  : >"$dir/left-out.txt"
  for i in "${images[@]}"; do
    IFS='|' read -r name args <<<"$i"
    log=$dir/$name${args:+-${args// /-}}.log
    read -r rc secs <"$log.rc"
    label="$name${args:+ $args} (${secs} s)"
    n_out=$(grep -c 'left out:' "$log" || true)
    grep -h "left out:" "$log" >>"$dir/left-out.txt" || true
    if [ "$rc" = 0 ]; then
      pass=$((pass + 1))
      if [ "$n_out" = 0 ]; then echo "firmware[$board] $label: passed"
      else echo "firmware[$board] $label: passed, $n_out test function(s) left out"; fi
    else
      fail=$((fail + 1))
      echo "firmware[$board] $label: FAIL (exit $rc; $([ "$rc" = 124 ] && echo "timed out, ")log $log):" >&2
      tail -n 30 "$log" >&2
    fi
  done
  sed 's/  */ /' "$dir/left-out.txt" | sort -u | sed "s/^/firmware[$board]   left out: /; s/ left out: \(.*\) left out:/ \1:/"
  for l in "${left_out[@]}"; do echo "firmware[$board]   left out: $l"; done
  summary+=("$board ($machine): $pass runs passed, $fail failed, ${#left_out[@]} program group(s) left out; $(( $(date +%s) - t0 )) s")
  total_fail=$((total_fail + fail))
done
for s in "${summary[@]}"; do echo "firmware: $s"; done
[ "$total_fail" = 0 ]
