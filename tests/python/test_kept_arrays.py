"""Arrays kept in variables: `d = X[i] - X[j]` (an operation on arrays assigned to a
variable) runs natively. Kernels compute the new array into memory of their own; reads of
`d` (operations, reductions, `@`, elements, `len`) see it, and when the nest ends or hands a
statement to CPython the variable gets a new ndarray with those elements, as CPython's would
hold. What would need the array object itself (changing it in place, a second name for it)
stays interpreted, with the reason."""
import numpy as np
import pytest

import difftest


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).random(shape).astype(dtype)


NATIVE = [
    ("pairwise distances", """
    def f(X, out):
        n = X.shape[0]
        for i in range(n):
            for j in range(n):
                d = X[i] - X[j]
                out[i, j] = np.sqrt(np.sum(d * d))
        return locals()
    """, lambda: (rand(12, 3), np.zeros((12, 12)))),
    ("n-body forces: elements of the kept array, a row store", """
    def f(pos, m, acc):
        n = pos.shape[0]
        for i in range(n):
            for j in range(n):
                if i != j:
                    d = pos[j] - pos[i]
                    r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.01
                    acc[i] += m[j] * d / r2 ** 1.5
        return locals()
    """, lambda: (rand(9, 3), rand(9, seed=1), np.zeros((9, 3)))),
    ("dot, len, shape and a loop over the kept array", """
    def f(A, w):
        s = 0.0
        c = 0
        for i in range(A.shape[0]):
            t = A[i, :] * w
            s += t @ t + len(t) + t.shape[0]
            for v in t:
                if v > 0.25:
                    c += 1
        return locals()
    """, lambda: (rand(7, 5), rand(5, seed=2))),
    ("one kept array computed from another", """
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            a = X[i] * 2.0
            b = np.exp(a) + X[i] - a
            s += np.sum(b) + np.max(a)
        return locals()
    """, lambda: (rand(6, 4),)),
    ("assigned in both branches", """
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            if i % 2:
                d = X[i] + 1.0
            else:
                d = X[i] * -1.0
            s += np.sum(d)
        return locals()
    """, lambda: (rand(5, 3),)),
    ("integers", """
    def f(A):
        s = 0
        for i in range(A.shape[0]):
            d = A[i] * 3 - A[0]
            s += int(np.sum(d)) + int(d[-1])
        return locals()
    """, lambda: (np.arange(24, dtype=np.int64).reshape(6, 4),)),
    ("float32", """
    def f(X, out):
        for i in range(X.shape[0]):
            d = X[i] * np.float32(1.5) - X[0]
            out[i] = np.sum(d * d)
        return locals()
    """, lambda: (rand(6, 5, dtype=np.float32), np.zeros(6, dtype=np.float32))),
    ("a 2-d kept array and its rows", """
    def f(A):
        s = 0.0
        for i in range(A.shape[0] - 1):
            T = A[i:i + 2, :] * 0.5
            s += np.sum(T[0]) - np.sum(T[1]) + T.shape[0] + T[1, 2]
        return locals()
    """, lambda: (rand(6, 4),)),
    ("stored into a row", """
    def f(X, out):
        for i in range(X.shape[0]):
            d = np.abs(X[i] - 0.5)
            out[i, :] = d
            out[i, 0] += d[1]
        return locals()
    """, lambda: (rand(5, 3), np.zeros((5, 3)))),
    ("the variable held an array before the nest", """
    def f(X):
        d = np.ones(3)
        s = 0.0
        for i in range(X.shape[0]):
            d = X[i] + d[0]
            s += np.sum(d)
        return locals()
    """, lambda: (rand(4, 3),)),
    ("u.copy() before an in-place update (explicit time steps)", """
    def f(u, w, k):
        for t in range(20):
            un = u.copy()
            for i in range(1, len(u) - 1):
                u[i] = un[i] + 0.25 * (un[i + 1] - 2 * un[i] + un[i - 1])
        for t in range(5):
            v = w.copy()
            for i in range(1, w.shape[0] - 1):
                for j in range(1, w.shape[1] - 1):
                    w[i, j] = 0.25 * (v[i - 1, j] + v[i + 1, j] + v[i, j - 1] + v[i, j + 1])
        for t in range(3):
            c = k.copy()
            for i in range(1, len(k)):
                k[i] = c[i - 1] + c[i]
        return u, w, k, un, v, c
    """, lambda: (np.where(np.arange(40) == 20, 1.0, -0.0), rand(12, 9), np.arange(10, dtype=np.int32))),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_kept_arrays_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, expect=None, globals_={"np": np})
    assert sum(r["native_calls"] for r in recs) > 0, [(r["line"], r["reason"]) for r in recs]


