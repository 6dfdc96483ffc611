#!/bin/sh
# SPDX-License-Identifier: MIT
# `memcheck --help` names every algorithm the library has: the list an
# unknown --algorithm prints comes from rtm_algorithms(), and each of its
# names must appear, as a word, in the help text.
# usage: help_lists_all.sh RTMEM
set -u
names=$("$1" memcheck --algorithm no-such-heap 2>&1 | sed -n 's/^  \([a-z_]*\)$/\1/p')
[ -n "$names" ] || { echo "FAIL: no algorithm list after an unknown --algorithm"; exit 1; }
help=$("$1" memcheck --help)
bad=0
for n in $names; do
  printf '%s\n' "$help" | grep -qw -- "$n" || { echo "FAIL: memcheck --help omits $n"; bad=1; }
done
[ "$bad" = 0 ] && echo "ok: memcheck --help names" $names
exit "$bad"
