"""Lists of tuples of numbers (`pts = [(x, y), ...]`, each tuple of one length and all items of
one type) are read like lists of lists, read only: `for x, y in pts`, `pts[i][0]`,
`p = pts[i]`, `for i, (x, y) in enumerate(pts)`, loops over slices of them
(`zip(pts, pts[1:])`, which need no copy: the tuples cannot change). A store into one of the tuples is a TypeError
in CPython, and a loop that stores into such a list stays interpreted; so do lists mixing
tuples with lists, named tuples, and tuples of other lengths."""
import collections

import numpy as np
import pytest

import difftest

Point = collections.namedtuple("Point", "x y")


def _pts(seed, n, k=2, ints=False):
    r = np.random.default_rng(seed)
    if ints:
        return [tuple(int(v) for v in row) for row in r.integers(-20, 20, (n, k))]
    return [tuple(float(v) for v in row) for row in r.random((n, k))]


NATIVE = [
    ("the centroid of points, unpacked", """
    def f(pts):
        cx = cy = 0.0
        for x, y in pts:
            cx += x
            cy += y
        return cx / len(pts), cy / len(pts)
    """, lambda: (_pts(1, 200),)),
    ("k-means' assignment step over tuples", """
    def f(pts, cents, assign):
        moved = 0
        for i in range(len(pts)):
            best = 0
            bd = 1e300
            for c in range(len(cents)):
                d = (pts[i][0] - cents[c][0]) ** 2 + (pts[i][1] - cents[c][1]) ** 2
                if d < bd:
                    bd = d
                    best = c
            if assign[i] != best:
                moved += 1
                assign[i] = best
        return moved, assign
    """, lambda: (_pts(2, 300), _pts(3, 5), [0] * 300)),
    ("a row in a variable, then returned", """
    def f(pts):
        far = 0
        for i in range(len(pts)):
            p = pts[i]
            if p[0] * p[0] + p[1] * p[1] > pts[far][0] ** 2 + pts[far][1] ** 2:
                far = i
        return locals()
    """, lambda: (_pts(4, 100),)),
    ("enumerate of int triples, reversed", """
    def f(T, out):
        for i, (a, b, c) in enumerate(T):
            out[i] = a * b - c
        s = 0
        for a, b, c in reversed(T):
            s = (s * 7 + a + b + c) % 10007
        return locals()
    """, lambda: (_pts(5, 60, 3, ints=True), np.zeros(60, dtype=np.int64))),
    ("one tuple object many times, and empty tuples", """
    def f(P, E):
        s = 0
        for k in range(len(P)):
            s += P[k][0] + P[k][1] * k + len(E[k % len(E)])
        return s
    """, lambda: ([(3, 4)] * 50, [()] * 3)),
    ("slices of the list in the loop header (a polygon's edges)", """
    import math
    def f(pts, k):
        p = 0.0
        for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
            p += math.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)
        s = 0.0
        for x, y in pts[k:-k]:
            s += x * y
        for i, (x, y) in enumerate(pts[2:k:3]):
            s += i * x - y
        for x, y in pts[::-2]:
            s = s * 0.5 + x
        return p, s
    """, lambda: (_pts(8, 300), 7)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n for n, _, _ in NATIVE])
def test_lists_of_tuples_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args)
    assert all(r["bailouts"] == 0 for r in recs), recs


INTERPRETED = [
    ("a store into a tuple (a TypeError)", """
    def f(pts):
        try:
            for i in range(len(pts)):
                pts[i][0] = 0.0
        except TypeError as e:
            return str(e), pts
        return pts
    """, lambda: (_pts(6, 5),), "stores into a tuple"),
    ("a tuple stored into the list", """
    def f(pts):
        for i in range(len(pts)):
            pts[i] = (1.0, 2.0)
        return pts
    """, lambda: (_pts(7, 5),), "list of tuples"),
    ("tuples and lists mixed", """
    def f(pts):
        s = 0.0
        for x, y in pts:
            s += x * y
        return s
    """, lambda: ([(1.0, 2.0), [3.0, 4.0]],), "mixes tuples with other values"),
    ("tuples of two lengths", """
    def f(pts):
        s = 0.0
        for p in pts:
            s += p[0]
        return s
    """, lambda: ([(1.0, 2.0), (3.0,)],), "tuples of different lengths"),
    ("named tuples", """
    def f(pts):
        s = 0.0
        for p in pts:
            s += p[0] * p[1]
        return s
    """, lambda: ([Point(1.0, 2.0)] * 3,), "holds Point objects"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n for n, _, _, _ in INTERPRETED])
def test_lists_of_tuples_stagepy_cannot_hold_stay_interpreted(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted", globals_={"collections": collections})
    difftest.assert_reason(recs, reason)


def test_a_tuple_read_wrongly_unpacked_raises_as_in_cpython():
    difftest.run("""
    def f(pts):
        s = 0.0
        for x, y in pts:
            s += x - y
        return s
    """, "f", lambda: (_pts(8, 10, 3),), expect="bail")
