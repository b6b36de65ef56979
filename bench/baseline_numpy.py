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

Two stronger baselines run in the same invocation, written as a numpy
programmer would tune them (issue 14 asks for the strongest vectorised
numpy of the same algorithm): tables addressed by one flat index with
take(), and the trajectories in passes of CHUNK = 8192 so that the working
arrays stay in the cache (together about 2x for alias and 1.4x for block
against the first versions, docs/performance.md):

  alias  the same token-level law with simdec's own one-draw method: the
         pair (x_n, rejected at n) is ONE categorical draw over 2V outcomes
         (min(p,q) and [q-p]+), from a Walker/Vose alias table per row
         (one uniform, one gather per token);
  block  block verification (Sun et al. 2025, Alg. 2, eqs. 3-5) with draft
         length gamma, vectorised across trajectories that sit at
         different positions: per iteration, gamma drafts, p_i, the O(V)
         residual masses m_i, the backward acceptance tau = max{i: eta_i <
         h_i}, and one token from the residual (inverse CDF) or the bonus.

The other verifiers of bench's "every verifier at gamma 4" table, at the
defaults bench runs (sd_params_defaults), by simdec's own method for them,
as alias does for token: the output is a Markov chain whose transition at
a position depends on the previous token and on the iteration's state z
(tokens drafted so far in it; for the trees, the drafts surviving), so
ONE categorical draw per position over (token, outcome class: rejected, or
how many drafts go on), from a Walker/Vose table per (position, previous
token, table set of z), gives the law of the tokens and of the
rejections; the trajectories move in lock-step, one position per pass:

  biased    Yin et al. 2024, Sec. 4 (eps = 0, opt residual), gamma 4,
            bonus from q after 4 acceptances;
  batch     Yin et al. 2024, Alg. 4 (M = 2), gamma 4: the first token of
            an iteration by recursive rejection over the M first tokens,
            the later ones token-level, the bonus;
  rrs       Sun et al. 2023, Alg. 3 (k = 2 drafts), gamma 4, a tree whose
            depths select by recursive rejection sampling;
  spectr    Sun et al. 2023, Alg. 2 (k-Seq, k = 2), gamma 4;
  sprinter  Zhong et al. 2025, Alg. 1-2 (tp = 0.5, fp = 0): no draft length,
            no bonus.

Output: one line per configuration, "baseline V T tokens_per_second
mean_rejections", "alias V T tokens_per_second mean_rejections" (and
"alias-cpu ...": the same per second of process CPU time) and, for each of
block, biased, batch, rrs, spectr and sprinter, "NAME V T gamma tokens_per_second
mean_rejections" (gamma 0: no draft length) and "NAME-cpu ...", read by
bench/bench.c.
"""
import math
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


def alias_tables(W):
    """Vose's alias method on the last axis of W (rows of weights)."""
    shape, n = W.shape[:-1], W.shape[-1]
    W = W.reshape(-1, n)
    prob = np.ones_like(W)
    alias = np.tile(np.arange(n), (W.shape[0], 1))
    for r in range(W.shape[0]):
        w = W[r] * n / W[r].sum()
        small = [i for i in range(n) if w[i] < 1.0]
        large = [i for i in range(n) if w[i] >= 1.0]
        while small and large:
            s_, l_ = small.pop(), large.pop()
            prob[r, s_], alias[r, s_] = w[s_], l_
            w[l_] -= 1.0 - w[s_]
            (small if w[l_] < 1.0 else large).append(l_)
    return prob.reshape(shape + (n,)), alias.reshape(shape + (n,))


