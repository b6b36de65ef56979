#!/usr/bin/env python3
"""mutation.py -- `make mutation`: does the fast suite catch real mistakes?

Applies single-line mutants to the library's sources (sims/, src/, lp/), one
at a time, in a scratch copy of the tree under /tmp (the working tree is
never touched), rebuilds there and runs the fast suite (scripts/run-tests.sh,
as `make test`) with a per-mutant timeout.  A mutant is
  killed      the suite fails, crashes or times out,
  survived    the suite passes,
  stillborn   it does not compile (left out of the share).
It prints the share caught, killed / (killed + survived), and the survivors.

Mutants (one occurrence, one line, each):
  cmp     < <-> <=, > <-> >=, == <-> !=
  arith   binary + <-> -, * <-> / (spaced operators, the tree's style)
  const   integer n -> n + 1 (0 -> 1, 1 -> 0 also), 0.0 <-> 1.0
  delete  an assignment statement `lhs = ...;` (or +=, -=, ...) removed
Comments, preprocessor lines and lines holding string literals are left
alone (messages and help text are not logic).

Environment (all optional):
  MUTATION_LIMIT=N     run a sample of N mutants (default: all), drawn round
                       robin over the files in a seeded order
  MUTATION_SEED=S      the sample's seed (default 1)
  MUTATION_FILES="a b" only these files or globs (default sims/*.c src/*.c lp/*.c)
  MUTATION_GREP=RE     only mutants whose original line matches RE
  MUTATION_KINDS="cmp delete"  only these kinds
  MUTATION_TIMEOUT=SEC per mutant, build and suite (default 600)
  MUTATION_RESULTS=F   results file (default build/mutation/results.tsv);
                       mutants already in it are not run again (resumable)
  MUTATION_RERUN=1     run again the survivors recorded in the results file
                       (after adding tests)
  MUTATION_JOBS=N      make -j (default 2)
"""
import fnmatch
import glob
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CMP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITH = {" + ": " - ", " - ": " + ", " * ": " / ", " / ": " * "}
RE_CMP = re.compile(r"(?<![<>=!\-])(<=|>=|==|!=|<|>)(?![<>=])")
RE_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
RE_FLOAT = re.compile(r"(?<![\w.])([01]\.0)(?![\w.])")
RE_ASSIGN = re.compile(r"^\s*[A-Za-z_][\w.\[\]>()*+-]*\s*(=|\+=|-=|\*=|/=|\|=|&=)\s*[^=].*;\s*$")
TYPE_WORDS = {"const", "static", "double", "float", "int", "long", "unsigned", "char",
              "size_t", "uint64_t", "uint32_t", "int64_t", "void", "struct", "enum", "return"}


def code_lines(text):
    """(line number, line) for the lines that may be mutated."""
    out, in_comment = [], False
    for n, line in enumerate(text.split("\n"), 1):
        s = line
        if in_comment:
            if "*/" not in s:
                continue
            s = s[s.index("*/") + 2:]
            in_comment = False
            if s.strip():
                continue  # code after a comment's end: rare, skipped
            continue
        st = s.strip()
        if st.startswith("/*"):
            if "*/" not in st:
                in_comment = True
            continue
        if not st or st.startswith("#") or st.startswith("*") or st.startswith("//"):
            continue
        if '"' in s or "'" in s:
            continue
        if "/*" in s:
            if "*/" not in s[s.index("/*"):]:
                in_comment = True
            s = s[:s.index("/*")]
        out.append((n, line, s))
    return out


def mutants_of(path):
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    found = []
    for n, line, code in code_lines(text):
        for m in RE_CMP.finditer(code):
            found.append((path, n, line, "cmp", m.start(), m.group(1), CMP[m.group(1)]))
        for op, rep in ARITH.items():
            for m in re.finditer(re.escape(op), code):
                found.append((path, n, line, "arith", m.start(), op, rep))
        for m in RE_INT.finditer(code):
            v = int(m.group(1))
            reps = {v + 1}
            if v == 1:
                reps.add(0)
            for r in sorted(reps):
                found.append((path, n, line, "const", m.start(), m.group(1), str(r)))
        for m in RE_FLOAT.finditer(code):
            r = "1.0" if m.group(1) == "0.0" else "0.0"
            found.append((path, n, line, "const", m.start(), m.group(1), r))
        first = code.strip().split(" ")[0].split("(")[0]
        if RE_ASSIGN.match(code) and first not in TYPE_WORDS and not first.startswith(("for", "if", "while", "}")):
            # a declaration `type name = ...;` has two words before '='
            lhs = code.split("=")[0].strip()
            if not re.match(r"^[A-Za-z_]\w*\s+\**[A-Za-z_]", lhs):
                found.append((path, n, line, "delete", 0, line, ""))
    return found


def mutant_key(m):
    path, n, line, kind, col, old, new = m
    h = hashlib.sha1(line.encode()).hexdigest()[:10]
    return f"{path}:{n}:{col}:{kind}:{old.strip() if kind != 'delete' else 'line'}->{new}:{h}"


def apply(m, text):
    path, n, line, kind, col, old, new = m
    lines = text.split("\n")
    assert lines[n - 1] == line
    if kind == "delete":
        indent = line[:len(line) - len(line.lstrip())]
        lines[n - 1] = indent + ";"
    else:
        assert line[col:col + len(old)] == old
        lines[n - 1] = line[:col] + new + line[col + len(old):]
    return "\n".join(lines), lines[n - 1]


