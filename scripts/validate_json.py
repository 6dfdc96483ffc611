#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""validate_json.py -- checks a lab command's --json file against its schema
(docs/schema/<command>.schema.json) and checks that its numbers are sane.

Why a validator of our own: the lab must run on a bare Debian machine with
nothing but python3, and its schemas use a small subset of JSON Schema
(draft 2020-12) on purpose, so that they read as documentation:

    type (a name or a list of names: object, array, string, integer, number,
    boolean, null), properties, required, items (one schema for every
    element), enum, minimum, maximum, additionalProperties (false or a
    schema), and the annotations description, title, $schema, $id, $comment,
    default, examples.

Any other keyword in a schema is an error of the schema, not silently
ignored: a schema that says minItems would otherwise promise a check that
nobody makes.

The sanity rules (--sane) need no schema keyword; they hold for every lab
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
import sys

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


def is_a(v, name):
    """Whether v is of JSON Schema type `name` (an integer is also a number,
    and 2.0 is an integer, as draft 2020-12 says)."""
    t = type_of(v)
    if name == "number":
        return t in ("integer", "number")
    if name == "integer":
        return t == "integer" or (t == "number" and math.isfinite(v) and v == int(v))
    return t == name


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


def validate(value, schema, path="$", spath="#", errors=None):
    """Appends "PATH: message" for every violation of schema by value."""
    if errors is None:
        errors = []
    check_schema_keywords(schema, spath)
    types = schema.get("type")
    if types is not None:
        names = types if isinstance(types, list) else [types]
        if not any(is_a(value, n) for n in names):
            errors.append("%s: expected %s, got %s (%s)" %
                          (path, " or ".join(names), show(value), type_of(value)))
            return errors  # the keywords below would only repeat the mismatch
    if "enum" in schema and value not in schema["enum"]:
        errors.append("%s: %s is not one of %s" % (path, show(value), show(schema["enum"])))
    if is_a(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append("%s: %s is below the minimum %s" % (path, show(value), schema["minimum"]))
        if "maximum" in schema and value > schema["maximum"]:
            errors.append("%s: %s is above the maximum %s" % (path, show(value), schema["maximum"]))
    if isinstance(value, dict):
        validate_object(value, schema, path, spath, errors)
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            validate(v, schema["items"], child(path, i), spath + "/items", errors)
    return errors


def validate_object(value, schema, path, spath, errors):
    props = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            errors.append("%s: required property '%s' is missing" % (path, name))
    extra = schema.get("additionalProperties", True)
    for k, v in value.items():
        if k in props:
            validate(v, props[k], child(path, k), spath + "/properties/" + k, errors)
        elif extra is False:
            errors.append("%s: property '%s' is not in the schema" % (path, k))
        elif isinstance(extra, dict):
            validate(v, extra, child(path, k), spath + "/additionalProperties", errors)


# --- sanity rules ----------------------------------------------------------


def num(v):
    return is_a(v, "number")


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
