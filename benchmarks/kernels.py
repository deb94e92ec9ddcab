"""CPython vs stagepy vs numba vs NumPy on the same undecorated loop nests.

    python benchmarks/kernels.py [--scale 1.0] [--repeat 3] [--only gemm,...]

Each kernel is plain Python source, compiled once per configuration:
  CPython      - run as is;
  stagepy 1t   - the same source defined with stagepy enabled, stagepy.set_threads(1);
  stagepy      - the same, on every core (parallel loops where the analysis proves them);
  numba        - the same functions wrapped with numba.njit (if numba is installed);
  numba prange - a hand-written variant with prange on the loops stagepy runs in parallel,
                 numba.njit(parallel=True);
  NumPy        - an equivalent NumPy expression (for scale, where one exists).
Reported: best-of-repeat wall time of a warm call; stagepy's first call (analysis + JIT
included) and its phases from the report; speedups; the warm dispatch overhead of a nest.
A benchmark, not a test: figures go to docs/benchmarks.md.
"""
import argparse
import os
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

    def maxerr(a, b):
        err = 0.0
        for i in range(a.shape[0]):
            err = max(err, abs(a[i] - b[i]))
        return err

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

    def mandelbrot_complex(out, maxit):
        h, w = out.shape
        for y in range(h):
            for x in range(w):
                c = complex(-2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h)
                z = 0j
                k = 0
                while k < maxit and abs(z) <= 2.0:
                    z = z * z + c
                    k += 1
                out[y, x] = k

    def cmul(A, B, C):
        for j in range(A.shape[0]):
            C[j] = A[j] * B[j] + A[j]

    def cdot(A, B):
        s = 0j
        for j in range(A.shape[0]):
            s += A[j] * B[j]
        return s

    def cdot64(A, B):
        s = 0j
        for j in range(A.shape[0]):
            s += A[j] * B[j]
        return s

    def dot32(a, b):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        return s

    def iaxpy(y, x, a):
        for k in range(x.shape[0]):
            y[k] = y[k] + a * x[k]

    def mathfn(x, out):
        for k in range(x.shape[0]):
            out[k] = math.sqrt(x[k]) * math.exp(-x[k]) + math.log(x[k] + 1.0)

    def rownorms(A, out):
        for i, row in enumerate(A):
            s = 0.0
            for v in row:
                s += v * v
            out[i] = s

    def matsum(A):
        s = 0.0
        for r in range(A.shape[0]):
            for c in range(A.shape[1]):
                s += A[r, c]
        return s

    def colscale(A, B):
        for c in range(A.shape[1]):
            for r in range(A.shape[0]):
                B[r, c] = A[r, c] * 2.0 + 1.0

    def matvec_sum(A, x, out):
        for i in range(A.shape[0]):
            out[i] = sum(A[i, k] * x[k] for k in range(A.shape[1]))

    def gemm_ijk(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            for j in range(m):
                for k in range(p):
                    C[i, j] += A[i, k] * B[k, j]

    def argmax(a):
        best = a[0]
        k = 0
        for i in range(len(a)):
            if a[i] > best:
                best = a[i]
                k = i
        return k

    def count(a, t):
        c = 0
        for i in range(a.size):
            if a[i] > t:
                c += 1
        return c

    def gemm_rows(A, B, C, alpha, beta):
        for i in range(C.shape[0]):
            C[i, :] *= beta
            for k in range(A.shape[1]):
                C[i, :] += alpha * A[i, k] * B[k, :]

    def heat1d(u, c, steps):
        for t in range(steps):
            u[1:-1] = u[1:-1] + c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        return u

    def lu_rows(A):
        n = A.shape[0]
        for k in range(n):
            for j in range(k + 1, n):
                A[j, k] /= A[k, k]
                A[j, k + 1:] -= A[j, k] * A[k, k + 1:]

    def lu_dot(A):
        n = A.shape[0]
        for i in range(0, n):  # (no prange variant: row i reads the rows above it)
            for j in range(i):
                A[i, j] -= A[i, :j] @ A[:j, j]
                A[i, j] /= A[j, j]
            for j in range(i, n):
                A[i, j] -= A[i, :i] @ A[:i, j]

    def pairwise(X, out):
        n = X.shape[0]
        for i in range(n):
            for j in range(n):
                d = X[i] - X[j]
                out[i, j] = np.sqrt(np.sum(d * d))

    def fill(A, C):
        n, m = A.shape
        for i in range(n):  # PolyBench's init_array (syrk, 3mm, covariance)
            for j in range(m):
                A[i, j] = ((i * j + 1) % n) / n
                C[i, j] = (i * j) / m + i

    def nbody(pos, mass, acc, soft):
        n = pos.shape[0]
        for i in range(n):
            ax = ay = az = 0.0
            for j in range(n):
                if i != j:
                    dx = pos[j, 0] - pos[i, 0]
                    dy = pos[j, 1] - pos[i, 1]
                    dz = pos[j, 2] - pos[i, 2]
                    r2 = dx * dx + dy * dy + dz * dz + soft * soft
                    inv3 = mass[j] / (r2 * math.sqrt(r2))
                    ax += dx * inv3
                    ay += dy * inv3
                    az += dz * inv3
            acc[i, 0] = ax
            acc[i, 1] = ay
            acc[i, 2] = az

    def hist(idx, h):
        for i in range(idx.shape[0]):  # (numba's prange would race on h: its column is this loop)
            h[idx[i]] += 1
        return h

    def hist_weighted(idx, w, h):
        for i in range(idx.shape[0]):
            h[idx[i]] += w[i]
        return h

    def colsum(x, out):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[j] += x[i, j]
        return out

    def blur3(u, v):
        n, m = u.shape
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                s = 0.0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        s += u[i + di, j + dj]
                v[i, j] = s / 9.0

    def spmv(row, col, val, x, y):
        n = y.shape[0]
        for i in range(n):
            s = 0.0
            for k in range(row[i], row[i + 1]):
                s += val[k] * x[col[k]]
            y[i] = s
        return y
""")


def blur3_numpy(u):
    n, m = u.shape
    return sum(u[1 + di:n - 1 + di, 1 + dj:m - 1 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1)) / 9.0


def nbody_numpy(pos, mass, soft):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d * d).sum(axis=2) + soft * soft
    inv3 = mass[None, :] / (r2 * np.sqrt(r2))
    np.fill_diagonal(inv3, 0.0)
    return (d * inv3[:, :, None]).sum(axis=1)

def fill_numpy(n):
    i, j = np.ogrid[:n, :n]
    return ((i * j + 1) % n) / n, (i * j) / n + i


# The hand-written numba.prange variants: prange where stagepy runs a loop in parallel.
PRANGE = (SOURCE.replace("for i in range(n):", "for i in prange(n):")
          .replace("for i in range(1, n - 1):", "for i in prange(1, n - 1):")
          .replace("for i in range(a.shape[0]):", "for i in prange(a.shape[0]):")
          .replace("for y in range(h):", "for y in prange(h):")
          .replace("for j in range(A.shape[0]):", "for j in prange(A.shape[0]):")
          .replace("for k in range(x.shape[0]):", "for k in prange(x.shape[0]):")
          .replace("for r in range(A.shape[0]):", "for r in prange(A.shape[0]):")
          .replace("for i in range(a.size):", "for i in prange(a.size):")
          .replace("for c in range(A.shape[1]):", "for c in prange(A.shape[1]):")
          # (numba has no argmax reduction for prange: its argmax stays a plain loop)
          .replace("for i, row in enumerate(A):\n", "for i in prange(A.shape[0]):\n        row = A[i]\n"))

# Dispatch overhead: the same function with an empty nest, with and without stagepy.
TINY = textwrap.dedent("""
    def tiny(a, n):
        for i in range(n):
            a[i] += 1.0
        return a
""")


def define(enabled, source=SOURCE, extra=None):
    import math
    import stagepy
    ns = {"math": math, "np": np, **(extra or {})}
    code = compile(source, "<benchmark kernels>", "exec")
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
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ix32 = rng.integers(-1000, 1000, n_d, dtype=np.int32)
    idx = rng.integers(0, 64, n_d)
    h_m = s(160)
    n_c = s(1_000_000)
    ca = rng.random(n_c) + 1j * rng.random(n_c)
    cb = rng.random(n_c) - 1j * rng.random(n_c)
    ca64, cb64 = ca.astype(np.complex64), cb.astype(np.complex64)
    n_r = s(2000)
    R = rng.random((n_r, n_r))
    n_b = s(1000)
    pos, mass = rng.standard_normal((n_b, 3)), rng.random(n_b) / n_b
    M = rng.random((s(250_000), 4))
    h0, h_steps = rng.random(s(1000)), max(2, int(2000 * scale))
    L0 = rng.random((s(200), s(200))) + s(200) * np.eye(s(200))
    n_p = s(300)
    n_f = s(1500)
    P = rng.random((n_p, 3))
    n_b3 = s(1000)
    B3 = rng.random((n_b3, n_b3))
    n_sp, per_sp = s(200_000), 16  # CSR: per_sp entries a row, random columns
    sp_row = np.arange(0, n_sp * per_sp + 1, per_sp)
    sp_col = rng.integers(0, n_sp, n_sp * per_sp)
    sp_val, sp_x = rng.random(n_sp * per_sp), rng.random(n_sp)
    return {
        "gemm": (lambda f: f(A, B, np.zeros((n_g, n_g))), lambda: A @ B, f"{n_g}x{n_g}"),
        "stencil": (lambda f: f(u0.copy(), u0.copy(), steps), None, f"{n_s}x{n_s} x {steps} steps"),
        "dot": (lambda f: f(a, b), lambda: a @ b, f"n={n_d}"),
        "maxerr": (lambda f: f(a, b), lambda: np.max(np.abs(a - b)), f"n={n_d}"),
        "mandelbrot": (lambda f: f(np.zeros((h_m, int(1.5 * h_m)), np.int64), 100), None, f"{h_m}x{int(1.5 * h_m)}, 100 it"),
        "mandelbrot_complex": (lambda f: f(np.zeros((h_m, int(1.5 * h_m)), np.int64), 100), None,
                               f"{h_m}x{int(1.5 * h_m)}, 100 it"),
        "cmul": (lambda f: f(ca, cb, np.zeros(n_c, np.complex128)), lambda: ca * cb + ca, f"n={n_c} complex128"),
        "cdot": (lambda f: f(ca, cb), lambda: ca @ cb, f"n={n_c} complex128, s += A[j] * B[j]"),
        "cdot64": (lambda f: f(ca64, cb64), lambda: ca64 @ cb64, f"n={n_c} complex64, s += A[j] * B[j]"),
        "dot32": (lambda f: f(a32, b32), lambda: a32 @ b32, f"n={n_d} float32, s = 0.0; s += a[i] * b[i]"),
        "iaxpy": (lambda f: f(np.zeros(n_d, np.int32), ix32, 3), lambda: np.zeros(n_d, np.int32) + 3 * ix32,
                  f"n={n_d} int32, y[k] = y[k] + a * x[k], a = 3"),
        "mathfn": (lambda f: f(a, np.zeros(n_d)), lambda: np.sqrt(a) * np.exp(-a) + np.log(a + 1.0),
                   f"n={n_d}, math.sqrt/exp/log per element"),
        "rownorms": (lambda f: f(R, np.zeros(n_r)), lambda: np.einsum("ij,ij->i", R, R), f"{n_r}x{n_r}, for row in A"),
        "matsum": (lambda f: f(M), lambda: M.sum(), f"{M.shape[0]}x{M.shape[1]}, s = 0.0 then np.float64"),
        "colscale": (lambda f: f(R, np.empty_like(R)), lambda: R * 2.0 + 1.0, f"{n_r}x{n_r}, column by column"),
        "gemm_ijk": (lambda f: f(A, B, np.zeros((n_g, n_g))), lambda: A @ B, f"{n_g}x{n_g}, C[i, j] += ..."),
        "matvec_sum": (lambda f: f(R, R[0], np.zeros(n_r)), lambda: R @ R[0], f"{n_r}x{n_r}, sum() of a generator"),
        "argmax": (lambda f: f(a), lambda: a.argmax(), f"n={n_d}, first index of the max"),
        "count": (lambda f: f(a, 0.5), lambda: np.count_nonzero(a > 0.5), f"n={n_d}, Python int count"),
        "gemm_rows": (lambda f: f(A, B, np.zeros((n_g, n_g)), 1.5, 1.2), lambda: 1.5 * (A @ B),
                      f"{n_g}x{n_g}, C[i, :] += a * A[i, k] * B[k, :]"),
        "heat1d": (lambda f: f(h0.copy(), 0.25, h_steps), None, f"n={h0.size} x {h_steps} steps, u[1:-1] = ..."),
        "lu_rows": (lambda f: f(L0.copy()), None, f"{L0.shape[0]}x{L0.shape[0]}, A[j, k+1:] -= A[j, k] * A[k, k+1:]"),
        "lu_dot": (lambda f: f(L0.copy()), None, f"{L0.shape[0]}x{L0.shape[0]}, A[i, j] -= A[i, :j] @ A[:j, j] (NPBench)"),
        "nbody": (lambda f: f(pos, mass, np.zeros((n_b, 3)), 0.1), lambda: nbody_numpy(pos, mass, 0.1),
                  f"{n_b} bodies, one step"),
        "fill": (lambda f: f(np.empty((n_f, n_f)), np.empty((n_f, n_f))), lambda: fill_numpy(n_f),
                 f"{n_f}x{n_f}, ((i * j + 1) % n) / n"),
        "hist": (lambda f: f(idx, np.zeros(64, np.int64)), lambda: np.bincount(idx, minlength=64),
                 f"n={n_d} into 64 bins, h[idx[i]] += 1"),
        "hist_weighted": (lambda f: f(idx, a, np.zeros(64)), lambda: np.bincount(idx, weights=a, minlength=64),
                          f"n={n_d} into 64 bins, h[idx[i]] += w[i]"),
        "colsum": (lambda f: f(R, np.zeros(n_r)), lambda: R.sum(axis=0), f"{n_r}x{n_r}, out[j] += x[i, j]"),
        "blur3": (lambda f: f(B3, np.zeros_like(B3)), lambda: blur3_numpy(B3), f"{n_b3}x{n_b3}, for di in (-1, 0, 1)"),
        "pairwise": (lambda f: f(P, np.zeros((n_p, n_p))), lambda: np.sqrt(((P[:, None, :] - P[None, :, :]) ** 2).sum(axis=2)),
                     f"{n_p}x3 points, d = X[i] - X[j] kept"),
        "spmv": (lambda f: f(sp_row, sp_col, sp_val, sp_x, np.zeros(n_sp)),
                 lambda: np.add.reduceat(sp_val * sp_x[sp_col], sp_row[:-1]),
                 f"CSR {n_sp} rows x {per_sp} entries, y[i] = sum of val[k] * x[col[k]]"),
    }


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def jitted_namespace(source, filename, enabled, jit=None):
    """The functions `source` defines: compiled under stagepy (`enabled`) or plain; with `jit`
    (numba.njit), each plain function jitted in place, so that kernels call jitted helpers."""
    import stagepy
    ns = {}
    code = compile(source, filename, "exec")
    if enabled:
        with stagepy.enable():
            exec(code, ns)
    else:
        exec(code, ns)
    if jit:
        for k, v in list(ns.items()):
            if callable(v) and getattr(v, "__module__", None) is None and k not in ("math", "np"):
                ns[k] = jit(v)
    return ns


def three_way_session(source, filename, add_flags=None):
    """A benchmark comparing CPython, stagepy and numba on the functions `source` defines:
    parses --repeat, --scale, --only (and what `add_flags(parser)` adds), prints the versions
    line, and returns (args, plain, fast, jitted) namespaces (jitted is None without numba)."""
    import argparse
    import sys
    import stagepy
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", nargs="*", help="kernels to measure (default: all)")
    if add_flags:
        add_flags(ap)
    args = ap.parse_args()
    try:
        import numba
    except ImportError:
        numba = None
    plain = jitted_namespace(source, filename, False)
    fast = jitted_namespace(source, filename, True)
    jitted = jitted_namespace(source, filename, False, numba.njit) if numba else None
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, numba {numba.__version__ if numba else '-'}, "
          f"{stagepy.threads()} threads")
    return args, plain, fast, jitted


def three_ways(call, plain_fn, fast_fn, jit_fn, repeat):
    """`call(fn)` timed under CPython (once), stagepy on one thread and on every thread (after
    the first call and the background compiles), and numba (None where it has no jitted
    function; a string where numba fails to compile it). Returns (CPython's result, stagepy's
    result, t_cpython, t_1thread, t_threads, t_numba)."""
    import stagepy
    want = call(plain_fn)
    t_py = best(lambda: call(plain_fn), 1)
    with stagepy.enable():
        stagepy.set_threads(0)
        got = call(fast_fn)
        stagepy.finish_compiles()
        t_n = best(lambda: call(fast_fn), repeat)
        stagepy.set_threads(1)
        call(fast_fn)
        t_1 = best(lambda: call(fast_fn), repeat)
        stagepy.set_threads(0)
    t_nb = None
    if jit_fn is not None:
        try:
            call(jit_fn)
            t_nb = best(lambda: call(jit_fn), repeat)
        except Exception as e:  # numba may not compile an idiom
            t_nb = f"({type(e).__name__})"
    return want, got, t_py, t_1, t_n, t_nb


def on(f):
    """f, called with stagepy enabled (stagepy.disable() turns native nests off too)."""
    import stagepy

    def call(*args):
        with stagepy.enable():
            return f(*args)
    return call


def dispatch_overhead():
    """Warm cost of entering a native nest, outside its iterations: calls of a small nest
    with n and 2n iterations, extrapolated to none (2 t(n) - t(2n)). Small enough to show
    the dispatch, large enough that the nest is not declined as too little work."""
    import stagepy
    fast = define(True, TINY)["tiny"]
    n = 256
    a = np.zeros(2 * n)
    calls = 100_000

    def per_call(k):
        t0 = time.perf_counter()
        for _ in range(calls):
            fast(a, k)
        return (time.perf_counter() - t0) / calls

    with stagepy.enable():
        before = sum(r["native_calls"] for r in stagepy.report() if r["function"] == "tiny")
        fast(a, n), fast(a, 2 * n)
        stagepy.finish_compiles()  # the full kernel, and nothing compiling beside the calls
        t1 = min(per_call(n) for _ in range(5))
        t2 = min(per_call(2 * n) for _ in range(5))
        native = sum(r["native_calls"] for r in stagepy.report() if r["function"] == "tiny") - before
    # (the cost probe sends 48 of every probe's calls to CPython: at most a few hundred)
    assert native >= 0.999 * 10 * calls, "the nest did not run natively"
    return t1, t2, 2 * t1 - t2


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
    fast = {k: on(v) for k, v in define(True).items() if callable(v)}
    jitted, pranged = {}, {}
    if numba:
        jitted = {k: numba.njit(v) for k, v in plain.items() if callable(v)}
        pr = define(False, PRANGE, {"prange": numba.prange})
        pranged = {k: numba.njit(parallel=True)(v) for k, v in pr.items() if callable(v) and k != "prange"}
    only = set(args.only.split(",")) if args.only else None
    cores = stagepy.threads()
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, numba {numba.__version__ if numba else '-'}, "
          f"{cores} threads ({os.cpu_count()} CPUs)")
    print("| kernel | size | CPython (s) | stagepy first call (s) | stagepy 1t (s) | stagepy (s) | numba (s) "
          "| numba prange (s) | NumPy (s) | vs CPython (1t) | parallel speedup | vs numba | vs prange |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    firsts, first_phases = {}, {}
    fmt = lambda t: (f"{t:.4f}" if t >= 0.01 else f"{t:.3g}") if t is not None else "-"  # noqa: E731
    ratio = lambda a, b: f"{a / b:.2f}x" if a and b else "-"  # noqa: E731
    for name, (call, np_version, size) in cases(args.scale).items():
        if only and name not in only:
            continue
        t_py = best(lambda: call(plain[name]), 1)
        # The first call as a user makes it: every core (parallel bodies compiled quickly,
        # then fully in the background: tier-up), its phases from the report right after it.
        stagepy.set_threads(0)
        t0 = time.perf_counter()
        call(fast[name])
        firsts[name] = time.perf_counter() - t0
        first_phases[name] = [dict(r, compile_phases=dict(r["compile_phases"])) for r in stagepy.report()
                              if r["file"] == "<benchmark kernels>" and r["function"] == name]
        stagepy.finish_compiles()  # warm calls run the fully compiled code
        for r in first_phases[name]:
            now = [q for q in stagepy.report() if q["function"] == name and q["line"] == r["line"]]
            r["tier_up_s"] = now[0]["compile_phases"]["tier_up_s"] if now else 0.0
        t_n = best(lambda: call(fast[name]), args.repeat)
        stagepy.set_threads(1)
        call(fast[name])  # specializes for one thread
        t_1 = best(lambda: call(fast[name]), args.repeat)
        stagepy.set_threads(0)
        t_nb = t_pr = None
        if jitted:
            try:
                call(jitted[name])  # compile
                t_nb = best(lambda: call(jitted[name]), args.repeat)
                call(pranged[name])
                t_pr = best(lambda: call(pranged[name]), args.repeat)
            except numba.core.errors.NumbaError as e:  # what numba does not compile: "-"
                print(f"(numba cannot compile {name}: {str(e).splitlines()[1:2]})", file=sys.stderr)
        t_np = best(np_version, args.repeat) if np_version else None
        print(f"| {name} | {size} | {t_py:.3f} | {firsts[name]:.4f} | {fmt(t_1)} | {fmt(t_n)} | {fmt(t_nb)} | "
              f"{fmt(t_pr)} | {fmt(t_np)} | {t_py / t_1:.0f}x | {ratio(t_1, t_n)} | {ratio(t_nb, t_n)} | "
              f"{ratio(t_pr, t_n)} |")
    recs = [r for r in stagepy.report() if r["file"] == "<benchmark kernels>"]
    print()
    print("First call of each nest (its first specialization, every core), from stagepy.report() right after it;")
    print("first call = analysis + types + LLVM IR + optimize + JIT; tier-up: the background compile of its")
    print("parallel bodies (queued to switched):")
    print("| nest | analysis (ms) | types (ms) | LLVM IR (ms) | optimize (ms) | JIT (ms) | first call (ms) "
          "| tier-up (ms) | parallel loops |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in firsts:
        for r in first_phases[name]:
            ph = r["compile_phases"]
            parts = [r["analysis_s"], ph["infer_s"], ph["codegen_s"], ph["optimize_s"], ph["jit_s"]]
            par = ", ".join(f"`{l['variable']}` (line {l['line']})" for l in r["loops"] if l["parallel"]) or "-"
            print(f"| {r['function']}:{r['line']} | " + " | ".join(f"{x * 1e3:.1f}" for x in parts) +
                  f" | {sum(parts) * 1e3:.1f} | {r['tier_up_s'] * 1e3:.0f} | {par} |")
    bad = [r for r in recs if r["status"] == "interpreted"]
    if bad:
        print("nests left to the interpreter:", [(r["function"], r["line"], r["reason"]) for r in bad])
    t1, t2, t0 = dispatch_overhead()
    print()
    print(f"Warm call of a function with a native nest of 256 / 512 iterations: {t1 * 1e6:.2f} / {t2 * 1e6:.2f} us; "
          f"extrapolated to no iteration (call + dispatch): {t0 * 1e6:.2f} us")


if __name__ == "__main__":
    main()
