"""Loop interchange (src/specialize/plan_interchange.h): a loop J whose body is one inner
loop I that walks memory with stride 1 when J's variable moves (`for j: for i: B[i, j] =
...` over C-ordered arrays) runs with I outside. The results must be CPython's bit for bit,
with CPython's warnings (in CPython's order) and exceptions, and the loop variables and the
body's variables after the nest as CPython leaves them. Every test is differential
(difftest.run) and, where the order must change, checks the report says it did."""
import functools

import numpy as np
import pytest

import difftest

run = functools.partial(difftest.run, warn_filter="default")
loops = difftest.loops


def interchanged(recs, var):
    return loops(recs).get(var, {}).get("interchanged", False)


# Backend behaviour, the same on every CPython: scripts/test.sh runs these on the first only.
pytestmark = [pytest.mark.usefixtures("cpu_only"), pytest.mark.backend]  # conftest.py


def rand(shape, seed=0, order="C"):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape), order=order)


COLUMNS = """
def f(A, B):
    n, m = A.shape
    for j in range(m):
        for i in range(n):
            B[i, j] = A[i, j] * 2.0 + 1.0
    return locals()
"""


def test_a_column_walk_runs_row_by_row(threads):
    recs = run(COLUMNS, "f", lambda: (rand((300, 700)), np.zeros((300, 700))))
    assert interchanged(recs, "j")


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (1, 1), (0, 0), (3, 1), (1, 3)])
def test_empty_and_single_ranges_leave_the_loop_variables_as_cpython_does(shape):
    # `i` stays unbound when no row exists; `j` is m - 1 even then.
    run(COLUMNS, "f", lambda: (rand(shape), np.zeros(shape)), expect=None)


def test_fortran_ordered_arrays_keep_their_order():
    recs = run(COLUMNS, "f", lambda: (rand((200, 300), order="F"), np.zeros((200, 300), order="F")))
    assert not interchanged(recs, "j")


def test_a_product_accumulated_in_c_is_exact_in_the_other_order(threads):
    # i-j-k with C[i, j] +=: j moves inside k; each C[i, j] still adds in k's order. (Float
    # arrays run their columns interleaved instead, test_interleave.py: integers here.)
    src = """
    def f(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            for j in range(m):
                for k in range(p):
                    C[i, j] += A[i, k] * B[k, j]
        return locals()
    """
    ints = lambda shape, seed: np.random.default_rng(seed).integers(-1000, 1000, shape)
    recs = run(src, "f", lambda: (ints((40, 60), 1), ints((60, 300), 2), ints((40, 300), 3)))
    assert interchanged(recs, "j")
    recs = run(src, "f", lambda: (rand((40, 60), 1), rand((60, 300), 2), rand((40, 300), 3)))
    assert difftest.loops(recs)["j"]["interleaved"] == 32


def test_lists_of_lists():
    src = """
    def f(A, B, C, n):
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    C[i][j] += A[i][k] * B[k][j]
        return locals()
    """
    n = 40
    mk = lambda: (rand((n, n), 4).tolist(), rand((n, n), 5).tolist(), rand((n, n), 6).tolist(), n)
    recs = run(src, "f", mk)
    assert difftest.loops(recs)["j"]["interleaved"] > 1  # (Python floats: columns interleaved)


def test_variables_the_body_assigns_end_with_the_last_iteration():
    src = """
    def f(A, B):
        n, m = A.shape
        for j in range(m):
            for i in range(n):
                t = A[i, j] * 3.0
                u = t - 1.0
                B[i, j] = u * t
        return locals()
    """
    recs = run(src, "f", lambda: (rand((50, 400), 7), np.zeros((50, 400))))
    assert interchanged(recs, "j")


def test_a_variable_read_before_it_is_assigned_keeps_the_order():
    # `t` carries the previous iteration's value into B: the order decides the result.
    src = """
    def f(A, B):
        n, m = A.shape
        t = 0.0
        for j in range(m):
            for i in range(n):
                B[i, j] = t
                t = A[i, j]
        return locals()
    """
    recs = run(src, "f", lambda: (rand((30, 300), 8), np.zeros((30, 300))))
    assert not interchanged(recs, "j")


def test_warnings_come_in_cpythons_order():
    # Column 0 has a NaN in row 250 (invalid, in the subtraction); column 1 an overflow in
    # row 0 (multiply). Row by row the overflow would come first; CPython sees column 0
    # first. The later columns cross blocks of the fast pass, which are undone and rerun.
    src = """
    def f(A, B, C):
        n, m = A.shape
        for j in range(m):
            for i in range(n):
                B[i, j] = A[i, j] * 1e300
                C[i, j] += A[i, j] - A[i, j]
        return locals()
    """

    def mk():
        A = rand((300, 600), 9)
        A[250, 0] = np.inf
        A[0, 1] = 1e10
        A[5, 400] = np.nan
        return A, np.zeros((300, 600)), rand((300, 600), 10)
    recs = run(src, "f", mk)
    assert interchanged(recs, "j")


def test_a_warning_in_a_later_row_reruns_the_rest_in_order(threads):
    # C reads what it writes: the undone block must not add twice.
    src = """
    def f(A, C):
        n, m = A.shape
        for j in range(m):
            for i in range(n):
                C[i, j] += A[i, j] * A[i, j]
        return locals()
    """

    def mk():
        A = rand((100, 900), 11)
        A[60, 700] = 1e200
        A[70, 3] = -1e200
        return A, rand((100, 900), 12)
    recs = run(src, "f", mk)
    assert interchanged(recs, "j")


def test_an_index_error_keeps_cpythons_order_of_writes():
    src = """
    def f(A, B, n):
        m = A.shape[1]
        for j in range(m):
            for i in range(n):
                B[i, j] = A[i, j] + 1.0
        return locals()
    """
    run(src, "f", lambda: (rand((20, 300), 13), np.zeros((20, 300)), 21), expect=None)


def test_an_overlapping_output_runs_in_order():
    # B is A's transpose: B[i, j] = A[j, i] is written while A[i, j] is read elsewhere.
    src = """
    def f(A, B):
        n, m = A.shape
        for j in range(m):
            for i in range(n):
                B[i, j] = A[i, j] * 0.5 + 1.0
        return locals()
    """

    def mk():
        A = rand((300, 300), 14)
        return A, A.T
    run(src, "f", mk)


def test_a_body_with_a_branch_keeps_the_order():
    src = """
    def f(A, B):
        n, m = A.shape
        for j in range(m):
            for i in range(n):
                if A[i, j] > 0.0:
                    B[i, j] = A[i, j]
        return locals()
    """
    recs = run(src, "f", lambda: (rand((30, 300), 15), np.zeros((30, 300))))
    assert not interchanged(recs, "j")
