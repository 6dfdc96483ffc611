#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The consumer builds (ctest consumer_builds): rtmem used the three ways a
# user's project uses it, each building and running heap_consumer.c and
# malloc_consumer.c beside this script.
#
#   install   cmake --install BUILD --prefix WORK/prefix, and the layout
#             README.md promises (headers, both libraries static and shared,
#             CMake package, pkg-config files)
#   package   package/: find_package(rtmem 0.2) against that prefix, linking
#             rtmem::rtmem, rtmem::rtmem_shared and rtmem::malloc, and a C++17
#             program on <rtmem/pmr.hpp> when a C++ compiler is found (CXX,
#             default c++); and find_package(rtmem 1.0) must fail
#   pkgconfig a plain compiler command line with `pkg-config --cflags --libs
#             rtmem` (and rtmem-malloc), PKG_CONFIG_PATH at the prefix
#   subdir    subdir/: a parent project doing add_subdirectory(<rtmem>),
#             which must not build rtmem's tests or tools
#
# Usage: tests/consumer/run.sh BUILD WORK
# Environment (set by tests/CMakeLists.txt from the build's settings):
#   CC                  the compiler (cc)
#   CONSUMER_CFLAGS     extra compiler flags for every consumer (-m32, ...)
#   CONSUMER_SANITIZE   the build's RTMEM_SANITIZE: consumers are built with
#                       it too (a sanitized library needs the runtime), and
#                       the drop-in malloc's programs are left out (the
#                       sanitizer runtime owns malloc)
#   CMAKE               the cmake to use (cmake)
# Exit status: 0 all passed, 1 a failure (the failing step's log is printed),
# 77 skipped (pkg-config missing skips only its step, no C++17 compiler for
# these flags only the C++ consumer, not the rest: the whole test then
# reports Skipped, never Passed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=consumer
# shellcheck source=tests/consumer/steps.sh
. "$here/steps.sh"
cxx=${CXX:-c++}
sanitize=${CONSUMER_SANITIZE:-}
cflags=${CONSUMER_CFLAGS:-}
if [ -n "$sanitize" ]; then
  cflags="$cflags -fsanitize=$sanitize -fno-omit-frame-pointer"
fi
with_malloc=ON
[ -n "$sanitize" ] && with_malloc=OFF
# The C++ consumer needs a C++17 compiler that builds with these flags
# (-m32 needs g++-multilib, not only gcc-multilib).
with_cxx=OFF
# shellcheck disable=SC2086
if command -v "$cxx" >/dev/null 2>&1 &&
   echo 'int main(){return 0;}' | "$cxx" -std=c++17 $cflags -x c++ - -o /dev/null 2>/dev/null; then
  with_cxx=ON
fi

# expect_output STEP PROGRAM...: runs a consumer program and shows its line.
expect_output() {
  local step=$1
  shift
  run "$step" "$@"
  echo "consumer[$step]: $(tail -n 1 "$work/$step.log")"
}

echo "consumer: rtmem source $src, build $build, flags '${cflags# }'," \
     "drop-in malloc programs: $with_malloc"

# --- install -----------------------------------------------------------------
run install "$cmake" --install "$build" --prefix "$prefix"
libdir=$(dirname "$(find "$prefix" -name librtmem.a | head -n 1)")
[ -d "$libdir" ] || { echo "consumer[install]: no librtmem.a under $prefix" >&2; exit 1; }
missing=()
for f in include/rtmem.h include/rtmem/common.h include/rtmem/version.h include/rtmem/tlsf.h \
         include/rtmem/malloc.h include/rtmem/pmr.hpp; do
  [ -f "$prefix/$f" ] || missing+=("$f")
done
for f in librtmem.a librtmem.so librtmem-malloc.a librtmem-malloc.so \
         cmake/rtmem/rtmemConfig.cmake cmake/rtmem/rtmemConfigVersion.cmake \
         cmake/rtmem/rtmemTargets.cmake pkgconfig/rtmem.pc pkgconfig/rtmem-malloc.pc \
         pkgconfig/rtmem-static.pc pkgconfig/rtmem-malloc-static.pc; do
  [ -e "$libdir/$f" ] || missing+=("${libdir#"$prefix"/}/$f")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "consumer[install]: FAILED, not installed: ${missing[*]}" >&2
  exit 1
fi
echo "consumer[install]: ok, $(find "$prefix" -type f | wc -l) files under" \
     "include/ and ${libdir#"$prefix"/}/"

