"""`x in S` and `x not in S` of a sequence the nest reads (a tuple or list variable, a row, a
1-d array, a str) run natively as a scan that stops at the first equal item, as CPython's
`in` does. CPython tries identity before `==`, which a NaN can tell apart (the very NaN
object inside the list is found): a NaN looked up hands the statement to CPython."""
import types

import numpy as np
import pytest

import difftest

COUNT = """
def f(A, bad):
    c = 0
    for i in range(len(A)):
        if A[i] in bad:
            c += 1
    return c
"""

NATIVE = [
    ("a tuple variable of ints", COUNT, lambda: (np.arange(3000) % 11, (1, 4, 7, 10))),
    ("not in a list of floats", """
    def f(A, seen):
        out = []
        for i in range(len(A)):
            if A[i] * 0.5 not in seen:
                out.append(i)
        return out
    """, lambda: (np.arange(200.0), [0.5, 1.0, 7.5, 30.0])),
    ("a row of a list of lists", """
    def f(M, xs):
        hits = 0
        for i in range(len(M)):
            for x in xs:
                if x in M[i]:
                    hits += i
        return hits
    """, lambda: ([[i * j % 7 for j in range(6)] for i in range(40)], [0, 3, 9])),
    ("a character in a str variable", """
    def f(s, vowels):
        n = 0
        for ch in s:
            if ch in vowels:
                n += 1
            elif ch not in "xyz":
                n -= 1
        return n
    """, lambda: ("the quick brown fox jumps over the lazy dog" * 20, "aeiou")),
    ("a value in a NumPy vector", """
    def f(A, B):
        c = 0
        for i in range(len(A)):
            c += A[i] in B
        return c
    """, lambda: (np.arange(500) % 37, np.array([3, 5, 8, 13, 21, 34]))),
    ("an int among floats", """
    def f(n, t):
        r = []
        for i in range(n):
            r.append(i in t)
        return r
    """, lambda: (8, (1.0, 3.5, 5.0, 6.0))),
    ("a lookup in the test of a while loop", """
    def f(n, stops):
        total = 0
        for i in range(n):
            k = i
            while k not in stops and k < 50:
                k += 3
            total += k
        return total
    """, lambda: (60, [9, 21, 40, 44])),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_membership_runs_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs


def test_a_tuple_lookup_runs_on_threads():
    recs = difftest.run(COUNT, "f", lambda: (np.arange(20000) % 13, (2, 3, 5, 7, 11)), warn_filter="default")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


def test_a_nan_found_by_identity_goes_to_cpython():
    # L[1] is the very NaN object in L: CPython finds it; a NaN from an array is a new
    # object, never found.
    nan = float("nan")
    difftest.run("""
    def f(L, A):
        r = []
        for i in range(len(L)):
            r.append(L[i] in L)
            r.append(A[i] in L)
        return r
    """, "f", lambda: ([1.0, nan, 3.0], np.array([1.0, np.nan, 2.0])), expect="bail")


NAN_ITEMS = {
    # The loop's own item, the very object: found (the helper-found mismatch: 0 for 1).
    "the loop's item in its own list": ("""
    def f(pool, other):
        hits = 0
        for v in pool:
            if v in pool:
                hits += 1
        return hits, v
    """, lambda nan: ([nan, 1.0, nan], [2.0])),
    "`not in` of a tuple holding the item": ("""
    def f(xs, pool):
        m = 0
        for v in xs:
            if v not in pool:
                m += 1
        return m
    """, lambda nan: ([nan, 1.0], (nan, 1.0))),
    "the item among other NaNs, a list appended beside": ("""
    def f(xs, pool):
        log = []
        for v in xs:
            log.append(v in pool)
        return log
    """, lambda nan: ([nan, 2.0, nan, float("nan")], [float("nan"), nan, 2.0])),
    "a NaN among numbers only: decided natively": ("""
    def f(xs, pool):
        c = 0
        for v in xs:
            c += v in pool
        return c
    """, lambda nan: ([nan, 5.0, nan], [1.0, 5.0, 7.0])),
}


@pytest.mark.parametrize("what", list(NAN_ITEMS))
def test_a_nan_item_of_the_loop_is_found_by_identity_as_in_cpython(what):
    # A loop's item variable is written back as the sequence's own item (not a new float),
    # so CPython, deciding a NaN lookup by identity, finds the same objects.
    src, make = NAN_ITEMS[what]
    nan = float("nan")
    recs = difftest.run(src, "f", lambda: make(nan), expect=None)
    if "natively" in what:
        assert recs and all(r["native_calls"] == r["calls"] and r["bailouts"] == 0 for r in recs), recs


def test_an_attribute_holding_the_sequence():
    obj = types.SimpleNamespace(primes=[2, 3, 5, 7, 11, 13])
    difftest.run("""
    def f(o, n):
        c = 0
        for i in range(n):
            if i % 17 in o.primes:
                c += i
        return c
    """, "f", lambda: (obj, 500))


@pytest.mark.parametrize("make, reason", [
    (lambda: ({1: 2, 5: 6}, 10), "dict"),
    (lambda: (np.arange(12).reshape(3, 4), 10), "array"),
])
def test_lookups_stagepy_leaves_to_cpython_say_why(make, reason):
    recs = difftest.run("""
    def f(S, n):
        c = 0
        for i in range(n):
            if i in S:
                c += 1
        return c
    """, "f", make, expect="interpreted")
    difftest.assert_reason(recs, reason)
