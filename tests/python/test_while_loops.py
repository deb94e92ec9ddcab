"""A while statement outside any for loop is a nest of its own: `while b: a, b = b, a % b`,
`i = 0; while i < n and a[i] >= 0: ...`, `while True: ... break`, a `while t < steps:` time
loop around for loops. Each runs natively with CPython's results: the variables after the
loop, the arrays it wrote, an exception in the middle with the earlier writes done, ints that
outgrow 64 bits. A while loop that cannot be lifted (a break past an else clause, a
generator's yield) stays interpreted, and the report still lists it with the reason."""
import copy
import textwrap

import numpy as np
import pytest

import difftest
import stagepy
from helpers import compile_module


NATIVE = [
    ("gcd", """
    def f(a, b):
        while b:
            a, b = b, a % b
        return locals()
    """, lambda: (1071 * 7919, 462 * 7919)),
    ("collatz counter", """
    def f(n):
        c = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            c += 1
        return locals()
    """, lambda: (837799,)),
    ("scan with a compound test", """
    def f(a, n):
        i = 0
        s = 0.0
        while i < n and a[i] >= 0:
            s += a[i]
            i += 1
        return locals()
    """, lambda: (np.where(np.arange(100) == 71, -1.0, np.linspace(1, 2, 100)), 100)),
    ("continue back to the test", """
    def f(a, n):
        x = 0.0
        i = 0
        while i < n - 1:
            i += 1
            if a[i] < 0:
                continue
            x += a[i]
        return locals()
    """, lambda: (np.sin(np.arange(60.0)), 60)),
    ("while True with a break", """
    def f(n):
        c = 0
        while True:
            c += 3
            if c > n:
                break
        c += 1
        return locals()
    """, lambda: (1000,)),
    ("while not", """
    def f(a):
        done = False
        k = 0
        while not done:
            k += 1
            done = a[k] > 0.9
        return locals()
    """, lambda: (np.linspace(0, 1, 50),)),
    ("float test (Newton)", """
    import math
    def f(v):
        x = v
        it = 0
        while abs(x * x - v) > 1e-12 * v:
            x = 0.5 * (x + v / x)
            it += 1
        return locals()
    """, lambda: (1234.5,)),
    ("binary search", """
    def f(a, x):
        lo, hi = 0, len(a)
        while lo < hi:
            mid = (lo + hi) // 2
            if a[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return locals()
    """, lambda: (np.cumsum(np.arange(1000) % 7), 1500)),
    ("time loop around for loops", """
    def f(u, steps):
        t = 0
        n = u.shape[0]
        v = u.copy()
        while t < steps:
            for i in range(1, n - 1):
                v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]
            for i in range(1, n - 1):
                u[i] = v[i]
            t += 1
        return locals()
    """, lambda: (np.linspace(0, 1, 64) ** 2, 25)),
    ("nested while loops", """
    def f(A):
        n, m = A.shape
        i = 0
        while i < n:
            j = 0
            while j < m:
                A[i, j] = i * m + j
                j += 1
            i += 1
        return locals()
    """, lambda: (np.zeros((7, 9)),)),
    ("a while loop over a list", """
    def f(L, target):
        i = 0
        while L[i] != target:
            L[i] = L[i] * 2
            i += 1
        return locals()
    """, lambda: ([3, 1, 4, 1, 5, 9, 2, 6], 9)),
    ("the test reads what the body computes", """
    def f(tol):
        term = 1.0
        s = 0.0
        k = 0
        while term > tol:
            s += term
            k += 1
            term = term / k
        return locals()
    """, lambda: (1e-15,)),
]


