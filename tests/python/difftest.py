"""Differential testing against CPython.

run(src, name, make_args) defines the function `name` from `src` twice - once plainly,
once with stagepy enabled (so its loop nests are rewritten) - calls each several times on
fresh inputs from make_args(), and checks that everything a user can observe is the same:
the return value (value and exact type), the exception (type and message), the warnings,
and the arguments the function mutated (values, dtypes). Functions usually end with
`return locals()`, so every local variable after the loops is compared too.

It returns stagepy's report records for the function, so tests can also check that the
nest really ran natively (a differential test that never leaves CPython proves nothing).
"""
import array
import contextlib
import math
import signal
import sys
import textwrap
import types
import threading
import warnings

import numpy as np

import stagepy
from helpers import compile_module

CALLS = 4  # enough for CPython's specializing interpreter to warm up the rewritten code


def same(a, b, path="value"):
    """Raises AssertionError describing the first difference between a and b."""
    if type(a) is not type(b):
        raise AssertionError(f"{path}: type {type(a).__name__} != {type(b).__name__} ({a!r} vs {b!r})")
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            raise AssertionError(f"{path}: array {a.dtype}{a.shape} != {b.dtype}{b.shape}")
        if a.dtype.kind == "c":  # part by part, signed zeros and NaNs included
            same(a.real.copy(), b.real.copy(), path + ".real")
            same(a.imag.copy(), b.imag.copy(), path + ".imag")
            return
        if a.dtype.kind == "f":
            # Signed zeros count; a NaN's sign does not (IEEE 754 leaves the sign of a NaN
            # an operation produces unspecified, and compilers commute operands).
            nan = np.isnan(a)
            eq = np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a)[~nan], np.signbit(b)[~nan])
        else:
            eq = np.array_equal(a, b)
        if not eq:
            diff = np.argwhere(~((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a == b))
            raise AssertionError(f"{path}: arrays differ at {diff[:5].tolist()}:\n{a}\n{b}")
        return
    if isinstance(a, array.array):
        if a.typecode != b.typecode:
            raise AssertionError(f"{path}: array.array of '{a.typecode}' != '{b.typecode}'")
        same(a.tolist(), b.tolist(), path)
        return
    if isinstance(a, (complex, np.complexfloating)):
        same(float(a.real), float(b.real), path + ".real")
        same(float(a.imag), float(b.imag), path + ".imag")
        return
    if isinstance(a, (float, np.floating)):
        if math.isnan(a) and math.isnan(b):
            return
        if a != b or math.copysign(1, a) != math.copysign(1, b):
            raise AssertionError(f"{path}: {a!r} != {b!r}")
        return
    if isinstance(a, dict):
        if set(a) != set(b):
            raise AssertionError(f"{path}: keys {sorted(a)} != {sorted(b)}")
        for k in a:
            same(a[k], b[k], f"{path}[{k!r}]")
        return
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            raise AssertionError(f"{path}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
        return
    if type(a).__eq__ is object.__eq__ and (hasattr(a, "__dict__") or hasattr(type(a), "__slots__")) \
            and not isinstance(a, (type, types.ModuleType, types.FunctionType)):
        # Plain objects (equal only to themselves): by their attributes, the instance dict's
        # (its keys too) and the slots'.
        same(_attributes(a), _attributes(b), path)
        return
    if a != b:
        raise AssertionError(f"{path}: {a!r} != {b!r}")


def _attributes(o):
    out = dict(getattr(o, "__dict__", {}))
    for k in type(o).__mro__:
        for name in getattr(k, "__slots__", ()):
            if name not in ("__dict__", "__weakref__"):
                out["slot " + name] = getattr(o, name, "<unset>")
    return out


def _snapshot(args):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a.copy())
        elif isinstance(a, list):
            out.append(list(a))
        else:
            out.append(a)
    return out


TIMEOUT_S = 60  # a call that runs longer is reported as a hang (with the program)


class Hang(BaseException):  # not caught as the program's own exception
    pass


class TooSlowToCompare(Exception):
    """stagepy's run hung, and CPython's own run of the program does not finish in time either
    (a random program squaring a Python int in a loop): nothing to compare."""


@contextlib.contextmanager
def _time_limit(seconds):
    """Raises Hang in the calling code if it runs longer (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _outcome(fn, args, warn_filter):
    with warnings.catch_warnings(record=True) as caught, _time_limit(TIMEOUT_S):
        warnings.simplefilter(warn_filter)
        try:
            r = ("return", fn(*args))
        except Exception as e:  # compared below
            r = ("raise", type(e), str(e))
    ws = [(type(w.message), str(w.message), w.lineno) for w in caught]
    return r, ws, _snapshot(args)


def run(src, name, make_args, calls=CALLS, expect="native", globals_=None, warn_filter="always"):
    """Runs both versions; returns the report records of the stagepy version's nests.

    expect: "native" (some nest ran natively and every call of it finished there),
    "bail" (native code ran and handed a statement to CPython at least once),
    "interpreted" (no nest ran natively), or None (no check).
    warn_filter: the warnings filter during the calls. "always" shows every occurrence
    (kernels then hand NumPy's warnings to CPython); "default" shows each once per line,
    which lets kernels compute on and emit NumPy's warnings afterwards."""
    src = textwrap.dedent(src)
    code_py = compile_module(src)
    ns_py = dict(globals_ or {})
    exec(code_py, ns_py)
    with stagepy.enable():
        code_sp = compile_module(src)
        ns_sp = dict(globals_ or {})
        exec(code_sp, ns_sp)
        fn_sp = ns_sp[name]
        hang = None
        try:
            got = [_outcome(fn_sp, make_args(), warn_filter) for _ in range(calls)]
        except Hang as e:
            hang = e
    if hang is not None:  # (CPython's run, with stagepy off)
        try:
            with _time_limit(TIMEOUT_S // 2):
                ns_py[name](*make_args())
        except Hang:
            raise TooSlowToCompare(f"CPython's own run takes over {TIMEOUT_S // 2} s") from None
        except Exception:  # the program's own error: CPython finished
            pass
        raise hang
    fn_py = ns_py[name]
    want = [_outcome(fn_py, make_args(), warn_filter) for _ in range(calls)]
    for k, (g, w) in enumerate(zip(got, want)):
        (gr, gw, ga), (wr, ww, wa) = g, w
        if gr[0] != wr[0]:
            raise AssertionError(f"call {k}: stagepy {gr[0]}s {gr[1:]}, CPython {wr[0]}s {wr[1:]}")
        if gr[0] == "raise":
            same((gr[1].__name__, gr[2]), (wr[1].__name__, wr[2]), f"call {k} exception")
        else:
            same(gr[1], wr[1], f"call {k} result")
        same(ga, wa, f"call {k} arguments")
        same([(t.__name__, m, ln) for t, m, ln in gw], [(t.__name__, m, ln) for t, m, ln in ww], f"call {k} warnings")
    recs = [r for r in stagepy.report() if r["file"] == code_sp.co_filename]
    check_expectation(recs, expect)
    return recs


def check_expectation(recs, expect):
    native = sum(r["native_calls"] for r in recs)
    bails = sum(r["bailouts"] for r in recs)
    if expect == "native":
        assert native > 0, f"no nest ran natively: {[(r['line'], r['reason']) for r in recs]}"
    elif expect == "bail":
        assert bails > 0, f"native code never handed over to CPython: {recs}"
    elif expect == "interpreted":
        assert native == 0, f"a nest ran natively: {recs}"


def loops(recs):
    """{variable: loop record} over the nests of recs (the last loop of that name wins)."""
    return {l["variable"]: l for r in recs for l in r["loops"]}


def ran_parallel(recs, var):
    """Whether loop `var` ran in parallel at least once: on threads, or on the GPU (a GPU,
    or its emulation)."""
    loop = loops(recs)[var]
    return loop["parallel_runs"] + loop.get("gpu", {}).get("launches", 0) > 0


def assert_reason(recs, reason):
    """Some nest's report record gives a reason that mentions `reason`."""
    assert any(reason in (r["reason"] or "") for r in recs), [r["reason"] for r in recs]


def run_module(src, make_globals, expect="native", warn_filter="always"):
    """Module-level code: exec `src` as a module twice (plain and under stagepy) in fresh
    globals from make_globals(); compares the outcomes, the warnings and the resulting
    globals (the module's own functions by name). A stagepy run that hangs raises Hang, or
    TooSlowToCompare where CPython's own run does not finish in time either."""
    src = textwrap.dedent(src)
    with stagepy.enable():
        code = compile_module(src)
        g_sp = make_globals()
        try:
            r_sp = _exec_outcome(code, g_sp, warn_filter)
        except Hang as e:
            hang = e
        else:
            hang = None
    g_py = make_globals()
    try:
        r_py = _exec_outcome(compile_module(src), g_py, warn_filter,
                             TIMEOUT_S // 2 if hang is not None else TIMEOUT_S)
    except Hang:
        if hang is not None:
            raise TooSlowToCompare(f"CPython's own run takes over {TIMEOUT_S // 2} s") from None
        raise
    if hang is not None:
        raise hang
    same(r_sp, r_py, "outcome")
    for g in (g_py, g_sp):
        g.pop("__builtins__", None)
        g.pop("__warningregistry__", None)  # (its version counts every filter change)
        for k, v in g.items():  # the module's own functions: one per exec, compared by name
            if isinstance(v, types.FunctionType):
                g[k] = f"<function {v.__qualname__}>"
    same(g_sp, g_py, "globals")
    recs = [r for r in stagepy.report() if r["file"] == code.co_filename]
    check_expectation(recs, expect)
    return recs


def _exec_outcome(code, g, warn_filter="always", seconds=TIMEOUT_S):
    with warnings.catch_warnings(record=True) as caught, _time_limit(seconds):
        warnings.simplefilter(warn_filter)
        try:
            exec(code, g)
            r = ("ok",)
        except Exception as e:
            r = ("raise", type(e).__name__, str(e))
    return r, [(type(w.message).__name__, str(w.message), w.lineno) for w in caught]