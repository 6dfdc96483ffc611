#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""schema_doc.py -- writes the per-command part of docs/RESULTS.md from the
JSON schemas in docs/schema/, so that the documentation of every field is the
schema's own description and cannot drift from it.

docs/RESULTS.md has two parts. Above the marker line (MARKER below) is the
hand-written part: the envelope's purpose, units, conventions. Below it,
everything is generated: the envelope's fields (from the schemas, which must
agree on them) and one section per schema, a table of every field with its
type and meaning. Each schema's title names the command ("rtmem bench
threads"); sections come in the lab's command order, unknown ones last.

usage: schema_doc.py [--write | --check | --lint] [--docs DIR]
  --write  rewrite the generated part of DIR/RESULTS.md
  --check  exit 1 when DIR/RESULTS.md differs from what --write would write
           (a schema changed without `scripts/schema_doc.py --write`)
  --lint   exit 1 unless every schema keeps to the validator's subset, has a
           description on every property, and the envelopes agree (a schema
           whose "tool" is not "rtmem", scripts/workloads.py's, has its own:
           "tool" naming the program, as its title, and "schema_version")
DIR defaults to the docs/ folder beside this script's folder. Exit 2 for
misuse. Without python3 nothing here runs: the tests that use it skip.
"""
import difflib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_json  # noqa: E402  (the subset's definition lives there)

MARKER = ("<!-- Everything below is generated from docs/schema/*.schema.json by "
          "scripts/schema_doc.py --write; edit the schemas, not this. -->")
ENVELOPE = ("tool", "command", "schema_version", "machine", "rt_setup")
ORDER = ("memcheck", "bench_random", "bench_zram", "bench_threads", "limits", "wcet", "latency",
         "trace_stats", "replay", "fit", "workloads")


def schemas(schema_dir):
    """[(stem, schema)] in the lab's command order, unknown stems last."""
    names = sorted(f[:-len(".schema.json")] for f in os.listdir(schema_dir)
                   if f.endswith(".schema.json"))
    names.sort(key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))
    out = []
    for n in names:
        with open(os.path.join(schema_dir, n + ".schema.json"), encoding="utf-8") as f:
            out.append((n, json.load(f)))
    return out


# --- rendering ---------------------------------------------------------------


def type_text(s):
    """"integer", "number or null", "array of object", ..."""
    t = s.get("type", "any")
    names = t if isinstance(t, list) else [t]
    parts = []
    for n in names:
        if n == "array" and isinstance(s.get("items"), dict):
            inner = type_text(s["items"])
            parts.append("array of " + ("(%s)" % inner if " or " in inner else inner))
        else:
            parts.append(n)
    return " or ".join(parts)


def meaning(s, required):
    text = " ".join(s.get("description", "").split())
    extra = []
    if "enum" in s:
        extra.append("one of " + ", ".join("`%s`" % json.dumps(v) for v in s["enum"]))
    if "minimum" in s:
        extra.append("≥ %s" % s["minimum"])
    if "maximum" in s:
        extra.append("≤ %s" % s["maximum"])
    if not required:
        extra.append("optional")
    if isinstance(s.get("additionalProperties"), dict):
        extra.append("any further key: " + type_text(s["additionalProperties"]))
    if extra:
        text += " (" + "; ".join(extra) + ")"
    return text.replace("|", "\\|")


def shape(s):
    """A schema's structure without its descriptions, to spot repeats."""
    if isinstance(s, dict):
        return {k: shape(v) for k, v in s.items() if k not in ("description", "title")}
    if isinstance(s, list):
        return [shape(v) for v in s]
    return s


def is_lab(s):
    """A lab command's schema, with the lab's envelope: its tool is "rtmem".
    Others (scripts/workloads.py's) have an envelope of their own: "tool"
    naming the program, and "schema_version"."""
    return s.get("properties", {}).get("tool", {}).get("enum") == ["rtmem"]


def rows(s, path, required, seen, out, envelope=ENVELOPE):
    """Appends (field, type, meaning) for s at path and everything inside
    (at the top, the fields named in envelope are left out)."""
    if path:
        out.append(("`%s`" % path, type_text(s), meaning(s, required)))
    inner = s
    suffix = ""
    while inner.get("type") == "array" or (isinstance(inner.get("type"), list)
                                           and "array" in inner["type"]):
        if not isinstance(inner.get("items"), dict):
            return
        inner = inner["items"]
        suffix += "[]"
    props = inner.get("properties")
    if not props:
        return
    key = json.dumps(shape(inner), sort_keys=True)
    base = path + suffix
    if key in seen and path:
        out.append(("`%s.*`" % base, "", "the same fields as `%s`" % seen[key]))
        return
    seen.setdefault(key, base)
    req = set(inner.get("required", []))
    for name, sub in props.items():
        if not path and name in envelope:
            continue
        rows(sub, base + "." + name if base else name, name in req, seen, out)


