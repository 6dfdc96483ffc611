#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# README.md's snippets and commands, run as written (ctest readme.snippets),
# so that the README cannot drift from the code again:
#
#   usage     the C program of "## Usage", built by its "Build with `...`"
#             command and run (exit 0, its "used ..." line)
#   cxx       the C++ program of "## C++", the same way (skipped without a
#             C++17 compiler)
#   pkgconfig the sh block after "**Installed, with pkg-config.**": rtmem
#             installed to WORK/prefix, /opt/rtmem in the block replaced by
#             that prefix, the block run as one script; after each line that
#             builds `-o app`, ./app must start and exit 0 with nothing set
#             at run time (no LD_LIBRARY_PATH): the static form must not
#             need librtmem.so (skipped without pkg-config)
#   dropin    the sh block of "## The drop-in malloc", run as one script with
#             RTMEM_SHOW_STATS=1, where `your-program` is a wrapper that
#             changes directory before it execs a program that allocates (as
#             `sh -c 'cd ... && exec ...'`, service managers and build tools
#             do); every run of it must be served by the drop-in (its stats
#             printed, no "cannot be preloaded") and each RTMEM_ARENA=256m
#             run must report a 256 MiB real-time arena (left out in
#             sanitizer builds: the sanitizer runtime owns malloc)
#
# Each command runs verbatim in WORK, which stands for the repository's
# root: WORK/include and WORK/build are links to the source's include/ and
# the build folder; `cc` and `c++` are wrappers adding the build's own
# flags (EXTRA_CFLAGS: -m32, sanitizers).
#
# Usage: tests/readme/run.sh SOURCE BUILD WORK
# Environment: CC, CXX, CMAKE (the tools; cc, c++, cmake), EXTRA_CFLAGS,
#   WITH_DROPIN (ON/OFF, default ON).
# Exit status: 0 all passed, 1 a failure (its output printed), 77 when a
# part was skipped for a missing tool and everything else passed.
set -euo pipefail
[ $# -eq 3 ] || { sed -n '3,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
work=$3
cc=${CC:-cc}
cxx=${CXX:-c++}
cmake=${CMAKE:-cmake}
extra=${EXTRA_CFLAGS:-}
with_dropin=${WITH_DROPIN:-ON}
readme=$src/README.md
skipped=()

rm -rf "$work"
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
ln -s "$src/include" "$work/include"
ln -s "$build" "$work/build"
# cc and c++ as the README writes them, with this build's flags; the real
# compilers by their full paths, found before WORK/bin is on PATH.
for tool in cc c++; do
  real=$cc
  [ "$tool" = c++ ] && real=$cxx
  real=$(command -v "$real" || echo "$real")
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$real" "$extra" >"$work/bin/$tool"
  chmod +x "$work/bin/$tool"
done
export PATH="$work/bin:$PATH"

# fail STEP WHY: reports a failed part; the other parts still run, so one
# run shows every snippet that drifted.
failed=()
fail() {
  echo "readme[$1]: FAILED: $2" >&2
  [ -f "$work/$1.log" ] && tail -n 40 "$work/$1.log" >&2
  failed+=("$1")
}

# The program a build command wrote: -o NAME, else a.out.
built_by() {
  case " $1 " in
  *" -o app "*) echo ./app ;;
  *) echo ./a.out ;;
  esac
}

