"""One thread against every core, in one process, for loops that may stop for CPython.

    python benchmarks/undo_logs.py [--repeat 15]

Covers loops whose body writes elements and may stop for CPython. Those that compute enough
per element run on threads with their stores logged (docs/architecture.md, "Undo logs"); the
memory-bound ones stay sequential.

Also times the stencil under NumPy's default errstate against np.errstate(all="ignore").
Under the default, speculative chunks classify NumPy's warnings (architecture.md,
"Speculative chunks").

Each configuration is called in turn, `repeat` rounds of 3 calls, and the best call is
reported (the VM this runs on changes speed by about 1.5x from minute to minute). A
benchmark, not a test: figures go to docs/benchmarks.md.
"""
import argparse
import os
import textwrap
import time

import numpy as np

import stagepy

import kernels

# mandelbrot_complex, cmul and stencil come from kernels.py (the same sources it measures).
SOURCE = textwrap.dedent("""
    def sqrt_exp(A, out):
        for i in range(A.shape[0]):
            out[i] = math.sqrt(A[i]) + math.exp(-A[i])

    def sqrt1(A, out):
        for i in range(A.shape[0]):
            out[i] = math.sqrt(A[i])

    def log2d(A, out):
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                out[i, j] = math.log(A[i, j])

    def toint(A, out):
        for i in range(A.shape[0]):
            out[i] = int(A[i])
""")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    stagepy.enable()  # for every call (define() enables it for the definitions only)
    ns = kernels.define(True, kernels.SOURCE + SOURCE)
    rng = np.random.default_rng(0)
    n = 2_000_000
    a = rng.random(n) + 0.1
    a2 = rng.random((1000, 1000)) + 0.1
    ca = rng.random(1_000_000) + 1j * rng.random(1_000_000)
    u0 = rng.random((200, 200))
    u1 = rng.random((600, 600))
    quiet = lambda: np.errstate(all="ignore")  # noqa: E731
    default = np.errstate
    # (label, function, arguments, errstate)
    cases = [
        ("out[i] = math.sqrt(A[i]) + math.exp(-A[i])", "sqrt_exp", lambda: (a, np.empty(n)), default),
        ("out[i] = math.sqrt(A[i])", "sqrt1", lambda: (a, np.empty(n)), default),
        ("out[i, j] = math.log(A[i, j]), 1000x1000", "log2d", lambda: (a2, np.empty((1000, 1000))), default),
        ("mandelbrot_complex 160x240, 100 it", "mandelbrot_complex", lambda: (np.zeros((160, 240), np.int64), 100),
         default),
        ("C[j] = A[j] * B[j] + A[j], complex, n=1000000", "cmul", lambda: (ca, ca, np.empty_like(ca)), default),
        ("out[i] = int(A[i])", "toint", lambda: (a, np.empty(n, np.int64)), default),
        ("stencil 200x200 x 20, default errstate", "stencil", lambda: (u0.copy(), u0.copy(), 20), default),
        ("stencil 200x200 x 20, errstate ignore", "stencil", lambda: (u0.copy(), u0.copy(), 20), quiet),
        ("stencil 600x600 x 60, default errstate", "stencil", lambda: (u1.copy(), u1.copy(), 60), default),
        ("stencil 600x600 x 60, errstate ignore", "stencil", lambda: (u1.copy(), u1.copy(), 60), quiet),
    ]
    configs = [1, 0]  # one thread; every core (0: the default)
    for t in configs:
        stagepy.set_threads(t)
        for _, fn, make, env in cases:
            with env():
                ns[fn](*make())
                stagepy.finish_compiles()
    best = {}
    for _ in range(args.repeat):
        for t in configs:
            stagepy.set_threads(t)
            for label, fn, make, env in cases:
                with env():
                    for _ in range(3):
                        xs = make()
                        t0 = time.perf_counter()
                        ns[fn](*xs)
                        d = time.perf_counter() - t0
                        best[(label, t)] = min(best.get((label, t), d), d)
    stagepy.set_threads(0)
    loops = {r["function"]: r["loops"] for r in stagepy.report() if r["loops"]}
    print(f"{os.cpu_count()} CPUs; best of {args.repeat} x 3 calls")
    print("| loop | 1 thread (ms) | every core (ms) | speedup | loops on threads |")
    print("|---|---|---|---|---|")
    for label, fn, _, _ in cases:
        one, every = best[(label, 1)], best[(label, 0)]
        ls = loops.get(fn, [])
        par = [f"`{lp['variable']}`" for lp in ls if lp["parallel"]]
        on = ", ".join(par) if par else "none: " + (ls[0]["why"] if ls else "")
        print(f"| `{label}` | {one * 1e3:.2f} | {every * 1e3:.2f} | {one / every:.2f}x | {on} |")


if __name__ == "__main__":
    main()