def simulate_alias(rng, prob, alias, N, shift=1, machine=None):
    """One step's tables flat (row x at x*K), one index array and take()
    per table: about 1.4x faster than indexing prob[t, x, k] with three
    arrays.  prob, alias: (T, S, V, K), S table sets per position.  An
    outcome o codes the token x = o >> shift and its class c = o & (2^shift
    - 1), a rejection when c is odd.  machine None: one set (S = 1), every
    position the same law.  Otherwise machine = (sets, nxt, z0) of
    machine(): the trajectory's state z draws from set sets[z] and moves to
    nxt[z << shift | c] (the trajectories move in lock-step, one position
    per pass)."""
    T, S, V, K = prob.shape
    P2, A2 = prob.reshape(T, S * V * K), alias.reshape(T, S * V * K)
    x = rng.integers(0, V, N)
    rej = np.zeros(N, dtype=np.int64)
    mask = (1 << shift) - 1
    if machine is not None:
        sets, nxt, z0 = machine
        base = sets * (V * K)
        z = np.full(N, z0, dtype=np.int64)
    for t in range(T):
        u = rng.random(N) * K
        c = u.astype(np.int64)
        i = x * K + c
        if machine is not None:
            i += base.take(z)
        o = np.where(u - c < P2[t].take(i), c, A2[t].take(i))
        x = o >> shift
        rej += o & 1
        if machine is not None:
            z = nxt.take((z << shift) | (o & mask))
    return rej.mean()


def machine(gamma, k=1, shift=1, first=False):
    """The state of an iteration of draft length gamma with a bonus token:
    z = kk k + (a - 1), kk tokens drafted so far in the iteration (0..gamma),
    a drafts surviving (1..k; k = 1 without a tree).  The set of z: k + first
    at the bonus (kk = gamma), else a - 1, plus 1 after the first token when
    first (batch's first token has its own law).  An outcome of class c
    (odd: a rejection; even: the drafts agreeing with the token number
    c/2 + 1) moves to the next token of the iteration, or after a rejection
    or the bonus to a new iteration, kk = 0 and a = k."""
    Z, z0 = (gamma + 1) * k, k - 1
    sets = np.empty(Z, dtype=np.int64)
    nxt = np.empty(Z << shift, dtype=np.int64)
    for kk in range(gamma + 1):
        for a in range(1, k + 1):
            z = kk * k + a - 1
            sets[z] = k + first if kk == gamma else a - 1 + (first and kk > 0)
            for c in range(1 << shift):
                end = kk == gamma or c & 1
                nxt[(z << shift) | c] = z0 if end else min((kk + 1) * k + (c >> 1), Z - 1)
    return sets, nxt, z0


def token_weights(P, Q):
    """Token-level verification's one-draw law (Yin et al. 2024, Alg. 1):
    2V outcomes, (x, accepted) weight min(p, q), (y, rejected) [q-p]+."""
    T, V, _ = P.shape
    W = np.zeros((T, V, 2 * V))
    W[:, :, 0::2] = np.minimum(P, Q)
    W[:, :, 1::2] = np.maximum(Q - P, 0.0)
    return W


def bonus_weights(Q):
    """The bonus token from q, never a rejection, in the 2V layout."""
    W = np.zeros(Q.shape[:2] + (2 * Q.shape[2],))
    W[:, :, 0::2] = Q
    return W


def biased_tables(P, Q, eps):
    """Biased SD (Yin et al. 2024, Sec. 4, Theorem 4, residual opt), one
    categorical draw per position over 2V outcomes (x, accepted) and (y,
    rejected): at a drafting position min(p, q + eps) and R [q-p]+ / TV with
    R = sum (p - q - eps)+ the rejected mass (simdec's biased-alias kernel's
    weights); at the bonus position q."""
    T, V, _ = P.shape
    W = np.zeros((T, 2, V, 2 * V))
    R = np.maximum(P - Q - eps, 0.0).sum(axis=2, keepdims=True)
    D = np.maximum(Q - P, 0.0)
    tv = D.sum(axis=2, keepdims=True)
    W[:, 0, :, 0::2] = np.minimum(P, Q + eps)
    W[:, 0, :, 1::2] = np.where(tv > 0, R * D / np.where(tv > 0, tv, 1.0), 0.0)
    W[:, 1] = bonus_weights(Q)
    return alias_tables(W)


def batch_tables(P, Q, M):
    """Batch SD (Yin et al. 2024, Alg. 4, M drafts), one categorical draw
    per position, the weights of simdec's batch-alias kernel: set 0, the
    iteration's first token, (y, some first token accepted) weight
    (q - u)+ and (y, all M rejected) weight u, u = R_M q^{M+1} from
    u_1 = q, u_{m+1} = [u_m - (sum u_m) p]+ (recursive rejection sampling,
    the unnormalised residuals; src/sd_exact_batch.c); set 1, the chosen
    draft's later tokens, token-level verification; set 2 the bonus."""
    T, V, _ = P.shape
    u = Q.copy()
    for _ in range(M):
        u = np.maximum(u - u.sum(axis=2, keepdims=True) * P, 0.0)
    W = np.zeros((T, 3, V, 2 * V))
    W[:, 0, :, 0::2] = np.maximum(Q - u, 0.0)
    W[:, 0, :, 1::2] = u
    W[:, 1] = token_weights(P, Q)
    W[:, 2] = bonus_weights(Q)
    return alias_tables(W)


