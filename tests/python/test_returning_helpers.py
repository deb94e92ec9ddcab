"""Helpers that loop and return from more than one place (`def is_prime(n): for d in ...:
if n % d == 0: return False; return n >= 2`) are inlined like any helper that loops: each
`return v` assigns a hidden return variable and sets a hidden flag, leaves the loop it is in
(and every loop around it, where the flag is set), and what follows a return outside the
loops runs only where the flag is clear (analysis/structure_returns.h). Every result here is
compared with CPython's: values, exceptions (raised inside the helper, after the earlier
iterations' writes), and the arguments afterwards."""
import numpy as np
import pytest

from difftest import ran_parallel, run


def mine(recs, name="f"):
    return [r for r in recs if r["function"] == name]


def ran_natively(recs, name="f"):
    return any(r["native_calls"] for r in mine(recs, name))


def test_a_prime_test_with_an_early_return_in_a_for_loop_runs_in_parallel():
    recs = run("""
def is_prime(n):
    if n < 2:
        return False
    for d in range(2, int(n ** 0.5) + 1):
        if n % d == 0:
            return False
    return True

def f(N):
    c = 0
    for n in range(N):
        if is_prime(n):
            c += 1
    return c
""", "f", lambda: (3000,))
    assert ran_natively(recs), recs
    assert ran_parallel(recs, "n"), recs


def test_a_prime_test_with_a_while_loop():
    recs = run("""
def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True

def f(flags, N):
    for n in range(N):
        flags[n] = is_prime(n)
    return flags
""", "f", lambda: (np.zeros(2500, dtype=np.bool_), 2500))
    assert ran_natively(recs), recs


@pytest.mark.parametrize("kind", ["numpy", "lists"])
def test_a_search_returning_the_index_or_minus_one(kind):
    def data():
        rng = np.random.default_rng(1)
        a = rng.integers(0, 50, 300)
        xs = rng.integers(0, 60, 200)
        if kind == "lists":
            return a.tolist(), xs.tolist(), [0] * 200
        return a, xs, np.zeros(200, dtype=np.int64)
    recs = run("""
def find(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return -1

def f(a, xs, out):
    for k in range(len(xs)):
        out[k] = find(a, xs[k])
    return out
""", "f", data)
    assert ran_natively(recs), recs


def test_a_return_from_the_inner_loop_of_two():
    recs = run("""
def first_pair(A, n, t):
    for i in range(n):
        for j in range(i + 1, n):
            if A[i] + A[j] == t:
                return i * n + j
    return -1

def f(A, ts, out, n):
    for k in range(len(ts)):
        out[k] = first_pair(A, n, ts[k])
    return out
""", "f", lambda: (np.random.default_rng(2).integers(0, 40, 60), np.arange(0, 90), np.zeros(90, dtype=np.int64), 60))
    assert ran_natively(recs), recs


def test_returns_in_both_branches_of_an_if_and_after_the_loop():
    run("""
def classify(a, n, x):
    if x < 0:
        return -1.0
    elif x > 100:
        return 1e9
    s = 0.0
    for k in range(n):
        s += a[k]
        if s > x:
            return float(k)
    return s

def f(a, xs, n):
    t = 0.0
    for x in xs:
        t += classify(a, n, x)
    return t
""", "f", lambda: (np.random.default_rng(3).random(50), [-3, 5, 200, 12.5, 0.0, 30, 101], 50))


def test_a_return_inside_a_loop_over_the_items_of_a_sequence():
    recs = run("""
def first_negative(v):
    for x in v:
        if x < 0:
            return x
    return 0.0

def f(A):
    s = 0.0
    for i in range(A.shape[0]):
        s += first_negative(A[i])
    return s
""", "f", lambda: (np.random.default_rng(4).random((80, 30)) - 0.02,))
    assert ran_natively(recs), recs


def test_enumerate_with_continue_and_a_return():
    run("""
def position(v, x):
    for k, y in enumerate(v):
        if y < x:
            continue
        if y == x:
            return k
        return -k
    return 999

def f(v, xs):
    out = []
    for x in xs:
        out.append(position(v, x))
    return out
""", "f", lambda: ([1, 3, 5, 7, 9, 11], [0, 1, 2, 5, 6, 11, 12]))


def test_a_helper_with_early_returns_calls_another():
    recs = run("""
def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if d * d > n:
            break
        if n % d == 0:
            return False
    return True

def next_prime(n):
    m = n + 1
    while True:
        if is_prime(m):
            return m
        m += 1

def f(out, n):
    for i in range(n):
        out[i] = next_prime(i * 7)
    return out
""", "f", lambda: (np.zeros(300, dtype=np.int64), 300))
    assert ran_natively(recs), recs


def test_an_index_error_inside_the_helper_after_the_earlier_writes():
    run("""
def find(a, x, n):
    for i in range(n):
        if a[i] == x:
            return i
    return -1

def f(a, xs, out, n):
    for k in range(len(xs)):
        out[k] = find(a, xs[k], n)
    return out
""", "f", lambda: (np.arange(10), np.array([3, 4, 2, 50, 1]), np.zeros(5, dtype=np.int64), 12), expect="bail")


def test_python_ints_that_outgrow_64_bits_before_the_return():
    run("""
def steps_to_exceed(x, limit):
    k = 0
    while True:
        if x > limit:
            return k
        x = x * 3 + 1
        k += 1

def f(xs, limit):
    t = 0
    for x in xs:
        t += steps_to_exceed(x, limit)
    return t
""", "f", lambda: ([1, 2, 3, 10, 77], 10 ** 30), expect=None)


def test_a_loop_that_writes_what_the_helper_reads_stays_in_order():
    # a[i] depends on the a[j], j < i, the helper scans: the i loop carries a dependence.
    recs = run("""
def first_above(a, n, t):
    for j in range(n):
        if a[j] > t:
            return a[j]
    return t

def f(a, n):
    for i in range(1, n):
        a[i] = first_above(a, i, a[i]) * 0.5 + a[i - 1] * 0.25
    return a
""", "f", lambda: (np.random.default_rng(5).random(400), 400))
    assert ran_natively(recs), recs
    assert not ran_parallel(recs, "i"), recs


def test_return_values_of_different_types_keep_the_caller_interpreted():
    recs = run("""
def find(a, x):
    for i in range(len(a)):
        if a[i] == x:
            return i
    return None

def f(a, xs):
    c = 0
    for x in xs:
        if find(a, x) is None:
            c += 1
    return c
""", "f", lambda: ([1, 2, 3], [0, 1, 2, 5]), expect=None)
    assert not ran_natively(recs), recs


def test_a_raise_after_an_early_return_point():
    run("""
def check(v, lo):
    for x in v:
        if x < lo:
            return False
        if x > 1000:
            raise ValueError("too big: %r" % x)
    return True

def f(rows, lo):
    c = 0
    for r in rows:
        if check(r, lo):
            c += 1
    return c
""", "f", lambda: ([[5, 6], [1, 7], [9, 9], [8, 2000], [3, 3]], 4), expect=None)
