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
import rules_common  # noqa: E402

@pytest.mark.parametrize("model", [None, "zeros"])
def test_exact_values_equal_the_builtin_verifiers(model):
    rules_common.exact_values_equal_the_builtins(tree_rule.register(), model, trials=2000)


def test_check_exact_passes_the_rule_and_flags_the_broken_one():
    rules_common.check_exact_passes_and_flags(tree_rule.register(), tree_rule.register("py-rule-broken-tree", raw=True, control=True), trials=20000)


def test_monte_carlo_of_the_rule_meets_its_exact_value():
    rules_common.monte_carlo_meets_exact(tree_rule.register(), trials=20000)


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
