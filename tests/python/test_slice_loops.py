"""Loops over slices: `for x in a[1:]`, `zip(x[:-1], x[1:])`, `enumerate(a[::2])` over NumPy
arrays run natively. The slice is a view, so the loop sees what the body writes into the
array, as CPython's loop over the view does; its bounds may be numbers, variables and + - *
of them, which the loop may not reassign. CPython takes over mid-loop with the iterator at
the right item; anything else (a slice of a list, which is a copy) stays interpreted."""
import numpy as np
import pytest

import difftest


NATIVE = [
    ("for x in a[1:]", """
    def f(a):
        s = 0.0
        for x in a[1:]:
            s += x * x
        return locals()
    """, lambda: (np.arange(10.0),)),
    ("zip of two shifted slices", """
    def f(x, out):
        k = 0
        for a, b in zip(x[:-1], x[1:]):
            out[k] = b - a
            k += 1
        return locals()
    """, lambda: (np.array([1.0, 4.0, 9.0, 16.0, 25.0, 36.0]), np.zeros(5))),
    ("enumerate of a strided slice", """
    def f(a, out):
        for i, v in enumerate(a[::2]):
            out[i] = v + i
        return locals()
    """, lambda: (np.arange(11, dtype=np.int64), np.zeros(6, dtype=np.int64))),
    ("a reversed slice", """
    def f(a):
        best = -1.0
        pos = 0
        for v in a[::-1]:
            if v > best:
                best = v
            pos += 1
        return locals()
    """, lambda: (np.array([3.0, 9.0, 2.0, 9.0, 1.0]),)),
    ("bounds from the enclosing loop", """
    def f(a, out):
        n = a.shape[0]
        for i in range(n):
            s = 0.0
            for v in a[i + 1:]:
                s += v * a[i]
            out[i] = s
        return locals()
    """, lambda: (np.arange(1.0, 8.0), np.zeros(7))),
    ("a column of a 2-d array", """
    def f(A, j):
        s = 0
        for v in A[1:, j]:
            s += v
        return locals()
    """, lambda: (np.arange(20, dtype=np.int32).reshape(5, 4), 2)),
    ("the body writes ahead into the array the view shows", """
    def f(a):
        k = 1
        for v in a[1:]:
            if k + 1 < a.shape[0]:
                a[k + 1] += v
            k += 1
        return locals()
    """, lambda: (np.arange(8.0),)),
    ("an empty slice", """
    def f(a):
        s = 0.0
        v = -1.0
        for v in a[5:2]:
            s += v
        return locals()
    """, lambda: (np.arange(8.0),)),
    ("bounds past the end", """
    def f(a, lo, hi):
        s = 0.0
        for v in a[lo:hi]:
            s += v
        return locals()
    """, lambda: (np.arange(8.0), -3, 100)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_loops_over_slices_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, expect="native")
    assert all(r["bailouts"] == 0 for r in recs), recs


BAIL = [
    ("ZeroDivisionError mid-loop: CPython goes on from the same item", """
    def f(a):
        s = 0.0
        n = 0
        for v in a[1:]:
            n += 1
            s += 1.0 / float(v)
        return locals()
    """, lambda: (np.array([5.0, 2.0, 4.0, 0.0, 8.0]),)),
    ("an index error mid-loop inside zip", """
    def f(x, out):
        k = 0
        for a, b in zip(x[:-1], x[2:]):
            out[k] = a + b
            k += 2
        return locals()
    """, lambda: (np.arange(12.0), np.zeros(7))),
    ("a Python int that leaves 64 bits", """
    def f(a):
        p = 1
        for v in a[2:]:
            p = p * int(v)
        return locals()
    """, lambda: (np.full(30, 2 ** 10, dtype=np.int64),)),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_cpython_takes_over_a_loop_over_a_slice(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


INTERPRETED = [
    ("a slice of a list is a copy", """
    def f(L):
        s = 0.0
        for v in L[1:]:
            s += v
        return locals()
    """, lambda: ([1.0, 2.0, 3.0],), "slice"),
    ("the loop reassigns a bound", """
    def f(a):
        lo = 1
        s = 0.0
        for v in a[lo:]:
            s += v
            lo += 1
        return locals()
    """, lambda: (np.arange(6.0),), "assigns `lo` inside a loop over a slice of a"),
    ("a bound that calls a function", """
    def f(a, L):
        s = 0.0
        for v in a[:len(L)]:
            s += v
        return locals()
    """, lambda: (np.arange(6.0), [1, 2, 3]), "loops over an expression"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_loops_over_slices_stagepy_cannot_keep_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_module_level_loop_over_a_slice_hands_over_mid_loop():
    """At module level the bounds are globals; CPython takes over at the item whose
    division fails and raises there, with the totals so far in the globals."""
    recs = difftest.run_module("""
    s = 0.0
    count = 0
    for v in a[lo:]:
        count += 1
        s += 1.0 / float(v)
    """, lambda: {"np": np, "a": np.array([2.0, 4.0, 0.5, 0.0, 8.0]), "lo": 1}, expect="bail")
    assert recs[0]["bailouts"] >= 1, recs
