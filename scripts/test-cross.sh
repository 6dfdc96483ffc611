#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test-cross.sh -- the library and the whole ctest suite built for other
# architectures with Debian's cross compilers and run under qemu-user
# (issue 17; docs/TESTING.md, "Other architectures").
#
#   scripts/test-cross.sh [ARCH...]     ARCH: aarch64 armhf s390x i686
#                                       (default: all four)
#
# Each ARCH is configured in build-cross-<ARCH>/ with its toolchain file
# (cmake/toolchains/<triple>.cmake, which makes ctest run every test program
# under qemu-<arch>-static -L /usr/<triple>; no binfmt_misc needed), built,
# and run with ctest. One summary line per ARCH (passed, failed, skipped,
# seconds); exit 1 when any ARCH failed to configure, build or pass.
#
# Why these four: aarch64 (64-bit ARM), armhf (32-bit ARM with hard float,
# the boards users have: 4-byte size_t, strict alignment of 8-byte loads in
# some instructions), s390x (64-bit big-endian: every byte-order check and
# layout), i686 (32-bit x86: 4-byte alignment of 8-byte fields in structs).
#
# Environment:
#   JOBS               parallel build and ctest jobs (2)
#   CROSS_CMAKE_FLAGS  extra configure flags (e.g. -DRTMEM_WERROR=ON)
#   CROSS_CTEST_ARGS   extra ctest arguments (e.g. -R model_)
#   CROSS_SKIP_SLOW=1  also leave out the long benchmark-style lab runs
#                      (the CI stage sets it; see SLOW below)
#
# Tests that cannot run under qemu-user are left out by name (NOQEMU
# below), each with its reason printed and counted as skipped: never
# silently. Tests that skip themselves (exit 77) are counted by ctest.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
jobs=${JOBS:-2}

