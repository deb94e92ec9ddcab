"""Parallel loops of little work entered from a sequential loop, one thread against all:
microseconds per region. `inner`: `out[i] = out[i] * 0.5 + A[t, i]` over `work` iterations;
`nest`: `work / 16` iterations of a 16-iteration sum. A benchmark, not a test: figures go to
docs/benchmarks.md (stop 47, "Regions with little work").

    python benchmarks/small_regions.py
"""
import time

import numpy as np

import stagepy

stagepy.enable()


def inner(A, out, steps, m):
    for t in range(steps):
        for i in range(m):
            out[i] = out[i] * 0.5 + A[t, i]


def nest(A, out, steps, m, k):
    for t in range(steps):
        for i in range(m):
            acc = 0.0
            for j in range(k):
                acc += A[t, j] * out[i]
            out[i] = acc * 1e-3


res = []
for work in (512, 1024, 2048, 4096, 8192, 16384, 65536):
    row = [work]
    for kind in ("inner", "nest"):
        if kind == "inner":
            m = work; steps = max(4, 2_000_000 // work)
            A = np.random.default_rng(0).random((steps, m)); args = lambda: (A, np.ones(m), steps, m); f = inner
        else:
            k = 16; m = work // k; steps = max(4, 2_000_000 // work)
            A = np.random.default_rng(0).random((steps, max(k, 16))); args = lambda: (A, np.ones(m), steps, m, k); f = nest
        for th in (1, 2):
            stagepy.set_threads(th)
            f(*args()); stagepy.finish_compiles()
            b = 1e9
            for _ in range(5):
                a = args(); t0 = time.perf_counter(); f(*a); b = min(b, time.perf_counter() - t0)
            row.append(b / steps * 1e6)
    res.append(row)
print("work/region | inner 1t us | inner 2t us | nest 1t us | nest 2t us")
for r in res: print(" | ".join(f"{x:.2f}" if isinstance(x, float) else str(x) for x in r))
