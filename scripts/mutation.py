#!/usr/bin/env python3
"""mutation.py -- `make mutation`: does the fast suite catch real mistakes?

Applies single-line mutants to the library's sources (sims/ and its
subdirectories, src/, lp/, treelp/), one at a time, in scratch copies of
the tree under /tmp (the working tree is never touched), rebuilds there
only what the mutant changed and runs only the Criterion suites that
execute the mutated line (or, without the coverage map, the nearest tests
by name: MUTATION_MAP below), with a timeout.  A mutant is
  killed      the suites fail, crash or time out,
  survived    they pass (or no suite executes the line: "uncovered"),
  stillborn   it does not compile (left out of the share).
It prints the share caught, killed / (killed + survived - known equivalent),
with a 95% Clopper-Pearson interval, the survivors and the equivalent ones.

Which suites (the coverage map).  Once per state of the sources, a copy of
the library built with --coverage (-O1, build/mutation/cov/) runs each
Criterion suite alone, the CLI it calls instrumented too; gcov's line
counts give, for every executable line, the suites that execute it.  The
map is cached in build/mutation/coverage.json (rebuilt when a C source
or test changes).  Where -O1 folds a line away gcov no longer lists it
(whole suite); a line it misattributes can only lose a suite, which may
let a mutant survive, never kill it: the share errs low.  A mutant on a line gcov does not list as
executable (a declaration, a table entry, a continuation line) runs the
whole suite; one on an executable line no suite executes survives without
a run (it is compiled, to tell stillborn ones apart).

Mutants (one occurrence, one line, each):
  cmp     < <-> <=, > <-> >=, == <-> !=
  arith   binary + <-> -, * <-> / (spaced operators, the tree's style)
  const   integer n -> n + 1 (0 -> 1, 1 -> 0 also), 0.0 <-> 1.0
  delete  an assignment statement `lhs = ...;` (or +=, -=, ...) removed
Comments, preprocessor lines and lines holding string literals are left
alone (messages and help text are not logic).

The default is a seeded random sample stratified by file (each file gets
its share of the sample in proportion to its mutants), sized to take about
an hour on 2 idle cores.  Samples are nested and run in order: the first k
mutants run are the sample of size k, so an interrupted run reports a
smaller sample of the same design.  Known equivalent mutants (changes no test can see,
each with the reason) are in scripts/mutation-equivalent.tsv and are left
out of the share.

Environment (all optional):
  MUTATION_LIMIT=N|all the sample's size (default 400) or every mutant
  MUTATION_SEED=S      the sample's seed (default 1)
  MUTATION_FILES="a b" only these files or globs, ** for any depth (default
                       sims/**/*.c src/*.c lp/*.c treelp/*.c)
  MUTATION_GREP=RE     only mutants whose original line matches RE
  MUTATION_KINDS="cmp delete"  only these kinds
  MUTATION_TIMEOUT=SEC the most a build or a suite run may take (default 600);
                       a suite run is also stopped at 60 s + 3 x the coverage
                       run's time of the suites it runs
  MUTATION_RESULTS=F   results file (default build/mutation/results.tsv);
                       mutants already in it are not run again (resumable)
  MUTATION_RERUN=1     run again the survivors recorded in the results file
                       that are not known equivalents
                       (after adding tests)
  MUTATION_JOBS=N      mutants run at once, each in its own scratch copy
                       (default 2)
  MUTATION_MAP=auto|1|0  1: the coverage map (above); 0: the nearest tests
                       by name (names_map: seconds instead of the map's
                       minutes, but it misses suites, so the share errs
                       low: a smoke test, not a measurement); auto (the
                       default): the map when it is cached for these sources
                       or from 20 mutants to run on, else by name
  MUTATION_ALL_SUITES=1  run the whole suite for every mutant (no map)
  MUTATION_SANITIZE=0|1  survivors again under the sanitizers (default 1
                       with the coverage map, 0 with MUTATION_MAP=0)

Survivors again under AddressSanitizer/UBSan: `make check` runs a subset of
the suites under the sanitizers (SANITIZE_FILTER in mk/quality.mk,
scripts/check-sanitize.sh), so a mutant whose only effect is a memory error
is caught there.  A survivor whose suites include some of that subset is
rebuilt with the sanitizers (make sanitize, in its scratch copy) and those
suites run again; a failure or any sanitizer report kills it ("sanitizer"
in the results).
"""
import concurrent.futures
import ctypes
import ctypes.util
import fnmatch
import glob
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUT_DIR = os.path.join(ROOT, "build", "mutation")
COV_BUILD = os.path.join("build", "mutation", "cov")
EQUIV_FILE = os.path.join(ROOT, "scripts", "mutation-equivalent.tsv")
DEFAULT_LIMIT = 400
# The library's sources.  sims/ lives in subdirectories (engine/, verifiers/,
# kernels/, exact/, controls/), hence **: the earlier default "sims/*.c"
# matched no file once they moved there, and the sample held src/ and lp/
# only.
DEFAULT_FILES = "sims/**/*.c src/*.c lp/*.c treelp/*.c"
# MUTATION_MAP=auto builds the coverage map from this many mutants to run on.
MAP_MIN = 20

