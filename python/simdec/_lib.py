"""The shared library libsimdec.so and its C functions (cli/api.h,
sims/engine/sd_callback.h), loaded on first use.

Where the library is: $SIMDEC_LIB if set, else build/libsimdec.so of the
clone this package sits in (python/simdec/../../build/libsimdec.so), which
`make python` builds.
"""
import ctypes
import operator
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PATH = os.path.normpath(os.path.join(_HERE, "..", "..", "build", "libsimdec.so"))

c_double_p = ctypes.POINTER(ctypes.c_double)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)

# sd_callback_step_fn (sims/engine/sd_callback.h).
STEP_FN = ctypes.CFUNCTYPE(
    ctypes.c_long,
    ctypes.c_void_p,  # user
    ctypes.c_void_p,  # const sd_chain *
    ctypes.c_void_p,  # const sd_params *
    ctypes.c_void_p,  # sd_stream *
    ctypes.c_size_t,  # n
    ctypes.c_size_t,  # prev
    c_size_t_p,  # out
    ctypes.c_size_t,  # cap
    c_size_t_p,  # accepted
    ctypes.POINTER(ctypes.c_int),  # rejected
    ctypes.POINTER(ctypes.c_uint),  # target_calls
)


class TreeView(ctypes.Structure):
    """sd_tree_view (sims/engine/sd_verifier.h): one drafted tree."""
    _fields_ = [
        ("V", ctypes.c_size_t),
        ("D", ctypes.c_size_t),
        ("nodes", ctypes.c_size_t),
        ("t", ctypes.c_size_t),
        ("draw", ctypes.c_int),
        ("b", c_size_t_p),
        ("off", c_size_t_p),
        ("tok", c_size_t_p),
        ("parent", c_size_t_p),
        ("depth", c_size_t_p),
    ]


# sd_callback_tree_fn (sims/engine/sd_callback.h).
TREE_FN = ctypes.CFUNCTYPE(
    ctypes.c_long,
    ctypes.c_void_p,  # user
    ctypes.c_void_p,  # const sd_chain *
    ctypes.c_void_p,  # const sd_params *
    ctypes.POINTER(TreeView),
    c_double_p,  # pi [nodes]
    c_double_p,  # law [nodes][V]
)


class NodeView(ctypes.Structure):
    """sd_node_view (sims/engine/sd_verifier.h): one inner node of a drafted tree."""
    _fields_ = [
        ("V", ctypes.c_size_t),
        ("t", ctypes.c_size_t),
        ("depth", ctypes.c_size_t),
        ("draw", ctypes.c_int),
        ("path", c_size_t_p),
        ("q", c_double_p),
        ("p", c_double_p),
        ("m", ctypes.c_size_t),
        ("kids", c_size_t_p),
    ]


# sd_callback_node_fn (sims/engine/sd_callback.h).
NODE_FN = ctypes.CFUNCTYPE(
    ctypes.c_long,
    ctypes.c_void_p,  # user
    ctypes.c_void_p,  # const sd_chain *
    ctypes.c_void_p,  # const sd_params *
    ctypes.POINTER(NodeView),
    c_double_p,  # go [m]
    c_double_p,  # residual [V]
)


