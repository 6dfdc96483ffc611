#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py -- turns a run folder of the lab (the <name>.json and <name>.txt
files scripts/bench.sh writes, and its runs.tsv) into index.html and PNG
charts beside them.

usage: report.py RUN_DIR [--out DIR] [--title TEXT]

One section per command, in the lab's order: memcheck, bench random (and its
--sweep curves), bench threads, limits, wcet, latency. Each reads only the
fields it charts and tolerates the rest: a field it does not know is
ignored, a file that is absent gives "not run: <reason>", and a section that
cannot be drawn (a field renamed, say) says why in the page instead of
stopping the report, so one command's change never loses the others'
results. Each section also shows the sanity problems validate_json.py finds
in its file, and the PASS/FAIL lines its command printed.

The page is static: inline CSS, <img> of the PNGs beside it, no script, no
external asset, so it can be opened from a file or attached to an issue.
Charts use matplotlib with the Agg backend (no display). When matplotlib is
missing (Debian: python3-matplotlib) the page is still written, with its
tables and a note instead of the charts. Debian's matplotlib lives in the
system python's path, so an interpreter that lacks it (a pyenv one, say)
hands over to /usr/bin/python3 when that one has it.

Exit status 0 when index.html was written, 2 for misuse.
"""
import html
import math
import os
import re
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_json  # noqa: E402


# --- matplotlib -------------------------------------------------------------


def load_pyplot():
    """pyplot with the Agg backend, or None (after trying the system python)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        system = "/usr/bin/python3"
        if (os.environ.get("RTMEM_REPORT_REEXEC") is None and os.path.exists(system)
                and os.path.realpath(sys.executable) != os.path.realpath(system)):
            os.environ["RTMEM_REPORT_REEXEC"] = "1"
            try:
                os.execv(system, [system] + sys.argv)
            except OSError:
                pass
        return None


PLT = None  # set in main()
# matplotlib's tab10 then the darker half of tab20b: the seven rtm heaps and
# four malloc peers of a full run all get their own colour.
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
          "#7b4173", "#000000"]


def color_of(name, names):
    """A stable colour per allocator name across every chart of the page."""
    return COLORS[names.index(name) % len(COLORS)] if name in names else "#333333"


# --- small helpers ------------------------------------------------------------


def esc(x):
    return html.escape(str(x))


def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def fmt(v, digits=3):
    """A number in `digits` significant digits; a dash for none."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not num(v):
        return esc(v)
    if v == 0:
        return "0"
    if abs(v) >= 10 ** digits:
        return "{:,.0f}".format(v)
    return "{:.{p}g}".format(v, p=digits)


def get(d, *path, default=None):
    """d[path[0]][path[1]]... or default when any step is missing."""
    for k in path:
        if isinstance(d, dict) and k in d:
            d = d[k]
        elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
            d = d[k]
        else:
            return default
    return d


def table(header, rows, cls="num"):
    """A compact HTML table; cells are already HTML."""
    out = ['<table class="%s"><tr>' % cls]
    out += ["<th>%s</th>" % h for h in header]
    out.append("</tr>")
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % c for c in r) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


class Section:
    """One command's part of the page."""

    def __init__(self, title, anchor):
        self.title, self.anchor = title, anchor
        self.body = []      # HTML fragments, in order
        self.missing = None  # "not run: ..." when there is nothing to show
        self.problems = []  # sanity problems and drawing errors

    def html(self, text):
        self.body.append(text)

    def para(self, text):
        self.body.append("<p>%s</p>" % text)

    def chart(self, fig, out_dir, name, alt, tight=True):
        """Saves fig as name.png and shows it. tight=False for figures of
        many panels laid out by hand: the tight bounding box measures every
        tick label again, seconds for a grid of log axes."""
        path = os.path.join(out_dir, name + ".png")
        fig.savefig(path, dpi=100, bbox_inches="tight" if tight else None)
        PLT.close(fig)
        self.body.append('<figure><img src="%s.png" alt="%s"></figure>' % (esc(name), esc(alt)))


# --- the run folder ---------------------------------------------------------------


class Run:
    """What bench.sh left in a folder: runs.tsv, <name>.json, <name>.txt."""

    def __init__(self, folder):
        self.folder = folder
        self.runs = []  # dicts: name, status, seconds, command
        self.meta = {}  # "# key: value" lines of runs.tsv
        self.cache = {}
        path = os.path.join(folder, "runs.tsv")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    line = line.rstrip("\n")
                    if line.startswith("#"):
                        k, _, v = line[1:].partition(":")
                        self.meta[k.strip()] = v.strip()
                    elif line:
                        cells = line.split("\t") + ["", "", "", ""]
                        self.runs.append({"name": cells[0], "status": cells[1],
                                          "seconds": cells[2], "command": cells[3]})

    def run_of(self, name):
        return next((r for r in self.runs if r["name"] == name), None)

    def json(self, name):
        """(document, None) or (None, reason it is absent or unreadable).
        Read once: a full memcheck --all file holds some 10^5 rows."""
        if name not in self.cache:
            self.cache[name] = self.read_json(name)
        return self.cache[name]

    def read_json(self, name):
        path = os.path.join(self.folder, name + ".json")
        r = self.run_of(name)
        if not os.path.exists(path):
            if r is None:
                return None, "not run: %s.json is not in %s" % (name, self.folder)
            if r["status"] == "skipped":
                return None, "not run: %s" % (r["command"] or "skipped")
            return None, "not run: `%s` exited %s without writing its JSON" % (
                r["command"], r["status"])
        try:
            return validate_json.load(path), None
        except (OSError, ValueError) as e:
            return None, "not run: %s.json cannot be read: %s" % (name, e)

    def verdicts(self, name):
        """The PASS/FAIL/NOT JUDGED and WARNING lines of <name>.txt."""
        path = os.path.join(self.folder, name + ".txt")
        if not os.path.exists(path):
            return []
        pat = re.compile(r"\b(PASS|FAIL|FAILED|NOT JUDGED|WARNING)\b")
        with open(path, encoding="utf-8", errors="replace") as f:
            return [ln.strip() for ln in f if pat.search(ln) and len(ln) < 300]


def verdict_html(lines):
    if not lines:
        return ""
    out = ['<ul class="verdicts">']
    for ln in lines[:40]:
        cls = "fail" if re.search(r"\bFAIL(ED)?\b|WARNING", ln) else \
            "pass" if "PASS" in ln else "nj"
        out.append('<li class="%s">%s</li>' % (cls, esc(ln)))
    if len(lines) > 40:
        out.append("<li>... %d more in the text output</li>" % (len(lines) - 40))
    out.append("</ul>")
    return "\n".join(out)


# --- memcheck ---------------------------------------------------------------------


def memcheck_heaps(doc):
    """Every heap's entry; an older single-heap file (phases at the top) as one."""
    heaps = doc.get("heaps")
    if isinstance(heaps, list):
        return [h for h in heaps if isinstance(h, dict)]
    if isinstance(doc.get("phases"), dict):
        return [{"algorithm": get(doc, "params", "algorithm", default="?"),
                 "phases": doc["phases"], "targets": doc.get("targets", [])}]
    return []


def rows_by_block(heap, fields, phase="pow2"):
    """{block_size: (mean AVG-A, max MAX-A, mean AVG-F, max MAX-F)} in µs."""
    ix = {f: i for i, f in enumerate(fields)}
    acc = {}
    for r in get(heap, "phases", phase, "rows", default=[]) or []:
        try:
            n = r[ix["nrblocks"]]
            if not n:
                continue
            a = acc.setdefault(r[ix["block_size"]], [[], [], [], []])
            a[0].append(r[ix["alloc_sum_ns"]] / n / 1000)
            a[1].append(r[ix["alloc_max_ns"]] / 1000)
            a[2].append(r[ix["free_sum_ns"]] / n / 1000)
            a[3].append(r[ix["free_max_ns"]] / 1000)
        except (KeyError, IndexError, TypeError):
            continue
    return {b: (sum(v[0]) / len(v[0]), max(v[1]), sum(v[2]) / len(v[2]), max(v[3]))
            for b, v in sorted(acc.items())}