CMP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITH = {" + ": " - ", " - ": " + ", " * ": " / ", " / ": " * "}
RE_CMP = re.compile(r"(?<![<>=!\-])(<=|>=|==|!=|<|>)(?![<>=])")
RE_INT = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
RE_FLOAT = re.compile(r"(?<![\w.])([01]\.0)(?![\w.])")
RE_ASSIGN = re.compile(r"^\s*[A-Za-z_][\w.\[\]>()*+-]*\s*(=|\+=|-=|\*=|/=|\|=|&=)\s*[^=].*;\s*$")
TYPE_WORDS = {"const", "static", "double", "float", "int", "long", "unsigned", "char",
              "size_t", "uint64_t", "uint32_t", "int64_t", "void", "struct", "enum", "return"}


def without_comments(text):
    """text with its comments blanked (/* */ and //, not inside string or
    character literals), newlines kept: the state of a file's code."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


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
    FILE_HASH[path] = hashlib.sha1(without_comments(text).encode()).hexdigest()
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


# sha1 of each source file's code (without_comments: its text with the
# comments blanked, line breaks kept), filled by mutants_of: a mutant's key
# names the state of its file, so a result is reused only while the file's
# code is unchanged (edits elsewhere, or to comments that keep the line
# count, keep it; tests may only have been added since, and
# MUTATION_RERUN=1 runs the survivors again).
FILE_HASH = {}


def mutant_key(m):
    path, n, line, kind, col, old, new = m
    h = hashlib.sha1(line.encode()).hexdigest()[:10]
    return (f"{path}@{FILE_HASH[path][:10]}:{n}:{col}:{kind}:"
            f"{old.strip() if kind != 'delete' else 'line'}->{new}:{h}")


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



def run(cmd, cwd, timeout, env=None, stderr=None):
    """Exit status of cmd in its own process group; None on timeout."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=stderr if stderr is not None else subprocess.DEVNULL,
                         start_new_session=True, env=env)
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        return None


def kill_strays(tree):
    """Kills what still runs from the scratch copy tree after a mutant:
    the CLI a test started under a Criterion worker outlives the killed
    process group when the mutant made it loop (it would keep a core busy
    for the rest of the run)."""
    prefix = tree.rstrip("/") + "/"
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            continue
        if exe.startswith(prefix):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


def run_suites(tree, testbin, simdec, suites, jobs, timeout):
    """Runs the Criterion suites (None: all) of testbin from tree, stopping
    at the first failure.  'pass', 'fail' (failure, crash, timeout) or
    'none' (no test ran: the filter matched nothing)."""
    cmd = [testbin, "--jobs", str(jobs), "--fail-fast"]
    if suites is not None:
        cmd += ["--filter", "@(" + "|".join(suites) + ")/*"]
    env = dict(os.environ, SIMDEC_BIN=simdec)
    with tempfile.TemporaryFile() as log:
        rc = run(cmd, tree, timeout, env=env, stderr=log)
        log.seek(0)
        text = log.read().decode(errors="replace")
    if rc is None or rc != 0:
        return "fail"
    m = re.findall(r"Synthesis: Tested: (\d+)", text)
    return "pass" if m and int(m[-1]) > 0 else "none"


