"""Where the tests find simdec: the package from python/ (PYTHONPATH), the
library from $SIMDEC_LIB, the command line from $SIMDEC_BIN and the example
plugins from $SIMDEC_EXAMPLES_DIR (mk/python.mk sets them all; the defaults
are those of a clone built with `make`, `make python` and `make examples`)."""
import json
import os
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = os.environ.get("SIMDEC_BIN") or os.path.join(ROOT, "simdec")
EXAMPLES = os.environ.get("SIMDEC_EXAMPLES_DIR") or os.path.join(ROOT, "build", "examples")

def is_timing(key):
    """Keys whose values measure the machine (wall time, throughput), not the
    result: left out when the package's dictionaries are compared with the
    command line's."""
    return key == "seconds" or key.endswith("_seconds") or "per_second" in key


def strip_timing(v):
    if isinstance(v, dict):
        return {k: strip_timing(x) for k, x in v.items() if not is_timing(k)}
    if isinstance(v, list):
        return [strip_timing(x) for x in v]
    return v


@pytest.fixture
def cli():
    """cli(*args) -> the JSON that `simdec ARGS... --json` prints."""
    def run(*args):
        p = subprocess.run([BIN, *[str(a) for a in args], "--json"], capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)
    return run


@pytest.fixture
def examples():
    return EXAMPLES
