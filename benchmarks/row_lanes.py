"""Rows read one per interleaved lane (plan_interleave.cpp): A·Bᵀ written out, a matrix-vector
product over short and long rows, and gemm i-j-k (side by side) for reference; one thread,
ms, best of 7. A benchmark, not a test: figures in docs/benchmarks.md (stop 48).

    python3 benchmarks/row_lanes.py
"""
import time, sys, numpy as np, stagepy
stagepy.set_threads(1)
src = '''
def abt(A, B, C):
    n, m, p = A.shape[0], B.shape[0], A.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for k in range(p):
                s += A[i, k] * B[j, k]
            C[i, j] = s

def matvec(A, x, y):
    for j in range(A.shape[0]):
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[j, k] * x[k]
        y[j] = acc

def gemm(A, B, C):
    n, m, p = A.shape[0], B.shape[1], A.shape[1]
    for i in range(n):
        for j in range(m):
            acc = 0.0
            for k in range(p):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
'''
ns = {}
with stagepy.enable():
    exec(compile(src, "<abt>", "exec"), ns)
rng = np.random.default_rng(0)
def best(f, *a):
    f(*a); t = []
    for _ in range(7):
        t0 = time.perf_counter(); f(*a); t.append(time.perf_counter() - t0)
    return min(t) * 1e3
out = []
for n in (200, 400):
    A, B = rng.random((n, n)), rng.random((n, n))
    with stagepy.enable():
        out.append("abt %d %.3f" % (n, best(ns["abt"], A, B, np.zeros((n, n)))))
        out.append("gemm %d %.3f" % (n, best(ns["gemm"], A, B, np.zeros((n, n)))))
for n, m in ((2000, 300), (300, 20000)):
    A = rng.random((n, m)); x = rng.random(m)
    with stagepy.enable():
        out.append("matvec %dx%d %.3f" % (n, m, best(ns["matvec"], A, x, np.zeros(n))))
print(" | ".join(out))
