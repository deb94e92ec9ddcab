"""Helpers that read elements, and helpers that loop: a loop nest calling `lap(u, i, j)`,
`alive(g, i, j, n)`, `dist(X, i, j)`, `dot(A[i], B[j], n)`, `count(g, i, j, n)`, or the
helpers with returns inside their loops `is_prime(n)` and `find(a, x)` (a binary search), against
the same nest with the helper written out by hand, under CPython, stagepy (one thread and
every thread) and numba (njit, the helper njit-ed too), in one process. Until stop 48 such
helpers kept their callers in CPython ("reads an element of a container", "it loops"); now
they are inlined and the analysis runs again on the inlined nest. Until stop 49, helpers that
return from inside their loops kept their callers in CPython ("it loops and returns from more
than one place").

    OPENBLAS_NUM_THREADS=1 python benchmarks/helpers.py [--repeat N] [--scale S] [--only primes search]
"""

import numpy as np

from kernels import three_way_session, three_ways  # kernels.py's timing

SOURCE = """
import math

def lap(u, i, j):
    return u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]

def stencil_helper(u, v, steps):
    n = u.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                v[i, j] = u[i, j] + 0.2 * lap(u, i, j)
        u, v = v, u
    return u

def stencil_inline(u, v, steps):
    n = u.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    return u

def alive(g, i, j, n):
    return g[i % n, j % n]

def life_helper(g, out, gens):
    n = g.shape[0]
    for gen in range(gens):
        for i in range(n):
            for j in range(n):
                c = (alive(g, i - 1, j - 1, n) + alive(g, i - 1, j, n) + alive(g, i - 1, j + 1, n) +
                     alive(g, i, j - 1, n) + alive(g, i, j + 1, n) +
                     alive(g, i + 1, j - 1, n) + alive(g, i + 1, j, n) + alive(g, i + 1, j + 1, n))
                out[i, j] = 1 if c == 3 or (c == 2 and g[i, j] == 1) else 0
        g, out = out, g
    return g

def life_inline(g, out, gens):
    n = g.shape[0]
    for gen in range(gens):
        for i in range(n):
            for j in range(n):
                c = (g[(i - 1) % n, (j - 1) % n] + g[(i - 1) % n, j % n] + g[(i - 1) % n, (j + 1) % n] +
                     g[i % n, (j - 1) % n] + g[i % n, (j + 1) % n] +
                     g[(i + 1) % n, (j - 1) % n] + g[(i + 1) % n, j % n] + g[(i + 1) % n, (j + 1) % n])
                out[i, j] = 1 if c == 3 or (c == 2 and g[i, j] == 1) else 0
        g, out = out, g
    return g

def dist(X, i, j):
    dx = X[i, 0] - X[j, 0]
    dy = X[i, 1] - X[j, 1]
    dz = X[i, 2] - X[j, 2]
    return math.sqrt(dx * dx + dy * dy + dz * dz)

def pairs_helper(X, D):
    n = X.shape[0]
    for i in range(n):
        for j in range(n):
            D[i, j] = dist(X, i, j)

def dot(a, b, n):
    s = 0.0
    for k in range(n):
        s += a[k] * b[k]
    return s

def gemm_helper(A, B, C):
    n, m, p = A.shape[0], B.shape[0], A.shape[1]
    for i in range(n):
        for j in range(m):
            C[i, j] = dot(A[i], B[j], p)

def gemm_inline(A, B, C):
    n, m, p = A.shape[0], B.shape[0], A.shape[1]
    for i in range(n):
        for j in range(m):
            s = 0.0
            for k in range(p):
                s += A[i, k] * B[j, k]
            C[i, j] = s

def count(g, i, j, n):
    c = 0
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di != 0 or dj != 0:
                c += g[(i + di) % n, (j + dj) % n]
    return c

def lifeloop_helper(g, out, gens):
    n = g.shape[0]
    for gen in range(gens):
        for i in range(n):
            for j in range(n):
                c = count(g, i, j, n)
                out[i, j] = 1 if c == 3 or (c == 2 and g[i, j] == 1) else 0
        g, out = out, g
    return g

def lifeloop_inline(g, out, gens):
    n = g.shape[0]
    for gen in range(gens):
        for i in range(n):
            for j in range(n):
                c = 0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        if di != 0 or dj != 0:
                            c += g[(i + di) % n, (j + dj) % n]
                out[i, j] = 1 if c == 3 or (c == 2 and g[i, j] == 1) else 0
        g, out = out, g
    return g

def is_prime(n):
    if n < 2:
        return False
    d = 2
    while d * d <= n:
        if n % d == 0:
            return False
        d += 1
    return True

def primes_helper(flags, N):
    for n in range(N):
        flags[n] = is_prime(n)
    return flags

def primes_inline(flags, N):
    for n in range(N):
        p = n >= 2
        d = 2
        while p and d * d <= n:
            if n % d == 0:
                p = False
            d += 1
        flags[n] = p
    return flags

def find(a, x):
    lo, hi = 0, len(a) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if a[mid] == x:
            return mid
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1

def search_helper(a, xs, out):
    for k in range(len(xs)):
        out[k] = find(a, xs[k])
    return out

def search_inline(a, xs, out):
    for k in range(len(xs)):
        x = xs[k]
        lo, hi, r = 0, len(a) - 1, -1
        while lo <= hi:
            mid = (lo + hi) // 2
            if a[mid] == x:
                r = mid
                break
            if a[mid] < x:
                lo = mid + 1
            else:
                hi = mid - 1
        out[k] = r
    return out

def pairs_inline(X, D):
    n = X.shape[0]
    for i in range(n):
        for j in range(n):
            dx = X[i, 0] - X[j, 0]
            dy = X[i, 1] - X[j, 1]
            dz = X[i, 2] - X[j, 2]
            D[i, j] = math.sqrt(dx * dx + dy * dy + dz * dz)
"""



