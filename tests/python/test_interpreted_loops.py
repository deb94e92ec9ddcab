"""Loops stagepy does not compile still appear in the report, with the reason, and run as
CPython runs them: loops over strings, dicts, generators, lists of tuples, at function and
module level. Library code's loops stay out of the report."""
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import stagepy
import difftest


def reasons(recs):
    return [r["reason"] or "" for r in recs]


@pytest.mark.parametrize("src, make_args, reason", [
    ("""
    def f(words):
        n = 0
        for w in words:
            n += len(w)
        return n, w
    """, lambda: (["ab", "cde", ""],), "`words` holds str objects"),
    ("""
    def f(p):
        t = 0
        for v in p.items:
            t = t * 10 + v
        return t
    """, lambda: (SimpleNamespace(items={3: 0, 1: 0, 2: 0}),), "a dict"),
    ("""
    def f(g):
        s = 0.0
        for x in g:
            s += x
        return s
    """, lambda: ({0.5, 1.5},), "`g` is a set"),
    ("""
    def f(pairs):
        s = 0
        for a, b in pairs:
            s += a * b
        return s
    """, lambda: ([(1, 2.5), (3, 1j)],), "`pairs` mixes element types"),
    # Calls that are not range(): the reason names what the loop is over (it said "range()
    # with 0 arguments", "calls range() with a str", "... over range()").
    ("""
    def f(text):
        n = 0
        for w in text.split():
            n += 1
        return n
    """, lambda: ("a b c",), "loops over a call with 0 arguments"),
    ("""
    def evens(n):
        return range(0, 2 * n, 2)

    def f(n):
        s = 0
        for v in evens(n):
            s += v
        return s
    """, lambda: (5,), "loops over `evens(...)`, which is not the builtin range"),
    ("""
    def f(d):
        s = 0
        for k, v in d.items():
            s += k * v
        return s
    """, lambda: ({1: 2, 3: 4},), "unpacks the items of a for loop over a call"),
    ("""
    def f(a):
        s = 0.0
        for v in reversed(a * 2):
            s += v
        return s
    """, lambda: (np.arange(3.0),), "loops over reversed() of something other than range()"),
])
def test_loops_over_other_iterables_are_reported_with_the_reason(src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted")
    assert recs, "the loop is not in the report"
    assert any(reason in r for r in reasons(recs)), reasons(recs)
    assert all(r["calls"] >= 1 and r["status"] == "interpreted" for r in recs)


def test_a_module_level_loop_over_a_list():
    recs = difftest.run_module("""
    total = 0
    for w in words:
        total += len(w)
    """, lambda: {"words": ["ab", "cde", ""]}, expect="interpreted")
    assert any("`words` holds str objects" in r for r in reasons(recs)), reasons(recs)


def test_range_loops_inside_an_interpreted_loop_still_run_natively():
    recs = difftest.run("""
    def f(rows, out):
        for k, row in enumerate(rows):
            s = 0.0
            for j in range(row.shape[0]):
                s += row[j] * row[j]
            out[k] = s
        return locals()
    """, "f", lambda: (list(np.arange(12.0).reshape(3, 4)), np.zeros(3)), expect="native")
    assert {r["status"] for r in recs} == {"interpreted", "cpu"}, recs


def test_library_loops_stay_out_of_the_report():
    import statistics
    with stagepy.enable():
        statistics.fmean([1.0, 2.0, 4.0])
        statistics.median_grouped([1, 2, 2, 3])
    files = {r["file"] for r in stagepy.report()}
    assert statistics.__file__ not in files, files


@pytest.mark.parametrize("body, reason", [
    ("b = [float(i + k) for k in range(3)]", "builds a list with a comprehension"),
    ("b = {k: i for k in range(3)}", "builds a dict with a comprehension"),
    ("b = (lambda v: v + 1)(i)", "defines a lambda"),
    ("b = 'row' * i", "uses a str constant"),
    ("b = i + 1180591620717411303424", "uses an int constant beyond 64 bits"),
])
def test_a_constant_stagepy_does_not_lift_is_named_in_the_reason(body, reason):
    # A comprehension is a code object constant on Python 3.11 (inlined from 3.12 on,
    # where other reasons apply); the reason says what the nest does with it.
    src = f"""
    def f(x):
        t = 0
        for i in range(len(x)):
            {body}
            t += len(str(b))
        return t
    """
    recs = difftest.run(src, "f", lambda: (np.zeros(3),), expect="interpreted")
    rs = reasons(recs)
    if reason.startswith("builds") and sys.version_info >= (3, 12):
        assert rs and "constant" not in " ".join(rs), rs
    else:
        assert any(reason in r for r in rs), rs


def test_a_nest_declined_for_a_variables_type_compiles_once_that_type_changes():
    # After `d is a dict`, later calls with a dict decline at once (without describing the
    # other variables); an array in `d` is looked at again, and runs natively.
    src = """
    def f(d, n):
        s = 0.0
        k = 0
        while k < n:
            s += d[k]
            k += 1
        return s
    """
    import textwrap
    from helpers import compile_module
    with stagepy.enable():
        code = compile_module(textwrap.dedent(src))
        ns = {}
        exec(code, ns)
        f = ns["f"]
        for _ in range(5):
            assert f({0: 1.5, 1: 2.5, 2: 4.0}, 3) == 8.0
        rec = [r for r in stagepy.report() if r["file"] == code.co_filename][0]
        assert (rec["calls"], rec["declined"], rec["native_calls"]) == (5, 5, 0), rec
        assert "`d` is a dict" in rec["reason"], rec
        assert f(np.array([1.5, 2.5, 4.0]), 3) == 8.0
        assert f({0: 1.0, 1: 2.0}, 2) == 3.0
        assert f(np.array([1.0, 2.0, 4.0]), 3) == 7.0
        rec = [r for r in stagepy.report() if r["file"] == code.co_filename][0]
    assert (rec["calls"], rec["declined"], rec["native_calls"]) == (8, 6, 2), rec


def test_loops_of_a_generator_function_say_why_they_stay_in_cpython():
    # (The reason was what the lifter tripped over: "a while loop inside an expression".)
    recs = difftest.run("""
    def perms(n):
        p = list(range(n))
        while n:
            yield p[:]
            n -= 1
            p[n], p[0] = p[0], p[n]

    def f(n):
        total = 0
        for q in perms(n):
            total += q[0] * len(q)
        return total
    """, "f", lambda: (7,), expect="interpreted")
    difftest.assert_reason(recs, "it is in a generator or a coroutine")


@pytest.mark.parametrize("where", ["globals", "builtins"])
def test_globals_or_builtins_of_a_dict_subclass_keep_the_loop_in_cpython(where):
    # CPython looks names up through the subclass's __getitem__ at every use; a kernel would
    # read `tick` once (CPython 180300, stagepy 0 before; found by an adversarial probe).
    import builtins

    class Counting(dict):
        def __getitem__(self, k):
            if k == "tick":
                self["tick"] = dict.__getitem__(self, "tick") + 1
            return dict.__getitem__(self, k)

    src = "def run():\n    s = 0\n    for v in range(600):\n        s += tick + abs(v - 300)\n    return s\n"
    results = []
    for enabled in (False, True):
        if where == "globals":
            g = Counting(tick=0)
            look = g
        else:
            look = Counting(vars(builtins), tick=0)
            g = {"__builtins__": look}
        code = compile(src, "<subclass-globals>", "exec")
        if enabled:
            with stagepy.enable():
                exec(code, g)
                results.append((g["run"](), dict.__getitem__(look, "tick")))
        else:
            exec(code, g)
            results.append((g["run"](), dict.__getitem__(look, "tick")))
    assert results[1] == results[0]
    assert results[0][1] == 600
