"""A token-tree verifier written in Python at one node (node_outcome: one
inner node -> (go, residual)): simdec composes it from the root down into a
tree rule, so its exact enumerator, `eval accept-length` and `check --exact`
give exact values for it.  The rule of examples/node_rule.py is recursive
rejection sampling at each node: its exact values equal the built-in
tree-rrs (iid), tree-rrs-wor (wor) and tree-topk (topk) to 1e-12; its
broken control (the residual not updated after a rejected child) is
flagged; a Python rule's exact values are refused past the limit that
counts its calls' cost, pointing to Monte-Carlo."""
import os
import sys

import numpy as np
import pytest

import simdec

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import node_rule  # noqa: E402  (examples/node_rule.py)
import rules_common  # noqa: E402

@pytest.mark.parametrize("model", [None, "zeros"])
def test_exact_values_equal_the_builtin_verifiers(model):
    rules_common.exact_values_equal_the_builtins(node_rule.register(), model, trials=200)


def test_check_exact_passes_the_rule_and_flags_the_broken_one():
    rules_common.check_exact_passes_and_flags(node_rule.register(), node_rule.register("py-node-broken-tree", stale=True, control=True), trials=2000)


def test_monte_carlo_of_the_rule_meets_its_exact_value():
    rules_common.monte_carlo_meets_exact(node_rule.register(), trials=5000)


def test_exact_values_past_the_python_limit_are_refused_for_monte_carlo():
    # 2,2 at V = 5: 5^6 = 15625 drafted trees, 3 Python calls each at a cost
    # of 200 trees a call: 9.4e6 > 4e6.  eval gives Monte-Carlo and says why;
    # check --exact reports the refusal.
    v = node_rule.register()
    got = simdec.eval("accept-length", algo=v, tree="2,2", V=5, trials=500, seed=1)
    assert got["method"] == "Monte-Carlo" and got["exact"] is None
    why = got["exact_not_computed"]
    assert "would call its rule 4.69e+04 times" in why and "Monte-Carlo" in why, why
    assert got["mc"]["stderr"] > 0
    c = simdec.check(None, v, exact=True, tree="2,2", V=6, T=4, trials=500, seed=2)
    assert c["exact_tv"] is None and "Monte-Carlo" in c["exact_error"], c["exact_error"]


def test_a_node_rule_that_raises_or_breaks_the_contract_fails():
    def raises(node):
        raise ZeroDivisionError("in the rule")

    v = simdec.verifier("py-node-raises", params=["tree", "draw"], node_outcome=raises)
    with pytest.raises(ZeroDivisionError):
        simdec.eval("accept-length", algo=v, tree="2", V=4, trials=100)

    def too_much(node):
        return np.full(len(node.children), 0.75), node.q

    v = simdec.verifier("py-node-too-much", params=["tree", "draw"], node_outcome=too_much)
    with pytest.raises(simdec.SimdecError) as e:
        simdec.check(None, v, exact=True, tree="2", V=4, T=4, trials=100)
    assert e.value.status == 70 and "go sums to 1.5" in str(e.value), str(e.value)

    def wrong_shape(node):
        return [1.0], [1.0]

    v = simdec.verifier("py-node-shape", params=["tree", "draw"], node_outcome=wrong_shape)
    with pytest.raises(ValueError) as e:
        simdec.eval("accept-length", algo=v, tree="2", V=4, trials=100)
    assert "expected (2,) and (4,)" in str(e.value)

    with pytest.raises(ValueError) as e:
        simdec.verifier("py-node-both", params=["tree", "draw"], node_outcome=too_much,
                        tree_outcome=lambda tree: None)
    assert "not both" in str(e.value)


def test_the_node_is_the_one_drafted():
    # the rows given are q and p at the node's context, the path ends with
    # the node's token, the children are drafted tokens: a rule that stops
    # at once with q (never descends) has accepted length 0
    seen = []

    def stop(node):
        last = node.path[-1]
        assert len(node.path) == node.depth + 1 and node.t >= 1 + node.depth
        assert all(0 <= x < node.V for x in node.children) and len(node.children) == 2
        seen.append((node.depth, last))
        return np.zeros(len(node.children)), node.q

    v = simdec.verifier("py-node-stop", params=["tree", "draw"], node_outcome=stop)
    got = simdec.eval("accept-length", algo=v, tree="2,2", V=4, step=2, state=3, trials=100)
    assert got["exact"] == 0.0
    assert seen and all(d == 0 and x == 3 for d, x in seen), seen[:5]
