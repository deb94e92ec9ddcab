"""Lists of floats that hold numpy.float64s too (`mean = [0.0] * d; mean[j] += X[i, j]`, a
Dijkstra `dist` list updated from a NumPy weight matrix) run natively: each element keeps
its own type in a tag beside its value, so that what comes back is what CPython leaves, an
np.float64 where the nest stored one and a float elsewhere, and every operation on an
element follows its own type's rules (a float divided by zero raises, an np.float64 gives
inf with NumPy's warning)."""
import numpy as np
import pytest

import difftest


def _rng(seed):
    return np.random.default_rng(seed)


NATIVE = [
    ("column means into a list of floats", """
    def f(X):
        n, d = X.shape
        mean = [0.0] * d
        for i in range(n):
            for j in range(d):
                mean[j] += X[i, j]
        for j in range(d):
            mean[j] /= n
        return mean
    """, lambda: (_rng(1).random((300, 7)),)),
    ("Dijkstra over a NumPy weight matrix", """
    def f(W):
        n = W.shape[0]
        dist = [float('inf')] * n
        seen = [False] * n
        dist[0] = 0.0
        for _ in range(n):
            u = -1
            for v in range(n):
                if not seen[v] and (u < 0 or dist[v] < dist[u]):
                    u = v
            seen[u] = True
            for v in range(n):
                if W[u, v] > 0 and dist[u] + W[u, v] < dist[v]:
                    dist[v] = dist[u] + W[u, v]
        return dist
    """, lambda: (np.where(_rng(2).random((40, 40)) < 0.3, _rng(3).random((40, 40)), 0.0),)),
    ("a list holding both at entry, read into sums of either type", """
    def f(L, out):
        t = 0.0
        for i in range(len(L)):
            out[i] = L[i] * 2.0
            t = t + L[i]
            L[i] = L[i] + 1.0
        return t, L
    """, lambda: ([0.5, np.float64(1.5), 2.5, np.float64(-3.0)] * 5, np.zeros(20))),
    ("some elements stored, the others left floats", """
    def f(L, A):
        for i in range(0, len(L), 3):
            L[i] = A[i] - 1.0
        return L
    """, lambda: ([float(k) for k in range(50)], np.arange(50.0))),
    ("rows of a list of lists", """
    def f(D, A):
        n = len(D)
        for i in range(n):
            row = D[i]
            for j in range(n):
                if (i + j) % 2:
                    row[j] = A[i, j] * 0.5
                else:
                    row[j] = row[j] + D[j][i]
        return D
    """, lambda: ([[float(i * 10 + j) for j in range(12)] for i in range(12)], _rng(4).random((12, 12)))),
    ("elements compared, min and max taken", """
    def f(L, A):
        for i in range(len(A)):
            L[i % len(L)] = max(L[i % len(L)], A[i])
        lo = L[0]
        for x in L:
            lo = min(lo, x)
        return L, lo
    """, lambda: ([0.25] * 9, _rng(5).random(60))),
    ("swapped rows of a dynamic program", """
    def f(A):
        n = len(A)
        prev = [0.0] * n
        cur = [0.0] * n
        for i in range(n):
            for j in range(n):
                cur[j] = A[i, j] + (prev[j - 1] if j > 0 else 0.0)
            prev, cur = cur, prev
        return prev, cur
    """, lambda: (_rng(6).random((15, 15)),)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_lists_of_floats_and_numpy_floats_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    assert any(r["native_calls"] == r["calls"] and r["calls"] > 0 for r in recs), recs


def test_each_element_divides_by_zero_as_its_own_type():
    # The floats raise ZeroDivisionError, the np.float64s give inf and NumPy's warning: the
    # list below meets an np.float64 first, then a float.
    recs = difftest.run("""
    def f(L, z):
        out = []
        for i in range(len(L)):
            L[i] = L[i] / z
        return L
    """, "f", lambda: ([np.float64(1.0), np.float64(-2.0), 3.0, 4.0], 0.0), expect="bail")
    assert recs


def test_an_index_error_leaves_the_earlier_stores_with_their_types():
    difftest.run("""
    def f(L, A, idx):
        try:
            for k in range(len(idx)):
                L[idx[k]] = A[k] * 3.0
        except IndexError as e:
            return "IndexError", str(e), L
        return L
    """, "f", lambda: ([1.0] * 8, np.arange(6.0), [0, 3, -1, 5, 9, 2]), expect="bail")


def test_an_int_stored_into_the_list_goes_to_cpython():
    difftest.run("""
    def f(L, A):
        for i in range(len(A)):
            if A[i] > 0.9:
                L[i] = 7
            else:
                L[i] = A[i]
        return L
    """, "f", lambda: ([0.0] * 40, _rng(7).random(40)), expect=None)


def test_a_list_of_floats_filled_in_parallel():
    recs = difftest.run("""
    def f(L, A):
        for i in range(len(L)):
            L[i] = A[i] * A[i] + L[i]
        return L
    """, "f", lambda: ([0.5] * 5000, _rng(8).random(5000)), warn_filter="default")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


def test_numpy_float32s_into_a_list_of_floats_stay_in_cpython():
    recs = difftest.run("""
    def f(L, A):
        for i in range(len(A)):
            L[i] = A[i]
        return L
    """, "f", lambda: ([0.0] * 10, np.arange(10, dtype=np.float32)), expect="interpreted")
    difftest.assert_reason(recs, "float32")


def test_a_module_level_loop_accumulating_means():
    difftest.run_module("""
    import numpy as np
    X = np.arange(60.0).reshape(12, 5) / 7
    mean = [0.0] * 5
    for i in range(12):
        for j in range(5):
            mean[j] += X[i, j]
    """, lambda: {})
