"""Loops over one row of a container — `for v in adj[u]` over a list of lists, `for x in M[i]`
over a NumPy array — run natively: the loop indexes the row (`adj[u][k]`), which is the
inner list itself or a view of the array, as CPython's iterator over it reads it."""
import numpy as np
import pytest

import difftest


def _adj(n, deg=4):
    return [[(i * 7 + k * 13) % n for k in range(deg)] for i in range(n)]


NATIVE = [
    ("breadth-first search over an adjacency list", """
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
    """, lambda: (_adj(300), 0)),
    ("depth-first order with a stack", """
    def f(adj, src):
        seen = [False] * len(adj)
        st = [src]
        order = []
        while st:
            u = st.pop()
            if seen[u]:
                continue
            seen[u] = True
            order.append(u)
            for v in adj[u]:
                if not seen[v]:
                    st.append(v)
        return order
    """, lambda: (_adj(250, 3), 5)),
    ("the rows of a NumPy matrix, one at a time", """
    def f(M, out):
        for i in range(M.shape[0]):
            s = 0.0
            for x in M[i]:
                s += x * x
            out[i] = s
        return out
    """, lambda: (np.arange(35.0).reshape(7, 5) / 4, np.zeros(7))),
    ("enumerate and reversed over a row", """
    def f(M, r):
        best, at = -1, -1
        for j, x in enumerate(M[r]):
            if x > best:
                best, at = x, j
        t = 0
        for x in reversed(M[r + 1]):
            t = t * 3 + x
        return best, at, t
    """, lambda: ([[3, 9, 2, 9], [1, 2, 0, 1], [5, 5, 5, 5]], 0)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_loops_over_a_row_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs


def test_a_row_written_inside_its_loop_is_read_as_it_changes():
    # CPython's iterator over the row reads each item when it gets there: a store ahead of
    # the loop's position is seen, in the list and in the array's view alike.
    src = """
    def f(M, r):
        for x in M[r]:
            M[r][(int(x) + 1) % 4] = M[r][(int(x) + 1) % 4] + 1
        return M
    """
    difftest.run(src, "f", lambda: ([[0, 1, 2, 3], [1, 1, 1, 1]], 0))
    difftest.run(src, "f", lambda: (np.array([[0, 1, 2, 3], [1, 1, 1, 1]]), 0))


def test_the_index_reassigned_in_the_loop_keeps_it_in_cpython():
    recs = difftest.run("""
    def f(adj, u):
        n = 0
        for v in adj[u]:
            u = v
            n += 1
        return n, u
    """, "f", lambda: (_adj(20), 3), expect="interpreted")
    difftest.assert_reason(recs, "assigns `u` inside a loop over")


def test_a_row_index_out_of_range_raises_index_error():
    difftest.run("""
    def f(adj, u):
        n = 0
        try:
            for v in adj[u]:
                n += v
        except IndexError as e:
            return "IndexError", str(e), n
        return n
    """, "f", lambda: (_adj(10), 12), expect=None)
