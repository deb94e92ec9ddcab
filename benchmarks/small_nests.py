"""Nests with little work per entry, entered very often (the inner loop of a k-NN search):
per-call time under CPython and under stagepy, in one process. stagepy times its kernel
against CPython on alternate calls and keeps the faster (docs/architecture.md, "Small
nests"), so its column should be close to CPython's, not twice it.

    python benchmarks/small_nests.py [--calls N]
"""
import argparse
import time

import numpy as np

from kernels import define  # the same way kernels.py defines its functions


SOURCE = """
def knn_inner(X, x, i):
    d = 0.0
    for j in range(4):
        t = X[i, j] - x[j]
        d += t * t
    return d

def bump(a, i):
    for j in range(4):
        a[i] += 1.0

def row_sum(X, i):
    s = 0.0
    for j in range(X.shape[1]):
        s += X[i, j]
    return s
"""


def per_call(fn, args, calls):
    for _ in range(2000):  # warm: compile, probe, decide
        fn(*args)
    t = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - t) / calls


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200_000)
    args = ap.parse_args()
    import stagepy
    rng = np.random.default_rng(5)
    X, x, wide = rng.random((2000, 4)), rng.random(4), rng.random((10, 400))
    cases = {"knn_inner": (X, x, 5), "bump": (np.zeros(10), 1), "row_sum": (wide, 3)}
    plain = define(False, SOURCE)
    fast = define(True, SOURCE)
    print("| nest | CPython (us/call) | stagepy (us/call) | stagepy's choice |")
    print("|---|---|---|---|")
    for name, a in cases.items():
        t_py = per_call(plain[name], a, args.calls)
        with stagepy.enable():
            t_sp = per_call(fast[name], a, args.calls)
        rec = [r for r in stagepy.report() if r["function"] == name]
        choice = "CPython (probe)" if rec and "CPython runs it faster" in rec[0]["reason"] else "kernel"
        print(f"| {name} | {t_py * 1e6:.2f} | {t_sp * 1e6:.2f} | {choice} |")


if __name__ == "__main__":
    main()
