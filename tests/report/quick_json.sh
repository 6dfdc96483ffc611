#!/bin/sh
# SPDX-License-Identifier: MIT
# quick_json.sh -- the steps of the lab.json.<command>.* ctest entries
# (tools/lab/tests_report.cmake): run a command's --quick profile with
# --json, then check the file against the command's schema and the sanity
# rules. Split in steps so that ctest shows which one failed; the run is a
# ctest fixture the checks require.
#
#   quick_json.sh run    EXE ROOT STEM JSON ARGS...  rtmem ARGS --quick --json JSON; exit 0 needed
#   quick_json.sh schema PYTHON ROOT JSON STEM validate against ROOT/docs/schema/STEM.schema.json
#   quick_json.sh sane   PYTHON ROOT JSON      the sanity rules alone
#
# Exit 77 (ctest's skip) when the step cannot be made here: no python3, no
# schema for the command yet (a command without one is still being written:
# its run is skipped too), no JSON because the run was skipped, or (run) a
# command that is not built in this configuration (wcet needs rtmem-wcet).
set -u
step=$1
shift
skip() {
  echo "skipped: $*"
  exit 77
}

case "$step" in
run)
  exe=$1 root=$2 stem=$3 json=$4
  shift 4
  rm -f "$json"
  [ -f "$root/docs/schema/$stem.schema.json" ] || skip "no docs/schema/$stem.schema.json yet"
  if [ "$1" = wcet ] && [ ! -x "$(dirname "$exe")/rtmem-wcet" ]; then
    skip "rtmem-wcet is not built in this configuration"
  fi
  mkdir -p "$(dirname "$json")"
  "$exe" "$@" --quick --json "$json"
  rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: rtmem $* --quick exited $rc"
    exit 1
  fi
  [ -s "$json" ] || { echo "FAIL: rtmem $* --quick wrote no $json"; exit 1; }
  ;;
schema)
  py=$1 root=$2 json=$3 stem=$4
  case "$py" in "" | *NOTFOUND) skip "python3 not found" ;; esac
  schema=$root/docs/schema/$stem.schema.json
  [ -f "$schema" ] || skip "no $schema yet"
  [ -f "$json" ] || skip "no $json (the run was skipped)"
  exec "$py" "$root/scripts/validate_json.py" "$schema" "$json"
  ;;
sane)
  py=$1 root=$2 json=$3
  case "$py" in "" | *NOTFOUND) skip "python3 not found" ;; esac
  [ -f "$json" ] || skip "no $json (the run was skipped)"
  exec "$py" "$root/scripts/validate_json.py" --sane-only "$json"
  ;;
*)
  echo "usage: quick_json.sh run|schema|sane ..." >&2
  exit 2
  ;;
esac
