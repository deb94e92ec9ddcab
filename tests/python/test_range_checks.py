"""Checks of non-affine int operations that the run-time values remove.

`(i * j) / M`, `((i + j) % N) / (5 * M)` or `(i % m) / m` in the loops that fill arrays:
the product must stay within 64 bits, the divisor must not be zero, and an int divided by
an int is exact as a double division only while both fit 53 bits. The static analysis
writes each of those checks as bounds on affine parts (i, j, M, N, 5 * M), and the values
of a call decide them (src/analysis/derive_conditions.h). Where they hold, the body has no
way out and the loop runs on threads; where they do not, the check stays and CPython's
answer comes out (its big ints, its correctly rounded division, its ZeroDivisionError at
the same iteration). Every test is differential (difftest.run)."""
import functools
import itertools

import numpy as np
import pytest

import difftest

run = functools.partial(difftest.run, warn_filter="default")

pytestmark = pytest.mark.usefixtures("two_threads_on_the_cpu")  # conftest.py


def parallel(recs, var):
    """Planned parallel, and ran on threads (the target is the CPU here)."""
    return difftest.loops(recs)[var]["parallel"] and difftest.ran_parallel(recs, var)


INIT = """
def f(A, M, N):
    for i in range(M):
        for j in range(N):
            A[i, j] = {expr}
    return locals()
"""


@pytest.mark.parametrize("expr", [
    "(i * j) / M + i",                      # covariance, correlation
    "((i + j) % N) / (5 * M)",              # atax
    "((i * j + 1) % M) / (5 * M)",          # 3mm
    "(((i * j) % M) / M) * 100 + 10",       # gram-schmidt
    "(i + N - j) / N",                      # adi
    "(-j % N) / N + 1",                     # cholesky
    "(i * (j + 1)) / M - (i - M) * (j - N) // 7",
])
def test_init_loops_run_on_threads(expr):
    recs = run(INIT.format(expr=expr), "f", lambda: (np.zeros((40, 700)), 40, 700))
    assert parallel(recs, "i")


def test_a_divisor_that_is_zero_raises_at_the_first_iteration():
    # M is 0 in the second call: ZeroDivisionError before any write of that call.
    calls = itertools.cycle([40, 0])  # make_args runs once per call, on each side
    recs = run("""
    def f(A, M):
        for i in range(40):
            for j in range(600):
                A[i, j] = (i * j) % (M + 1) / M
        return locals()
    """, "f", lambda: (np.zeros((40, 600)), next(calls)))
    assert difftest.loops(recs)["i"]["parallel"]


def test_a_divisor_that_reaches_zero_raises_after_the_earlier_writes():
    recs = run("""
    def f(x, k):
        for i in range(len(x)):
            x[i] = (i * 3) / (i - k)
        return locals()
    """, "f", lambda: (np.zeros(2000), 1500))
    assert recs and recs[0]["native_calls"] >= 1


def test_a_negative_divisor_keeps_python_signs():
    run("""
    def f(A, N):
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                A[i, j] = ((i * j - 7) % N) / N + (i * j) // N
        return locals()
    """, "f", lambda: (np.zeros((30, 600)), -13))


@pytest.mark.parametrize("k", [3, 2**40, 2**50, 2**61, -(2**62), 2**63 - 1])
def test_products_beyond_53_or_64_bits_are_cpythons(k):
    # i * k / 3: exact while i * k fits 53 bits; beyond, CPython rounds the exact quotient
    # of big ints (not the quotient of two rounded doubles); beyond 64 bits it is a big int.
    recs = run("""
    def f(x, k):
        for i in range(len(x)):
            x[i] = (i * k) / 3 + (i * k) % 5
        return locals()
    """, "f", lambda: (np.zeros(1000), k))
    if abs(k) < 2**40:
        assert parallel(recs, "i")


def test_int64_min_floor_divided_by_minus_one_is_a_big_int():
    run("""
    def f(x, a, d):
        for i in range(len(x)):
            x[i] = float((a + i * 0) // d)
            t = (a * 1) // d
        return locals()
    """, "f", lambda: (np.zeros(600), -(2**63), -1))


def test_a_product_of_loop_variables_in_an_int_array():
    recs = run("""
    def f(img):
        H, W = img.shape[0], img.shape[1]
        for y in range(H):
            for x in range(W):
                img[y, x, 0] = (x * 3 + y) % 256
                img[y, x, 1] = (x * y) % 256
                img[y, x, 2] = (255 - x) % 256
        return locals()
    """, "f", lambda: (np.zeros((30, 600, 3), dtype=np.int64),))
    assert parallel(recs, "y")


@pytest.mark.parametrize("n", [700, 0])
def test_an_int_times_a_float_constant_is_a_divisor_that_is_not_zero(n):
    # durbin: n * 200.0 is 0 only where n is; n = 0 raises at the first iteration.
    recs = run("""
    def f(r, n):
        for i in range(len(r)):
            r[i] = (n + 1 - i) / (n * 200.0) + i / (0.5 * n)
        return locals()
    """, "f", lambda: (np.zeros(700), n))
    if n:
        assert parallel(recs, "i")
