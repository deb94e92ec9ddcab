"""Variables that start as None and get numbers in the loops (`best = None; for x in xs: if
best is None or x < best: best = x`) run natively: a test `v is None` / `v is not None` the
types decide (None before the first assignment, a float after) types only the way taken; where
`v` may hold either at that point (assigned on some iterations only), the test reads its tag
and each way sees `v` as what the test says it holds."""
import numpy as np
import pytest

import difftest

XS = [((k * 37) % 11) * 0.1 - 0.2 for k in range(60)]

NATIVE = [
    ("argmin with None as the start", """
    def f(xs):
        best = None
        bi = -1
        for i in range(len(xs)):
            if best is None or xs[i] < best:
                best = xs[i]
                bi = i
        return bi, best
    """, lambda: (list(XS),)),
    ("a best found only among some values", """
    def f(xs, t):
        best = None
        for x in xs:
            if x > t and (best is None or x < best):
                best = x
        return best
    """, lambda: (list(XS), 0.25)),
    ("no value qualifies: None stays", """
    def f(xs, t):
        best = None
        n = 0
        for x in xs:
            if x > t and (best is None or x < best):
                best = x
            if best is None:
                n += 1
        return best, n
    """, lambda: (list(XS), 5.0)),
    ("the previous element", """
    def f(xs):
        prev = None
        d = 0.0
        for x in xs:
            if prev is not None:
                d += abs(x - prev)
            prev = x
        return d, prev
    """, lambda: (list(XS),)),
    ("if / elif on None", """
    def f(A):
        best = None
        bi = bj = None
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if best is None:
                    best = A[i, j]
                    bi, bj = i, j
                elif A[i, j] > best:
                    best = A[i, j]
                    bi, bj = i, j
        return best, bi, bj
    """, lambda: (np.random.default_rng(1).random((20, 30)),)),
    ("None on the left, ints", """
    def f(xs):
        m = None
        for x in xs:
            if x % 3 == 0 and (None is m or x > m):
                m = x
        return m
    """, lambda: ([(k * 17) % 23 for k in range(50)],)),
    ("a nest's maximum product", """
    def f(xs, ys):
        m = None
        for x in xs:
            for y in ys:
                v = x * y
                if m is None or v > m:
                    m = v
        return m
    """, lambda: (list(XS), list(XS)[::-1])),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_none_tests_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_a_value_that_is_none_on_some_iterations_only():
    # `best` holds None or a float at the test, by the data: both ways at run time.
    for xs in ([0.1, 0.2], [0.1, 0.5, 0.2, 0.7], [0.9], []):
        difftest.run("""
        def f(xs):
            best = None
            c = 0
            for x in xs:
                if x > 0.3:
                    best = x
                if best is None:
                    c += 1
                elif best > 0.6:
                    c += 100
            return best, c
        """, "f", lambda: (list(xs),), expect=None)


def test_a_module_level_search():
    difftest.run_module("""
    xs = [((k * 37) % 11) * 0.1 for k in range(40)]
    best = None
    for x in xs:
        if x > 0.35 and (best is None or x < best):
            best = x
    """, lambda: {})
