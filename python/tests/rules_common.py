"""What the suites of Python tree rules (test_tree_rule.py) and node rules
(test_node_rule.py) share: a model with exact zeros and the three checks of
a rule implementing recursive rejection sampling against the built-in
top-down verifiers tree-rrs (iid), tree-rrs-wor (wor) and tree-topk (topk)."""

import numpy as np

import simdec

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


def exact_values_equal_the_builtins(v, model, trials):
    """eval accept-length of v is exact by enumeration and equals the
    built-in verifier's to 1e-12 on 18 (shape, drafting rule, context)
    cases; model None is the CLI's default chain at V = 4."""
    m = zero_model() if model == "zeros" else None
    kw = {} if m is not None else {"V": 4}
    n = 0
    for draw, shapes in (("iid", ("2", "2,1", "1,2", "3,1")), ("wor", ("4", "2,2", "3,1")), ("topk", ("5", "2,1"))):
        for shape in shapes:
            for state in (0, 3):
                got = simdec.eval("accept-length", m, algo=v, tree=shape, draw=draw, step=2, state=state,
                                  trials=trials, seed=1, **kw)
                assert got["method"].startswith("enumeration"), got["method"]
                want = simdec.eval("accept-length", m, algo=BUILTIN[draw], tree=shape, draw=draw, step=2,
                                   state=state, **kw)["expected_accepted"]
                assert abs(got["exact"] - want) <= 1e-12, (draw, shape, state, got["exact"], want)
                n += 1
    assert n == 18


def check_exact_passes_and_flags(v, broken, trials):
    """check --exact: v's exact TV is rounding on each drafting rule; the
    control `broken` is over 0.01 and flagged."""
    for shape, draw in (("2,1", "iid"), ("2,2", "wor"), ("3", "topk")):
        c = simdec.check(None, v, exact=True, tree=shape, draw=draw, V=4, T=6, trials=trials, seed=2)
        assert c["exact_tv"] <= 1e-12, (shape, draw, c["exact_tv"])
    c = simdec.check(None, broken, exact=True, tree="2,1", V=4, T=6, trials=20000, seed=2)
    assert c["exact_tv"] > 0.01 and c["unbiased"] is False, c["exact_tv"]


def monte_carlo_meets_exact(v, trials):
    """run samples v's outcome on drafted trees; its target calls against
    the exact enumeration over the whole generation, within 4 se (seed 7;
    a false alarm about 6e-5)."""
    r = simdec.run(zero_model(T=5), v, trials=trials, seed=7, tree="2,1")
    tc = r["target_calls"]
    assert r["exact_target_calls"] is not None, r["exact_not_computed"]
    assert abs(tc["mean"] - r["exact_target_calls"]) < 4 * tc["stderr"], (tc, r["exact_target_calls"])
