"""Back-to-back parallel regions (200 regions of 65536 iterations per call, above the
16-thread minimum): ms per call and stagepy.thread_info(). Run it on an idle machine, then
with every core busy (e.g. `for k in $(seq $(nproc)); do timeout 40 python3 -c "while True:
pass" & done`), with STAGEPY_THREADS=1 and STAGEPY_LATE_THREADS_MS=0 (no back-off) for
reference. A benchmark, not a test: figures in docs/benchmarks.md (stop 48).

    STAGEPY_TARGET=cpu python3 benchmarks/late_threads.py
"""
import time

import numpy as np

import stagepy

stagepy.enable()


def inner(A, out, steps, m):
    for t in range(steps):
        for i in range(m):
            out[i] = out[i] * 0.5 + A[t, i]


m, steps = 65536, 200
A = np.random.default_rng(0).random((steps, m))
inner(A, np.ones(m), steps, m)
t0 = time.perf_counter()
for _ in range(5):
    inner(A, np.ones(m), steps, m)
print("%.1f ms per call" % ((time.perf_counter() - t0) / 5 * 1e3), stagepy.thread_info())