# --- the coverage map: line -> suites that execute it -----------------------

def sources_hash():
    h = hashlib.sha1()
    # ** with recursive=True: sims/ and the others have subdirectories
    # (sims/engine, sims/verifiers, ...); "sims/*.[ch]" matched none of them
    pats = ["src/**/*.[ch]", "sims/**/*.[ch]", "lp/**/*.[ch]", "treelp/**/*.[ch]", "cli/**/*.[ch]",
            "plots/**/*.[ch]", "tests/**/*.[ch]", "include/**/*.h", "examples/**/*.c"]
    for p in sorted({f for g in pats for f in glob.glob(g, root_dir=ROOT, recursive=True)}):
        h.update(p.encode())
        with open(os.path.join(ROOT, p), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def list_suites(testbin):
    out = subprocess.run([testbin, "--list"], cwd=ROOT, capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"^(\S+): \d+ tests?$", out, re.M)]


def map_cached():
    """1 if build/mutation/coverage.json is the map of these sources."""
    cache = os.path.join(MUT_DIR, "coverage.json")
    if not os.path.exists(cache):
        return 0
    with open(cache) as f:
        return int(json.load(f).get("hash") == sources_hash())


def coverage_map(jobs):
    """{"suites": [...], "seconds": {suite: s}, "exec": {path: [lines]},
    "hit": {path: {line: [suite index]}}}, built or read from the cache."""
    cache = os.path.join(MUT_DIR, "coverage.json")
    key = sources_hash()
    if os.path.exists(cache):
        with open(cache) as f:
            cov = json.load(f)
        if cov.get("hash") == key:
            return cov
    print("mutation: building the coverage map (once per state of the sources; "
          f"{COV_BUILD}/)", flush=True)
    covdir = os.path.join(ROOT, COV_BUILD)
    testbin = os.path.join(covdir, "simdec-tests")
    simdec = os.path.join(covdir, "simdec")
    make = ["make", "-s", f"-j{jobs}", f"BUILD={COV_BUILD}", f"BIN={COV_BUILD}/simdec",
            "OPT=-O1 -g --coverage", "LDFLAGS=-fopenmp --coverage",
            f"{COV_BUILD}/simdec", f"{COV_BUILD}/simdec-tests"]
    if run(make, ROOT, 3600) != 0:
        sys.exit("mutation: the coverage build failed: " + " ".join(make))
    suites = list_suites(testbin)
    if not suites:
        sys.exit("mutation: no Criterion suite listed by " + testbin)
    execl, hit, seconds = {}, {}, {}
    for i, s in enumerate(suites):
        for g in glob.glob(os.path.join(covdir, "**", "*.gcda"), recursive=True):
            os.remove(g)
        t0 = time.time()
        verdict = run_suites(ROOT, testbin, simdec, [s], jobs, 3600)
        seconds[s] = time.time() - t0
        if verdict != "pass":
            sys.exit(f"mutation: suite {s} does not pass in the coverage build ({verdict})")
        gcdas = glob.glob(os.path.join(covdir, "**", "*.gcda"), recursive=True)
        out = subprocess.run(["gcov", "-j", "-t"] + gcdas, cwd=ROOT, capture_output=True,
                             text=True).stdout
        for doc in out.splitlines():
            if not doc.startswith("{"):
                continue
            for fd in json.loads(doc)["files"]:
                path = os.path.relpath(os.path.join(ROOT, fd["file"]), ROOT)
                ex = execl.setdefault(path, set())
                hp = hit.setdefault(path, {})
                for ln in fd["lines"]:
                    ex.add(ln["line_number"])
                    if ln["count"] > 0:
                        hp.setdefault(str(ln["line_number"]), set()).add(i)
        print(f"  coverage {i + 1}/{len(suites)} {s} ({seconds[s]:.0f} s)", flush=True)
    cov = {"hash": key, "suites": suites, "seconds": seconds,
           "exec": {p: sorted(v) for p, v in execl.items()},
           "hit": {p: {ln: sorted(v) for ln, v in hp.items()} for p, hp in hit.items()}}
    with open(cache + ".tmp", "w") as f:
        json.dump(cov, f)
    os.replace(cache + ".tmp", cache)
    return cov


