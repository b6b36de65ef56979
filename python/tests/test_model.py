"""Models from Python: load, generate and arrays round-trip exactly through
simdec's own reader and writer, and bad arrays are refused as a bad model
file is."""
import os
import subprocess

import numpy as np
import pytest

import simdec
from conftest import BIN, ROOT


def test_generate_equals_simdec_gen(tmp_path):
    path = tmp_path / "gen.json"
    subprocess.run([BIN, "gen", "--V", "5", "--T", "8", "--model-seed", "3", "--alpha", "0.5", "--mix", "0.3",
                    "-o", str(path)], check=True, cwd=ROOT)
    m = simdec.generate(V=5, T=8, model_seed=3, alpha=0.5, mix=0.3)
    f = simdec.load(path)
    assert (m.V, m.T) == (5, 8) and m.draft.shape == (8, 5, 5) and m.init.shape == (5,)
    # The file is written with 17 significant digits: the reload is exact.
    for a, b in ((m.init, f.init), (m.draft, f.draft), (m.target, f.target)):
        assert np.array_equal(a, b)


def test_arrays_round_trip(tmp_path):
    m = simdec.generate(V=4, T=6, model_seed=1)
    a = simdec.Model(m.init, m.draft, m.target)
    a.save(tmp_path / "a.json")
    b = simdec.load(tmp_path / "a.json")
    assert np.array_equal(a.draft, b.draft) and np.array_equal(a.target, b.target)
    assert np.array_equal(a.init, b.init) and b.T == 6


def test_homogeneous_arrays(tmp_path):
    p = np.array([[0.5, 0.5], [0.2, 0.8]])
    q = np.array([[0.9, 0.1], [0.5, 0.5]])
    with pytest.raises(simdec.SimdecError) as e:
        simdec.Model([0.5, 0.5], p, q)  # [V][V] at every step: the horizon is needed
    assert e.value.status == 64
    m = simdec.Model([0.5, 0.5], p, q, T=3)
    assert m.draft.shape == (2, 2) and m.T == 3
    m.save(tmp_path / "h.json")
    r = simdec.load(tmp_path / "h.json")
    assert r.T == 3 and np.array_equal(r.draft, p)


def test_float32_rows_refused_with_the_file_message():
    # A row summing to 0.4 is refused as in a model file (docs/errors.md),
    # with the field, step and row named.
    m = simdec.generate(V=3, T=2, model_seed=1)
    target = m.target.copy()
    target[0, 0] = [0.2, 0.1, 0.1]
    with pytest.raises(simdec.SimdecError) as e:
        simdec.Model(m.init, m.draft, target)
    assert e.value.status == 65
    assert e.value.message.startswith("model: target")
    assert "sums to 0.4" in e.value.message


def test_load_errors_are_the_cli_errors():
    with pytest.raises(simdec.SimdecError) as e:
        simdec.load(os.path.join(ROOT, "tests/hostile/truncated.json"))
    assert e.value.status == 65
    assert e.value.message.endswith("']' expected near end of file")
    with pytest.raises(simdec.SimdecError) as e:
        simdec.load(os.path.join(ROOT, "tests/hostile/no-such-file.json"))
    assert e.value.status == 66


def test_generate_refuses_what_the_command_line_refuses():
    """generate(V=7.5) made the V = 7 chain and generate(model_seed=2**32) a
    chain whose options (--model-seed 4294967296) every command refused:
    a wrong or unusable model, silently."""
    for kw, text in ((dict(V=7.5), "V: expected a whole number from 1 to 1048576, got 7.5"),
                     (dict(T=0), "T: expected a whole number from 1 to 16777216, got 0"),
                     (dict(model_seed=-1), "model_seed: expected a whole number from 0 to 4294967295, got -1"),
                     (dict(model_seed=2**32), "model_seed: expected a whole number from 0 to 4294967295"),
                     (dict(V="7"), "V: expected a whole number")):
        with pytest.raises(simdec.SimdecError) as e:
            simdec.generate(**kw)
        assert e.value.status == 64 and e.value.message.startswith(text), (kw, e.value.message)
    m = simdec.generate(V=3.0, T=4, model_seed=2**32 - 1)  # a whole float is the number
    assert m.V == 3 and simdec.run(m, trials=10)["model"]["model_seed"] == 2**32 - 1
    with pytest.raises(simdec.SimdecError) as e:
        simdec.Model(m.init, m.draft[0], m.target[0], T=2.5)
    assert e.value.status == 64 and e.value.message.startswith("T: expected a whole number")
