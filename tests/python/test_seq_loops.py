"""`for x in S`, `for i, x in enumerate(S)` and `for a, b in zip(A, B)` over lists, tuples,
arrays and buffers run natively (the lifter desugars them into loops over range()), with
CPython's results: the loop variables after the loop, a break, a sequence the body changes
ahead of the iteration, and errors or overflows in the middle of the loop, where CPython
takes over with the iterator rebuilt at the right item. What cannot be compiled this way
stays interpreted, with the reason."""
import array
from types import SimpleNamespace

import numpy as np
import pytest

import difftest


NATIVE = [
    ("list", """
    def f(L):
        s = 0.0
        for x in L:
            s += x * x
        return s, x
    """, lambda: ([0.5, 1.5, -2.0, 4.25],)),
    ("array", """
    def f(a, out):
        for x in a:
            out[0] += x
        return locals()
    """, lambda: (np.arange(5.0), np.zeros(1))),
    ("int array to a Python int", """
    def f(a):
        t = 0
        for v in a:
            t = t * 3 + v
        return t, v
    """, lambda: (np.array([3, 1, 2, 7], dtype=np.int32),)),
    ("tuple", """
    def f(t):
        s = 0
        for v in t:
            s += v * v
        return s, v
    """, lambda: ((3, 4, 5, -6),)),
    ("enumerate", """
    def f(a, out):
        for i, x in enumerate(a):
            out[i] = x * 2
        return locals()
    """, lambda: (np.arange(4.0), np.zeros(4))),
    ("enumerate with a start", """
    def f(L, out):
        for i, x in enumerate(L, 1):
            out[i - 1] = x * i
        return locals()
    """, lambda: ([1.5, 2.5, 3.5], np.zeros(3))),
    ("enumerate with start= as a keyword", """
    def f(L, out):
        for i, x in enumerate(L, start=1):
            out[i - 1] = x * i
        return locals()
    """, lambda: ([1.5, 2.5, 3.5], np.zeros(3))),
    ("enumerate with a negative start", """
    def f(L):
        s = 0
        for i, x in enumerate(L, -2):
            s += i * x
        return locals()
    """, lambda: ([4, 5, 6, 7],)),
    ("zip of two lists of different lengths", """
    def f(a, b):
        s = 0
        for x, y in zip(a, b):
            s += x * y
        return locals()
    """, lambda: ([1, 2, 3], [4, 5])),
    ("zip of three", """
    def f(a, b, c, out):
        for x, y, z in zip(a, b, c):
            out[0] += x * y - z
        return locals()
    """, lambda: (np.arange(6.0), [0.5, 1.5, 2.5, 3.5], np.ones(5), np.zeros(1))),
    ("an attribute", """
    def f(p):
        t = 0
        for v in p.items:
            t = t * 10 + v
        return t
    """, lambda: (SimpleNamespace(items=[3, 1, 2]),)),
    ("nested, inner over a list", """
    def f(A, B):
        s = 0.0
        for x in A:
            for y in B:
                s += x * y
        return locals()
    """, lambda: ([1.0, 2.0, 3.0], [0.5, -1.0])),
    ("nested loops with the same name", """
    def f(A, B):
        s = 0
        n = 0
        for x in A:
            n += x
            for x in B:
                s += x
            s += x * 100
        return locals()
    """, lambda: ([1, 2, 3], [10, 20])),
    ("a range loop inside", """
    def f(w, X, out):
        for j, wj in enumerate(w):
            for i in range(X.shape[0]):
                out[i] += wj * X[i, j]
        return locals()
    """, lambda: ([0.5, -1.0, 2.0], np.arange(12.0).reshape(4, 3), np.zeros(4))),
    ("break", """
    def f(L):
        s = 0
        for x in L:
            if x > 3:
                break
            s += x
        return locals()
    """, lambda: ([1, 2, 5, 1, 9],)),
    ("continue and else", """
    def f(L):
        s = 0
        for x in L:
            if x % 2:
                continue
            s += x
        else:
            s = -s
        return locals()
    """, lambda: ([1, 2, 4, 7, 8],)),
    ("an empty list leaves the name unbound", """
    def f(L):
        s = 0.0
        for x in L:
            s += x
        return locals()
    """, lambda: ([],)),
    ("the body changes items ahead", """
    def f(L):
        for i, x in enumerate(L):
            if i + 1 < len(L):
                L[i + 1] += x
        return locals()
    """, lambda: ([1.0, 2.0, 3.0, 4.0],)),
    ("the body changes the list it reads through zip", """
    def f(a, b):
        for x, y in zip(a, b):
            b[0] = x + y
        return locals()
    """, lambda: ([1, 2, 3], [10, 20, 30])),
    ("array.array", """
    def f(a):
        s = 0.0
        for x in a:
            s += x
        return s, x
    """, lambda: (array.array("d", [1.0, 2.5, -0.25]),)),
    ("reversed(range(n))", """
    def f(a, out):
        k = 0
        for i in reversed(range(len(a))):
            out[k] = a[i] * 2
            k += 1
        return locals()
    """, lambda: (np.arange(6.0), np.zeros(6))),
    ("reversed(range(a, b)), empty and negative bounds", """
    def f(lo, hi):
        s = 0
        t = 0
        for i in reversed(range(lo, hi)):
            s = s * 3 + i
        for j in reversed(range(hi, lo)):
            t += j
        return locals()
    """, lambda: (-3, 4)),
    ("bool list", """
    def f(L):
        n = 0
        for b in L:
            if b:
                n += 1
        return n, b
    """, lambda: ([True, False, True, True],)),
]


