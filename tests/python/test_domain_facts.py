"""Facts at the edges of triangular, guarded and reversed loops.

The static analysis answers most of its questions (is this subscript within its array over
the loop's whole domain? can this int operation leave 64 bits? can this loop carry a
dependence?) by eliminating the loops from their linear bounds and guards, without isl
(src/analysis/box_conditions.h). A wrong answer there would drop a check that was needed: an
IndexError not raised, a negative index not wrapped, an int that overflowed. So each nest
here runs with sizes on both sides of each edge, alternating call by call, and must give
CPython's values, exceptions (at the same iteration, with the earlier writes done) and
arguments. Every test is differential (difftest.run)."""
import functools
import itertools

import numpy as np
import pytest

import difftest

run = functools.partial(difftest.run, warn_filter="default")

pytestmark = pytest.mark.usefixtures("two_threads_on_the_cpu")  # conftest.py


@pytest.mark.parametrize("n, cols", [(700, 701), (700, 700), (3, 3), (0, 0)])
def test_triangular_nest_in_and_out_of_bounds(n, cols):
    # j reaches n: in bounds exactly when A has n + 1 columns (else IndexError at i = 0).
    run("""
    def f(A, n):
        for i in range(n):
            for j in range(i + 1, n + 1):
                A[i, j] = i * 10 + j
        return locals()
    """, "f", lambda: (np.zeros((max(n, 1), cols)), n))


def test_guarded_access_past_the_end_raises_where_cpython_does():
    # m alternates between len(B) and len(B) + 1: the guard j < m admits B[len(B)].
    sizes = itertools.cycle([600, 601])
    recs = run("""
    def f(A, B, m):
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if j < m:
                    A[i, j] = B[j] + i
        return locals()
    """, "f", lambda: (np.zeros((30, 700)), np.arange(600.0), next(sizes)))
    assert recs and recs[0]["native_calls"] >= 1


def test_guards_between_loop_variables():
    # nussinov's shape: a reversed outer loop, a triangular inner one, guards between them.
    run("""
    def f(T, n):
        for i in range(n - 1, -1, -1):
            for j in range(i + 1, n):
                if i + 1 < n:
                    T[i, j] = max(T[i, j], T[i + 1, j])
                if i < j - 1:
                    T[i, j] = max(T[i, j], T[i + 1, j - 1] + 1)
        return locals()
    """, "f", lambda: (np.zeros((40, 40)), 40))


@pytest.mark.parametrize("n", [1, 5, 600])
def test_reversed_loop_whose_last_index_wraps(n):
    # j = 0 reads and writes A[-1]: Python wraps it to the last element.
    run("""
    def f(A, n):
        for j in range(n, -1, -1):
            A[j - 1] = A[j - 1] + j
        return locals()
    """, "f", lambda: (np.arange(float(n)), n))


def test_affine_int_near_the_top_of_64_bits():
    # i + k leaves 64 bits at i = 3 in one call of two: CPython's big int, then % 1000.
    offsets = itertools.cycle([2**63 - 3, 10])
    run("""
    def f(A, k):
        for i in range(len(A)):
            A[i] = (i + k) % 1000
        return locals()
    """, "f", lambda: (np.zeros(800, dtype=np.int64), next(offsets)))


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_time_loop_carries_and_its_inner_loop_runs_on_threads(steps):
    recs = run("""
    def f(A, B, steps):
        n = A.shape[0]
        for t in range(steps):
            for i in range(1, n - 1):
                B[i] = 0.5 * (A[i - 1] + A[i + 1])
            for i in range(1, n - 1):
                A[i] = B[i]
        return locals()
    """, "f", lambda: (np.linspace(0.0, 1.0, 5000), np.zeros(5000), steps))
    # The time loop carries a dependence exactly when it has two steps or more.
    assert difftest.loops(recs)["t"]["parallel"] == (steps < 2)
    if steps >= 2:
        assert difftest.ran_parallel(recs, "i")
