"""Verifiers written in Python run through simdec's trial engine: the same
random streams as C (bit-identical output to the C example plugin), checked
for losslessness by `check`, and a deliberately broken one is flagged."""
import os

import pytest

import simdec
from conftest import strip_timing


def one_draft(it):
    """examples/my_verifier.c in Python: one draft token, accepted with
    probability min(1, q/p), else a token from the residual [q-p]+; the
    same uniforms in the same order, and sample(row, 1.0) draws as
    sd_dist_sample(row, V, 1.0, u) does."""
    p, q = it.p(it.n, it.prev), it.q(it.n, it.prev)
    x = it.sample(p, 1.0)
    if it.uniform() * p[x] < q[x]:
        if it.n < it.T:
            return [x, it.sample(it.q(it.n + 1, x), 1.0)], 1, 0
        return [x], 1, 0
    return [it.sample_residual(p, q)], 0, 1


def token_sd(it):
    """Token-level speculative decoding (Leviathan et al. 2023, Alg. 1) with
    draft length gamma: draft x_n..x_{n+g-1} from p, accept each with
    probability min(1, q/p), replace the first rejected by a residual
    sample, or add a bonus token from q after g acceptances."""
    g, n = it.draft_len, it.n
    drafts, a = [], it.prev
    for i in range(g):
        a = it.sample(it.p(n + i, a), 1.0)
        drafts.append(a)
    out, a = [], it.prev
    for i, x in enumerate(drafts):
        p, q = it.p(n + i, a), it.q(n + i, a)
        if it.uniform() * p[x] < q[x]:
            out.append(x)
            a = x
            continue
        out.append(it.sample_residual(p, q))
        return out, i, 1
    if n + g <= it.T:
        out.append(it.sample(it.q(n + g, a), 1.0))
    return out, g, 0


def broken_residual(it):
    """The classic bug: after a rejection, sample from q itself instead of
    the residual [q-p]+ (then x_n has law sum min(p,q) + TV q != q)."""
    p, q = it.p(it.n, it.prev), it.q(it.n, it.prev)
    x = it.sample(p, 1.0)
    if it.uniform() * p[x] < q[x]:
        return [x], 1, 0
    return [it.sample(q, 1.0)], 0, 1


def test_bit_identical_to_the_c_plugin(cli, examples):
    # The Python verifier draws the same numbers from the same streams as
    # examples/my_verifier.c: the output is the plugin's, byte for byte,
    # though the plugin runs on 2 threads and the Python one on 1 (forced:
    # the GIL) — the engine's bit-identity across thread counts.
    v = simdec.verifier("py-one-draft", one_draft)
    got = simdec.run(None, v, trials=3000, seed=11, threads=2)
    want = cli("run", "--plugin", os.path.join(examples, "my_verifier.so"), "--algo", "my-verifier",
               "--trials", 3000, "--seed", 11, "--threads", 2)
    assert got["algo"] == "py-one-draft" and want["algo"] == "my-verifier"
    del got["algo"], want["algo"]
    assert strip_timing(got) == strip_timing(want)


def test_python_token_sd_matches_the_exact_values_and_passes_check():
    v = simdec.verifier("py-token-sd", token_sd, params=["gamma"],
                        summary="token-level SD written in Python (Leviathan et al. 2023)")
    # Monte-Carlo against exact values, each within 4 standard errors (a
    # two-sided test that a correct implementation fails with probability
    # 6e-5): rejections with lookahead to the horizon against Theorem 1 of
    # Yin et al. 2024 (`eval rejections`) ...
    r = simdec.run(None, v, trials=3000, seed=1, T=20)
    rej, exact = r["rejections"], simdec.eval("rejections", T=20)["rejections"]
    assert abs(rej["mean"] - exact) < 4 * rej["stderr"], (rej, exact)
    # ... and target calls at gamma = 3 against the exact dynamic program of
    # the C verifier token.
    r = simdec.run(None, v, trials=3000, seed=1, gamma=3, T=20)
    assert r["params"] == {"gamma": 3}
    calls = r["target_calls"]
    exact = simdec.run(None, "token", trials=1, gamma=3, T=20)["exact_target_calls"]
    assert abs(calls["mean"] - exact) < 4 * calls["stderr"], (calls, exact)
    c = simdec.check(None, v, trials=20000, seed=2, gamma=3)
    assert c["unbiased"] is True, c


def test_lp_compare_runs_a_python_verifier_on_every_core():
    # lp --compare has no --threads: the engine calls the step from all its
    # OpenMP threads (each takes the GIL in turn).  The accepted length from
    # one context against its exact value (`eval accept-length`, token),
    # within 4 standard errors.
    v = simdec.verifier("py-token-sd", token_sd, params=["gamma"])
    ctx = dict(gamma=3, V=5, step=7, state=1)
    got = simdec.lp("valid-verify", compare=v, trials=20000, **ctx)["compare"]
    exact = simdec.eval("accept-length", **ctx)["all"]["token"]
    assert got["verifier"] == "py-token-sd" and got["trials"] == 20000
    assert abs(got["mean"] - exact) < 4 * got["stderr"], (got, exact)
    assert simdec.lp("valid-verify", compare=v, trials=20000, **ctx)["compare"] == got