@pytest.mark.parametrize("src, args", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_while_loops_run_natively_with_cpythons_results(src, args):
    recs = difftest.run(src, "f", args)
    assert all(r["status"] != "interpreted" for r in recs if r["native_calls"])


BAIL = [
    ("an IndexError in the middle, earlier writes done", """
    def f(L, out, target):
        i = 0
        while L[i] != target:
            out[i] = L[i] + 1
            i += 1
        return locals()
    """, lambda: ([3, 1, 4, 1, 5], np.zeros(8), 7)),
    ("a ZeroDivisionError in the middle", """
    def f(out, k):
        i = 0
        s = 0.0
        while i < 10:
            out[i] = s
            s += 1 / (k - i)
            i += 1
        return locals()
    """, lambda: (np.zeros(10), 6)),
    ("an int that leaves 64 bits", """
    def f(n):
        p = 1
        i = 0
        while i < n:
            p = p * 3 + i
            i += 1
        return locals()
    """, lambda: (60,)),
]


@pytest.mark.parametrize("src, args", [c[1:] for c in BAIL], ids=[c[0] for c in BAIL])
def test_while_loops_hand_over_to_cpython_where_it_raises_or_overflows(src, args):
    difftest.run(src, "f", args, expect="bail")


def test_gcd_of_ints_beyond_64_bits_is_cpythons():
    difftest.run("""
    def f(a, b):
        while b:
            a, b = b, a % b
        return a
    """, "f", lambda: (2 ** 90 * 3, 2 ** 70 * 9), expect=None)


def test_a_module_level_while_loop_runs_natively():
    difftest.run_module("""
    import numpy as np
    a = np.zeros(50)
    k = 0
    while k < 50:
        a[k] = k * k
        k += 1
    """, dict)


INTERPRETED = [
    ("a break past an else clause", """
    def f(a):
        i = 0
        while i < len(a):
            if a[i] < 0:
                break
            i += 1
        else:
            i = -1
        i += 1  # (not a short return, which 3.12+ would copy into the break)
        return i
    """, (np.array([1.0, 2.0, -3.0]),), ("past the loop's else clause",)),
    ("a method that empties the tested object", """
    def f(d):
        n = 0
        while d:
            d.popitem()
            n += 1
        return n
    """, ({1: 2, 3: 4, 5: 6},), ("is a dict",)),
]


@pytest.mark.parametrize("src, args, reason", [c[1:] for c in INTERPRETED], ids=[c[0] for c in INTERPRETED])
def test_a_while_loop_that_stays_interpreted_is_in_the_report_with_its_reason(src, args, reason):
    recs = difftest.run(src, "f", lambda: copy.deepcopy(args), expect="interpreted")
    assert [r["line"] for r in recs] == [4], recs  # the while statement's line
    assert any(any(why in r["reason"] for why in reason) for r in recs), recs


def test_an_else_clause_without_a_break_runs_after_the_native_loop():
    # Without a break the else clause always runs once the test fails: the nest ends
    # where it starts, and CPython runs it.
    difftest.run("""
    def f(n, out):
        s = 0
        while n > 0:
            s += n
            out[n] = s
            n -= 1
        else:
            s = -s
        return locals()
    """, "f", lambda: (9, np.zeros(10)))


def test_a_generator_with_a_while_loop_still_yields_as_cpython():
    src = """
    def gen(n):
        k = 0
        while k < n:
            yield k * k
            k += 1
    def f(n):
        return list(gen(n))
    """
    difftest.run(src, "f", lambda: (7,), expect="interpreted")


def test_a_while_loop_that_declines_runs_its_continue_in_cpython_only_once_per_entry():
    # The nest call sits before the first test; `continue` jumps there from inside the
    # loop and must not go through the call again (one call per entry of the loop).
    src = textwrap.dedent("""
    def f(a):
        i = 0
        s = 0
        while i < len(a):
            i += 1
            if i % 2:
                continue
            s += len(str(a[i - 1]))
        return s
    """)
    with stagepy.enable():
        code = compile_module(src)
        ns = {}
        exec(code, ns)
        assert ns["f"](list(range(10))) == 5
    recs = [r for r in stagepy.report() if r["file"] == code.co_filename]
    assert [(r["calls"], r["native_calls"]) for r in recs] == [(1, 0)], recs


WAITING = [
    ("a flag another thread sets", """
    def f(state):
        n = 0
        while not state[0]:
            n += 1
        return n
    """),
    ("while True around a test of the flag", """
    def f(state):
        n = 0
        while True:
            if state[0]:
                break
            n += 1
        n = n * 2  # (not a short return, which 3.12+ would copy into the break)
        return n
    """),
]


@pytest.mark.parametrize("src", [c[1] for c in WAITING], ids=[c[0] for c in WAITING])
def test_a_while_loop_that_waits_for_another_thread_stays_interpreted(src):
    # Native code holds the GIL and would spin forever on a value only another thread
    # changes; CPython lets that thread run.
    import threading
    import time
    with stagepy.enable():
        code = compile_module(src)
        ns = {}
        exec(code, ns)
        state = [False]
        setter = threading.Thread(target=lambda: (time.sleep(0.05), state.__setitem__(0, True)))
        setter.start()
        n = ns["f"](state)
        setter.join()
    assert n > 0
    recs = [r for r in stagepy.report() if r["file"] == code.co_filename]
    difftest.assert_reason(recs, "nothing the loop changes")
    assert all(r["native_calls"] == 0 for r in recs), recs


def test_a_bounded_wait_on_a_flag_another_thread_sets_stays_interpreted():
    # `spins` ends the loop by itself, but `ready[0]` is what ends it in CPython: another
    # thread sets it while the loop runs. Native code would read it once and spin on.
    import threading
    import time
    src = """
    def f(ready, limit):
        spins = 0
        while not ready[0] and spins < limit:
            spins += 1
        return spins < limit
    """
    with stagepy.enable():
        code = compile_module(textwrap.dedent(src))
        ns = {}
        exec(code, ns)
        ready = [False]
        setter = threading.Thread(target=lambda: (time.sleep(0.02), ready.__setitem__(0, True)))
        setter.start()
        assert ns["f"](ready, 3 * 10 ** 8)  # CPython sees the flag long before the limit
        setter.join()
    recs = [r for r in stagepy.report() if r["file"] == code.co_filename]
    difftest.assert_reason(recs, "an element of `ready` that the loop never changes")


KMP = """
def failure(p):
    fail = [0] * len(p)
    k = 0
    for i in range(1, len(p)):
        while k > 0 and p[k] != p[i]:
            k = fail[k - 1]
        if p[k] == p[i]:
            k += 1
        fail[i] = k
    return fail

def search(t, p, fail):
    found = []
    k = 0
    for i in range(len(t)):
        while k > 0 and p[k] != t[i]:
            k = fail[k - 1]
        if p[k] == t[i]:
            k += 1
        if k == len(p):
            found.append(i - len(p) + 1)
            k = fail[k - 1]
    return found

def f(t, p):
    return search(t, p, failure(p))
"""


@pytest.mark.parametrize("p", ["abababb", "aaaaab", "ab\u0100ab\u0100abz"])
def test_knuth_morris_pratt_reads_a_str_the_loop_never_changes(p):
    # `p[i]` in the while test is at a place the loop never moves, but no thread can change
    # a str's characters: the search runs natively.
    rng = __import__("random").Random(7)
    alphabet = sorted(set(p))
    t = "".join(rng.choice(alphabet) for _ in range(3000))
    recs = difftest.run(KMP, "f", lambda: (t, p))
    assert all(r["native_calls"] == r["calls"] for r in recs if r["function"] in ("failure", "search")), recs


def test_knuth_morris_pratt_over_lists_runs_where_the_test_compares_data():
    # In search(), `t[i]` is read at a place the while loop never moves, and `t` nowhere else
    # in its test: a list's element there could be another thread's flag, so search() stays
    # in CPython, saying why. In failure(), `p[i]` sits beside `p[k]`, which the loop moves:
    # data it compares, and failure() runs natively.
    recs = difftest.run(KMP, "f", lambda: ([int(c) for c in "010010101101" * 20], [0, 1, 0, 1, 1]), expect=None)
    difftest.assert_reason(recs, "an element of `t` that the loop never changes")
    assert all(r["native_calls"] == 0 for r in recs if r["function"] == "search"), recs
    assert any(r["native_calls"] == r["calls"] > 0 for r in recs if r["function"] == "failure"), recs


def test_a_while_test_of_a_list_the_loop_descends():
    # `x = x[0]` gives x rows of its own entry list, which kernels never read (a row left by
    # an earlier run): x holds nothing there, so the nest would hand every call to CPython at
    # its first test, and stays there with the reason (before: "internal error: truth of
    # unbound").
    recs = difftest.run("""
    def f(x):
        c = 0
        while x:
            c += 1
            x = x[0]
        return c
    """, "f", lambda: ([[[[]]]],), expect="interpreted")
    difftest.assert_reason(recs, "its first test reads `x`, which holds no value a kernel reads at entry")


def test_elements_read_where_the_loop_moves_still_run_natively():
    # M[0][j] moves with j, a[i] with i: no flag, a scan.
    difftest.run("""
    def f(M, a, n):
        j = 0
        while j < n and M[0][j] > 0.0:
            j += 1
        i = 0
        while i < n and a[i] >= 0.0:
            i += 1
        return locals()
    """, "f", lambda: ([[1.0, 2.0, -1.0, 3.0]], np.array([1.0, 0.0, 2.0, -5.0]), 4))
