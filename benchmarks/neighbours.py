"""Neighbourhood loops: `for di in (-1, 0, 1): for dj in (-1, 0, 1)` over a tuple constant
(Conway's life on lists of lists), a stencil with periodic boundaries (`u[(i + 1) % n, j]`),
and a short loop with independent iterations inside a
loop that carries a dependence (`recurrence`: 3 x 3 iterations per step), where waking the
threads at every step would cost far more than the work. CPython against stagepy on one
thread and on all threads, in one process.

    OPENBLAS_NUM_THREADS=1 python benchmarks/neighbours.py [--repeat N]
"""
import argparse
import time

import numpy as np

from kernels import define  # the same way kernels.py defines its functions

SOURCE = """
def life(g, out, N, gens):
    for gen in range(gens):
        for i in range(N):
            for j in range(N):
                cnt = 0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        if di == 0 and dj == 0:
                            continue
                        cnt += g[(i + di) % N][(j + dj) % N]
                out[i][j] = 1 if cnt == 3 or (cnt == 2 and g[i][j] == 1) else 0
        g, out = out, g
    return g

def recurrence(A, w, n):
    for t in range(1, n):
        for k in range(3):
            for m in range(3):
                A[t, k] += A[t - 1, (k + m) % 3] * w[m]

def periodic(u, v, steps):
    n, m = u.shape
    for t in range(steps):
        for i in range(n):
            for j in range(m):
                v[i, j] = u[i, j] + 0.1 * (u[(i + 1) % n, j] + u[(i - 1) % n, j]
                                           + u[i, (j + 1) % m] + u[i, (j - 1) % m] - 4.0 * u[i, j])
        u, v = v, u
    return u
"""


def best(fn, make, repeat):
    times = []
    for _ in range(repeat):
        args = make()
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import stagepy
    rng = np.random.default_rng(3)
    N = 100
    grid = [[int(v) for v in row] for row in rng.integers(0, 2, (N, N))]
    cases = {
        "life (100x100 lists, 20 generations)": ("life", lambda: ([r[:] for r in grid], [[0] * N for _ in range(N)], N, 20)),
        "periodic stencil (300x300, 10 steps)": ("periodic", lambda: (rng.random((300, 300)), np.zeros((300, 300)), 10)),
        "recurrence (200000 steps)": ("recurrence", lambda: (np.ones((200_000, 3)), np.array([0.2, 0.3, 0.4]), 200_000)),
    }
    plain = define(False, SOURCE)
    fast = define(True, SOURCE)
    print("| nest | CPython | stagepy, 1 thread | stagepy, all threads |")
    print("|---|---|---|---|")
    for label, (name, make) in cases.items():
        t_py = best(plain[name], make, args.repeat)
        row = []
        for threads in (1, 0):
            stagepy.set_threads(threads)
            with stagepy.enable():
                fast[name](*make())  # compile
                stagepy.finish_compiles()  # the full kernel, and nothing compiling beside the calls
                row.append(best(fast[name], make, args.repeat))
        stagepy.set_threads(0)
        print(f"| {label} | {t_py * 1e3:.1f} ms | {row[0] * 1e3:.2f} ms | {row[1] * 1e3:.2f} ms |")


if __name__ == "__main__":
    main()
