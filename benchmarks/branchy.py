"""Innermost loops with ifs under NumPy's default warnings, stagepy on one and two threads:
`if d > err: err = d` (a max kept by a branch) and a conditional sum. Best of 20 warm calls.

    python benchmarks/branchy.py
"""
import numpy as np, stagepy, time
stagepy.enable()
def maxerr_if(a, b):
    err = 0.0
    for i in range(a.shape[0]):
        d = abs(a[i] - b[i])
        if d > err:
            err = d
    return err
def possum(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        if a[i] > 0.5:
            s += a[i] * b[i]
    return s
rng = np.random.default_rng(0)
x = rng.random(1000000); y = rng.random(1000000)
def best(f, *a):
    f(*a); stagepy.finish_compiles(); f(*a); ts = []
    for _ in range(20):
        t = time.perf_counter(); f(*a); ts.append(time.perf_counter() - t)
    return min(ts)
for th in (1, 2):
    stagepy.set_threads(th)
    print(th, "maxerr_if %.3g  possum %.3g" % (best(maxerr_if, x, y), best(possum, x, y)))
