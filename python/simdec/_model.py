"""Models: a draft chain p and a target chain q (docs/notation.md), as
numpy arrays, and how a command is told which model to use."""
import ctypes
import os
import tempfile
import weakref

from . import _lib

_MAX_V, _MAX_T = 1 << 20, 1 << 24  # --V and --T of the command line (cli/cli_model.c)


def _whole(name, x, lo, hi):
    """x as an int in lo..hi (_lib.whole), else SimdecError 64 as the
    command line refuses the option: int(7.5) would quietly make another
    model than the one asked for."""
    v = _lib.whole(x)
    if v is None or not lo <= v <= hi:
        raise _lib.SimdecError("%s: expected a whole number from %d to %d, got %r" % (name, lo, hi, x), 64)
    return v


def _chain_arrays(chain):
    """(init, draft, target, T) copied out of a C chain."""
    np = _lib.numpy()
    L = _lib.lib()
    shape = (ctypes.c_size_t * 4)()
    L.sd_api_model_shape(chain, shape)
    V, T, ds, ts = (int(x) for x in shape)
    init = np.empty(V)
    draft = np.empty((ds, V, V))
    target = np.empty((ts, V, V))
    ptr = lambda a: a.ctypes.data_as(_lib.c_double_p)
    L.sd_api_model_copy(chain, ptr(init), ptr(draft), ptr(target))
    # A time-homogeneous part is a [V][V] matrix, as in a model file.
    return init, (draft[0] if ds == 1 else draft), (target[0] if ts == 1 else target), T


def _take(status, chain, buf):
    if status != 0:
        raise _lib.SimdecError(_lib.message(buf), status)
    try:
        return _chain_arrays(chain)
    finally:
        _lib.lib().sd_chain_free(chain)