def sanitize_patterns():
    """The Criterion filter of `make check-sanitize` (mk/quality.mk), as
    fnmatch patterns of "suite/test"."""
    with open(os.path.join(ROOT, "mk", "quality.mk")) as f:
        m = re.search(r"^SANITIZE_FILTER \?= @\((.*)\)\s*$", f.read(), re.M)
    return m.group(1).split("|") if m else []


def in_sanitize_subset(suite, pats):
    return any(fnmatch.fnmatchcase(suite + "/x", p) for p in pats)


def suites_for(cov, m):
    """The suites that execute the mutated line; None when unknown (whole
    suite), [] when no suite executes it."""
    if cov is None:
        return None
    if cov.get("mode") == "names":
        return cov["select"].get(m[0])
    path, n = m[0], m[1]
    if n not in set(cov["exec"].get(path, ())):
        return None
    return [cov["suites"][i] for i in cov["hit"].get(path, {}).get(str(n), [])]


def _nm(obj, undefined):
    """Global symbols an object defines (or, undefined=True, uses)."""
    cmd = ["nm", "-u", obj] if undefined else ["nm", "--defined-only", "-g", obj]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    syms = set()
    for ln in out.splitlines():
        w = ln.split()
        if undefined and w:
            syms.add(w[-1])
        elif len(w) == 3 and w[1] in "TDRBC":
            syms.add(w[2])
    return syms


def names_map(paths):
    """The cheaper selection, without the coverage map (MUTATION_MAP=0):
    for each file, the suites of the nearest tests by name, {"mode":
    "names", "select": {path: [suites] or None (the whole suite)},
    "seconds": {}}.  The nearest tests of a file are the test files
    (tests/*.c) that name one of its global symbols (nm of its object in
    build/) or #include its header, or, for a verifier, give its name
    ("block", "tree-rrs") in a string; failing any, those of the library
    files that call it, transitively (not through the registry, which calls
    every verifier); failing those too, the whole suite.  Seconds to
    compute; it misses suites that reach the file only through other files
    (or the CLI), so mutants survive that the map would kill: the share it
    prints errs low.  A smoke test of the machinery, not a measurement."""
    lib = sorted({p for g in DEFAULT_FILES.split() for p in glob.glob(g, root_dir=ROOT, recursive=True)}
                 | set(paths))
    obj = {f: os.path.join(ROOT, "build", f[:-2] + ".o") for f in lib}
    dfn = {f: _nm(obj[f], False) if os.path.exists(obj[f]) else set() for f in lib}
    und = {f: _nm(obj[f], True) if os.path.exists(obj[f]) else set() for f in lib}
    owner = {sym: f for f in lib for sym in dfn[f]}
    callers = {f: set() for f in lib}
    for f in lib:
        if os.path.basename(f) == "sd_registry.c":
            continue
        for sym in und[f]:
            if sym in owner and owner[sym] != f:
                callers[owner[sym]].add(f)
    tests = []
    for t in sorted(glob.glob("tests/*.c", root_dir=ROOT)):
        with open(os.path.join(ROOT, t)) as fh:
            txt = fh.read()
        su = sorted(set(re.findall(r"\bTest(?:Suite)?\(\s*(\w+)", txt)))
        if su:
            tests.append((su, set(re.findall(r"[A-Za-z_]\w*", txt)), txt))

    def near(files):
        syms = set().union(*(dfn[f] for f in files))
        hdrs = [re.compile(r'#include\s+"[^"]*\b' + re.escape(os.path.basename(f)[:-2]) + r'\.h"')
                for f in files]
        names = set()
        for f in files:
            if any(x.startswith("sd_verifier_") for x in dfn[f]):
                with open(os.path.join(ROOT, f)) as fh:
                    names |= set(re.findall(r'\.name = "([\w-]+)"', fh.read()))
        pats = [re.compile(r'[\s"=]' + re.escape(n) + r'[\s",]') for n in names]
        sel = set()
        for su, words, txt in tests:
            if syms & words or any(h.search(txt) for h in hdrs) or any(p.search(txt) for p in pats):
                sel |= set(su)
        return sorted(sel)

    select = {}
    for f in paths:
        sel = near([f])
        if not sel:
            up, todo = set(), [f]
            while todo:
                for c in callers.get(todo.pop(), ()):
                    if c not in up and c != f:
                        up.add(c)
                        todo.append(c)
            sel = near(sorted(up)) if up else []
        select[f] = sel or None
    return {"mode": "names", "select": select, "seconds": {}}


