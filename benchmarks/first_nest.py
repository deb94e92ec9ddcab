"""A process's first nest: the time of a 10-element axpy's first call right after import,
which pays for stagepy's start-up (deciding the live library functions, the NumPy type
oracle, LLVM's set-up) besides its own compile (docs/benchmarks.md, "A process's first nest").

    python benchmarks/first_nest.py [module ...]   # e.g. numba: imported first

Run it several times in a row with one STAGEPY_CACHE_DIR: the first run fills the caches,
the later ones read them. Prints the first call's milliseconds.
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


z = np.zeros(10)
t0 = time.perf_counter()
axpy(z, z.copy(), 2.0)
print(f"{1e3 * (time.perf_counter() - t0):.0f}")
