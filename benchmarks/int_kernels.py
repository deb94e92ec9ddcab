"""NumPy integer loops under the default warnings: one thread, best of 15, ms per call.

    python benchmarks/int_kernels.py int64,int32,int16,uint8,uint32

For each dtype, 1M elements: `y[i] = y[i] + x[i] * x[i]` (addmul), `y[i] = y[i] + x[i]`
(add), `z[i] = x[i] - y[i] + 3 * x[i]` (sub3: after the others, y is large and the unsigned
subtractions wrap in every chunk) and an integer sum `s += x[i] * y[i]` (dot). A benchmark,
not a test: figures go to docs/benchmarks.md (stop 47).
"""
import sys
import time

import numpy as np

import stagepy

stagepy.enable()
stagepy.set_threads(1)


def addmul(y, x, n):
    for i in range(n):
        y[i] = y[i] + x[i] * x[i]


def add(y, x, n):
    for i in range(n):
        y[i] = y[i] + x[i]


def sub3(z, y, x, n):
    for i in range(n):
        z[i] = x[i] - y[i] + 3 * x[i]


def dot(x, y, n):
    s = 0
    for i in range(n):
        s += x[i] * y[i]
    return s


def main():
    n = 1_000_000
    out = []
    for dt in (sys.argv[1] if len(sys.argv) > 1 else "int64,int32,int16,uint8").split(","):
        dt = np.dtype(dt)
        x = (np.arange(n) % 7).astype(dt)
        y = np.zeros(n, dt)
        z = np.zeros(n, dt)
        for name, f, args in (("addmul", addmul, (y, x, n)), ("add", add, (y, x, n)),
                              ("sub3", sub3, (z, y, x, n)), ("dot", dot, (x, y, n))):
            f(*args)
            stagepy.finish_compiles()
            best = 1e9
            for _ in range(15):
                t = time.perf_counter()
                f(*args)
                best = min(best, time.perf_counter() - t)
            out.append(f"{dt}:{name} {best * 1e3:.3f}")
    print("  ".join(out))


if __name__ == "__main__":
    main()
