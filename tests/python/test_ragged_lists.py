"""Lists of lists whose rows differ in length — adjacency lists of varying degree, triangles,
jagged records — run natively: the kernel holds every row's items one after another and
where each row starts, takes a row by its index, its length and its items, and writes the
items it changed back into the same inner lists. Each is compared with CPython: values,
exceptions (at the same index, with the earlier writes done) and the lists afterwards."""
import random

import pytest

import difftest


def _graph(n, max_degree, seed=1):
    rng = random.Random(seed)
    return [[rng.randrange(n) for _ in range(rng.randrange(max_degree + 1))] for _ in range(n)]


def _jagged(n, seed=2, kind=int):
    rng = random.Random(seed)
    return [[kind(rng.randrange(-50, 50)) for _ in range(rng.randrange(6))] for _ in range(n)]


NATIVE = [
    ("breadth-first search over adjacency lists of varying degree", """
    def f(adj, src):
        dist = [-1] * len(adj)
        dist[src] = 0
        queue = [src]
        head = 0
        while head < len(queue):
            u = queue[head]
            head += 1
            for v in adj[u]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        return dist, queue
    """, lambda: (_graph(400, 6), 0)),
    ("relaxations over weighted edges (two ragged lists in step)", """
    def f(adj, w, src, rounds):
        INF = 10 ** 9
        d = [INF] * len(adj)
        d[src] = 0
        for _ in range(rounds):
            for u in range(len(adj)):
                if d[u] == INF:
                    continue
                for k in range(len(adj[u])):
                    v = adj[u][k]
                    if d[u] + w[u][k] < d[v]:
                        d[v] = d[u] + w[u][k]
        return d
    """, lambda: (_graph(120, 5, 3), [[(3 * i + k) % 7 + 1 for k in range(len(r))] for i, r in enumerate(_graph(120, 5, 3))], 0, 6)),
    ("row sums over range(len(A[i])), empty rows included", """
    def f(A):
        out = [0] * len(A)
        for i in range(len(A)):
            s = 0
            for j in range(len(A[i])):
                s += A[i][j]
            out[i] = s
        return out
    """, lambda: (_jagged(300),)),
    ("rows scaled in place through `for row in A`", """
    def f(A, c):
        for row in A:
            for j in range(len(row)):
                row[j] = row[j] * c + 0.5
        return A
    """, lambda: (_jagged(50, 4, float), 0.25)),
    ("enumerate over the rows, the last item of each by a negative index", """
    def f(A):
        t = 0
        for i, row in enumerate(A):
            if row:
                t += (i + 1) * row[-1] - row[0]
        return t
    """, lambda: (_jagged(80, 5),)),
    ("Pascal's triangle filled in place", """
    def f(T):
        for i in range(2, len(T)):
            for j in range(1, len(T[i]) - 1):
                T[i][j] = T[i - 1][j - 1] + T[i - 1][j]
        return T
    """, lambda: ([[1] * (i + 1) for i in range(30)],)),
    ("a while loop scanning each row", """
    def f(A):
        c = 0
        for i in range(len(A)):
            j = 0
            while j < len(A[i]) and A[i][j] >= -40:
                c += A[i][j]
                j += 1
        return c
    """, lambda: (_jagged(200, 6),)),
    ("rows of bools and counts", """
    def f(B):
        counts = []
        for r in B:
            c = 0
            for x in r:
                if x:
                    c += 1
            counts.append(c)
        return counts
    """, lambda: ([[k % 3 == 0 for k in range(i % 5)] for i in range(40)],)),
    ("helpers given the list and a row index", """
    def rowsum(A, i):
        t = 0
        for x in A[i]:
            t += x
        return t

    def degree(A, i):
        return len(A[i])

    def f(A):
        out = [0] * len(A)
        for i in range(len(A)):
            out[i] = rowsum(A, i) * 10 + degree(A, i)
        return out
    """, lambda: (_jagged(100, 9),)),
    ("two ragged lists swapped between passes", """
    def f(A, B, n):
        t = 0
        for k in range(n):
            for i in range(len(A)):
                for j in range(len(A[i])):
                    t += A[i][j] * (k + 1)
            A, B = B, A
        return t
    """, lambda: (_jagged(30, 7), _jagged(40, 8), 5)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_ragged_lists_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs


def test_loops_over_ragged_rows_run_in_parallel():
    # j stays below len(A[i]) (prove_row_bounds), so the rows run on threads.
    recs = difftest.run("""
    def f(A, out):
        for i in range(len(A)):
            s = 0.0
            for j in range(len(A[i])):
                s += A[i][j] * A[i][j]
            out[i] = s
        return out
    """, "f", lambda: (_jagged(3000, 5, float), [0.0] * 3000))
    assert difftest.ran_parallel(recs, "i"), recs


def test_an_index_past_a_short_row_raises_index_error_after_the_earlier_writes():
    recs = difftest.run("""
    def f(A, k):
        for i in range(len(A)):
            A[i][k] = A[i][k] + 100
        return A
    """, "f", lambda: ([[1, 2, 3], [4, 5, 6, 7], [8], [9, 10]], 1), expect="bail")
    assert sum(r["bailouts"] for r in recs) > 0


def test_one_rows_length_does_not_bound_another_row():
    # The loop runs over len(A[0]) and reads A[1]: a shorter A[1] raises at its end.
    for rows in ([[1, 2, 3], [4, 5]], [[1, 2], [4, 5, 6]]):
        difftest.run("""
        def f(A):
            t = 0
            for j in range(len(A[0])):
                t += A[1][j]
            return t
        """, "f", lambda: ([list(r) for r in rows],), expect=None)


def test_negative_indices_wrap_within_each_row():
    difftest.run("""
    def f(A):
        t = 0
        for i in range(len(A)):
            for k in range(1, 4):
                t = t * 7 + A[i][-k] if len(A[i]) >= k else t
        return t
    """, "f", lambda: ([[1, 2, 3, 4], [5], [6, 7, 8], [9, 10]],))


def test_ints_past_64_bits_are_handed_to_cpython():
    difftest.run("""
    def f(A):
        t = 0
        for r in A:
            for x in r:
                t += x * x * x
        return t
    """, "f", lambda: ([[2 ** 20, 3], [2 ** 21], [2 ** 21, 5, 7]],), expect="bail")


def test_a_list_ragged_at_one_call_and_rectangular_at_another():
    src = """
    def f(A):
        t = 0
        for i in range(len(A)):
            for j in range(len(A[i])):
                t += (i + 1) * A[i][j]
        return t
    """
    difftest.run(src, "f", lambda: ([[1, 2], [3, 4, 5], []],))
    difftest.run(src, "f", lambda: ([[1, 2], [3, 4], [5, 6]],))


def test_one_ragged_list_in_two_variables():
    difftest.run("""
    def f(A, B):
        for i in range(len(A)):
            for j in range(len(A[i])):
                A[i][j] = B[i][j] + 1
        return A
    """, "f", lambda: (lambda L: (L, L))([[1, 2], [3, 4, 5], [6]]))


@pytest.mark.parametrize("case, src, args, reason", [
    ("compared whole", """
    def f(A, n):
        t = 0
        for i in range(n):
            t += len(A) + (A == A)
        return t
    """, lambda: ([[1], [2, 3]], 3), "compares"),
    ("searched with `in`", """
    def f(A, n):
        t = 0
        for i in range(n):
            if [i] in A:
                t += 1
        return t
    """, lambda: ([[1], [2, 3]], 3), ""),
    ("ragged two levels down", """
    def f(A, n):
        t = 0
        for i in range(n):
            t += len(A[i][0])
        return t
    """, lambda: ([[[1.0], [2.0]], [[3.0]]], 2), "ragged"),
    ("rows mixed with numbers", """
    def f(A, n):
        t = 0
        for i in range(n):
            t += len(A[i])
        return t
    """, lambda: ([[1.0, 2.0], 3.0], 1), "ragged"),
    ("a row held twice, stored into", """
    def f(A, n):
        for i in range(n):
            A[i][0] = A[i][0] + 1
        return A
    """, lambda: ((lambda r: [r, [5], r])([1, 2]), 3), "holds one list twice"),
])
def test_uses_kernels_cannot_hold_stay_interpreted(case, src, args, reason):
    recs = difftest.run(src, "f", args, expect="interpreted")
    if reason:
        difftest.assert_reason(recs, reason)
