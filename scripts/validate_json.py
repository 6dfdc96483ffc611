#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""validate_json.py -- checks a lab command's --json file against its schema
(docs/schema/<command>.schema.json) and checks that its numbers are sane.

The validation itself is python3-jsonschema's (Debian's package, draft
2020-12); this script adds three things around it. First, the lab's schemas
keep to a small subset of JSON Schema on purpose, so that they read as
documentation (docs/RESULTS.md is generated from them):

    type (a name or a list of names: object, array, string, integer, number,
    boolean, null), properties, required, items (one schema for every
    element), enum, minimum, maximum, additionalProperties (false or a
    schema), and the annotations description, title, $schema, $id, $comment,
    default, examples.

Any other keyword in a schema is an error of the schema, even one that
jsonschema would apply: docs/RESULTS.md would not show it. Second, every
violation is one line "PATH: what", with PATH from $ (e.g. $.rows[1].value)
and the wording below, the same whatever the jsonschema version. Third,
the sanity rules:

The sanity rules (--sane) need no schema keyword. They hold for every lab
command because they follow from the lab's conventions (docs/RESULTS.md):

  * an object with min and max and any of median / mean / avg: every one of
    those that is a number is >= 0 and min <= median, mean, avg <= max;
    spread, when present with min > 0, is max / min (0 when min is 0);
  * an object with percentile keys p50, p99, p999, ... (pNNN is the
    fraction 0.NNN): non-negative and non-decreasing in that order, and
    not above max when max is there;
  * per command (the "command" field): memcheck rows have one value per
    row_fields name and no heap misses its phases; bench random lists tlsf
    and glibc, and every allocator whose status is "ok" has clean runs.

