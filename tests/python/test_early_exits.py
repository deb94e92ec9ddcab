"""A `return` or `raise` inside the loops (a search that returns what it found, a check that
raises, an `assert`) ends the nest natively: the kernel stops at that statement with the
variables and the loops' positions written back, and CPython runs the statement, and
whatever leads to it, from there (once). So the function returns what CPython returns,
raises the same exception with the same message, and the writes before it are done; the
loops that hold such a statement run in order (the report says why)."""
import copy

import numpy as np
import pytest

import difftest

CALLS = 8


def replay(make, n=CALLS):
    """make_args for difftest.run: n random argument tuples, drawn once, then the same ones
    again in the same order (both versions get the same inputs, call by call)."""
    rng_state = np.random.get_state()
    np.random.seed(12345)
    drawn = [make() for _ in range(n)]
    np.random.set_state(rng_state)
    k = [0]

    def next_args():
        args = copy.deepcopy(drawn[k[0] % n])
        k[0] += 1
        return args
    return next_args

NATIVE = [
    ("linear search in an array", """
    def f(a, x):
        for i in range(len(a)):
            if a[i] == x:
                return i
        return -1
    """, lambda: (np.arange(1000) % 97, np.random.randint(0, 120))),
    ("return from nested loops with an expression", """
    def f(A, x):
        n, m = A.shape
        for i in range(n):
            for j in range(m):
                if A[i, j] > x:
                    return i * m + j, A[i, j] - x
        return None
    """, lambda: (np.random.rand(30, 20), np.random.choice([0.5, 0.99, 2.0]))),
    ("binary search with return mid", """
    def f(a, x):
        lo, hi = 0, len(a)
        while lo < hi:
            mid = (lo + hi) // 2
            if a[mid] == x:
                return mid
            if a[mid] < x:
                lo = mid + 1
            else:
                hi = mid
        return -1
    """, lambda: (np.cumsum(np.arange(1, 2000)), np.random.choice([10, 21, 1999000, 1000]))),
    ("is_prime", """
    def f(n):
        if n < 2:
            return False
        d = 2
        while d * d <= n:
            if n % d == 0:
                return False
            d += 1
        return True
    """, lambda: (np.random.choice([97, 1000003, 2 ** 31 - 1, 1 << 20, 999983 * 999979]).item(),)),
    ("writes before a raise with a formatted message", """
    def f(a, out):
        for i in range(len(a)):
            if a[i] < 0:
                raise ValueError(f"negative value {a[i]} at {i}")
            out[i] = a[i] ** 0.5
        return out
    """, lambda: (np.where(np.random.rand(200) < 0.01, -1.0, np.random.rand(200)), np.zeros(200))),
    ("an assert inside the loop", """
    def f(a):
        s = 0.0
        for i in range(len(a)):
            assert a[i] >= 0, ("bad", i)
            s += a[i]
        return s
    """, lambda: (np.where(np.arange(100) == np.random.randint(0, 150), -1.0, 1.5),)),
    ("return of a conditional expression", """
    def f(a, t):
        acc = 0
        for i in range(len(a)):
            acc += a[i]
            if acc > t:
                return acc if i % 2 else -acc
        return 0
    """, lambda: (np.arange(50), np.random.randint(0, 1500))),
    ("list writes before the return are written back", """
    def f(L, k):
        for i in range(len(L)):
            L[i] = L[i] * 2 + 1
            if L[i] > k:
                return i, L
        return -1, L
    """, lambda: (list(range(40)), np.random.randint(0, 100))),
    ("a statement before the return runs in CPython too", """
    def f(a):
        best = 0
        for i in range(len(a)):
            if a[i] > best:
                best = a[i]
            if best > 0.98:
                msg = "stopped early at %d" % i
                return msg, best
        return "ran to the end", best
    """, lambda: (np.random.rand(300),)),
    ("return inside a for with an else clause", """
    def f(a, x):
        for v in a:
            if v == x:
                return "found"
        else:
            x = -x
        return x
    """, lambda: (np.arange(20.0), float(np.random.randint(0, 30)))),
    ("a raise inside a while loop's body", """
    def f(n):
        k = 0
        total = 0
        while k < n:
            total += k * k
            if total > 10 ** 6:
                raise OverflowError("total %d after %d steps" % (total, k))
            k += 1
        return total
    """, lambda: (np.random.choice([50, 500]).item(),)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_a_return_or_raise_inside_the_loops_ends_the_native_nest_with_cpythons_result(src, make):
    recs = difftest.run(src, "f", replay(make), calls=CALLS)
    assert sum(r["bailouts"] for r in recs) == 0, recs  # leaving that way is no failed check
    assert sum(r["exits"] for r in recs) > 0, recs      # and it did leave that way


def test_an_inner_nest_returns_through_the_outer_loop_cpython_runs():
    # The outer loop reads a dict (it stays in CPython); the inner loop is a nest of its own,
    # and its return leaves both loops: CPython pops the outer loop's iterator too.
    recs = difftest.run("""
    def f(rows, names, x):
        for name in names:
            a = rows[name]
            for i in range(len(a)):
                if a[i] == x:
                    return name, i
        return None
    """, "f", replay(lambda: ({"a": np.arange(10), "b": np.arange(10, 30)}, ["a", "b"], np.random.randint(0, 40))), calls=CALLS)
    assert any(r["native_calls"] for r in recs)


def test_a_loop_with_a_return_runs_in_order_and_the_report_says_why():
    recs = difftest.run("""
    def f(A, B):
        n = A.shape[0]
        for i in range(n):
            B[i] = A[i] * 2.0
            if B[i] > 1.99:
                return i
        return n
    """, "f", replay(lambda: (np.random.rand(5000), np.zeros(5000))), calls=CALLS)
    loop = difftest.loops(recs)["i"]
    assert loop["parallel_runs"] == 0
    difftest.assert_reason([{"reason": loop["why"]}], "it may stop early (return or raise)")


def test_a_time_loop_that_returns_once_converged():
    difftest.run("""
    def f(A, B, T):
        n = A.shape[0]
        for t in range(T):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    A[i, j] = B[i, j]
            if A[n // 2, n // 2] > 0.3:
                return t
        return -1
    """, "f", lambda: (np.pad(np.ones((2, 2)), 39), np.zeros((41, 41)), 400))


def test_an_exception_raised_there_propagates_to_the_caller_loop():
    # The caller catches what the nest's raise statement raises, call after call.
    src = """
    def check(a, i0):
        for i in range(i0, len(a)):
            if a[i] < 0:
                raise IndexError(i)
        return len(a)
    def f(a):
        found = []
        i0 = 0
        while True:
            try:
                i0 = check(a, i0)
                break
            except IndexError as e:
                found.append(e.args[0])
                i0 = e.args[0] + 1
        return found
    """
    difftest.run(src, "f", lambda: (np.where(np.arange(500) % 37 == 5, -1, 1),))


def test_a_module_level_raise_inside_a_loop():
    difftest.run_module("""
    import numpy as np
    a = np.arange(20) - 12.5
    out = np.zeros(20)
    for i in range(20):
        out[i] = a[i] * 2
        if out[i] > 0:
            raise RuntimeError(f"positive at {i}")
    """, dict)


def test_a_break_past_a_while_else_still_gives_cpythons_result():
    # 3.11 jumps past the else clause (interpreted, with the reason); 3.12+ copy the `return`
    # after it into the break, which then leaves the frame (native).
    src = """
    def f(a):
        i = 0
        while i < len(a):
            if a[i] < 0:
                break
            i += 1
        else:
            i = -1
        return i
    """
    recs = difftest.run(src, "f", lambda: (np.array([1.0, 2.0, -3.0]),), expect=None)
    assert all(r["native_calls"] for r in recs) or any("else clause" in r["reason"] for r in recs), recs


def test_a_generator_with_a_return_inside_its_loop_stays_cpythons():
    difftest.run("""
    def gen(a):
        for i in range(len(a)):
            if a[i] < 0:
                return
            yield a[i]
    def f(a):
        return list(gen(a))
    """, "f", lambda: (np.array([1.0, 2.0, -3.0, 4.0]),), expect=None)


def test_the_report_lists_no_stop_for_cpython_after_returns():
    src = """
    def f(a, x):
        for i in range(len(a)):
            if a[i] == x:
                return i
        return -1
    """
    recs = difftest.run(src, "f", lambda: (np.arange(100), 42), calls=5)
    assert [(r["native_calls"], r["exits"], r["bailouts"], r["reason"]) for r in recs] == [(5, 5, 0, "")], recs


ENDLESS = [
    ("while True left only by a return", """
    def f(a):
        i = 0
        while True:
            if a[i] < 0:
                return i
            i += 1
    """, lambda: (np.where(np.arange(300) == np.random.randint(0, 300), -1.0, 1.0),)),
    ("a break that 3.12+ turn into a copy of the return after the loop", """
    def f(n):
        k = 0
        while True:
            k += 1
            if k * k > n:
                break
        return k
    """, lambda: (np.random.randint(10, 10 ** 9),)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in ENDLESS], ids=[c[0] for c in ENDLESS])
def test_a_while_loop_with_no_exit_after_it_runs_natively(src, make):
    recs = difftest.run(src, "f", replay(make), calls=CALLS)
    assert sum(r["native_calls"] for r in recs) == CALLS, recs


def test_a_while_loop_left_by_nothing_but_an_exception_stays_interpreted():
    recs = difftest.run("""
    def f(a, out):
        i = 0
        while True:
            out[i] = a[i] * 3
            i += 1
    """, "f", replay(lambda: (np.arange(np.random.randint(1, 20)), np.zeros(10))), calls=CALLS, expect="interpreted")
    difftest.assert_reason(recs, "no way out but an exception")
