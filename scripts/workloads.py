#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""scripts/workloads.py -- the drop-in malloc (librtmem-malloc.so) against
glibc, mimalloc, jemalloc and tcmalloc on the classic allocator workloads
(docs/MALLOC.md, "Workloads"): the synthetic programs of bench/workloads/
(built as BUILD_DIR/rtmem-workload-*), producer/consumer through `rtmem
bench threads --bench pc`, and real programs (python3, sqlite3, gcc,
redis-server when installed).

It owns the measuring: each run is one process started through the small
launcher bench/workloads/run.c (BUILD_DIR/rtmem-workload-run), its
allocator chosen by LD_PRELOAD (glibc: none); the launcher waits for it
with wait4 and reports its wall time, user+sys CPU time and peak RSS
(ru_maxrss, which covers the waited-for children too: gcc's cc1). Python
does not fork the command itself because Linux carries a process's peak RSS
across exec: forked from python, every run would start at python's own
peak. Rounds are interleaved (round r runs every allocator once per
workload, in an order rotated each round), so a noisy neighbour hits every
allocator alike. Stdlib only."""

import argparse
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
WORKDIR = os.path.join(ROOT, "bench", "workloads")
ALLOCATORS = ["glibc", "mimalloc", "jemalloc", "tcmalloc", "rtmem"]
PEERS = ["glibc", "mimalloc", "jemalloc", "tcmalloc"]  # the "best peer" set
# The files tools/lab/common/peers.c looks for, in its order.
LIBS = {
    "mimalloc": ["libmimalloc.so.2", "libmimalloc.so"],
    "jemalloc": ["libjemalloc.so.2", "libjemalloc.so"],
    "tcmalloc": ["libtcmalloc_minimal.so.4", "libtcmalloc.so.4"],
}
NOTE = ("note: the machine may be shared (other builds, other users): times are "
        "wall and CPU seconds of a possibly noisy machine; compare medians of "
        "interleaved rounds, and read small differences as noise")


def usage_error(parser, msg):
    parser.print_usage(sys.stderr)
    print("workloads.py: error: %s" % msg, file=sys.stderr)
    sys.exit(2)


# --- allocators ---------------------------------------------------------

def multiarch():
    m = sysconfig.get_config_var("MULTIARCH")
    if m:
        return m
    return {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu",
            "i686": "i386-linux-gnu"}.get(platform.machine(), "")


def search_dirs():
    dirs = []
    m = multiarch()
    if m:
        dirs += ["/usr/lib/" + m, "/lib/" + m]
    return dirs + ["/usr/local/lib", "/usr/lib64", "/usr/lib", "/lib64", "/lib"]


def locate(name, build):
    """The library of an allocator: (path, "") or (None, why). glibc: ("", "")."""
    if name == "glibc":
        return "", ""
    env = "RTMEM_BENCH_LIB_" + name.upper()
    forced = os.environ.get(env, "")
    if forced:
        if os.access(forced, os.R_OK):
            return os.path.abspath(forced), ""
        return None, "not installed (%s=%s is not readable)" % (env, forced)
    if name == "rtmem":
        p = os.path.join(build, "librtmem-malloc.so")
        return (p, "") if os.access(p, os.R_OK) else (None, "not built (%s)" % p)
    for f in LIBS[name]:
        for d in search_dirs():
            p = os.path.join(d, f)
            if os.access(p, os.R_OK):
                return p, ""
    return None, "not installed (scripts/deps.sh bench installs it; or set %s)" % env


def alloc_env(lib):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
    return env


def preload_works(lib):
    """Whether ld.so maps lib into a process it is preloaded into (it only
    warns and goes on without it when it cannot)."""
    if not lib:
        return True, ""
    cat = shutil.which("cat") or "/bin/cat"
    r = subprocess.run([cat, "/proc/self/maps"], env=alloc_env(lib), capture_output=True,
                       text=True)
    real = os.path.realpath(lib)
    if r.returncode == 0 and real in r.stdout:
        return True, ""
    return False, "LD_PRELOAD=%s did not take effect (%s)" % (lib, r.stderr.strip()[:200])


# --- workloads ----------------------------------------------------------

def gen_c_file(path, funcs):
    """A mid-size generated C file for the gcc workload: functions with
    structs, loops, switches and string constants (so cc1 builds and frees
    many trees, as on real code)."""
    with open(path, "w") as f:
        f.write("#include <stddef.h>\n#include <string.h>\n")
        f.write("struct rec { int id; double v[4]; const char *name; struct rec *next; };\n")
        for i in range(funcs):
            f.write("static const char *names_%d[] = {%s};\n" % (
                i, ", ".join('"n%d_%d"' % (i, k) for k in range(8))))
            f.write("int f%d(struct rec *r, int n, const char *key) {\n" % i)
            f.write("  int acc = %d; double s = 0;\n" % i)
            f.write("  for (int k = 0; k < n && r; k++, r = r->next) {\n")
            f.write("    switch ((r->id + k) % 7) {\n")
            for c in range(7):
                f.write("    case %d: acc += r->id * %d ^ (int)(r->v[%d] * %d); "
                        "s += r->v[%d] / (k + %d); break;\n" % (c, c + i, c % 4, c + 3,
                                                                (c + 1) % 4, c + 1))
            f.write("    }\n    if (strcmp(r->name, names_%d[k & 7]) == 0) acc ^= k;\n" % i)
            f.write("  }\n  if (key && strlen(key) > %d) acc += f%d(r, n - 1, key + 1);\n" %
                    (i % 5, max(i - 1, 0)) if i else "  }\n")
            f.write("  return acc + (int)s;\n}\n")


def checksum_token(out):
    for tok in out.split():
        if tok.startswith("checksum="):
            return tok
    return out


def first_number(out, key):
    for tok in out.split():
        if tok.startswith(key + "="):
            try:
                return float(tok.split("=", 1)[1])
            except ValueError:
                return None
    return None


class Workload:
    """name, what it is, how to run it; kind "program" (one process),
    "pc" (rtmem bench threads) or "redis" (server + benchmark client)."""

    def __init__(self, name, pattern, argv, kind="program", stdin=None, check="stdout",
                 metric=None, missing=""):
        self.name, self.pattern, self.argv, self.kind = name, pattern, argv, kind
        self.stdin, self.check, self.metric, self.missing = stdin, check, metric, missing


def workloads(build, quick, tmp):
    def prog(n):
        return os.path.join(build, "rtmem-workload-" + n)

    q = quick
    ws = []
    for n in ("large", "churn", "thrash", "larson", "run"):
        if not os.access(prog(n), os.X_OK):
            miss = "not built (%s; cmake --build %s)" % (prog(n), build)
            break
    else:
        miss = ""
    ws.append(Workload("large", "mimalloc-bench malloc-large: 20 slots, blocks of 5-25 MiB "
                       "(any byte count) replaced at random 2000 times, each zero-filled",
                       [prog("large"), "200" if q else "2000"], missing=miss))
    ws.append(Workload("churn", "cfrac/espresso-like: one thread, 16-200 byte blocks, mostly "
                       "LIFO lifetimes, some long-lived, every byte written",
                       [prog("churn"), "300000" if q else "20000000"], missing=miss))
    t = ["2", "2000", "200"] if q else ["2", "40000", "1000"]
    ws.append(Workload("thrash", "Hoard cache-thrash: 2 threads allocate 8 bytes, write them "
                       "1000 times, free (metric: ns per write)",
                       [prog("thrash"), "thrash"] + t, check="checksum",
                       metric="ns_per_write", missing=miss))
    ws.append(Workload("scratch", "Hoard cache-scratch: the same after freeing a block the "
                       "main thread allocated (cross-thread reuse; metric: ns per write)",
                       [prog("thrash"), "scratch"] + t, check="checksum",
                       metric="ns_per_write", missing=miss))
    ws.append(Workload("larson", "mimalloc-bench larson-sized: 2 threads each free a random "
                       "block of their 5000 and allocate one of 8-1000 bytes (operator new, "
                       "sized delete), then hand the set to a new thread (metric: ns per op)",
                       [prog("larson"), "2", "5" if q else "100"], check="checksum",
                       metric="ns_per_op", missing=miss))
    rtmem = os.path.join(build, "rtmem")
    ws.append(Workload("pc", "producer/consumer: 2 producers pass written blocks to 2 "
                       "consumers that free them (rtmem bench threads --bench pc; metric: ns "
                       "per block)",
                       [rtmem, "bench", "threads", "--bench", "pc", "--threads", "2", "--runs",
                        "1", "--seed", "1", "--pc-blocks", "50000" if q else "1000000"],
                       kind="pc", check=None, metric="ns_per_block",
                       missing="" if os.access(rtmem, os.X_OK) else "not built (%s)" % rtmem))
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else (
        shutil.which("python3") or "")
    ws.append(Workload("python3", "python3 running bench/workloads/alloc.py (trees of small "
                       "objects, a dict of resized lists and strings, a sort)",
                       [py, os.path.join(WORKDIR, "alloc.py"), "0.1" if q else "1"],
                       missing="" if py else "not installed"))
    sq = shutil.which("sqlite3") or ""
    ws.append(Workload("sqlite3", "sqlite3 :memory: < bench/workloads/sqlite.sql (200k rows "
                       "inserted, indexed, queried, updated, deleted; --quick: 20k)",
                       [sq, "-cmd", ".parameter set @rows %d" % (20000 if q else 200000),
                        ":memory:"],
                       stdin=os.path.join(WORKDIR, "sqlite.sql"),
                       missing="" if sq else "not installed (scripts/deps.sh bench)"))
    gcc = shutil.which("gcc") or ""
    src = os.path.join(tmp, "gen.c")
    if gcc:
        gen_c_file(src, 10 if q else 100)
    ws.append(Workload("gcc", "gcc -O2 -c of a generated C file (%d functions; driver, cc1 "
                       "and as all preloaded)" % (10 if q else 100),
                       [gcc, "-O2", "-c", src, "-o", os.path.join(tmp, "gen.o")], check=None,
                       missing="" if gcc else "not installed"))
    srv, bench = shutil.which("redis-server"), shutil.which("redis-benchmark")
    ws.append(Workload("redis", "redis-server driven by redis-benchmark -t lpush,lrange "
                       "(the server measured; it starts and shuts down in the run)",
                       [srv or "", bench or "", "20000" if q else "200000"], kind="redis",
                       check=None,
                       missing="" if srv and bench else
                       "not installed (redis-server, redis-tools: scripts/deps.sh bench)"))
    return ws


# --- one run ------------------------------------------------------------

class Usage:
    """The measures of one run, as the launcher wrote them."""

    def __init__(self, wall, user, sys_, maxrss):
        self.wall, self.ru_utime, self.ru_stime, self.ru_maxrss = wall, user, sys_, maxrss


def launcher_env(lib, env=None):
    env = dict(os.environ if env is None else env)
    env.pop("LD_PRELOAD", None)
    env["RTMEM_WORKLOAD_PRELOAD"] = lib or ""
    return env


def read_usage(res, fallback_wall):
    try:
        with open(res) as f:
            w, u, sy, rss, code = f.read().split()
        return int(code), Usage(float(w), float(u), float(sy), int(rss))
    except (OSError, ValueError):
        return None, Usage(fallback_wall, 0.0, 0.0, 0)


def spawn_wait(runner, argv, env, stdin_path, out_path, err_path, cwd, tmp):
    """Runs argv through the launcher (bench/workloads/run.c, which forks it
    from a small process: python's own peak RSS would otherwise be the
    child's floor): (exit code, usage)."""
    res = os.path.join(tmp, "run.res")
    if os.path.exists(res):
        os.unlink(res)
    fin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    with open(out_path, "wb") as fout, open(err_path, "wb") as ferr:
        t0 = time.monotonic()
        rc = subprocess.run([runner, res] + argv, env=env, stdin=fin, stdout=fout, stderr=ferr,
                            cwd=cwd).returncode
        wall = time.monotonic() - t0
    if stdin_path:
        fin.close()
    code, ru = read_usage(res, wall)
    return (rc if code is None else code), ru


def run_redis(runner, w, lib, tmp):
    srv, bench, n = w.argv
    sock = os.path.join(tmp, "redis.sock")
    if os.path.exists(sock):
        os.unlink(sock)
    res = os.path.join(tmp, "redis.res")
    out, err = os.path.join(tmp, "run.out"), os.path.join(tmp, "run.err")
    with open(out, "wb") as fout, open(err, "wb") as ferr:
        t0 = time.monotonic()
        p = subprocess.Popen([runner, res, srv, "--port", "0", "--unixsocket", sock, "--save",
                              "", "--appendonly", "no", "--dir", tmp], env=launcher_env(lib),
                             stdout=fout, stderr=ferr, stdin=subprocess.DEVNULL)
        for _ in range(500):  # up to 5 s for the socket
            if os.path.exists(sock) or p.poll() is not None:
                break
            time.sleep(0.01)
        b = subprocess.run([bench, "-s", sock, "-t", "lpush,lrange", "-n", n, "-q"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)  # passed on; redis saves nothing and exits
        rc = p.wait()
        wall = time.monotonic() - t0
    code, ru = read_usage(res, wall)
    code = rc if code is None else code
    if b.returncode != 0:
        code = b.returncode
    return code, ru, b.stdout


def run_one(w, name, lib, build, tmp):
    """One run: a sample dict (without round/order)."""
    runner = os.path.join(build, "rtmem-workload-run")
    out, err = os.path.join(tmp, "run.out"), os.path.join(tmp, "run.err")
    metric = None
    if w.kind == "pc":
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        if name not in ALLOCATORS:  # an --extra: rtmem's drop-in slot, another library
            name = "rtmem"
        if lib:
            env["RTMEM_BENCH_LIB_" + name.upper()] = lib
        js = os.path.join(tmp, "pc.json")
        code, ru = spawn_wait(runner, w.argv + ["--allocators", name, "--json", js],
                              launcher_env("", env), None, out, err, tmp, tmp)
        stdout = ""
        if code == 0:
            try:
                with open(js) as f:
                    a = json.load(f)["allocators"][0]
                metric = a["pc"][0]["ns_per_block"]["median"]
                if a.get("status") != "ok":
                    code = 1
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                code = 1
    elif w.kind == "redis":
        code, ru, stdout = run_redis(runner, w, lib, tmp)
    else:
        code, ru = spawn_wait(runner, w.argv, launcher_env(lib), w.stdin, out, err, tmp, tmp)
        with open(out, errors="replace") as f:
            stdout = f.read()
        if w.metric:
            metric = first_number(stdout, w.metric)
    errtext = ""
    if os.path.exists(err):
        with open(err, errors="replace") as f:
            errtext = f.read()
    why = ""
    if "cannot be preloaded" in errtext:
        why = "LD_PRELOAD ignored: " + errtext.strip()[:200]
        code = code or 1
    elif code != 0:
        why = "exit %d: %s" % (code, errtext.strip()[-300:])
    s = {"wall_s": round(ru.wall, 6), "user_s": round(ru.ru_utime, 6),
         "sys_s": round(ru.ru_stime, 6), "cpu_s": round(ru.ru_utime + ru.ru_stime, 6),
         "maxrss_kib": ru.ru_maxrss, "exit": code, "ok": code == 0 and not why,
         "why": why}
    if metric is not None:
        s["metric"] = metric
    if w.check == "stdout":
        s["output"] = stdout.strip()[-200:]
    elif w.check == "checksum":
        s["output"] = checksum_token(stdout)
    return s


# --- statistics and tables ----------------------------------------------

def stats(samples, key):
    v = sorted(s[key] for s in samples)
    return {"min": v[0], "median": statistics.median(v), "max": v[-1]} if v else None


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def summarise(ws, names, samples, by):
    """Per workload, per allocator: min/median time, CPU, RSS; ratios."""
    key = "cpu_s" if by == "cpu" else "wall_s"
    out = {}
    for w in ws:
        per = {}
        for a in names:
            ok = [s for s in samples if s["workload"] == w.name and s["allocator"] == a
                  and s["ok"]]
            if not ok:
                continue
            per[a] = {"runs": len(ok), "wall_s": stats(ok, "wall_s"),
                      "cpu_s": stats(ok, "cpu_s"),
                      "maxrss_mib": {k: v / 1024 for k, v in stats(ok, "maxrss_kib").items()}}
            m = [s for s in ok if "metric" in s]
            if m:
                per[a]["metric"] = {"name": w.metric, **stats(m, "metric")}
        if not per:
            out[w.name] = {}
            continue
        best = min(v[key]["median"] for v in per.values())
        peer_best = [v[key]["median"] for k, v in per.items() if k in PEERS]
        peer_best = min(peer_best) if peer_best else None
        mi = per.get("mimalloc")
        for a, v in per.items():
            t = v[key]["median"]
            v["time_vs_best"] = ratio(t, best)
            v["time_vs_best_peer"] = ratio(t, peer_best)
            v["time_vs_mimalloc"] = ratio(t, mi[key]["median"]) if mi else None
            v["rss_vs_mimalloc"] = (ratio(v["maxrss_mib"]["median"], mi["maxrss_mib"]["median"])
                                    if mi else None)
        out[w.name] = per
    overall = {}
    for a in names:
        rows = [out[w.name][a] for w in ws if a in out.get(w.name, {})]
        if not rows:
            continue
        worst = [(r["time_vs_best_peer"], w.name) for w in ws
                 for r in [out[w.name].get(a)] if r and r["time_vs_best_peer"]]
        worst = max(worst) if worst else (None, None)
        overall[a] = {
            "workloads": len(rows),
            "geomean_time_vs_mimalloc": geomean([r["time_vs_mimalloc"] for r in rows]),
            "geomean_rss_vs_mimalloc": geomean([r["rss_vs_mimalloc"] for r in rows]),
            "worst_time_vs_best_peer": worst[0], "worst_workload": worst[1]}
    return out, overall


def print_tables(ws, names, status, table, overall, by, rounds, f):
    print(NOTE, file=f)
    print("ratios use the median %s time (--by); best = best allocator of this run, "
          "mimalloc = mimalloc's median; %d round(s), interleaved" %
          ("CPU (user+sys)" if by == "cpu" else "wall", rounds), file=f)
    for w in ws:
        print("\n== %s: %s" % (w.name, w.pattern), file=f)
        if w.missing:
            print("   skipped: %s" % w.missing, file=f)
            continue
        hdr = "%-9s %8s %8s %8s %8s %9s %7s %7s %7s %10s" % (
            "allocator", "wall min", "wall med", "cpu min", "cpu med", "rss MiB", "x best",
            "x mi", "rss xmi", "metric med")
        print(hdr, file=f)
        for a in names:
            v = table.get(w.name, {}).get(a)
            if v is None:
                print("%-9s %s" % (a, status.get(a) or "no successful run"), file=f)
                continue
            m = v.get("metric")
            print("%-9s %8.3f %8.3f %8.3f %8.3f %9.1f %7s %7s %7s %10s" % (
                a, v["wall_s"]["min"], v["wall_s"]["median"], v["cpu_s"]["min"],
                v["cpu_s"]["median"], v["maxrss_mib"]["median"], fmt(v["time_vs_best"], ".2f"),
                fmt(v["time_vs_mimalloc"], ".2f"), fmt(v["rss_vs_mimalloc"], ".2f"),
                fmt(m["median"] if m else None, ".1f")), file=f)
    print("\n== summary (geometric means over the workloads each allocator ran)", file=f)
    print("%-9s %9s %11s %10s %11s  %s" % ("allocator", "workloads", "time x mi", "rss x mi",
                                           "worst x pr", "worst on"), file=f)
    for a in names:
        o = overall.get(a)
        if o is None:
            print("%-9s %s" % (a, status.get(a) or "no successful run"), file=f)
            continue
        print("%-9s %9d %11s %10s %11s  %s" % (
            a, o["workloads"], fmt(o["geomean_time_vs_mimalloc"], ".3f"),
            fmt(o["geomean_rss_vs_mimalloc"], ".3f"), fmt(o["worst_time_vs_best_peer"], ".2f"),
            o["worst_workload"] or "-"), file=f)
    print("worst x pr: the allocator's largest median time over the best of glibc, mimalloc, "
          "jemalloc and tcmalloc on one workload", file=f)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None


# --- main ---------------------------------------------------------------

def default_build():
    """Started as BUILD_DIR/rtmem-workloads (the link CMake makes): that
    folder; else the repo's build/."""
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    if os.path.exists(os.path.join(here, "rtmem-workload-run")):
        return here
    return os.path.join(ROOT, "build")


def parse_list(parser, text, known, what):
    items = [x for x in text.split(",") if x]
    bad = [x for x in items if x not in known]
    if not items or bad or len(set(items)) != len(items):
        usage_error(parser, "--%s: %s (from %s, each once)" % (
            what, ", ".join(bad) or "empty or repeated list", ",".join(known)))
    return items


def main(argv):
    parser = argparse.ArgumentParser(
        prog="workloads.py",
        description="The drop-in malloc against glibc and the peers on the classic allocator "
                    "workloads (docs/MALLOC.md, 'Workloads'). " + NOTE + ".",
        epilog="Workloads: large, churn, thrash, scratch, larson, pc, python3, sqlite3, gcc, redis. "
               "Allocators: glibc (no preload), mimalloc, jemalloc, tcmalloc (Debian's "
               "libraries; RTMEM_BENCH_LIB_<NAME> overrides a path), rtmem "
               "(BUILD_DIR/librtmem-malloc.so). A missing one is reported 'not installed'. "
               "Exit 0; 1 when a run failed or outputs differed; 2 on misuse.")
    parser.add_argument("--build", default=default_build(),
                        help="build folder with rtmem, rtmem-workload-* and "
                             "librtmem-malloc.so (default: the folder of the "
                             "rtmem-workloads link this was started as, else the repo's "
                             "build/)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="interleaved rounds (default 5; --quick: 2)")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, 2 rounds")
    parser.add_argument("--workloads", default=None, help="comma-separated subset")
    parser.add_argument("--allocators", default=",".join(ALLOCATORS),
                        help="comma-separated subset (default %(default)s)")
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=LIB",
                        help="one more allocator by LD_PRELOAD (e.g. an older "
                             "librtmem-malloc.so as rtmem-old); repeatable")
    parser.add_argument("--by", choices=["cpu", "wall"], default="cpu",
                        help="time the ratios use (default cpu: user+sys, steadier on a "
                             "shared machine)")
    parser.add_argument("--json", metavar="FILE", help="also write every sample and the "
                        "summary as JSON")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        sys.exit(0 if e.code == 0 else 2)
    rounds = args.rounds if args.rounds is not None else (2 if args.quick else 5)
    if rounds < 1 or rounds > 1000:
        usage_error(parser, "--rounds must be 1..1000")
    names = parse_list(parser, args.allocators, ALLOCATORS, "allocators")
    extras = {}
    for e in args.extra:
        n, _, lib = e.partition("=")
        if not n or not lib or n in names or n in extras or not n.replace("-", "").isalnum():
            usage_error(parser, "--extra %s: NAME=LIB, a new name of letters, digits, '-'" % e)
        extras[n] = os.path.abspath(lib)
    names += list(extras)
    build = os.path.abspath(args.build)
    if not os.path.isdir(build):
        usage_error(parser, "--build %s: not a folder" % build)
    tmp = tempfile.mkdtemp(prefix="rtmem-workloads-")
    try:
        return measure(args, parser, rounds, names, extras, build, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure(args, parser, rounds, names, extras, build, tmp):
    runner = os.path.join(build, "rtmem-workload-run")
    if not os.access(runner, os.X_OK):
        print("workloads.py: %s is not built (cmake --build %s)" % (runner, build),
              file=sys.stderr)
        return 1
    all_ws = workloads(build, args.quick, tmp)
    known = [w.name for w in all_ws]
    if args.workloads is not None:
        pick = parse_list(parser, args.workloads, known, "workloads")
        all_ws = [w for w in all_ws if w.name in pick]
    libs, status = {}, {}
    for a in names:
        if a in extras:
            lib, why = (extras[a], "") if os.access(extras[a], os.R_OK) else (
                None, "not installed (%s is not readable)" % extras[a])
        else:
            lib, why = locate(a, build)
        if lib is not None:
            ok, why = preload_works(lib)
            if not ok:
                lib = None
        libs[a], status[a] = lib, why
        print("workloads: %-9s %s" % (a, why or (lib or "the C library's malloc (no preload)")),
              file=sys.stderr)
    ws = [w for w in all_ws if not w.missing]
    for w in all_ws:
        if w.missing:
            print("workloads: %s skipped: %s" % (w.name, w.missing), file=sys.stderr)
    active = [a for a in names if libs[a] is not None]
    load0 = loadavg()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    samples, failed = [], 0
    for r in range(rounds):
        for wi, w in enumerate(ws):
            k = (r + wi) % len(active) if active else 0
            order = active[k:] + active[:k]
            for pos, a in enumerate(order):
                s = run_one(w, a, libs[a], build, tmp)
                s.update({"workload": w.name, "allocator": a, "round": r + 1, "order": pos})
                samples.append(s)
                if not s["ok"]:
                    failed += 1
                    print("workloads: %s under %s failed: %s" % (w.name, a, s["why"]),
                          file=sys.stderr)
        print("workloads: round %d of %d done (load average %s)" % (
            r + 1, rounds, " ".join("%.2f" % x for x in (loadavg() or []))), file=sys.stderr)
    # The same work under every allocator: outputs must agree.
    mismatch = []
    for w in ws:
        outs = {s["output"] for s in samples if s["workload"] == w.name and s["ok"]
                and "output" in s}
        if len(outs) > 1:
            mismatch.append(w.name)
            print("workloads: %s: the outputs differ between runs: %s" % (
                w.name, sorted(outs)[:4]), file=sys.stderr)
    table, overall = summarise(ws, names, samples, args.by)
    for w in all_ws:
        if w.missing:
            table[w.name] = {}
    print_tables(all_ws, names, status, table, overall, args.by, rounds, sys.stdout)
    load1 = loadavg()
    print("\nload average (1, 5, 15 min) at the start %s, at the end %s; %d CPUs" % (
        load0, load1, os.cpu_count() or 0))
    if args.json:
        doc = {
            "tool": "scripts/workloads.py", "schema_version": 1, "note": NOTE,
            "started": started, "rounds": rounds, "quick": bool(args.quick),
            "ratio_time": args.by, "cpus": os.cpu_count(),
            "loadavg_start": load0, "loadavg_end": load1, "kernel": " ".join(platform.uname()[:3]),
            "allocators": [{"name": a, "library": libs[a], "status":
                            "ok" if libs[a] is not None else status[a]} for a in names],
            "workloads": [{"name": w.name, "pattern": w.pattern,
                           "command": [x for x in w.argv],
                           "status": w.missing or "ok",
                           "metric": w.metric} for w in all_ws],
            "samples": samples, "summary": table, "overall": overall,
            "output_mismatch": mismatch, "failed_runs": failed}
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 1 if failed or mismatch else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