Values that are null (JSON's "cannot be computed") are left to the schema.

usage: validate_json.py [--sane] SCHEMA FILE...   schema (and sanity) check
       validate_json.py --sane-only FILE...       sanity rules only
Exit status 0 when every file passes, 1 when one does not (each problem on
stderr as FILE: PATH: what), 2 for misuse or an unreadable schema.
"""
import json
import math
import re
import sys

try:
    import jsonschema
except ImportError:  # named in the error below; scripts/deps.sh installs it
    jsonschema = None

TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
KEYWORDS = {"type", "properties", "required", "items", "enum", "minimum", "maximum",
            "additionalProperties"}
ANNOTATIONS = {"description", "title", "$schema", "$id", "$comment", "default", "examples"}


class SchemaError(Exception):
    """The schema itself is wrong (unknown keyword, bad type name)."""


def type_of(v):
    """The JSON type name of a decoded value (integers report "integer")."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def show(v):
    """A short rendering of a value for a message."""
    s = json.dumps(v)
    return s if len(s) <= 60 else s[:57] + "..."


def child(path, key):
    if isinstance(key, int):
        return "%s[%d]" % (path, key)
    if key.isidentifier():
        return "%s.%s" % (path, key)
    return "%s[%s]" % (path, json.dumps(key))


def check_schema_keywords(schema, spath):
    if not isinstance(schema, dict):
        raise SchemaError("%s: a schema must be an object, not %s" % (spath, show(schema)))
    for k in schema:
        if k not in KEYWORDS and k not in ANNOTATIONS:
            raise SchemaError("%s: keyword '%s' is outside the lab's subset" % (spath, k))
    types = schema.get("type")
    if types is not None:
        for t in types if isinstance(types, list) else [types]:
            if t not in TYPES:
                raise SchemaError("%s: unknown type '%s'" % (spath, t))


def check_schema(schema, spath="#"):
    """Raises SchemaError unless schema and every schema inside it keep to
    the subset; run once before validating, so a wrong keyword deep inside
    is found even when no value reaches it."""
    check_schema_keywords(schema, spath)
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, spath + "/properties/" + name)
    for key in ("items", "additionalProperties"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            check_schema(sub, spath + "/" + key)
        elif sub is not None and not (key == "additionalProperties" and isinstance(sub, bool)):
            raise SchemaError("%s/%s: must be a schema%s" %
                              (spath, key, " or a boolean" if key != "items" else ""))
    req = schema.get("required", [])
    if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
        raise SchemaError("%s/required: must be a list of names" % spath)
    if spath == "#" and jsonschema is not None:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as e:
            raise SchemaError("#: not a valid JSON Schema: %s" % e.message)


def path_of(parts):
    """$.a.b[2] from jsonschema's absolute_path."""
    path = "$"
    for key in parts:
        path = child(path, key)
    return path


def message_of(e):
    """The lab's wording of one jsonschema error (its lines: see the tests
    in tests/report/report.cmake), one per offending value or name."""
    path, v, kw = path_of(e.absolute_path), e.instance, e.validator
    if kw == "type":
        names = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        return ["%s: expected %s, got %s (%s)" % (path, " or ".join(names), show(v), type_of(v))]
    if kw == "required":
        m = re.match(r"^'(.*)' is a required property$", e.message)
        return ["%s: required property '%s' is missing" % (path, m.group(1) if m else e.message)]
    if kw == "enum":
        return ["%s: %s is not one of %s" % (path, show(v), show(e.validator_value))]
    if kw == "minimum":
        return ["%s: %s is below the minimum %s" % (path, show(v), e.validator_value)]
    if kw == "maximum":
        return ["%s: %s is above the maximum %s" % (path, show(v), e.validator_value)]
    if kw == "additionalProperties" and e.validator_value is False:
        known = e.schema.get("properties", {})
        return ["%s: property '%s' is not in the schema" % (path, k) for k in v if k not in known]
    return ["%s: %s" % (path, e.message)]


def validate(value, schema):
    """"PATH: message" for every violation of schema by value, in document
    order (python3-jsonschema, draft 2020-12)."""
    if jsonschema is None:
        raise SchemaError("python3-jsonschema is not installed (Debian: python3-jsonschema; "
                          "scripts/deps.sh build installs it)")
    check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    errors = []
    for e in sorted(validator.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
        errors += message_of(e)
    return errors


# --- sanity rules ----------------------------------------------------------


def num(v):
    return type_of(v) in ("integer", "number")


def percentile_rank(key):
    """p50 -> 0.50, p999 -> 0.999; None for other keys."""
    if len(key) >= 2 and key[0] == "p" and key[1:].isdigit():
        return int(key[1:]) / 10 ** len(key[1:])
    return None


def sane_summary(obj, path, errors):
    """min <= median/mean/avg <= max, nothing negative, spread = max/min."""
    lo, hi = obj.get("min"), obj.get("max")
    if not (num(lo) and num(hi)):
        return
    for k in ("min", "median", "mean", "avg", "max"):
        if num(obj.get(k)) and obj[k] < 0:
            errors.append("%s: %s %s is negative" % (path, k, show(obj[k])))
    for k in ("median", "mean", "avg"):
        v = obj.get(k)
        if num(v) and not lo <= v <= hi:
            errors.append("%s: %s %s is not within min %s .. max %s" %
                          (path, k, show(v), show(lo), show(hi)))
    if lo > hi:
        errors.append("%s: min %s is above max %s" % (path, show(lo), show(hi)))
    s = obj.get("spread")
    if num(s) and lo > 0 and not math.isclose(s, hi / lo, rel_tol=1e-3):
        errors.append("%s: spread %s is not max/min = %.6g" % (path, show(s), hi / lo))
    if num(s) and lo == 0 and s != 0:
        errors.append("%s: spread %s with min 0 (should be 0)" % (path, show(s)))


def sane_percentiles(obj, path, errors):
    ranked = sorted((percentile_rank(k), k) for k in obj if percentile_rank(k) is not None)
    ranked = [(r, k) for r, k in ranked if num(obj[k])]
    if not ranked:
        return
    if "max" in obj and num(obj["max"]):
        ranked.append((2.0, "max"))
    prev = None
    for _, k in ranked:
        v = obj[k]
        if v < 0:
            errors.append("%s: %s %s is negative" % (path, k, show(v)))
        if prev is not None and v < obj[prev]:
            errors.append("%s: %s %s is below %s %s" % (path, k, show(v), prev, show(obj[prev])))
        prev = k


def sane_walk(value, path, errors):
    if isinstance(value, dict):
        sane_summary(value, path, errors)
        sane_percentiles(value, path, errors)
        for k, v in value.items():
            sane_walk(v, child(path, k), errors)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            sane_walk(v, child(path, i), errors)


def sane_memcheck(doc, errors):
    fields = doc.get("row_fields")
    heaps = doc.get("heaps")
    if not isinstance(fields, list) or not isinstance(heaps, list):
        return
    if not heaps:
        errors.append("$.heaps: no heap was measured")
    for i, h in enumerate(heaps):
        hp = child("$.heaps", i)
        phases = h.get("phases") if isinstance(h, dict) else None
        if not isinstance(phases, dict):
            continue
        for name in ("pow2", "random"):
            ph = phases.get(name)
            if not isinstance(ph, dict):
                errors.append("%s.phases: phase '%s' is missing" % (hp, name))
                continue
            rows = ph.get("rows", [])
            for j, row in enumerate(rows):
                if isinstance(row, list) and len(row) != len(fields):
                    errors.append("%s.phases.%s.rows[%d]: %d values for %d row_fields" %
                                  (hp, name, j, len(row), len(fields)))
            runs, failed = ph.get("runs"), ph.get("failed_runs")
            if num(runs) and num(failed) and failed > runs:
                errors.append("%s.phases.%s: failed_runs %s above runs %s" %
                              (hp, name, show(failed), show(runs)))


def sane_grow(doc, errors):
    """bench random --grow: TLSF three ways, each measured."""
    ways = doc.get("grow_ways")
    names = [w.get("name") for w in ways if isinstance(w, dict)] if isinstance(ways, list) else []
    for must in ("whole", "chunks", "reserve"):
        if must not in names:
            errors.append("$.grow_ways: no row for '%s'" % must)


def sane_random(doc, errors):
    if doc.get("mode") == "grow":
        sane_grow(doc, errors)
        return
    allocs = doc.get("allocators")
    if not isinstance(allocs, list):
        return
    names = [a.get("name") for a in allocs if isinstance(a, dict)]
    for must in ("tlsf", "glibc"):
        if must not in names:
            errors.append("$.allocators: no row for '%s'" % must)
    for i, a in enumerate(allocs):
        if not isinstance(a, dict) or a.get("status") != "ok":
            continue
        nsp = a.get("ns_per_pair")
        clean = nsp.get("clean_runs") if isinstance(nsp, dict) else None
        if num(clean) and clean < 1:
            errors.append("%s: status ok without a clean run" % child("$.allocators", i))


COMMAND_RULES = {"memcheck": sane_memcheck, "bench random": sane_random, "random": sane_random}


def sanity(doc):
    """Every sanity problem of a decoded lab JSON document, as "PATH: what"."""
    errors = []
    sane_walk(doc, "$", errors)
    if isinstance(doc, dict) and doc.get("command") in COMMAND_RULES:
        COMMAND_RULES[doc["command"]](doc, errors)
    return errors


# --- command line ----------------------------------------------------------


def load(path):
    """Decodes a JSON file; NaN/Infinity are not JSON and are refused."""
    def refuse(name):
        raise ValueError("%s is not JSON (use null)" % name)
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_constant=refuse)


USAGE = ("usage: validate_json.py [--sane] SCHEMA FILE...\n"
         "       validate_json.py --sane-only FILE...\n")


def main(argv):
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + __doc__.split("usage:")[0])
        return 0
    sane = sane_only = False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--sane":
            sane = True
        elif opt == "--sane-only":
            sane = sane_only = True
        else:
            sys.stderr.write("validate_json.py: unknown option %s\n%s" % (opt, USAGE))
            return 2
    schema = None
    if not sane_only:
        if len(args) < 2:
            sys.stderr.write(USAGE)
            return 2
        try:
            schema = load(args.pop(0))
            check_schema(schema)
        except (OSError, ValueError, SchemaError) as e:
            sys.stderr.write("validate_json.py: schema: %s\n" % e)
            return 2
    elif not args:
        sys.stderr.write(USAGE)
        return 2
    status = 0
    for path in args:
        try:
            errors = check_file(path, schema, sane)
        except SchemaError as e:
            sys.stderr.write("validate_json.py: schema: %s\n" % e)
            return 2
        for e in errors:
            sys.stderr.write("%s: %s\n" % (path, e))
        if errors:
            status = 1
        else:
            what = "sanity" if schema is None else "schema and sanity" if sane else "schema"
            print("%s: ok (%s)" % (path, what))
    return status


def check_file(path, schema, sane):
    """The problems of one file: schema first, then sanity."""
    try:
        doc = load(path)
    except (OSError, ValueError) as e:
        return ["$: cannot read: %s" % e]
    errors = validate(doc, schema) if schema is not None else []
    return errors + sanity(doc) if sane else errors


if __name__ == "__main__":
    sys.exit(main(sys.argv))
