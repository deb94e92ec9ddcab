"""Loops over slices: `for x in a[1:]`, `zip(x[:-1], x[1:])`, `enumerate(a[::2])` over NumPy
arrays run natively. The slice is a view, so the loop sees what the body writes into the
array, as CPython's loop over the view does; its bounds may be numbers, variables and + - *
of them, which the loop may not reassign. CPython takes over mid-loop with the iterator at
the right item.

A slice of a list (or str, bytes, array.array) is a copy in CPython. Kernels read the list in
place instead where the loop stores into no list at all, so that the copy and the list hold
the same items for the whole loop; a loop that stores into a list stays interpreted.

`reversed(S)` of a sequence (a list, tuple, str, array, or a slice of one) counts down from
len(S) - 1; CPython takes over mid-loop with its reversed iterator at the right item."""
import itertools
import random

import numpy as np
import pytest

import difftest


NATIVE = [
    ("for x in a[1:]", """
    def f(a):
        s = 0.0
        for x in a[1:]:
            s += x * x
        return locals()
    """, lambda: (np.arange(10.0),)),
    ("zip of two shifted slices", """
    def f(x, out):
        k = 0
        for a, b in zip(x[:-1], x[1:]):
            out[k] = b - a
            k += 1
        return locals()
    """, lambda: (np.array([1.0, 4.0, 9.0, 16.0, 25.0, 36.0]), np.zeros(5))),
    ("enumerate of a strided slice", """
    def f(a, out):
        for i, v in enumerate(a[::2]):
            out[i] = v + i
        return locals()
    """, lambda: (np.arange(11, dtype=np.int64), np.zeros(6, dtype=np.int64))),
    ("a reversed slice", """
    def f(a):
        best = -1.0
        pos = 0
        for v in a[::-1]:
            if v > best:
                best = v
            pos += 1
        return locals()
    """, lambda: (np.array([3.0, 9.0, 2.0, 9.0, 1.0]),)),
    ("bounds from the enclosing loop", """
    def f(a, out):
        n = a.shape[0]
        for i in range(n):
            s = 0.0
            for v in a[i + 1:]:
                s += v * a[i]
            out[i] = s
        return locals()
    """, lambda: (np.arange(1.0, 8.0), np.zeros(7))),
    ("a column of a 2-d array", """
    def f(A, j):
        s = 0
        for v in A[1:, j]:
            s += v
        return locals()
    """, lambda: (np.arange(20, dtype=np.int32).reshape(5, 4), 2)),
    ("the body writes ahead into the array the view shows", """
    def f(a):
        k = 1
        for v in a[1:]:
            if k + 1 < a.shape[0]:
                a[k + 1] += v
            k += 1
        return locals()
    """, lambda: (np.arange(8.0),)),
    ("an empty slice", """
    def f(a):
        s = 0.0
        v = -1.0
        for v in a[5:2]:
            s += v
        return locals()
    """, lambda: (np.arange(8.0),)),
    ("bounds past the end", """
    def f(a, lo, hi):
        s = 0.0
        for v in a[lo:hi]:
            s += v
        return locals()
    """, lambda: (np.arange(8.0), -3, 100)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_loops_over_slices_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, expect="native")
    assert all(r["bailouts"] == 0 for r in recs), recs


BAIL = [
    ("ZeroDivisionError mid-loop: CPython goes on from the same item", """
    def f(a):
        s = 0.0
        n = 0
        for v in a[1:]:
            n += 1
            s += 1.0 / float(v)
        return locals()
    """, lambda: (np.array([5.0, 2.0, 4.0, 0.0, 8.0]),)),
    ("an index error mid-loop inside zip", """
    def f(x, out):
        k = 0
        for a, b in zip(x[:-1], x[2:]):
            out[k] = a + b
            k += 2
        return locals()
    """, lambda: (np.arange(12.0), np.zeros(7))),
    ("a Python int that leaves 64 bits", """
    def f(a):
        p = 1
        for v in a[2:]:
            p = p * int(v)
        return locals()
    """, lambda: (np.full(30, 2 ** 10, dtype=np.int64),)),
]


@pytest.mark.parametrize("what,src,make_args", BAIL, ids=[n for n, _, _ in BAIL])
def test_cpython_takes_over_a_loop_over_a_slice(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


INTERPRETED = [
    ("a slice of a list is a copy: the loop stores into the list", """
    def f(L):
        for v in L[1:]:
            L[0] += v
            L[1] = 0
        return locals()
    """, lambda: ([1.0, 2.0, 3.0, 4.0],), "a copy of a list, and stores into a list"),
    ("a slice of a list is a copy: the same list passed twice, stored into", """
    def f(L, out):
        for i, v in enumerate(L[1:]):
            out[i] = v - L[i]
        return locals()
    """, lambda: (*([[1, 5, 2, 8]] * 2),), "a copy of a list, and stores into a list that may be it"),
    ("a slice of a list is a copy: a helper stores into it", """
    def bump(L, i):
        L[i] += 1
    def f(L):
        s = 0
        for v in L[:3]:
            s += v
            bump(L, 2)
        return locals()
    """, lambda: ([1, 2, 3, 4],), "a copy of a list, and stores into a list that may be it"),
    ("a slice of a list of lists", """
    def f(M):
        s = 0
        for row in M[1:]:
            s += row[0]
        return locals()
    """, lambda: ([[1, 2], [3, 4], [5, 6]],), "loops over a slice of a"),
    ("the loop reassigns a bound", """
    def f(a):
        lo = 1
        s = 0.0
        for v in a[lo:]:
            s += v
            lo += 1
        return locals()
    """, lambda: (np.arange(6.0),), "assigns `lo` inside a loop over a slice of a"),
    ("a bound that calls a function", """
    def f(a, L):
        s = 0.0
        for v in a[:len(L)]:
            s += v
        return locals()
    """, lambda: (np.arange(6.0), [1, 2, 3]), "loops over an expression"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_loops_over_slices_stagepy_cannot_keep_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_module_level_loop_over_a_slice_hands_over_mid_loop():
    """At module level the bounds are globals; CPython takes over at the item whose
    division fails and raises there, with the totals so far in the globals."""
    recs = difftest.run_module("""
    s = 0.0
    count = 0
    for v in a[lo:]:
        count += 1
        s += 1.0 / float(v)
    """, lambda: {"np": np, "a": np.array([2.0, 4.0, 0.5, 0.0, 8.0]), "lo": 1}, expect="bail")
    assert recs[0]["bailouts"] >= 1, recs


LISTS = [
    ("the largest sum of a run (Kadane) over a[1:]", """
    def f(a):
        best = cur = a[0]
        for x in a[1:]:
            cur = max(x, cur + x)
            best = max(best, cur)
        return locals()
    """, lambda: ([int(v) for v in np.random.default_rng(1).integers(-50, 50, 300)],)),
    ("neighbours: zip(L, L[1:]) of floats", """
    def f(L):
        t = 0.0
        for x, y in zip(L, L[1:]):
            t += (y - x) * (y - x)
        return locals()
    """, lambda: ([float(v) for v in np.random.default_rng(2).random(200)],)),
    ("enumerate of a strided, negative-bounded slice of bools", """
    def f(L):
        c = 0
        for i, v in enumerate(L[-2:0:-3], 1):
            if v:
                c += i
        return locals()
    """, lambda: ([bool(v) for v in np.random.default_rng(3).integers(0, 2, 50)],)),
    ("bounds from the enclosing loop; appends to another list", """
    def f(L):
        out = []
        for i in range(len(L)):
            s = 0
            for x in L[i + 1:]:
                s += x * L[i]
            out.append(s)
        return locals()
    """, lambda: (list(range(-5, 25)),)),
    ("a slice of a list the loops make", """
    def f(n):
        row = [1] * n
        t = 0
        for k in range(4):
            row = [k + j for j in range(n)] if False else [k] * n
            for x in row[1:-1]:
                t += x
        return locals()
    """, lambda: (9,)),
    ("characters of a slice of a str", """
    def f(s):
        c = 0
        for ch in s[1:-1]:
            if ch == "a":
                c += 1
        return locals()
    """, lambda: ("abracadabra" * 5,)),
    ("floats and NumPy floats in one list", """
    def f(L):
        t = 0.0
        for x in L[2:]:
            t += x
        return locals()
    """, lambda: ([1.0, np.float64(2.5), 3.0, np.float64(0.25), 7.0],)),
    ("stores into other lists: one held at entry, one the loops make", """
    def f(L, out):
        for t in range(3):
            diff = [0] * (len(L) - 1)
            for i, v in enumerate(L[1:]):
                out[i] = v - L[i] + t
                diff[i] = out[i] * 2
        return locals()
    """, lambda: ([1, 5, 2, 8, -3], [0] * 4)),
    ("reductions and `in` over slices of a list", """
    def f(L, n):
        t = 0
        c = 0
        for k in range(n):
            t += sum(L[k:]) + max(L[k:k + 3]) - min(L[:k + 1])
            if k in L[1::2]:
                c += 1
            L[k] = -L[k]
        return locals()
    """, lambda: (list(range(-20, 40)), 30)),
    ("empty and out-of-range slices", """
    def f(L, a, b):
        t = 0
        k = 0
        for x in L[a:b]:
            t += x
            k += 1
        return locals()
    """, lambda: ([3, 1, 4, 1, 5], 7, -100)),
]


@pytest.mark.parametrize("what,src,make_args", LISTS, ids=[n for n, _, _ in LISTS])
def test_loops_over_slices_of_lists_run_natively(what, src, make_args):
    difftest.run(src, "f", make_args)


def test_slice_bounds_of_every_sign_and_step():
    src = """
    def f(L, a, b, c):
        t = 0
        k = 0
        for x in L[a:b:c]:
            t = (t * 7 + x) % 1000003
            k += 1
        return t, k
    """
    vals = [-900, -300, -1, 0, 1, 2, 500, 900]
    cases = [(a, b, c) for a in vals for b in vals for c in (1, 2, -1, -2, 3)]
    # Mixed, so that the calls before the cost probe may send some to CPython (many slices
    # are empty: cost_probe.h) are of every kind; the same arguments, call by call, in both runs.
    random.Random(5).shuffle(cases)
    it = itertools.cycle(cases)

    def args():
        a, b, c = next(it)
        return list(range(10, 710)), a, b, c
    recs = difftest.run(src, "f", args, calls=len(cases), expect=None)
    assert sum(r["native_calls"] for r in recs) > 0, recs


REVERSED = [
    ("a list of ints", """
    def f(a):
        s = 0
        for v in reversed(a):
            s = (s * 3 + v) % 1000003
        return locals()
    """, lambda: (list(range(500)),)),
    ("a 1-d array", """
    def f(a):
        best = -1.0
        pos = -1
        k = 0
        for v in reversed(a):
            if v > best:
                best = v
                pos = k
            k += 1
        return locals()
    """, lambda: (np.random.default_rng(4).random(100),)),
    ("rows of a 2-d array", """
    def f(A, out):
        k = 0
        for row in reversed(A):
            out[k] = row[0] - row[1]
            k += 1
        return locals()
    """, lambda: (np.arange(12.0).reshape(6, 2), np.zeros(6))),
    ("a slice of a list, a str and a tuple", """
    def f(L, s, t):
        x = 0
        for v in reversed(L[1:-1]):
            x = x * 2 + v
        c = 0
        for ch in reversed(s):
            c = c * 2 + (ch == "b")
        y = 0.0
        for v in reversed(t):
            y = y / 2 + v
        return locals()
    """, lambda: ([1, 0, 1, 1, 0, 1], "abba", (1.0, 2.5, -3.0))),
    ("an empty list", """
    def f(L):
        k = 0
        for v in reversed(L):
            k += v
        return locals()
    """, lambda: ([],)),
]


@pytest.mark.parametrize("what,src,make_args", REVERSED, ids=[n for n, _, _ in REVERSED])
def test_loops_over_reversed_sequences_run_natively(what, src, make_args):
    difftest.run(src, "f", make_args)


BAIL_LISTS = [
    ("a slice of a list: a Python int that leaves 64 bits", """
    def f(L):
        p = 1
        k = 0
        for v in L[1:]:
            p = p * v
            k += 1
        return locals()
    """, lambda: ([3] + [2 ** 20] * 8,)),
    ("sum of a slice of a list: a Python int that leaves 64 bits", """
    def f(L):
        t = 0
        for k in range(len(L)):
            t += sum(L[k:])
        return locals()
    """, lambda: ([2 ** 62] * 3 + [1] * 5,)),
    ("reversed list: a Python int that leaves 64 bits", """
    def f(L):
        p = 1
        k = 0
        for v in reversed(L):
            p = p * v + k
            k += 1
        return locals()
    """, lambda: ([2 ** 20] * 8 + [5],)),
    ("reversed array: a division by zero mid-loop", """
    def f(a):
        s = 0.0
        n = 0
        for v in reversed(a):
            n += 1
            s += 1.0 / float(v)
        return locals()
    """, lambda: (np.array([5.0, 0.0, 4.0, 2.0, 8.0]),)),
    ("reversed list: an index out of range mid-loop", """
    def f(L, out):
        k = 0
        for v in reversed(L):
            out[k] = v
            k += 2
        return locals()
    """, lambda: ([1, 2, 3, 4, 5, 6], np.zeros(7))),
]


@pytest.mark.parametrize("what,src,make_args", BAIL_LISTS, ids=[n for n, _, _ in BAIL_LISTS])
def test_cpython_takes_over_a_loop_over_a_list_slice_or_reversed(what, src, make_args):
    difftest.run(src, "f", make_args, expect="bail")


def test_a_list_stored_into_under_another_name_is_checked_per_call():
    """The outer loop makes `out` the sliced list itself: it stays interpreted; the inner
    loop, a nest of its own then, runs natively while `out` is another list and not once
    it is the same one (the dispatcher's key says which lists share memory)."""
    recs = difftest.run("""
    def f(L, n):
        out = [0] * n
        for t in range(2):
            for i, v in enumerate(L[1:]):
                out[i] = v + t
            out = L
        return locals()
    """, "f", lambda: ([1, 5, 2, 8], 3), expect=None)
    outer = [r for r in recs if r["line"] == 4]
    inner = [r for r in recs if r["line"] == 5]
    assert outer and "a copy of a list, and stores into a list that may be it" in outer[0]["reason"], recs
    assert inner and 0 < inner[0]["native_calls"] < inner[0]["calls"], recs
