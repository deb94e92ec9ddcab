"""Helpers that loop (`def dot(a, b, n): s = 0.0; for k in range(n): s += a[k] * b[k];
return s`) are inlined as statements: their loops run before the calling statement, with
their locals in Temps, and any check failing inside hands the whole calling statement to
CPython, which calls the real function (same values, same exceptions from inside it, the
earlier iterations' writes done). The analysis runs on the nest with them inlined, so a loop
around such a call may run on threads."""
import numpy as np
import pytest

from difftest import loops, ran_parallel, run

N = 600


def reason_of(recs):
    return " ".join(r["reason"] for r in recs if r["function"] == "f")


def test_a_dot_product_helper_over_rows_runs_natively_and_in_parallel():
    recs = run("""
import numpy as np

def dot(a, b, n):
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s

def f(A, B, n):
    C = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            C[i, j] = dot(A[i], B[j], n)
    return C
""", "f", lambda: (np.random.default_rng(1).random((40, 40)), np.random.default_rng(2).random((40, 40)), 40),
        warn_filter="default")
    assert ran_parallel(recs, "i"), recs


@pytest.mark.parametrize("kind", ["numpy", "lists"])
def test_norms_over_the_items_of_rows(kind):
    def data():
        a = np.random.default_rng(3).random((30, 7)) - 0.5
        return (a if kind == "numpy" else a.tolist()), 30
    run("""
import math

def norm(v):
    s = 0.0
    for x in v:
        s += x * x
    return math.sqrt(s)

def f(A, n):
    out = [0.0] * n
    for i in range(n):
        out[i] = float(norm(A[i]))
    return out
""", "f", data)


@pytest.mark.parametrize("kind", ["numpy", "lists"])
def test_a_neighbour_count_over_offset_tuples(kind):
    def grid():
        g = (np.random.default_rng(4).random((24, 31)) < 0.4).astype(np.int64)
        return (g if kind == "numpy" else g.tolist()), 24, 31
    recs = run("""
def count(g, i, j, n, m):
    c = 0
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di != 0 or dj != 0:
                c += g[(i + di) % n][(j + dj) % m]
    return c

def f(g, n, m):
    out = [[0] * m for _ in range(n)]
    for i in range(n):
        for j in range(m):
            k = count(g, i, j, n, m)
            out[i][j] = 1 if k == 3 or (k == 2 and g[i][j] == 1) else 0
    return out
""", "f", grid)
    assert any(r["native_calls"] for r in recs if r["function"] == "f"), recs


def test_parameters_the_helper_assigns_and_while_loops():
    run("""
def digits(x):
    s = 0
    while x > 0:
        s += x % 10
        x //= 10
    return s

def steps(x):
    c = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        c += 1
    return c

def f(n):
    out = []
    x = 0
    for i in range(1, n):
        x = i
        out.append(digits(i * 7919) + steps(i) + x)
    return out, x
""", "f", lambda: (300,))


def test_python_ints_that_outgrow_64_bits_inside_a_looping_helper():
    recs = run("""
def fact(n):
    p = 1
    for k in range(2, n + 1):
        p *= k
    return p

def f(n):
    out = []
    for i in range(n):
        out.append(fact(i) % 1000003)
    return out
""", "f", lambda: (40,), expect="bail")


def test_an_index_error_inside_the_helpers_loop_after_the_earlier_writes():
    run("""
def window(a, i, w):
    s = 0.0
    for k in range(w):
        s += a[i + k]
    return s

def f(a, b, n, w):
    for i in range(n):
        b[i] = window(a, i, w)
    return b
""", "f", lambda: (np.arange(100.0), np.zeros(100), 100, 3), expect="bail")


def test_a_raise_inside_the_helper():
    run("""
def check(a, m):
    for k in range(m):
        if a[k] < 0:
            raise ValueError("negative at " + str(k))

def f(A, out, n, m):
    for i in range(n):
        check(A[i], m)
        out[i] = A[i, 0] * 2
    return out
""", "f", lambda: (np.abs(np.random.default_rng(5).random((20, 6))) - np.eye(20, 6)[::-1] * 3, np.zeros(20), 20, 6),
        expect=None)


def test_helpers_that_loop_call_helpers_in_turn():
    run("""
def sq(x):
    return x * x

def sumsq(a, n):
    s = 0.0
    for k in range(n):
        s += sq(a[k])
    return s

def rms_rows(A, i, n, m):
    t = 0.0
    for r in range(i, min(i + 2, n)):
        t += sumsq(A[r], m)
    return t / m

def f(A, n, m):
    out = [0.0] * n
    for i in range(n):
        out[i] = float(rms_rows(A, i, n, m))
    return out
""", "f", lambda: (np.random.default_rng(6).random((25, 9)), 25, 9))