class CallbackParam(ctypes.Structure):
    """sd_callback_param (sims/engine/sd_callback.h)."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("kind", ctypes.c_int),
        ("default", ctypes.c_double),
        ("min", ctypes.c_double),
        ("max", ctypes.c_double),
        ("choices", ctypes.c_char_p),
        ("help", ctypes.c_char_p),
    ]


class Field(ctypes.Structure):
    """sd_api_field (cli/api.h): one option of a command by name, its value
    as text (None: a flag)."""
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


# sd_api_run, sd_api_check, sd_api_eval, sd_api_lp: a field that is not one of the command's (cli/cli_opts.h).
NOT_A_FIELD = 1000


class Error(ctypes.Structure):
    """sd_error (src/sd_error.h)."""
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 1024)]


class SimdecError(Exception):
    """A command or library call failed.  `status` is the exit status the
    command line would give (64 usage, 65 bad data, 66 cannot open, 70
    internal, 71 out of memory, 73 cannot write); the message is its
    message, without the "simdec: " prefix."""

    def __init__(self, message, status):
        super().__init__(message)
        self.message = message
        self.status = status


def whole(x):
    """x as an int when it is a whole number (an int, a numpy integer or a
    float with a whole value), else None: int() would truncate 7.5 to 7."""
    try:
        return operator.index(x)
    except TypeError:
        return int(x) if isinstance(x, float) and x.is_integer() else None


# sd_status -> exit status (cli/cli_exit.c, cli_exit_code).
_EXIT = {0: 0, 1: 64, 2: 65, 3: 66, 4: 71, 5: 65, 6: 70, 7: 70, 8: 73}


def exit_status(code):
    return _EXIT.get(code, 70)


def _declare(lib):
    P, S, D, I, V = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_double, ctypes.c_int, ctypes.c_char_p
    sigs = {
        "sd_api_main": (I, [I, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(P), ctypes.POINTER(P)]),
        "sd_api_free": (None, [P]),
        "sd_api_run": (I, [V, ctypes.POINTER(Field), S, ctypes.POINTER(P), ctypes.POINTER(P)]),
        "sd_api_check": (I, [V, ctypes.POINTER(Field), S, ctypes.POINTER(P), ctypes.POINTER(P)]),
        "sd_api_eval": (I, [V, ctypes.POINTER(Field), S, ctypes.POINTER(P), ctypes.POINTER(P)]),
        "sd_api_lp": (I, [V, ctypes.POINTER(Field), S, ctypes.POINTER(P), ctypes.POINTER(P)]),
        "sd_api_model_load": (I, [V, ctypes.POINTER(P), V, S]),
        "sd_api_model_generate": (I, [S, S, ctypes.c_ulong, D, D, ctypes.POINTER(P), V, S]),
        "sd_api_model_from_arrays": (I, [S, S, S, S, c_double_p, c_double_p, c_double_p, ctypes.POINTER(P), V, S]),
        "sd_api_model_shape": (None, [P, c_size_t_p]),
        "sd_api_model_copy": (None, [P, c_double_p, c_double_p, c_double_p]),
        "sd_api_model_save": (I, [P, V, V, S]),
        "sd_chain_free": (None, [P]),
        "sd_callback_add": (I, [V, V, ctypes.POINTER(CallbackParam), S, I, I, STEP_FN, P, ctypes.POINTER(Error)]),
        "sd_callback_vocab": (S, [P]),
        "sd_callback_horizon": (S, [P]),
        "sd_callback_rows": (c_double_p, [P, I, c_size_t_p]),
        "sd_callback_uniform": (D, [P]),
        "sd_callback_param_value": (D, [P, I]),
        "sd_callback_tree": (S, [P, c_size_t_p, S]),
        "sd_callback_tree_rule": (I, [V, ctypes.c_uint, TREE_FN, P, ctypes.POINTER(Error)]),
        "sd_callback_node_rule": (I, [V, ctypes.c_uint, NODE_FN, P, ctypes.POINTER(Error)]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args


_lib = None


def lib():
    """The loaded library (loaded once).  RTLD_GLOBAL: plugins that
    commands load (--plugin FILE.so) resolve simdec's functions in it."""
    global _lib
    if _lib is None:
        path = os.environ.get("SIMDEC_LIB") or DEFAULT_PATH
        if not os.path.exists(path):
            raise SimdecError(
                "%s: no such file; build it with 'make python' in the clone, or set "
                "SIMDEC_LIB to the path of libsimdec.so" % path, 66)
        handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        _declare(handle)
        _lib = handle
    return _lib


def numpy():
    """numpy, imported when arrays are first needed, so that `import simdec`
    works without it."""
    import numpy as np
    return np


def message(buf):
    """The text of a message buffer (ctypes.create_string_buffer)."""
    return buf.value.decode("utf-8", "replace")
