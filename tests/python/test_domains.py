"""Domain checks the sign analysis removes (src/specialize/prove_domains.h).

math.sqrt of a sum of squares, math.log of a value above zero and a Python division by one
cannot fail. Without their checks, nothing in the body may stop for CPython, so the loops
around them can run on threads. Where the analysis cannot prove a value safe, the check
stays: the error is CPython's, at the same iteration, after the same writes. Every test is
differential (difftest.run)."""
import functools
import math

import numpy as np
import pytest

import difftest

run = functools.partial(difftest.run, warn_filter="default")
G = {"math": math, "np": np}


pytestmark = pytest.mark.usefixtures("two_threads_on_the_cpu")  # conftest.py


def parallel(recs, var):
    """Planned parallel, and ran on threads (the target is the CPU here)."""
    return difftest.loops(recs)[var]["parallel"] and difftest.ran_parallel(recs, var)


def test_nbody_accelerations_run_on_threads():
    # r2 is a sum of squares: math.sqrt(r2) cannot raise, so the i loop has no way out.
    recs = run("""
    def f(pos, mass, acc, soft):
        n = pos.shape[0]
        for i in range(n):
            ax = ay = 0.0
            for j in range(n):
                if i != j:
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    r2 = dx * dx + dy * dy + soft * soft
                    inv3 = mass[j] / (r2 * math.sqrt(r2))
                    ax += dx * inv3
                    ay += dy * inv3
            acc[i, 0] = ax
            acc[i, 1] = ay
        return locals()
    """, "f", lambda: (np.random.default_rng(1).standard_normal((300, 2)), np.random.default_rng(2).random(300),
                       np.zeros((300, 2)), 0.1), globals_=G)
    assert parallel(recs, "i")


def test_pairwise_distances_with_an_accumulated_sum_run_on_threads():
    recs = run("""
    def f(X, D):
        n, d = X.shape
        for i in range(n):
            for j in range(n):
                s = 0.0
                for k in range(d):
                    t = X[i, k] - X[j, k]
                    s += t * t
                D[i, j] = math.sqrt(s)
        return locals()
    """, "f", lambda: (np.random.default_rng(3).random((60, 3)), np.zeros((60, 60))), globals_=G)
    assert parallel(recs, "i")


def test_log_of_a_positive_value_and_division_by_one_run_on_threads():
    # Python floats (a list): a division by zero would be a ZeroDivisionError. 1 + x*x is
    # positive, so neither the division nor the logarithm can fail.
    recs = run("""
    def f(a, out):
        for i in range(len(a)):
            x = a[i]
            out[i] = math.log(1.0 + x * x) + x / (1.0 + x * x) + x % (2.0 + abs(x))
        return locals()
    """, "f", lambda: ([float(v) for v in np.random.default_rng(4).standard_normal(3000)], [0.0] * 3000),
        globals_=G)
    assert parallel(recs, "i")


def test_sqrt_of_max_with_zero_a_square_and_a_quotient_run_on_threads():
    recs = run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = math.sqrt(max(A[i], 0.0)) + math.sqrt(A[i] * A[i]) + math.sqrt(abs(A[i]) / 2.0)
        return locals()
    """, "f", lambda: (np.random.default_rng(5).standard_normal(3000), np.zeros(3000)), globals_=G)
    assert parallel(recs, "i")


@pytest.mark.parametrize("bad", [3, 1500, 2999])
def test_sqrt_of_a_negative_value_raises_at_the_same_iteration(bad):
    # A[i] - 1.0 may be below zero: the check stays, so the loop runs on threads with its
    # stores logged (undone when a thread stops), and the ValueError comes at `bad` with
    # exactly the earlier elements written.
    def make():
        a = np.full(3000, 5.0)
        a[bad] = 0.5
        return a, np.zeros(3000)
    recs = run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = math.sqrt(A[i] - 1.0)
        return locals()
    """, "f", make, globals_=G, expect=None)
    assert difftest.loops(recs)["i"]["parallel"]


def test_sqrt_of_negative_zero_infinity_and_nan_stays_native():
    # CPython's math.sqrt returns these: only an argument below zero is an error.
    recs = run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = math.sqrt(A[i])
        return locals()
    """, "f", lambda: (np.array([-0.0, 0.0, np.inf, np.nan, 4.0] * 200), np.zeros(1000)), globals_=G)
    assert recs[0]["bailouts"] == 0 and recs[0]["native_calls"] > 0


@pytest.mark.parametrize("x", [0.0, -1.0, 2.0])
def test_log_of_zero_or_below_is_cpythons_error(x):
    def make():
        a = np.full(600, 3.0)
        a[400] = x
        return a, np.zeros(600)
    run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = math.log(A[i] * A[i] + A[i])
        return locals()
    """, "f", make, globals_=G, expect=None)


@pytest.mark.parametrize("s0", [-1.0, 4.0])
def test_a_value_held_at_entry_is_not_taken_for_non_negative(s0):
    # s is assigned 4.0 in the loop, but its value at entry reaches the first sqrt.
    run("""
    def f(A, s):
        for i in range(A.shape[0]):
            A[i] = math.sqrt(s)
            s = 4.0
        return locals()
    """, "f", lambda: (np.zeros(600), s0), globals_=G, expect=None)


def test_a_variable_that_goes_below_zero_later_keeps_its_check():
    # t starts at 1.0 (positive) and is decreased in the inner loop: the fixpoint must
    # drop it to "any sign", so the sqrt keeps its check and raises where CPython does.
    run("""
    def f(A, m):
        for i in range(A.shape[0]):
            t = 1.0
            for j in range(m):
                t = t - 0.75
            A[i] = math.sqrt(t)
        return locals()
    """, "f", lambda: (np.zeros(600), 2), globals_=G, expect=None)


def test_division_by_a_square_keeps_its_zero_check():
    # x * x is never below zero but may be zero: a Python float division by it is a
    # ZeroDivisionError at that iteration.
    def make():
        a = [1.0] * 1000
        a[700] = 0.0
        return a, [0.0] * 1000
    run("""
    def f(a, out):
        for i in range(len(a)):
            out[i] = 1.0 / (a[i] * a[i])
        return locals()
    """, "f", make, globals_=G, expect=None)
