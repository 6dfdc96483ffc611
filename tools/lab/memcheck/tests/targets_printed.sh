#!/bin/sh
# SPDX-License-Identifier: MIT
# memcheck's TLSF targets, read as a user reads them: each line's verdict
# must follow from the two figures it prints (value <= limit compared as
# printed), the heading must say whose targets they are, and all four must
# be there. Seed 3 of the default profile gives a random-phase overhead just
# above 10.80 % before rounding, which printed "10.80 % <= 10.8 %  FAIL"
# when the verdict was taken on the unrounded value.
# usage: targets_printed.sh RTMEM [SEED]
set -eu
rtmem=$1
seed=${2:-3}
out=$("$rtmem" memcheck --algorithm tlsf --seed "$seed" --no-rt 2>/dev/null)
heading=$(printf '%s\n' "$out" | grep -i "targets" | head -n 1)
bad=0
case $heading in
*"rtmem's targets for its TLSF"*) ;;
*) echo "FAIL: the targets' heading does not say whose they are: '$heading'"; bad=1 ;;
esac
# The four lines after the heading, whatever it says.
lines=$(printf '%s\n' "$out" | grep -A4 -i -E "^([^ ].*)?targets" | grep ' <= ' || true)
printf '%s\n' "$lines"
# "  <what>   10.80 % <=  10.80 %  PASS": the verdict against the printed figures.
printf '%s\n' "$lines" | awk '
  { n++
    for (i = 1; i <= NF; i++) if ($i == "<=") at = i
    value = $(at - 2) + 0; limit = $(at + 1) + 0; verdict = $NF
    want = value <= limit ? "PASS" : "FAIL"
    if (verdict != want) { print "FAIL: " $0 " (the figures as printed say " want ")"; bad = 1 }
  }
  END { if (n != 4) { print "FAIL: " n " target lines, expected 4"; bad = 1 }; exit bad }' ||
  bad=1
[ "$bad" = 0 ] && echo "ok: every verdict follows from the printed figures (seed $seed)"
exit "$bad"
