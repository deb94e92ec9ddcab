"""bisect.bisect_right (bisect.bisect) and bisect.bisect_left inside nests: binning values
into sorted edges, a cumulative-probability lookup, a sorted table's position. Nests inline
stagepy._twins' Python versions of _bisect's C loops in their place (the C function's
identity is the guard), so these run natively with CPython's results; a call the twin does
not take (lo, hi, key=) leaves the nest in CPython, with the reason."""
import bisect
import math

import numpy as np
import pytest

import difftest

SEQUENCES = [
    ("floats", lambda: [i * 0.125 - 1.0 for i in range(17)]),
    ("ints with runs of equal items", lambda: [1, 3, 3, 3, 7, 20, 20, 21]),
    ("ints and floats", lambda: [-2, -0.5, 0, 0.5, 1, 1.0, 3, 7.25, 10**15]),
    ("an array of float64", lambda: np.linspace(-1.0, 1.0, 33)),
    ("a tuple", lambda: (0.0, 0.25, 0.25, 0.5, 1.0)),
    ("one item", lambda: [0.5]),
    ("no item", lambda: []),
]
XS = [-3.0, -1.0, -0.5, 0.0, -0.0, 0.25, 0.3, 0.5, 1, 3, 20, 20.0, 21, 1e300, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("make", [m for _, m in SEQUENCES], ids=[n for n, _ in SEQUENCES])
def test_bisections_match_cpython(make):
    recs = difftest.run("""
    import bisect
    from bisect import bisect_left as left
    def f(xs, edges):
        out = []
        s = 0
        for x in xs:
            k = bisect.bisect(edges, x)
            s += k * 1000 + left(edges, x) * 10 + bisect.bisect_right(edges, x)
            out.append(bisect.bisect_left(edges, x))
        return s, out
    """, "f", lambda: (list(XS), make()))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_binning_into_a_histogram():
    recs = difftest.run("""
    import bisect
    def f(xs, edges, counts):
        for x in xs:
            counts[bisect.bisect(edges, x)] += 1
        return counts
    """, "f", lambda: ([math.sin(i) * 0.7 + 0.5 for i in range(5000)], [i * 0.1 for i in range(11)], [0] * 12))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


@pytest.mark.parametrize("call", ["bisect.bisect(edges, x, 1)", "bisect.bisect_left(edges, x, 0, 3)",
                                  "bisect.bisect_right(edges, x, key=abs)", "bisect.bisect_left(edges, x, -1)"])
def test_calls_the_twin_does_not_take_stay_in_cpython(call):
    recs = difftest.run(f"""
    import bisect
    def f(xs, edges):
        s = 0
        try:
            for x in xs:
                s += {call}
        except ValueError as e:
            return "ValueError", str(e), s
        return s
    """, "f", lambda: ([0.5, -1.0, 2.0, 0.0], [-1.0, 0.0, 0.5, 1.0, 2.0]), expect="interpreted")
    assert any("arguments" in r["reason"] for r in recs), recs


def test_a_comparison_the_nest_cannot_make_leaves_it_to_cpython():
    # A comparison of an int and a str: the nest stays in CPython, which raises TypeError.
    difftest.run("""
    import bisect
    def f(xs, edges):
        s = 0
        try:
            for x in xs:
                s += bisect.bisect(edges, x)
        except TypeError as e:
            return "TypeError", str(e), s
        return s
    """, "f", lambda: ([1, 2, "a"], [0, 1, 2, 3]), expect=None)


def test_bisect_rebound_is_noticed():
    old = bisect.bisect_right
    try:
        bisect.bisect_right = lambda a, x: -7
        # The function there now is inlined as itself (a lambda of this module's that reads
        # no globals), not as the C function's twin: -14, as CPython.
        difftest.run("""
        import bisect
        def f(xs, edges):
            s = 0
            for x in xs:
                s += bisect.bisect_right(edges, x)
            return s
        """, "f", lambda: ([0.5, 1.5], [0.0, 1.0, 2.0]))
    finally:
        bisect.bisect_right = old


def test_a_function_of_the_program_named_bisect_left_is_its_own():
    # A helper of the program's own that happens to share the name: inlined as itself.
    recs = difftest.run("""
    def bisect_left(a, x):
        return len(a) - 1 if x > 0 else 0
    def f(xs, edges):
        s = 0
        for x in xs:
            s += bisect_left(edges, x)
        return s
    """, "f", lambda: ([0.5, -1.5, 3.0], [0.0, 1.0, 2.0]))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs


def test_a_global_named_len_in_the_program_does_not_reach_the_twin():
    # The twin's `len` is the builtin, as _bisect's PySequence_Size is, whatever the
    # program's module calls `len`.
    recs = difftest.run("""
    import bisect
    def len(x):
        return 1
    def f(xs, edges):
        s = 0
        for x in xs:
            s += bisect.bisect(edges, x)
        return s
    """, "f", lambda: ([0.5, 2.5, 9.0], [0.0, 1.0, 2.0, 3.0, 4.0]))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["calls"]), recs
