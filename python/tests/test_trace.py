"""simdec.trace on numpy arrays: the same dictionaries as `simdec trace
--json` on the files `simdec gen --trace` writes, agreement with the exact
value of `eval generation`, refusals with the command's exit status, and
Model(..., tol=) for float32 rows."""
import json
import subprocess

import numpy as np
import pytest

import simdec
from conftest import BIN, ROOT, strip_timing


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    subprocess.run([BIN, "gen", "--V", "5", "--T", "8", "--model-seed", "3", "--trace", "2000", "--seed", "2",
                    "-o", str(d)], check=True, cwd=ROOT)
    return d, {k: np.load(d / (k + ".npy")) for k in ("tokens", "draft", "target", "ratios")}


def _cli(d, *args):
    out = subprocess.run([BIN, "trace", "--tokens", str(d / "tokens.npy"), "--draft", str(d / "draft.npy"),
                          "--target", str(d / "target.npy"), *args, "--json"], check=True, cwd=ROOT,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def _without_inputs(v):
    if isinstance(v, list):
        return [_without_inputs(x) for x in v]
    return {k: x for k, x in v.items() if k != "inputs"}


def test_arrays_give_the_command_lines_numbers(traces):
    d, a = traces
    cli = _cli(d, "--algo", "token,rrs", "--gamma", "1..2", "--k", "2", "--c", "0.1", "--schedule")
    py = simdec.trace(a["tokens"], draft=a["draft"], target=a["target"], algo="token,rrs", gamma="1..2", k=2,
                      c=0.1, schedule=True)
    assert _without_inputs(strip_timing(cli)) == _without_inputs(strip_timing(py))
    assert py[0]["inputs"]["tokens"]["path"] is None and py[0]["inputs"]["draft"]["dtype"] == "float64"


def test_agrees_with_eval_generation(traces):
    d, a = traces
    for algo, opts in (("block", {"gamma": 3}), ("spectr", {"k": 2, "gamma": 2}), ("tree-rrs-wor", {"tree": "2,2"})):
        r = simdec.trace(a["tokens"], draft=a["draft"], target=a["target"], algo=algo, **opts)
        args = [BIN, "eval", "generation", "--V", "5", "--T", "8", "--model-seed", "3", "--algo", algo, "--json"]
        for k, v in opts.items():
            args += ["--" + k, str(v)]
        e = json.loads(subprocess.run(args, check=True, cwd=ROOT, capture_output=True, text=True).stdout)
        # 4 standard errors: a false alarm below 1e-4 per comparison
        assert abs(r["target_calls"]["mean"] - e["target_calls"]) < 4 * r["target_calls"]["stderr"], algo


def test_estimated_law_takes_the_seed(traces):
    # tree-rrs-wor's Rao-Blackwellised law (--estimate): the command line's
    # numbers at the same seed, another seed other bits, the method and seed echoed
    d, a = traces
    cli = _cli(d, "--algo", "tree-rrs-wor", "--tree", "4", "--estimate", "--seed", "7")
    py = simdec.trace(a["tokens"], draft=a["draft"], target=a["target"], algo="tree-rrs-wor", tree="4",
                      estimate=True, seed=7)
    assert _without_inputs(strip_timing(cli)) == _without_inputs(strip_timing(py))
    assert py["method"].startswith("rao-blackwellised") and py["seed"] == 7 and py["laws_estimated"] > 0
    other = simdec.trace(a["tokens"], draft=a["draft"], target=a["target"], algo="tree-rrs-wor", tree="4",
                         estimate=True, seed=8)
    assert other["target_calls"]["mean"] != py["target_calls"]["mean"]
    exact = simdec.trace(a["tokens"], draft=a["draft"], target=a["target"], algo="tree-rrs-wor", tree="4")
    assert exact["method"].startswith("exact") and exact["laws_estimated"] == 0


def test_ratios_and_float32_rows(traces):
    d, a = traces
    r = simdec.trace(a["tokens"], ratios=a["ratios"], algo="block", gamma=2)
    f = simdec.trace(a["tokens"], draft=a["draft"].astype(np.float32), target=a["target"].astype(np.float32),
                     algo="block", gamma=2)
    assert abs(r["target_calls"]["mean"] - f["target_calls"]["mean"]) < 1e-6
    assert 0 < f["max_row_deviation"] < 1e-6 and f["row_tolerance"] == 1e-3


def test_refusals_carry_the_exit_status(traces):
    d, a = traces
    with pytest.raises(simdec.SimdecError) as e:
        simdec.trace(a["tokens"], ratios=a["ratios"], algo="rrs", k=2)
    assert e.value.status == 64 and "--draft and --target" in str(e.value)
    bad = a["draft"].copy()
    bad[3, 2, 1] = -0.5
    with pytest.raises(simdec.SimdecError) as e:
        simdec.trace(a["tokens"], draft=bad, target=a["target"], algo="token")
    assert e.value.status == 65 and "sequence 3, position 3, token 1" in str(e.value)
    with pytest.raises(simdec.SimdecError) as e:
        simdec.trace(a["tokens"].astype(float), ratios=a["ratios"], algo="token")
    assert e.value.status == 65
    with pytest.raises(simdec.SimdecError) as e:
        simdec.trace(a["tokens"], ratios=a["ratios"][:, :4], algo="token")
    assert e.value.status == 65 and "expected (2000, 8)" in str(e.value)


def test_model_tol_admits_float32_rows():
    m = simdec.generate(V=5, T=4, model_seed=2)
    d, t = m.draft.astype(np.float32), m.target.astype(np.float32)
    with pytest.raises(simdec.SimdecError) as e:
        simdec.Model(m.init, d, t)
    assert e.value.status == 65 and "tol=" in str(e.value) and "--tol" not in str(e.value)
    f = simdec.Model(m.init, d, t, tol=1e-5)
    assert 0 < f.max_row_deviation < 1e-6
    assert np.allclose(f.draft, m.draft, atol=1e-6)
    r = simdec.eval("generation", f, algo="block", gamma=2)
    assert r["target_calls"] > 0