@pytest.mark.parametrize("what, src, make_args", NATIVE, ids=[c[0] for c in NATIVE])
def test_loops_over_sequences_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, expect="native")
    assert all(r["bailouts"] == 0 for r in recs), recs


def test_the_report_names_the_loops_variables_and_proves_them_parallel():
    recs = difftest.run("""
    def f(a, out):
        for i, x in enumerate(a):
            out[i] = x * x
        return locals()
    """, "f", lambda: (np.arange(1000.0), np.zeros(1000)), warn_filter="default")
    loops = [l for r in recs for l in r["loops"]]
    assert [(l["variable"], l["parallel"]) for l in loops] == [("i, x", True)], loops


def test_a_reduction_over_a_list_is_not_parallel_over_its_items():
    recs = difftest.run("""
    def f(L, out):
        for x in L:
            out[0] = out[0] * 0.5 + x
        return locals()
    """, "f", lambda: ([1.0, 2.0, 3.0], np.zeros(1)), warn_filter="default")
    loops = [l for r in recs for l in r["loops"]]
    assert [(l["variable"], l["parallel"]) for l in loops] == [("x", False)], loops


BAIL = [
    ("a division by zero in the middle of a list", """
    def f(L, out):
        for i, x in enumerate(L):
            out[i] = 1.0 / x
        return locals()
    """, lambda: ([1.0, 2.0, 0.0, 4.0], np.zeros(4))),
    ("an int growing past 64 bits", """
    def f(L):
        p = 1
        for x in L:
            p *= x
        return p, x
    """, lambda: ([2 ** 40, 3, 2 ** 30, 5, 7],)),
    ("an overflow inside zip", """
    def f(a, b):
        p = 1
        k = 0
        for x, y in zip(a, b):
            p = p * x + y
            k += 1
        return locals()
    """, lambda: ([2 ** 31, 2 ** 31, 2 ** 31, 3], [1, 2, 3, 4, 5])),
    ("an overflow in a nested loop with enumerate outside", """
    def f(A, B):
        p = 1
        for i, x in enumerate(A, 5):
            for y in B:
                p = p * x + y + i
        return locals()
    """, lambda: ([2 ** 20, 2 ** 21, 2 ** 22], [5, 3])),
    ("an IndexError after earlier writes", """
    def f(L, idx, out):
        for x in idx:
            out[x] = L[x] * 2
        return locals()
    """, lambda: ([1.0, 2.0, 3.0], [0, 2, 5, 1], np.zeros(3))),
    ("an overflow counting down reversed(range(n))", """
    def f(n):
        p = 1
        for i in reversed(range(n)):
            p = p * (i + 2 ** 20) + 1
        return locals()
    """, lambda: (9,)),
    ("an overflow while iterating a memoryview", """
    def f(m):
        p = 1
        for x in m:
            p = p * x + 1
        return p, x
    """, lambda: (memoryview(array.array("q", [2 ** 31, 2 ** 31, 7, 9])),)),
]


