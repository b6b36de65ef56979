"""simdec from Python: models as numpy arrays, the commands as functions
returning the dictionaries of their --json output, and verifiers written in
Python that the trial engine runs like those written in C.

    import simdec
    m = simdec.generate(V=7, T=50, model_seed=10)     # m.init, m.draft, m.target
    r = simdec.run(m, "block", trials=10000, seed=1, gamma=4)
    r["target_calls"]["mean"], r["exact_target_calls"]

The functions run simdec's commands in this process through build/libsimdec.so
(`make python`; or $SIMDEC_LIB).  See README.md, "Python".
"""
from ._lib import SimdecError
from ._model import Model, generate, load
from ._commands import check, command, eval, lp, main, run  # noqa: A004
from ._verifier import Iteration, Node, Tree, Verifier, verifier
from ._trace import trace

__all__ = ["SimdecError", "Model", "generate", "load", "run", "check", "eval", "lp", "command", "main",
           "Verifier", "verifier", "Iteration", "Tree", "Node", "trace"]
