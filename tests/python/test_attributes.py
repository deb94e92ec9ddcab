"""Attributes as loop data: `self.N`, `self.alpha`, `self.C[i][j]`, class constants, slots and
module constants are read once at each entry of the nest (no Python code runs for them) and
guarded like arguments; attributes found through Python code (properties, __getattr__) keep
the nest in CPython, with a reason."""
import random

import numpy as np

from difftest import run


def matrix(n, m, seed=0):
    r = random.Random(seed)
    return [[r.uniform(-1, 1) for _ in range(m)] for _ in range(n)]


POLYBENCH = """
class Kernels:
    def __init__(self, n, alpha, beta, C, A, B):
        self.NI = self.NJ = self.NK = n
        self.alpha = alpha
        self.beta = beta
        self.C, self.A, self.B = C, A, B

    def gemm(self):
        for i in range(self.NI):
            for j in range(self.NJ):
                self.C[i][j] *= self.beta
            for k in range(self.NK):
                for j in range(self.NJ):
                    self.C[i][j] += self.alpha * self.A[i][k] * self.B[k][j]

    def jacobi_2d(self, steps):
        n = self.NI
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    self.B[i][j] = 0.2 * (self.A[i][j] + self.A[i][j - 1] + self.A[i][1 + j] + self.A[1 + i][j] + self.A[i - 1][j])
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    self.A[i][j] = 0.2 * (self.B[i][j] + self.B[i][j - 1] + self.B[i][1 + j] + self.B[1 + i][j] + self.B[i - 1][j])

    def floyd_warshall(self, path):
        for k in range(self.NI):
            for i in range(self.NI):
                for j in range(self.NI):
                    path[i][j] = path[i][j] if path[i][j] < path[i][k] + path[k][j] else path[i][k] + path[k][j]


def f(n, alpha, beta, C, A, B, path):
    K = Kernels(n, alpha, beta, C, A, B)
    K.gemm()
    K.jacobi_2d(3)
    K.floyd_warshall(path)
    return K.C, K.A, K.B, path
"""


def test_polybench_methods_reading_self():
    def args():
        r = random.Random(5)
        path = [[r.randint(1, 20) for _ in range(9)] for _ in range(9)]
        return 9, 1.5, 1.2, matrix(9, 9, 1), matrix(9, 9, 2), matrix(9, 9, 3), path
    recs = run(POLYBENCH, "f", args)
    assert sum(1 for r in recs if r["native_calls"]) == 3, [(r["function"], r["reason"]) for r in recs]


def test_attributes_are_read_again_at_each_entry():
    run("""
    class Box:
        def __init__(self):
            self.n = 3
            self.scale = 2
        def fill(self, A):
            for i in range(self.n):
                A[i] = i * self.scale
    def f(A):
        b = Box()
        b.fill(A)
        b.n = 6
        b.scale = 2.5
        b.fill(A)
        b.scale = 7
        b.fill(A)
        return A
    """, "f", lambda: (np.zeros(8),))


def test_class_constants_slots_and_namespaces():
    run("""
    import types
    class Grid:
        __slots__ = ("n", "h")
        OFFSET = 10
        def __init__(self, n, h):
            self.n, self.h = n, h
        def run(self, A):
            for i in range(self.n):
                A[i] = self.OFFSET + i * self.h
    def f(A, n):
        Grid(n, 0.5).run(A)
        cfg = types.SimpleNamespace(n=n, w=3)
        s = 0
        for i in range(cfg.n):
            s += A[i] * cfg.w
        return A, s
    """, "f", lambda: (np.zeros(12), 12))


def test_attribute_list_aliased_with_an_argument():
    run("""
    class Holder:
        def __init__(self, L):
            self.L = L
        def shift(self, M, n):
            for i in range(1, n):
                self.L[i] = M[i - 1] + self.L[i]
    def f(L, n):
        Holder(L).shift(L, n)
        return L
    """, "f", lambda: (list(range(20)), 20))


def test_property_stays_interpreted():
    recs = run("""
    class P:
        def __init__(self):
            self.calls = 0
        @property
        def n(self):
            self.calls += 1
            return 5
        def run(self, A):
            for i in range(len(A)):
                A[i] = self.n + i
    def f(A):
        p = P()
        p.run(A)
        return A, p.calls
    """, "f", lambda: (np.zeros(6),), expect="interpreted")
    assert any("property" in r["reason"] for r in recs), recs


def test_getattr_hook_stays_interpreted():
    run("""
    class G:
        def __getattr__(self, name):
            return 4
        def run(self, A):
            for i in range(len(A)):
                A[i] = self.k * i
    def f(A):
        G().run(A)
        return A
    """, "f", lambda: (np.zeros(6),), expect="interpreted")


def test_missing_attribute_raises_like_cpython():
    recs = run("""
    class M:
        def run(self, A):
            for i in range(len(A)):
                A[i] = i
            for i in range(len(A)):
                A[i] = self.missing
    def f(A):
        M().run(A)
        return A
    """, "f", lambda: (np.zeros(6),), expect=None)
    assert any("not set" in r["reason"] for r in recs), recs


def test_a_method_of_self_is_inlined():
    recs = run("""
    class C:
        def g(self, x):
            return x + 1
        def run(self, A):
            for i in range(len(A)):
                A[i] = self.g(i)
    def f(A):
        C().run(A)
        return A
    """, "f", lambda: (np.zeros(6),))
    assert all(r["native_calls"] == r["calls"] for r in recs), recs


def test_a_named_tuples_fields_read_as_attribute_variables():
    import collections
    Config = collections.namedtuple("Config", "n dt scale")
    recs = run("""
    def f(cfg, out):
        t = 0.0
        for i in range(cfg.n):
            t += cfg.dt
            out[i] = t * cfg.scale
        return t, out
    """, "f", lambda: (Config(200, 0.01, 3), np.zeros(200)))
    assert all(r["bailouts"] == 0 for r in recs)
