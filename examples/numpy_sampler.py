#!/usr/bin/env python3
"""Standard speculative sampling (Leviathan et al. 2023; Chen et al. 2023) in
numpy on a simdec chain, writing samples for `simdec check --samples`.

    simdec gen --V 3 --T 4 -o chain.json
    python3 examples/numpy_sampler.py chain.json samples.txt
    simdec check --samples samples.txt --model chain.json --L 3

Each trial drafts up to --gamma tokens from the draft rows p_t(.|x_{t-1}),
accepts draft token x with probability min(1, q_t(x|.)/p_t(x|.)), replaces
the first rejected one by a draw from the residual (q - p)^+ normalised, and
adds a bonus token from q when all drafts pass.  --buggy samples the drafts
at temperature 0.5 but verifies with the untempered p: a draft law other than
the one sampled from, which makes the output biased."""
import argparse
import json

import numpy as np

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("model"), ap.add_argument("out")
ap.add_argument("--trials", type=int, default=100000)
ap.add_argument("--gamma", type=int, default=3)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--buggy", action="store_true")
a = ap.parse_args()

m = json.load(open(a.model))
V, T = m["vocab"], m["horizon"]
p, q = (np.asarray(m[k], float).reshape(-1, V, V) for k in ("draft", "target"))
rng = np.random.default_rng(a.seed)


def rows(P, s, prev):  # the rows P_s(.|prev), one per trial (s <= T)
    return P[np.minimum(s, T) - 1 if len(P) > 1 else 0, prev]


def draw(P):  # one token from each row of P (normalised here)
    u = rng.random(len(P))[:, None] * P.sum(1, keepdims=True)
    return np.minimum((P.cumsum(1) < u).sum(1), V - 1)


n = a.trials
x = np.zeros((n, T + 1), int)
x[:, 0] = draw(np.tile(np.asarray(m["init"], float), (n, 1)))
t = np.ones(n, int)  # each trial's next position
while (live := np.flatnonzero(t <= T)).size:  # one iteration of every live trial
    g = np.minimum(a.gamma, T + 1 - t[live])  # its drafts
    ok = np.ones(live.size, bool)  # no rejection yet
    for j in range(a.gamma + 1):
        k = np.flatnonzero(ok)
        if not k.size:
            break
        i = live[k]
        s = t[i] + j  # the position produced now
        P, Q = rows(p, s, x[i, s - 1]), rows(q, s, x[i, s - 1])
        end = j == g[k]  # all g drafts accepted: a bonus token from q
        b = end & (s <= T)
        x[i[b], s[b]] = draw(Q[b])
        t[i[end]] = np.minimum(s[end] + 1, T + 1)
        ok[k[end]] = False
        d = ~end
        y = draw(P[d] ** 2 if a.buggy else P[d])  # --buggy: temperature 0.5
        acc = rng.random(y.size) * P[d, y] < Q[d, y]  # u < min(1, q/p)
        x[i[d], s[d]] = np.where(acc, y, draw(np.maximum(Q[d] - P[d], 0.0)))
        r = ~acc  # a rejection ends the iteration after the residual token
        t[i[d][r]] = s[d][r] + 1
        ok[k[d][r]] = False
np.savetxt(a.out, x[:, 1:], fmt="%d", delimiter=" ")
