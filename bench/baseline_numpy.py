#!/usr/bin/env python3
"""baseline_numpy.py -- the numpy baseline of `make bench` (issue 7).

What it implements: token-level speculative decoding (Yin et al. 2024, Alg. 1) with
lookahead to the horizon on a nonstationary Markov chain, vectorised across
N trajectories, the way a researcher would write it in numpy:

  for t = 1..T, for all trajectories at once:
    draft  x ~ p_t(.|prev)        inverse CDF: count of (row CDF <= u1)
    accept u2 * p_t(x|prev) < q_t(x|prev)
    else   y ~ [q_t - p_t]+       inverse CDF of the residual row with u3 * mass
    prev = x or y;  rejections += not accepted

With lookahead to the horizon there is no bonus token, so the law of the
tokens and of the rejection count is that of simdec's `run --algo token`.
Three uniforms per token (the third is drawn for every trajectory and used
where a rejection happened), O(V) work per token (the row gathers and
comparisons).

The chain has the law of `simdec gen` (draft rows Dirichlet(1), target rows
0.5 draft + 0.5 fresh Dirichlet(1), uniform init) but not its bits: the
throughput does not depend on the particular draw.  Only the trajectory loop
is timed; the chain's CDFs are precomputed outside the clock, as simdec's
kernel precomputes its tables.

Output: one line per configuration, "baseline V T tokens_per_second
mean_rejections", read by bench/bench.c.
"""
import sys
import time

import numpy as np


def chain(rng, V, T):
    P = rng.dirichlet(np.ones(V), size=(T, V))
    Q = 0.5 * P + 0.5 * rng.dirichlet(np.ones(V), size=(T, V))
    R = np.maximum(Q - P, 0.0)
    return P, Q, np.cumsum(P, axis=2), np.cumsum(R, axis=2)


def simulate(rng, P, Q, cP, cR, N):
    T, V, _ = P.shape
    mass = cR[:, :, -1]
    x = rng.integers(0, V, N)
    rej = np.zeros(N)
    for t in range(T):
        u = rng.random((3, N))
        d = np.minimum((cP[t, x] <= u[0][:, None]).sum(axis=1), V - 1)
        acc = u[1] * P[t, x, d] < Q[t, x, d]
        r = np.minimum((cR[t, x] <= (u[2] * mass[t, x])[:, None]).sum(axis=1), V - 1)
        x = np.where(acc, d, r)
        rej += ~acc
    return rej.mean()


def main():
    rng = np.random.default_rng(10)
    configs = [(7, 50, 200000, 3), (256, 50, 20000, 3)]
    if len(sys.argv) > 1 and sys.argv[1] == "--quick":
        configs = [(7, 50, 50000, 1), (256, 50, 5000, 1)]
    for V, T, N, reps in configs:
        P, Q, cP, cR = chain(rng, V, T)
        best = 0.0
        for _ in range(reps):
            t0 = time.perf_counter()
            mean_rej = simulate(rng, P, Q, cP, cR, N)
            dt = time.perf_counter() - t0
            best = max(best, N * T / dt)
        print(f"baseline {V} {T} {best:.6g} {mean_rej:.6g}", flush=True)


if __name__ == "__main__":
    main()
