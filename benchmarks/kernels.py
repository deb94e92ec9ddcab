"""CPython vs stagepy vs numba.njit vs NumPy on the same undecorated loop nests.

    python benchmarks/kernels.py [--scale 1.0] [--repeat 3] [--only gemm,...]

Each kernel is plain Python source, compiled once per configuration:
  cpython  - run as is;
  stagepy  - the same source defined with stagepy enabled (single-threaded native code);
  numba    - the same functions wrapped with numba.njit (if numba is installed);
  numpy    - an equivalent NumPy expression (for scale, where one exists).
Reported: best-of-repeat wall time of a warm call, the first call of stagepy (analysis +
JIT included), and speedups. A benchmark, not a test: figures go to docs/benchmarks.md.
"""
import argparse
import sys
import time
import textwrap

import numpy as np

SOURCE = textwrap.dedent("""
    def gemm(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            for j in range(m):
                acc = 0.0
                for k in range(p):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc

    def stencil(u, v, steps):
        n = u.shape[0]
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
            u, v = v, u
        return u

    def dot(a, b):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        return s

    def mandelbrot(out, maxit):
        h, w = out.shape
        for y in range(h):
            for x in range(w):
                cr = -2.0 + 3.0 * x / w
                ci = -1.5 + 3.0 * y / h
                zr = 0.0
                zi = 0.0
                k = 0
                while k < maxit and zr * zr + zi * zi <= 4.0:
                    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                    k += 1
                out[y, x] = k
""")


def define(enabled):
    import stagepy
    ns = {}
    code = compile(SOURCE, "<benchmark kernels>", "exec")
    if enabled:
        with stagepy.enable():
            exec(code, ns)
    else:
        exec(code, ns)
    return ns


def cases(scale):
    s = lambda n: max(4, int(n * scale))  # noqa: E731
    rng = np.random.default_rng(0)
    n_g = s(160)
    A, B = rng.random((n_g, n_g)), rng.random((n_g, n_g))
    n_s, steps = s(200), max(2, int(20 * scale))
    u0 = rng.random((n_s, n_s))
    n_d = s(1_000_000)
    a, b = rng.random(n_d), rng.random(n_d)
    h_m = s(160)
    return {
        "gemm": (lambda f: f(A, B, np.zeros((n_g, n_g))), lambda: A @ B, f"{n_g}x{n_g}"),
        "stencil": (lambda f: f(u0.copy(), u0.copy(), steps), None, f"{n_s}x{n_s} x {steps} steps"),
        "dot": (lambda f: f(a, b), lambda: a @ b, f"n={n_d}"),
        "mandelbrot": (lambda f: f(np.zeros((h_m, int(1.5 * h_m)), np.int64), 100), None, f"{h_m}x{int(1.5 * h_m)}, 100 it"),
    }


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    try:
        import numba
    except ImportError:
        numba = None
    plain = define(False)
    import stagepy
    fast = define(True)
    jitted = {k: numba.njit(v) for k, v in plain.items() if callable(v)} if numba else {}
    only = set(args.only.split(",")) if args.only else None
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, numba {numba.__version__ if numba else '-'}")
    print("| kernel | size | CPython (s) | stagepy first call (s) | stagepy (s) | numba (s) | NumPy (s) | stagepy vs CPython | stagepy vs numba |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (call, np_version, size) in cases(args.scale).items():
        if only and name not in only:
            continue
        t_py = best(lambda: call(plain[name]), 1)
        t0 = time.perf_counter()
        call(fast[name])
        t_first = time.perf_counter() - t0
        t_sp = best(lambda: call(fast[name]), args.repeat)
        t_nb = None
        if jitted:
            call(jitted[name])  # compile
            t_nb = best(lambda: call(jitted[name]), args.repeat)
        t_np = best(np_version, args.repeat) if np_version else None
        fmt = lambda t: f"{t:.4f}" if t is not None else "-"  # noqa: E731
        vs_nb = f"{t_nb / t_sp:.2f}x" if t_nb else "-"
        print(f"| {name} | {size} | {t_py:.3f} | {t_first:.4f} | {fmt(t_sp)} | {fmt(t_nb)} | {fmt(t_np)} | "
              f"{t_py / t_sp:.0f}x | {vs_nb} |")
    recs = [r for r in stagepy.report() if r["file"] == "<benchmark kernels>"]
    bad = [r for r in recs if r["status"] == "interpreted"]
    if bad:
        print("nests left to the interpreter:", [(r["function"], r["line"], r["reason"]) for r in bad])


if __name__ == "__main__":
    main()