def binom_pmf(n, pr):
    """The Bin(n, pr) probabilities of 0..n, pr an array (elementwise)."""
    return [math.comb(n, j) * pr ** j * (1.0 - pr) ** (n - j) for j in range(n + 1)]


def kseq_rho(P, Q, a):
    """rho* of k-Seq (Sun et al. 2023, eq. 6) with a drafts for every row:
    the root in [1, a] of the non-increasing f(rho) = 1 - (1 - beta)^a -
    rho beta, beta(rho) = sum min(p, q/rho); rho = 1 when f(1) <= 0 (a = 1,
    p = q, disjoint supports).  Bisection to the last bit, keeping the
    upper end (f <= 0 there: the residual of eq. 5 is non-negative), as
    simdec's sd_kseq_solve keeps the upper end of Brent's bracket."""
    def f(rho):
        beta = np.minimum(P, Q / rho).sum(axis=2, keepdims=True)
        return 1.0 - (1.0 - beta) ** a - rho * beta
    lo, hi = np.ones(P.shape[:2] + (1,)), np.full(P.shape[:2] + (1,), float(a))
    hi = np.where(f(lo) <= 0.0, 1.0, hi)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        neg = f(mid) <= 0.0
        lo, hi = np.where(neg, lo, mid), np.where(neg, mid, hi)
    return hi


def tree_tables(P, Q, k, kseq):
    """A k-draft tree, the selection at each depth RRS (Sun et al. 2023,
    Alg. 3 and B.3; SpecInfer) or k-Seq (Sun et al. 2023, Alg. 2, eqs. 5-6),
    the weights of simdec's rrs-alias and spectr-alias kernels
    (sims/exact/sd_iter_laws.c).  With a drafts surviving, tried in turn:
      RRS:   against u_1 = q, u_{m+1} = [u_m - p]+ / r_m (r_m its mass); y
             accepted at round m has weight s_m min(p(y), u_m(y)), s_m =
             r_1..r_{m-1}, and then 1 + Bin(a - m, p(y)) drafts agree with y
             (the untried ones; a rejected one never equals y); all failing,
             y ~ u_{a+1} with weight s_{a+1}: a rejection;
      k-Seq: y accepted at round m has weight (1-beta)^{m-1} min(p, q/rho*)
             and 1 + Bin(m-1, pi(y)) + Bin(a-m, p(y)) drafts agree, pi the
             law of a rejected draft, (p - min(p, q/rho*)) / (1 - beta); all
             failing, y from the residual of eq. 5 with weight (1-beta)^a,
             Bin(a, pi(y)) rejected drafts agree: none is a rejection.
    Codes y << shift | c: c = 1 the rejection, c = 2 (agree - 1) the
    others.  Sets 0..k-1: a = 1..k; set k: the bonus from q."""
    T, V, _ = P.shape
    shift = max(1, (2 * k - 1).bit_length())
    S = 1 << shift
    W = np.zeros((T, k + 1, V, V << shift))

    def spread(a_set, mass, base, n1, p1, n2, p2):
        for j1, b1 in enumerate(binom_pmf(n1, p1)):
            for j2, b2 in enumerate(binom_pmf(n2, p2)):
                agree = base + j1 + j2
                c = 2 * (agree - 1) if agree else 1
                W[:, a_set, :, c::S] += mass * b1 * b2

    zero = np.zeros_like(P)
    for a in range(1, k + 1):
        if not kseq:
            w, sm = Q.copy(), np.ones((T, V, 1))
            for m in range(1, a + 1):
                spread(a - 1, sm * np.minimum(P, w), 1, 0, zero, a - m, P)
                d = np.maximum(w - P, 0.0)
                r = d.sum(axis=2, keepdims=True)
                w = np.where(r > 0, d / np.where(r > 0, r, 1.0), 0.0)
                sm = sm * r
            W[:, a - 1, :, 1::S] += sm * w
            continue
        rho = kseq_rho(P, Q, a)
        acc = np.minimum(P, Q / rho)
        beta = acc.sum(axis=2, keepdims=True)
        f = 1.0 - beta
        pi = np.where(f > 0, (P - acc) / np.where(f > 0, f, 1.0), 0.0)
        for m in range(1, a + 1):
            spread(a - 1, f ** (m - 1) * acc, 1, m - 1, pi, a - m, P)
        pacc = 1.0 - f ** a
        c = np.where(beta > 0, pacc / np.where(beta > 0, beta, 1.0), float(a))
        res = np.maximum(Q - acc * c, 0.0)
        mass = res.sum(axis=2, keepdims=True)
        r = np.where(mass > 0, res / np.where(mass > 0, mass, 1.0), Q)
        spread(a - 1, f ** a * r, 0, a, pi, 0, zero)
    W[:, k, :, 0::S] = Q
    return alias_tables(W), shift