def memcheck_times_chart(sec, out, heaps, fields, names):
    fig, axes = PLT.subplots(2, 2, figsize=(11, 7), sharex=True)
    titles = ["average alloc time (µs)", "max alloc time (µs)", "average free time (µs)",
              "max free time (µs)"]
    drawn = False
    for h in heaps:
        by = rows_by_block(h, fields)
        if not by:
            continue
        drawn = True
        name = h.get("algorithm", "?")
        xs = list(by)
        for k, ax in enumerate(axes.flat):
            ax.plot(xs, [by[x][k] for x in xs], marker="o", ms=3, label=name,
                    color=color_of(name, names))
    if not drawn:
        PLT.close(fig)
        return
    for k, ax in enumerate(axes.flat):
        ax.set_title(titles[k], fontsize=10)
        ax.set_xscale("log", base=2)
        if k % 2 == 1:
            ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("block size (bytes)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("memcheck, power-of-two phase: time per block size (every heap size and "
                 "variant; averages of AVG, maxima of MAX)", fontsize=10)
    sec.chart(fig, out, "memcheck_times", "memcheck times per block size")


def memcheck_overhead_chart(sec, out, doc, heaps, names):
    published = [p for p in doc.get("published", []) if isinstance(p, dict)]
    limits = doc.get("limits", {}) if isinstance(doc.get("limits"), dict) else {}
    fig, axes = PLT.subplots(1, 2, figsize=(12, 4.5))
    for ax, phase in zip(axes, ("pow2", "random")):
        labels, ovh, frag, ours = [], [], [], []
        for h in heaps:
            ph = get(h, "phases", phase, default={})
            labels.append("rtmem " + str(h.get("algorithm", "?")))
            ovh.append(ph.get("overhead_pct"))
            frag.append(ph.get("frag_pct"))
            ours.append(True)
        for p in published:
            if p.get("phase") == phase:
                labels.append("Xenomai " + str(p.get("heap")))
                ovh.append(p.get("overhead_pct"))
                frag.append(p.get("frag_pct"))
                ours.append(False)
        xs = range(len(labels))
        w = 0.38
        for i in xs:
            hatch = None if ours[i] else "//"
            ax.bar(i - w / 2, ovh[i] if num(ovh[i]) else 0, w, color="#1f77b4", hatch=hatch,
                   edgecolor="white")
            ax.bar(i + w / 2, frag[i] if num(frag[i]) else 0, w, color="#ff7f0e", hatch=hatch,
                   edgecolor="white")
        for key, style, what in (("%s_overhead_pct" % phase, "#1f77b4", "overhead"),
                                 ("%s_frag_pct" % phase, "#ff7f0e", "fragmentation")):
            if num(limits.get(key)):
                ax.axhline(limits[key], color=style, ls="--", lw=1,
                           label="ideal heap %s %.1f %%" % (what, limits[key]))
        if any(ours) and not all(ours):
            ax.axvline(ours.count(True) - 0.5, color="#888", lw=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=8, rotation=40, ha="right")
        ax.set_ylabel("percent")
        ax.set_title("%s phase: overhead (blue) and fragmentation (orange)" % phase,
                     fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle("memcheck averages, rtmem here (plain) beside Xenomai 3.2.4's published "
                 "figures on an RK3562 (hatched)", fontsize=10)
    sec.chart(fig, out, "memcheck_overhead", "memcheck overhead and fragmentation")


def memcheck_section(run, sec, out, names):
    doc, why = run.json("memcheck")
    if doc is None:
        sec.missing = why
        return
    heaps = memcheck_heaps(doc)
    for h in heaps:
        if h.get("algorithm") not in names:
            names.append(h.get("algorithm"))
    fields = doc.get("row_fields", [])
    p = doc.get("params", {})
    sec.para("Xenomai's smokey memcheck method over %s; heaps 8 KiB doubling below "
             "%s bytes, %s random rounds, seed %s%s. Every time includes one clock read pair "
             "(%s ns here), as Xenomai's do." %
             (esc(", ".join(str(h.get("algorithm")) for h in heaps) or "no heap"),
              fmt(p.get("seq_heap_size"), 9), fmt(p.get("random_rounds"), 9),
              fmt(p.get("seed"), 20), " (quick profile)" if p.get("quick") else "",
              fmt(doc.get("clock_pair_cost_ns"))))
    if PLT is not None and heaps:
        memcheck_times_chart(sec, out, heaps, fields, names)
        memcheck_overhead_chart(sec, out, doc, heaps, names)
    rows = []
    for h in heaps:
        for phase in ("pow2", "random"):
            ph = get(h, "phases", phase, default={})
            rows.append([esc("rtmem " + str(h.get("algorithm"))), phase,
                         "%s (%s)" % (fmt(ph.get("runs"), 9), fmt(ph.get("failed_runs"), 9)),
                         "%s / %s" % (fmt(ph.get("worst_alloc_us")), fmt(ph.get("worst_free_us"))),
                         "%s / %s" % (fmt(ph.get("avg_alloc_us")), fmt(ph.get("avg_free_us"))),
                         fmt(ph.get("overhead_pct")), fmt(ph.get("frag_pct")),
                         "%s / %s" % (fmt(ph.get("ideal_overhead_pct")),
                                      fmt(ph.get("ideal_frag_pct")))])
    for x in doc.get("published", []):
        rows.append([esc("Xenomai %s (published)" % x.get("heap")), esc(x.get("phase")), "",
                     "%s / %s" % (fmt(x.get("worst_alloc_us")), fmt(x.get("worst_free_us"))),
                     "%s / %s" % (fmt(x.get("avg_alloc_us")), fmt(x.get("avg_free_us"))),
                     fmt(x.get("overhead_pct")), fmt(x.get("frag_pct")), ""])
    sec.html(table(["heap", "phase", "runs (failed)", "worst A / F µs", "avg A / F µs",
                    "overhead %", "frag %", "ideal heap ovh / frag %"], rows))
    tl = []
    for h in heaps:
        for t in h.get("targets", []) or []:
            tl.append("%s %s: %s %% <= %s %%: %s" % (
                h.get("algorithm"), t.get("name"), fmt(t.get("value")), fmt(t.get("limit")),
                "PASS" if t.get("pass") else "FAIL"))
        pat = get(h, "phases", "pattern", default={})
        if "pass" in pat:
            tl.append("%s pattern check, %s runs: %s" % (
                h.get("algorithm"), fmt(pat.get("runs"), 9), "PASS" if pat["pass"] else "FAIL"))
        nf = len(h.get("failures", []) or [])
        if nf:
            tl.append("%s: %d runs FAILED the method checks (first: %s)" % (
                h.get("algorithm"), nf, h["failures"][0]))
    sec.html(verdict_html(tl))


# --- bench random ---------------------------------------------------------------------

PCTS = (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("p9999", "p99.99"), ("max", "max"))


def random_pair_chart(sec, out, ok, names):
    fig, ax = PLT.subplots(figsize=(8, 0.5 * len(ok) + 1.5))
    for i, a in enumerate(ok):
        s = a["ns_per_pair"]
        med = s.get("median")
        lo, hi = s.get("min", med), s.get("max", med)
        ax.barh(i, med, color=color_of(a["name"], names))
        ax.errorbar(med, i, xerr=[[med - lo], [hi - med]], color="black", capsize=3)
        ax.text(hi, i, "  %s" % fmt(med), va="center", fontsize=8)
    ax.set_yticks(range(len(ok)))
    ax.set_yticklabels([a["name"] for a in ok])
    ax.invert_yaxis()
    ax.set_xlabel("ns per free+alloc pair (median of clean runs; bar: min .. max)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("bench random: the TLSF/xvmalloc/zsmalloc study's random-replace loop",
                 fontsize=10)
    sec.chart(fig, out, "random_pair", "ns per pair per allocator")


def random_percentile_chart(sec, out, ok, names):
    fig, axes = PLT.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, op in zip(axes, ("alloc", "free")):
        for a in ok:
            lat = a.get(op, {})
            ys = [lat.get(k) for k, _ in PCTS]
            if not any(num(y) and y > 0 for y in ys):
                continue
            ax.plot(range(len(PCTS)), [y if num(y) and y > 0 else float("nan") for y in ys],
                    marker="o", ms=4, label=a["name"], color=color_of(a["name"], names))
        ax.set_xticks(range(len(PCTS)))
        ax.set_xticklabels([label for _, label in PCTS])
        ax.set_yscale("log")
        ax.set_title("%s: latency percentiles (ns, medians over clean runs)" % op, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ns per call")
    axes[0].legend(fontsize=8)
    sec.chart(fig, out, "random_percentiles", "per-operation latency percentiles")


def allocator_rows(doc, names):
    """The document's allocator rows; their names join `names` (one colour
    per allocator across every chart) in order of first appearance."""
    allocs = [a for a in doc.get("allocators", []) if isinstance(a, dict)]
    for a in allocs:
        if a.get("name") not in names:
            names.append(a.get("name"))
    return allocs


def random_section(run, sec, out, names):
    doc, why = run.json("bench_random")
    if doc is None:
        sec.missing = why
        return
    allocs = allocator_rows(doc, names)
    p = doc.get("params", {})
    sec.para("The TLSF/xvmalloc/zsmalloc study's random-replace loop: %s live blocks, sizes in "
             "[%s, %s), %s replacements per pass, %s interleaved rounds, seed %s%s. Clock: %s" %
             (fmt(p.get("slots"), 9), fmt(p.get("min"), 9), fmt(p.get("max"), 9),
              fmt(p.get("iterations"), 12), fmt(p.get("runs"), 9), fmt(p.get("seed"), 20),
              " (quick profile)" if p.get("quick") else "",
              esc(get(doc, "clock", "description", default="?"))))
    ok = [a for a in allocs if a.get("status") == "ok" and isinstance(a.get("ns_per_pair"), dict)
          and num(a["ns_per_pair"].get("median"))]
    if PLT is not None and ok:
        random_pair_chart(sec, out, ok, names)
        random_percentile_chart(sec, out, ok, names)
    rows = []
    for a in allocs:
        s = a.get("ns_per_pair", {}) if isinstance(a.get("ns_per_pair"), dict) else {}
        al, fr = a.get("alloc", {}) or {}, a.get("free", {}) or {}
        status = a.get("status", "?")
        rows.append([esc(a.get("name")), esc(status) if status == "ok" else
                     '<span class="fail">%s</span>' % esc(status),
                     "%s / %s / %s" % (fmt(s.get("min")), fmt(s.get("median")), fmt(s.get("max"))),
                     fmt(s.get("spread")), fmt(s.get("clean_runs"), 9), fmt(a.get("refused"), 9),
                     " / ".join(fmt(al.get(k)) for k in ("p50", "p99", "p999", "max")),
                     " / ".join(fmt(fr.get(k)) for k in ("p50", "p99", "p999", "max"))])
    sec.html(table(["allocator", "status", "ns/pair min / median / max", "spread", "clean runs",
                    "refused", "alloc ns p50 / p99 / p99.9 / max",
                    "free ns p50 / p99 / p99.9 / max"], rows))
    v = doc.get("verdict")
    lines = []
    if isinstance(v, dict):
        for k in ("median", "min"):
            if k in v:
                lines.append("%s (%s): %s %s" % (v.get("target", "target"), k, v[k],
                                                 v.get(k + "_detail", "")))
    sec.html(verdict_html(lines or run.verdicts("bench_random")))


# --- sweep ----------------------------------------------------------------------------


def sweep_curves(doc):
    """[(allocator, [x], [median ns per pair], [min ns per pair])] from a
    --sweep file: the window starts are doc.windows.x and each allocator has
    parallel lists ns_per_pair_median and ns_per_pair_min, in its "curve"
    object (or, in early files, beside its name); null where a window had no
    clean run: the point is left out."""
    xs_all = get(doc, "windows", "x", default=[]) or []
    curves = []
    for a in doc.get("allocators", []) or []:
        c = a.get("curve") if isinstance(a, dict) and isinstance(a.get("curve"), dict) else a
        if not isinstance(c, dict) or not isinstance(c.get("ns_per_pair_median"), list):
            continue
        med = c["ns_per_pair_median"]
        low = c.get("ns_per_pair_min") if isinstance(c.get("ns_per_pair_min"), list) else []
        pts = [(x, m, low[i] if i < len(low) and num(low[i]) else None)
               for i, (x, m) in enumerate(zip(xs_all, med)) if num(x) and num(m)]
        if pts:
            curves.append((a.get("name", "?"), [p[0] for p in pts], [p[1] for p in pts],
                           [p[2] for p in pts]))
    return curves


def sweep_section(run, sec, out, names):
    doc, why = run.json("bench_random_sweep")
    if doc is None:
        sec.missing = why
        return
    curves = sweep_curves(doc)
    for name, _, _, _ in curves:
        if name not in names:
            names.append(name)
    sec.para("The TLSF/xvmalloc/zsmalloc study's window sweep: for each window start x, the "
             "loop with requests in [x, x+64); ns per free+alloc pair, one line per allocator.")
    if not curves:
        sec.para("No curve found in bench_random_sweep.json (no allocator with window points).")
    elif PLT is not None:
        fig, axes = PLT.subplots(1, 2, figsize=(13, 4.5), sharey=True)
        for ax, k, what in ((axes[0], 2, "median"), (axes[1], 3, "minimum")):
            for c in curves:
                pts = [(x, y) for x, y in zip(c[1], c[k]) if num(y)]
                ax.plot([x for x, _ in pts], [y for _, y in pts], lw=1.2, label=c[0],
                        color=color_of(c[0], names))
            ax.set_xlabel("window start x (bytes): requests in [x, x+%s)" %
                          fmt(get(doc, "params", "window_width", default=64), 9))
            # Log scale: the curves span 20 ns to several us per pair, and a
            # single spike on a linear axis flattens every other curve.
            ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
            ax.set_title("%s over runs" % what, fontsize=10)
        axes[0].set_ylabel("ns per free+alloc pair (log scale)")
        axes[0].legend(fontsize=8)
        fig.suptitle("bench random --sweep: time per pair vs request-size window (the "
                     "TLSF/xvmalloc/zsmalloc study's sweep)", fontsize=10)
        sec.chart(fig, out, "random_sweep", "sweep curves")
    rows = []
    for name, xs, ys, _ in curves:
        rows.append([esc(name), fmt(len(xs), 9), fmt(min(ys)), fmt(sorted(ys)[len(ys) // 2]),
                     fmt(max(ys)), fmt(xs[ys.index(max(ys))], 9)])
    if rows:
        sec.html(table(["allocator", "windows", "min ns/pair", "median", "max",
                        "window of the max"], rows))
    sec.html(verdict_html(run.verdicts("bench_random_sweep")))


def grow_section(run, sec, out, names):
    """bench random --grow: TLSF's alloc percentiles, whole region vs growing."""
    doc, why = run.json("bench_random_grow")
    if doc is None:
        sec.missing = why
        return
    ways = [w for w in (doc.get("grow_ways") or []) if isinstance(w, dict)]
    keys = (("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"), ("p9999", "p99.99"),
            ("max", "max"))
    sec.para("TLSF given its memory three ways (the TLSF/xvmalloc/zsmalloc study's growth "
             "finding): the whole region at start; growing on demand by fresh mmap'd chunks; "
             "growing inside one reserved range. Alloc latency over the timed fill and "
             "replacements, ns, minimum / median over %s interleaved runs."
             % fmt(get(doc, "params", "runs"), 9))
    if PLT is not None and ways:
        fig, ax = PLT.subplots(figsize=(10, 4))
        width = 0.8 / len(ways)
        for i, w in enumerate(ways):
            ys = [get(w, "alloc_ns_median", k) for k, _ in keys]
            xs = [j + (i - (len(ways) - 1) / 2.0) * width for j in range(len(keys))]
            ax.bar([x for x, y in zip(xs, ys) if num(y)], [y for y in ys if num(y)], width,
                   label=w.get("name"))
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([label for _, label in keys])
        ax.set_yscale("log")
        ax.set_ylabel("alloc ns (median of runs, log scale)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8)
        fig.suptitle("bench random --grow: TLSF alloc latency, whole pool at start vs growing",
                     fontsize=10)
        sec.chart(fig, out, "random_grow", "grow percentiles")
    rows = []
    for w in ways:
        cells = ["%s / %s" % (fmt(get(w, "alloc_ns_min", k)), fmt(get(w, "alloc_ns_median", k)))
                 for k, _ in keys]
        rows.append([esc(w.get("name")), fmt(w.get("clean_runs"), 9), fmt(w.get("grows_median")),
                     fmt(w.get("minor_faults_median"))] + cells)
    if rows:
        sec.html(table(["way", "clean runs", "grows", "page faults"] +
                       [label + " ns" for _, label in keys], rows))


# --- bench zram ------------------------------------------------------------------------


def zram_curves(doc):
    """[(name, xs, ns_median, efficiency, zram_case)] per allocator with points;
    a marked window has no time (null) and is left out of the time curve."""
    xs = get(doc, "windows", "x", default=[]) or []
    out = []
    for a in doc.get("allocators", []) or []:
        w = get(a, "points", "windows")
        if not isinstance(w, dict):
            continue
        out.append((a.get("name", "?"), xs, w.get("ns_per_pair_median", []) or [],
                    w.get("efficiency", []) or [], get(a, "points", "zram_case", default={})))
    return out


def zram_section(run, sec, out, names):
    doc, why = run.json("bench_zram")
    if doc is None:
        sec.missing = why
        return
    curves = zram_curves(doc)
    for c in curves:
        if c[0] not in names:
            names.append(c[0])
    sec.para("The TLSF/xvmalloc/zsmalloc study's comparison, time and memory: for each window "
             "[x, x+64) the random-replace loop's ns per free+alloc pair (a window with a refused "
             "allocation is left out of the time curve) and the memory efficiency, bytes stored / "
             "bytes held (rtm heaps: 4 KiB pages holding live blocks; zsmalloc: pages_used; malloc "
             "peers: RSS growth, their metadata included). The zram case draws compressed-page "
             "sizes from a synthetic distribution (mean %s bytes)." %
             fmt(get(doc, "zram_case", "mean_bytes"), 4))
    if curves and PLT is not None:
        fig, axes = PLT.subplots(1, 2, figsize=(13, 4.5))
        panels = ((axes[0], 2, "ns per free+alloc pair (median over rounds)", False),
                  (axes[1], 3, "memory efficiency: bytes stored / bytes held", True))
        for ax, k, label, pct in panels:
            for c in curves:
                pts = [(x, y * 100 if pct else y) for x, y in zip(c[1], c[k]) if num(y)]
                ax.plot([x for x, _ in pts], [y for _, y in pts], lw=1.2, label=c[0],
                        color=color_of(c[0], names))
            ax.axvline(4096, color="#888", lw=0.8, ls=":")
            ax.set_xlabel("window start x (bytes): requests in [x, x+64)")
            ax.set_ylabel(label + (" (%)" if pct else ""))
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
        axes[0].set_title("time per pair vs request size", fontsize=10)
        axes[1].set_title("memory efficiency vs request size", fontsize=10)
        axes[0].legend(fontsize=8)
        fig.suptitle("bench zram: the TLSF/xvmalloc/zsmalloc comparison (dotted: one page)",
                     fontsize=10)
        sec.chart(fig, out, "zram", "zram time and efficiency curves")
    rows = []
    for a in doc.get("allocators", []) or []:
        z = get(a, "points", "zram_case", default={}) or {}
        eff = z.get("efficiency")
        rows.append([esc(a.get("name")), esc(a.get("status")), fmt(a.get("marked_points"), 9),
                     fmt(z.get("ns_per_pair_median")) if not z.get("refused_runs") else
                     "refused (%s)" % fmt(z.get("refused"), 9),
                     fmt(eff * 100) + " %" if num(eff) else "-", esc(a.get("held_measure"))])
    if rows:
        sec.html(table(["allocator", "status", "marked points", "zram case ns/pair",
                        "zram case efficiency", "bytes held"], rows))


# --- bench threads ---------------------------------------------------------------------


def threads_series(a, bench, key):
    """[(threads, median, min, max)] of one allocator's benchmark rows."""
    out = []
    for r in a.get(bench, []) or []:
        s = r.get(key) if isinstance(r, dict) else None
        if isinstance(s, dict) and num(r.get("threads")) and num(s.get("median")):
            out.append((r["threads"], s["median"], s.get("min", s["median"]),
                        s.get("max", s["median"])))
    return out


def threads_chart(sec, out, allocs, names, stem):
    panels = [("seed002", "wall_ms", "pool benchmark (seed002): wall time (ms)"),
              ("pc", "ns_per_block", "producer/consumer: ns per block"),
              ("seed002", "peak_rss_mib", "pool benchmark (seed002): peak RSS (MiB)"),
              ("pc", "peak_rss_mib", "producer/consumer: peak RSS (MiB)")]
    fig, axes = PLT.subplots(2, 2, figsize=(11, 7))
    for ax, (bench, key, title) in zip(axes.flat, panels):
        for a in allocs:
            pts = threads_series(a, bench, key)
            if not pts:
                continue
            xs = [p[0] for p in pts]
            ax.errorbar(xs, [p[1] for p in pts],
                        yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                        marker="o", ms=4, capsize=3, label=a.get("name"),
                        color=color_of(a.get("name"), names))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("threads")
        counts = sorted({p[0] for a in allocs for p in threads_series(a, bench, key)})
        if counts:
            ax.set_xticks(counts)
        ax.grid(True, which="both", alpha=0.3)
        if key != "peak_rss_mib":
            ax.set_yscale("log")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        axes[0][0].legend(fontsize=8)
    variant = ("every block written" if stem == "bench_threads"
               else "blocks never written: page faults avoided")
    fig.suptitle("bench threads, %s: median over clean runs, bars min .. max" % variant,
                 fontsize=10)
    fig.tight_layout()
    sec.chart(fig, out, stem.replace("bench_", ""), "thread scaling")


def threads_section(run, sec, out, names, stem="bench_threads"):
    doc, why = run.json(stem)
    if doc is None:
        sec.missing = why
        return
    allocs = allocator_rows(doc, names)
    p = doc.get("params", {})
    if p.get("seed_write"):
        sec.para("Every byte of every block is written (--seed-write), as a real program "
                 "does: this is the comparison that counts.")
    else:
        sec.para("Blocks never written, as in the original benchmark: an allocator that keeps "
                 "its metadata outside the blocks never touches their pages, so this run "
                 "measures page faults avoided as much as allocation. No real program "
                 "allocates memory it never writes; the written variant above leads.")
    sec.para("The tcmalloc-style pool benchmark, \"seed002\" below (%s allocations per thread and "
             "round, %s rounds) and a producer/consumer run (%s blocks), threads %s, %s "
             "interleaved runs%s. %s" %
             (fmt(p.get("ntimes"), 9), fmt(p.get("rounds"), 9), fmt(p.get("pc_blocks"), 9),
              esc(", ".join(str(t) for t in p.get("threads", []))), fmt(p.get("runs"), 9),
              " (quick profile)" if p.get("quick") else "", esc(doc.get("rt_setup", ""))))
    mt = [a.get("name") for a in allocs if a.get("kind") == "mt"]
    if mt:
        sec.para("%s: rtmem's multi-threaded heap (rtm_mt_create), one shard per thread of the "
                 "run, each thread attached at its start: no lock on an attached thread's own "
                 "calls, wait-free remote frees. Its targets at 2 threads, against the same "
                 "algorithm behind a lock and against mimalloc, are among the verdicts below."
                 % esc(", ".join(mt)))
    if PLT is not None and allocs:
        threads_chart(sec, out, allocs, names, stem)
    rows = []
    for a in allocs:
        for bench, key in (("seed002", "wall_ms"), ("pc", "ns_per_block")):
            for r in a.get(bench, []) or []:
                if not isinstance(r, dict):
                    continue
                s, rss = r.get(key) or {}, r.get("peak_rss_mib") or {}
                rows.append([esc(a.get("name")), esc(a.get("status")), bench,
                             fmt(r.get("threads"), 9), esc(r.get("status")),
                             "%s / %s (%s)" % (fmt(s.get("min")), fmt(s.get("median")),
                                               fmt(s.get("spread"))),
                             fmt(rss.get("median"))])
    sec.html(table(["allocator", "status", "benchmark", "threads", "row status",
                    "wall ms (seed002: pool benchmark) or ns/block (pc): min / median (spread)",
                    "peak RSS MiB"], rows))
    lines = ["%s: %s %s" % (v.get("text", v.get("target")), v.get("verdict"), v.get("detail", ""))
             for v in doc.get("verdicts", []) or [] if isinstance(v, dict)]
    sec.html(verdict_html(lines or run.verdicts(stem)))


def threads_untouched_section(run, sec, out, names):
    threads_section(run, sec, out, names, "bench_threads_untouched")


# --- limits -------------------------------------------------------------------------------


def human_bytes(b):
    if not num(b):
        return "–"
    for unit, k in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return "%.3g %s" % (b / k, unit)
    return "%d B" % b


def largest_of(a):
    lg = a.get("largest") or {}
    v = lg.get("exact_bytes")
    return v if num(v) else lg.get("last_ok_bytes")


def limits_section(run, sec, out, names):
    doc, why = run.json("limits")
    if doc is None:
        sec.missing = why
        return
    allocs = allocator_rows(doc, names)
    p = doc.get("params", {})
    sec.para("The Linux memmax/memtim modules' probes: the largest single block each allocator "
             "gives (rtm heaps on a %s region; malloc and mmap up to %s), and clock ticks per "
             "allocation by size (%s "
             "per size and run, %s runs; clock: %s)." %
             (human_bytes(p.get("region_bytes")), human_bytes(p.get("cap_bytes")),
              fmt(p.get("count"), 9), fmt(p.get("runs"), 9),
              esc(get(doc, "clock", "description", default="?"))))
    if PLT is not None and allocs:
        fig, axes = PLT.subplots(1, 2, figsize=(12, 0.35 * len(allocs) + 2.5))
        ax = axes[0]
        shown = [a for a in allocs if num(largest_of(a)) and largest_of(a) > 0]
        for i, a in enumerate(shown):
            ax.barh(i, largest_of(a), color=color_of(a.get("name"), names))
            ax.text(largest_of(a), i, " " + human_bytes(largest_of(a)), va="center", fontsize=7)
        ax.set_yticks(range(len(shown)))
        ax.set_yticklabels([a.get("name") for a in shown], fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log", base=2)
        ax.set_xlabel("largest block given (bytes)")
        ax.set_title("largest single block", fontsize=10)
        ax.grid(True, axis="x", alpha=0.3)
        ax = axes[1]
        for a in allocs:
            pts = [(t.get("bytes"), get(t, "median_ticks", "median")) for t in
                   a.get("timing", []) or [] if isinstance(t, dict) and t.get("status") == "ok"]
            pts = [(x, y) for x, y in pts if num(x) and num(y)]
            if pts:
                ax.plot([x for x, _ in pts], [max(y, 0.5) for _, y in pts], marker="o", ms=3,
                        label=a.get("name"), color=color_of(a.get("name"), names))
        memtim = get(doc, "published", "memtim", "rows", default=[]) or []
        for key, style in (("kmalloc_cycles", ":"), ("get_free_pages_cycles", "-."),
                           ("vmalloc_cycles", "--")):
            pts = [(r.get("bytes"), r.get(key)) for r in memtim if isinstance(r, dict)]
            pts = [(x, y) for x, y in pts if num(x) and num(y)]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], ls=style, color="#555",
                        label="Linux %s (memtim, other system)" % key[:-len("_cycles")])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("request (bytes)")
        ax.set_ylabel("ticks per allocation (median)")
        ax.set_title("time per allocation by size", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        sec.chart(fig, out, "limits", "largest block and ticks per size")
    sizes = [s for s in p.get("sizes", []) if num(s)]
    rows = []
    for a in allocs:
        by = {t.get("bytes"): t for t in a.get("timing", []) or [] if isinstance(t, dict)}
        lg = a.get("largest") or {}
        rows.append([esc(a.get("name")), esc(a.get("kind")), esc(a.get("status")),
                     human_bytes(largest_of(a)) if lg.get("status") == "ok" else
                     esc(lg.get("status", "–")), fmt(lg.get("ratio_to_region"))] +
                    [fmt(get(by.get(s, {}), "median_ticks", "median")) for s in sizes])
    sec.html(table(["allocator", "kind", "status", "largest block", "of the region"] +
                   ["ticks @ %s" % (human_bytes(s) if s % 1024 == 0 else "%d B" % s)
                    for s in sizes], rows))
    sec.html(verdict_html(run.verdicts("limits")))


# --- wcet -----------------------------------------------------------------------------------


def wcet_allocators(doc):
    """[{name, rows}]; an older single-allocator file (rows at the top) as TLSF."""
    if isinstance(doc.get("allocators"), list):
        return [a for a in doc["allocators"] if isinstance(a, dict)]
    if isinstance(doc.get("rows"), list):
        return [{"name": "tlsf", "rows": doc["rows"]}]
    return []


def wcet_worst(a, kind):
    rows = [r for r in a.get("rows", []) or [] if isinstance(r, dict) and r.get("kind") == kind
            and num(r.get("max"))]
    return max((r["max"] for r in rows), default=None)


def headline_section(run, sec, out, names):
    """The headline heaps beside the anchors, from one make bench run: each
    allocator's time per free+alloc pair in bench random as a ratio to
    mimalloc's in that same run (minimum to minimum, median to median),
    beside its exact worst alloc and free from wcet."""
    rnd, why = run.json("bench_random")
    wc, why_w = run.json("wcet")
    if rnd is None and wc is None:
        sec.missing = why or why_w
        return
    speed, order = {}, []
    for a in allocator_rows(rnd, names) if rnd is not None else []:
        s = a.get("ns_per_pair") if isinstance(a.get("ns_per_pair"), dict) else {}
        order.append(a.get("name"))
        if a.get("status") == "ok" and num(s.get("median")) and num(s.get("min")):
            speed[a.get("name")] = (s["min"], s["median"])
    worst = {}
    for a in wcet_allocators(wc) if wc is not None else []:
        worst[a.get("name")] = (wcet_worst(a, "alloc"), wcet_worst(a, "free"))
        if a.get("name") not in order:
            order.append(a.get("name"))
    ref = speed.get("mimalloc")
    sec.para("Time: ns per free+alloc pair (the throughput pass, over the clean runs) in the "
             "random-replace loop of the bench random section, divided by mimalloc's in the "
             "same run (its rounds interleaved with ours); %s. Worst path: exact instructions of the worst call through the generic "
             "API from the wcet section (x86-64), the same make bench run. Malloc peers have "
             "no worst path here beyond glibc's (wcet counts glibc only)." %
             ("mimalloc missing from this run, so no ratio" if ref is None else
              "minimum over minimum and median over median"))
    rows = []
    for name in order:
        t = speed.get(name)
        w = worst.get(name, (None, None))
        ratio = ("%.2f / %.2f" % (t[0] / ref[0], t[1] / ref[1])) if t and ref else "-"
        rows.append([esc(name), "%s / %s" % (fmt(t[0]), fmt(t[1])) if t else "-", ratio,
                     "%s / %s" % (fmt(w[0], 9), fmt(w[1], 9)) if w[0] is not None else "-"])
    sec.html(table(["allocator", "ns/pair min / median", "÷ mimalloc (min / median)",
                    "worst alloc / free (instructions)"], rows))


def wcet_section(run, sec, out, names):
    doc, why = run.json("wcet")
    if doc is None:
        sec.missing = why
        return
    allocs = wcet_allocators(doc)
    for a in allocs:
        if a.get("name") not in names:
            names.append(a.get("name"))
    sec.para("Exact user-space instructions per call, counted by ptrace single-stepping (%s; "
             "profile %s, %s random-replace iterations): the worst case each function reached "
             "over every scenario." % (esc(doc.get("method", "?")), esc(doc.get("profile", "?")),
                                       fmt(doc.get("iterations"), 9)))
    verdict = doc.get("tlsf_verdict") if isinstance(doc.get("tlsf_verdict"), dict) else doc
    # Other allocators' counts from another harness (not this run), hatched.
    published = verdict.get("reference_counts") \
        if isinstance(verdict.get("reference_counts"), dict) else {}
    if PLT is not None and allocs:
        labels = [a.get("name") for a in allocs] + list(published)
        alloc = [wcet_worst(a, "alloc") for a in allocs] + \
            [get(v, "alloc") for v in published.values()]
        free = [wcet_worst(a, "free") for a in allocs] + \
            [get(v, "free") for v in published.values()]
        fig, ax = PLT.subplots(figsize=(max(6, 0.9 * len(labels) + 2), 4))
        w = 0.38
        for i in range(len(labels)):
            hatch = "//" if i >= len(allocs) else None
            for dx, vals, c in ((-w / 2, alloc, "#1f77b4"), (w / 2, free, "#ff7f0e")):
                if num(vals[i]):
                    ax.bar(i + dx, vals[i], w, color=c, hatch=hatch, edgecolor="white")
                    ax.text(i + dx, vals[i], "%d" % vals[i], ha="center", va="bottom",
                            fontsize=7)
        if num(verdict.get("target")):
            ax.axhline(verdict["target"], color="#b00", ls="--", lw=1,
                       label="TLSF budget %d" % verdict["target"])
            ax.legend(fontsize=8)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        values = [v for v in alloc + free if num(v) and v > 0]
        if values and max(values) > 10 * min(values):  # glibc's thousands beside TLSF's 100
            ax.set_yscale("log")
        ax.set_ylabel("instructions (worst call)")
        ax.set_title("worst alloc (blue) and free (orange) per allocator; hatched: "
                     "another harness's counts, not this run", fontsize=10)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        sec.chart(fig, out, "wcet", "worst instructions per call")
    rows = []
    for a in allocs:
        for r in a.get("rows", []) or []:
            if isinstance(r, dict):
                rows.append([esc(a.get("name")), esc(r.get("kind")), esc(r.get("function")),
                             fmt(r.get("calls"), 9), fmt(r.get("min"), 9), fmt(r.get("mean")),
                             fmt(r.get("p99"), 9), fmt(r.get("max"), 9),
                             esc(r.get("worst_scenario", ""))])
    sec.html(table(["allocator", "kind", "function", "calls", "min", "mean", "p99", "max",
                    "worst scenario"], rows))
    lines = []
    if "pass" in verdict:
        lines.append("TLSF worst alloc %s, worst free %s instructions <= %s: %s" % (
            fmt(verdict.get("worst_alloc"), 9), fmt(verdict.get("worst_free"), 9),
            fmt(verdict.get("target"), 9), "PASS" if verdict["pass"] else "FAIL"))
    sec.html(verdict_html(lines or run.verdicts("wcet")))


# --- latency -------------------------------------------------------------------------------


def latency_section(run, sec, out, names):
    doc, why = run.json("latency")
    if doc is None:
        sec.missing = why
        return
    tests = [t for t in doc.get("tests", []) if isinstance(t, dict)]
    p = doc.get("params", {})
    sec.para("The VxWorks bmCtx* context-switch tests, the locked heap's priority-inheritance "
             "handover, and a high-priority thread's worst call while two lower-priority "
             "threads hammer the same heap (HeapContendedLocked: one PI lock; HeapContendedMt: "
             "the mt heap, a shard per thread): %s iterations per test%s, SCHED_FIFO %s. %s" %
             (fmt(p.get("iterations"), 9), " (quick profile)" if p.get("quick") else "",
              "on" if doc.get("fifo") else "off", esc(doc.get("rt_setup", ""))))
    hist = [t for t in tests if isinstance(t.get("histogram"), dict)
            and t["histogram"].get("counts")]
    if PLT is not None and hist:
        cols = 4
        nrows = (len(hist) + cols - 1) // cols
        fig, axes = PLT.subplots(nrows, cols, figsize=(13, 2.4 * nrows), squeeze=False)
        for ax, t in zip(axes.flat, hist):
            h = t["histogram"]
            counts = h["counts"]
            first, width = h.get("first_us", 0), h.get("bucket_us", 1)
            # One stairs artist, not a bar per bucket: 14 panels of 32 bars
            # on log axes took seconds to lay out.
            edges = [first + i * width for i in range(len(counts) + 1)]
            ax.stairs([c if num(c) and c > 0 else 0.5 for c in counts], edges, fill=True,
                      baseline=0.5, color="#1f77b4")
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.5)
            ax.yaxis.set_minor_locator(PLT.NullLocator())
            ax.set_title("%s%s" % (t.get("name"), "" if t.get("status") == "ok" else
                                   " (%s)" % t.get("status")), fontsize=8)
            ax.tick_params(labelsize=7)
            ov = h.get("overflow")
            if num(ov) and ov:
                ax.text(0.98, 0.9, "%d beyond" % ov, transform=ax.transAxes, ha="right",
                        fontsize=7)
        for ax in list(axes.flat)[len(hist):]:
            ax.axis("off")
        fig.suptitle("latency histograms (µs, count on a log scale)", fontsize=10)
        fig.subplots_adjust(left=0.05, right=0.98, bottom=0.05, top=1 - 0.35 / nrows / 2.4 - 0.02,
                            hspace=0.45, wspace=0.25)
        sec.chart(fig, out, "latency_hist", "latency histograms", tight=False)
    ok = [t for t in tests if isinstance(t.get("summary_us"), dict)]
    if PLT is not None and ok:
        fig, ax = PLT.subplots(figsize=(12, 4))
        for k, (key, label) in enumerate((("p50", "p50"), ("p99", "p99"), ("p999", "p99.9"),
                                           ("max", "max"))):
            ys = [get(t, "summary_us", key) for t in ok]
            ax.bar([i + (k - 1.5) * 0.2 for i in range(len(ok))],
                   [y if num(y) and y > 0 else 0 for y in ys], 0.2, label=label)
        ax.set_xticks(range(len(ok)))
        ax.set_xticklabels([t.get("name") for t in ok], rotation=35, ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("µs")
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=4)
        ax.set_title("latency percentiles per test", fontsize=10)
        sec.chart(fig, out, "latency_pct", "latency percentiles")
    pub = {}
    for r in get(doc, "published", "rows", default=[]) or []:
        if isinstance(r, dict):
            pub.setdefault(r.get("test"), []).append(
                "%s %s: %s" % (r.get("system"), r.get("mode"), fmt(r.get("avg_us"))))
    rows = []
    for t in tests:
        s = t.get("summary_us") or {}
        rows.append([esc(t.get("name")), esc(t.get("group", "")), esc(t.get("status")),
                     fmt(t.get("samples"), 9)] +
                    [fmt(s.get(k)) for k in ("min", "avg", "p50", "p99", "p999", "max")] +
                    [esc("; ".join(pub.get(t.get("name"), [])))])
    sec.html(table(["test", "group", "status", "samples", "min µs", "avg", "p50", "p99",
                    "p99.9", "max", "published avg µs (bmCtx*, other systems)"], rows))
    pi = doc.get("priority_inheritance")
    lines = []
    if isinstance(pi, dict) and "verdict" in pi:
        lines.append("priority inheritance: %s %s" % (pi["verdict"], pi.get("detail", "")))
    if isinstance(doc.get("contended"), str):
        lines.append("contended heap, locked against mt: %s" % doc["contended"])
    sec.html(verdict_html(lines or run.verdicts("latency")))


# --- real traces (scripts/trace_bench.sh, docs/TRACE.md) ---------------------------


def trace_programs(folder):
    """The recorded programs, in the order trace_bench.sh ran them."""
    order = {"python3": 0, "sqlite3": 1, "gcc": 2}
    progs = set()
    for f in os.listdir(folder):
        m = re.match(r"trace_(.+)_(replay|fit)\.json$", f)
        if m:
            progs.add(m.group(1))
    return sorted(progs, key=lambda p: (order.get(p, 9), p))


def trace_rows(replay, fit):
    """One table row per allocator: fit size, worst call, p99, footprint."""
    fits = {f.get("algorithm"): f for f in (fit or {}).get("fits", []) if isinstance(f, dict)}
    rows = []
    for r in (replay or {}).get("results", []):
        if not isinstance(r, dict):
            continue
        f = fits.get(r.get("allocator"))
        if f is None:
            fit_text = "–" if r.get("kind") == "malloc" else "not fitted"
        elif f.get("status") == "ok":
            fit_text = human_bytes(f.get("region_bytes"))
        else:
            fit_text = "no fit"
        ok = r.get("status") == "ok"
        worst = max(r.get("alloc_max_ns") or 0, r.get("free_max_ns") or 0) if ok else None
        if f is not None and f.get("status") == "ok":
            worst = max(f.get("worst_alloc_ns") or 0, f.get("worst_free_ns") or 0)
        instr = "–"
        if f is not None and f.get("wcet_alloc_instructions") is not None:
            instr = "%s / %s" % (fmt(f.get("wcet_alloc_instructions")),
                                 fmt(f.get("wcet_free_instructions")))
        rows.append([esc(r.get("allocator")), esc(r.get("status")), fit_text,
                     fmt(worst) if ok else "–", instr,
                     fmt(get(r, "latency_ns", "p99")) if ok else "–",
                     human_bytes(r.get("footprint_bytes")) if ok else "–",
                     fmt(r.get("refused")) if ok else esc(r.get("why") or "")])
    return rows


def trace_wcet_note(fit):
    """What the instruction column covers, and what counting it cost."""
    calls = get(fit or {}, "params", "wcet_calls")
    if not num(calls):
        return ("<i>worst alloc / free (instr.)</i>: not counted in this run "
                "(<code>rtmem fit --wcet</code>; RTMEM_TRACE_WCET_OPS=0 or no rtmem-wcet).")
    fits = [f for f in (fit or {}).get("fits", []) if isinstance(f, dict)]
    secs = sum(f.get("wcet_seconds") or 0 for f in fits)
    total = get(fit, "params", "calls")
    return ("<i>worst alloc / free (instr.)</i>: exact x86-64 instruction counts "
            "(<code>rtmem fit --wcet</code>, single-stepped by rtmem-wcet's tracer) of the "
            "first %s of %s calls on the fitted region: the worst <i>of those calls</i>, not "
            "of the whole trace (counting costs tens of microseconds per instruction; "
            "these took %.0f s)." % (fmt(calls), fmt(total), secs))


def trace_chart(sec, out, prog, replay, names):
    ok = [r for r in replay.get("results", []) if isinstance(r, dict)
          and r.get("status") == "ok" and r.get("samples")]
    if not ok or PLT is None:
        return
    fig, ax = PLT.subplots(figsize=(9, 4))
    live = ok[0]["samples"]
    ax.plot([x[0] for x in live], [x[1] / 2**20 for x in live], color="black", lw=2,
            label="live (requested)")
    for r in ok:
        if r["allocator"] not in names:
            names.append(r["allocator"])
        ax.plot([x[0] for x in r["samples"]], [x[2] / 2**20 for x in r["samples"]],
                lw=1, label="%s held" % r["allocator"], color=color_of(r["allocator"], names))
    ax.set_xlabel("call")
    ax.set_ylabel("MiB")
    ax.set_title("%s: live vs held bytes over the replay (rtm: region minus free; "
                 "malloc: RSS growth)" % prog, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    sec.chart(fig, out, "trace_%s" % prog, "%s live vs held bytes" % prog)


def traces_section(run, sec, out, names):
    progs = trace_programs(run.folder)
    if not progs:
        sec.missing = "not run: no trace_*_replay.json in %s (scripts/trace_bench.sh)" % run.folder
        return
    sec.para("Programs recorded with <code>rtmem record</code>, replayed call by call on every "
             "allocator (<code>rtmem replay</code>) and fitted (<code>rtmem fit</code>): "
             "docs/TRACE.md. <i>fit</i>: smallest region with no refusal; <i>worst</i>: slowest "
             "call in ns (rtm heaps: on the fitted region, smallest maximum of three replays; "
             "mallocs: the replay's maximum); <i>p99</i> over every timed call; "
             "<i>footprint</i>: region high-water mark (rtm, on the replay's region) or RSS "
             "growth (mallocs); <i>worst alloc / free (instr.)</i>: exact instruction counts "
             "on the fitted region, over the calls the note under each table says.")
    for prog in progs:
        stats, _ = run.json("trace_%s_stats" % prog)
        replay, why = run.json("trace_%s_replay" % prog)
        fit, _ = run.json("trace_%s_fit" % prog)
        head = "<b>%s</b>" % esc(prog)
        if isinstance(stats, dict):
            head += ": %s calls, %s thread(s), peak live %s in %s blocks" % (
                fmt(stats.get("calls")), fmt(stats.get("threads")),
                human_bytes(stats.get("peak_live_bytes")), fmt(stats.get("peak_live_blocks")))
        sec.para(head)
        if replay is None:
            sec.para('<span class="missing">%s</span>' % esc(why))
            continue
        sec.html(table(["allocator", "status", "fit", "worst (ns)", "worst alloc / free (instr.)",
                        "p99 (ns)", "footprint", "refused"], trace_rows(replay, fit)))
        sec.para(trace_wcet_note(fit))
        trace_chart(sec, out, prog, replay, names)


# --- the commands still being written: a generic view --------------------------------


def generic_section(run, sec, out, names, stem):
    """The parameters and verdicts of a command this script does not chart yet."""
    doc, why = run.json(stem)
    if doc is None:
        sec.missing = why
        return
    scalars = [(k, v) for k, v in (doc.get("params") or {}).items()
               if not isinstance(v, (dict, list))]
    if scalars:
        sec.html(table(["parameter", "value"], [[esc(k), fmt(v, 12)] for k, v in scalars]))
    sec.html(verdict_html(run.verdicts(stem)))


# --- C++ containers (bench/cpp/pmr_bench.cpp, docs/CPP.md) ----------------------------


def pmr_section(run, sec, out, names):
    """rtmem-pmr-bench: std containers on rtm heaps vs the standard resources."""
    doc, why = run.json("cpp_pmr")
    if doc is None:
        sec.missing = why
        return
    rows = [r for r in doc.get("results", []) if isinstance(r, dict)]
    workloads = []
    for r in rows:
        if r.get("workload") not in workloads:
            workloads.append(r.get("workload"))
    sec.para("Standard containers (map churn, vector growth, string building) on rtm heaps "
             "through rtmem::heap_resource, against std::pmr::unsynchronized_pool_resource, "
             "monotonic_buffer_resource and new/delete with glibc and the malloc peers. "
             "ns per operation, minimum / median over %s interleaved rounds; held = bytes "
             "the allocator holds at the peak, held/req against the bytes the containers asked "
             "for (docs/CPP.md)." % fmt(doc.get("rounds"), 9))
    ok = [r for r in rows if r.get("status") == "ok"]
    if PLT is not None and ok:
        fig, axes = PLT.subplots(1, len(workloads), figsize=(4 * len(workloads), 4.5),
                                 squeeze=False)
        for ax, w in zip(axes[0], workloads):
            mine = [r for r in ok if r.get("workload") == w]
            for i, r in enumerate(mine):
                if r["allocator"] not in names:
                    names.append(r["allocator"])
                y = get(r, "p999_ns", "min")
                ax.barh(i, y if num(y) and y > 0 else 0, color=color_of(r["allocator"], names))
            ax.set_yticks(range(len(mine)))
            ax.set_yticklabels([r["allocator"] for r in mine], fontsize=7)
            ax.invert_yaxis()
            ax.set_xscale("log")
            ax.set_title("%s: p99.9 ns (min of rounds)" % w, fontsize=9)
            ax.grid(True, axis="x", which="both", alpha=0.3)
        sec.chart(fig, out, "cpp_pmr", "container workloads, p99.9 per allocator")
    for w in workloads:
        body = []
        for r in rows:
            if r.get("workload") != w:
                continue
            if r.get("status") != "ok":
                body.append([esc(r.get("allocator")), esc(r.get("status"))] + ["–"] * 5)
                continue
            held, req = get(r, "held_bytes", "median"), get(r, "requested_bytes", "median")
            body.append([esc(r.get("allocator")), "ok"] +
                        ["%s / %s" % (fmt(get(r, k, "min")), fmt(get(r, k, "median")))
                         for k in ("p50_ns", "p999_ns", "max_ns")] +
                        [fmt(held / 1024.0 if num(held) else None),
                         fmt(held / req if num(held) and num(req) and req > 0 else None)])
        sec.html("<h3>%s</h3>" % esc(w))
        sec.html(table(["allocator", "status", "p50 ns", "p99.9 ns", "max ns", "held KiB",
                        "held/req"], body))


# --- the classic allocator workloads (scripts/workloads.py, docs/MALLOC.md) ------------


def workloads_section(run, sec, out, names):
    """scripts/workloads.py: each workload under glibc, the peers and rtmem's
    drop-in malloc; median time and RSS, ratios to mimalloc."""
    doc, why = run.json("workloads")
    if doc is None:
        sec.missing = why
        return
    by = "CPU (user+sys)" if doc.get("ratio_time") == "cpu" else "wall"
    key = "cpu_s" if doc.get("ratio_time") == "cpu" else "wall_s"
    sec.para("The classic allocator benchmarks and real programs (docs/MALLOC.md, "
             "\"Workloads\"), each a process of its own under every allocator (LD_PRELOAD; "
             "glibc: none), %s interleaved round(s); load average %s at the start, %s at the "
             "end, %s CPUs. %s. Ratios use the median %s time." % (
                 fmt(doc.get("rounds"), 9), esc(doc.get("loadavg_start")),
                 esc(doc.get("loadavg_end")), fmt(doc.get("cpus"), 9), esc(doc.get("note")),
                 by))
    allocs = [a for a in doc.get("allocators", []) if isinstance(a, dict)]
    missing = ["%s: %s" % (a.get("name"), a.get("status")) for a in allocs
               if a.get("status") != "ok"]
    if missing:
        sec.para('<span class="missing">%s</span>' % esc("; ".join(missing)))
    summary = doc.get("summary") or {}
    wls = [w for w in doc.get("workloads", []) if isinstance(w, dict)]
    rows = []
    for w in wls:
        per = summary.get(w.get("name")) or {}
        if w.get("status") != "ok":
            rows.append([esc(w.get("name")), "–", '<span class="missing">%s</span>' %
                         esc(w.get("status"))] + [""] * 6)
            continue
        for a in allocs:
            v = per.get(a.get("name"))
            if not isinstance(v, dict):
                continue
            m = v.get("metric")
            rows.append([esc(w.get("name")), esc(a.get("name")),
                         "%s / %s" % (fmt(get(v, key, "min")), fmt(get(v, key, "median"))),
                         fmt(get(v, "wall_s", "median")), fmt(get(v, "maxrss_mib", "median")),
                         fmt(v.get("time_vs_best")), fmt(v.get("time_vs_mimalloc")),
                         fmt(v.get("rss_vs_mimalloc")),
                         "%s %s" % (fmt(m.get("median")), esc(m.get("name")))
                         if isinstance(m, dict) else ""])
    sec.html(table(["workload", "allocator", "%s s min / med" % esc(by), "wall s med",
                    "peak RSS MiB med", "x best", "x mimalloc", "RSS x mimalloc",
                    "metric med"], rows))
    overall = doc.get("overall") or {}
    sec.html(table(["allocator", "workloads", "time x mimalloc (geo. mean)",
                    "RSS x mimalloc (geo. mean)", "worst x best peer", "worst on"],
                   [[esc(a), fmt(o.get("workloads")), fmt(o.get("geomean_time_vs_mimalloc")),
                     fmt(o.get("geomean_rss_vs_mimalloc")), fmt(o.get("worst_time_vs_best_peer")),
                     esc(o.get("worst_workload"))] for a, o in overall.items()
                    if isinstance(o, dict)]))
    ran = [w.get("name") for w in wls if w.get("status") == "ok"
           and any(num(get(summary, w.get("name"), a.get("name"), "time_vs_mimalloc"))
                   for a in allocs)]
    if PLT is None or not ran:
        return
    shown = [a.get("name") for a in allocs if a.get("status") == "ok"]
    fig, ax = PLT.subplots(figsize=(max(6, 1.2 * len(ran)), 4))
    width = 0.8 / max(1, len(shown))
    for i, a in enumerate(shown):
        if a not in names:
            names.append(a)
        ys = [get(summary, w, a, "time_vs_mimalloc") for w in ran]
        ax.bar([x + i * width for x in range(len(ran))], [y if num(y) else 0 for y in ys],
               width, label=a, color=color_of(a, names))
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks([x + width * (len(shown) - 1) / 2 for x in range(len(ran))])
    ax.set_xticklabels(ran, fontsize=8)
    ax.set_ylabel("median %s time / mimalloc's" % by)
    ax.set_title("Workloads: time ratio to mimalloc (< 1: faster)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=len(shown))
    sec.chart(fig, out, "workloads", "time ratio to mimalloc per workload")


# --- the page ---------------------------------------------------------------------------

SECTIONS = [
    ("headline", "The headline heaps beside the anchors: speed ratio and worst path, one run",
     headline_section),
    ("memcheck", "memcheck: time, overhead, fragmentation", memcheck_section),
    ("bench_random", "bench random: speed and latency percentiles", random_section),
    ("bench_random_sweep", "bench random --sweep: request-size window sweep", sweep_section),
    ("bench_random_grow", "bench random --grow: whole pool vs growing on demand", grow_section),
    ("bench_zram", "bench zram: time and memory by request size, the zram case", zram_section),
    ("bench_threads", "bench threads: thread scaling and peak RSS, every block written",
     threads_section),
    ("bench_threads_untouched", "bench threads, blocks never written (page faults avoided)",
     threads_untouched_section),
    ("limits", "limits: largest block, time per size", limits_section),
    ("wcet", "wcet: exact instructions per call", wcet_section),
    ("latency", "latency: context switches and priority inheritance", latency_section),
    ("real_traces", "Real traces: recorded programs replayed and fitted", traces_section),
    ("cpp_pmr", "C++ containers: std::pmr on rtm heaps vs the standard resources", pmr_section),
    ("workloads", "Workloads: the classic allocator benchmarks and real programs",
     workloads_section),
]

CSS = """
body { font-family: sans-serif; max-width: 1200px; margin: 1em auto; padding: 0 1em;
       color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc;
       margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; }
th { background: #f0f0f0; text-align: left; }
table.num td { text-align: right; } table.num td:first-child { text-align: left; }
img { max-width: 100%; } figure { margin: 0.5em 0; }
.fail { color: #b00; font-weight: bold; } .pass { color: #070; } .nj { color: #555; }
.missing { color: #888; font-style: italic; }
ul.verdicts { font-family: monospace; font-size: 0.85em; }
pre { font-size: 0.8em; background: #f8f8f8; padding: 0.5em; overflow-x: auto; }
"""


def machine_html(run):
    for stem, _, _ in SECTIONS:
        doc, _ = run.json(stem)
        m = doc.get("machine") if isinstance(doc, dict) else None
        if isinstance(m, dict):
            return ("%s, %s CPUs online (%s allowed), %s, governor %s, %s; measured %s" % tuple(
                esc(m.get(k, "?")) for k in ("cpu", "cpus_online", "cpus_allowed", "kernel",
                                             "governor", "rt_limits", "date")))
    return "not described (no command wrote its JSON)"


def runs_html(run):
    if not run.runs:
        return "<p class=\"missing\">No runs.tsv: the commands' exit status is unknown.</p>"
    rows = []
    for r in run.runs:
        st = r["status"]
        cls = "pass" if st == "0" else "nj" if st == "skipped" else "fail"
        files = " ".join('<a href="%s">%s</a>' % (esc(f), esc(f)) for f in
                         (r["name"] + ".txt", r["name"] + ".json")
                         if os.path.exists(os.path.join(run.folder, f)))
        rows.append(["<code>%s</code>" % esc(r["command"]), '<span class="%s">%s</span>' %
                     (cls, esc(st)), esc(r["seconds"]) + " s" if r["seconds"] else "", files])
    return table(["command", "exit status", "time", "output"], rows, cls="runs")


def build_sections(run, out):
    names = ["tlsf"]  # allocator names in order of appearance: stable colours
    done = []
    for stem, title, fn in SECTIONS:
        sec = Section(title, stem)
        try:
            if fn is None:
                generic_section(run, sec, out, names, stem)
            else:
                fn(run, sec, out, names)
        except Exception:  # one command's surprise must not lose the others
            sec.problems.append("this section could not be drawn:\n" + traceback.format_exc())
        doc, _ = run.json(stem)
        if doc is not None:
            sec.problems += ["sanity: " + p for p in validate_json.sanity(doc)]
        done.append(sec)
    return done


def page(run, sections, title):
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>%s</title><style>%s</style></head><body>" % (esc(title), CSS),
             "<h1>%s</h1>" % esc(title)]
    meta = ", ".join("%s %s" % (esc(k), esc(v)) for k, v in run.meta.items())
    parts.append("<p><b>Machine:</b> %s</p>" % machine_html(run))
    if meta:
        parts.append("<p><b>Run:</b> %s</p>" % meta)
    if PLT is None:
        parts.append('<p class="fail">Charts not drawn: matplotlib is missing '
                     "(apt-get install python3-matplotlib); the tables follow.</p>")
    parts.append("<h2>Commands run</h2>")
    parts.append(runs_html(run))
    parts.append("<p>" + " · ".join('<a href="#%s">%s</a>' % (s.anchor, esc(s.title.split(":")[0]))
                                    for s in sections) + "</p>")
    for s in sections:
        parts.append('<h2 id="%s">%s</h2>' % (s.anchor, esc(s.title)))
        if s.missing:
            parts.append('<p class="missing">%s</p>' % esc(s.missing))
        parts += s.body
        for p in s.problems:
            parts.append('<pre class="fail">%s</pre>' % esc(p))
    parts.append("<p><small>Written by scripts/report.py from the JSON files beside this page "
                 "(schemas: docs/RESULTS.md).</small></p></body></html>")
    return "\n".join(parts) + "\n"


USAGE = "usage: report.py RUN_DIR [--out DIR] [--title TEXT]\n"


def main(argv):
    global PLT
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0
    opts = {"--out": None, "--title": "rtmem benchmark report"}
    pos = []
    while args:
        a = args.pop(0)
        if a in opts and args:
            opts[a] = args.pop(0)
        elif a.startswith("-"):
            sys.stderr.write("report.py: unknown option %s\n%s" % (a, USAGE))
            return 2
        else:
            pos.append(a)
    if len(pos) != 1 or not os.path.isdir(pos[0]):
        sys.stderr.write(USAGE if len(pos) != 1 else "report.py: %s is not a folder\n" % pos[0])
        return 2
    run = Run(pos[0])
    out = opts["--out"] or pos[0]
    os.makedirs(out, exist_ok=True)
    PLT = load_pyplot()
    sections = build_sections(run, out)
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(page(run, sections, opts["--title"]))
    shown = [s.anchor for s in sections if not s.missing]
    sys.stderr.write("report.py: %s written (%s%s)\n" % (
        os.path.join(out, "index.html"), ", ".join(shown) or "no results",
        "" if PLT is not None else "; no charts: matplotlib missing"))
    for s in sections:
        for p in s.problems:
            sys.stderr.write("report.py: %s: %s\n" % (s.anchor, p.splitlines()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