def cases(scale):
    s = lambda n: max(8, int(n * scale))  # noqa: E731
    rng = np.random.default_rng(0)
    n_s, steps = s(400), 20
    u0 = rng.random((n_s, n_s))
    n_l, gens = s(256), 10
    g0 = (rng.random((n_l, n_l)) < 0.35).astype(np.int64)
    n_p = s(600)
    X = rng.random((n_p, 3))
    n_pr = s(300000)
    sorted_a = np.unique(rng.integers(0, 4 * s(200000), s(200000)))
    xs = rng.integers(0, 4 * s(200000), s(400000))
    n_g = s(200)
    A, B = rng.random((n_g, n_g)), rng.random((n_g, n_g))
    return {
        "stencil": (lambda f: f(u0.copy(), u0.copy(), steps), f"{n_s}x{n_s} x {steps} steps"),
        "gemm": (lambda f: f(A, B, np.zeros((n_g, n_g))), f"{n_g}x{n_g}, C[i, j] = dot(A[i], B[j], n) (a helper that loops)"),
        "lifeloop": (lambda f: f(g0.copy(), np.zeros_like(g0), gens),
                     f"{n_l}x{n_l} x {gens} generations, count(g, i, j, n) loops over (-1, 0, 1)"),
        "life": (lambda f: f(g0.copy(), np.zeros_like(g0), gens), f"{n_l}x{n_l} x {gens} generations, periodic"),
        "pairs": (lambda f: f(X, np.zeros((n_p, n_p))), f"{n_p}x3 points, D[i, j] = dist(X, i, j)"),
        "primes": (lambda f: f(np.zeros(n_pr, dtype=np.bool_), n_pr),
                   f"is_prime(n) for n < {n_pr}: trial division, `return False` inside a while loop"),
        "search": (lambda f: f(sorted_a, xs, np.zeros(len(xs), dtype=np.int64)),
                   f"binary search of {len(xs)} values in {len(sorted_a)}: returns inside a while loop"),
    }


def main():
    import stagepy
    args, plain, fast, jitted = three_way_session(
        SOURCE, "<benchmark helpers>",
        lambda ap: ap.add_argument("--inline-first", action="store_true",
                                   help="measure the written-out form of each kernel first"))
    print("| kernel | size | form | CPython (s) | stagepy 1t (s) | stagepy (s) | numba (s) | same result |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (call, size) in cases(args.scale).items():
        if args.only and name not in args.only:
            continue
        for form in ("inline", "helper") if args.inline_first else ("helper", "inline"):
            fn = f"{name}_{form}"
            want, got, t_py, t_1, t_n, t_nb = three_ways(call, plain[fn], fast[fn], jitted[fn] if jitted else None,
                                                         args.repeat)
            same = want is None or np.array_equal(want, got)
            nb = f"{t_nb:.4f}" if isinstance(t_nb, float) else t_nb or "-"
            print(f"| {name} | {size} | {form} | {t_py:.3f} | {t_1:.4f} | {t_n:.4f} | {nb} | {same} |")
    recs = [r for r in stagepy.report() if r["file"] == "<benchmark helpers>"]
    for r in recs:
        runs = {l["variable"]: l["parallel_runs"] for l in r["loops"] if l["parallel_runs"]}
        print(f"  {r['function']}:{r['line']} {r['status']} native calls {r['native_calls']}, parallel runs {runs}, "
              f"analysis {r['analysis_s'] * 1e3:.1f} ms" + (f" reason: {r['reason']}" if r["reason"] else ""))
    print("threads:", stagepy.thread_info())


if __name__ == "__main__":
    main()
