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
    if np.dtype(dtype).kind in "fc":  # (complex: a part's operation raises it)
        big = np.finfo(dtype).max
        table = {
            ("add", "overflow"): (big, big), ("subtract", "overflow"): (big, -big),
            ("multiply", "overflow"): (big, 2), ("divide", "overflow"): (big, 0.5),
            ("divide", "divide"): (1, 0), ("add", "invalid"): (np.inf, -np.inf),
            ("subtract", "invalid"): (np.inf, np.inf), ("multiply", "invalid"): (0, np.inf),
            ("divide", "invalid"): (0, 0), ("power", "overflow"): (big, 2),
            ("power", "divide"): (0, -1), ("power", "invalid"): (-2, 0.5),
        }
    else:
        info = np.iinfo(dtype)
        table = {("add", "overflow"): (info.max, 1), ("subtract", "overflow"): (info.min, 1),
                 ("multiply", "overflow"): (info.max, 2)}
    a, b = table[(op, kind)]
    return t(a), t(b)


_OPS = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b,
        "multiply": lambda a, b: a * b, "divide": lambda a, b: a / b, "power": lambda a, b: a ** b}
_WORDS = {"divide": "divide by zero", "overflow": "overflow", "invalid": "invalid value"}


def _as(type_name, v):
    """`v` as a value of the operand type the kernel names ("np.float64", "int", "bool"...),
    or None where that type cannot hold it exactly."""
    if isinstance(v, (complex, np.complexfloating)) and type_name not in ("complex", "np.complex64", "np.complex128"):
        if v.imag != 0:
            return None
        v = v.real  # (a real type of a complex operation's operand: its real part)
    try:
        if type_name in ("bool", "np.bool_"):
            if v not in (0, 1):
                return None
            return bool(v) if type_name == "bool" else np.bool_(v)
        if type_name == "float":
            return float(v)
        if type_name == "complex":
            return complex(v)
        if type_name == "int":
            return int(v) if float(v).is_integer() else None
        if type_name.startswith("np."):
            t = getattr(np, type_name[3:])
            with np.errstate(all="ignore"):
                x = t(v)
            return x if (x == v or (x != x and v != v)) else None
    except (TypeError, ValueError, OverflowError, AttributeError):
        pass
    return None


def _raised(op, a, b):
    """The FloatingPointError text NumPy raises for a op b, or None."""
    try:
        with np.errstate(all="raise"):
            _OPS[op](a, b)
    except FloatingPointError as e:
        return str(e)
    except Exception:
        pass
    return None


def message(op, dtype, kind, lhs="", rhs=""):
    key = (op, dtype, kind, lhs, rhs)
    m = _messages.get(key)
    if m is None and op == "cast":  # a number cast to `dtype` before an operation
        with np.errstate(all="raise"):
            try:
                np.dtype(dtype).type(np.float64(1e300))
            except FloatingPointError as e:
                m = str(e)
        _messages[key] = m = m or "overflow encountered in cast"
    if m is None:
        # NumPy's own text, from the error it raises under errstate "raise": catching the
        # warning instead would mutate the warnings filters, which resets every module's
        # registry and lets "default" filters show a warning again. The operands have the
        # kernel's operand types where they can: NumPy says "scalar divide" for its scalar
        # arithmetic and "divide" where it goes through the ufunc (np.bool_ / int).
        a, b = _samples(op, dtype, kind)
        typed = (_as(lhs, a), _as(rhs, b)) if lhs and rhs else (None, None)
        m = _raised(op, *typed) if None not in typed else None
        if m is None or _WORDS[kind] not in m:
            m = _raised(op, a, b)
            if m is None or _WORDS[kind] not in m:
                m = f"{_WORDS[kind]} encountered in scalar {op}"
            # Which of NumPy's paths these operand types take, from a division by zero.
            probe = (_as(lhs, 1), _as(rhs, 0)) if lhs and rhs else (None, None)
            said = _raised("divide", *probe) if None not in probe else None
            if said is not None and "scalar" not in said:
                m = m.replace("scalar ", "")
        _messages[key] = m
    return m


_int_warns = {}


def int_overflow_warns(op, dtype, lhs, rhs):
    """Whether NumPy warns where `lhs op rhs` (operand types as the kernel names them:
    "np.bool_", "int", "np.uint8"...) wraps around in integer `dtype`. Its scalar arithmetic
    does; where the operand types send it through the ufunc instead (an np.bool_ on the left
    of an integer, or a Python int on the left of an np.bool_, in NumPy 2.x), the integer
    loop wraps without a word. Found by making it wrap once (True where no operands of these
    types can: the warning the kernel recorded stands, as before)."""
    key = (op, dtype, lhs, rhs)
    got = _int_warns.get(key)
    if got is None:
        got = True
        info = np.iinfo(dtype)
        values = [info.min, info.max, 0, 1, 2, -1]
        for x in values:
            for y in values:
                a, b = _as(lhs, x), _as(rhs, y)
                if a is None or b is None:
                    continue
                try:
                    with np.errstate(all="ignore"):
                        r = _OPS[op](a, b)
                except Exception:  # noqa: BLE001
                    continue
                if isinstance(r, np.integer) and r.dtype == np.dtype(dtype) and int(r) != _OPS[op](int(a), int(b)):
                    got = _raised(op, a, b) is not None
                    break
            else:
                continue
            break
        _int_warns[key] = got
    return got


def emit(op, dtype, kind, filename, lineno, globals_, lhs="", rhs=""):
    """Raise the warning NumPy would have raised at `filename:lineno` for an operation on
    operands of types `lhs` and `rhs`."""
    if kind == "overflow" and lhs and rhs and np.dtype(dtype).kind in "iu" and op in ("add", "subtract", "multiply") \
            and not int_overflow_warns(op, dtype, lhs, rhs):
        return
    if not isinstance(globals_, dict):
        globals_ = {}
    module = globals_.get("__name__", "<string>")
    registry = globals_.setdefault("__warningregistry__", {})
    # No module_globals, as CPython's own warnings from C code: with them, warn_explicit asks
    # the module's loader for its source, which fails for `python -c` code.
    warnings.warn_explicit(message(op, dtype, kind, lhs, rhs), RuntimeWarning, filename, lineno, module, registry)
