"""sum(), any() and all() of a generator expression inside a nest (lift.cpp: the lifter
inlines the generator's loop, its yields becoming the reduction's steps). Differential
against CPython: values and their exact types (a sum of ints stays a Python int, of
np.float64 an np.float64), exceptions, the enclosing function's locals (the generator's
own variables never leak into them), and the report's reasons where a nest must stay
interpreted."""
import math
import sys

import numpy as np
import pytest

import difftest
from difftest import run, run_module


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def natively(recs):
    assert sum(r["native_calls"] for r in recs) > 0, [(r["line"], r["reason"]) for r in recs]
    return recs


def test_sum_of_products_over_a_row():
    natively(run("""
    def f(A, x, out):
        for i in range(A.shape[0]):
            out[i] = sum(A[i, k] * x[k] for k in range(A.shape[1]))
        return locals()
    """, "f", lambda: (rand((20, 13)), rand(13, 1), np.zeros(20))))


def test_a_filter_and_an_expression_around_the_sum():
    natively(run("""
    def f(A, x, out):
        for i in range(A.shape[0]):
            out[i] = 2.0 * sum(A[i, k] * x[k] for k in range(A.shape[1]) if k % 3 != i % 3) - 1.0
        return locals()
    """, "f", lambda: (rand((20, 13)), rand(13, 1), np.zeros(20))))


def test_a_filter_that_skips_every_item_leaves_int_zero():
    natively(run("""
    def f(A, n):
        r = []
        t = 0
        for i in range(n):
            s = sum(A[k] for k in range(len(A)) if A[k] > 100.0)
            t = t + s
        return locals()
    """, "f", lambda: (rand(9), 4)))


@pytest.mark.parametrize("xs", [[2 ** 61, 2 ** 61, 3, -5], [1, 2, 3, -5, 7]])
def test_sum_of_python_ints_is_exact_past_64_bits(xs):
    # With 2**61 items the running total overflows 64 bits: the kernel hands the statement
    # to CPython, which computes the big int.
    natively(run("""
    def f(xs, n):
        t = 0
        for i in range(n):
            t += sum(x * (i + 1) for x in xs)
        return locals()
    """, "f", lambda: (list(xs), 6), expect=None))


def test_sum_with_a_start():
    natively(run("""
    def f(x, n):
        t = 0.5
        for r in range(n):
            t = sum((x[i] for i in range(len(x))), t)
        return locals()
    """, "f", lambda: (rand(11), 3)))


def test_sum_with_start_as_a_keyword():
    natively(run("""
    def f(x, n):
        t = 1
        for r in range(n):
            t = sum((int(x[i]) * r for i in range(len(x))), start=t)
        return locals()
    """, "f", lambda: (np.arange(7.0), 4)))


def test_any_and_all_stop_at_the_deciding_item():
    natively(run("""
    def f(A, hit, every):
        for i in range(A.shape[0]):
            hit[i] = any(A[i, j] > 1.5 for j in range(A.shape[1]))
            every[i] = all(A[i, j] > -1.5 for j in range(A.shape[1]))
        return locals()
    """, "f", lambda: (rand((40, 7)), np.zeros(40, bool), np.zeros(40, bool))))


def test_any_and_all_of_nothing():
    natively(run("""
    def f(n):
        a = b = None
        c = 0
        for i in range(n):
            a = any(j > 0 for j in range(i - i))
            b = all(j > 0 for j in range(i - i))
            c += 1
        return locals()
    """, "f", lambda: (5,)))


WINDOW = """
def f(A, out, w):
    for i in range(out.shape[0]):
        out[i] = sum(A[i + k] for k in range(w))
    return locals()
"""


@pytest.mark.parametrize("w", [3, 5])
def test_an_index_error_inside_the_generator(w):
    # With w = 5, row 3 reads past the end: CPython raises IndexError with rows 0..2 written.
    natively(run(WINDOW, "f", lambda: (np.arange(7.0), np.zeros(6), w), expect=None))


def test_nested_generators_and_the_generators_own_variables():
    # `j` of the generator is not the function's `j`, which stays 99.
    natively(run("""
    def f(A, n):
        j = 99
        t = 0.0
        for r in range(n):
            t += sum(sum(A[i, j] * r for j in range(A.shape[1])) for i in range(A.shape[0]))
        return locals()
    """, "f", lambda: (rand((6, 5)), 3)))