# block SECTION FENCE: the first ```FENCE block after the line SECTION,
# before the next heading or bold paragraph title.
block() {
  awk -v sec="$1" -v fence="$2" '
    $0 == sec { in_sec = 1; next }
    in_sec && !in_block && (/^#/ || /^\*\*/) { exit }
    in_sec && !in_block && $0 == "```" fence { in_block = 1; next }
    in_block && /^```/ { exit }
    in_block { print }' "$readme"
}

# build_command SECTION N: the Nth "Build with `...`" command after SECTION.
build_command() {
  { awk -v sec="$1" '$0 == sec { on = 1 } on' "$readme" | tr '\n' ' ' |
      grep -o 'Build with `[^`]*`' | sed -n "$2p" | sed 's/^Build with `\(.*\)`$/\1/'; } || true
}

# snippet STEP SECTION FENCE FILE N: writes the block to WORK/FILE, builds it
# with its command and runs ./app.
snippet() {
  local step=$1 file=$4 cmd
  block "$2" "$3" >"$work/$file"
  [ -s "$work/$file" ] || { fail "$step" "no \`\`\`$3 block after '$2' in README.md"; return; }
  cmd=$(build_command "$2" "$5")
  [ -n "$cmd" ] || { fail "$step" "no 'Build with \`...\`' command after '$2'"; return; }
  prog=$(built_by "$cmd")
  if (cd "$work" && rm -f app a.out && sh -ec "$cmd" && "$prog") >"$work/$step.log" 2>&1; then
    echo "readme[$step]: ok: $cmd -> $(tail -n 1 "$work/$step.log")"
  else
    fail "$step" "$cmd, then $prog"
  fi
}

snippet usage "## Usage" c app.c 1
if echo 'int main(){return 0;}' | "$work/bin/c++" -std=c++17 -x c++ - -o /dev/null 2>/dev/null; then
  snippet cxx "## C++" cpp app.cpp 1
else
  echo "readme[cxx]: skipped, no C++17 compiler ($cxx)"
  skipped+=(cxx)
fi

# --- pkg-config: installed to WORK/prefix, standing for /opt/rtmem -----------
if command -v pkg-config >/dev/null 2>&1; then
  prefix=$work/prefix
  "$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { fail install "cmake --install"; exit 1; }
  pc=$(find "$prefix" -name rtmem.pc | head -n 1)
  libdir=$(dirname "$(dirname "$pc")")
  # Before: a sh block; the old README had its command inline, in backquotes.
  block "**Installed, with pkg-config.**" sh >"$work/pkgconfig.sh"
  if [ ! -s "$work/pkgconfig.sh" ]; then
    awk '$0 == "**Installed, with pkg-config.**" { on = 1; next } on && /^$/ { exit } on' \
      "$readme" | grep -o '`[^`]*pkg-config[^`]*`' | tr -d '`' >"$work/pkgconfig.sh" || true
  fi
  # The README's libdir is lib/; GNUInstallDirs may have chosen another.
  # After each line that builds a program, the program must start as it is.
  sed -e "s|/opt/rtmem/lib|$libdir|g" -e "s|/opt/rtmem|$prefix|g" "$work/pkgconfig.sh" |
    awk '{ print }
         /(^| )(cc|c\+\+) / { print ($0 ~ / -o app / ? "./app" : "./a.out") }' >"$work/pkgconfig.run"
  block "## Usage" c >"$work/app.c"
  if ! grep -q 'pkg-config' "$work/pkgconfig.sh"; then
    fail pkgconfig "no pkg-config command after '**Installed, with pkg-config.**'"
  elif ! grep -qE '^\./(app|a\.out)$' "$work/pkgconfig.run"; then
    fail pkgconfig "no command of the block builds a program"
  elif (cd "$work" && env -u LD_LIBRARY_PATH sh -ex pkgconfig.run) >"$work/pkgconfig.log" 2>&1; then
    echo "readme[pkgconfig]: ok: $(grep -cE '^\./(app|a\.out)$' "$work/pkgconfig.run") programs" \
         "built and run from the prefix without LD_LIBRARY_PATH"
  else
    fail pkgconfig "the commands, run as written (with /opt/rtmem at $prefix)"
  fi
else
  echo "readme[pkgconfig]: skipped, pkg-config not installed (Debian: pkg-config)"
  skipped+=(pkgconfig)
fi

# --- the drop-in malloc --------------------------------------------------------
if [ "$with_dropin" = ON ]; then
  # A program that allocates and exits normally (the drop-in prints its
  # statistics at exit), and `your-program`: a wrapper that changes
  # directory first.
  cat >"$work/your-program.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *p = malloc(1000);
    if (p == NULL)
        return 1;
    memset(p, 1, 1000);
    printf("allocated %d\n", p[999]);
    free(p);
    return 0;
}
EOF
  "$work/bin/cc" "$work/your-program.c" -o "$work/allocates" >"$work/dropin.log" 2>&1 ||
    { fail dropin "cannot build the test's own program"; exit 1; }
  printf '#!/bin/sh\ncd / && exec %s "$@"\n' "$work/allocates" >"$work/bin/your-program"
  chmod +x "$work/bin/your-program"
  block "## The drop-in malloc" sh >"$work/dropin.sh"
  runs=$(grep -c 'your-program\b' "$work/dropin.sh" | tr -d ' ')
  arenas=$(grep -c 'RTMEM_ARENA=256m [^#]*your-program' "$work/dropin.sh" | tr -d ' ')
  (cd "$work" && RTMEM_SHOW_STATS=1 sh -ex dropin.sh) >>"$work/dropin.log" 2>&1 ||
    fail dropin "the block, run as written"
  served=$(grep -c '^rtmem-malloc stats:' "$work/dropin.log" || true)
  with_arena=$(grep -c '^  real-time arena bytes: 268435456 ' "$work/dropin.log" || true)
  # Every line naming your-program runs it once, except a build line.
  expected=$((runs - $(grep -c '^cc .*your-program\.c' "$work/dropin.sh" || true)))
  if [ "$arenas" -eq 0 ]; then
    fail dropin "no line of the block runs your-program with RTMEM_ARENA=256m"
  elif grep 'cannot be preloaded' "$work/dropin.log" | grep -qv 'wrong ELF class'; then
    # (A wrong ELF class is the wrapper's /bin/sh in a -m32 build: the
    # host's shell cannot load the 32-bit drop-in, the program it execs
    # does, and "served" below counts that.)
    fail dropin "the loader did not find the drop-in after the wrapper changed directory"
  elif [ "$served" -lt "$expected" ]; then
    fail dropin "$served runs served by the drop-in (statistics printed), expected $expected"
  elif [ "$with_arena" -lt "$arenas" ]; then
    fail dropin "$with_arena runs with a 256 MiB real-time arena, expected $arenas"
  else
    echo "readme[dropin]: ok: $served runs served by the drop-in, $with_arena of them in" \
         "real-time mode, through a wrapper that changes directory"
  fi
else
  echo "readme[dropin]: left out in this build (WITH_DROPIN=OFF: sanitizers own malloc)"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "readme: FAILED: ${failed[*]}"
  exit 1
fi
if [ ${#skipped[@]} -gt 0 ]; then
  echo "readme: passed, except ${skipped[*]} (skipped)"
  exit 77
fi
echo "readme: all passed"