usage() {
  sed -n '3,/^set -uo/{/^set -uo/!p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# arch -> "triple qemu"
declare -A triple_of=([aarch64]=aarch64-linux-gnu [armhf]=arm-linux-gnueabihf
                      [s390x]=s390x-linux-gnu [i686]=i686-linux-gnu)
declare -A qemu_of=([aarch64]=qemu-aarch64-static [armhf]=qemu-arm-static
                    [s390x]=qemu-s390x-static [i686]=qemu-i386-static)

# Tests qemu-user cannot run: "ctest-name-regex -- reason". Matched against
# the names this build registers; each match is printed with its reason.
NOQEMU=(
  "^malloc_preload_ -- runs the host's own programs (python3, sqlite3, git, gcc) with the target's librtmem-malloc.so in LD_PRELOAD: a foreign library in a host process"
  "^shared_crash\$ -- single-steps a child with ptrace to kill it at every instruction; qemu-user does not emulate ptrace of its guest"
  "^cpp_pmr\\.(control_loop|mt_pipeline)\$ -- runs the loop under seccomp strict mode; qemu-user refuses prctl(PR_SET_SECCOMP) (EINVAL), and its own system calls would break it"
)
# Big-endian guests only (s390x on this little-endian host): priority-
# inheritance mutexes. On contention the kernel writes the owner's thread id
# into the futex word in the host's byte order; the big-endian guest reads it
# swapped, with FUTEX_OWNER_DIED set (glibc asserts, or a waiter never
# wakes). A qemu-user limit: the same tests pass on aarch64 and armhf.
NOQEMU_BE=(
  "^locked_heap\$ -- contended PI mutexes: qemu-user on a little-endian host hands a big-endian guest the kernel's futex owner word unswapped (glibc: \"robust || (oldval & FUTEX_OWNER_DIED) == 0\" failed)"
  "^cpp_pmr\\.threads\$ -- a locked heap shared by threads (a contended PI mutex): the same qemu-user futex byte-order limit (a waiter never woke)"
  "^lab\\.latency\\.(no-rt|subset|contended)\$ -- the locked heap's lock handover, and its contended run (a contended PI mutex): the same qemu-user futex byte-order limit"
)
# 32-bit guests only (armhf, i686): realloc of a huge block by mremap. Under
# qemu-arm a write to the moved pages faults in the host and qemu's handler
# retries it forever (a loop of host SIGSEGVs, never delivered to the guest;
# seen with qemu 7.2); the same test passes natively and under
# qemu-aarch64.
NOQEMU_32=(
  "^malloc_(large_huge_realloc|model_large)\$ -- realloc of a huge block (4 MiB and up on 32-bit) moves its pages with mremap; qemu-user for 32-bit guests loops on a host SIGSEGV when the guest writes the moved pages (both timed out at 1500 s under qemu-arm 7.2; malloc_large_huge_realloc passes natively and under qemu-aarch64)"
)
# Tests whose process execs a target program itself (a child re-executing
# /proc/self/exe, a script or a nested build running what it built): under
# qemu-user that exec reaches the host kernel, which runs a foreign binary
# only when binfmt_misc has qemu registered (or, for i686, when the kernel
# runs 32-bit code). Left out only when a probe program built for the
# target cannot be run directly.
NOEXEC=(
  "^consumer_builds\$ -- the consumer projects it builds (find_package, pkg-config, add_subdirectory) are run directly; the install layout is the same on every architecture and checked natively"
  "^shared_processes\$ -- two of its four workers are the test program started again with execl (independent executables, not forks)"
  "^malloc_options(_dropin)?\$ -- each bad option value is tried in a fresh process, /proc/self/exe re-executed"
  "^cpp_pmr_bench\\.runs\$ -- the benchmark runs each allocator in a child re-executing itself"
  "^lab\\.json\\.(bench_random|bench_random_sweep|bench_threads|limits)\\. -- the command's --quick run spawns the lab itself as its measuring child (the JSON checks are architecture-independent and run natively)"
  "^lab\\.(random|threads|limits)\\.(quick|sweep\\.quick|sweep\\.refusals|peer-not-installed|mt) -- a lab measurement: the lab spawns itself as its measuring child (lab.threads.mt.json reads that run's JSON)"
  "^lab\\.(json_stdout\\.limits|limits\\.json|zram\\.(quick|study))\$ -- a lab measurement: the lab spawns itself as its measuring child (lab.limits.json reads that run's JSON)"
  "^lab\\.random\\.grow\\.(quick|schema)\$ -- a lab measurement: the lab spawns itself as its measuring child (its schema check reads that run's JSON)"
  "^lab\\.record\\.(c|cxx|taskset|nice|env|chrt|sh-exec|script|python|final-only|clearenv|env-i|children|no-children|stale|static|exec-[a-z]+)(\\.check)?\$ -- rtmem record execs the program it records with the recorder preloaded (the check reads that trace)"
)
# The long benchmark-style lab runs (quick profiles of whole measurements,
# minutes each under qemu's 5-20x slowdown): left out only when
# CROSS_SKIP_SLOW=1, as in CI, where the time goes to the heap tests. Their
# misuse, help and unit tests still run.
SLOW=(
  "^model_[a-z]+_(medium|large|pools)\$ -- the model rig's bigger bands (heaps checked whole every few hundred steps): 3 to 25 minutes each under qemu-arm at load 10-14 (model_tlsf_pools 1163 s, model_halffit_medium 1105 s, model_tlsf_large past the 1500 s timeout); the tiny and small bands run here, every band natively and in make test-cross"
  "^lab\\.json\\. -- each runs a lab command's whole --quick measurement, then checks its JSON (the JSON checks are architecture-independent and run natively)"
  "^lab\\.(random|memcheck|threads|latency|limits)\\.quick -- a lab command's whole --quick measurement (a benchmark run, checked natively)"
)

# The skip table of the current ARCH (NOQEMU, NOEXEC when needed, SLOW
# with CROSS_SKIP_SLOW=1).
declare -a skip_table=()

list_tests() { ctest --test-dir "$1" -N 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: //p'; }

# Prints the regex for ctest -E, and "skipped (qemu-user) name: reason"
# lines to $2. The regex names the matched tests one by one (^name$|...):
# CMake's regular expressions allow only 9 groups, fewer than the table's
# patterns hold, so the patterns are matched here, by bash.
plan_skips() {
  local dir=$1 notes=$2 names entry re why name regex=""
  local -A seen=()
  names=$(list_tests "$dir")
  : >"$notes"
  for entry in "${skip_table[@]}"; do
    re=${entry%% -- *}
    why=${entry#* -- }
    while IFS= read -r name; do
      [ -n "$name" ] || continue
      if [[ $name =~ $re ]] && [ -z "${seen[$name]:-}" ]; then
        seen[$name]=1
        echo "  skipped (qemu-user): $name: $why" >>"$notes"
        regex=${regex:+$regex|}^${name//./\\.}\$ # test names: [A-Za-z0-9_.-]
      fi
    done <<<"$names"
  done
  echo "$regex"
}

# run_arch ARCH -> 0 when everything passed; prints the summary line.
run_arch() {
  local arch=$1 triple=${triple_of[$1]} qemu=${qemu_of[$1]}
  local dir=build-cross-$arch start=$SECONDS log notes regex
  local missing=()
  command -v "$triple-gcc" >/dev/null 2>&1 || missing+=("gcc-$triple")
  command -v "$qemu" >/dev/null 2>&1 || missing+=(qemu-user-static)
  if [ ${#missing[@]} -gt 0 ]; then
    summary+=("cross $arch: NOT RUN: missing ${missing[*]} (scripts/deps.sh cross installs them)")
    return 1
  fi
  mkdir -p "$dir"
  log=$dir/test-cross.log
  echo "== cross $arch ($triple, $qemu): configure and build in $dir/"
  # shellcheck disable=SC2086
  if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/$triple.cmake" ${CROSS_CMAKE_FLAGS:-} \
       >"$dir/configure.log" 2>&1; then
    tail -n 40 "$dir/configure.log"
    summary+=("cross $arch: FAILED to configure ($dir/configure.log)")
    return 1
  fi
  if ! cmake --build "$dir" -j "$jobs" >"$dir/build.log" 2>&1; then
    grep -E "error|Error" "$dir/build.log" | head -n 40
    summary+=("cross $arch: FAILED to build ($dir/build.log)")
    return 1
  fi
  # Can this machine exec a target binary directly (binfmt_misc, or i686
  # on an x86-64 kernel with 32-bit support)?
  local probe=$dir/exec-probe
  skip_table=("${NOQEMU[@]}")
  [ "$arch" = s390x ] && skip_table+=("${NOQEMU_BE[@]}")
  case "$arch" in armhf | i686) skip_table+=("${NOQEMU_32[@]}") ;; esac
  if echo 'int main(void){return 0;}' | "$triple-gcc" -x c - -o "$probe" 2>/dev/null \
     && "$probe" 2>/dev/null; then
    echo "== cross $arch: target programs run directly here (binfmt_misc or native)"
  else
    echo "== cross $arch: target programs do not run directly here (no binfmt_misc entry):" \
         "the tests that exec one are left out"
    skip_table+=("${NOEXEC[@]}")
  fi
  [ "${CROSS_SKIP_SLOW:-0}" = 1 ] && skip_table+=("${SLOW[@]}")
  notes=$dir/skipped-qemu.txt
  regex=$(plan_skips "$dir" "$notes")
  cat "$notes"
  local nskip
  nskip=$(grep -c . "$notes")
  echo "== cross $arch: ctest under $qemu"
  # shellcheck disable=SC2086
  # RTMEM_TEST_EMULATOR: tests that count page faults (malloc_arena_*)
  # print them without checking, as qemu-user's own faults are counted too.
  RTMEM_TEST_EMULATOR=$qemu \
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" ${regex:+-E "$regex"} \
        ${CROSS_CTEST_ARGS:-} 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  # ctest runs every test when its -E expression does not compile: never
  # count such a run.
  if grep -q "RegularExpression::compile" "$log"; then
    summary+=("cross $arch: FAILED: ctest could not compile the skip expression ($log)")
    return 1
  fi
  # ctest's own tally: "N% tests passed, F tests failed out of T"; its
  # skips (exit 77, disabled) are listed with "(Skipped)" / "(Disabled)".
  local line total failed skipped passed
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -n 1)
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  failed=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$line")
  skipped=$(grep -cE "\((Skipped|Disabled)\)$" "$log")
  if [ -z "$line" ]; then
    summary+=("cross $arch: FAILED: no ctest summary ($log)")
    return 1
  fi
  passed=$((total - failed - skipped))
  summary+=("cross $arch: $passed passed, $failed failed, $((skipped + nskip)) skipped ($skipped by ctest, $nskip left out under qemu-user), $((total + nskip)) tests, $((SECONDS - start)) s")
  [ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
}

archs=("$@")
[ ${#archs[@]} -gt 0 ] || archs=(aarch64 armhf s390x i686)
for a in "${archs[@]}"; do
  [ -n "${triple_of[$a]:-}" ] || { echo "test-cross.sh: unknown architecture '$a'" >&2; usage; }
done
summary=()
status=0
for a in "${archs[@]}"; do
  run_arch "$a" || status=1
done
echo "== cross summary"
printf '%s\n' "${summary[@]}"
exit $status
