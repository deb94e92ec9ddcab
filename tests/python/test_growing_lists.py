"""Lists the loops grow and shrink while they read them — `fib.append(fib[-1] + fib[-2])`, a
stack (`st.append(i)`, `st[-1]`, `j = st.pop()`, `while st:`), primes collected and read back
— run natively: kernels hold each such list by a header whose items move to a larger block
when they do not fit, and the list object gets its new length and items when the kernel
returns (also when it stops for CPython, with the earlier appends and pops done)."""
import numpy as np
import pytest

import difftest


def _ints(seed, n, hi=1000):
    return [int(x) for x in np.random.default_rng(seed).integers(0, hi, n)]


NATIVE = [
    ("Fibonacci grown from a display", """
    def f(n):
        fib = [0, 1]
        for i in range(2, n):
            fib.append(fib[i - 1] + fib[i - 2])
        return fib
    """, lambda: (80,)),
    ("a list given at entry grown by its last items", """
    def f(L, n):
        for i in range(n):
            L.append(L[-1] + 2 * L[-2])
        return L
    """, lambda: ([1, 1], 30)),
    ("primes by trial division over the primes found", """
    def f(N):
        ps = []
        for n in range(2, N):
            ok = True
            for p in ps:
                if p * p > n:
                    break
                if n % p == 0:
                    ok = False
                    break
            if ok:
                ps.append(n)
        return ps, len(ps)
    """, lambda: (3000,)),
    ("next greater element with a stack of positions", """
    def f(a):
        res = [-1] * len(a)
        st = []
        for i in range(len(a)):
            x = a[i]
            while st and a[st[-1]] < x:
                j = st.pop()
                res[j] = x
            st.append(i)
        return res, st
    """, lambda: (_ints(1, 400),)),
    ("next greater element, the test reading a[i] beside a[st[-1]]", """
    def f(a):
        res = [-1] * len(a)
        st = []
        for i in range(len(a)):
            while st and a[st[-1]] < a[i]:
                res[st.pop()] = a[i]
            st.append(i)
        return res
    """, lambda: (_ints(4, 300),)),
    ("stack popped into an index and a sum", """
    def f(L):
        out = [0] * 8
        total = 0
        k = 0
        while L:
            total += L.pop()
            k += 1
            if L:
                out[L.pop() % 8] = k
        return total, out, L
    """, lambda: (_ints(2, 101, 50),)),
    ("depth of parentheses over a str", """
    def f(s):
        st = []
        best = 0
        for ch in s:
            if ch == "(":
                st.append(len(st))
            elif st:
                st.pop()
            best = max(best, len(st))
        return best, st
    """, lambda: ("(()(()))((()" * 30,)),
    ("floats appended to a list empty at entry", """
    def f(acc, n):
        for i in range(n):
            acc.append(i * 0.5)
            if len(acc) > 3 and acc[-1] > acc[0] * 4:
                acc.pop()
        return acc
    """, lambda: ([], 40)),
    ("bools, each the negation of the last", """
    def f(n):
        b = [True]
        for i in range(n):
            b.append(not b[-1])
        return b
    """, lambda: (33,)),
    ("rows of Pascal's triangle grown item by item", """
    def f(n):
        cur = [1]
        for r in range(n):
            nxt = [1]
            for k in range(1, len(cur)):
                nxt.append(cur[k - 1] + cur[k])
            nxt.append(1)
            cur = nxt
        return cur
    """, lambda: (40,)),
    ("an empty display that gets floats", """
    def f(xs):
        out = []
        for x in xs:
            out.append(x * 1.5)
            if len(out) > 2:
                out.pop()
        return out
    """, lambda: (_ints(3, 20),)),
    ("prefix sums of a NumPy array (np.float64 items)", """
    def f(a):
        out = [0.0]
        for i in range(len(a)):
            out.append(out[-1] + a[i])
        return out, [type(x).__name__ for x in out]
    """, lambda: (np.arange(5.0),)),
    ("a new list read, then appended to a list only appended to", """
    def f(n):
        out = []
        for i in range(n):
            row = [i]
            row.append(row[0] + 1)
            out.append(row)
        return out
    """, lambda: (10,)),
    ("a new list kept under two names", """
    def f(n):
        out = []
        for i in range(n):
            row = []
            alias = row
            alias.append(i)
            out.append(row)
        return out, [r is out[0] for r in out]
    """, lambda: (10,)),
    ("a queue popped from the front (`pop(0)`)", """
    def f(adj, src):
        dist = [-1] * len(adj)
        dist[src] = 0
        queue = [src]
        while queue:
            u = queue.pop(0)
            for v in adj[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        return dist, queue
    """, lambda: ([[(i * 7 + k * 13) % 97 for k in range(3)] for i in range(97)], 4)),
    ("pops at positions counted from either end", """
    def f(L, ks):
        got = []
        for k in ks:
            x = L.pop(k)
            got.append(x)
        return got, L
    """, lambda: (list(range(40)), [0, -1, 5, -3, 10, 2, -20, 1])),
    ("Levenshtein rows grown by append", """
    def f(a, b):
        prev = list(range(len(b) + 1))
        for i in range(1, len(a) + 1):
            cur = [i]
            for j in range(1, len(b) + 1):
                cost = 0 if a[i - 1] == b[j - 1] else 1
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost))
            prev = cur
        return prev[-1], prev
    """, lambda: ("kitten sitting" * 4, "sitting kitten" * 3)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_lists_grown_and_read_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    outer = [r for r in recs if r["native_calls"] > 0]
    assert outer and all(r["native_calls"] == r["calls"] for r in outer), recs


def test_a_pop_of_an_empty_list_raises_after_the_earlier_pops():
    difftest.run("""
    def f(L, k):
        s = 0
        try:
            for i in range(k):
                s += L.pop()
        except IndexError as e:
            return "IndexError", str(e), s, L
        return s, L
    """, "f", lambda: (list(range(5)), 8), expect="bail")


def test_an_index_error_after_a_pop_in_the_same_statement_keeps_the_pop():
    difftest.run("""
    def f(L, res):
        try:
            for i in range(5):
                res[L.pop()] = i
        except IndexError as e:
            return "IndexError", str(e), L, res
        return L, res
    """, "f", lambda: ([0, 1, 7, 2], [0, 0, 0]), expect="bail")


def test_ints_beyond_64_bits_go_to_cpython_before_the_append():
    difftest.run("""
    def f(n):
        fib = [1, 1]
        for i in range(n):
            fib.append(fib[-1] + fib[-2])
        return fib[-3:], len(fib)
    """, "f", lambda: (200,), expect="bail")


def test_a_float_appended_to_a_list_of_ints_leaves_the_nest_in_cpython():
    recs = difftest.run("""
    def f(L):
        for i in range(4):
            L.append(L[-1] / 2)
        return L
    """, "f", lambda: ([1, 2],), expect="interpreted")
    assert any("appends a float to a list of ints" in r["reason"] for r in recs), recs


def test_numpy_floats_appended_to_a_list_of_floats_keep_their_type():
    difftest.run("""
    def f(L, a):
        for i in range(len(a)):
            L.append(a[i] + L[-1])
        return L, [type(x).__name__ for x in L]
    """, "f", lambda: ([0.5], np.linspace(0, 1, 9)), expect=None)


@pytest.mark.parametrize("src, why", [
    ("""
    def f(L):
        for x in L:
            if len(L) < 20:
                L.append(x + 1)
        return L
    """, "inside a loop over it"),
    ("""
    def f(L):
        s = 0
        while len(L) > 1:
            s += L.pop() - L.pop()
        return s, L
    """, "changes it twice"),
    ("""
    def f(L):
        s = 0
        while len(L) > 1:
            s += L.pop() * 10 + L[-1]
        return s, L
    """, "also reads it"),
    ("""
    def f(L):
        s = 0
        for i in range(6):
            s += L.pop() if i % 2 else 0
        return s, L
    """, "may not evaluate"),
], ids=["grown while iterated", "two pops", "read after the pop", "pop in a conditional expression"])
def test_changes_of_length_cpython_would_order_otherwise_stay_interpreted(src, why):
    recs = difftest.run(src, "f", lambda: (list(range(11)),), expect="interpreted")
    assert any(why in r["reason"] for r in recs), recs


def test_a_list_another_argument_also_holds_grows_as_in_cpython():
    src = """
    def f(a, b):
        for i in range(5):
            a.append(b[-1] + 1)
        return a, b, a is b
    """
    difftest.run(src, "f", lambda: ([1, 2], [7]))
    # One list under two names: each append shows through the other (it stays in CPython).
    difftest.run(src, "f", lambda: (lambda L: (L, L))([1, 2]), expect=None)


def test_a_module_level_stack():
    difftest.run_module("""
    data = [5, 3, 8, 1, 9, 2, 7]
    st = []
    spans = [0] * len(data)
    for i in range(len(data)):
        x = data[i]
        while st and data[st[-1]] <= x:
            st.pop()
        spans[i] = i + 1 if not st else i - st[-1]
        st.append(i)
    """, lambda: {})


def test_a_pop_at_an_index_out_of_range_raises_after_the_earlier_pops():
    difftest.run("""
    def f(L, ks):
        got = 0
        try:
            for k in ks:
                got += L.pop(k)
        except IndexError as e:
            return "IndexError", str(e), got, L
        return got, L
    """, "f", lambda: (list(range(6)), [1, -1, 9, 0]), expect="bail")