def test_the_written_back_array_is_a_new_array_with_the_last_value():
    src = """
    def f(X):
        for i in range(X.shape[0]):
            d = X[i] * 2.0
        return d
    """
    X = rand(4, 3)
    recs = difftest.run(src, "f", lambda: (X.copy(),), globals_={"np": np})
    assert sum(r["native_calls"] for r in recs) > 0


def test_module_level_code_leaves_the_last_array_in_the_global():
    src = """
    s = 0.0
    for i in range(X.shape[0]):
        d = X[i] - X[0]
        s += np.sum(d * d)
    """
    recs = difftest.run_module(src, lambda: {"np": np, "X": rand(6, 3)}, expect="native")
    assert recs


ERRORS = [
    ("shapes that do not broadcast: ValueError at the assignment, earlier writes done", """
    def f(X, Y, out):
        for i in range(X.shape[0]):
            out[i] = i
            d = X[i] - Y[i]
            out[i] = np.sum(d)
        return locals()
    """, lambda: (rand(4, 3), np.ones((4, 2)), np.zeros(4))),
    ("an index out of range into the kept array", """
    def f(X, idx, out):
        for i in range(X.shape[0]):
            d = X[i] + 1.0
            out[i] = d[idx[i]]
        return locals()
    """, lambda: (rand(4, 3), np.array([0, 2, -3, 3]), np.zeros(4))),
    # The division warns (always shown: the kernel hands the statement to CPython), which
    # runs it with the `d` the kernel wrote back, and goes on with the loop.
    ("a warning at a later statement: CPython gets the kept array", """
    def f(X, z, out):
        for i in range(X.shape[0]):
            d = X[i] * 2.0
            out[i] = np.sum(d) / z[i]
        return locals()
    """, lambda: (rand(5, 3), np.array([1.0, 2.0, 0.0, 4.0, 5.0]), np.zeros(5))),
    ("a warning in the assignment: the previous array stays", """
    def f(X, Z, out):
        for i in range(X.shape[0]):
            d = X[i] / Z[i]
            out[i] = np.sum(d)
        return locals()
    """, lambda: (rand(4, 3), np.where(np.arange(12).reshape(4, 3) == 7, 0.0, 1.0), np.zeros(4))),
]


@pytest.mark.parametrize("what,src,make_args", ERRORS, ids=[n for n, _, _ in ERRORS])
def test_errors_and_warnings_happen_where_cpython_has_them(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail", globals_={"np": np})


INTERPRETED = [
    ("changed in place", """
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            d = X[i] * 2.0
            d += 1.0
            s += np.sum(d)
        return locals()
    """, "in place"),
    ("an element written", """
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            d = X[i] * 2.0
            d[0] = 1.0
            s += np.sum(d)
        return locals()
    """, "changes an element"),
    ("a second name", """
    def f(X):
        s = 0.0
        for i in range(X.shape[0]):
            d = X[i] * 2.0
            e = d
            s += np.sum(e)
        return locals()
    """, "another variable holds"),
    ("a copy of an array of bools", """
    def f(X):
        s = 0
        for i in range(X.shape[0]):
            b = (X[i] > 0.5).copy()
            s += np.sum(b)
        return locals()
    """, "copies an array of bool"),
]


@pytest.mark.parametrize("what,src,reason", INTERPRETED, ids=[n for n, _, _ in INTERPRETED])
def test_what_needs_the_array_object_stays_interpreted(what, src, reason):
    recs = difftest.run(src, "f", lambda: (rand(4, 3),), expect="interpreted", globals_={"np": np})
    difftest.assert_reason(recs, reason)
