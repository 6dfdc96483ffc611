#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/lab/tests/json_stdout.sh RTMEM COMMAND... -- runs `RTMEM COMMAND...
# --json -` and checks the promise of "--json -": standard output holds one
# JSON document and nothing else (python3 parses it whole, and its "command"
# is the one run), while the tables went to standard error.
set -u
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
exe=$1
shift
"$exe" "$@" --json - >"$out" 2>"$err"
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "exit status $rc"; cat "$err"; exit 1
fi
python3 - "$out" "$1" <<'PY' || { echo "--- stdout:"; head -c 2000 "$out"; exit 1; }
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)          # fails on anything but one JSON value
if doc.get("tool") != "rtmem" or doc.get("command") != sys.argv[2]:
    sys.exit("JSON on stdout is not this command's: %r" % {k: doc.get(k) for k in ("tool", "command")})
print("stdout: one JSON document of command", doc["command"])
PY
if ! [ -s "$err" ]; then
  echo "nothing on stderr: where did the tables go?"; exit 1
fi
echo "stderr: $(wc -l <"$err") lines of tables"
