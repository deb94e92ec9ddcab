"""A process's first nest: the time of a 10-element axpy's first call right after import,
which pays for stagepy's start-up (deciding the live library functions, the NumPy type
oracle, LLVM's set-up) besides its own compile (docs/benchmarks.md, "A process's first nest").

    python benchmarks/first_nest.py [module ...]   # e.g. numba: imported first

Run it several times in a row with one STAGEPY_CACHE_DIR: the first run fills the caches,
the later ones read them. Prints the first call's milliseconds, then those of 5000 calls of
a one-line function after it: the hook's sweep of the live functions (which it makes once
2000 frames in a row brought no new code, then steps aside) falls in one or the other.
"""
import sys
import time

import numpy as np

for name in sys.argv[1:]:
    __import__(name)

import stagepy  # noqa: E402

stagepy.enable()


def axpy(x, y, a):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def one():
    return 1


z = np.zeros(10)
t0 = time.perf_counter()
axpy(z, z.copy(), 2.0)
t1 = time.perf_counter()
for _ in range(5000):
    one()
t2 = time.perf_counter()
print(f"{1e3 * (t1 - t0):.0f} {1e3 * (t2 - t1):.0f} sweeps={stagepy.hook_stats()['sweeps']}")
