"""`x @ y` and `np.dot(x, y)` of one-dimensional float64 or float32 arrays in loop bodies: kernels
call NumPy's own dot function for the dtype, which both reach for such arrays (with BLAS where
the strides allow), so the values are NumPy's to the last bit. What NumPy would do otherwise
(lengths that differ, np.dot of a reversed view, a result that is not finite) is left to
CPython; other ranks and dtypes stay interpreted."""
import numpy as np
import pytest

import difftest

G = {"np": np}


def rnd(*shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)


NATIVE = [
    ("lu with `@` of a row and a column (NPBench's lu)", """
    def f(A):
        n = A.shape[0]
        for i in range(n):
            for j in range(i):
                A[i, j] -= A[i, :j] @ A[:j, j]
                A[i, j] /= A[j, j]
            for j in range(i, n):
                A[i, j] -= A[i, :i] @ A[:i, j]
        return locals()
    """, lambda: (rnd(40, 40) + 4000 * np.eye(40),)),
    ("np.dot of shifted windows, lengths down to 0", """
    def f(x, y, out):
        n = x.shape[0]
        for i in range(n + 1):
            out[i] = np.dot(x[i:], y[:n - i])
        return locals()
    """, lambda: (rnd(300), rnd(300, seed=1), np.zeros(301))),
    ("`@` of reversed and strided views", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = A[i, ::-1] @ A[:, i] + A[i, :-1:2] @ A[i, 1::2]
        return locals()
    """, lambda: (rnd(33, 33), np.zeros(33))),
    ("float32 rows, the result in a float32 variable", """
    def f(A, B, out):
        for i in range(A.shape[0]):
            s = A[i] @ B[i]
            out[i] = s * np.float32(2)
        return locals()
    """, lambda: (rnd(20, 129, dtype=np.float32), rnd(20, 129, dtype=np.float32, seed=3), np.zeros(20, np.float32))),
    ("x.dot(y) of a row and a column", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = A[i].dot(A[:, i])
        return locals()
    """, lambda: (rnd(17, 17), np.zeros(17))),
    ("whole arrays, in a Python float expression", """
    def f(x, y, k):
        t = 0.0
        for r in range(k):
            t += 0.5 * np.dot(x, y) + r
        return locals()
    """, lambda: (rnd(1000), rnd(1000, seed=2), 3)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_dot_products_run_natively_with_numpys_values(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_=G, expect="native")
    assert all(r["bailouts"] == 0 for r in recs), recs


def test_loops_with_dot_products_stay_on_one_thread():
    recs = difftest.run("""
    def f(A, x, out):
        for i in range(A.shape[0]):
            out[i] = A[i] @ x
        return locals()
    """, "f", lambda: (rnd(600, 50), rnd(50), np.zeros(600)), globals_=G, expect="native")
    loops = [l for r in recs for l in r["loops"]]
    assert loops and not any(l["parallel_runs"] for l in loops), loops
    assert any("dot product" in l["why"] for l in loops), loops


BAIL = [
    ("lengths that differ (ValueError)", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = A[i, :i + 1] @ A[0, :3]
        return locals()
    """, lambda: (rnd(6, 6), np.zeros(6))),
    ("np.dot of a reversed view (NumPy copies it)", """
    def f(x, y, out):
        for i in range(out.shape[0]):
            out[i] = np.dot(x[::-1], y) + i
        return locals()
    """, lambda: (rnd(50), rnd(50, seed=4), np.zeros(3))),
    ("a result that overflows", """
    def f(x, out):
        for i in range(out.shape[0]):
            out[i] = x[i:] @ x[i:]
        return locals()
    """, lambda: (np.array([1e200, 3.0, 1e200, 2.0]), np.zeros(4))),
    ("a NaN in the data", """
    def f(x, out):
        for i in range(out.shape[0]):
            out[i] = np.dot(x[:i + 1], x[:i + 1])
        return locals()
    """, lambda: (np.array([1.0, 2.0, np.nan, 4.0]), np.zeros(4))),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_cpython_decides_what_numpy_would_raise_or_warn(what, src, make_args, warn_filter):
    difftest.run(src, "f", make_args, globals_=G, expect="bail", warn_filter=warn_filter)


INTERPRETED = [
    ("integer arrays", """
    def f(a, out):
        for i in range(out.shape[0]):
            out[i] = a[i:] @ a[i:]
        return locals()
    """, lambda: (np.arange(10), np.zeros(3, np.int64)), "arrays of int64 and int64"),
    ("float64 with float32", """
    def f(a, b, out):
        for i in range(out.shape[0]):
            out[i] = np.dot(a, b)
        return locals()
    """, lambda: (rnd(8), rnd(8, dtype=np.float32), np.zeros(2)), "float64 and float32"),
    ("a matrix times a vector", """
    def f(A, x, out):
        for k in range(2):
            out[k] = (A @ x)[k]
        return locals()
    """, lambda: (rnd(4, 4), rnd(4), np.zeros(2)), "2-d array"),
    ("an operation's result", """
    def f(x, y, out):
        for i in range(out.shape[0]):
            out[i] = (x * 2.0) @ y
        return locals()
    """, lambda: (rnd(8), rnd(8, seed=5), np.zeros(2)), "an array an operation computes"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_other_products_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, globals_=G, expect="interpreted")
    difftest.assert_reason(recs, reason)
