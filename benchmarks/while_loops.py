"""While statements as nests: functions whose loops are `while` loops (a sieve, C-style
`i = 0; while i < n:` loops over a 2-d array, a `while t < steps:` time loop around a
stencil, a bisection) under CPython, stagepy on one thread and on all threads, and
`numba.njit` of the same source, in one process. Before stop 34 stagepy left every such
function to CPython (its prefilter only looked for `for` loops); the time loop's inner `for`
loops ran natively, one call per step — the `for t in range` form of the same stencil
(`heat_for`) shows what that costs.

    OPENBLAS_NUM_THREADS=1 python benchmarks/while_loops.py [--repeat N]
"""
import argparse

import numpy as np

from kernels import define  # the same way kernels.py defines its functions
from neighbours import best  # best of `repeat` calls, fresh arguments each

SOURCE = """
def sieve(flags, n):
    count = 0
    k = 2
    while k <= n:
        if flags[k]:
            count += 1
            j = k * k
            while j <= n:
                flags[j] = 0
                j += k
        k += 1
    return count

def c_style(A, B, C):
    n, m = A.shape
    i = 0
    while i < n:
        j = 0
        while j < m:
            C[i, j] = A[i, j] * B[i, j] + A[i, j] - B[i, j] * 0.5
            j += 1
        i += 1

def heat(u, v, steps):
    n, m = u.shape
    t = 0
    while t < steps:
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + 0.1 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = v[i, j]
        t += 1

def heat_for(u, v, steps):
    n, m = u.shape
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                v[i, j] = u[i, j] + 0.1 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                u[i, j] = v[i, j]

def bisect_all(xs, out, lo0, hi0):
    k = 0
    while k < len(xs):
        lo, hi = lo0, hi0
        while hi - lo > 1e-12:
            mid = 0.5 * (lo + hi)
            if mid * mid * mid - xs[k] > 0.0:
                hi = mid
            else:
                lo = mid
        out[k] = lo
        k += 1
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import numba
    import stagepy
    rng = np.random.default_rng(5)
    n_sieve = 2_000_000
    A, B = rng.random((1000, 1000)), rng.random((1000, 1000))
    u0 = rng.random((400, 400))
    xs = rng.random(20_000) * 100
    cases = {
        "sieve (n = 2e6, int8 flags)": ("sieve", lambda: (np.ones(n_sieve + 1, dtype=np.int8), n_sieve)),
        "C-style 2-d loop (1000x1000)": ("c_style", lambda: (A, B, np.zeros_like(A))),
        "`while t < steps` heat (400x400, 50 steps)": ("heat", lambda: (u0.copy(), u0.copy(), 50)),
        "`for t in range` heat (the same)": ("heat_for", lambda: (u0.copy(), u0.copy(), 50)),
        "bisection (20000 cube roots)": ("bisect_all", lambda: (xs, np.zeros_like(xs), 0.0, 5.0)),
    }
    plain = define(False, SOURCE)
    fast = define(True, SOURCE)
    print("| nest | CPython | stagepy, 1 thread | stagepy, all threads | numba |")
    print("|---|---|---|---|---|")
    for label, (name, make) in cases.items():
        t_py = best(plain[name], make, max(1, args.repeat // 3))
        row = []
        for threads in (1, 0):
            stagepy.set_threads(threads)
            with stagepy.enable():
                fast[name](*make())  # compile
                stagepy.finish_compiles()  # the full kernel, and nothing compiling beside the calls
                row.append(best(fast[name], make, args.repeat))
        stagepy.set_threads(0)
        jit = numba.njit(plain[name])
        jit(*make())
        t_nb = best(jit, make, args.repeat)
        print(f"| {label} | {t_py * 1e3:.1f} ms | {row[0] * 1e3:.2f} ms | {row[1] * 1e3:.2f} ms | {t_nb * 1e3:.2f} ms |")
    rows = [r for r in stagepy.report() if r["file"] == "<benchmark kernels>"]
    for r in sorted(rows, key=lambda r: r["line"]):
        loops = "; ".join(f"{l['variable']} (line {l['line']}) {'parallel' if l['parallel_runs'] else 'in order'}"
                          for l in r["loops"])
        print(f"  {r['function']}:{r['line']} {r['status']} {r['native_calls']}/{r['calls']} native  {loops}  {r['reason']}")


if __name__ == "__main__":
    main()
