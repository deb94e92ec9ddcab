"""`for ... else` inside a nest: the else clause runs when the loop ends without a break. The
lifter clears a hidden flag before the loop, sets it at each break (which then leaves the loop
as any break does), and puts the clause after the loop in the branch taken where the flag is
clear (lift.cpp, cfg.h's Loop::else_exit). Every result is compared with CPython's."""
import numpy as np
import pytest

from difftest import ran_parallel, run


def native(recs, name="f"):
    return any(r["native_calls"] for r in recs if r["function"] == name)


def test_the_tutorials_prime_search_runs_natively_and_in_parallel():
    recs = run("""
    def f(N):
        c = 0
        for n in range(2, N):
            for x in range(2, n):
                if n % x == 0:
                    break
            else:
                c += n
        return c
    """, "f", lambda: (2500,))
    assert native(recs), recs
    assert ran_parallel(recs, "n"), recs


@pytest.mark.parametrize("kind", ["numpy", "lists"])
def test_an_else_clause_that_continues_the_outer_loop(kind):
    def data():
        A = np.random.default_rng(1).random((40, 30))
        return (A if kind == "numpy" else A.tolist()), 40, 30, 0.97
    recs = run("""
    def f(A, n, m, t):
        hits = 0
        for i in range(n):
            for j in range(m):
                if A[i][j] > t:
                    hits += j
                    break
            else:
                hits -= 1
                if i % 2:
                    continue
            hits += 100
        return hits
    """, "f", data)
    assert native(recs), recs


def test_nested_for_else_over_sequences_and_enumerate():
    run("""
    def f(rows, bad):
        out = []
        for r in rows:
            for k, v in enumerate(r):
                for b in bad:
                    if v == b:
                        break
                else:
                    continue
                out.append(k)
                break
            else:
                out.append(-1)
        return out
    """, "f", lambda: ([[1, 2, 3], [4, 5, 6], [7, 8, 9], [3, 3, 3]], [5, 9, 3]))


def test_a_helper_with_for_else_and_returns():
    recs = run("""
    def has_pair(a, t):
        for i in range(len(a)):
            for j in range(i + 1, len(a)):
                if a[i] + a[j] == t:
                    break
            else:
                continue
            return True
        return False

    def f(A, ts):
        c = 0
        for t in ts:
            if has_pair(A, t):
                c += 1
        return c
    """, "f", lambda: (np.random.default_rng(2).integers(0, 50, 40), list(range(0, 120, 3))))
    assert native(recs), recs


def test_an_index_error_in_the_else_clause_after_the_earlier_writes():
    run("""
    def f(A, out, n):
        for i in range(n):
            for j in range(3):
                if A[i] < j:
                    break
            else:
                out[i] = A[i + 2]
        return out
    """, "f", lambda: (np.array([5, 0, 7, 8, 9, 6]), np.zeros(6, dtype=np.int64), 6), expect="bail")


def test_a_break_in_the_else_clause_leaves_the_outer_loop():
    run("""
    def f(A, n):
        s = 0
        for i in range(n):
            for j in range(n):
                if A[i, j] < 0:
                    break
            else:
                s += i
                if s > 20:
                    break
            s += 1
        return s
    """, "f", lambda: (np.arange(-5, 59).reshape(8, 8) % 7 - 1, 8))


def test_an_inner_loop_whose_break_continues_the_outer_loop_stays_in_order():
    # `for d ...: break / else:` desugars into an inner loop whose break continues the outer
    # loop: that inner loop may stop early, so it never runs on threads (before, one of over
    # 512 iterations was planned parallel and its kernel failed with an internal error).
    recs = run("""
    def f(n):
        found = None
        for i in range(2, n):
            for d in range(2, i):
                if i % d == 0:
                    break
            else:
                if i > n - 50:
                    found = i
                    break
        return found
    """, "f", lambda: (1300,))
    assert not any("internal error" in (r["reason"] or "") for r in recs), recs
    assert all(r["native_calls"] == r["calls"] for r in recs), recs


@pytest.mark.parametrize("t", [4.5, 40.5])
def test_the_outermost_loops_else_clause(t):
    # The nest's own loop with an else clause: its breaks leave the region, to the code after
    # the clause. On 3.11 the nest stays in CPython; 3.12 copies the `return r` after it into
    # the break's path, which the nest then leaves through (CPython runs the return).
    run("""
    def f(A, t):
        r = -1
        for i in range(len(A)):
            if A[i] > t:
                r = i
                break
        else:
            r = len(A)
        return r
    """, "f", lambda: (np.arange(10.0), t), expect=None)