# --- sampling, equivalents, the interval -------------------------------------

def stratified(per_file, n, seed):
    """The first n mutants of an order in which every prefix is a sample
    stratified by file: each file's mutants in a random order seeded by
    (seed, its path), its k-th at priority (k - 1/2) / (its mutants), all
    files merged by priority (Sainte-Lague's divisor method: a prefix of
    length n gives a file round(n * share) mutants, within one).  Nested:
    the sample of size n is the start of that of any larger size, so an
    interrupted run is a smaller sample of the same design.  Stable: a file
    edited or added changes the draws of no other file (their priorities
    stay; the cut at n moves by the edited file's change of share), so the
    results of a run stay usable on a later tree."""
    ranked = []
    for ms in per_file:
        if not ms:
            continue
        ms = list(ms)
        rng = random.Random(f"{seed}:{ms[0][0]}")
        rng.shuffle(ms)
        ranked += [((k + 0.5) / len(ms), rng.random(), m) for k, m in enumerate(ms)]
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in ranked[:n]]


def load_equivalents():
    """{(path, original line, mutated line): reason} (lines stripped; a
    deleted line is ';')."""
    eq = {}
    if os.path.exists(EQUIV_FILE):
        with open(EQUIV_FILE) as f:
            for row in f:
                if row.startswith("#") or not row.strip():
                    continue
                parts = row.rstrip("\n").split("\t")
                if len(parts) == 4:
                    eq[(parts[0], parts[1].strip(), parts[2].strip())] = parts[3]
    return eq


def clopper_pearson(k, n, alpha=0.05):
    """The exact binomial interval from GSL's beta quantile (libgsl via
    ctypes); Wilson's score interval when libgsl cannot be loaded."""
    if n == 0:
        return float("nan"), float("nan"), "none"
    try:
        gsl = ctypes.CDLL(ctypes.util.find_library("gsl") or "libgsl.so")
        pinv = gsl.gsl_cdf_beta_Pinv
        pinv.restype = ctypes.c_double
        pinv.argtypes = [ctypes.c_double] * 3
        lo = pinv(alpha / 2, k, n - k + 1) if k > 0 else 0.0
        hi = pinv(1 - alpha / 2, k + 1, n - k) if k < n else 1.0
        return lo, hi, "Clopper-Pearson"
    except (OSError, AttributeError):
        z, p = 1.959963984540054, k / n
        c = (p + z * z / (2 * n)) / (1 + z * z / n)
        h = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
        return c - h, c + h, "Wilson"


# --- the runs ----------------------------------------------------------------

def scratch_copy():
    d = tempfile.mkdtemp(prefix="simdec-mutation-")
    tree = os.path.join(d, "tree")
    # The whole tree but git's link and the mutation data; build/ goes
    # along so that only mutated objects are recompiled.  plots/out goes
    # along too: the figures suite compares the committed figure data
    # with what the tree computes (figures/committed_data_are_current).
    shutil.copytree(ROOT, tree, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "mutation", "build-fuzz"))
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


