#!/bin/sh
# SPDX-License-Identifier: MIT
# Every mode of scripts/deps.sh that prepares a machine for the ctest suite
# (build: `make test`; cross: `make test-cross`, which runs the same suite
# under qemu) asks for each Debian package the suite's scripts name when
# they miss one ("(Debian: PACKAGE"), read from those scripts themselves: a
# fresh machine then runs the suite without failures for a missing package.
# usage: deps_suite.sh SOURCE
set -eu
src=$1
needed=$(grep -ho '(Debian: [a-z0-9.+-]*' "$src/scripts/validate_json.py" | sed 's/(Debian: //' | sort -u)
[ -n "$needed" ] || { echo "FAIL: no '(Debian: PACKAGE' in scripts/validate_json.py"; exit 1; }
bad=0
for mode in build cross; do
  list=$(bash "$src/scripts/deps.sh" --list "$mode") || { echo "FAIL: deps.sh --list $mode"; exit 1; }
  for pkg in $needed; do
    if printf '%s\n' "$list" | grep -qx "$pkg"; then
      echo "ok: deps.sh $mode installs $pkg"
    else
      echo "FAIL: deps.sh $mode does not install $pkg, which the test suite needs"
      bad=1
    fi
  done
done
exit "$bad"