@pytest.mark.parametrize("what, src, make_args", BAIL, ids=[c[0] for c in BAIL])
def test_cpython_takes_over_in_the_middle_of_the_sequence(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


INTERPRETED = [
    ("the body rebinds the sequence", """
    def f(L, M):
        s = 0
        for x in L:
            s += x
            L = M
        return locals()
    """, lambda: ([1, 2, 3], [4, 5]), "assigns `L` inside a loop over L"),
    ("a dict", """
    def f(d):
        s = 0
        for k in d:
            s += k
        return s
    """, lambda: ({1: 2, 3: 4},), "`d` is a dict"),
    ("a shadowed enumerate", """
    def enumerate(x):
        return [(1, 2)]
    def f(L):
        s = 0
        for i, x in enumerate(L):
            s += i * x
        return s
    """, lambda: ([5, 6, 7],), "calls `enumerate`"),
    ("enumerate bound to zip", """
    enumerate = zip
    def f(L):
        s = 0
        for i, x in enumerate(L):
            s += i * x
        return s
    """, lambda: ([5, 6, 7],), "not the builtin enumerate"),
    ("a shadowed reversed", """
    def reversed(x):
        return [5, 7]
    def f(n):
        s = 0
        for i in reversed(range(n)):
            s += i
        return s
    """, lambda: (4,), "calls `reversed`"),
    ("zip's items as a tuple", """
    def f(a, b):
        n = 0
        for t in zip(a, b):
            n += 1
        return n, t
    """, lambda: ([1, 2], [3, 4]), "zip()'s items"),
    ("a keyword argument enumerate does not take", """
    def f(L):
        s = 0
        for i, x in enumerate(iterable=L):
            s += i * x
        return s
    """, lambda: ([5, 6, 7],), "calls enumerate() with keyword arguments"),
    ("range with a keyword argument (a TypeError)", """
    def f(n):
        s = 0
        try:
            for i in range(n, step=2):
                s += i
        except TypeError as e:
            s = str(e)
        return s
    """, lambda: (6,), "loops over a call with keyword arguments"),
    ("a call with a keyword argument in the body", """
    def f(L):
        s = 0.0
        for x in L:
            s += round(x, ndigits=1)
        return s
    """, lambda: ([1.25, 2.5],), "calls with keyword arguments"),
    ("an expression", """
    def f(L):
        s = 0
        for x in L * 2:
            s += x
        return s
    """, lambda: ([1, 2, 3],), "loops over an expression"),
    ("a slice of a list (a copy) the loop stores into", """
    def f(L):
        s = 0
        for x in L[1:]:
            s += x
            L[2] = s
        return s, L
    """, lambda: ([1, 2, 3],), "a copy of a list, and stores into a list"),
]


@pytest.mark.parametrize("what, src, make_args, reason", INTERPRETED, ids=[c[0] for c in INTERPRETED])
def test_loops_stagepy_cannot_compile_stay_interpreted_with_the_reason(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_module_level_loops_over_sequences():
    difftest.run_module("""
    total = 0.0
    for i, w in enumerate(weights):
        for x, y in zip(xs, ys):
            total += w * x * y + i
    """, lambda: {"weights": [0.5, 1.5, 2.5], "xs": [1.0, 2.0, 3.0], "ys": np.arange(3.0)}, expect="native")


# Items unpacked into names: `for x, y in pts` (rows of a 2-d array or a list of lists, each
# of which must have exactly that many items), `for i, (x, y) in enumerate(...)`,
# `for (a, b), c in zip(...)`, and `for i, (a, b) in enumerate(zip(A, B))`.
UNPACKED = [
    ("rows of a 2-d array into x, y", """
    def f(P):
        sx = sy = 0.0
        for x, y in P:
            sx += x
            sy += x * y
        return locals()
    """, lambda: (np.random.default_rng(1).random((50, 2)),)),
    ("a list of lists of ints, reversed", """
    def f(P):
        t = 0
        for a, b, c in reversed(P):
            t = (t * 31 + a * b - c) % 1000003
        return locals()
    """, lambda: ([[int(v) for v in r] for r in np.random.default_rng(2).integers(-9, 9, (40, 3))],)),
    ("enumerate of rows", """
    def f(P, out):
        for i, (x, y) in enumerate(P, 2):
            out[i - 2] = x * i + y
        return locals()
    """, lambda: (np.arange(20.0).reshape(10, 2), np.zeros(10))),
    ("enumerate(zip(A, B)) of lists of two lengths", """
    def f(A, B):
        t = 0.0
        for i, (a, b) in enumerate(zip(A, B)):
            t += i * a * b
        return locals()
    """, lambda: ([float(v) for v in range(30)], [0.5 * v for v in range(23)])),
    ("enumerate(zip(...)) of three sequences, from 1, with a break", """
    def f(A, B, s):
        k = -1
        for i, (a, b, ch) in enumerate(zip(A, B, s), 1):
            if ch == "x":
                k = i
                break
            A[i - 1] = a + b
        return locals()
    """, lambda: (np.arange(8.0), np.ones(8), "abcdxfgh")),
    ("zip of a row-unpacked array and a list", """
    def f(P, w):
        t = 0.0
        for (x, y), c in zip(P, w):
            t += c * (x - y)
        return locals()
    """, lambda: (np.random.default_rng(3).random((12, 2)), [float(v) for v in range(12)])),
]


@pytest.mark.parametrize("what, src, make_args", UNPACKED, ids=[c[0] for c in UNPACKED])
def test_unpacked_items_run_natively(what, src, make_args):
    difftest.run(src, "f", make_args)


UNPACKED_BAIL = [
    ("rows of three items into two names (ValueError at the first)", """
    def f(P):
        s = 0.0
        for x, y in P:
            s += x
        return locals()
    """, lambda: (np.ones((4, 3)),)),
    ("enumerate(zip(...)): an int that leaves 64 bits mid-loop", """
    def f(A, B):
        p = 1
        k = -1
        for i, (a, b) in enumerate(zip(A, B)):
            p = p * a + b
            k = i
        return locals()
    """, lambda: ([2 ** 16] * 9, [1] * 12)),
    ("unpacked rows: a division by zero mid-loop", """
    def f(P):
        s = 0.0
        n = 0
        for x, y in P:
            s += x / y
            n += 1
        return locals()
    """, lambda: ([[1.0, 2.0], [3.0, 4.0], [5.0, 0.0], [6.0, 1.0]],)),
]


@pytest.mark.parametrize("what, src, make_args", UNPACKED_BAIL, ids=[c[0] for c in UNPACKED_BAIL])
def test_unpacked_items_hand_over_mid_loop(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


UNPACKED_INTERPRETED = [
    ("enumerate of a zip that is not the builtin (a function here)", """
    zip = lambda *a: [(1, 2)]
    def f(A, B):
        t = 0
        for i, (a, b) in enumerate(zip(A, B)):
            t += i * a * b
        return t
    """, lambda: ([1, 2], [3, 4]), "calls `zip`"),
    ("three levels of names", """
    def f(P, w):
        t = 0
        for i, ((x, y), c) in enumerate(zip(P, w)):
            t += x * c
        return t
    """, lambda: ([[1, 2], [3, 4]], [5, 6]), "more than two deep"),
    ("rows unpacked beside another name", """
    def f(P):
        t = 0
        for (x, y), z in P:
            t += x
        return t
    """, lambda: ([[1, 2], [3, 4]],), "unpacks the items of a sequence's items again"),
]


@pytest.mark.parametrize("what, src, make_args, reason", UNPACKED_INTERPRETED, ids=[c[0] for c in UNPACKED_INTERPRETED])
def test_unpackings_stagepy_cannot_compile_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_enumerate_of_zip_bound_to_another_builtin_stays_interpreted():
    recs = difftest.run("""
    zip = enumerate
    def f(A, B):
        t = 0
        for i, (a, b) in enumerate(zip(A, B)):
            t += i * a * b
        return t
    """, "f", lambda: ([5, 6, 7], 3), expect="interpreted")
    difftest.assert_reason(recs, "where `zip` is not the builtin")