def test_the_generator_reads_variables_the_nest_assigns():
    natively(run("""
    def f(x, n):
        c = 1.0
        out = 0.0
        for i in range(n):
            c = c * 0.5 + i
            out += sum(c * x[k] for k in range(len(x)))
        return locals()
    """, "f", lambda: (rand(9), 5)))


def test_lists_of_lists_of_ints():
    natively(run("""
    def f(A, B, n):
        C = [[0] * n for _ in range(n)]
        for i in range(n):
            for j in range(n):
                C[i][j] = sum(A[i][k] * B[k][j] for k in range(n))
        return locals()
    """, "f", lambda: (np.arange(64).reshape(8, 8).tolist(), (np.arange(64) % 7).reshape(8, 8).tolist(), 8)))


FLOAT_SUMS = [
    [0.1, 1e16, -1e16, 0.3, 1e-3] * 3,   # compensation changes the result (3.12+)
    [1e16, 1.0, -1e16, 1.0],
    [1e308, 1e308, -1e308],               # the compensation overflows: not added
    [1e16, 1.0, math.inf],                # ... becomes NaN: not added
    [-0.0, -0.0],                         # 0 + -0.0 is 0.0
    [math.nan, 1.0],
    [0.1] * 10,
    [2.5, 1e-17, -2.0, 1e-17],
]


@pytest.mark.parametrize("xs", FLOAT_SUMS, ids=range(len(FLOAT_SUMS)))
def test_sum_of_python_floats(xs):
    # From Python 3.12 on, sum() of Python floats compensates rounding (Neumaier).
    natively(run("""
    def f(x, n):
        t = 0.0
        r = []
        for i in range(n):
            s = sum(v for v in x)
            t += s
        return locals()
    """, "f", lambda: (list(xs), 3)))


def test_sum_leaves_the_float_path_for_numpy_floats():
    # A Python float start, then NumPy floats: the compensation so far is added first.
    natively(run("""
    def f(x, a, n):
        t = 0.0
        for i in range(n):
            t += sum((x[k] * a[k] for k in range(len(a))), 0.25)
        return locals()
    """, "f", lambda: ([1e16, 1.0, -1e16, 1.0], np.array([1.0, 1.0, 1.0, 1.0]), 3)))


def test_ints_added_to_a_float_total():
    natively(run("""
    def f(x, n):
        t = 0.0
        for i in range(n):
            t += sum((x[k % 3] for k in range(7)), 1e16) + sum((k > 3 for k in range(7)), 0.5)
        return locals()
    """, "f", lambda: ([3, -1, 1], 3)))


def test_a_filtered_sum_of_python_floats():
    recs = run("""
    def f(x, n):
        t = 0.0
        for i in range(n):
            t += sum(v for v in x if v > 0.2)
        return locals()
    """, "f", lambda: ([0.1, 1e16, -1e16, 0.3, 1e-3] * 3, 3), expect=None)
    if sys.version_info >= (3, 12):  # the total is 0 or a float: stagepy does not follow that
        difftest.assert_reason(recs, "compensated summation")
    else:
        natively(recs)


def test_module_level_generator():
    natively(run_module("""
    total = 0.0
    for i in range(n):
        total += sum(A[i, k] for k in range(A.shape[1]))
    """, lambda: {"A": rand((9, 4)), "n": 9}))


def not_the_builtin_sum(g, start=0):
    return 42


def test_a_sum_that_is_not_the_builtin():
    # The module's `sum` is another function: the nest must not take it for the builtin.
    recs = run_module("""
    total = 0
    for i in range(n):
        total += sum(k for k in range(i))
    """, lambda: {"n": 5, "sum": not_the_builtin_sum}, expect="interpreted")
    difftest.assert_reason(recs, "calls `sum`")


def test_max_and_min_keep_the_first_of_equals_and_nans():
    natively(run("""
    def f(A, hi, lo):
        for i in range(A.shape[0]):
            hi[i] = max(abs(A[i, j]) for j in range(A.shape[1]))
            lo[i] = min(A[i, j] for j in range(A.shape[1]) if j != i)
        return locals()
    """, "f", lambda: (np.where(rand((30, 9)) > 1.2, np.nan, np.round(rand((30, 9)), 1)),
                       np.zeros(30), np.zeros(30))))


