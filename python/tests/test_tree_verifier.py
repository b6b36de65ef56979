"""A token-tree verifier written in Python: it declares `tree` and `draw`
like the built-in tree verifiers, so `lp tree-valid --compare a,b,c` hands
it the LP's shape in the same solve as the built-in ones, `run`/`check`
take --tree/--draw for it, and `eval accept-length` measures it."""
import math

import numpy as np
import pytest

import simdec


def py_tree_rrs(it):
    """Recursive rejection sampling on a tree of i.i.d. drafts (SpecInfer,
    Miao et al. 2024), children drafted lazily along the accepted path
    (the others are never looked at, so the law is the same): at each
    level the b_l children are tested in turn against the residual, the
    residual renormalised after each rejection."""
    shape, d = it.params["tree"], it.draft_len
    assert it.params["draw"] == "iid"
    tokens, prev, t = [], it.prev, it.n
    for level in range(d):
        p, r = it.p(t, prev), np.array(it.q(t, prev), dtype=float)
        child = None
        for _ in range(shape[level]):
            x = it.sample(p, 1.0)
            if it.uniform() * p[x] < r[x]:  # accept with probability min(1, r(x)/p(x))
                child = x
                break
            r = np.maximum(r - p, 0.0)
            r /= r.sum()
        if child is None:
            tokens.append(it.sample(r))
            return tokens, level, 1
        tokens.append(child)
        prev, t = child, t + 1
    if t <= it.T:
        tokens.append(it.sample(it.q(t, prev), 1.0))
    return tokens, d, 0


def own_shape(it):
    """The friction of old: a tree verifier whose shape is its own count
    parameters (b1, b2) instead of the declared `tree`."""
    return py_tree_rrs_with(it, (int(it.params["b1"]), int(it.params["b2"])))


def py_tree_rrs_with(it, shape):
    it.params = dict(it.params, tree=shape, draw="iid")
    return py_tree_rrs(it)


def test_python_tree_verifier_declares_tree_and_draw():
    v = simdec.verifier("py-tree-rrs", py_tree_rrs, params=[{"name": "tree", "default": "2,1"}, "draw"])
    r = simdec.run(None, v, trials=200, seed=1, T=6, V=4)
    assert r["params"]["tree"] == [2, 1] and r["params"]["draw"] == "iid", r["params"]
    r = simdec.run(None, v, trials=200, seed=1, T=6, V=4, tree="3,1,1")
    assert r["params"]["tree"] == [3, 1, 1], r["params"]
    # lossless: check's chi-square on the first tokens (alpha 0.001 by default)
    c = simdec.check(None, v, trials=20000, seed=2, V=4, T=6)
    assert c["unbiased"] is True, c


def test_lp_compares_a_python_tree_verifier_in_one_solve():
    # One solve of tree-valid on shape 2,1 at a context of the default chain;
    # the built-in tree-rrs, traversal and the Python tree RRS measured with
    # the same trials and seed.  Each is a valid verifier, so none exceeds the
    # optimum by more than 4 se (false alarm 3e-5 each); the Python RRS and
    # the built-in one have one law: their means agree within 4 se of the
    # difference (the two runs use the streams differently, so they are
    # treated as independent).
    v = simdec.verifier("py-tree-rrs", py_tree_rrs, params=[{"name": "tree", "default": "3,3"}, "draw"])
    res = simdec.lp("tree-valid", tree="2,1", V=4, step=2, state=1, compare=["tree-rrs", "traversal", v],
                    trials=20000, seed=3)
    cmp = res["comparisons"]
    assert [c["verifier"] for c in cmp] == ["tree-rrs", "traversal", "py-tree-rrs"]
    assert cmp[2]["params"]["tree"] == [2, 1], cmp[2]  # the LP's shape, not its default 3,3
    assert cmp[2]["reads_tree"] is True
    for c in cmp:
        assert c["gap"] > -4 * c["stderr"], c
    a, b = cmp[0], cmp[2]
    assert abs(a["mean"] - b["mean"]) < 4 * math.hypot(a["stderr"], b["stderr"]), (a, b)


def test_lp_refuses_a_verifier_with_its_own_shape():
    v = simdec.verifier("py-own-shape", own_shape,
                        params=[{"name": "b1", "kind": "count", "default": 2, "min": 1, "max": 8},
                                {"name": "b2", "kind": "count", "default": 2, "min": 1, "max": 8}])
    with pytest.raises(simdec.SimdecError) as e:
        simdec.lp("tree-valid", tree="2", V=4, compare=["tree-rrs", v], trials=100)
    assert e.value.status == 64
    assert "py-own-shape does not read the tree shape" in str(e.value)


def test_eval_accept_length_of_a_python_tree_verifier():
    # Monte-Carlo with its standard error (a Python step has no iteration
    # law), against the exact enumeration of the built-in tree-rrs on the
    # same tree, rule and context: one law, within 4 se.
    v = simdec.verifier("py-tree-rrs", py_tree_rrs, params=[{"name": "tree", "default": "2,1"}, "draw"])
    got = simdec.eval("accept-length", algo=v, tree="2,1", V=4, step=2, state=1, trials=20000, seed=5)
    assert got["method"] == "Monte-Carlo" and got["exact"] is None, got
    assert got["params"]["tree"] == [2, 1] and got["draft_length"] == 2
    exact = simdec.eval("accept-length", algo="tree-rrs", tree="2,1", V=4, step=2, state=1)["expected_accepted"]
    mc = got["mc"]
    assert abs(mc["mean"] - exact) < 4 * mc["stderr"], (mc, exact)
    # gamma-reading Python verifiers: --gamma was "required" and then refused
    with pytest.raises(simdec.SimdecError) as e:
        simdec.eval("accept-length", algo=v, V=4, gamma=2)
    assert e.value.status == 64
