"""math.hypot(x, y) inside nests runs natively and gives CPython's results bit for bit:
CPython computes it with its own vector_norm (not libm's hypot), which kernels compute the
same way (backends/cpu/vector_norm.h). Distances between points, polygon perimeters, the
magnitude of a 2-d field; special values (zeros of both signs, subnormals, values near
overflow, infinities, NaNs) included."""
import math

import numpy as np
import pytest

import difftest
from stagepy import _types

SPECIALS = [0.0, -0.0, 1.0, -3.0, 4.0, 5e-324, 1e-310, 2.2250738585072014e-308, 1e308,
            1.7976931348623157e308, -1e300, math.inf, -math.inf, math.nan, 0.1, 1e-200]


def test_the_self_test_passes():
    assert _types.verify_hypot()


@pytest.mark.parametrize("kind", ["specials", "random magnitudes", "ints", "numpy scalars"])
def test_hypot_matches_cpython(kind):
    r = np.random.default_rng(5)
    if kind == "specials":
        xs = [x for x in SPECIALS for _ in SPECIALS]
        ys = [y for _ in SPECIALS for y in SPECIALS]
    elif kind == "random magnitudes":
        xs = list(r.uniform(-1, 1, 3000) * 10.0 ** r.integers(-310, 308, 3000))
        ys = list(r.uniform(-1, 1, 3000) * 10.0 ** r.integers(-310, 308, 3000))
    elif kind == "ints":
        xs = [int(v) for v in r.integers(-10 ** 18, 10 ** 18, 500)] + [0, 3]
        ys = [int(v) for v in r.integers(-10 ** 9, 10 ** 9, 500)] + [0, 4]
    else:  # elements of a float32 and an int64 array
        xs = r.standard_normal(300).astype(np.float32)
        ys = r.integers(-1000, 1000, 300)
    recs = difftest.run("""
    import math
    def f(xs, ys):
        out = [0.0] * len(xs)
        for i in range(len(xs)):
            out[i] = math.hypot(xs[i], ys[i])
        return out
    """, "f", lambda: (xs.copy(), ys.copy()) if kind == "numpy scalars" else (list(xs), list(ys)))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_a_perimeter_and_nearest_neighbours():
    recs = difftest.run("""
    from math import hypot
    def f(pts):
        p = 0.0
        for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
            p += hypot(x2 - x1, y2 - y1)
        near = []
        for i in range(len(pts)):
            best = float("inf")
            for j in range(len(pts)):
                if i != j:
                    d = hypot(pts[i][0] - pts[j][0], pts[i][1] - pts[j][1])
                    if d < best:
                        best = d
            near.append(best)
        return p, near
    """, "f", lambda: ([(math.cos(i) * i, math.sin(i * 1.7)) for i in range(300)],))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_three_arguments_stay_in_cpython():
    difftest.run("""
    import math
    def f(xs):
        s = 0.0
        for x in xs:
            s += math.hypot(x, 2.0, 3.0)
        return s
    """, "f", lambda: ([1.0, 2.0],), expect="interpreted")
