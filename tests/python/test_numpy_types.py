"""NumPy scalar types called as functions in a nest (`s = np.float32(0)`, `np.int32(x)`).

The kernel converts as NumPy does when it stores a value into an element of that dtype: a
Python int must fit (else OverflowError, from CPython), a float is truncated towards zero,
a NumPy integer is cast (wrapping), and anything NumPy would warn about or reject goes to
CPython at that statement. Every test is differential (difftest.run): values, types, the
exception and its message, the warnings."""
import numpy as np
import pytest

import difftest

G = {"np": np}


def test_float32_accumulator_over_a_float32_array():
    # The sum stays a numpy.float32, as in CPython (np.float32 + np.float32).
    recs = difftest.run("""
    def f(a, w):
        n = len(a)
        out = np.zeros(n - w + 1, dtype=np.float32)
        for i in range(n - w + 1):
            s = np.float32(0)
            for j in range(w):
                s += a[i + j]
            out[i] = s / w
        return locals()
    """, "f", lambda: (np.random.default_rng(1).random(300).astype(np.float32), 5), globals_=G)
    assert all(r["reason"] == "" for r in recs if r["line"] > 0 and r["native_calls"])


@pytest.mark.parametrize("t", ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "uint16", "uint32",
                               "uint64", "bool_"])
@pytest.mark.parametrize("src", ["A[i]", "B[i]", "i", "i * 1.5 - 40", "i > 40", "float(i) / 7"])
def test_conversions_of_every_kind_of_real(t, src):
    # A: float64 elements, B: int64 elements; Python ints, floats and bools.
    recs = difftest.run(f"""
    def f(A, B, n):
        for i in range(n):
            x = np.{t}({src})
            y = x
        return locals()
    """, "f", lambda: (np.linspace(-300.0, 300.0, 90), np.arange(-45, 45) * 7, 90), globals_=G, expect=None)
    # Where every value fits the type, the whole loop runs natively.
    fits = t in ("float64", "float32", "bool_", "int64") or (t in ("int32", "int16") and src != "A[i]" or
                                                            t == "int16" and src == "A[i]")
    if fits:
        assert recs[0]["native_calls"] > 0 and recs[0]["bailouts"] == 0, recs[0]


@pytest.mark.parametrize("t, value", [("int8", 300), ("uint8", -1), ("int32", 2**40), ("int64", 1e19),
                                      ("int32", float("nan")), ("int16", float("inf")), ("uint64", -1),
                                      ("uint64", 2**63 + 5), ("uint32", 2**32), ("uint16", -0.5)])
def test_a_python_value_out_of_range_raises_at_the_same_iteration(t, value):
    # OverflowError / ValueError from CPython at i == 5, after the earlier stores.
    difftest.run(f"""
    def f(A, v):
        for i in range(10):
            A[i] = np.{t}(v if i == 5 else i)
        return locals()
    """, "f", lambda: (np.zeros(10), value), globals_=G, expect=None)


@pytest.mark.parametrize("value", [1e300, -1e300, np.inf, np.nan, 2.0**30 + 1, 3.4e38])
def test_float32_of_large_or_special_values(value):
    # 1e300 overflows with NumPy's RuntimeWarning (CPython raises it); a Python int above 2**24
    # is converted through a double by NumPy (CPython does it); inf and nan convert quietly.
    difftest.run("""
    def f(A, v):
        for i in range(10):
            A[i] = np.float32(v) if i % 3 == 0 else np.float32(i)
        return locals()
    """, "f", lambda: (np.zeros(10, dtype=np.float32), value if value != 2.0**30 + 1 else 2**30 + 1),
        globals_=G, expect=None, warn_filter="default")


def test_numpy_integers_are_cast_with_wrap_around():
    difftest.run("""
    def f(B):
        for i in range(len(B)):
            B[i] = np.int8(B[i]) + np.uint8(B[i] * 3)
        return locals()
    """, "f", lambda: (np.arange(0, 2000, 7, dtype=np.int64),), globals_=G, expect=None)


def test_a_name_that_is_not_numpys_type_stays_interpreted():
    class Fake:
        float32 = staticmethod(lambda x: x * 2)

        def __eq__(self, other):  # (difftest compares the arguments after the calls)
            return type(other) is Fake
    difftest.run("""
    def f(A, np):
        for i in range(len(A)):
            A[i] = np.float32(A[i])
        return A
    """, "f", lambda: (np.arange(5.0), Fake()), expect="interpreted")


def test_an_fnv_hash_in_uint64_wraps_and_warns_as_numpy_does():
    # np.uint64 arithmetic wraps modulo 2**64; NumPy's scalar multiply warns on overflow.
    difftest.run("""
    def f(data):
        h = np.uint64(14695981039346656037)
        for i in range(len(data)):
            h = (h ^ np.uint64(data[i])) * np.uint64(1099511628211)
        return h
    """, "f", lambda: (list(range(40)),), globals_=G, expect=None, warn_filter="default")


@pytest.mark.parametrize("x", ["np.int32(A[i] * 10)", "np.float32(A[i])", "np.int8(A[i])", "np.uint8(A[i])",
                               "np.bool_(A[i] > 20)", "A[i]", "float(A[i])", "int(A[i])"])
@pytest.mark.parametrize("y", ["1.5", "np.int64(3)", "np.float32(0.5)", "np.float64(1.25)", "2", "np.int32(i % 4)"])
def test_powers_of_numpy_scalars_take_numpys_path(x, y):
    # NumPy computes x ** y with its scalar math (libm's pow) where one operand is a NumPy
    # scalar of the result's type, and with its power ufunc's loop (which may differ from
    # libm in the last bit) where it promotes both: np.int32(7) ** 1.5 (the fuzzer's find).
    difftest.run(f"""
    def f(A, n):
        out = []
        for i in range(n):
            out.append({x} ** {y})
        return out
    """, "f", lambda: (np.random.default_rng(3).random(60) * 40, 60), globals_=G, expect=None, warn_filter="default")
