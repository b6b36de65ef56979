"""simdec.run/check/eval/lp return the dictionaries that the command line
prints with --json for the same arguments (timing keys aside: they measure
the machine)."""
import os
import subprocess

import pytest

import simdec
from conftest import BIN, ROOT, strip_timing


def same(a, b):
    assert strip_timing(a) == strip_timing(b)


def test_run_generated_model(cli):
    m = simdec.generate(V=5, T=20, model_seed=4, alpha=0.7, mix=0.4)
    got = simdec.run(m, "block", trials=5000, seed=7, gamma=4, threads=2)
    same(got, cli("run", "--algo", "block", "--V", 5, "--T", 20, "--model-seed", 4, "--model-alpha", 0.7,
                  "--mix", 0.4, "--trials", 5000, "--seed", 7, "--gamma", 4, "--threads", 2))


def test_run_default_model_and_file(cli, tmp_path):
    same(simdec.run(None, "token", trials=3000, seed=2), cli("run", "--trials", 3000, "--seed", 2))
    path = str(tmp_path / "m.json")
    simdec.generate(V=3, T=10, model_seed=5).save(path)
    same(simdec.run(simdec.load(path), "batch", trials=3000, M=3),
         cli("run", "--algo", "batch", "--model", path, "--trials", 3000, "--M", 3))
    same(simdec.run(path, "spectr", trials=2000, T=6), cli("run", "--algo", "spectr", "--model", path,
                                                        "--trials", 2000, "--T", 6))


def test_run_thread_count_does_not_change_the_result():
    one = simdec.run(None, "block", trials=9000, seed=3, threads=1, gamma=3)
    two = simdec.run(None, "block", trials=9000, seed=3, threads=2, gamma=3)
    assert strip_timing(one) == strip_timing(two)


def test_check(cli):
    same(simdec.check(None, "block", trials=20000, seed=5, L=2),
         cli("check", "--algo", "block", "--trials", 20000, "--seed", 5, "--L", 2))
    # The control is caught at check's default trials (200000), not at 20000.
    got = simdec.check(None, "broken-block-residual")
    same(got, cli("check", "--algo", "broken-block-residual"))
    assert got["unbiased"] is False


def test_eval(cli):
    same(simdec.eval("rejections"), cli("eval", "rejections"))
    same(simdec.eval("rejections", simdec.generate(V=4, T=9), M=3), cli("eval", "rejections", "--V", 4, "--T", 9, "--M", 3))
    same(simdec.eval("accept-length", gamma=3), cli("eval", "accept-length", "--gamma", 3))


def test_lp(cli):
    got = simdec.lp("valid-verify", gamma=3, V=5, step=7, state=1, compare="token", trials=20000)
    same(got, cli("lp", "valid-verify", "--gamma", 3, "--V", 5, "--step", 7, "--state", 1, "--compare", "token",
                  "--trials", 20000))
    assert got["status"] == "optimal"


def test_errors_carry_the_cli_message_and_status():
    with pytest.raises(simdec.SimdecError) as e:
        simdec.run(None, "nope")
    assert e.value.status == 64
    assert e.value.message == "unknown verifier 'nope' (see 'simdec run --list')"
    with pytest.raises(simdec.SimdecError) as e:
        simdec.run(None, "token", trials=1.5)
    assert e.value.message == "--trials: expected a whole number from 1 to 34359738368, got '1.5'"


def test_plugin(cli, examples):
    so = os.path.join(examples, "my_verifier.so")
    same(simdec.run(None, "my-verifier", trials=3000, plugin=so),
         cli("run", "--plugin", so, "--algo", "my-verifier", "--trials", 3000))


def test_main_is_the_command_line_without_a_command_too():
    """--help, --version and a mistyped command give ./simdec's status and
    output (the library had its own table: 64 and 'unknown command')."""
    for argv in (("--help",), ("help",), ("--version",), ("rn",), ("plot", "--list", "--json"), ()):
        got = simdec.main(*argv)
        run = subprocess.run([BIN, *argv], capture_output=True, text=True)
        assert got == (run.returncode, run.stdout, run.stderr), argv
    assert simdec.main("rn")[2].startswith("simdec: unknown command 'rn'; did you mean 'run'?")
    assert [f["name"] for f in simdec.command("plot", "--list")][0] == "yin-fig2a-sd"


def test_main_gives_the_table():
    status, out, err = simdec.main("run", "--algo", "block", "--trials", "100")
    assert status == 0 and err == ""
    assert out.startswith("simdec run --algo block:")
    assert os.path.isdir(ROOT)
