"""simdec.run, check, eval and lp build no command line: with the package's
argv entry point (sd_api_main, reached through _commands._run) made to
raise, sweeps, plugins, the evaluators with options of their own (eval
generation, eval speedup with gamma="best" or a draft policy), lp's
--compare list, csv, list and help all run through the named fields of
sd_api_run/check/eval/lp (cli/api.h), and so does eval accept-length of a
verifier without a closed-form enumerator (a multi-draft one, a plugin's);
they give what `simdec ... ` prints for
the same inputs (timing aside)."""
import csv
import io
import json
import os
import subprocess

import pytest

import simdec
from simdec import _commands, _lib
from conftest import BIN, ROOT, strip_timing


@pytest.fixture(autouse=True)
def no_argv(monkeypatch):
    """Every path to the argv entry point raises."""
    def refuse(*a, **k):
        raise AssertionError("the argv entry point was called: %r" % (a,))
    monkeypatch.setattr(_commands, "_run", refuse)
    monkeypatch.setattr(_lib.lib(), "sd_api_main", refuse)


def same(a, b):
    assert strip_timing(a) == strip_timing(b)


def text(*args):
    """What `simdec ARGS...` prints on stdout (status 0)."""
    p = subprocess.run([BIN, *[str(a) for a in args]], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_a_sweep_over_verifiers(cli):
    got = simdec.run(None, ["token", "block"], trials=800, seed=4, gamma=3)
    assert [p["algo"] for p in got] == ["token", "block"]
    same(got, cli("run", "--algo", "token,block", "--trials", 800, "--seed", 4, "--gamma", 3))


def test_a_sweep_over_a_gamma_range_paired(cli):
    got = simdec.run(None, "block", trials=800, seed=6, gamma="1..3", paired=True)
    assert [p["params"]["gamma"] for p in got] == [1, 2, 3]
    assert "paired" in got[1]
    same(got, cli("run", "--algo", "block", "--trials", 800, "--seed", 6, "--gamma", "1..3", "--paired"))
    same(simdec.run(None, "block", trials=500, gamma=[1, 2, 4]),
         cli("run", "--algo", "block", "--trials", 500, "--gamma", "1,2,4"))


def test_a_sweep_of_verifiers_leaves_out_parameters_a_point_does_not_read(cli):
    """--algo token,biased --eps 0.2: token's point has no eps (sweep.c's rule)."""
    same(simdec.run(None, "token,biased", trials=500, eps=0.2, T=10),
         cli("run", "--algo", "token,biased", "--trials", 500, "--eps", 0.2, "--T", 10))


def test_plugin(cli, examples):
    so = os.path.join(examples, "my_verifier.so")
    same(simdec.run(None, "my-verifier", trials=2000, plugin=so),
         cli("run", "--plugin", so, "--algo", "my-verifier", "--trials", 2000))
    same(simdec.check(None, "my-verifier", trials=5000, seed=3, plugin=so),
         cli("check", "--plugin", so, "--algo", "my-verifier", "--trials", 5000, "--seed", 3))
    # eval and lp know the plugin's verifier too: they refuse it as the command line does
    for args, call in [(("eval", "generation", "--plugin", so, "--algo", "my-verifier", "--T", 5),
                        lambda: simdec.eval("generation", algo="my-verifier", T=5, plugin=so)),
                       (("lp", "block-ot", "--plugin", so, "--compare", "my-verifier", "--gamma", 1, "--V", 3),
                        lambda: simdec.lp("block-ot", compare="my-verifier", gamma=1, V=3, plugin=so))]:
        p = subprocess.run([BIN, *[str(a) for a in args]], capture_output=True, text=True)
        with pytest.raises(simdec.SimdecError) as e:
            call()
        assert e.value.status == p.returncode != 0
        assert "simdec: " + e.value.message == p.stderr.splitlines()[0]


def test_eval_generation(cli):
    same(simdec.eval("generation", algo="block", gamma=2, T=5),
         cli("eval", "generation", "--algo", "block", "--gamma", 2, "--T", 5))


def test_eval_speedup(cli):
    got = simdec.eval("speedup", algo="token", gamma="best", gamma_max=6, c=0.1, V=3, T=8)
    assert len(got["points"]) == 6 and got["best_gamma"] >= 1
    same(got, cli("eval", "speedup", "--algo", "token", "--gamma", "best", "--gamma-max", 6, "--c", 0.1,
                  "--V", 3, "--T", 8))
    same(simdec.eval("speedup", algo="block", gamma=[1, 3], c=0.2, V=3, T=6),
         cli("eval", "speedup", "--algo", "block", "--gamma", "1,3", "--c", 0.2, "--V", 3, "--T", 6))
    same(simdec.eval("speedup", algo=["token", "block"], gamma=2, V=3, T=6),
         cli("eval", "speedup", "--algo", "token,block", "--gamma", 2, "--V", 3, "--T", 6))
    # a k list: rrs at each k, token (no k) once
    got = simdec.eval("speedup", algo=["token", "rrs"], k=[2, 3], gamma=2, V=3, T=5, trials=300)
    assert [(p["algo"], p["params"].get("k")) for p in got] == [("token", None), ("rrs", 2), ("rrs", 3)]
    same(got, cli("eval", "speedup", "--algo", "token,rrs", "--k", "2,3", "--gamma", 2, "--V", 3, "--T", 5,
                  "--trials", 300))


def test_eval_speedup_with_a_draft_policy(cli):
    got = simdec.eval("speedup", draft_policy="specdecpp:best", gamma=4, V=3, T=10, steps=8, c=0.1)
    assert len(got["points"]) == 9
    same(got, cli("eval", "speedup", "--draft-policy", "specdecpp:best", "--gamma", 4, "--V", 3, "--T", 10,
                  "--steps", 8, "--c", 0.1))


def test_eval_accept_length_of_any_verifier(cli, examples):
    """eval_accept.c from fields: the iteration law beside its Monte-Carlo."""
    got = simdec.eval("accept-length", algo="spectr", gamma=2, k=2, V=4, step=2, state=1, trials=3000, seed=5)
    assert got["method"] == "the verifier's iteration law (exact)" and got["mc"]["trials"] == 3000
    same(got, cli("eval", "accept-length", "--algo", "spectr", "--gamma", 2, "--k", 2, "--V", 4, "--step", 2,
                  "--state", 1, "--trials", 3000, "--seed", 5))
    same(simdec.eval("accept-length", algo="rrs", gamma=1, k=3, p=[0.5, 0.3, 0.2], q=[0.2, 0.3, 0.5], trials=2000),
         cli("eval", "accept-length", "--algo", "rrs", "--gamma", 1, "--k", 3, "--p", "0.5,0.3,0.2",
             "--q", "0.2,0.3,0.5", "--trials", 2000))
    so = os.path.join(examples, "my_verifier.so")
    # its errors are the command line's, status and first line
    for args, kw in [(("--algo", "spectr", "--V", 4), dict(algo="spectr", V=4)),
                     (("--algo", "spectr", "--gamma", 2, "--eps", 0.1), dict(algo="spectr", gamma=2, eps=0.1)),
                     (("--algo", "spectr", "--gamma", 2, "--trials", 0), dict(algo="spectr", gamma=2, trials=0)),
                     (("--algo", "spectr", "--gamma", 2, "--p", "0.5,0.5"), dict(algo="spectr", gamma=2, p=[0.5, 0.5])),
                     (("--algo", "spectr", "--gamma", 60, "--V", 4), dict(algo="spectr", gamma=60, V=4)),
                     # a plugin's verifier reading no gamma: no draft length to evaluate
                     (("--plugin", so, "--algo", "my-verifier", "--V", 3), dict(algo="my-verifier", V=3, plugin=so))]:
        p = subprocess.run([BIN, "eval", "accept-length", *[str(a) for a in args]], capture_output=True, text=True)
        with pytest.raises(simdec.SimdecError) as e:
            simdec.eval("accept-length", **kw)
        assert e.value.status == p.returncode != 0
        assert "simdec: " + e.value.message == p.stderr.splitlines()[0]


def test_lp_compares_a_list(cli):
    same(simdec.lp("block-ot", gamma=2, V=3, T=4, compare=["block", "token"], trials=500),
         cli("lp", "block-ot", "--gamma", 2, "--V", 3, "--T", 4, "--compare", "block,token", "--trials", 500))


def test_check(cli):
    same(simdec.check(None, "block", trials=5000, seed=5, L=2),
         cli("check", "--algo", "block", "--trials", 5000, "--seed", 5, "--L", 2))


def _rows(s):
    """CSV rows without the columns that measure the machine."""
    rows = list(csv.DictReader(io.StringIO(s)))
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_csv_list_and_help():
    got = simdec.run(None, ["token", "block"], trials=300, csv=True)
    assert isinstance(got, str)
    assert _rows(got) == _rows(text("run", "--algo", "token,block", "--trials", 300, "--csv"))
    # the verifiers this process has registered besides (plugins, Python ones) aside
    listed = json.loads(text("run", "--list", "--json"))
    names = {v["name"] for v in listed}
    assert [v for v in simdec.run(list=True) if v["name"] in names] == listed
    # help pages list the verifiers and parameters this process registered besides (other
    # tests' Python verifiers), so they are compared in a fresh interpreter with none
    script = """if True:
        import json, simdec
        out = [simdec.run(None, "block", help=True), simdec.check(None, "block", help=True)]
        out += [simdec.eval(w, help=True) for w in ("speedup", "generation", "rejections")]
        out += [simdec.eval("accept-length", algo="spectr", help=True)]
        out += [simdec.lp(p, help=True) for p in ("otm", "tree-valid")]
        print(json.dumps(out))
    """
    import sys
    got = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                    check=True, env=os.environ).stdout)
    want = [text("run", "--algo", "block", "--help"), text("check", "--algo", "block", "--help")]
    want += [text("eval", w, "--help") for w in ("speedup", "generation", "rejections")]
    want += [text("eval", "accept-length", "--algo", "spectr", "--help")]
    want += [text("lp", p, "--help") for p in ("otm", "tree-valid")]
    assert got == want

def test_errors_name_the_field():
    p = subprocess.run([BIN, "run", "--gama", "3"], capture_output=True, text=True)
    with pytest.raises(simdec.SimdecError) as e:
        simdec.run(None, "token", gama=3)
    assert e.value.status == p.returncode == 64
    assert "simdec: " + e.value.message == p.stderr.splitlines()[0]
    with pytest.raises(simdec.SimdecError) as e:
        simdec.eval("speedup", algo="token", gamma="best", nosuch=1)
    assert e.value.status == 64 and e.value.message.startswith("unknown option '--nosuch'")
    with pytest.raises(simdec.SimdecError) as e:
        simdec.eval("generaton")
    assert e.value.status == 64 and e.value.message == "unknown evaluator 'generaton'; did you mean 'generation'?"
