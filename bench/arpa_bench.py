#!/usr/bin/env python3
"""arpa_bench.py -- sparse-row models in `make bench` (src/sd_backoff.h).

Whole processes, as a user runs them (wall time and peak RSS from os.wait4):

  * the fortunes word bigram (build/lm/fortunes-bigram.arpa, `make lm`;
    skipped when absent): exact Theorem 1 at T = 50 (`eval generation
    --arpa`, goal < 1 s), `run --algo token` and `run --algo block --gamma 4`
    tokens/s (goal >= 10^7 on 2 cores), peak memory (goal < 1 GB);
  * `eval speedup --gamma best` on --p/--q at V = 10^6 (goal < 2 s, 200 MB);
  * the baseline ratio: `eval speedup --gamma 4 --T 20` on --p/--q at
    V = 2000 with the chain of identical rows stored (the path of before,
    taken while it fits the memory budget) against the same problem kept
    as one row pair (--max-memory 16M forces it): same answer, the ratio of
    their times and memory.

Standard library only.  Usage: arpa_bench.py SIMDEC [LMDIR]
Exit 0 whatever the timings; 70 when a command fails or the answers differ.
"""

import json
import os
import random
import sys
import tempfile
import time


def run(simdec, args):
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
            sys.stderr.write("arpa_bench.py: simdec %s: exit %d\n%s" % (
                " ".join(args), code, err.read().decode(errors="replace")))
            sys.exit(70)
        return out.read().decode(), wall, ru.ru_maxrss * 1024


def lists(d, V, seed):
    """Two random lists of V entries written in chunks (two passes over the
    same stream: the sum, then the values), so that this interpreter stays
    small: a child's peak RSS counts the parent's at the spawn."""
    paths = []
    for k, name in enumerate(("p", "q")):
        rng = random.Random(seed * 2 + k)
        s = sum(rng.random() ** 2 for _ in range(V))
        rng = random.Random(seed * 2 + k)
        path = os.path.join(d, "%s%d.txt" % (name, V))
        with open(path, "w") as f:
            for i in range(0, V, 10000):
                n = min(10000, V - i)
                f.write(",".join("%.17g" % (rng.random() ** 2 / s) for _ in range(n)))
                f.write("," if i + n < V else "\n")
        paths.append("@" + path)
    return paths


def main():
    simdec = sys.argv[1]
    lmdir = sys.argv[2] if len(sys.argv) > 2 else "build/lm"
    lm = os.path.join(lmdir, "fortunes-bigram.arpa")
    print("\nsparse-row models (bench/arpa_bench.py)")
    if os.path.exists(lm):
        out, wall, rss = run(simdec, ["eval", "generation", "--arpa", lm, "--T", "50", "--json"])
        d = json.loads(out)
        print("  fortunes bigram (V %d): Theorem 1 at T = 50: E[N_rej] %.6f in %.3f s, %.0f MB "
              "(goals < 1 s: %s, < 1 GB: %s)" % (d["model"]["vocab"], d["rejections"], wall, rss / 1e6,
                                                 "met" if wall < 1 else "NOT met",
                                                 "met" if rss < 1e9 else "NOT met"))
        for algo in (["token"], ["block", "--gamma", "4"]):
            out, wall, rss = run(simdec, ["run", "--arpa", lm, "--algo"] + algo + ["--trials", "20000", "--json"])
            d = json.loads(out)
            tps = 50 * d["trials"] / d["seconds"]
            print("  fortunes bigram: run --algo %-14s %.3g tokens/s (kernel %s), %.0f MB (goal >= 1e7: %s)"
                  % (" ".join(algo), tps, d["kernel"], rss / 1e6, "met" if tps >= 1e7 else "NOT met"))
    else:
        print("  %s absent: `make lm` builds it (irstlm, fortunes); skipped" % lm)
    with tempfile.TemporaryDirectory() as tmp:
        p, q = lists(tmp, 10 ** 6, 1)
        out, wall, rss = run(simdec, ["eval", "speedup", "--gamma", "best", "--p", p, "--q", q, "--json"])
        d = json.loads(out)
        print("  --p/--q at V = 10^6: eval speedup --gamma best (T -> infinity): best G %d, S %.6f in %.2f s, "
              "%.0f MB (goals < 2 s: %s, < 200 MB: %s)" % (d["best_gamma"], d["best_speedup"], wall, rss / 1e6,
                                                           "met" if wall < 2 else "NOT met",
                                                           "met" if rss < 2e8 else "NOT met"))
        p, q = lists(tmp, 2000, 2)
        base = ["eval", "speedup", "--gamma", "4", "--T", "20", "--p", p, "--q", q, "--json"]
        o1, w1, r1 = run(simdec, base)
        o2, w2, r2 = run(simdec, base + ["--max-memory", "16M"])
        s1, s2 = json.loads(o1)["best_speedup"], json.loads(o2)["best_speedup"]
        if abs(s1 - s2) > 1e-9 * abs(s1):
            sys.stderr.write("arpa_bench.py: stored %.17g vs one row pair %.17g\n" % (s1, s2))
            sys.exit(70)
        print("  baseline: --p/--q at V = 2000, T = 20: chain stored %.3f s, %.0f MB; one row pair %.3f s, "
              "%.0f MB: %.0fx faster, %.0fx less memory (same S %.6f)" % (w1, r1 / 1e6, w2, r2 / 1e6, w1 / w2,
                                                                          r1 / r2, s1))


if __name__ == "__main__":
    main()