def test_broken_python_verifier_is_flagged():
    # TV(p, q) is about 0.4 per row on the default chain (mix 0.5): the
    # bias of x_1 is far beyond what 20000 trials resolve.
    v = simdec.verifier("py-broken-residual", broken_residual, control=True)
    c = simdec.check(None, v, trials=20000, seed=2)
    assert c["unbiased"] is False, c
    assert c["p_value"] < 1e-6


def test_declared_parameters():
    def lenient(it):
        # Lossy on purpose: accept the draft when u p(x) < q(x) + eps.
        p, q = it.p(it.n, it.prev), it.q(it.n, it.prev)
        x = it.sample(p, 1.0)
        if it.uniform() * p[x] < q[x] + it.params["eps"]:
            return [x], 1, 0
        return [it.sample_residual(p, q)], 0, 1

    v = simdec.verifier("py-lenient", lenient, lossless=False,
                        params=[{"name": "eps", "kind": "real", "default": 0.1, "min": 0.0, "max": 1.0,
                                 "help": "acceptance slack"}])
    r = simdec.run(None, v, trials=500, eps=0.25)
    assert r["params"] == {"eps": 0.25} and r["lossless_claimed"] is False
    assert simdec.run(None, v, trials=500)["params"] == {"eps": 0.1}
    with pytest.raises(simdec.SimdecError) as e:
        simdec.run(None, v, trials=500, eps=2)
    assert e.value.status == 64 and e.value.message == "--eps: 2 is out of range; expected 0 to 1"


def test_step_errors_reach_the_caller():
    def raises(it):
        raise KeyError("boom")

    simdec.verifier("py-raises", raises)
    with pytest.raises(KeyError):
        simdec.run(None, "py-raises", trials=10)

    simdec.verifier("py-bad-token", lambda it: ([it.V], 0, 0))
    with pytest.raises(ValueError, match="token 7 at position 1; expected 0..6"):
        simdec.check(None, "py-bad-token", trials=10)

    simdec.verifier("py-bad-row", lambda it: ([int(it.p(it.n, -1).argmax())], 0, 0))
    with pytest.raises(IndexError, match="expected 1 <= t <= 50 and 0 <= a < 7"):
        simdec.run(None, "py-bad-row", trials=10)

    simdec.verifier("py-too-many", lambda it: ([0] * (it.T + 1), 0, 0))
    with pytest.raises(ValueError, match="expected 1 to 50"):
        simdec.run(None, "py-too-many", trials=10)

    # A token 1.5 (or an accepted count 0.5) was truncated by int() and run.
    simdec.verifier("py-float-token", lambda it: ([1.5], 0, 0))
    with pytest.raises(TypeError, match="expected whole numbers"):
        simdec.run(None, "py-float-token", trials=10)
    simdec.verifier("py-float-accepted", lambda it: ([1], 0.5, 0))
    with pytest.raises(TypeError, match="expected whole numbers"):
        simdec.run(None, "py-float-accepted", trials=10)
    simdec.verifier("py-whole-floats", lambda it: ([1.0], 0.0, 1.0))  # whole values are the numbers
    assert simdec.run(None, "py-whole-floats", trials=10, T=3)["rejections"]["mean"] == 3


def test_steps_cannot_nest_commands():
    simdec.verifier("py-nested", lambda it: simdec.run(None, "token", trials=1))
    with pytest.raises(simdec.SimdecError, match="do not nest"):
        simdec.run(None, "py-nested", trials=1)


def test_names():
    with pytest.raises(simdec.SimdecError) as e:
        simdec.verifier("token", one_draft)
    assert "already defined" in e.value.message
    # Defining a Python verifier again (a notebook cell run twice) replaces it.
    simdec.verifier("py-again", lambda it: ([0], 0, 0))
    simdec.verifier("py-again", one_draft)
    assert simdec.run(None, "py-again", trials=100)["algo"] == "py-again"


def test_interrupt_inside_a_step_stops_the_run():
    import signal

    calls = [0]

    def step(it):
        calls[0] += 1
        if calls[0] == 100:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in a notebook
        return [0], 0, 0

    simdec.verifier("py-interrupted", step)
    # Python's own Ctrl-C handler, as in a notebook or a terminal: a process
    # started with SIGINT ignored (`sh -c '... &'`) inherits SIG_IGN, and
    # Python then installs no handler, so the kill would do nothing.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            simdec.run(None, "py-interrupted", trials=100000)
    finally:
        signal.signal(signal.SIGINT, old)
    assert calls[0] == 100  # the engine stopped at the step that raised