class Worker:
    def __init__(self, timeout, cov, san):
        self.d, self.tree = scratch_copy()
        self.timeout = timeout
        self.cov = cov
        self.san = san  # the sanitizer subset's patterns, or None
        self.testbin = os.path.join(self.tree, "build", "simdec-tests")
        self.simdec = os.path.join(self.tree, "simdec")
        self.make = ["make", "-s", "-j1", "all", "tests"]

    def prepare(self, full_check, suites=None):
        """Builds the scratch copy; with full_check, runs the suites the
        mutants will run (None: all) on the unmutated tree once per state
        of the sources (a stamp in build/mutation/)."""
        if run(self.make, self.tree, self.timeout) != 0:
            sys.exit("mutation: the unmutated tree does not build in the scratch copy")
        tag = "" if suites is None else "-" + hashlib.sha1(" ".join(suites).encode()).hexdigest()[:10]
        stamp = os.path.join(MUT_DIR, "passes-" + sources_hash() + tag)
        if full_check and not os.path.exists(stamp) and not os.path.exists(stamp[:len(stamp) - len(tag)]):
            t0 = time.time()
            if run_suites(self.tree, self.testbin, self.simdec, suites, 2, self.timeout) != "pass":
                sys.exit("mutation: the unmutated suite fails in the scratch copy")
            what = "suite" if suites is None else f"suites ({len(suites)} the mutants run)"
            print(f"mutation: unmutated {what} pass in {time.time() - t0:.0f} s", flush=True)
            open(stamp, "w").close()

    def test(self, m):
        """(verdict, note, mutated line, seconds)."""
        src = os.path.join(self.tree, m[0])
        with open(src) as f:
            orig = f.read()
        text, newline = apply(m, orig)
        t0 = time.time()
        suites = suites_for(self.cov, m)
        try:
            with open(src, "w") as f:
                f.write(text)
            if suites == []:
                obj = os.path.join("build", m[0][:-2] + ".o")
                ok = run(["make", "-s", obj], self.tree, self.timeout) == 0
                verdict, note = ("survived", "uncovered") if ok else ("stillborn", "")
            elif run(self.make, self.tree, self.timeout) != 0:
                verdict, note = "stillborn", ""
            else:
                if suites is None:
                    limit = self.timeout
                    note = "all suites"
                else:
                    secs = sum(self.cov["seconds"].get(s, 60.0) for s in suites)
                    limit = min(self.timeout, 60.0 + 3.0 * secs)
                    note = f"{len(suites)} suites"
                r = "pass"
                for batch in self.batches(suites):
                    r = run_suites(self.tree, self.testbin, self.simdec, batch, 1, limit)
                    if r != "pass":
                        break
                if r == "none":  # a filter that matched nothing: the whole suite
                    r = run_suites(self.tree, self.testbin, self.simdec, None, 1, self.timeout)
                    note = "all suites"
                verdict = "survived" if r == "pass" else "killed"
                if verdict == "survived" and self.san is not None:
                    if self.sanitized(suites, limit):
                        verdict, note = "killed", "sanitizer"
        finally:
            with open(src, "w") as f:
                f.write(orig)
            kill_strays(self.tree)
        return verdict, note, newline, time.time() - t0

    def batches(self, suites):
        """The suites in two runs, the quickest (by the coverage run's
        times) first: most mutants fail a quick suite, and a run stops at
        its first failure."""
        if suites is None or len(suites) < 4:
            return [suites]
        secs = self.cov["seconds"]
        order = sorted(suites, key=lambda s: secs.get(s, 60.0))
        total, quick, acc = sum(secs.get(s, 60.0) for s in order), [], 0.0
        for su in order:
            if quick and acc + secs.get(su, 60.0) > 0.1 * total:
                break
            quick.append(su)
            acc += secs.get(su, 60.0)
        return [quick, order[len(quick):]]

    def sanitized(self, suites, limit):
        """1 when the mutant (in place) fails the sanitizer subset's part
        of its suites, rebuilt with the sanitizers, or leaves a report."""
        names = suites if suites is not None else (self.cov or {}).get("suites")
        if names is None:
            names = list_suites(self.testbin)
        names = [s for s in names if in_sanitize_subset(s, self.san)]
        if not names:
            return 0
        if run(["make", "-s", "-j1", "sanitize"], self.tree, self.timeout) != 0:
            return 0
        logs = tempfile.mkdtemp(dir=self.d)
        env = dict(os.environ, SIMDEC_BIN=os.path.join(self.tree, "simdec-asan"),
                   ASAN_OPTIONS=f"detect_leaks=1:log_path={logs}/asan:allocator_may_return_null=1",
                   UBSAN_OPTIONS=f"print_stacktrace=1:halt_on_error=1:log_path={logs}/ubsan",
                   LSAN_OPTIONS=f"log_path={logs}/lsan")
        cmd = [os.path.join(self.tree, "build-asan", "simdec-tests"), "--jobs", "1", "--fail-fast",
               "--filter", "@(" + "|".join(names) + ")/*"]
        # the sanitizers slow the suites about threefold
        rc = run(cmd, self.tree, min(self.timeout, 3 * limit), env=env)
        reports = any(re.search(r"ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:",
                                open(os.path.join(logs, f), errors="replace").read())
                      for f in os.listdir(logs))
        shutil.rmtree(logs, ignore_errors=True)
        return int(rc != 0 or reports)

    def close(self):
        shutil.rmtree(self.d, ignore_errors=True)


