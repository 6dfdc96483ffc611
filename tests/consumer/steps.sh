# shellcheck shell=bash disable=SC2034,SC2154
# SPDX-License-Identifier: MIT
# Sourced by run.sh and tools.sh here (after `set -euo pipefail`, with
# `here` set to this folder and `tag` to the prefix of every message): their
# common command line (BUILD WORK; the usage is the caller's header comment),
# the tools from the environment (CC, CMAKE), a fresh WORK folder with the
# install prefix WORK/prefix, and the quiet step runner.
src=$(cd "$here/../.." && pwd)
[ $# -eq 2 ] || { sed -n '3,/^set -e/{/^set -e/!p}' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
build=$(cd "$1" && pwd)
work=$2
cc=${CC:-cc}
cmake=${CMAKE:-cmake}

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

# run STEP COMMAND...: runs quietly into WORK/STEP.log; on failure prints it.
run() {
  local step=$1
  shift
  if ! "$@" >>"$work/$step.log" 2>&1; then
    echo "${tag}[$step]: FAILED: $*" >&2
    tail -n 60 "$work/$step.log" >&2
    exit 1
  fi
}
