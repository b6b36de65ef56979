"""node_rule.py — a token-tree verifier written in Python at one node
(docs/python.md): recursive rejection sampling at each node (SpecInfer,
Miao et al. 2024; without replacement, Jeon et al. 2024), the rule of examples/node_rule.c.  The rule says what
happens at one node — the probability of descending into each drafted
child and the law of the residual token when it stops — and simdec composes
it from the root down, drafts the trees and enumerates every drafted tree
for exact values (`eval accept-length`, `check --exact`).

    import simdec, node_rule
    v = node_rule.register()
    simdec.eval("accept-length", algo=v, tree="2,1", V=4)   # method: enumeration (exact)
    simdec.check(None, v, exact=True, tree="2,2", draw="wor", V=4)

register(stale=True) is the broken control: every child is tested against
q (the residual is not updated after a rejected child), which check flags.
"""
import numpy as np

import simdec


def _normalised(w, q):
    s = w.sum()
    return w / s if s > 0 else np.array(q, dtype=float)


def rrs_node(node, stale=False):
    """(go, residual) of recursive rejection sampling at one node."""
    q, p, V = node.q, node.p, node.V
    R, pw, rem = q.copy(), p.copy(), 1.0
    go = np.zeros(len(node.children))
    for j, x in enumerate(node.children):
        if node.draw == "topk":
            Dj = np.zeros(V)
            Dj[x] = 1.0
        else:
            Dj = pw.copy() if node.draw == "wor" else p
        a = R[x] / Dj[x] if Dj[x] > R[x] else 1.0
        go[j] = rem * a
        rem *= 1.0 - a
        if not stale:
            R = np.maximum(R - Dj, 0.0)
            mass = R.sum()
            if mass > 0.0:
                R /= mass
            else:  # R = D_j: the rejection had probability 0
                go[j] += rem
                rem = 0.0
                R = q.copy()
        if node.draw == "wor":  # the next sibling's draft law
            pw[x] = 0.0
            pw = _normalised(pw, pw)
    if stale:  # the single-draft residual [q - p]+
        R = np.maximum(q - p, 0.0)
    return go, _normalised(R, q)


def register(name="py-node-tree-rrs", stale=False, control=False, tree="2,1"):
    return simdec.verifier(name, params=[{"name": "tree", "default": tree}, "draw"], control=control,
                           node_outcome=lambda node: rrs_node(node, stale))