def main():
    env = os.environ
    files = env.get("MUTATION_FILES", DEFAULT_FILES).split()
    paths = sorted({p for g in files for p in glob.glob(g, root_dir=ROOT, recursive=True)})
    if not paths:
        sys.exit("mutation: no files match MUTATION_FILES")
    grep = re.compile(env["MUTATION_GREP"]) if env.get("MUTATION_GREP") else None
    kinds = set(env.get("MUTATION_KINDS", "cmp arith const delete").split())
    lim = env.get("MUTATION_LIMIT", str(DEFAULT_LIMIT))
    timeout = float(env.get("MUTATION_TIMEOUT", "600"))
    jobs = max(1, int(env.get("MUTATION_JOBS", "2")))
    results_path = env.get("MUTATION_RESULTS", os.path.join(MUT_DIR, "results.tsv"))
    seed = int(env.get("MUTATION_SEED", "1"))

    per_file = []
    for p in paths:
        per_file.append([m for m in mutants_of(p) if m[3] in kinds and (not grep or grep.search(m[2]))])
    total = sum(len(ms) for ms in per_file)
    order = stratified(per_file, total if lim == "all" else int(lim), seed)

    os.makedirs(os.path.dirname(results_path), exist_ok=True)
    os.makedirs(MUT_DIR, exist_ok=True)
    done = load_results(results_path)
    rerun = env.get("MUTATION_RERUN") == "1"
    eq = load_equivalents()

    def again(row):
        """A recorded survivor that MUTATION_RERUN runs again: not one
        known to be equivalent (left out of the share either way)."""
        return rerun and row[1] == "survived" and (row[2], row[5], row[6]) not in eq

    todo = [m for m in order if mutant_key(m) not in done or again(done[mutant_key(m)])]
    print(f"mutation: {total} mutants in {len(paths)} files; {len(order)} selected (seed "
          f"{env.get('MUTATION_SEED', '1')}, stratified by file), {len(order) - len(todo)} already in "
          f"{os.path.relpath(results_path, ROOT)}, {len(todo)} to run", flush=True)

    cov = None
    if todo:
        mode = env.get("MUTATION_MAP", "auto")
        if mode not in ("auto", "0", "1"):
            sys.exit(f"mutation: MUTATION_MAP={mode}: expected auto, 0 or 1")
        if mode == "auto":
            # The map costs a coverage build and a run of every suite (minutes
            # to a quarter of an hour): worth it from MAP_MIN mutants on, or
            # when it is cached already for this state of the sources.
            mode = "1" if len(todo) >= MAP_MIN or map_cached() else "0"
            if mode == "0":
                print(f"mutation: {len(todo)} mutants (< {MAP_MIN}) and no coverage map for these sources: "
                      "the nearest tests by name instead (MUTATION_MAP=1 builds the map)", flush=True)
        if env.get("MUTATION_ALL_SUITES") == "1":
            cov = None
        elif mode == "1":
            cov = coverage_map(jobs)
        else:
            cov = names_map(sorted({m[0] for m in todo}))
        san = None
        # The sanitizer pass needs a sanitizer build of the tree (minutes on
        # a fresh clone): by default only with the coverage map.
        if env.get("MUTATION_SANITIZE", "1" if cov is None or cov.get("mode") != "names" else "0") != "0":
            san = sanitize_patterns()
            # the sanitizer build the scratch copies start from
            if run(["make", "-s", f"-j{jobs}", "sanitize"], ROOT, 3600) != 0:
                sys.exit("mutation: make sanitize fails")
        workers = [Worker(timeout, cov, san) for _ in range(min(jobs, len(todo)))]
        lock = threading.Lock()
        queue = list(reversed(todo))
        count = [0]
        t_start = time.time()

        def work(w):
            while True:
                with lock:
                    if not queue:
                        return
                    m = queue.pop()
                verdict, note, newline, secs = w.test(m)
                key = mutant_key(m)
                row = [key, verdict, m[0], str(m[1]), m[3], m[2].strip(), newline.strip(), note, f"{secs:.0f}"]
                with lock:
                    done[key] = row
                    with open(results_path, "a") as f:
                        f.write("\t".join(row) + "\n")
                    count[0] += 1
                    print(f"[{count[0]}/{len(todo)}] {verdict:9s} {m[0]}:{m[1]} {m[3]}: {newline.strip()}  "
                          f"({note}, {secs:.0f} s)", flush=True)

        try:
            need = None
            if cov is not None and cov.get("mode") == "names":
                picked = [suites_for(cov, m) for m in todo]
                if all(p is not None for p in picked):
                    need = sorted({x for p in picked for x in p})
            for i, w in enumerate(workers):
                w.prepare(full_check=i == 0, suites=need)
            with concurrent.futures.ThreadPoolExecutor(len(workers)) as ex:
                for f in [ex.submit(work, w) for w in workers]:
                    f.result()
        finally:
            for w in workers:
                w.close()
        print(f"mutation: {len(todo)} mutants in {(time.time() - t_start) / 60:.1f} min", flush=True)

    report([done[mutant_key(m)] for m in order if mutant_key(m) in done], eq)
    if todo and cov is not None and cov.get("mode") == "names":
        print("mutation: these ran the nearest tests by name, not the coverage map's suites: a smoke "
              "test; the share errs low (MUTATION_MAP=1 measures it)")


