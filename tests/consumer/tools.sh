#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest tools_standalone: rtmem's tools (tools/, a CMake project of its own)
# built against an installed rtmem, as any user's project would be: install
# BUILD to WORK/prefix, configure tools/ alone with CMAKE_PREFIX_PATH at that
# prefix (find_package(rtmem)), build the lab, rtmem-wcet and the recorder,
# and run the lab. Proves the tools need nothing of rtmem but its installed
# headers and libraries.
#
# Usage: tests/consumer/tools.sh BUILD WORK
# Environment (set by tools/CMakeLists.txt from the build's settings):
#   CC                  the compiler (cc)
#   CONSUMER_CFLAGS     extra compiler flags (-m32, ...)
#   CONSUMER_SANITIZE   the build's RTMEM_SANITIZE, passed on to the tools
#   CMAKE               the cmake to use (cmake)
# Exit status: 0 passed, 1 a failure (the failing step's log is printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tag=tools
# shellcheck source=tests/consumer/steps.sh
. "$here/steps.sh"
tools=$work/build

run install "$cmake" --install "$build" --prefix "$prefix"
run configure "$cmake" -S "$src/tools" -B "$tools" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="${CONSUMER_CFLAGS:-}" \
    -DRTMEM_SANITIZE="${CONSUMER_SANITIZE:-}" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
grep -E "rtmem [0-9.]+ found in $prefix/" "$work/configure.log" \
  || { echo "tools[configure]: FAILED, rtmem not found under $prefix" >&2; exit 1; }
run build "$cmake" --build "$tools" -j 2
# Nothing of rtmem's source tree but tools/ on any compile line.
if grep -E -- "(-I|-isystem) *$src/(src|include)([/ ]|$)" "$tools/compile_commands.json"; then
  echo "tools[build]: FAILED, a compile line names rtmem's source tree" >&2
  exit 1
fi
for f in rtmem librtmem-record.so; do
  [ -e "$tools/$f" ] || { echo "tools[build]: FAILED, no $f in $tools" >&2; exit 1; }
done
echo "tools[build]: ok, built in $tools:" \
     "$(cd "$tools" && find rtmem rtmem-wcet librtmem-record.so librtmem-malloc.so \
          -maxdepth 0 2>/dev/null | tr '\n' ' ')"
run help "$tools/rtmem" --help
run memcheck "$tools/rtmem" memcheck --quick --algorithm tlsf
echo "tools[run]: ok, $(grep -c . "$work/memcheck.log") lines from rtmem memcheck --quick"
echo "tools: all passed"
