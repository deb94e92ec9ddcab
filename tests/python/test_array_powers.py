"""Powers and NumPy's two-argument functions on whole arrays and slices: `A[i, :] ** 1.5`,
`x ** 3`, `x ** -1`, `x ** 0.5`, `np.power(x, y)`, `np.arctan2`, `np.hypot`, element by element
through NumPy's own loops where their self-test finds them giving the ufunc's values for
arrays, with a number on either side (a number raised to an array only as np.power refuses
it: there NumPy's loop differs from the ufunc). ndarray.__pow__ takes other functions for
some Python exponents (np.reciprocal for -1, np.sqrt for 0.5): kernels follow it for
constants, and leave a Python number in a variable to CPython."""
import numpy as np
import pytest

import difftest

G = {"np": np}


def data(n=12, m=9, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    a = (rng.random((n, m)) * 4 - 1).astype(dtype)
    a[0, :4] = [0.0, -0.0, 0.75, 1e-300]
    return a


NATIVE = [
    ("constant exponents", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = np.abs(A[i, :]) ** 1.5 + A[i, :] ** 3 - A[i, 1:2] ** 7.0
        return locals()
    """, lambda: (data(), np.zeros((12, 9)))),
    ("** -1 is np.reciprocal, ** 0.5 np.sqrt", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = (A[i, :] + 2.0) ** -1 + (A[i, :] + 1.0) ** 0.5
        return locals()
    """, lambda: (data() + 1.5, np.zeros((12, 9)))),
    ("a NumPy scalar exponent and an array exponent", """
    def f(A, out, p):
        for i in range(1, A.shape[0]):
            out[i, :] = np.abs(A[i, :]) ** p + np.power(np.abs(A[i - 1, :]), A[i, :])
        return locals()
    """, lambda: (data(), np.zeros((12, 9)), np.float64(2.25))),
    ("float32 rows", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = np.abs(A[i, :]) ** 2.5
        return locals()
    """, lambda: (data(dtype=np.float32), np.zeros((12, 9), np.float32))),
    ("np.arctan2 and np.hypot of rows, columns and numbers", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = np.arctan2(A[i, :], 2.0) + np.hypot(A[i, :], A[:9, 0]) + np.arctan2(-1.0, A[i, :])
        return locals()
    """, lambda: (data(), np.zeros((12, 9)))),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_powers_and_two_argument_functions_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_=G, expect="native")
    assert all(r["bailouts"] == 0 for r in recs), recs


@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_powers_numpy_warns_about_go_to_cpython(warn_filter):
    difftest.run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = A[i, :] ** 1.5
        return locals()
    """, "f", lambda: (data() - 2.0, np.zeros((12, 9))), globals_=G, expect="bail", warn_filter=warn_filter)


INTERPRETED = [
    ("a Python number exponent in a variable", """
    def f(A, out, p):
        for i in range(A.shape[0]):
            out[i, :] = A[i, :] ** p
        return locals()
    """, lambda: (data(), np.zeros((12, 9)), 0.5), "a Python number in a variable"),
    ("a number raised to an array", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = np.power(-0.0, A[i, :])
        return locals()
    """, lambda: (data(), np.zeros((12, 9))), "np.power() of a number and an array"),
    ("powers of integers", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i, :] = A[i, :] ** 3
        return locals()
    """, lambda: (np.arange(12).reshape(3, 4), np.zeros((3, 4), np.int64)), "array of int64"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_powers_stagepy_leaves_to_cpython(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, globals_=G, expect="interpreted")
    difftest.assert_reason(recs, reason)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("expr", ["A[::-1] ** 3", "A[::-1] ** 1.7", "np.power(A[::-1], B)", "np.arctan2(A[::-1], B)",
                                  "A ** 3 * A[::-1] ** 2.5"])
def test_reversed_views_take_numpys_other_loop(expr, dtype):
    # NumPy runs power and arctan2 of a negative-stride operand through libm, not its SIMD
    # loop, and the two differ in the last bit for about one value in ten: native code hands
    # such a statement to CPython (the fuzzer's `A *= A[::-1] ** 3` of float32).
    def make():
        rng = np.random.default_rng(3)
        return (rng.uniform(0.1, 5.0, 64).astype(dtype), rng.uniform(0.5, 2.0, 64).astype(dtype))
    difftest.run(f"""
    def f(A, B, n):
        for k in range(n):
            A *= 0.5
            C = {expr}
        return C, A
    """, "f", lambda: (*make(), 3), globals_=G, expect=None)
