"""Rows read one per interleaved lane (plan_interleave.cpp): A·Bᵀ written out, a matrix-vector
product over short and long rows, and kernels.py's gemm i-j-k (side by side) for reference;
one thread, ms, best of 7. A benchmark, not a test: figures in docs/benchmarks.md (stop 48).

    python3 benchmarks/row_lanes.py
"""
import textwrap

import numpy as np

import stagepy
from kernels import best, define  # the same way kernels.py defines and times its functions

SOURCE = textwrap.dedent("""
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
""")


def ms(f, *args):
    with stagepy.enable():
        f(*args)  # compiles
        return best(lambda: f(*args), 7) * 1e3


def main():
    stagepy.set_threads(1)
    ns = define(True, SOURCE)
    gemm = define(True)["gemm"]
    rng = np.random.default_rng(0)
    out = []
    for n in (200, 400):
        A, B = rng.random((n, n)), rng.random((n, n))
        out.append("abt %d %.3f" % (n, ms(ns["abt"], A, B, np.zeros((n, n)))))
        out.append("gemm %d %.3f" % (n, ms(gemm, A, B, np.zeros((n, n)))))
    for n, m in ((2000, 300), (300, 20000)):
        A, x = rng.random((n, m)), rng.random(m)
        out.append("matvec %dx%d %.3f" % (n, m, ms(ns["matvec"], A, x, np.zeros(n))))
    print(" | ".join(out))


if __name__ == "__main__":
    main()
