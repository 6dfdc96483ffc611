#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what a make target needs on a Debian machine, or says exactly what
# is missing. `build`: compiler, cmake, make (and python3-jsonschema, which
# the JSON schema tests validate with). `bench`: also the peer
# allocators the benchmark compares against (optional at run time: a missing
# peer is reported as missing, never a crash). `ci`: also the cross compiler
# for the freestanding check, 32-bit libraries for the -m32 run, pkg-config
# for the consumer builds, valgrind (the tracking stage and
# count_loop.tlsf_cached), clang (the fuzzers) and the format/static-analysis
# tools; .ci/run fails on CI when a stage's tool is still missing after this.
# `cross`: Debian's cross compilers (C and C++) for aarch64, armhf, s390x
# and i686 and qemu-user-static, for scripts/test-cross.sh (`make
# test-cross`, and the CI stage for aarch64 and armhf: docs/TESTING.md),
# and python3-jsonschema, since it runs the same ctest suite as `build`.
# `firmware`: the Arm bare-metal compiler, picolibc and qemu-system-arm, for
# scripts/test-firmware.sh and scripts/flash-size.sh (`make test-firmware`,
# the CI's firmware stage; docs/FIRMWARE.md), and gdb-multiarch for
# scripts/thumb-count.sh.
# `check`: what `build` needs, only checked and reported, never installed
# (`make build` runs this one: installing is left to `make test`,
# `make bench` and this script called directly).
# `--list MODE` prints the packages MODE asks for, one a line (required
# ones first), and changes nothing (ctest deps.suite_packages).
set -euo pipefail
list_only=0
if [ "${1:-}" = --list ]; then
  list_only=1
  shift
fi
what=${1:-build}

need_cmds=(cc cmake make)
need_pkgs=(gcc cmake make)
opt_pkgs=()
# What the ctest suite itself needs beyond the compiler, wherever it runs
# (make test, make test-cross): the JSON schema tests validate with
# python3-jsonschema (scripts/validate_json.py names it when it is missing).
suite_pkgs=(python3 python3-jsonschema)
case "$what" in
  build) opt_pkgs=("${suite_pkgs[@]}") ;;
  check) ;;
  # sqlite3: a real trace (scripts/trace_bench.sh) and a workload; redis-server
  # and redis-tools (redis-benchmark): the optional redis workload
  # (scripts/workloads.py).
  bench) opt_pkgs=(libmimalloc2.0 libjemalloc2 libgoogle-perftools4 python3 python3-matplotlib
               sqlite3 redis-server redis-tools) ;;
  ci)    opt_pkgs=(gcc-arm-none-eabi gcc-multilib g++-multilib clang-format cppcheck pkg-config
               sqlite3 git g++ python3 libpython3-testsuite clang valgrind) ;;
  cross) opt_pkgs=("${suite_pkgs[@]}") ;;
  # gdb-multiarch: scripts/thumb-count.sh's single-stepping (optional: the
  # firmware tests and scripts/flash-size.sh do without it).
  firmware) opt_pkgs=(gdb-multiarch) ;;
  *) echo "usage: scripts/deps.sh [--list] build|bench|ci|cross|firmware|check" >&2; exit 2 ;;
esac
# The cross packages (scripts/test-cross.sh, `make test-cross`, the CI
# stage): the C compilers and qemu required in cross.
# Debian's gcc-multilib declares a conflict with every cross compiler, so
# installing them removes it (see keep_m32 below).
case "$what" in
  # cross: the C compilers and qemu are required (scripts/test-cross.sh
  # cannot run without them); the C++ ones optional (tests/cpp/ skips).
  cross)
    need_cmds+=(qemu-aarch64-static)
    need_pkgs+=(qemu-user-static)
    for t in aarch64-linux-gnu arm-linux-gnueabihf s390x-linux-gnu i686-linux-gnu; do
      need_cmds+=("$t-gcc")
      need_pkgs+=("gcc-$t")
      opt_pkgs+=("g++-$t")
    done ;;
esac
# firmware: all required. picolibc has no command to look for: need_debs
# are packages checked by name.
need_debs=()
if [ "$what" = firmware ]; then
  need_cmds+=(arm-none-eabi-gcc qemu-system-arm)
  need_pkgs+=(gcc-arm-none-eabi qemu-system-arm)
  need_debs+=(picolibc-arm-none-eabi)