def run(cmd, cwd, timeout):
    """Exit status of cmd in its own process group; None on timeout."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return None


def scratch_copy():
    d = tempfile.mkdtemp(prefix="simdec-mutation-")
    tree = os.path.join(d, "tree")
    # The whole tree but git's link and the figures; build/ goes along so
    # that only mutated objects are recompiled.
    shutil.copytree(ROOT, tree, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "out", "mutation"))
    return d, tree


def load_results(path):
    res = {}
    if os.path.exists(path):
        with open(path) as f:
            for row in f:
                parts = row.rstrip("\n").split("\t")
                if len(parts) >= 2:
                    res[parts[0]] = parts
    return res


def main():
    env = os.environ
    files = env.get("MUTATION_FILES", "sims/*.c src/*.c lp/*.c").split()
    paths = sorted({p for g in files for p in glob.glob(g, root_dir=ROOT)})
    if not paths:
        sys.exit("mutation: no files match MUTATION_FILES")
    grep = re.compile(env["MUTATION_GREP"]) if env.get("MUTATION_GREP") else None
    kinds = set(env.get("MUTATION_KINDS", "cmp arith const delete").split())
    limit = int(env.get("MUTATION_LIMIT", "0"))
    timeout = float(env.get("MUTATION_TIMEOUT", "600"))
    jobs = env.get("MUTATION_JOBS", "2")
    results_path = env.get("MUTATION_RESULTS", os.path.join(ROOT, "build", "mutation", "results.tsv"))
    rng = random.Random(int(env.get("MUTATION_SEED", "1")))

    per_file = []
    total = 0
    for p in paths:
        ms = [m for m in mutants_of(p) if m[3] in kinds and (not grep or grep.search(m[2]))]
        total += len(ms)
        rng.shuffle(ms)
        per_file.append(ms)
    rng.shuffle(per_file)
    order = []  # round robin over the files: a sample spreads over them
    while any(per_file):
        for ms in per_file:
            if ms:
                order.append(ms.pop())
    if limit:
        order = order[:limit]

    os.makedirs(os.path.dirname(results_path), exist_ok=True)
    done = load_results(results_path)
    rerun = env.get("MUTATION_RERUN") == "1"
    todo = [m for m in order if mutant_key(m) not in done or (rerun and done[mutant_key(m)][1] == "survived")]
    print(f"mutation: {total} mutants in {len(paths)} files; {len(order)} selected, "
          f"{len(order) - len(todo)} already in {os.path.relpath(results_path, ROOT)}, {len(todo)} to run",
          flush=True)

    if todo:
        d, tree = scratch_copy()
        try:
            make = ["make", "-s", f"-j{jobs}", "all", "tests"]
            if run(make, tree, timeout) != 0:
                sys.exit("mutation: the unmutated tree does not build in the scratch copy")
            t0 = time.time()
            if run(["sh", "scripts/run-tests.sh", "build/simdec-tests", "./simdec"], tree, timeout) != 0:
                sys.exit("mutation: the unmutated suite fails in the scratch copy")
            print(f"mutation: unmutated suite passes in {time.time() - t0:.0f} s", flush=True)
            for i, m in enumerate(todo, 1):
                src = os.path.join(tree, m[0])
                with open(src) as f:
                    orig = f.read()
                text, newline = apply(m, orig)
                t0 = time.time()
                try:
                    with open(src, "w") as f:
                        f.write(text)
                    b = run(make, tree, timeout)
                    if b != 0:
                        verdict = "stillborn"
                    else:
                        rc = run(["sh", "scripts/run-tests.sh", "build/simdec-tests", "./simdec"], tree, timeout)
                        verdict = "survived" if rc == 0 else "killed"
                finally:
                    with open(src, "w") as f:
                        f.write(orig)
                key = mutant_key(m)
                row = [key, verdict, m[0], str(m[1]), m[3], m[2].strip(), newline.strip()]
                done[key] = row
                with open(results_path, "a") as f:
                    f.write("\t".join(row) + "\n")
                print(f"[{i}/{len(todo)}] {verdict:9s} {m[0]}:{m[1]} {m[3]}: {newline.strip()}  "
                      f"({time.time() - t0:.0f} s)", flush=True)
        finally:
            shutil.rmtree(d, ignore_errors=True)

    rows = [done[mutant_key(m)] for m in order if mutant_key(m) in done]
    killed = sum(r[1] == "killed" for r in rows)
    survived = [r for r in rows if r[1] == "survived"]
    stillborn = sum(r[1] == "stillborn" for r in rows)
    live = killed + len(survived)
    share = 100.0 * killed / live if live else float("nan")
    print(f"\nmutation: {len(rows)} mutants: {killed} killed, {len(survived)} survived, "
          f"{stillborn} did not compile; caught {killed}/{live} = {share:.1f}%")
    if survived:
        print("survivors (equivalent ones are listed in docs/mutation.md):")
        for r in survived:
            print(f"  {r[2]}:{r[3]} {r[4]}: {r[5]}  ->  {r[6] or '(deleted)'}")


if __name__ == "__main__":
    main()
