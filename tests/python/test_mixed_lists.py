"""Lists that hold Python ints and floats together (`dist = [float('inf')] * n; dist[s] = 0`,
a Floyd-Warshall matrix of int weights and inf) run natively: each element keeps its value's
bits and a tag saying which type it is, operations follow each element's own type (int + int
stays an exact int, int < float compares exactly), and what is written back is what CPython
leaves, an int where the nest stored one and a float elsewhere. A nest that stores ints into
a list of floats (or floats into one of ints) read at entry has it read so. Other uses of such
a list whole (sum(L), a slice, a copy) stay in CPython with the reason."""
import random

import numpy as np
import pytest

import difftest

INF = float("inf")


def _graph(seed, n, degree, wmax=20, floats=False):
    rnd = random.Random(seed)
    adj = [[rnd.randrange(n) for _ in range(rnd.randrange(degree + 1))] for _ in range(n)]
    w = [[(rnd.random() * wmax if floats else rnd.randrange(1, wmax)) for _ in a] for a in adj]
    return adj, w


NATIVE = [
    ("Dijkstra with int weights over a list of inf and 0", """
    INF = float('inf')
    def f(adj, w, src):
        n = len(adj)
        dist = [INF] * n
        dist[src] = 0
        done = [False] * n
        for _ in range(n):
            u = -1
            for v in range(n):
                if not done[v] and (u == -1 or dist[v] < dist[u]):
                    u = v
            if dist[u] == INF:
                break
            done[u] = True
            for k in range(len(adj[u])):
                v = adj[u][k]
                nd = dist[u] + w[u][k]
                if nd < dist[v]:
                    dist[v] = nd
        return dist
    """, lambda: (*_graph(1, 120, 4), 3)),
    ("Bellman-Ford relaxations, ints reaching some vertices only", """
    def f(edges, n, dist):
        for _ in range(n - 1):
            changed = False
            for k in range(len(edges)):
                u, v, c = edges[k]
                if dist[u] + c < dist[v]:
                    dist[v] = dist[u] + c
                    changed = True
            if not changed:
                break
        return dist
    """, lambda: ([(random.Random(2).randrange(60), random.Random(k).randrange(60), k % 7 - 1) for k in range(200)],
                  60, [0] + [float('inf')] * 59)),
    ("Floyd-Warshall over a matrix of int weights and inf", """
    def f(d):
        n = len(d)
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    if d[i][k] + d[k][j] < d[i][j]:
                        d[i][j] = d[i][k] + d[k][j]
        return d
    """, lambda: ([[0 if i == j else (random.Random(i * 50 + j).randrange(1, 30) if (i * 7 + j * 3) % 5 == 0 else INF)
                    for j in range(30)] for i in range(30)],)),
    ("the diagonal of a matrix of floats set to int 0", """
    def f(d):
        for i in range(len(d)):
            d[i][i] = 0
        return d
    """, lambda: ([[INF] * 25 for _ in range(25)],)),
    ("floats stored into a list of ints", """
    def f(L, A):
        for i in range(len(L)):
            if A[i] > 0.5:
                L[i] = L[i] * 0.5
        return L
    """, lambda: (list(range(40)), list(np.random.default_rng(3).random(40)))),
    ("ints among floats read into sums of each type", """
    def f(L):
        si = 0
        sf = 0.0
        t = 0
        for x in L:
            t = t + x
            if x == int(x):
                si += 1
            else:
                sf += x
        return si, sf, t
    """, lambda: ([1, 2.5, -3, 4.25, 2**40, 0.0, -0.0, 7] * 6,)),
    ("int arithmetic on ints stays exact beside floats", """
    def f(L):
        for i in range(len(L)):
            L[i] = L[i] * 3 + 1
        return L
    """, lambda: ([2**53 + 1, 1.5, 2**52 + 3, -7, 0.1] * 4,)),
    ("negative indices into a list of ints and floats", """
    def f(L, k):
        for i in range(1, k):
            L[-i] = L[-i - 1] + L[i]
        return L
    """, lambda: ([0, 1.5, 2, 3.25, 4, 5, 6.5, 7] * 3, 12)),
    ("rows of a list of lists mixing the two", """
    def f(M):
        total = 0
        for row in M:
            for j in range(len(row)):
                if row[j] < 0:
                    row[j] = 0
                total = total + row[j]
        return M, total
    """, lambda: ([[1, -2.5, 3], [-4, 5.5, -6], [0.5, 7, -8.25]] * 5,)),
    ("a helper over an element of each type", """
    def relax(a, b, c):
        return a + c if a + c < b else b
    def f(dist, cost):
        for i in range(1, len(dist)):
            dist[i] = relax(dist[i - 1], dist[i], cost[i])
        return dist
    """, lambda: ([0] + [INF] * 30, [k % 4 for k in range(31)])),
    ("sum(), max() and `in` over ints and floats", """
    def f(L, x):
        s = sum(L)
        m = max(L)
        for i in range(len(L)):
            if x in L:
                L[i] = L[i] + s + m
        return L, s, m
    """, lambda: ([3, 1.5, 2**40, -0.5, 7], 7)),
    ("comparisons of big ints with floats", """
    def f(L, x):
        c = 0
        for i in range(len(L)):
            if L[i] > x:
                c += 1
            if L[i] == x:
                c += 100
        return c
    """, lambda: ([2**53 + 1, 2.0**53, 2**53, -(2**53) - 1, 3, 3.0], 2.0**53)),
    ("a list holding ints, floats and np.float64s", """
    def f(L, A):
        for i in range(len(A)):
            L[i] = L[i] + A[i]
        return L
    """, lambda: ([1, 2.5, np.float64(3.5), 4] * 5, np.arange(20.0))),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_lists_of_ints_and_floats_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert any(r["native_calls"] > 0 for r in recs), recs


def test_the_list_keeps_each_elements_type():
    # Not only equal values: 0 stays an int, 2.0 stays a float.
    recs = difftest.run("""
    def f(L):
        for i in range(len(L)):
            if i % 2:
                L[i] = 0
            else:
                L[i] = L[i] + 1.0
        return L
    """, "f", lambda: ([1, 2.0, 3, 4.0, 5] * 4,))
    assert sum(r["bailouts"] for r in recs) == 0, recs


def test_int_overflow_past_64_bits_goes_to_cpython():
    difftest.run("""
    def f(L):
        for i in range(len(L)):
            L[i] = L[i] * L[i]
        return L
    """, "f", lambda: ([3, 1.5, 2**40, 0.5, 2**33], ), expect="bail")


def test_an_index_error_leaves_the_earlier_stores():
    difftest.run("""
    def f(L, idx):
        try:
            for k in range(len(idx)):
                L[idx[k]] = k if k % 2 else k + 0.5
        except IndexError as e:
            return "IndexError", str(e), L
        return L
    """, "f", lambda: ([0, 1.0, 2] * 3, [0, 3, -1, 4, 12, 2]), expect=None)


def test_dividing_an_int_element_by_zero_raises_as_cpython():
    difftest.run("""
    def f(L, z):
        try:
            for i in range(len(L)):
                L[i] = L[i] // z
        except ZeroDivisionError as e:
            return "ZeroDivisionError", str(e), L
        return L
    """, "f", lambda: ([7, 2.5, 9], 0), expect=None)


def test_a_list_of_ints_and_floats_filled_in_parallel():
    recs = difftest.run("""
    def f(L, A, B):
        for i in range(len(L)):
            if A[i] > 0.5:
                L[i] = 1
            elif L[i] < B[i]:
                L[i] = B[i]
        return L
    """, "f", lambda: ([k if k % 3 else k * 0.5 for k in range(200000)], np.random.default_rng(9).random(200000),
                       [k * 0.75 for k in range(200000)]))
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


def test_ragged_rows_of_ints_and_floats():
    difftest.run("""
    def f(M):
        for i in range(len(M)):
            for j in range(len(M[i])):
                M[i][j] = M[i][j] * 2
        return M
    """, "f", lambda: ([list(r) for r in [[1, 2.5], [3], [], [0.25, 5, 6, -7.5]] * 4],))


def test_swapped_lists_of_ints_and_floats():
    difftest.run("""
    def f(A, n):
        prev = [0] * n
        cur = [0.0] * n
        for i in range(len(A)):
            for j in range(n):
                cur[j] = A[i][j] + (prev[j - 1] if j > 0 else 0)
            prev, cur = cur, prev
        return prev, cur
    """, "f", lambda: ([[random.Random(i * 9 + j).randrange(5) for j in range(6)] for i in range(8)], 6), expect=None)


@pytest.mark.parametrize("body, reason", [
    ("c = L[1:3]", "copies list of ints and floats"),
    ("c = L == L", "compares a list of ints and floats"),
    ("c = L.count(1)", "`.count` of a list of ints and floats"),
    ("c = [L]", "puts a list of ints and floats into a new list"),
])
def test_uses_of_the_list_whole_stay_in_cpython(body, reason):
    recs = difftest.run(f"""
    def f(L):
        for i in range(3):
            {body}
            L[i] = L[i] + 1
        return L
    """, "f", lambda: ([1, 2.5, 3, 4.5],), expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_bools_among_ints_and_floats_run_natively():
    # (Each element with its own kind: True + 1 is the int 2; a bool stored stays a bool.)
    recs = difftest.run("""
    def f(L):
        for i in range(len(L)):
            L[i] = L[i] + 1 if i % 2 else L[i] > 1
        return L
    """, "f", lambda: ([1, True, 2.5, False, 0],))
    assert all(r["bailouts"] == 0 and r["native_calls"] > 0 for r in recs), recs


def test_complex_numbers_among_ints_stay_in_cpython():
    recs = difftest.run("""
    def f(L):
        for i in range(len(L)):
            L[i] = L[i] + 1
        return L
    """, "f", lambda: ([1, True, 2.5j],), expect="interpreted")
    difftest.assert_reason(recs, "mixes element types")


def test_a_module_level_dijkstra():
    difftest.run_module("""
    INF = float('inf')
    n = 50
    adj = [[(i * 7 + k) % n for k in range(3)] for i in range(n)]
    dist = [INF] * n
    dist[0] = 0
    seen = [False] * n
    for _ in range(n):
        u = min((v for v in range(n) if not seen[v]), key=lambda v: dist[v])
        seen[u] = True
        for v in adj[u]:
            if dist[u] + 1 < dist[v]:
                dist[v] = dist[u] + 1
    """, lambda: {}, expect=None)