fi
# ci: gcc-<N>-multilib (the 32-bit compiler) instead of the gcc-multilib
# metapackage, which would evict the cross compilers on every run and be
# evicted by them in turn; keep_m32 adds the one link it would have added.
# It is installed without recommends: its libc6-dev-i386 recommends
# gcc-multilib, which apt would install and so remove every cross compiler.
if [ "$what" = ci ]; then
  gcc_major=$(gcc -dumpversion 2>/dev/null | cut -d. -f1)
  [ -n "$gcc_major" ] && opt_pkgs=("${opt_pkgs[@]/#gcc-multilib/gcc-$gcc_major-multilib}")
  # The same for C++ (g++-<N>-multilib: the -m32 C++ consumer of
  # consumer_builds, which reports itself skipped without it).
  [ -n "$gcc_major" ] && opt_pkgs=("${opt_pkgs[@]/#g++-multilib/g++-$gcc_major-multilib}")
  # The CPython tests malloc_preload_python runs (test_list, test_json...)
  # are Debian's libpython3.<minor>-testsuite, named after the python3
  # package's version (Debian 12: 3.11); no libpython3-testsuite exists
  # (it failed to install on every run, said only on stderr).
  # apt-cache knows the version before python3 is installed (a clean machine).
  py_minor=$(apt-cache show --no-all-versions python3 2>/dev/null | sed -n 's/^Version: //p' \
               | cut -d. -f1,2 || true)
  case "$py_minor" in
    3.*) opt_pkgs=("${opt_pkgs[@]/#libpython3-testsuite/libpython$py_minor-testsuite}") ;;
  esac
fi

# gcc-multilib holds a single file, the link /usr/include/asm ->
# x86_64-linux-gnu/asm that `cc -m32` needs (<errno.h> includes
# <asm/errno.h>); the 32-bit compiler itself is gcc-<N>-multilib, which
# stays. Its conflict with the cross compilers is about that link, which
# they never read: each searches its own /usr/<triple>/include first, where
# its asm/ is. So when the cross compilers displaced it, the link is put
# back and -m32 keeps working (root only; said on stderr).
keep_m32() {
  [ "$(id -u)" = 0 ] || return 0
  [ -e /usr/include/asm ] || [ ! -d /usr/include/x86_64-linux-gnu/asm ] && return 0
  ls /usr/lib/gcc/x86_64-linux-gnu/*/32/libgcc.a >/dev/null 2>&1 || return 0
  ln -s x86_64-linux-gnu/asm /usr/include/asm
  echo "deps: the cross compilers replaced gcc-multilib; restored its /usr/include/asm link for -m32" >&2
}

if [ "$list_only" = 1 ]; then
  printf '%s\n' "${need_pkgs[@]}" "${opt_pkgs[@]}"
  exit 0
fi

missing=()
for i in "${!need_cmds[@]}"; do
  command -v "${need_cmds[$i]}" >/dev/null 2>&1 || missing+=("${need_pkgs[$i]}")
done
for p in "${need_debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
opt_missing=()
for p in "${opt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || opt_missing+=("$p")
done

[ ${#missing[@]} -eq 0 ] && [ ${#opt_missing[@]} -eq 0 ] && exit 0

if [ "$what" = check ]; then
  echo "deps: missing required packages: ${missing[*]}" >&2
  echo "deps: \`make build\` installs nothing; \`make test\` installs them when run as root," \
       "or: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine's own updates (unattended-upgrades) may hold dpkg's lock
  # for minutes: wait for it rather than fail or skip a stage.
  apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
  apt_get update -qq >/dev/null 2>&1 || true
  if [ ${#missing[@]} -gt 0 ]; then
    apt_get install -y -qq "${missing[@]}" >/dev/null
  fi
  for p in "${opt_missing[@]}"; do
    norec=()
    case "$p" in gcc-*-multilib | g++-*-multilib) norec=(--no-install-recommends) ;; esac
    if ! apt_get install -y -qq "${norec[@]}" "$p" >/dev/null 2>&1; then
      if [ "$what" = ci ]; then
        echo "deps: package $p could not be installed (.ci/run on CI: a stage that needs it" \
             "fails; a test that needs it is listed as skipped)" >&2
      else
        echo "deps: optional package $p could not be installed; its peer will be reported as missing" >&2
      fi
    fi
  done
  keep_m32
  exit 0
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: missing required packages: ${missing[*]}" >&2
  echo "deps: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "deps: optional peers not installed (benchmarks will report them missing): ${opt_missing[*]}" >&2
echo "deps: to compare against them: sudo apt-get install ${opt_missing[*]}" >&2
exit 0
