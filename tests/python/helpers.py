"""Helpers shared by the Python tests and the fuzzer."""
import itertools
import os
import subprocess
import sys
import textwrap

from stagepy import _hook

core = _hook.core()
_counter = itertools.count()

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compile_module(src, filename=None):
    """Compile `src` into a fresh module code object (fresh code objects every call)."""
    filename = filename or f"<stagepy-test-{next(_counter)}>"
    return compile(textwrap.dedent(src), filename, "exec")


def code_of(src, name, filename=None):
    """The code object of the function `name` defined (at any depth) in `src`."""
    def walk(code):
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                if c.co_name == name:
                    return c
                found = walk(c)
                if found is not None:
                    return found
        return None
    found = walk(compile_module(src, filename))
    assert found is not None, name
    return found


def define(src, name, ns=None):
    """Exec `src` (freshly compiled) and return the object it binds to `name`."""
    ns = {} if ns is None else ns
    exec(compile_module(src), ns)
    return ns[name]


def run_python(args, env_extra=None, cwd=None, timeout=300):
    """Run this interpreter in a subprocess; returns CompletedProcess (text)."""
    env = dict(os.environ)
    env.pop("STAGEPY", None)
    env.pop("STAGEPY_REPORT", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable] + list(args), capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=timeout)


def whole(shape, seed=0, lo=-50, hi=50):
    """Random whole numbers as float64: sums of them are exact in any order (parallel sums
    may be reassociated, docs/semantics.md)."""
    import numpy as np
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.float64)