def sprinter_tables(P, Q, tp, fp):
    """SPRINTER (Zhong et al. 2025, Alg. 1-2; no draft length, no bonus),
    one categorical draw per position over 4V outcomes, codes x*4 + c: c = 0
    the cheap verifier's yes, weight p eta(x) (eta = tp where p <= q, else
    fp); c = 1 the target rejects and y comes from the residual, weight
    (1 - fp) [q-p]+(y); c = 2 the target keeps x, (1 - eta(x)) min(p, q);
    c = 3 weight 0 (padding, so that the rejection is the low bit).  The
    weights of simdec's sprinter-alias kernel."""
    T, V, _ = P.shape
    eta = np.where(P <= Q, tp, fp)
    W = np.zeros((T, 1, V, 4 * V))
    W[:, 0, :, 0::4] = P * eta
    W[:, 0, :, 1::4] = (1.0 - fp) * np.maximum(Q - P, 0.0)
    W[:, 0, :, 2::4] = (1.0 - eta) * np.minimum(P, Q)
    return alias_tables(W)


def simulate_block(rng, P, Q, gamma, N):
    """Rows addressed by one flat index (row = t*V + a) and single entries
    by take(): about 1.25x faster than indexing with two or three arrays."""
    T, V, _ = P.shape
    cP = np.cumsum(P, axis=2).reshape(T * V, V)
    cQ = np.cumsum(Q, axis=2).reshape(T * V, V)
    Pr, Qr = P.reshape(T * V, V), Q.reshape(T * V, V)
    Pf, Qf = P.reshape(-1), Q.reshape(-1)
    n = np.ones(N, dtype=np.int64)           # next position (1-based)
    prev = rng.integers(0, V, N)
    rej = np.zeros(N)
    idx = np.arange(N)
    while True:
        act = idx[n <= T]
        if act.size == 0:
            break
        a_n, a_prev = n[act], prev[act]
        G = np.minimum(gamma, T - a_n + 1)
        A = act.size
        drafts = np.zeros((A, gamma), dtype=np.int64)
        pis = np.zeros((A, gamma + 1))
        pis[:, 0] = 1.0
        tau = np.zeros(A, dtype=np.int64)
        y = a_prev.copy()
        for i in range(1, gamma + 1):
            live = i <= G
            t = np.minimum(a_n + i - 2, T - 1)
            row = t * V + y
            u = rng.random(A)
            x = np.minimum((cP[row] <= u[:, None]).sum(axis=1), V - 1)
            f = row * V + x
            px, qx = Pf.take(f), Qf.take(f)
            pi = np.minimum(1.0, pis[:, i - 1] * qx / px)
            pis[:, i] = np.where(live, pi, 0.0)
            drafts[:, i - 1] = x
            row1 = np.minimum(t + 1, T - 1) * V + x
            m = np.maximum(pi[:, None] * Qr[row1] - Pr[row1], 0.0).sum(axis=1)
            last = i == G
            h = np.where(last, pi, m / np.maximum(m + 1.0 - pi, 1e-300))
            eta = rng.random(A)
            tau = np.where(live & (eta < h), i, tau)
            y = x
        full = tau == G
        # the token after the accepted prefix: bonus from q, or the residual
        ctx = np.where(tau > 0, drafts[np.arange(A), np.maximum(tau - 1, 0)], a_prev)
        row = np.minimum(a_n + tau - 1, T - 1) * V + ctx
        u = rng.random(A)
        ptau = pis[np.arange(A), tau]
        w = np.maximum(ptau[:, None] * Qr[row] - Pr[row], 0.0)
        cw = np.cumsum(w, axis=1)
        tot = cw[:, -1]
        r = np.minimum((cw <= (u * tot)[:, None]).sum(axis=1), V - 1)
        b = np.minimum((cQ[row] <= u[:, None]).sum(axis=1), V - 1)
        ytok = np.where(full | (tot <= 0), b, r)
        rej[act] += ~full
        emitted = tau + np.where(full & (a_n + G > T), 0, 1)
        last_tok = np.where(a_n + tau <= T, ytok, ctx)
        prev[act] = np.where(emitted > tau, last_tok, ctx)
        n[act] = a_n + emitted
    return rej.mean()


