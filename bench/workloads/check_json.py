#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_json.py -- the checks of the workloads.* ctest tests
(bench/workloads/CMakeLists.txt) on scripts/workloads.py:

  check_json.py JSON -- COMMAND...     COMMAND must exit 0 and write JSON with
                                       every field, one sample per run, each
                                       with its measures, and the summary
  check_json.py --usage TEXT -- COMMAND...
                                       COMMAND must exit 2, print a usage line
                                       and TEXT on stderr, and nothing on stdout
"""
import json
import os
import subprocess
import sys

FAILS = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


def usage_case(text, cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stderr)
    check(p.returncode == 2, "exit status 2 (got %d)" % p.returncode)
    check(p.stderr.startswith("usage: "), "usage line on stderr")
    check(text in p.stderr, "stderr names the error (%r)" % text)
    check(p.stdout == "", "nothing on stdout")


def json_case(path, cmd):
    if os.path.exists(path):
        os.unlink(path)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    check(p.returncode == 0, "exit status 0 (got %d)" % p.returncode)
    check("may be shared" in p.stdout, "the output says the machine may be shared")
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        check(False, "JSON readable: %s" % e)
        return
    for k in ("tool", "schema_version", "note", "started", "rounds", "quick", "ratio_time",
              "cpus", "loadavg_start", "loadavg_end", "allocators", "workloads", "samples",
              "summary", "overall", "output_mismatch", "failed_runs"):
        check(k in d, "JSON field %s" % k)
    if FAILS:
        return
    names = [a["name"] for a in d["allocators"] if a["status"] == "ok"]
    wls = [w["name"] for w in d["workloads"] if w["status"] == "ok"]
    check(len(names) >= 1 and len(wls) >= 1, "an allocator and a workload ran")
    check(len(d["samples"]) == d["rounds"] * len(names) * len(wls),
          "one sample per round, workload and allocator")
    for s in d["samples"]:
        for k in ("workload", "allocator", "round", "order", "wall_s", "user_s", "sys_s",
                  "cpu_s", "maxrss_kib", "exit", "ok"):
            check(k in s, "sample field %s" % k)
        check(s["ok"] and s["exit"] == 0, "run %s/%s succeeded" % (s["workload"],
                                                                  s["allocator"]))
        check(s["wall_s"] > 0 and s["cpu_s"] >= 0 and s["maxrss_kib"] > 0,
              "positive wall time and peak RSS")
    for w in wls:
        for a in names:
            v = d["summary"][w].get(a, {})
            for k in ("wall_s", "cpu_s", "maxrss_mib", "time_vs_best"):
                check(k in v, "summary %s %s has %s" % (w, a, k))
    check(d["output_mismatch"] == [] and d["failed_runs"] == 0, "no failed run, same outputs")


def main(argv):
    if "--" not in argv or argv.index("--") < 2:
        sys.stderr.write(__doc__)
        return 2
    sep = argv.index("--")
    cmd = argv[sep + 1:]
    if argv[1] == "--usage" and sep == 3:
        usage_case(argv[2], cmd)
    elif sep == 2:
        json_case(argv[1], cmd)
    else:
        sys.stderr.write(__doc__)
        return 2
    print("%d check(s) failed" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
