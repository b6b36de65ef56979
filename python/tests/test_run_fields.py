"""simdec.run calls the run API through sd_api_run (cli/api.h) with named
fields, not a command line: the same dictionaries as `simdec run --json`
for every kind of model and option, sweeps included, and the same
errors."""
import pytest

import simdec
from simdec import _commands
from conftest import strip_timing


def same(a, b):
    assert strip_timing(a) == strip_timing(b)


CASES = [
    ("token", dict(trials=2000, seed=3)),
    ("block", dict(trials=2000, gamma=3, estimator="plain")),
    ("biased", dict(trials=2000, eps=0.2, T=12)),  # a lossy verifier: its bias
    ("token", dict(trials=1000, stream=True, V=100, T=6)),  # a streamed chain
    ("token", dict(trials=2000, p=[0.5, 0.5], q=[0.3, 0.7], T=6)),
    ("token", dict(target_stderr=0.2, T=10)),
    ("token", dict(trials=2000, zipf=True, V=50, T=8)),
]


@pytest.mark.parametrize("algo,kw", CASES)
def test_fields_give_the_command_lines_dictionary(cli, algo, kw):
    fields = _commands._fields(**kw)
    got = _commands._run_fields(algo, fields)
    assert got is not None, "ran through the fields"
    same(got, cli("run", "--algo", algo, *_commands.options(**kw)))
    same(simdec.run(None, algo, **kw), got)


def test_a_sweep_runs_through_the_fields(cli):
    for algo, kw, args in [("token,block", dict(trials=100), ("--algo", "token,block", "--trials", 100)),
                           ("block", dict(trials=100, gamma="2,3"), ("--algo", "block", "--trials", 100, "--gamma", "2,3")),
                           ("block", dict(trials=100, gamma="1..2"), ("--algo", "block", "--trials", 100, "--gamma", "1..2"))]:
        got = _commands._run_fields(algo, _commands._fields(**kw))
        assert isinstance(got, list) and len(got) == 2
        same(got, cli("run", *args))
    same(simdec.run(None, "block", trials=500, gamma=[2, 3]),
         cli("run", "--algo", "block", "--trials", 500, "--gamma", "2,3"))


def test_errors_are_the_command_lines():
    for kw, status, message in [
        (dict(trials=0), 64, "--trials: expected a whole number from 1 to 34359738368, got '0'"),
        (dict(estimator="x"), 64, "--estimator: expected rb or plain, got 'x'"),
        (dict(eps=0.1), 64, "--eps does not apply to --algo token (it reads: gamma draft-policy)"),
        (dict(nosuch=1), 64, None),
    ]:
        with pytest.raises(simdec.SimdecError) as e:
            simdec.run(None, "token", **kw)
        assert e.value.status == status
        if message:
            assert e.value.message == message
    with pytest.raises(simdec.SimdecError) as e:
        simdec.run(None, "batch", trials=100, estimator="rb")
    assert e.value.status == 64 and e.value.message.startswith("--estimator rb: --algo batch")


CHECK_CASES = [
    ("block", dict(trials=5000, seed=5, L=2, gamma=3)),
    ("biased", dict(trials=5000, eps=0.3, T=8, exact=True)),
    ("token", dict(detect=0.2, T=6, alpha=0.01)),
    ("token", dict(trials=3000, p=[0.5, 0.5], q=[0.3, 0.7], T=4)),
]


@pytest.mark.parametrize("algo,kw", CHECK_CASES)
def test_check_fields_give_the_command_lines_dictionary(cli, algo, kw):
    got = _commands._fields_call("check", algo, _commands._fields(**kw))
    assert got is not None, "ran through the fields"
    same(got, cli("check", "--algo", algo, *_commands.options(**kw)))


def test_check_errors_are_the_command_lines():
    with pytest.raises(simdec.SimdecError) as e:
        simdec.check(None, "token", detect=0.1, trials=100)
    assert e.value.status == 64
    assert e.value.message == "--detect chooses the trials: give --detect TV or --trials N, not both"
    with pytest.raises(simdec.SimdecError) as e:
        simdec.check(None, "biased", eps=0.5, trials=3000, fail_biased=True)
    assert e.value.status == 1  # BIASED with --fail-biased, as the command line exits


EVAL_CASES = [
    ("rejections", dict(M=3, T=6)),
    ("acceptance", dict(p=[0.2, 0.3, 0.5], q=[0.5, 0.25, 0.25], k=2)),
    ("accept-length", dict(algo="block", gamma=3, T=8)),
    ("pareto", dict(p=[0.2, 0.8], q=[0.6, 0.4], eps=0.1)),
]


@pytest.mark.parametrize("what,kw", EVAL_CASES)
def test_eval_fields_give_the_command_lines_dictionary(cli, what, kw):
    got = _commands._fields_call("eval", what, _commands._fields(**kw))
    assert got is not None, "ran through the fields"
    same(got, cli("eval", what, *_commands.options(**kw)))


def test_eval_with_options_of_its_own_runs_through_the_fields(cli):
    same(_commands._fields_call("eval", "generation", _commands._fields(algo="block", T=4)),
         cli("eval", "generation", "--algo", "block", "--T", 4))
    same(simdec.eval("generation", algo="block", T=4), cli("eval", "generation", "--algo", "block", "--T", 4))
    with pytest.raises(simdec.SimdecError) as e:
        simdec.eval("acceptance", gamma=3)
    assert e.value.status == 64 and e.value.message == "option '--gamma' does not apply to eval acceptance"


LP_CASES = [
    ("otm", dict(k=2, V=4, T=3)),
    ("block-ot", dict(gamma=2, V=3, T=4, compare="block", trials=500)),
    ("pareto", dict(reject=0.3, p=[0.2, 0.8], q=[0.6, 0.4])),
    ("tree-valid", dict(tree=[2, 1], V=3, T=4)),
]


@pytest.mark.parametrize("problem,kw", LP_CASES)
def test_lp_fields_give_the_command_lines_dictionary(cli, problem, kw):
    got = _commands._fields_call("lp", problem, _commands._fields(**kw))
    assert got is not None, "ran through the fields"
    same(got, cli("lp", problem, *_commands.options(**kw)))


def test_lp_errors_are_the_command_lines():
    for problem, kw, message in [
        ("otm", dict(V=4), "otm needs --k K (the number of drafts)"),
        ("otmm", dict(k=2), "unknown problem 'otmm' (expected otm, block-ot, valid-verify, pareto, tree-valid "
                            "or tree-ot); did you mean 'otm'?"),
        ("block-ot", dict(gamma=2, compare="nope"), "unknown verifier 'nope' (see 'simdec run --list')"),
    ]:
        with pytest.raises(simdec.SimdecError) as e:
            simdec.lp(problem, **kw)
        assert e.value.status == 64
        assert e.value.message == message
