"""Loops over complex numbers that stayed in CPython before stop 36: cmath functions,
`**` with a float or complex exponent, numpy.complex64 arithmetic. Under CPython, stagepy
(one thread: every stagepy result is checked equal to CPython's), NumPy's vectorized
equivalent where there is one (its results may differ in the last bits: a different
formula), and `numba.njit` of the same source, in one process.

    OPENBLAS_NUM_THREADS=1 python benchmarks/complex_functions.py [--repeat N]
"""
import argparse

import numpy as np

from kernels import define  # the same way kernels.py defines its functions
from neighbours import best  # best of `repeat` calls, fresh arguments each

SOURCE = """
import cmath

def dft(x, X):
    n = x.shape[0]
    for k in range(n):
        s = 0j
        for t in range(n):
            s += x[t] * cmath.exp(-2j * cmath.pi * k * t / n)
        X[k] = s
    return X

def roots(z, w, out):
    for i in range(len(z)):
        out[i] = z[i] ** w + z[i] ** 0.5
    return out

def polar_mix(z, out):
    for i in range(z.shape[0]):
        r, phi = cmath.polar(z[i])
        out[i] = cmath.rect(cmath.sqrt(r).real, phi * 0.5) + cmath.log(z[i] + 2)
    return out

def c64_kernel(a, b, c):
    for i in range(a.shape[0]):
        c[i] = a[i] * b[i] + a[i] / (b[i] + 1) - 0.5 * a[i].conjugate()
    return c
"""


def numpy_versions():
    def dft(x, X):
        n = x.shape[0]
        k = np.arange(n)
        X[:] = np.exp(-2j * np.pi * np.outer(k, k) / n) @ x
        return X

    def roots(z, w, out):
        z = np.array(z)
        return (z ** w + z ** 0.5).tolist()

    def polar_mix(z, out):
        r, phi = np.abs(z), np.angle(z)
        out[:] = np.sqrt(r) * np.exp(1j * phi * 0.5) + np.log(z + 2)
        return out

    def c64_kernel(a, b, c):
        c[:] = a * b + a / (b + 1) - np.float32(0.5) * a.conj()
        return c
    return {"dft": dft, "roots": roots, "polar_mix": polar_mix, "c64_kernel": c64_kernel}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import numba
    import stagepy
    rng = np.random.default_rng(11)
    n_d = 1000
    x = rng.standard_normal(n_d) + 1j * rng.standard_normal(n_d)
    n = 1_000_000
    z = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    zl = z.tolist()
    a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    b = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    cases = {
        f"dft: cmath.exp in a {n_d}x{n_d} double loop": ("dft", lambda: (x, np.empty(n_d, complex))),
        "roots: z ** (0.3 - 0.2j) + z ** 0.5, a list of 1e6 complex": ("roots", lambda: (zl, 0.3 - 0.2j, [0j] * n)),
        "polar_mix: cmath.polar, rect, sqrt, log, 1e6": ("polar_mix", lambda: (z, np.empty(n, complex))),
        "c64_kernel: complex64 * / conjugate, 1e6": ("c64_kernel", lambda: (a, b, np.empty(n, np.complex64))),
    }
    plain = define(False, SOURCE)
    fast = define(True, SOURCE)
    vec = numpy_versions()
    stagepy.set_threads(1)
    print("| nest | CPython | stagepy | NumPy | numba |")
    print("|---|---|---|---|---|")
    for label, (name, make) in cases.items():
        want = plain[name](*make())
        t_py = best(plain[name], make, 1)
        with stagepy.enable():
            got = fast[name](*make())  # compile
            stagepy.finish_compiles()
            t_sp = best(fast[name], make, args.repeat)
        if isinstance(want, list):
            same = got == want
        else:
            same = got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))
        t_np = best(vec[name], make, args.repeat)
        jit = numba.njit(plain[name])
        if name == "roots":  # numba: typed lists, converted from the Python lists at each call
            make = (lambda mk: lambda: tuple(numba.typed.List(v) if isinstance(v, list) else v for v in mk()))(make)
        jit(*make())
        t_nb = best(jit, make, args.repeat)
        print(f"| {label} | {t_py * 1e3:.0f} ms | {t_sp * 1e3:.1f} ms{'' if same else ' (DIFFERENT RESULT)'} | "
              f"{t_np * 1e3:.1f} ms | {t_nb * 1e3:.1f} ms |")
    stagepy.set_threads(0)
    rows = [r for r in stagepy.report() if r["file"] == "<benchmark kernels>"]
    for r in sorted(rows, key=lambda r: r["line"]):
        print(f"  {r['function']}:{r['line']} {r['status']} {r['native_calls']}/{r['calls']} native, "
              f"{r['bailouts']} bailouts  {r['reason']}")


if __name__ == "__main__":
    main()
