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


def _texts(L, out, err):
    texts = []
    for p in (out, err):
        texts.append(ctypes.string_at(p).decode("utf-8", "replace") if p.value else "")
        L.sd_api_free(p)
    return texts


def _call(fn, *args):
    """fn(*args, &out, &err) under the lock: (status, stdout, stderr, the
    exception a Python step raised or None)."""
    if _verifier.in_step():
        raise _lib.SimdecError("a verifier's step cannot run simdec commands (they do not nest)", 64)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    L = _lib.lib()
    with _lock:
        _verifier.clear_pending()
        status = getattr(L, fn)(*args, ctypes.byref(out), ctypes.byref(err))
        pending = _verifier.take_pending()
    texts = _texts(L, out, err)
    return status, texts[0], texts[1], pending


def _run(argv):
    """(status, stdout, stderr, the exception a Python step raised or None)."""
    args = [os.fsencode(str(a)) for a in argv]
    arr = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    return _call("sd_api_main", len(args), arr)


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


def _result(status, out, err, pending, what):
    """The dictionary of a command's JSON, or the error it raised."""
    if pending is not None:
        pending.add_note("while simdec ran: %s" % what)
        raise pending
    if status != 0:
        lines = [l[len("simdec: "):] if l.startswith("simdec: ") else l for l in err.strip().splitlines()]
        raise _lib.SimdecError(lines[0] if lines else "exit status %d" % status, status)
    return json.loads(out)


def command(*argv):
    """Runs a command with --json and returns its JSON as a dictionary;
    SimdecError (with the message and exit status the command line would
    give) when it fails, or the exception a Python verifier's step raised."""
    status, out, err, pending = _run(argv + ("--json",))
    return _result(status, out, err, pending, " ".join(str(a) for a in argv))


def _fields(**kw):
    """Keyword arguments as named fields (name, text or None for a flag),
    as options() makes them options: None and False left out."""
    return [(k.replace("_", "-"), None if v is True else _value(v)) for k, v in kw.items()
            if v is not None and v is not False]


def _model_fields(model):
    """A model as fields: a Model's own options (its generator's, or the
    file it is written to once), or a file name."""
    if model is None:
        return []
    if isinstance(model, _model.Model):
        args = model.args()
        return [(args[i][2:], args[i + 1]) for i in range(0, len(args), 2)]
    return [("model", os.fspath(model))]


def _threads(algo, threads):
    """1 for a verifier written in Python (its step holds the GIL; the
    result is the same for any thread count), else threads."""
    return 1 if any(_verifier.is_python(n) for n in _value(algo).split(",")) else threads


# Fields whose answer is text, not JSON: --csv's table, --help's page.
_TEXT_FIELDS = ("csv", "help")


def _fields_call(command, algo, fields):
    """`command` (run, check, eval or lp) through sd_api_run, sd_api_check,
    sd_api_eval or sd_api_lp (cli/api.h): the verifier (a comma list: a
    sweep; eval: the evaluator, lp: the problem) and named fields, no
    command line.  Returns the dictionary (a list for a sweep) that
    `command --json` prints, or the text of csv=True and help=True."""
    arr = (_lib.Field * max(len(fields), 1))(*[_lib.Field(os.fsencode(k), None if v is None else os.fsencode(v))
                                              for k, v in fields])
    status, out, err, pending = _call("sd_api_" + command, os.fsencode(_value(algo)), arr, len(fields))
    head = "%s %s" % (command, algo) if command in ("eval", "lp") else "%s --algo %s" % (command, _value(algo))
    what = "%s %s" % (head, " ".join("--%s%s" % (k, "" if v is None else " " + v) for k, v in fields))
    if status == 0 and pending is None and any(k in _TEXT_FIELDS for k, _ in fields):
        return out
    return _result(status, out, err, pending, what.strip())


def _run_fields(algo, fields):
    return _fields_call("run", algo, fields)


def run(model=None, algo="token", trials=None, seed=None, threads=None, **params):
    """`simdec run --algo ALGO [model] --trials N --seed S --threads N
    --PARAM VALUE ... --json`, run in this process through the run API with
    named fields.  model: a Model, a file name, or None (the default
    generated chain); algo: a name, a Verifier, or a list of them (a sweep);
    a parameter given a list or a range "LO..HI" sweeps it too (paired=True
    compares every point with the first): the list of the points'
    dictionaries.  csv=True returns the CSV text, help=True the help,
    list=True the verifiers' list."""
    fields = _fields(threads=_threads(algo, threads)) + _model_fields(model) + \
        _fields(trials=trials, seed=seed, **params)
    return _run_fields(algo, fields)


def check(model=None, algo="token", trials=None, seed=None, threads=None, L=None, **params):
    """`simdec check --algo ALGO [model] --L l ... --json`: is the verifier
    lossless?  (Give the significance level as alpha=..., the generated
    model's concentration as model_alpha=...)  Run through the library with
    named fields (sd_api_check)."""
    fields = _fields(threads=_threads(algo, threads)) + _model_fields(model) + \
        _fields(trials=trials, seed=seed, L=L, **params)
    return _fields_call("check", algo, fields)


def eval(what, model=None, **opts):  # noqa: A001 (simdec.eval, as `simdec eval`)
    """`simdec eval WHAT [model] --OPTION VALUE ... --json`, every
    evaluator (generation, speedup with gamma="best" or a draft_policy,
    ...) through the library with named fields (sd_api_eval)."""
    return _fields_call("eval", what, _model_fields(model) + _fields(**opts))


def lp(problem, model=None, **opts):
    """`simdec lp PROBLEM [model] --OPTION VALUE ... --json`, run through
    the library with named fields (sd_api_lp)."""
    return _fields_call("lp", problem, _model_fields(model) + _fields(**opts))