def report(rows, eq):
    killed = sum(r[1] == "killed" for r in rows)
    stillborn = sum(r[1] == "stillborn" for r in rows)
    survived = [r for r in rows if r[1] == "survived"]
    equiv = [r for r in survived if (r[2], r[5], r[6]) in eq]
    alive = [r for r in survived if (r[2], r[5], r[6]) not in eq]
    live = killed + len(alive)
    lo, hi, how = clopper_pearson(killed, live)
    share = 100.0 * killed / live if live else float("nan")
    print(f"\nmutation: {len(rows)} mutants: {killed} killed, {len(survived)} survived "
          f"({len(equiv)} of them known equivalent), {stillborn} did not compile")
    print(f"mutation: caught {killed} of the {live} non-equivalent = {share:.1f}% "
          f"(95% {how} interval {100 * lo:.1f}%..{100 * hi:.1f}%)")
    if equiv:
        print(f"equivalent ({os.path.relpath(EQUIV_FILE, ROOT)}):")
        for r in equiv:
            print(f"  {r[2]}:{r[3]} {r[4]}: {r[5]}  ->  {r[6] or '(deleted)'}\n      {eq[(r[2], r[5], r[6])]}")
    if alive:
        print("survivors:")
        for r in alive:
            note = f"  [{r[7]}]" if len(r) > 7 and r[7] == "uncovered" else ""
            print(f"  {r[2]}:{r[3]} {r[4]}: {r[5]}  ->  {r[6] or '(deleted)'}{note}")


if __name__ == "__main__":
    main()
