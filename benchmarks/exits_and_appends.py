"""Loops that return from inside, raise, or build a list with `append`: before stop 35 each of
these kept its whole nest in CPython ("returns from inside the loop", "uses the attribute
`.append` of a list"). Under CPython, stagepy (one thread: these loops run in order) and
`numba.njit` of the same source, in one process. numba compiles the list-building functions
with its own list type (the result is converted back to a Python list on return); its
column for them includes that.

    OPENBLAS_NUM_THREADS=1 python benchmarks/exits_and_appends.py [--repeat N]
"""
import argparse

import numpy as np

from kernels import define  # the same way kernels.py defines its functions
from neighbours import best  # best of `repeat` calls, fresh arguments each

SOURCE = """
def find_first(A, x):
    n, m = A.shape
    for i in range(n):
        for j in range(m):
            if A[i, j] > x:
                return i, j
    return -1, -1

def count_primes(n):
    c = 0
    for k in range(2, n):
        d = 2
        prime = True
        while d * d <= k:
            if k % d == 0:
                prime = False
                break
            d += 1
        if prime:
            c += 1
    return c

def first_primes(n):
    primes = []
    k = 2
    while len(primes) < n:
        d = 2
        while d * d <= k and k % d:
            d += 1
        if d * d > k:
            primes.append(k)
        k += 1
    return primes

def select(a, t):
    out = []
    for i in range(a.shape[0]):
        if a[i] > t:
            out.append(i)
    return out

def checked_sqrt(a, out):
    for i in range(a.shape[0]):
        if a[i] < 0.0:
            raise ValueError("negative input")
        out[i] = a[i] ** 0.5
    return out
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import numba
    import stagepy
    rng = np.random.default_rng(6)
    A = rng.random((2000, 1000))
    A[1900, 500] = 2.0  # the only element above 1.5
    a = rng.random(2_000_000)
    cases = {
        "find_first: return from a 2-d search (2000x1000, found at row 1900)": ("find_first", lambda: (A, 1.5)),
        "count_primes below 200 000 (is_prime's loop inlined, a break)": ("count_primes", lambda: (200_000,)),
        "first_primes: `while len(primes) < 20000`, append": ("first_primes", lambda: (20_000,)),
        "select: indices of 2e6 values above 0.5, append": ("select", lambda: (a, 0.5)),
        "checked_sqrt: a raise inside (never taken), 2e6": ("checked_sqrt", lambda: (a, np.empty_like(a))),
    }
    plain = define(False, SOURCE)
    fast = define(True, SOURCE)
    stagepy.set_threads(1)
    print("| nest | CPython | stagepy | numba |")
    print("|---|---|---|---|")
    for label, (name, make) in cases.items():
        want = plain[name](*make())
        t_py = best(plain[name], make, max(1, args.repeat // 3))
        with stagepy.enable():
            got = fast[name](*make())  # compile
            stagepy.finish_compiles()
            t_sp = best(fast[name], make, args.repeat)
        same = type(got) is type(want) and (np.array_equal(got, want) if isinstance(want, np.ndarray) else got == want)
        jit = numba.njit(plain[name])
        jit(*make())
        t_nb = best(jit, make, args.repeat)
        print(f"| {label} | {t_py * 1e3:.1f} ms | {t_sp * 1e3:.2f} ms{'' if same else ' (DIFFERENT RESULT)'} | {t_nb * 1e3:.2f} ms |")
    stagepy.set_threads(0)
    rows = [r for r in stagepy.report() if r["file"] == "<benchmark kernels>"]
    for r in sorted(rows, key=lambda r: r["line"]):
        print(f"  {r['function']}:{r['line']} {r['status']} {r['native_calls']}/{r['calls']} native, "
              f"{r['exits']} exits  {r['reason']}")


if __name__ == "__main__":
    main()
