#!/usr/bin/env python3
"""layers.py — checks simdec's floors (`make layers`; docs/layers.md, docs/architecture.md).

Every C file belongs to a floor by its folder:

    src/                       1  models, distributions, streams, statistics,
                                  evaluators that need no verifier
    lp/                        2  the LP core (GLPK, flows)
    sims/**, include/          3  engine, verifiers, controls, kernels, exact laws;
                                  the plugin header (include/simdec.h) is a view of it
    treelp/, bench/            4  the tree LPs, the benchmarks
    plots/                     5
    cli/                       6
    mpi/, fuzz/, python/       7
    tests/, examples/          8, the top: not checked (they may use everything),
                                  and nothing else may include or call them

and the check fails, naming the file, the line and the offending name, when

  1. a file #includes (with quotes) a header of a higher floor;
  2. an object file references (nm: an undefined symbol) a symbol that an
     object file of a higher floor defines;
  3. two object files reference each other's symbols (a cycle of two files:
     the pair and one symbol each way).

Objects are those under --build (default build/) whose source exists under
--root; an object is named by its source file.  The line named for a symbol
is the first line of the source that uses it (not a prototype).  --no-objects checks the
includes only (no build needed).  Exit status: 0 clean, 1 violations, 2 bad
usage or a tool missing.
"""
import argparse
import os
import re
import subprocess
import sys

# Folder prefix -> floor (the longest matching prefix wins).
FLOORS = [
    ("src/", 1),
    ("lp/", 2),
    ("sims/", 3),
    ("include/", 3),
    ("treelp/", 4),
    ("bench/", 4),
    ("plots/", 5),
    ("cli/", 6),
    ("mpi/", 7),
    ("fuzz/", 7),
    ("python/", 7),
    ("tests/", 8),
    ("examples/", 8),
]
TOP = 8  # tests/ and examples/: their own files are not checked
FLOOR_NAMES = {1: "src", 2: "lp", 3: "sims", 4: "treelp/bench", 5: "plots", 6: "cli", 7: "mpi/fuzz/python",
               8: "tests/examples"}

# Exceptions, each with its reason: (file, offending name) pairs allowed.
# Keep this empty unless a rule cannot be met; the report lists every entry.
ALLOWED = {
}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def floor_of(rel):
    best = None
    for prefix, floor in FLOORS:
        if rel.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, floor)
    return None if best is None else best[1]


def sources(root):
    out = []
    for top, floor in FLOORS:
        if floor == TOP:
            continue
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for f in sorted(filenames):
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def check_includes(root, files, problems):
    for rel in files:
        floor = floor_of(rel)
        path = os.path.join(root, rel)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(rel), m.group(1)))
                tfloor = floor_of(target)
                if tfloor is None or tfloor <= floor:
                    continue
                if (rel, target) in ALLOWED:
                    continue
                problems.append("%s:%d: includes %s (floor %d, %s) from floor %d (%s)"
                                % (rel, lineno, target, tfloor, FLOOR_NAMES[tfloor], floor, FLOOR_NAMES[floor]))


def nm_symbols(obj):
    try:
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        sys.exit("layers: nm not found (binutils)")
    except subprocess.CalledProcessError as e:
        sys.exit("layers: nm %s failed: %s" % (obj, e.stderr.strip()))
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] in ("U", "w", "v"):
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRCGSVW":
            defined.add(f[2])
    return defined, undefined


def first_line(root, rel, name):
    """The first line of rel that uses name (a prototype of it is skipped)."""
    pat = re.compile(r"\b%s\b" % re.escape(name))
    proto = re.compile(r"^(extern\s+)?\w[\w\s\*]*\b%s\s*\([^;{]*\)\s*;" % re.escape(name))
    try:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                if pat.search(line) and not proto.match(line):
                    return lineno
    except OSError:
        pass
    return 0


def check_objects(root, build, problems):
    objs = {}
    for dirpath, dirnames, filenames in os.walk(build):
        dirnames.sort()
        for f in sorted(filenames):
            if not f.endswith(".o"):
                continue
            obj = os.path.join(dirpath, f)
            src = os.path.relpath(obj, build)[:-2] + ".c"
            if floor_of(src) is None or not os.path.exists(os.path.join(root, src)):
                continue
            objs[src] = nm_symbols(obj)
    definer = {}
    for src in sorted(objs):
        for s in objs[src][0]:
            definer.setdefault(s, src)
    calls = {}  # src -> {other src: first symbol (sorted)}
    for src in sorted(objs):
        if floor_of(src) == TOP:
            continue  # tests and examples may call everything
        for s in sorted(objs[src][1]):
            other = definer.get(s)
            if other is None or other == src:
                continue
            calls.setdefault(src, {}).setdefault(other, s)
    for src in sorted(calls):
        floor = floor_of(src)
        for other, s in sorted(calls[src].items()):
            ofloor = floor_of(other)
            if ofloor > floor and (src, s) not in ALLOWED:
                problems.append("%s:%d: references %s, defined in %s (floor %d, %s) from floor %d (%s)"
                                % (src, first_line(root, src, s), s, other, ofloor, FLOOR_NAMES[ofloor],
                                   floor, FLOOR_NAMES[floor]))
            if src < other and src in calls.get(other, {}):
                back = calls[other][src]
                if (src, s) in ALLOWED or (other, back) in ALLOWED:
                    continue
                problems.append("%s:%d: and %s call each other: %s uses %s, %s:%d uses %s"
                                % (src, first_line(root, src, s), other, src, s, other,
                                   first_line(root, other, back), back))
    return len(objs)


def main():
    ap = argparse.ArgumentParser(description="Check simdec's floors (includes and object references).")
    ap.add_argument("--root", default=".", help="the source tree (default .)")
    ap.add_argument("--build", default="build", help="the object tree (default build)")
    ap.add_argument("--no-objects", action="store_true", help="check the includes only")
    a = ap.parse_args()
    if not os.path.isdir(os.path.join(a.root, "src")):
        print("layers: %s has no src/: give the top of a simdec tree with --root" % a.root, file=sys.stderr)
        return 2
    problems = []
    files = sources(a.root)
    check_includes(a.root, files, problems)
    nobj = 0
    if not a.no_objects:
        if not os.path.isdir(a.build):
            print("layers: no object tree %s (run make first, or --no-objects)" % a.build, file=sys.stderr)
            return 2
        nobj = check_objects(a.root, a.build, problems)
    for p in problems:
        print("layers: " + p, file=sys.stderr)
    what = "%d files" % len(files) + ("" if a.no_objects else ", %d objects" % nobj)
    if problems:
        print("layers: %d violation(s) of the floors in %s" % (len(problems), what), file=sys.stderr)
        return 1
    print("layers: the floors hold (%s)" % what)
    return 0


if __name__ == "__main__":
    sys.exit(main())
