#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_report.py -- report.py on the fixture run folder (fixtures/run/):

  headline                          bench random's ratios (wcet absent)
  memcheck, bench random, --sweep   present (with an unknown extra field,
                                    a peer "not installed", a null point)
  bench threads                     exited 1 without writing its JSON
  wcet                              skipped (not built)
  limits                            absent altogether
  latency                           present but malformed ("tests": 5)

The page must be written, show every section (charts for the present ones
when matplotlib is there, "not run: <reason>" for the others, the drawing
error for latency without losing the rest), the verdict lines, the
machine, and nothing external: no script, no link or image off the folder.

usage: test_report.py REPORT_PY RUN_DIR OUT_DIR
"""
import os
import re
import shutil
import subprocess
import sys

FAILS = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    report, run_dir, out = argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(run_dir, out)  # report.py reads the .txt files beside the JSON
    p = subprocess.run([sys.executable, report, out], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    print(p.stdout)
    check(p.returncode == 0, "report.py exits 0")
    index = os.path.join(out, "index.html")
    check(os.path.exists(index), "index.html written")
    if not os.path.exists(index):
        return 1
    with open(index, encoding="utf-8") as f:
        page = f.read()
    for anchor in ("headline", "memcheck", "bench_random", "bench_random_sweep", "bench_threads", "limits",
                   "wcet", "latency"):
        check('id="%s"' % anchor in page, "section %s present" % anchor)
    check("Fixture CPU" in page, "machine described")
    check("rtmem memcheck --all --quick" in page, "commands listed")
    check("not run: `rtmem bench threads --quick` exited 1" in page, "failed command says so")
    check("not run: rtmem-wcet not built" in page, "skipped command says why")
    check("not run: limits.json is not in" in page, "absent command says so")
    check("could not be drawn" in page, "malformed latency.json reported")
    check("not installed" in page, "a missing peer shown as not installed")
    check("random_overhead_pct" in page and "PASS" in page and "FAIL" in page,
          "verdict lines shown")
    # The headline table: TLSF's ratio to mimalloc in the same bench random
    # file, worked out here from the fixture (min / min, median / median).
    import json
    with open(os.path.join(run_dir, "bench_random.json"), encoding="utf-8") as f:
        by_name = {a["name"]: a.get("ns_per_pair") for a in json.load(f)["allocators"]}
    t, m = by_name["tlsf"], by_name["mimalloc"]
    ratio = "%.2f / %.2f" % (t["min"] / m["min"], t["median"] / m["median"])
    head = page[page.find('id="headline"'):page.find('id="memcheck"')]
    check(ratio in head, "headline: tlsf / mimalloc %s" % ratio)
    check("mimalloc missing" not in head, "headline: mimalloc found")
    check("<script" not in page.lower(), "no script")
    refs = re.findall(r'(?:src|href)="([^"]+)"', page)
    check(all(not re.match(r"[a-z]+:", r) and not r.startswith("/") for r in refs if
              not r.startswith("#")), "no external or absolute reference")
    missing = [r for r in refs if not r.startswith("#") and
               not os.path.exists(os.path.join(out, r))]
    check(not missing, "every referenced file exists %s" % (missing or ""))
    if "Charts not drawn" in page:
        print("matplotlib missing: charts not checked")
    else:
        for png in ("memcheck_times", "memcheck_overhead", "random_pair", "random_percentiles",
                    "random_sweep"):
            path = os.path.join(out, png + ".png")
            ok = os.path.exists(path) and os.path.getsize(path) > 5000
            check(ok, "%s.png drawn" % png)
            check('src="%s.png"' % png in page, "%s.png shown" % png)
    print("%d checks failed" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
