"""gemm as users write it, at several sizes: stagepy (one thread, every core) vs numba.njit vs
NumPy's `@` (BLAS), in GFLOPS (2 n^3 / best time) and as a fraction of `@` on as many threads.

    python benchmarks/gemm_forms.py [--sizes 100,250,520,1000] [--repeat 3] [--only acc,ijk,ikj]

  acc  - `acc = 0.0; for k: acc += A[i, k] * B[k, j]; C[i, j] = acc`
  ijk  - `for k: C[i, j] += A[i, k] * B[k, j]` (i-j-k, the element updated in place)
  ikj  - `for k: for j: C[i, j] += A[i, k] * B[k, j]` (i-k-j)
stagepy's results are compared with `@` to 1e-9 and, bit for bit, with numba.njit's (the
same source, adding in the same order: "= numba").
Best-of-repeat wall time of a warm call; NumPy's default errstate.
"""
import argparse
import os
import sys
import textwrap

import numpy as np

from kernels import SOURCE as KERNELS, best, define, on  # (the same harness as benchmarks/kernels.py)

# The acc and ijk forms are kernels.py's `gemm` and `gemm_ijk`; the ikj form is new here.
SOURCE = KERNELS + textwrap.dedent("""
    def gemm_ikj(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            for k in range(p):
                for j in range(m):
                    C[i, j] += A[i, k] * B[k, j]
""")
FORMS = {"acc": "gemm", "ijk": "gemm_ijk", "ikj": "gemm_ikj"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,250,520,1000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="acc,ijk,ikj")
    args = ap.parse_args()
    import stagepy
    try:
        import numba
    except ImportError:
        numba = None
    fast = define(True, SOURCE)
    plain = define(False, SOURCE)
    threads = os.cpu_count()
    print(f"threads: {threads}; OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}")
    print("| form | n | stagepy 1t (s) | stagepy (s) | numba (s) | NumPy @ (s) | stagepy 1t GFLOPS | "
          "stagepy GFLOPS | numba GFLOPS | stagepy / @ | lanes | = numba |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(x) for x in args.sizes.split(",")]:
        rng = np.random.default_rng(n)
        A, B = rng.random((n, n)), rng.random((n, n))
        t_blas = best(lambda: A @ B, args.repeat)
        ref = A @ B
        for form in args.only.split(","):
            fname = FORMS[form]
            f = on(fast[fname])
            C = np.zeros((n, n))
            f(A, B, C)
            stagepy.finish_compiles()
            assert np.allclose(C, ref, rtol=1e-9, atol=1e-9), form
            t = {}
            for th in (1, threads):
                stagepy.set_threads(th)
                t[th] = best(lambda: f(A, B, np.zeros((n, n))), args.repeat)
            stagepy.set_threads(threads)
            t_nb = float("nan")
            equal = "-"
            if numba is not None:
                g = numba.njit(plain[fname])
                Cn = np.zeros((n, n))
                g(A, B, Cn)
                Cs = np.zeros((n, n))
                f(A, B, Cs)
                equal = "yes" if np.array_equal(Cs, Cn) else "NO"
                t_nb = best(lambda: g(A, B, np.zeros((n, n))), args.repeat)
            rec = [r for r in stagepy.report() if r["function"] == fname][-1]
            lanes = max([lp["interleaved"] for lp in rec["loops"]] + [0])
            gf = lambda s: 2.0 * n ** 3 / s / 1e9  # noqa: E731
            print(f"| {form} | {n} | {t[1]:.4g} | {t[threads]:.4g} | {t_nb:.4g} | {t_blas:.4g} | "
                  f"{gf(t[1]):.1f} | {gf(t[threads]):.1f} | {gf(t_nb):.1f} | {t_blas / t[threads]:.2f} | {lanes} | {equal} |",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
