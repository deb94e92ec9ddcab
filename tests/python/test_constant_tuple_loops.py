"""Loops over tuple constants: `for d in (-1, 0, 1)`, `for w in [0.25, 0.5, 0.25]` (which
CPython compiles to a loop over a tuple constant) and `for dx, dy in ((0, 1), (1, 0))`, the
neighbourhood loops of stencils and cellular automata. They compile as loops over the
positions of the constant (the unpacked form over the columns of its items), with CPython's
results: the loop variables after the loop, `continue`/`break`, and an error in the middle
of the tuple, where CPython takes over with the tuple's iterator at the next item. Items of
mixed types, or items that do not unpack into the names, keep the nest interpreted, with the
reason. Every test is differential (difftest.run)."""
import itertools

import numpy as np
import pytest

import difftest


def life_args():
    rng = np.random.default_rng(5)
    n = 24
    g = [[int(v) for v in row] for row in rng.integers(0, 2, (n, n))]
    return g, [[0] * n for _ in range(n)], n


NATIVE = [
    ("game of life on lists, with continue", """
    def f(g, out, N):
        for i in range(N):
            for j in range(N):
                cnt = 0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        if di == 0 and dj == 0:
                            continue
                        cnt += g[(i + di) % N][(j + dj) % N]
                out[i][j] = 1 if cnt == 3 or (cnt == 2 and g[i][j] == 1) else 0
        return locals()
    """, life_args),
    ("unpacked offsets over an array", """
    def f(a, out):
        n = a.shape[0]
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                s = 0.0
                for dx, dy in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                    s += a[i + dx, j + dy]
                out[i, j] = s - 4.0 * a[i, j]
        return locals()
    """, lambda: (np.random.default_rng(1).random((30, 30)), np.zeros((30, 30)))),
    ("a list display of floats, and weights unpacked with offsets", """
    def f(x, y):
        for i in range(1, len(x) - 1):
            acc = 0.0
            for w in [0.25, 0.5, 0.25]:
                acc += w
            for k, w in ((-1, 0.25), (0, 0.5), (1, 0.25)):
                acc += w * x[i + k]
            y[i] = acc
        return locals()
    """, lambda: (np.linspace(0.0, 3.0, 50), np.zeros(50))),
    ("a break leaves the variable at its item", """
    def f(a):
        hits = 0
        for t in (3, 5, 7, 11, 13, 17):
            hits += a[t]
            if hits > 20:
                break
        return locals()
    """, lambda: (np.arange(1, 200),)),
    ("bools and negative floats", """
    def f(out):
        for i in range(out.shape[0]):
            for b in (True, False, True):
                for c in (-0.0, 1.5):
                    out[i] += c if b else -c
        return locals()
    """, lambda: (np.zeros(40),)),
]


@pytest.mark.parametrize("what, src, make_args", NATIVE, ids=[c[0] for c in NATIVE])
def test_loops_over_tuple_constants_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args)
    assert all(r["status"] != "interpreted" for r in recs), [(r["line"], r["reason"]) for r in recs]


def test_an_error_in_the_middle_of_the_tuple_hands_over_at_the_next_item():
    # k = 0: the division by the second item's d + k raises after the first item's
    # writes; k = 2 ** 61: the product leaves 64 bits at the third item and CPython goes on
    # with the big int, from the tuple's iterator at that item.
    calls = itertools.cycle([1, 0, 2 ** 61, 1])  # make_args runs once per call, on each side

    def args():
        return np.zeros(8), next(calls)
    recs = difftest.run("""
    def f(out, k):
        t = 0
        for i in range(8):
            for d in (1, 0, 2):
                out[i] += 1.0 / (d + k)
                t += (d + k) * 3 * (i + 1)
        return locals()
    """, "f", args, expect="bail")
    assert recs[0]["native_calls"] > 0


INTERPRETED = [
    ("items of mixed types", """
    def f(out):
        for i in range(out.shape[0]):
            for c in (1, 2.5):
                out[i] += c
        return locals()
    """, "mixed types"),
    ("items that do not unpack into the names", """
    def f(out):
        for i in range(out.shape[0]):
            for a, b in ((1, 2), (3, 4, 5)):
                out[i] += a * b
        return locals()
    """, "unpacks the items of a tuple constant"),
]


@pytest.mark.parametrize("what, src, reason", INTERPRETED, ids=[c[0] for c in INTERPRETED])
def test_tuple_constants_stagepy_cannot_compile_stay_interpreted(what, src, reason):
    recs = difftest.run(src, "f", lambda: (np.zeros(6),), expect=None)
    difftest.assert_reason(recs, reason)


def test_module_level_neighbourhood_loop():
    recs = difftest.run_module("""
    total = 0
    for i in range(1, 19):
        for d in (-1, 0, 1):
            total += grid[i + d] * (d + 2)
    """, lambda: {"grid": list(range(20))})
    assert any(r["status"] == "cpu" for r in recs)