@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_numpy_warnings_inside_a_looping_helper(warn_filter):
    src = """
def scaled_sum(a, n, k):
    s = 0.0
    for j in range(n):
        s += a[j] * k
    return s

def f(A, out, n):
    for i in range(n):
        out[i] = scaled_sum(A[i], n, 1e300)
    return out
"""
    def data():
        A = np.random.default_rng(7).random((30, 30))
        A[17, 3] = 1e200
        return A, np.zeros(30), 30
    recs = run(src, "f", data, warn_filter=warn_filter, expect=None)
    assert any(r["native_calls"] for r in recs if r["function"] == "f"), recs


@pytest.mark.parametrize("helper,reason", [
    ("def h(a, n):\n    for k in range(n):\n        if a[k] > 2:\n            return k\n    return None\n",
     "assigns a None to the value `h` returns"),
    ("def h(a, n):\n    t = 0\n    for k in range(n):\n        t += a[k] + h(a, k)\n    return t\n", "too deep"),
])
def test_helpers_that_loop_which_stay_interpreted(helper, reason):
    recs = run(helper + """
def f(A, n):
    s = 0
    for i in range(n):
        s += h(A, i)
    return s
""", "f", lambda: ([1, 2, 3, 4, 0, 1], 6), expect=None)
    mine = [r for r in recs if r["function"] == "f"]  # (h's own loop may run natively)
    assert mine and not any(r["native_calls"] for r in mine), recs
    assert reason in reason_of(recs), recs


def test_a_looping_helper_in_a_branch_stays_interpreted():
    recs = run("""
def total(a, n):
    t = 0
    for k in range(n):
        t += a[k]
    return t

def f(A, n):
    s = 0
    for i in range(n):
        s += total(A, i) if i % 2 else 0
    return s
""", "f", lambda: ([1, 2, 3, 4, 0, 1], 6), expect=None)
    assert not any(r["native_calls"] for r in recs if r["function"] == "f"), recs
    assert "where the call may not be evaluated" in reason_of(recs), recs


def test_a_row_argument_out_of_range_raises_at_the_call_even_if_never_read():
    # dot(A[i], B[j], 0) reads no element of its rows, but CPython takes A[i] at the call:
    # IndexError once i passes A's rows, after the earlier iterations' writes.
    run("""
def dot(a, b, n):
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s

def f(A, B, out, n, p):
    for i in range(n):
        out[i] = dot(A[i], B[0], p) + 1.0
    return out
""", "f", lambda: (np.ones((5, 3)), np.ones((2, 3)), np.zeros(8), 8, 0), expect="bail")


@pytest.mark.parametrize("helper", [
    "def h(n):\n    for i in range(n):\n        pass\n    return i\n",
    "def h(n):\n    for k in range(3):\n        if k == n:\n            z = k * 10\n    return z\n",
    "def h(n):\n    while True:\n        if n > 2:\n            break\n        w = n\n        n += 1\n    return w\n",
])
def test_a_local_a_call_may_leave_unassigned_is_not_the_previous_calls(helper):
    # Every call starts with its locals unbound: where this one assigns none before the read,
    # CPython raises UnboundLocalError (after the earlier iterations' appends). Inlined, the
    # local would be a Temp still holding the previous call's value: such a helper stays a
    # call (the search's find: an agent's differential hunt).
    recs = run(helper + """
def f(ns):
    out = []
    for n in ns:
        out.append(h(n))
    return out
""", "f", lambda: ([1, 3, 0, 2, 7],), expect=None)
    assert "where no assignment reached it" in reason_of(recs), recs


def test_a_looping_helper_returning_an_argument_it_was_given_computed():
    # `return x` of an argument the call computed (`A[i] + 1.0`, a Temp of the caller's):
    # its value, not None (the nest stayed in CPython, "assigns a None").
    recs = run("""
def h(a, x):
    t = 0
    for k in range(len(a)):
        t += a[k]
    return x
def f(n):
    A = [float(i) for i in range(n)]
    out = []
    for i in range(n):
        y = h(A, A[i] + 1.0)
        out.append(y)
    return out
""", "f", lambda: (5,))
    assert any(r["native_calls"] for r in recs if r["function"] == "f"), recs
