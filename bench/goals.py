#!/usr/bin/env python3
"""goals.py -- the whole-process part of `make bench`.

Runs the simdec binary as a user does (one process per command, wall time and
peak resident memory of that process from os.wait4) and prints, beside the
throughput table of simdec-bench, the measurements of issue 14's other goals:

  * --estimator rb on token rejections, default chain (V=7, T=50,
    model-seed 10), gamma = horizon: variance ratio plain/rb (goal >= 30x)
    and the rb mean against Theorem 1 (goal |z| < 4);
  * `lp otm --k 3 --V 30`: the network-flow method (the default) against
    GLPK's simplex (`--method simplex`, the formulation of before), same
    optimum to 1e-9, speed-up (goal >= 100x); the simplex run takes 10-60 s
    and is skipped with --quick;
  * `eval rejections --p @a --q @b --T 50` at V = 10^6 (two i.i.d. lists
    written to a temporary directory): wall time and peak RSS (goals < 2 s,
    < 200 MB), the answer checked against T TV(p, q) summed here;
  * `eval acceptance --algo otm --method convex` (the k-draft optimum as a
    convex problem, Thomas & Pal 2025) at V = 10^4 and 10^6, k = 2 and 8:
    wall time (goal: seconds) and the same optimum as --method prefix (1e-9);
  * the README demo `run --algo block --T 50` as a whole process: wall time
    beside the Monte-Carlo time the run reports;
  * `lp tree-valid --V 8` with the trees 3,2, 4,2 and 2,2,2 (--time-limit
    60): status (optimal by column generation, or bounds), the answer, wall
    time (goal: within 60 s) and peak RSS; the 2,2,2 run takes the whole
    60 s when it does not converge and is skipped with --quick.

Standard library only.  Usage: goals.py SIMDEC [--quick]
Exit status 0 whatever the timings (timings are not tests); 70 when a
command fails or prints something unexpected.
"""

import json
import os
import random
import sys
import tempfile
import time


