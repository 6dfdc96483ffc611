#!/bin/sh
# SPDX-License-Identifier: MIT
# docs/FIRMWARE.md against the sources a firmware team copies: every source
# file of src/heaps/ but the shared heaps' crash recovery (tlsf_rebuild.c)
# is named, and RTM_ALGORITHMS' default is said as the number of entries
# src/core/algorithms.h lists.
# usage: firmware_doc.sh SOURCE
set -eu
src=$1
doc=$src/docs/FIRMWARE.md
bad=0
for f in "$src"/src/heaps/*.c; do
  name=$(basename "$f")
  [ "$name" = tlsf_rebuild.c ] && continue
  grep -q "\`$name\`" "$doc" || { echo "FAIL: docs/FIRMWARE.md does not name $name"; bad=1; }
done
n=$(sed -n '/^#define RTM_ALGORITHMS(X)/,/^#endif/p' "$src/src/core/algorithms.h" | grep -c '^ *X(')
set -- zero one two three four five six seven eight nine ten eleven twelve
shift "$n"
word=$1
grep -q "| \`RTM_ALGORITHMS(X)\` | all $word " "$doc" ||
  { echo "FAIL: docs/FIRMWARE.md does not give RTM_ALGORITHMS' default as all $word ($n entries)"; bad=1; }
[ "$bad" = 0 ] && echo "ok: every heap source named, default 'all $word'"
exit "$bad"