class Model:
    """A model: `init` [V], `draft` and `target` [T][V][V] (or [V][V], the
    same matrix at every step) numpy arrays, draft[t-1][a][b] = p_t(b|a).

    Model(init, draft, target, T=None, tol=None) checks the rows as simdec
    checks a model file (finite, non-negative, summing to 1 within 1e-9, or
    within tol: rows exported in float32 sum to 1 only within about 1e-7)
    and keeps them renormalised as simdec uses them (max_row_deviation: the
    largest |row sum - 1| seen); T is needed only when both draft and
    target are [V][V].  simdec.load and simdec.generate return models
    that the commands then name exactly as the command line does (--model
    FILE, or the generator's options), so their output is the same."""

    def __init__(self, init, draft, target, T=None, tol=None):
        np = _lib.numpy()
        init = np.ascontiguousarray(init, dtype=np.float64)
        draft = np.ascontiguousarray(draft, dtype=np.float64)
        target = np.ascontiguousarray(target, dtype=np.float64)
        if init.ndim != 1:
            raise _lib.SimdecError("init: expected a vector of V probabilities, got shape %s" % (init.shape,), 65)
        V = init.shape[0]
        steps = []
        for name, a in (("draft", draft), ("target", target)):
            if a.ndim not in (2, 3) or a.shape[-2:] != (V, V):
                raise _lib.SimdecError("%s: expected shape [T][%d][%d] or [%d][%d], got %s"
                                       % (name, V, V, V, V, a.shape), 65)
            steps.append(a.shape[0] if a.ndim == 3 else None)
        known = [s for s in steps if s is not None]
        if len(set(known)) > 1:
            raise _lib.SimdecError("draft has %d steps but target has %d; expected the same horizon"
                                   % tuple(known), 65)
        if T is None:
            if not known:
                raise _lib.SimdecError("draft and target are [V][V]: give the horizon T", 64)
            T = known[0]
        elif known and T != known[0]:
            raise _lib.SimdecError("T = %d, but the arrays have %d steps" % (T, known[0]), 64)
        T = _whole("T", T, 1, _MAX_T)
        L = _lib.lib()
        chain = ctypes.c_void_p()
        buf = ctypes.create_string_buffer(1024)
        ptr = lambda a: a.ctypes.data_as(_lib.c_double_p)
        dev = ctypes.c_double(0.0)
        if tol is None:
            st = L.sd_api_model_from_arrays(V, int(T), 1 if draft.ndim == 2 else int(T),
                                            1 if target.ndim == 2 else int(T), ptr(init), ptr(draft), ptr(target),
                                            ctypes.byref(chain), buf, len(buf))
        else:
            if not isinstance(tol, (int, float)) or not (0 <= tol <= 0.5):
                raise _lib.SimdecError("tol=%r: expected a number in [0, 0.5]" % (tol,), 64)
            fn = L.sd_api_model_from_arrays_tol
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_size_t] * 4 + [_lib.c_double_p] * 3 + [
                ctypes.c_double, ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_void_p),
                ctypes.c_char_p, ctypes.c_size_t]
            st = fn(V, int(T), 1 if draft.ndim == 2 else int(T), 1 if target.ndim == 2 else int(T), ptr(init),
                    ptr(draft), ptr(target), float(tol), ctypes.byref(dev), ctypes.byref(chain), buf, len(buf))
        if st != 0:
            # the library's hint names the command-line option; here it is tol=
            buf.value = buf.value.replace(b"--tol X accepts more", b"Model(..., tol=X) accepts more")
        self.max_row_deviation = dev.value
        self.init, self.draft, self.target, self.T = _take(st, chain, buf)
        self.V = V
        self._args = None  # written to a temporary file when a command needs it
        self._tmp = None

    @classmethod
    def _of(cls, init, draft, target, T, args):
        m = cls.__new__(cls)
        m.init, m.draft, m.target, m.T, m.V = init, draft, target, T, init.shape[0]
        m.max_row_deviation = 0.0
        m._args, m._tmp = args, None
        return m

    def args(self):
        """The model options a command is given for this model."""
        if self._args is None:
            fd, path = tempfile.mkstemp(prefix="simdec-model-", suffix=".json")
            os.close(fd)
            self._finalizer = weakref.finalize(self, _remove, path)
            self.save(path)
            self._args = ["--model", path]
        return list(self._args)

    def save(self, path):
        """Writes the model as simdec-chain-1 JSON (a reload is exact)."""
        np = _lib.numpy()
        L = _lib.lib()
        chain = ctypes.c_void_p()
        buf = ctypes.create_string_buffer(1024)
        ptr = lambda a: np.ascontiguousarray(a).ctypes.data_as(_lib.c_double_p)
        st = L.sd_api_model_from_arrays(self.V, self.T, 1 if self.draft.ndim == 2 else self.T,
                                        1 if self.target.ndim == 2 else self.T, ptr(self.init),
                                        ptr(self.draft), ptr(self.target), ctypes.byref(chain), buf, len(buf))
        if st == 0:
            st = L.sd_api_model_save(chain, os.fsencode(path), buf, len(buf))
            L.sd_chain_free(chain)
        if st != 0:
            raise _lib.SimdecError(_lib.message(buf), st)

    def __repr__(self):
        return "simdec.Model(V=%d, T=%d, %s)" % (self.V, self.T, " ".join(self.args()) if self._args else "arrays")


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def load(path):
    """The model in a simdec-chain-1 file (as `--model PATH`)."""
    chain = ctypes.c_void_p()
    buf = ctypes.create_string_buffer(1024)
    st = _lib.lib().sd_api_model_load(os.fsencode(path), ctypes.byref(chain), buf, len(buf))
    init, draft, target, T = _take(st, chain, buf)
    return Model._of(init, draft, target, T, ["--model", os.fspath(path)])


def generate(V=7, T=50, model_seed=10, alpha=1.0, mix=0.5):
    """The random chain of `simdec gen --V V --T T --model-seed S --alpha A
    --mix M` (the default model of every command)."""
    # The ranges of the options --V, --T and --model-seed of every command,
    # which then name this model.
    V, T = _whole("V", V, 1, _MAX_V), _whole("T", T, 1, _MAX_T)
    model_seed = _whole("model_seed", model_seed, 0, 2**32 - 1)
    chain = ctypes.c_void_p()
    buf = ctypes.create_string_buffer(1024)
    st = _lib.lib().sd_api_model_generate(V, T, model_seed, float(alpha), float(mix),
                                         ctypes.byref(chain), buf, len(buf))
    init, draft, target, T = _take(st, chain, buf)
    args = ["--V", str(V), "--T", str(T), "--model-seed", str(model_seed),
            "--model-alpha", repr(float(alpha)), "--mix", repr(float(mix))]
    return Model._of(init, draft, target, T, args)