def run(simdec, args):
    """Runs simdec with args, output to temporary files; returns (stdout,
    wall seconds, peak RSS in bytes) of that one process.  The kernel's peak
    for a child is the larger of its own and the parent's resident size at
    the spawn (counted before the exec), so this interpreter stays small
    (about 13 MB: the lists below are written in chunks)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        pid = os.posix_spawn(simdec, [simdec] + args, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if code != 0:
            sys.stderr.write("goals.py: simdec %s: exit %d\n%s" % (" ".join(args), code,
                                                                   err.read().decode(errors="replace")))
            sys.exit(70)
        return out.read().decode(), wall, ru.ru_maxrss * 1024  # ru_maxrss: KiB on Linux


def rb_goal(simdec):
    out, _, _ = run(simdec, ["run", "--algo", "token", "--trials", "100000", "--seed", "1",
                             "--estimator", "rb", "--json"])
    d = json.loads(out)
    plain, rb, exact = d["rejections"], d["rejections_rb"], d["exact_rejections"]
    ratio = (plain["stderr"] / rb["stderr"]) ** 2
    z = (rb["mean"] - exact) / rb["stderr"]
    print("  --estimator rb, token rejections, default chain (V=7, T=50, gamma = horizon, 10^5 "
          "trials, seed 1):")
    print("    variance plain/rb %.1fx (goal >= 30x: %s); rb mean %.6f +- %.6f, Theorem 1 %.6f, "
          "z %+.2f (goal |z| < 4: %s)" % (ratio, "met" if ratio >= 30 else "NOT met", rb["mean"],
                                          rb["stderr"], exact, z, "met" if abs(z) < 4 else "NOT met"))


def otm_goal(simdec, quick):
    args = ["lp", "otm", "--k", "3", "--V", "30", "--json"]
    out, wf, _ = run(simdec, args)
    f = json.loads(out)
    print("  lp otm --k 3 --V 30: flow (default) %.3f s wall (%.4f s solve), optimum %.15g"
          % (wf, f["seconds"], f["optimum"]))
    if quick:
        print("    simplex skipped (--quick); docs/performance.md has the last full measurement")
        return
    out, ws, _ = run(simdec, args + ["--method", "simplex"])
    s = json.loads(out)
    same = abs(f["optimum"] - s["optimum"]) <= 1e-9
    print("    simplex (--method simplex) %.2f s wall (%.2f s solve), optimum %.15g; same optimum "
          "(1e-9): %s" % (ws, s["seconds"], s["optimum"], "yes" if same else "NO"))
    ratio = ws / wf
    print("    whole process simplex/flow %.0fx (goal >= 100x: %s)"
          % (ratio, "met" if ratio >= 100 and same else "NOT met"))


def iid_goal(simdec):
    V, T = 1000000, 50
    seeds = {"p": 1, "q": 2}
    total = {}
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for name, seed in seeds.items():
            # two passes over the same stream (the total, then the values
            # divided by it) in chunks: this interpreter stays small, so
            # that the child's peak RSS is its own (see run())
            rnd = random.Random(seed)
            total[name] = s = sum(rnd.random() for _ in range(V))
            rnd = random.Random(seed)
            path = os.path.join(d, name + ".txt")
            with open(path, "w") as fh:
                for c in range(0, V, 10000):
                    fh.write(("," if c else "") + ",".join("%.17g" % (rnd.random() / s)
                                                           for _ in range(10000)))
            paths.append(path)
        out, wall, rss = run(simdec, ["eval", "rejections", "--p", "@" + paths[0], "--q",
                                      "@" + paths[1], "--T", str(T), "--json"])
        rej = json.loads(out)["rejections"]
        size = os.path.getsize(paths[0])
    # The answer against T TV(p, q) from the same doubles (%.17g reads back
    # exactly), summed here in another order: 1e-9 relative is far above
    # the rounding of 10^6 terms (about 1e-13) and far below any error of
    # the method.
    rp, rq = random.Random(seeds["p"]), random.Random(seeds["q"])
    tv = 0.5 * sum(abs(rp.random() / total["p"] - rq.random() / total["q"]) for _ in range(V))
    print("  eval rejections --p @a --q @b --T 50, V = 10^6 (lists of %.1f MB each): %.2f s wall, "
          "%.0f MB peak RSS, E[N_rej] = %.6f (T TV(p, q) computed here: %.6f)"
          % (size / 1e6, wall, rss / 1e6, rej, T * tv))
    if abs(rej - T * tv) > 1e-9 * T * tv:
        sys.stderr.write("goals.py: eval rejections %.17g differs from T TV %.17g\n" % (rej, T * tv))
        sys.exit(70)
    print("    goal < 2 s: %s; goal < 200 MB: %s" % ("met" if wall < 2 else "NOT met",
                                                   "met" if rss < 200e6 else "NOT met"))


def convex_goal(simdec):
    with tempfile.TemporaryDirectory() as d:
        for V in (10000, 1000000):
            paths = []
            for name, seed in (("p", 3), ("q", 4)):
                rnd = random.Random(seed)
                w = [rnd.random() ** 3 for _ in range(V)]
                s = sum(w)
                path = os.path.join(d, "%s%d.txt" % (name, V))
                with open(path, "w") as fh:
                    fh.write(",".join("%.17g" % (x / s) for x in w))
                paths.append(path)
            for k in (2, 8):
                res = {}
                for m in ("convex", "prefix"):
                    out, wall, _ = run(simdec, ["eval", "acceptance", "--k", str(k), "--p", "@" + paths[0],
                                                "--q", "@" + paths[1], "--method", m, "--json"])
                    res[m] = (json.loads(out), wall)
                c, wc = res["convex"]
                same = abs(c["acceptance"] - res["prefix"][0]["acceptance"]) <= 1e-9
                print("  eval acceptance --method convex, V = %d, k = %d: %.3f s wall (%.4f s solve), "
                      "optimum %.15g; same as prefix (1e-9): %s; goal seconds: %s"
                      % (V, k, wc, c["seconds"], c["acceptance"], "yes" if same else "NO",
                         "met" if wc < 10 else "NOT met"))


def demo(simdec):
    out, wall, _ = run(simdec, ["run", "--algo", "block", "--T", "50", "--json"])
    d = json.loads(out)
    print("  README demo `simdec run --algo block --T 50`: %.3f s wall as a process; the run "
          "reports %.4f s of Monte-Carlo (%d trials), the rest is the model, tables and exact "
          "values" % (wall, d["seconds"], d["trials"]))


def tree_goal(simdec, quick):
    for shape in ("3,2", "4,2", "2,2,2"):
        if quick and shape == "2,2,2":
            print("  lp tree-valid --tree 2,2,2 --V 8: skipped (--quick)")
            continue
        out, wall, rss = run(simdec, ["lp", "tree-valid", "--tree", shape, "--V", "8", "--time-limit", "60",
                                      "--json"])
        d = json.loads(out)
        if d["status"] == "optimal":
            what = "optimum %.12f (dual bound %.12f, residual %.1e, %s)" % (
                d["optimum"], d["dual_bound"], d["primal_residual"], d["method"])
        else:
            what = "bounds [%.6f, %.6f] (%s; %s)" % (d["lower"], d["upper"], d["lower_by"], d["upper_by"])
        print("  lp tree-valid --tree %s --V 8: %s, %.1f s wall (goal 60 s: %s), %.0f MB"
              % (shape, what, wall, "met" if wall <= 60.0 else "NOT met", rss / 1e6))


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 64
    simdec, quick = sys.argv[1], "--quick" in sys.argv[2:]
    print("\nwhole processes (bench/goals.py, %s):" % simdec)
    rb_goal(simdec)
    iid_goal(simdec)
    demo(simdec)
    otm_goal(simdec, quick)
    convex_goal(simdec)
    tree_goal(simdec, quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
