"""Reductions across loop nests (src/specialize/plan_parallel.h).

`s = 0.0` before `for i: for j: s += A[i, j]` makes `s` a Python float that becomes an
np.float64 at its first update: inside the outer loop it is `float | np.float64`. The
outer loop still runs on threads: each thread's part remembers whether it assigned `s`, so
a nest whose inner loops never run leaves the float 0.0, as CPython does. Every test is
differential (difftest.run); float sums on threads are reassociated (docs/semantics.md),
so the data are whole numbers (or infinities), whose sums are exact in any order."""
import functools

import numpy as np
import pytest

import stagepy
import difftest

run = functools.partial(difftest.run, warn_filter="default")
loops, ran_parallel = difftest.loops, difftest.ran_parallel


@pytest.fixture(autouse=True)
def two_threads_on_the_cpu():
    import os
    stagepy.set_threads(2)
    stagepy.set_target("cpu")
    yield
    stagepy.set_threads(0)
    stagepy.set_target(os.environ.get("STAGEPY_TARGET", "auto"))


def whole(shape, seed=0, lo=-50, hi=50):
    return np.random.default_rng(seed).integers(lo, hi, shape).astype(np.float64)


TOTAL = """
def f(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j]
    return locals()
"""


def test_a_sum_over_a_matrix_runs_its_outer_loop_on_threads():
    recs = run(TOTAL, "f", lambda: (whole((300, 200)),))
    assert ran_parallel(recs, "i")


def test_a_sum_over_a_tall_thin_matrix_runs_on_threads():
    # The inner loop is too short for threads; the outer one takes them.
    recs = run(TOTAL, "f", lambda: (whole((20000, 3), 1),))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("shape", [(600, 0), (0, 600), (1, 1), (2, 700)])
def test_a_sum_whose_inner_loops_never_or_barely_run_keeps_the_type(shape):
    # (600, 0): no update ever runs: `s` stays the float 0.0, not np.float64(0.0).
    run(TOTAL, "f", lambda: (whole(shape, 2),), expect=None)


def test_a_triangular_sum_some_rows_empty():
    recs = run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            for j in range(i - n // 2):
                s += A[i, j] * 2.0
        return locals()
    """, "f", lambda: (whole((800, 800), 3), 800))
    assert ran_parallel(recs, "i")


def test_a_product_and_a_sum_of_squares_across_the_nest():
    recs = run("""
    def f(A):
        p = 1.0
        q = 0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                p *= A[i, j]
                q += A[i, j] ** 2
        return locals()
    """, "f", lambda: (np.random.default_rng(4).choice([1.0, -1.0, 2.0, 0.5], (400, 50)),))
    assert ran_parallel(recs, "i")


def test_negative_zero_survives_the_split_sum():
    run("""
    def f(A):
        s = -0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                s += A[i, j]
        return locals()
    """, "f", lambda: (np.full((700, 4), -0.0),))


def test_an_overflowing_split_sum_warns_once_as_numpy_does():
    recs = run(TOTAL, "f", lambda: (np.full((600, 4), 1e308),))
    assert ran_parallel(recs, "i")


def test_a_sum_that_takes_floats_and_np_floats_stays_exact():
    # One update gives a float, the other an np.float64: `s`'s type depends on which ran
    # last, so the sum is not split.
    recs = run("""
    def f(A):
        s = 0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] > 0:
                    s += A[i, j]
                else:
                    s = s + 1.0
        return locals()
    """, "f", lambda: (whole((300, 300), 5),))
    assert not loops(recs)["i"]["parallel"]


def test_a_sum_over_a_list_of_rows_from_an_np_float_start():
    # np.float64 from the start: the ordinary split sum, in a nest of lists.
    recs = run("""
    def f(A, n, m):
        s = np.float64(0)
        t = 0.0
        for i in range(n):
            for j in range(m):
                s += A[i][j]
                t += A[i][j]
        return locals()
    """, "f", lambda: (whole((900, 40), 6).tolist(), 900, 40), globals_={"np": np})
    assert ran_parallel(recs, "i")
