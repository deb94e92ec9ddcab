"""Loops over every item of a NumPy array in C order — `for v in img.ravel()`, `for v in
A.flat`, also inside enumerate(), zip() and reversed() — run natively where the array is
C-contiguous and no store of the nest may write it: the kernel reads the array's memory as
one dimension, which is what ravel()'s view and the flat iterator give CPython."""
import numpy as np
import pytest

import difftest


def _img(seed, shape=(37, 23), hi=17):
    return np.random.default_rng(seed).integers(0, hi, shape).astype(np.float64)


NATIVE = [
    ("a histogram over ravel()", """
    def f(img, hist):
        for v in img.ravel():
            hist[int(v)] += 1
        return hist
    """, lambda: (_img(1), np.zeros(17, dtype=np.int64))),
    ("a sum of squares over .flat", """
    def f(A):
        s = 0.0
        for x in A.flat:
            s += x * x
        return s
    """, lambda: (_img(2, (5, 6, 7)) / 8,)),
    ("the position of the first maximum", """
    def f(A):
        best, at = -1.0, -1
        for k, x in enumerate(A.ravel()):
            if x > best:
                best, at = x, k
        return best, at
    """, lambda: (_img(3),)),
    ("two arrays side by side, counting down", """
    def f(A, B, out):
        n = 0
        for a, b in zip(A.flat, B.ravel()):
            if a < b:
                n += 1
        for x in reversed(A.ravel()):
            out[n % 5] += x
            n += 1
        return n, out
    """, lambda: (_img(4, (6, 8)), _img(5, (48,)), np.zeros(5))),
    ("each row of a 3-d array raveled", """
    def f(T):
        sums = []
        for plane in T:
            s = 0.0
            for x in plane.ravel():
                s += x
            sums.append(s)
        return sums
    """, lambda: (_img(9, (4, 5, 6)),)),
    ("ints and bools", """
    def f(M, mask):
        s = 0
        for x in M.ravel():
            s += x
        t = 0
        for m in mask.flat:
            t += m
        return s, t
    """, lambda: (np.arange(60, dtype=np.int32).reshape(3, 4, 5), np.arange(12).reshape(3, 4) % 3 == 0)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_loops_over_every_item_of_an_array_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


@pytest.mark.parametrize("src, make, why", [
    ("""
    def f(A):
        s = 0.0
        for x in A.ravel():
            s += x
        return s
    """, lambda: (_img(6)[:, ::2],), "not C-contiguous"),
    ("""
    def f(A):
        for x in A.flat:
            A[0, 0] += x
        return A
    """, lambda: (_img(7, (4, 4)),), "may write"),
    ("""
    def f(A, B):
        for x in A.ravel():
            B[0] += x
        return A, B
    """, lambda: (lambda a: (a, a.reshape(-1)))(_img(8, (3, 3))), "may write"),
], ids=["a strided view (ravel copies it)", "the array itself written", "written through another view"])
def test_flat_loops_cpython_would_see_otherwise_stay_interpreted(src, make, why):
    recs = difftest.run(src, "f", make, expect="interpreted")
    difftest.assert_reason(recs, why)


def test_ravel_of_a_list_raises_attribute_error_in_cpython():
    difftest.run("""
    def f(L):
        s = 0
        try:
            for x in L.ravel():
                s += x
        except AttributeError as e:
            return str(e)
        return s
    """, "f", lambda: ([1, 2, 3],), expect="interpreted")


def test_a_hand_over_inside_a_flat_loop_resumes_where_it_stopped():
    # The kernel stops at B[7] (an IndexError): CPython goes on from that item, with the
    # iterator rebuilt from A.ravel() at that position (dispatch.cpp, sequence_now).
    difftest.run("""
    def f(B, M, lim):
        s = 0
        try:
            for v, x in enumerate(M.flat, -2):
                s += x
                t = B[v + 1] if v < lim else B[v + 10]
        except IndexError as e:
            return "IndexError", str(e), s
        return s
    """, "f", lambda: (np.arange(4.0), np.arange(9.0).reshape(3, 3), 3), expect="bail")


def test_the_method_itself_is_not_a_sequence():
    difftest.run("""
    def f(A):
        s = 0.0
        try:
            for x in A.ravel:
                s += x
        except TypeError as e:
            return str(e)
        return s
    """, "f", lambda: (np.arange(6.0),), expect=None)


def test_an_attribute_named_flat_holding_a_list_is_a_sequence_as_before():
    class Grid:
        def __init__(self):
            self.flat = [1.5, 2.5, 4.0]

        def __eq__(self, other):
            return type(other) is Grid and other.flat == self.flat

    difftest.run("""
    def f(g):
        s = 0.0
        for x in g.flat:
            s += x
        return s
    """, "f", lambda: (Grid(),), globals_={"Grid": Grid})
