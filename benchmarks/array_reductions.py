"""Loops that sum into arrays (docs/semantics.md, "Array reductions") as the shared
workloads write them: CPython vs stagepy on one thread vs stagepy on every core vs numba.njit.

    python benchmarks/array_reductions.py [--scale 1.0] [--repeat 5]

  julia   - julia.py's escape-time loop: img[y, x] = ... and hist[...] += 1 on a list
            (the image's stores logged in windows, the histogram summed per thread);
  kmeans_update - kmeans.py's update(): counts[c] += 1 and centres[c, k] += points[p, k].
Best-of-repeat wall time of a warm call; every version's results are compared with
CPython's (integers exactly; the float centres to 1e-9, as their sums are reassociated).
numba has no prange form of these loops that is free of races, so only njit is timed.
"""
import argparse
import os
import sys
import textwrap
import time

import numpy as np

from kernels import best, define, on  # (the same harness as benchmarks/kernels.py)

SOURCE = textwrap.dedent("""
    def julia(w, h, maxit, cr, ci, img, hist):
        for y in range(h):
            for x in range(w):
                zr = -1.6 + 3.2 * x / w
                zi = -1.2 + 2.4 * y / h
                it = 0
                while it < maxit and zr * zr + zi * zi <= 4.0:
                    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                    it += 1
                img[y, x] = 255 * it // maxit
                hist[it * 8 // (maxit + 1)] += 1
        return hist

    def kmeans_update(points, labels, centres, counts):
        for c in range(centres.shape[0]):
            counts[c] = 0
            for k in range(centres.shape[1]):
                centres[c, k] = 0.0
        for p in range(points.shape[0]):
            c = labels[p]
            counts[c] += 1
            for k in range(points.shape[1]):
                centres[c, k] += points[p, k]
        return counts
""")


def cases(scale):
    w = max(8, int(800 * scale))
    h = w * 3 // 4
    rng = np.random.default_rng(7)
    n = max(16, int(400_000 * scale))
    pts = rng.uniform(-10, 10, (8, 2))[rng.integers(0, 8, n)] + rng.standard_normal((n, 2))
    labels = rng.integers(0, 8, n)
    return {
        "julia": (lambda f: (lambda img, hist: (f(w, h, 200, -0.8, 0.156, img, hist), img))(
            np.zeros((h, w), np.uint8), [0] * 8), f"{w}x{h}, 200 it"),
        "kmeans_update": (lambda f: (lambda c, k: (f(pts, labels, c, k), c))(np.zeros((8, 2)), np.zeros(8, np.int64)),
                   f"n={n}, k=8, d=2"),
    }


def same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            assert np.allclose(x, y, rtol=1e-9, atol=0), "results differ"
        else:
            assert np.array_equal(np.asarray(x), np.asarray(y)), "results differ"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import stagepy
    try:
        import numba
    except ImportError:
        numba = None
    plain = define(False, SOURCE)
    fast = {k: on(v) for k, v in define(True, SOURCE).items() if callable(v)}
    jitted = {k: numba.njit(v) for k, v in plain.items() if callable(v)} if numba else {}
    print(f"Python {sys.version.split()[0]}, NumPy {np.__version__}, numba {numba.__version__ if numba else '-'}, "
          f"{stagepy.threads()} threads ({os.cpu_count()} CPUs)")
    print("| loop | size | CPython (s) | stagepy 1t (s) | stagepy (s) | numba (s) | parallel speedup | vs numba |")
    print("|---|---|---|---|---|---|---|---|")
    notes = []
    fmt = lambda t: (f"{t:.4f}" if t >= 0.01 else f"{t:.3g}") if t else "-"  # noqa: E731
    for name, (call, size) in cases(args.scale).items():
        want = call(plain[name])
        t0 = time.perf_counter()
        call(plain[name])
        t_py = time.perf_counter() - t0
        stagepy.set_threads(0)
        same(call(fast[name]), want)
        stagepy.finish_compiles()
        t_n = best(lambda: call(fast[name]), args.repeat)
        for r in stagepy.report():  # how the loops ran on every core
            if r["file"] == "<benchmark kernels>" and r["function"] == name:
                notes.append(f"{name}:{r['line']} " + "; ".join(
                    f"`{l['variable']}` " + (f"parallel in {l['parallel_runs']} runs" if l["parallel_runs"] else
                                             f"sequential: {l['why']}")
                    + (f", summing into {l['summed']} in a copy per thread" if l.get("summed") else "")
                    for l in r["loops"] if l["parallel_runs"] or l["why"]))
        stagepy.set_threads(1)
        same(call(fast[name]), want)
        t_1 = best(lambda: call(fast[name]), args.repeat)
        stagepy.set_threads(0)
        t_nb = None
        if jitted:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # reflected lists
                same(call(jitted[name]), want)
                t_nb = best(lambda: call(jitted[name]), args.repeat)
        print(f"| {name} | {size} | {t_py:.3f} | {fmt(t_1)} | {fmt(t_n)} | {fmt(t_nb)} | {t_1 / t_n:.2f}x | "
              f"{(t_nb / t_n) if t_nb else 0:.2f}x |")
    for note in notes:
        print("  " + note)


if __name__ == "__main__":
    main()