# --- package: find_package(rtmem) --------------------------------------------
pkg=$work/package
run package "$cmake" -S "$here/package" -B "$pkg" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCONSUMER_MALLOC=$with_malloc \
    -DCONSUMER_CXX=$with_cxx -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cflags"
run package "$cmake" --build "$pkg" -j 2
expect_output package "$pkg/heap_consumer"
expect_output package "$pkg/heap_consumer_shared"
[ $with_malloc = ON ] && expect_output package "$pkg/malloc_consumer"
if [ $with_cxx = ON ]; then
  expect_output package "$pkg/pmr_consumer"
else
  echo "consumer[package]: C++ consumer skipped, no C++17 compiler for flags '$cflags'" \
       "($cxx; Debian: g++, g++-multilib for -m32)"
  skipped_parts="${skipped_parts:-} C++-consumer"
fi
# rtmem 0.x promises compatibility within a minor version only.
if "$cmake" -S "$here/package" -B "$work/package-1.0" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_C_COMPILER="$cc" -DRTMEM_WANT=1.0 >"$work/package-1.0.log" 2>&1; then
  echo "consumer[package]: FAILED, find_package(rtmem 1.0) accepted this rtmem" >&2
  exit 1
fi
echo "consumer[package]: ok (find_package(rtmem 1.0) refused, as it must)"

# --- pkg-config ----------------------------------------------------------------
if command -v pkg-config >/dev/null 2>&1; then
  export PKG_CONFIG_PATH=$libdir/pkgconfig
  pc=$work/pkgconfig
  mkdir -p "$pc"
  version=$(pkg-config --modversion rtmem)
  [ "$version" = "$(sed -n 's/^#define RTM_VERSION_STRING "\(.*\)"/\1/p' \
      "$src/include/rtmem/version.h")" ] \
    || { echo "consumer[pkgconfig]: FAILED, rtmem.pc says version $version" >&2; exit 1; }
  # Word splitting of the flags is wanted here, as on a user's command line.
  # shellcheck disable=SC2046,SC2086
  run pkgconfig "$cc" $cflags -Wall -Wextra -Werror -o "$pc/heap_consumer" "$here/heap_consumer.c" \
      $(pkg-config --cflags --libs rtmem)
  expect_output pkgconfig env LD_LIBRARY_PATH="$libdir" "$pc/heap_consumer"
  if [ $with_malloc = ON ]; then
    # shellcheck disable=SC2046,SC2086
    run pkgconfig "$cc" $cflags -Wall -Wextra -Werror -o "$pc/malloc_consumer" \
        "$here/malloc_consumer.c" $(pkg-config --cflags --libs rtmem-malloc)
    expect_output pkgconfig env LD_LIBRARY_PATH="$libdir" "$pc/malloc_consumer"
  fi
  echo "consumer[pkgconfig]: ok (rtmem.pc version $version: $(pkg-config --cflags --libs rtmem))"
else
  echo "consumer[pkgconfig]: skipped, pkg-config not installed (Debian: pkg-config)"
  skipped_parts="${skipped_parts:-} pkg-config"
fi

# --- subdir: add_subdirectory(rtmem) -----------------------------------------
sub=$work/subdir
sub_args=()
[ -n "$sanitize" ] && sub_args+=(-DRTMEM_SANITIZE="$sanitize")
run subdir "$cmake" -S "$here/subdir" -B "$sub" -DRTMEM_SOURCE_DIR="$src" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCONSUMER_MALLOC=$with_malloc \
    "${sub_args[@]}"
run subdir "$cmake" --build "$sub" -j 2
built_tests=$(find "$sub" -type f -perm -u+x \( -name 'test_*' -o -name rtmem \
                -o -name rtmem-wcet \) | head -n 5)
if [ -n "$built_tests" ]; then
  echo "consumer[subdir]: FAILED, rtmem built its tests or tools: $built_tests" >&2
  exit 1
fi
expect_output subdir "$sub/heap_consumer"
[ $with_malloc = ON ] && expect_output subdir "$sub/malloc_consumer"
echo "consumer[subdir]: ok (no test or tool of rtmem built;" \
     "$(find "$sub/rtmem" -maxdepth 1 -name 'librtmem*' | wc -l) rtmem libraries)"

if [ -n "${skipped_parts:-}" ]; then
  echo "consumer: passed, except what was skipped:${skipped_parts}"
  exit 77
fi
echo "consumer: all passed"
