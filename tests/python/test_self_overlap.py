"""Arrays whose own elements overlap: `as_strided` views with a zero or short stride, and
`sliding_window_view(..., writeable=True)`. Two subscripts the analysis tells apart (c[0]
and c[1]) may then be one element, so updates interleaved in registers or split over
threads lost each other's writes (a survey of user programs found `c[j] += 1.0` over a
zero-stride view giving 20.0 for CPython's 640.0, and a gemm into a sliding window
differing from run to run). Where such a view is writeable the nest runs in CPython, with
the reason in the report; read-only views (sliding_window_view's default) stay native."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import stagepy
from difftest import run

COUNT = """
def f(c, n):
    for j in range(n):
        for k in range(10):
            c[j] += 1.0
    return locals()
"""

GEMM = """
def f(A, B, C):
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            for k in range(A.shape[1]):
                C[i, j] += A[i, k] * B[k, j]
    return locals()
"""

TWO_D = """
def f(W, n, m):
    for i in range(n):
        for j in range(m):
            W[i, j] += 1.0 + i * 0.5
    return locals()
"""

WHY = "a writeable view whose elements overlap"


def reasons(recs):
    return " ".join(r["reason"] for r in recs)


@pytest.mark.parametrize("strides", [(0,), (4,)], ids=["zero", "half-element"])
def test_updates_through_a_view_onto_one_element(strides, threads):
    def make():
        base = np.zeros(64)
        return as_strided(base, shape=(64,), strides=strides), 64
    recs = run(COUNT, "f", make, expect="interpreted")
    if strides == (0,):  # (the other is declined first as an unaligned array)
        assert WHY in reasons(recs)


def test_rows_that_are_one_row(threads):
    # Every row of W is the same three elements: the rows' updates add up in CPython.
    def make():
        base = np.zeros(3)
        return as_strided(base, shape=(4000, 3), strides=(0, 8)), 4000, 3
    recs = run(TWO_D, "f", make, expect="interpreted")
    assert WHY in reasons(recs)


@pytest.mark.parametrize("writeable", [True, False])
def test_gemm_into_and_from_sliding_windows(writeable, threads):
    def make():
        rng = np.random.default_rng(3)
        A, B = rng.random((40, 30)), rng.random((30, 40))
        C = sliding_window_view(np.zeros(79), 40, writeable=True)  # C[i, j] is x[i + j]
        return A, B, C
    recs = run(GEMM, "f", make, expect="interpreted")
    assert WHY in reasons(recs)

    # Read-only windows as an operand are fine: the product runs natively.
    def make_ro():
        rng = np.random.default_rng(4)
        x = rng.random(80)
        A = sliding_window_view(x, 30, writeable=writeable)[:40]  # A[i, k] is x[i + k]
        return A, rng.random((30, 40)), np.zeros((40, 40))
    recs = run(GEMM, "f", make_ro, expect="interpreted" if writeable else "native")
    if writeable:
        assert WHY in reasons(recs)


def test_a_memoryview_of_an_overlapping_view():
    def make():
        return memoryview(as_strided(np.zeros(2), shape=(64,), strides=(0,))), 64
    recs = run(COUNT, "f", make, expect="interpreted")
    assert WHY in reasons(recs)


@pytest.mark.parametrize("make_view", [
    lambda x: x[::2],
    lambda x: x.reshape(20, 30).T,
    lambda x: x.reshape(20, 30)[::-1, 5:],
    lambda x: x.reshape(6, 10, 10).transpose(2, 0, 1)[:, ::2, ::3],
    lambda x: as_strided(x, shape=(30, 20), strides=(8, 240)),  # the transpose, made by hand
    lambda x: x.reshape(20, 30)[:, :1],                         # a column: stride of a row
], ids=["step", "transpose", "reversed", "3d", "as_strided_transpose", "column"])
def test_views_that_do_not_overlap_stay_native(make_view):
    # Every slice, transpose or reshape of an array passes the test (no false alarm).
    src = """
    def f(V):
        for idx in range(V.shape[0]):
            V[idx] = V[idx] * 2.0 + 1.0
        return locals()
    """
    def make():
        return (make_view(np.arange(600.0)),)
    run(src, "f", make, expect="native")
