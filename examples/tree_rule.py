"""tree_rule.py — a token-tree verifier written in Python as a tree rule
(docs/python.md): recursive rejection sampling from the root down
(SpecInfer, Miao et al. 2024; without replacement, Jeon et al. 2024), the
rule of examples/tree_rule.c.  simdec drafts the trees and calls the rule
on each; its exact enumerator sums the rule's outcome over every drafted
tree, so `eval accept-length` and `check --exact` give exact values.

    import simdec, tree_rule
    v = tree_rule.register()
    simdec.eval("accept-length", algo=v, tree="2,1", V=4)   # method: enumeration (exact)
    simdec.check(None, v, exact=True, tree="2,2", draw="wor", V=4)
"""
import numpy as np

import simdec


def _normalised(w, q):
    s = w.sum()
    return w / s if s > 0 else np.array(q, dtype=float)


def tree_rrs_outcome(tree, raw=False):
    """(pi, law) of top-down recursive rejection sampling on one drafted
    tree; raw: the residual left unnormalised before the next sibling's test
    (a broken control)."""
    n, V = tree.nodes, tree.V
    pi, law = np.zeros(n), np.zeros((n, V))
    reach = np.zeros(n)
    reach[0] = 1.0
    for v in range(n):
        if tree.tok[v] is None:
            continue
        kids = tree.children(v)
        if not kids:  # a leaf: the bonus token from q (none past the horizon)
            pi[v] = reach[v]
            if tree.q(v) is not None:
                law[v] = tree.q(v)
            continue
        q, p = np.array(tree.q(v), dtype=float), np.array(tree.p(v), dtype=float)
        R, pw, rem = q.copy(), p.copy(), reach[v]
        for u in kids:
            x = tree.tok[u]
            if x is None:
                break
            if tree.draw == "topk":
                Dj = np.zeros(V)
                Dj[x] = 1.0
            else:
                Dj = pw.copy() if tree.draw == "wor" else p
            a = R[x] / Dj[x] if Dj[x] > R[x] else 1.0
            reach[u] = rem * a
            rem *= 1.0 - a
            R = np.maximum(R - Dj, 0.0)
            mass = R.sum()
            if mass <= 0.0:  # R = D_j: the rejection had probability 0
                reach[u] += rem
                rem = 0.0
                R = q.copy()
            elif not raw:
                R /= mass
            if tree.draw == "wor":  # the next sibling's draft law
                pw[x] = 0.0
                pw = _normalised(pw, pw)
        pi[v] = rem
        law[v] = _normalised(R, q)
    return pi, law


def register(name="py-rule-tree-rrs", raw=False, control=False):
    return simdec.verifier(name, params=[{"name": "tree", "default": "2,1"}, "draw"], control=control,
                           tree_outcome=lambda tree: tree_rrs_outcome(tree, raw))