def test_min_and_max_of_python_ints_and_signed_zeros():
    natively(run("""
    def f(L, Z, n):
        t = 0
        z = None
        for r in range(n):
            t += min(x * r - 3 for x in L) + max(x % (r + 2) for x in L)
            z = max(v for v in Z)
        return locals()
    """, "f", lambda: ([5, 3, 9, -2, 7], [0.0, -0.0, -1.0], 6)))


def test_max_of_nothing_raises_like_cpython():
    # The first statement's generator is empty: CPython raises ValueError there.
    natively(run("""
    def f(n):
        r = []
        t = 0
        for i in range(n):
            t += i
            r = max(j for j in range(i))
        return locals()
    """, "f", lambda: (4,), expect=None))
    run("""
    def f(n):
        t = 0
        for i in range(1, n):
            t += max(j * j for j in range(i))
        return locals()
    """, "f", lambda: (6,))


@pytest.mark.parametrize("src, reason", [
    ("""
    def f(n):
        t = 0
        for i in range(n):
            t += max((k * k % 7 for k in range(i + 1)), default=0)
        return locals()
    """, "generator expression other than"),
    ("""
    def f(n):
        t = 0
        for i in range(n):
            t += sum((y := k) for k in range(i))
        return locals()
    """, "(:=)"),
])
def test_what_stays_interpreted(src, reason):
    recs = run(src, "f", lambda: (6,), expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_sum_any_all_of_other_things_stay_with_cpython():
    # sum() of a number raises TypeError in CPython: the nest stays with it.
    recs = run("""
    def f(x, n):
        t = 0.0
        r = None
        for i in range(n):
            try_it = x[i]
            t += try_it
        try:
            for i in range(n):
                r = sum(x[i])
        except TypeError as e:
            r = str(e)
        return locals()
    """, "f", lambda: (np.arange(4.0), 4), expect=None)
    difftest.assert_reason(recs, "calls len() on a np.float64")


# ---------------------------------------------------------------- reductions of sequences
# sum(S), min(S), max(S), any(S), all(S) of a list, a tuple or an array: the same loop as
# the generator `(x for x in S)` would give, item by item in CPython's order.

def test_sum_min_max_any_all_of_rows():
    rng = np.random.default_rng(61)
    L = np.round(rng.standard_normal((40, 17)), 1).tolist()
    A = np.round(rng.standard_normal((40, 17)), 1)
    A[3, 5] = np.nan
    L[7][2] = float("nan")
    M = [[int(x) for x in row] for row in rng.standard_normal((40, 17)) * 1e6]
    natively(run("""
    def f(L, A, M, T, n):
        t = 0.0
        k = 0
        out = []
        for i in range(n):
            t += sum(L[i]) + max(L[i]) - min(A[i]) + sum(A[i], 0.5) + any(L[i]) + all(A[i])
            k += sum(M[i]) * 2 ** 40 + max(M[i]) + sum(T) + min(T) + sum(M[i], start=3)
            out.append(sum(A[i]))
        return locals()
    """, "f", lambda: (L, A, M, (3, -1, 4, 1, -5), 40)))


@pytest.mark.parametrize("xs", [[0.1] * 10 + [1e16, -1e16], [1e100, 1.0, -1e100, 1e-100], [1.0, 2.5, 3.0, 1e20, -1e20]])
def test_sum_of_a_list_of_floats_is_the_builtins(xs):
    # From Python 3.12 on, sum() of floats compensates (Neumaier): the same as CPython's.
    natively(run("""
    def f(rows, n):
        t = 0.0
        for i in range(n):
            t += sum(rows[i])
        return locals()
    """, "f", lambda: ([xs[i:] + xs[:i] for i in range(len(xs))], len(xs))))


def test_reductions_of_empty_sequences():
    # sum() of nothing is its start; min()/max() of nothing raise ValueError at that
    # statement, after the earlier iterations' effects; any()/all() are False/True.
    run("""
    def f(R, n):
        s = 0
        a = None
        for i in range(n):
            s += sum(R[i]) + any(R[i]) + all(R[i])
            a = max(R[i])
        return locals()
    """, "f", lambda: ([[1.0, 2.0], [3.0], [], [4.0]], 4), expect=None)


def test_a_reduction_of_a_sequence_that_is_not_the_builtin():
    recs = run_module("""
    total = 0
    for i in range(n):
        total += max(L[i])
    """, lambda: {"n": 3, "L": [[1, 2], [3, 4], [5, 6]], "max": not_the_builtin_sum})
    # `max` is that function (of this module's, reading no global): inlined as itself.
    assert all(r["native_calls"] for r in recs), recs
