"""The commands, run in-process through the library (cli/api.h): each
returns the dictionary that `simdec COMMAND ... --json` prints."""
import ctypes
import json
import os
import threading

from . import _lib
from . import _model
from . import _verifier


# One command at a time per process (sd_api_main captures C's stdout and
# stderr for the call): other threads wait.
_lock = threading.Lock()


def _run(argv):
    """(status, stdout, stderr, the exception a Python step raised or None)."""
    if _verifier.in_step():
        raise _lib.SimdecError("a verifier's step cannot run simdec commands (they do not nest)", 64)
    args = [os.fsencode(str(a)) for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    L = _lib.lib()
    with _lock:
        _verifier.clear_pending()
        status = L.sd_api_main(len(args), arr, ctypes.byref(out), ctypes.byref(err))
        pending = _verifier.take_pending()
    texts = []
    for p in (out, err):
        texts.append(ctypes.string_at(p).decode("utf-8", "replace") if p.value else "")
        L.sd_api_free(p)
    return status, texts[0], texts[1], pending


def main(*argv):
    """Runs `simdec ARGV...` in this process; returns (exit status, standard
    output, standard error) as the command line would give them (a Python
    verifier's exception is raised)."""
    status, out, err, pending = _run(argv)
    if pending is not None:
        raise pending
    return status, out, err


def _value(v):
    if isinstance(v, _verifier.Verifier):
        return v.name
    if isinstance(v, float):
        return repr(float(v))  # the shortest text that reads back as v
    if hasattr(v, "__iter__") and not isinstance(v, (str, bytes)):
        return ",".join(_value(x) for x in v)
    return str(v)


def options(**kw):
    """Keyword arguments as options: name=value -> --name value (an
    underscore becomes a dash: model_seed -> --model-seed), name=True ->
    --name, None and False are left out; a list is comma-separated."""
    out = []
    for k, v in kw.items():
        if v is None or v is False:
            continue
        out.append("--" + k.replace("_", "-"))
        if v is not True:
            out.append(_value(v))
    return out


def _model_args(model):
    if model is None:
        return []
    if isinstance(model, _model.Model):
        return model.args()
    return ["--model", os.fspath(model)]


def command(*argv):
    """Runs a command with --json and returns its JSON as a dictionary;
    SimdecError (with the message and exit status the command line would
    give) when it fails, or the exception a Python verifier's step raised."""
    status, out, err, pending = _run(argv + ("--json",))
    if pending is not None:
        pending.add_note("while simdec ran: %s" % " ".join(str(a) for a in argv))
        raise pending
    if status != 0:
        lines = [l[len("simdec: "):] if l.startswith("simdec: ") else l for l in err.strip().splitlines()]
        raise _lib.SimdecError(lines[0] if lines else "exit status %d" % status, status)
    return json.loads(out)


def _algo_args(algo, threads):
    """--algo NAME, and --threads 1 for a verifier written in Python (its
    step holds the GIL; the result is the same for any thread count)."""
    names = _value(algo).split(",")  # a list of verifiers: a sweep
    if any(_verifier.is_python(n) for n in names):
        threads = 1
    return ["--algo", ",".join(names)] + options(threads=threads)


def run(model=None, algo="token", trials=None, seed=None, threads=None, **params):
    """`simdec run --algo ALGO [model] --trials N --seed S --threads N
    --PARAM VALUE ... --json`.  model: a Model, a file name, or None (the
    default generated chain); algo: a name or a Verifier."""
    return command("run", *_algo_args(algo, threads), *_model_args(model),
                   *options(trials=trials, seed=seed, **params))


def check(model=None, algo="token", trials=None, seed=None, threads=None, L=None, **params):
    """`simdec check --algo ALGO [model] --L l ... --json`: is the verifier
    lossless?  (Give the significance level as alpha=..., the generated
    model's concentration as model_alpha=...)"""
    return command("check", *_algo_args(algo, threads), *_model_args(model),
                   *options(trials=trials, seed=seed, L=L, **params))


def eval(what, model=None, **opts):  # noqa: A001 (simdec.eval, as `simdec eval`)
    """`simdec eval WHAT [model] --OPTION VALUE ... --json`."""
    return command("eval", what, *_model_args(model), *options(**opts))


def lp(problem, model=None, **opts):
    """`simdec lp PROBLEM [model] --OPTION VALUE ... --json`."""
    return command("lp", problem, *_model_args(model), *options(**opts))
