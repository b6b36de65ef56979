"""simdec.trace: verifiers on logged target sequences given as numpy arrays
(the `simdec trace` command without files; cli/api_trace.h)."""
import ctypes
import json

from . import _lib

_ARRAY_NAMES = ("tokens", "draft", "target", "ratios")
_declared = False


def _declare(L):
    global _declared
    if _declared:
        return
    P = ctypes.c_void_p
    L.sd_api_trace.restype = ctypes.c_int
    L.sd_api_trace.argtypes = [P * 4, ctypes.c_char_p * 4, ctypes.c_size_t * 4, (ctypes.c_size_t * 8) * 4,
                               ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_char_p),
                               ctypes.POINTER(P), ctypes.POINTER(P)]
    L.sd_api_trace_free.restype = None
    L.sd_api_trace_free.argtypes = [P]
    _declared = True


def _text(v):
    if isinstance(v, float):
        return repr(v)
    if hasattr(v, "__iter__") and not isinstance(v, (str, bytes)):
        return ",".join(_text(x) for x in v)
    return str(v)


def _array(np, name, a):
    a = np.asarray(a)
    if name == "tokens":
        if a.dtype.kind not in "iu":
            raise _lib.SimdecError("tokens: dtype %s; expected integer tokens" % a.dtype, 65)
    elif a.dtype.kind != "f" or a.dtype.itemsize not in (2, 4, 8):
        a = a.astype(np.float64)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    if a.ndim > 8:
        raise _lib.SimdecError("%s: %d dimensions; expected at most 8" % (name, a.ndim), 65)
    return np.ascontiguousarray(a)


def trace(tokens, draft=None, target=None, ratios=None, **options):
    """The target calls, rejections and speed-up of verifiers on logged
    sequences sampled from the target model, as `simdec trace --json` gives
    them (a dictionary, or a list of them for a sweep).

    tokens: integers [n][T]; draft and target: rows [n][T][V] (float16, 32
    or 64) of p_t(.|x_{t-1}) and q_t(.|x_{t-1}) along each sequence; or
    ratios [n][T] = p_t(x_t|x_{t-1}) / q_t(x_t|x_{t-1}) (token and block).
    Options are the command's: algo="token,block", gamma="1..8" or
    [1, 2, 4] or "best", k=2, c=0.05, draft_cost="step", schedule=True,
    tol=1e-3, max_memory="1G", tree="2,2", seed=1, estimate=True, ...
    SimdecError with the
    command's message and exit status on bad input."""
    np = _lib.numpy()
    L = _lib.lib()
    _declare(L)
    given = {"tokens": tokens, "draft": draft, "target": target, "ratios": ratios}
    keep = []
    ptrs = (ctypes.c_void_p * 4)()
    dtypes = (ctypes.c_char_p * 4)()
    ndims = (ctypes.c_size_t * 4)()
    shapes = ((ctypes.c_size_t * 8) * 4)()
    for f, name in enumerate(_ARRAY_NAMES):
        if given[name] is None:
            continue
        a = _array(np, name, given[name])
        keep.append(a)
        ptrs[f] = a.ctypes.data
        dtypes[f] = a.dtype.str.encode()
        ndims[f] = a.ndim
        for d, s in enumerate(a.shape):
            shapes[f][d] = s
    names, values = [], []
    for k, v in options.items():
        if v is None or v is False:
            continue
        names.append(k.replace("_", "-").encode())
        values.append(None if v is True else _text(v).encode())
    n = len(names)
    cn = (ctypes.c_char_p * (n + 1))(*names, None)
    cv = (ctypes.c_char_p * (n + 1))(*values, None)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    status = L.sd_api_trace(ptrs, dtypes, ndims, shapes, n, cn, cv, ctypes.byref(out), ctypes.byref(err))
    texts = []
    for p in (out, err):
        texts.append(ctypes.string_at(p).decode("utf-8", "replace") if p.value else "")
        L.sd_api_trace_free(p)
    del keep
    if status != 0:
        msg = texts[1].strip().splitlines()
        msg = msg[0] if msg else "simdec trace failed"
        if msg.startswith("simdec: "):
            msg = msg[len("simdec: "):]
        raise _lib.SimdecError(msg, status)
    return json.loads(texts[0])
