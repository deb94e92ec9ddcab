"""A nest that stays in CPython costs little more than CPython: a nest declined for a value
other than a list (a function it cannot inline, a method it calls) reads no list, and one
declined for a list it cannot read (ints beyond 64 bits) reads its lists a logarithmic number of
times, the one it could not read first. Checked by the report's `lists_read` count, not by
time; results are compared with CPython's."""
import random

import difftest


def test_a_recursive_functions_loop_reads_no_list_at_each_level():
    # The outer loop calls `visit`, which cannot be inlined (it loops and stores): that
    # decision is the same at every level of the recursion, and needs no list read.
    recs = difftest.run("""
    def visit(a, lo, hi):
        while lo < hi:
            k = lo
            while k < lo + 2:
                a[k] += 1
                k += 1
            mid = (lo + hi) // 2
            visit(a, lo, mid)
            lo = mid + 1
        return a

    def f(a):
        return visit(a, 0, len(a) - 1)
    """, "f", lambda: ([0] * 3000,), expect=None)
    outer = [r for r in recs if r["function"] == "visit" and "calls `visit`" in (r["reason"] or "")]
    assert outer and outer[0]["calls"] > 1000, recs
    assert outer[0]["lists_read"] == 0, outer


def test_a_nest_calling_a_method_reads_no_list():
    # `random.betavariate` is a method stagepy does not run: the inner nest is declined before
    # the list of lists is read (it was read whole at every row: cubic in all).
    src = """
    import random

    def fill(W):
        n = len(W)
        for i in range(n):
            for j in range(n):
                W[i][j] = random.betavariate(2.0, 3.0)
        return W
    """
    # (Both runs draw the same numbers: make_args seeds the generator.)
    recs = difftest.run(src, "fill", lambda: (random.seed(5), [[0.0] * 60 for _ in range(60)])[1:], expect="interpreted")
    assert recs and all(r["lists_read"] == 0 for r in recs), recs


def test_a_list_it_cannot_read_is_read_first_and_rarely():
    # `dist` holds ints beyond 64 bits (not a list stagepy reads); the adjacency list beside
    # it is read only until `dist` is known to be the one, then calls back off.
    # (Read in the order of the variables, `adj` came first at every try: 60 reads here.)
    n = 20000
    recs = difftest.run("""
    def f(adj, dist):
        for u in range(len(adj)):
            du = dist[u]
            for v in adj[u]:
                if du + 1 < dist[v]:
                    dist[v] = du + 1
        return dist
    """, "f", lambda: ([[(u * 7 + k) % n for k in range(2)] for u in range(n)], [0] + [10**30] * (n - 1)),
        expect="interpreted", calls=1)
    inner = [r for r in recs if r["calls"] >= n]
    assert inner, recs
    assert inner[0]["lists_read"] < 30, inner


def test_a_function_it_cannot_inline_declines_until_another_takes_its_place():
    # A nest declined for its helper (`h` builds a list) is declined again cheaply while `h`
    # holds a function of the same code; once `h` is a function it can inline, it runs
    # natively, with CPython's results throughout.
    src = """
    def builds(L, i):
        return len([i] + L)

    def plain(L, i):
        return L[i % len(L)] + i

    h = builds

    def g(L, n):
        s = 0
        for t in range(n):
            s += h(L, t)
        return s

    def f(L):
        global h
        out = []
        for which in (builds, builds, plain, plain):
            h = which
            for k in range(30):
                out.append(g(L, 40))
        h = builds
        return out
    """
    recs = difftest.run(src, "f", lambda: ([3, 1, 4, 1, 5],), expect=None)
    assert sum(r["native_calls"] for r in recs) > 0, recs
    assert sum(r["declined"] for r in recs) >= 60, recs
