"""`out.append(x)` of a list the nest does nothing else with runs natively: the kernel
collects the items (numbers and bools, whatever their types), and the list object gets them,
boxed as CPython would have made them, in the order the statements ran, when the kernel
returns: also when it stops for CPython at an error or returns from inside the loop, so
the list holds exactly the items appended before. The list is never read into a buffer: what
it held before stays as it was (any objects), and it may be empty. A list the nest also reads,
or items of other kinds, keep the nest in CPython with the reason."""
import collections

import numpy as np
import pytest

import difftest

NATIVE = [
    ("filter into a new list", """
    def f(a):
        out = []
        for i in range(len(a)):
            if a[i] > 0.5:
                out.append(a[i] * 2)
        return out
    """, lambda: (np.random.default_rng(1).random(500),)),
    ("primes with a while loop inside", """
    def f(n):
        primes = []
        for k in range(2, n):
            d = 2
            p = True
            while d * d <= k:
                if k % d == 0:
                    p = False
                    break
                d += 1
            if p:
                primes.append(k)
        return primes
    """, lambda: (3000,)),
    ("items of several types, in order", """
    import math
    def f(a, out):
        for i in range(len(a)):
            out.append(i)
            out.append(math.sqrt(a[i]))
            out.append(a[i] > 0.5)
            out.append(a[i])
        return out
    """, lambda: (np.random.default_rng(2).random(50), ["kept", None, (1, 2)])),
    ("two names for one list interleave", """
    def f(a, b, n):
        for i in range(n):
            a.append(i)
            b.append(-i)
        return a
    """, lambda: (lambda L: (L, L, 20))([])),
    ("two lists", """
    def f(x, evens, odds):
        for v in x:
            if v % 2 == 0:
                evens.append(v)
            else:
                odds.append(v * 3)
        return locals()
    """, lambda: (np.arange(-20, 31, dtype=np.int32), [], [1.5])),
    ("a value whose type changes after the first iteration", """
    def f(a):
        s = 0.0
        sums = []
        for i in range(len(a)):
            s += a[i]
            sums.append(s)
        return sums
    """, lambda: (np.linspace(0, 1, 33),)),
    ("the first n primes: while len(primes) < n", """
    def f(n):
        primes = []
        k = 2
        while len(primes) < n:
            d = 2
            while d * d <= k and k % d:
                d += 1
            if d * d > k:
                primes.append(k)
            k += 1
        return primes, k
    """, lambda: (300,)),
    ("len() counts what was there before", """
    def f(out, a):
        for i in range(len(a)):
            if len(out) % 3 == 0:
                out.append(a[i])
            out.append(len(out))
        return out
    """, lambda: (["x", "y"], np.arange(10.0))),
    ("tuples of numbers", """
    def f(A):
        pairs = []
        n, m = A.shape
        for i in range(n):
            for j in range(m):
                if A[i, j] > 0.9:
                    pairs.append((i, j, A[i, j], A[i, j] > 0.95))
        pairs.append(())
        pairs.append((len(pairs),))
        return pairs
    """, lambda: (np.random.default_rng(4).random((30, 20)),)),
    ("appends from a nest of loops", """
    def f(A):
        pairs = []
        n, m = A.shape
        for i in range(n):
            for j in range(m):
                if A[i, j] > 0.8:
                    pairs.append(i * m + j)
        return pairs
    """, lambda: (np.random.default_rng(3).random((40, 30)),)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_appends_run_natively_and_give_cpythons_list(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    assert all(r["native_calls"] == r["calls"] for r in recs), recs  # every nest, every call


def test_an_error_after_some_appends_leaves_them_in_the_list():
    # IndexError at a[n]: the items appended before are in `out` (compared as the mutated
    # argument), and CPython raises from the same place.
    difftest.run("""
    def f(a, out, n):
        for i in range(n):
            out.append(a[i] + 1)
        return out
    """, "f", lambda: (np.arange(10), [], 15), expect="bail")


def test_an_int_that_outgrows_64_bits_is_appended_by_cpython():
    difftest.run("""
    def f(n):
        out = []
        p = 1
        for i in range(n):
            p = p * 7
            out.append(p)
        return out
    """, "f", lambda: (40,), expect="bail")


def test_appends_before_a_return_inside_the_loop():
    recs = difftest.run("""
    def f(a, out):
        for i in range(len(a)):
            if a[i] < 0:
                return out
            out.append(a[i])
        return None
    """, "f", lambda: (np.array([3, 1, 4, 1, -5, 9]), []))
    assert sum(r["exits"] for r in recs) > 0


def test_a_module_level_loop_building_a_list():
    difftest.run_module("""
    squares = []
    for i in range(200):
        if i % 3:
            squares.append(i * i)
    """, dict)


INTERPRETED = [
    ("a complex item", """
    def f(a):
        out = []
        for i in range(len(a)):
            out.append(a[i] * 1j)
        return out
    """, lambda: (np.arange(5.0),), "appends a np.complex128"),
    ("a deque", """
    def f(a, out):
        for i in range(len(a)):
            out.append(a[i])
        return out
    """, lambda: (np.arange(5.0), collections.deque()), ("deque", "`out.append` is a method")),  # 3.12+: a heap type
    ("a list inside a list the nest reads", """
    def f(M, out):
        for i in range(3):
            out.append(M[0][0] + i)
        return out
    """, lambda: (lambda L: ([L], L))([1.0]), "a list the nest also reads"),
]


@pytest.mark.parametrize("src, make, reason", [c[1:] for c in INTERPRETED], ids=[c[0] for c in INTERPRETED])
def test_appends_that_stay_in_cpython_say_why(src, make, reason):
    recs = difftest.run(src, "f", make, expect="interpreted", globals_={"collections": collections})
    reasons = reason if isinstance(reason, tuple) else (reason,)
    assert any(why in (r["reason"] or "") for r in recs for why in reasons), [r["reason"] for r in recs]


def test_the_report_says_the_loop_appends_in_order():
    recs = difftest.run("""
    def f(a):
        out = []
        for i in range(len(a)):
            out.append(a[i] * 2.0)
        return out
    """, "f", lambda: (np.arange(3000.0),))
    assert "it appends to `out`, in order" in difftest.loops(recs)["i"]["why"]


def test_appends_to_an_attribute_list_in_a_method():
    # `self.trace.append(...)`: the attribute is read at entry like `self.n`; the list object
    # it holds gets the items.
    src = """
    class Sim:
        def __init__(self, n):
            self.n = n
            self.trace = []
            self.x = 1.0
        def run(self):
            x = self.x
            for i in range(self.n):
                x = x * 0.5 + 1.0 / (i + 1)
                if i % 7 == 0:
                    self.trace.append((i, x))
            self.x = x
            return len(self.trace)
    def f(n):
        s = Sim(n)
        s.run()
        s.run()
        return s.trace, s.x
    """
    recs = difftest.run(src, "f", lambda: (100,))
    assert [r["native_calls"] for r in recs if r["function"] == "Sim.run"] == [2 * difftest.CALLS]


# A loop that appends and computes with NumPy scalars under the default warnings filter:
# where an operation warned in the middle of 256 iterations, the exact re-run of those
# iterations (fp warnings' speculative chunks) appended their items a second time (600
# iterations gave 856 items). Such loops run without chunks.
@pytest.mark.parametrize("at", [None, 0, 255, 256, 300, 599])
@pytest.mark.parametrize("item", ["a[i] * 1e300", "(i, a[i] * 1e300)", "a[i] * 1e300 + b[i]"])
def test_appends_beside_a_warning_in_a_chunk(at, item):
    src = f"""
    def f(a, b, n):
        out = []
        for i in range(n):
            out.append({item})
        return out
    """
    def make():
        a = np.ones(600)
        if at is not None:
            a[at] = 1e10
        return a, np.arange(600.0), 600
    difftest.run(src, "f", make, expect=None, warn_filter="default")