CHUNK = 8192  # trajectories per vectorised pass of the alias and block baselines


def chunked(f, rng, N, *args, **kw):
    """f over N trajectories in passes of CHUNK: the working arrays stay in
    the cache (about 1.4x for alias, 1.15x for block against one pass over
    all N, 2026-11-22); the mean over all trajectories."""
    return float(sum(f(rng, *args, min(CHUNK, N - s), **kw) * min(CHUNK, N - s)
                     for s in range(0, N, CHUNK)) / N)


def timed(name, V, T, gamma_field, reps, rng, N, f, *args, **kw):
    """Best of reps runs of chunked(f) over N trajectories: the lines "name
    V T [gamma] tokens_per_second mean_rejections" and "name-cpu ...", the
    same per second of the process's CPU time (numpy on one thread): robust
    to other processes sharing the cores.  gamma_field None: none."""
    best = best_cpu = 0.0
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        mean_rej = chunked(f, rng, N, *args, **kw)
        best = max(best, N * T / (time.perf_counter() - t0))
        best_cpu = max(best_cpu, N * T / max(time.process_time() - c0, 1e-9))
    g = "" if gamma_field is None else f" {gamma_field}"
    print(f"{name} {V} {T}{g} {best:.6g} {mean_rej:.6g}", flush=True)
    print(f"{name}-cpu {V} {T}{g} {best_cpu:.6g} {mean_rej:.6g}", flush=True)


# The defaults of simdec's verifiers (sd_params_defaults, which bench.c
# runs): biased eps = 0 with the opt residual; sprinter tp = 0.5, fp = 0;
# batch M = 2 drafts; rrs and spectr (k-Seq) k = 2 drafts.
BIASED_EPS, SPRINTER_TP, SPRINTER_FP, BATCH_M, RRS_K, SPECTR_K = 0.0, 0.5, 0.0, 2, 2, 2


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
        if V > 7:
            continue
        # the alias, block and other verifiers' baselines at the bench's V=7
        timed("alias", V, T, None, reps, rng, N, simulate_alias,
              *alias_tables(token_weights(P, Q)[:, None]))
        gamma = 4
        timed("block", V, T, gamma, reps, rng, N // 4, simulate_block, P, Q, gamma)
        timed("biased", V, T, gamma, reps, rng, N, simulate_alias,
              *biased_tables(P, Q, BIASED_EPS), machine=machine(gamma))
        timed("batch", V, T, gamma, reps, rng, N, simulate_alias,
              *batch_tables(P, Q, BATCH_M), machine=machine(gamma, first=True))
        for name, k, kseq in (("rrs", RRS_K, False), ("spectr", SPECTR_K, True)):
            (prob, alias), shift = tree_tables(P, Q, k, kseq)
            timed(name, V, T, gamma, reps, rng, N, simulate_alias, prob, alias, shift=shift,
                  machine=machine(gamma, k, shift))
        # sprinter has no draft length (gamma field 0): it drafts to the horizon
        timed("sprinter", V, T, 0, reps, rng, N, simulate_alias,
              *sprinter_tables(P, Q, SPRINTER_TP, SPRINTER_FP), shift=2)


if __name__ == "__main__":
    main()
