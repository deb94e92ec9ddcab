"""NumPy's floating-point warnings for kernels that deferred them (FpMode.Deferred).

A kernel computes on where NumPy would warn (the values are the same) and records which
warning each operation site would have raised; `emit` then raises it exactly as NumPy's
scalar arithmetic does: the message NumPy uses for that operation, dtype and condition
(found by letting NumPy raise it once), as a RuntimeWarning attributed to the user's
file and line, through the module's warning registry (so "default" and "once" filters
show it as often as they would have)."""
import warnings

import numpy as np

_messages = {}

# Operands that make NumPy raise each condition, per operation.
def _samples(op, dtype, kind):
    t = np.dtype(dtype).type
    if np.dtype(dtype).kind == "f":
        big = np.finfo(dtype).max
        table = {
            ("add", "overflow"): (big, big), ("subtract", "overflow"): (big, -big),
            ("multiply", "overflow"): (big, 2), ("divide", "overflow"): (big, 0.5),
            ("divide", "divide"): (1, 0), ("add", "invalid"): (np.inf, -np.inf),
            ("subtract", "invalid"): (np.inf, np.inf), ("multiply", "invalid"): (0, np.inf),
            ("divide", "invalid"): (0, 0),
        }
    else:
        info = np.iinfo(dtype)
        table = {("add", "overflow"): (info.max, 1), ("subtract", "overflow"): (info.min, 1),
                 ("multiply", "overflow"): (info.max, 2)}
    a, b = table[(op, kind)]
    return t(a), t(b)


_OPS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
        "multiply": lambda a, b: a * b, "divide": lambda a, b: a / b}
_WORDS = {"divide": "divide by zero", "overflow": "overflow", "invalid": "invalid value"}


def message(op, dtype, kind):
    key = (op, dtype, kind)
    m = _messages.get(key)
    if m is None:
        m = f"{_WORDS[kind]} encountered in scalar {op}"
        # NumPy's own text, from the error it raises under errstate "raise": catching the
        # warning instead would mutate the warnings filters, which resets every module's
        # registry and lets "default" filters show a warning again.
        try:
            a, b = _samples(op, dtype, kind)
            with np.errstate(all="raise"):
                _OPS[op](a, b)
        except FloatingPointError as e:
            if _WORDS[kind] in str(e):
                m = str(e)
        except Exception:  # keep the composed message
            pass
        _messages[key] = m
    return m


def emit(op, dtype, kind, filename, lineno, globals_):
    """Raise the warning NumPy would have raised at `filename:lineno`."""
    if not isinstance(globals_, dict):
        globals_ = {}
    module = globals_.get("__name__", "<string>")
    registry = globals_.setdefault("__warningregistry__", {})
    # No module_globals, as CPython's own warnings from C code: with them, warn_explicit asks
    # the module's loader for its source, which fails for `python -c` code.
    warnings.warn_explicit(message(op, dtype, kind), RuntimeWarning, filename, lineno, module, registry)