def table(entries):
    lines = ["| field | type | meaning |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % e for e in entries]
    return "\n".join(lines)


def command_of(stem, schema):
    """The command a schema documents: its file name says it (bench_random ->
    bench random); titles are free text."""
    return stem.replace("_", " ")


def generate(schema_dir):
    found = schemas(schema_dir)
    parts = [MARKER, ""]
    env = next((s for _, s in found if all(k in s.get("properties", {}) for k in ENVELOPE)), None)
    parts += ["## The envelope's fields", ""]
    if env is None:
        parts += ["No schema defines the envelope yet.", ""]
    else:
        entries = []
        for k in ENVELOPE:
            sub = dict(env["properties"][k])
            if k == "command":
                sub.pop("enum", None)
                sub["description"] = "The command as typed (\"bench random\")."
            rows(sub, k, True, {}, entries)
        parts += [table(entries), ""]
    parts += ["## Commands", ""]
    parts += ["- [%s](#%s): `docs/schema/%s.schema.json`" %
              (command_of(n, s), command_of(n, s).replace(" ", "-"), n) for n, s in found]
    parts.append("")
    for stem, s in found:
        cmd = command_of(stem, s)
        parts += ["### %s" % cmd, ""]
        parts += ["Schema: [`docs/schema/%s.schema.json`](schema/%s.schema.json). %s" %
                  (stem, stem, " ".join(s.get("description", "").split())), ""]
        entries = []
        if is_lab(s):
            rows(s, "", True, {}, entries)
            parts += ["Besides the envelope:", "", table(entries), ""]
        else:
            rows(s, "", True, {}, entries, envelope=())
            parts += ["Written by `%s`, not by the lab: its own fields, no lab envelope:" %
                      s.get("title", stem), "", table(entries), ""]
    return "\n".join(parts)


# --- lint ----------------------------------------------------------------------


def lint_descriptions(s, path, problems, needed=True):
    """Every property (and the schema itself) describes itself; the schema
    of an array's items may lean on the array's description."""
    if needed and not s.get("description"):
        problems.append("%s: no description" % (path or "(top)"))
    for name, sub in s.get("properties", {}).items():
        lint_descriptions(sub, path + "." + name if path else name, problems)
    for key, mark in (("items", "[]"), ("additionalProperties", ".*")):
        if isinstance(s.get(key), dict):
            lint_descriptions(s[key], path + mark, problems, needed=False)


def signature(s):
    """What envelopes must agree on: the type of each field and, inside
    objects, the same names (bounds and wording may differ)."""
    sig = {"type": s.get("type")}
    if isinstance(s.get("properties"), dict):
        sig["properties"] = {k: signature(v) for k, v in s["properties"].items()}
    return sig


def lint(schema_dir):
    problems = []
    envelopes = {}
    for stem, s in schemas(schema_dir):
        try:
            validate_json.check_schema(s)
        except validate_json.SchemaError as e:
            problems.append("%s: %s" % (stem, e))
            continue
        p = []
        lint_descriptions(s, "", p)
        problems += ["%s: %s" % (stem, x) for x in p]
        props = s.get("properties", {})
        if not is_lab(s):
            tool = props.get("tool", {}).get("enum", [])
            if len(tool) != 1 or s.get("title") != tool[0] or "schema_version" not in props:
                problems.append("%s: not the lab's: needs \"tool\" (one value, the title) and "
                                "\"schema_version\"" % stem)
            continue
        missing = [k for k in ENVELOPE if k not in props]
        if missing:
            problems.append("%s: envelope fields missing: %s" % (stem, ", ".join(missing)))
            continue
        envelopes[stem] = json.dumps({k: signature(props[k]) for k in ENVELOPE}, sort_keys=True)
        if not s.get("title", "").startswith("rtmem "):
            problems.append("%s: title should be \"rtmem <command>\"" % stem)
    if len(set(envelopes.values())) > 1:
        first = next(iter(envelopes))
        for stem, e in envelopes.items():
            if e != envelopes[first]:
                problems.append("%s: envelope differs from %s's" % (stem, first))
    return problems


# --- command line ----------------------------------------------------------------


def main(argv):
    args = argv[1:]
    docs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
    if "--docs" in args:
        i = args.index("--docs")
        if i + 1 >= len(args):
            sys.stderr.write(__doc__)
            return 2
        docs = args[i + 1]
        del args[i:i + 2]
    if args in (["-h"], ["--help"]):
        sys.stdout.write(__doc__)
        return 0
    if len(args) != 1 or args[0] not in ("--write", "--check", "--lint"):
        sys.stderr.write(__doc__)
        return 2
    schema_dir = os.path.join(docs, "schema")
    if args[0] == "--lint":
        problems = lint(schema_dir)
        for p in problems:
            sys.stderr.write("schema_doc.py: %s\n" % p)
        if not problems:
            print("schema_doc.py: %d schemas ok" % len(schemas(schema_dir)))
        return 1 if problems else 0
    path = os.path.join(docs, "RESULTS.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if MARKER not in text:
        sys.stderr.write("schema_doc.py: %s lacks the marker line:\n%s\n" % (path, MARKER))
        return 1
    new = text[:text.index(MARKER)] + generate(schema_dir)
    if args[0] == "--write":
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        print("schema_doc.py: %s %s" % (path, "rewritten" if new != text else "already current"))
        return 0
    if new != text:
        diff = difflib.unified_diff(text.splitlines(), new.splitlines(), "RESULTS.md",
                                    "from the schemas", lineterm="", n=1)
        sys.stderr.write("\n".join(list(diff)[:60]) + "\n")
        sys.stderr.write("schema_doc.py: %s is out of date with docs/schema/; run "
                         "scripts/schema_doc.py --write\n" % path)
        return 1
    print("schema_doc.py: %s matches the schemas" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
