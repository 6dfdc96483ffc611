#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# usage: scripts/publish-report.sh [REPORT_DIR]
#
# Copies the charts of a generated report (default build/report, written by
# `make bench`) to docs/images/, where the README shows them, with
# docs/images/REPORT.txt saying which run they come from (machine, commit,
# profile, each command's exit status). Only the PNGs are committed: the
# JSON and text stay in the build folder, and `scripts/report.py` redraws
# the page from them. Refuses a quick (BENCH_QUICK=1) report unless
# PUBLISH_QUICK=1: its figures are too short to stand for the library.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
report=${1:-$here/../build/report}
dest=$here/../docs/images
if [ ! -f "$report/index.html" ] || ! ls "$report"/*.png >/dev/null 2>&1; then
  echo "publish-report: no report with charts in $report (run make bench first)" >&2
  exit 1
fi
if grep -q '^# profile: quick' "$report/runs.tsv" 2>/dev/null && [ "${PUBLISH_QUICK:-0}" != 1 ]; then
  echo "publish-report: $report is a quick (BENCH_QUICK=1) report; PUBLISH_QUICK=1 to publish it anyway" >&2
  exit 1
fi
mkdir -p "$dest"
rm -f "$dest"/*.png
cp "$report"/*.png "$dest"/
{
  echo "Charts of one \`make bench\` report (scripts/report.py), copied by scripts/publish-report.sh."
  machine=$(sed -n 's/.*<b>Machine:<\/b> \(.*\)<\/p>.*/\1/p' "$report/index.html" | head -1)
  echo "machine: ${machine:-unknown}"
  grep '^#' "$report/runs.tsv" 2>/dev/null | sed 's/^# //'
  echo "commands (name, exit status, seconds, command line):"
  grep -v '^#' "$report/runs.tsv" 2>/dev/null | sed 's/^/  /'
} > "$dest/REPORT.txt"
n=$(find "$report" -maxdepth 1 -name '*.png' | wc -l)
echo "publish-report: $n charts copied to docs/images/ (see REPORT.txt); commit them with the README"
