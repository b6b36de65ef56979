"""A token-tree verifier written in Python as a tree rule (tree_outcome:
one drafted tree -> (pi, law)): simdec's exact enumerator sums the rule's
outcome over every drafted tree, so `eval accept-length` and `check
--exact` give exact values for it.  The rule of examples/tree_rule.py is
top-down recursive rejection sampling written from the contract alone: its
exact values equal the built-in tree-rrs (iid), tree-rrs-wor (wor) and
tree-topk (topk) to 1e-12; its broken control (the residual not
renormalised) is flagged."""
import os
import sys

import numpy as np
import pytest

import simdec

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import tree_rule  # noqa: E402  (examples/tree_rule.py)

BUILTIN = {"iid": "tree-rrs", "wor": "tree-rrs-wor", "topk": "tree-topk"}


def zero_model(V=4, T=6, seed=4):
    """Rows with exact zeros: the draft never proposes token V-1, the target
    never wants token 0 (then each row renormalised)."""
    rng = np.random.default_rng(seed)
    draft, target = rng.dirichlet(np.ones(V), size=(T, V)), rng.dirichlet(np.ones(V), size=(T, V))
    draft[:, :, V - 1] = 0.0
    target[:, :, 0] = 0.0
    draft /= draft.sum(axis=2, keepdims=True)
    target /= target.sum(axis=2, keepdims=True)
    return simdec.Model(np.full(V, 1.0 / V), draft, target)


@pytest.mark.parametrize("model", [None, "zeros"])
def test_exact_values_equal_the_builtin_verifiers(model):
    v = tree_rule.register()
    m = zero_model() if model == "zeros" else None
    kw = {} if m is not None else {"V": 4}
    n = 0
    for draw, shapes in (("iid", ("2", "2,1", "1,2", "3,1")), ("wor", ("4", "2,2", "3,1")), ("topk", ("5", "2,1"))):
        for shape in shapes:
            for state in (0, 3):
                got = simdec.eval("accept-length", m, algo=v, tree=shape, draw=draw, step=2, state=state,
                                  trials=2000, seed=1, **kw)
                assert got["method"].startswith("enumeration"), got["method"]
                want = simdec.eval("accept-length", m, algo=BUILTIN[draw], tree=shape, draw=draw, step=2,
                                   state=state, **kw)["expected_accepted"]
                assert abs(got["exact"] - want) <= 1e-12, (draw, shape, state, got["exact"], want)
                n += 1
    assert n == 18


def test_check_exact_passes_the_rule_and_flags_the_broken_one():
    v = tree_rule.register()
    for shape, draw in (("2,1", "iid"), ("2,2", "wor"), ("3", "topk")):
        c = simdec.check(None, v, exact=True, tree=shape, draw=draw, V=4, T=6, trials=20000, seed=2)
        assert c["exact_tv"] <= 1e-12, (shape, draw, c["exact_tv"])
    b = tree_rule.register("py-rule-broken-tree", raw=True, control=True)
    c = simdec.check(None, b, exact=True, tree="2,1", V=4, T=6, trials=20000, seed=2)
    assert c["exact_tv"] > 0.01 and c["unbiased"] is False, c["exact_tv"]


def test_monte_carlo_of_the_rule_meets_its_exact_value():
    # run samples the rule's outcome on drafted trees; its target calls
    # against the exact enumeration over the whole generation, within 4 se
    # (20000 trials, seed 7; false alarm about 6e-5).
    v = tree_rule.register()
    r = simdec.run(zero_model(T=5), v, trials=20000, seed=7, tree="2,1")
    tc = r["target_calls"]
    assert r["exact_target_calls"] is not None, r["exact_not_computed"]
    assert abs(tc["mean"] - r["exact_target_calls"]) < 4 * tc["stderr"], (tc, r["exact_target_calls"])


def test_a_rule_that_raises_or_breaks_the_contract_fails():
    def raises(tree):
        raise ZeroDivisionError("in the rule")

    v = simdec.verifier("py-rule-raises", params=["tree", "draw"], tree_outcome=raises)
    with pytest.raises(ZeroDivisionError):
        simdec.eval("accept-length", algo=v, tree="2", V=4, trials=100)

    def half(tree):
        pi = np.zeros(tree.nodes)
        pi[0] = 0.5
        law = np.zeros((tree.nodes, tree.V))
        law[0] = tree.q(0)
        return pi, law

    v = simdec.verifier("py-rule-half", params=["tree", "draw"], tree_outcome=half)
    with pytest.raises(simdec.SimdecError) as e:
        simdec.check(None, v, exact=True, tree="2", V=4, T=4, trials=100)
    assert e.value.status == 70 and "pi sums to 0.5" in str(e.value), str(e.value)

    def wrong_shape(tree):
        return [1.0], [[1.0]]

    v = simdec.verifier("py-rule-shape", params=["tree", "draw"], tree_outcome=wrong_shape)
    with pytest.raises(ValueError) as e:
        simdec.eval("accept-length", algo=v, tree="2", V=4, trials=100)
    assert "expected (3,) and (3, 4)" in str(e.value)

    with pytest.raises(ValueError) as e:
        simdec.verifier("py-rule-no-tree", params=[], tree_outcome=half)
    assert "needs the parameters tree and draw" in str(e.value)
    with pytest.raises(simdec.SimdecError) as e:  # nothing was registered under the name
        simdec.run(None, "py-rule-no-tree", trials=10)
    assert e.value.status == 64


def test_a_subclass_may_define_the_rule_as_a_method():
    class Rrs(simdec.Verifier):
        def tree_outcome(self, tree):
            return tree_rule.tree_rrs_outcome(tree)

    v = Rrs("py-rule-method", params=["tree", "draw"])
    got = simdec.eval("accept-length", algo=v, tree="2,1", V=4, trials=1000)
    want = simdec.eval("accept-length", algo="tree-rrs", tree="2,1", V=4)["expected_accepted"]
    assert abs(got["exact"] - want) <= 1e-12
