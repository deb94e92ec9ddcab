"""`s = 0` before `for i: for j: s += A[i, j]`: when every run of the inner loop has an
iteration for the values at hand (a fact of the run-time values, facts.h), `s` is an
np.float64 from the first run of `j` on, so the outer loop is a float reduction and runs on
threads. Where an inner run may be empty (a zero-width array, a triangle `range(i)`,
bounds that cross) the int may survive an iteration, and the result must still be
CPython's, type included. Sums on threads are reassociated (docs/semantics.md): the data
are whole numbers, whose sums are exact in any order."""
import numpy as np
import pytest

import difftest
from helpers import whole

pytestmark = pytest.mark.usefixtures("two_threads_on_the_cpu")  # conftest.py



SUM = """
def f(A):
    s = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
    return s
"""


def test_an_int_start_summed_over_rows_runs_on_threads():
    recs = difftest.run(SUM, "f", lambda: (whole((3000, 6), 1),), warn_filter="default")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


@pytest.mark.parametrize("shape", [(3000, 0), (0, 5), (1, 1), (2, 3)])
def test_empty_and_tiny_shapes_give_cpythons_type(shape):
    difftest.run(SUM, "f", lambda: (whole(shape, 2),), warn_filter="default", expect=None)


CASES = [
    ("a triangle whose first row is empty", """
    def f(A):
        s = 0
        for i in range(A.shape[0]):
            for j in range(i):
                s += A[i, j]
        return s
    """, lambda: (whole((700, 700), 3),)),
    ("bounds that cross for some rows", """
    def f(A, lo, hi):
        s = 0
        for i in range(A.shape[0]):
            for j in range(lo + i % 3, hi):
                s += A[i, j]
        return s
    """, lambda: (whole((900, 8), 4), 5, 7)),
    ("a maximum started from an int", """
    def f(A):
        best = 0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                best = max(best, A[i, j])
        return best
    """, lambda: (whole((900, 4), 5, -90, -1),)),
    ("a count and a float total from one inner loop", """
    def f(A, t):
        c = 0
        tot = 0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] > t:
                    c += 1
                tot += A[i, j]
        return c, tot
    """, lambda: (whole((1200, 5), 6), 0.5)),
    ("three levels, the middle one empty", """
    def f(A, m):
        s = 0
        for i in range(A.shape[0]):
            for k in range(m):
                for j in range(A.shape[1]):
                    s += A[i, j] * k
        return s
    """, lambda: (whole((600, 4), 7), 0)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_inner_loops_that_may_not_run_equal_cpython(src, make):
    difftest.run(src, "f", make, warn_filter="default")
