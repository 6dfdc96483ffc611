#!/bin/sh
# scripts/check-spdx.sh [--fix] -- every source file of rtmem (C, C++,
# headers, CMake, shell, Python under include/ src/ tests/ tools/ bench/
# examples/ scripts/ cmake/) names its licence with an
# "SPDX-License-Identifier: MIT" line among its first five lines, so a file
# copied out of the tree still says what it may be used for (LICENSE).
# Exit status 1 lists the files without one; --fix adds the line (after a
# #! line, in the file's own comment syntax) and exits 0. Exit 1 too when
# git lists no file (not a checkout, git failing): a check of no file
# would pass.
set -eu
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
missing=0
tracked=$(git ls-files include src tests tools bench examples scripts cmake CMakeLists.txt) || {
  echo "check-spdx: git ls-files failed: nothing would be checked" >&2
  exit 1
}
files=$(echo "$tracked" | grep -E '\.(c|h|cpp|hpp|cmake|sh|py|in)$|CMakeLists\.txt$' \
          | grep -v '^tests/fuzz/corpus/' | grep -v '^tests/fuzz/regressions/' || true)
if [ -z "$files" ]; then
  echo "check-spdx: git lists no source file here: nothing would be checked" >&2
  exit 1
fi
checked=0
for f in $files; do
  checked=$((checked + 1))
  head -n 5 "$f" | grep -q 'SPDX-License-Identifier: MIT' && continue
  if [ $fix -eq 0 ]; then
    echo "no SPDX line: $f"
    missing=1
    continue
  fi
  case "$f" in
    *.c|*.h|*.cpp|*.hpp) line='// SPDX-License-Identifier: MIT' ;;
    *) line='# SPDX-License-Identifier: MIT' ;;
  esac
  if head -n 1 "$f" | grep -q '^#!'; then
    { head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } > "$f.spdx"
  else
    { echo "$line"; cat "$f"; } > "$f.spdx"
  fi
  chmod --reference="$f" "$f.spdx"
  mv "$f.spdx" "$f"
done
[ $missing -eq 0 ] && echo "check-spdx: all $checked source files carry the SPDX line"
exit $missing
