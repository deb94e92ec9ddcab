"""Differential cases for parallel loops that may run on the GPU.

Each case is plain Python run twice on fresh copies of the same inputs: under CPython,
then under stagepy; the values (bit for bit), the warnings and the returned locals must
be the same. `python gpu_cases.py` prints one JSON line per case with the comparison and
what the report says (status, GPU launches, why a loop stayed on the CPU), then a summary
line with stagepy.gpu_info().

Run with STAGEPY_GPU_EMULATE=1 on a machine without a GPU (tests/python/test_gpu_emulation.py,
in CI) and with a real device on the GPU machine (tests/gpu/test_gpu_device.py).
"""
import copy
import json
import math
import sys
import textwrap
import warnings

import numpy as np

import stagepy

N = 2048
rng = np.random.default_rng(7)

CASES = []


def case(name, src, fn, make, expect_gpu=True, why=None):
    CASES.append(dict(name=name, src=textwrap.dedent(src), fn=fn, make=make, expect_gpu=expect_gpu, why=why))


case("window_over_offset_tuples", """
def f(u, v):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            s = 0.0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    s += u[i + di, j + dj]
            v[i, j] = s / 9.0
    return locals()
""", "f", lambda: (rng.random((80, 90)), np.zeros((80, 90))))

case("python_int_counters_beside_writes", """
def f(a, out, step):
    done = 0
    hits = 0
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0
        done += step
        if a[i] > 0.5:
            hits += 1
    return locals()
""", "f", lambda: (rng.random(N), np.zeros(N), 3))

case("stencil_time_loop", """
def f(A, B, T):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = B[i, j]
    return locals()
""", "f", lambda: (rng.random((96, 96)), np.zeros((96, 96)), 6))

# Arrays a GPU loop overwrites whole are not copied to the device (GpuArray::fresh): the
# outputs start non-zero, so an element the loop did not write would come back wrong
# (emulating, the stand-in device memory of such an array starts as 0xff bytes).
case("overwritten_whole_2d", """
def f(A, out):
    h, w = out.shape
    for i in range(h):
        for j in range(w):
            out[i, j] = A[i, j] * 2.0 + j
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((50, 70))))

case("overwritten_whole_1d_shape", """
def f(x, y):
    for i in range(y.shape[0]):
        y[i] = x[i] * 3
    return locals()
""", "f", lambda: (np.arange(5000), np.full(5000, 7)))

case("overwritten_whole_sums", """
def f(A, B, C):
    n, m = A.shape
    p = B.shape[1]
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += A[i, k] * B[k, j]
            C[i, j] = s
    return locals()
""", "f", lambda: (np.round(rng.random((40, 30)) * 8), np.round(rng.random((30, 20)) * 8), rng.random((40, 20))))

case("overwritten_from_row_one", """
def f(A, out):
    h, w = out.shape
    for i in range(1, h):
        for j in range(w):
            out[i, j] = A[i, j] * 2.0
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((50, 70))))

case("overwritten_but_the_last_column", """
def f(A, out, w):
    h = out.shape[0]
    for i in range(h):
        for j in range(w):
            out[i, j] = A[i, j] * 2.0
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((50, 70)), 69))

case("overwritten_where_a_condition_holds", """
def f(A, out):
    h, w = out.shape
    for i in range(h):
        for j in range(w):
            if A[i, j] > 0.5:
                out[i, j] = 1.0
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((50, 70))))

case("overwritten_then_read", """
def f(A, out, total, T):
    h, w = out.shape
    for t in range(T):
        for i in range(h):
            for j in range(w):
                out[i, j] = A[i, j] * 2.0 + t
        for i in range(h):
            for j in range(w):
                total[i, j] += out[i, j] + out[i, w - 1 - j]
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((50, 70)), np.zeros((50, 70)), 2))

case("overwritten_strided_view", """
def f(A, big):
    out = big[::2]  # (made here: the harness's deepcopy of a view would be a contiguous copy)
    h, w = out.shape
    for i in range(h):
        for j in range(w):
            out[i, j] = A[i, j] * 2.0
    return locals()
""", "f", lambda: (rng.random((50, 70)), rng.random((100, 70))[::2]))

case("overwritten_transposed", """
def f(A, out):
    n = out.shape[0]
    for i in range(n):
        for j in range(n):
            out[j, i] = A[i, j] * 2.0
    return locals()
""", "f", lambda: (rng.random((60, 60)), rng.random((60, 60))))

case("large_arrays_staged_copies", """
def f(x, y, T):
    for t in range(T):
        for i in range(x.shape[0]):
            y[i] = y[i] * 0.5 + x[i] * t
    return locals()
""", "f", lambda: (rng.random(2_500_003), rng.random(2_500_003), 2))  # 20 MB each: copies in chunks

case("unaligned_views_staged_copies", """
def f(x, y):
    for i in range(x.shape[0]):
        y[i] = y[i] * 0.5 + x[i]
    return locals()
""", "f", lambda: (rng.random(2_600_007).astype(np.float32)[3:],  # 10 MB views at odd offsets:
                   rng.random(2_600_006).astype(np.float32)[1:-1]))  # the staged copies' ragged ends

case("while_time_loop", """
def f(A, B, T):
    n = A.shape[0]
    t = 0
    while t < T:
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = B[i, j]
        t += 1
    return locals()
""", "f", lambda: (rng.random((96, 96)), np.zeros((96, 96)), 6))

case("time_loop_returns_once_converged", """
def f(A, B, T):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = B[i, j]
        if A[n // 2, n // 2] < 0.05:
            return t, A[n // 2, n // 2]
    return -1, 0.0
""", "f", lambda: (np.pad(np.ones((4, 4)), 46), np.zeros((96, 96)), 500))

case("elementwise_private", """
def f(A, B, C):
    for i in range(A.shape[0]):
        s = A[i] * 2.0 + B[i]
        C[i] = s * s
    return locals()
""", "f", lambda: (rng.random(N), rng.random(N), np.zeros(N)))

case("host_statement_between_gpu_loops", """
def f(A, B, T):
    n = A.shape[0]
    for t in range(T):
        for i in range(n):
            B[i] = A[i] + 1.0
        A[0] = B[n - 1] * 2.0
        for i in range(1, n):
            A[i] = B[i] * 0.5
    return locals()
""", "f", lambda: (rng.random(N), np.zeros(N), 4))

case("private_unassigned_in_last_iteration", """
def f(A, B):
    last = -1
    for i in range(A.shape[0]):
        if A[i] > 0.5:
            last = i
        B[i] = A[i] * 3.0
    return locals()
""", "f", lambda: (np.concatenate([rng.random(N - 1), [0.25]]), np.zeros(N)))

case("overlapping_views", """
def f(A, A1, B, T):
    n = A1.shape[0]
    for t in range(T):
        for i in range(n):
            B[i] = A1[i] * 2.0
        for i in range(n):
            A[i] = B[i] + 1.0
    return locals()
""", "f", lambda: (lambda A: (A, A[1:], np.zeros(N - 1), 3))(rng.random(N)))

case("int64_arithmetic", """
def f(A, B, C):
    for i in range(A.shape[0]):
        C[i] = A[i] * 3 + B[i] // 7 - (A[i] % 5)
    return locals()
""", "f", lambda: (rng.integers(-1000, 1000, N), rng.integers(-1000, 1000, N), np.zeros(N, dtype=np.int64)))

case("float32_and_casts", """
def f(A, B, h):
    for i in range(A.shape[0]):
        B[i] = A[i] * h + 1
    return locals()
""", "f", lambda: (rng.random(N).astype(np.float32), np.zeros(N, dtype=np.float32), np.float32(0.5)))

case("escape_time_while", """
def f(out, w, h, maxit):
    for y in range(h):
        for x in range(w):
            cr = -2.0 + 3.0 * x / w
            ci = -1.5 + 3.0 * y / h
            zr = 0.0
            zi = 0.0
            k = 0
            while k < maxit and zr * zr + zi * zi < 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                k += 1
            out[y, x] = k
    return locals()
""", "f", lambda: (np.zeros((48, 64), dtype=np.int64), 64, 48, 60))

case("gemm_ijk", """
def f(A, B, C):
    n, m = A.shape
    p = B.shape[1]
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += A[i, k] * B[k, j]
            C[i, j] = s
    return locals()
""", "f", lambda: (rng.random((40, 30)), rng.random((30, 50)), np.zeros((40, 50))))

case("triangular_collapsed_nest", """
def f(A, C):
    n = A.shape[0]
    for i in range(n):
        for j in range(i, n, 2):
            t = A[i, j] * 2.0 - A[j, i]
            C[i, j] = t
    return locals()
""", "f", lambda: (rng.random((300, 300)), np.zeros((300, 300))))

case("collapsed_nest_conditional_private", """
def f(A, C):
    t = -1.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            if A[i, j] > 0.5:
                t = A[i, j]
            C[i, j] = A[i, j] * 2.0
    return locals()
""", "f", lambda: (lambda A: (A, np.zeros_like(A)))(np.where(np.arange(200 * 100).reshape(200, 100) == 200 * 100 - 1,
                                                              0.25, rng.random((200, 100)))))

case("collapsed_nest_continue_skips_assignment", """
def f(A, C):
    t = -1.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            C[i, j] = A[i, j] * 2.0
            if A[i, j] < 0.5:
                continue
            t = A[i, j] + j
    return locals()
""", "f", lambda: (lambda A: (A, np.zeros_like(A)))(np.where(np.arange(200 * 100).reshape(200, 100) == 200 * 100 - 1,
                                                              0.25, rng.random((200, 100)))))

# Reductions: values whose sums are exact in any order (small integers as floats), since a
# parallel float sum may be reassociated (docs/semantics.md).
case("dot_product_reduction", """
def f(A, B):
    s = 0.0
    for i in range(A.shape[0]):
        s += A[i] * B[i]
    return locals()
""", "f", lambda: (rng.integers(-8, 8, 50000).astype(np.float64), rng.integers(-8, 8, 50000).astype(np.float64)))

# `s = 0` (an int) before a nest whose inner loop always runs (a NonEmpty fact): an
# np.float64 from the first row on, so the outer loop is a float reduction.
case("sum_from_an_int_zero_over_rows", """
def f(A):
    s = 0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
    return locals()
""", "f", lambda: (rng.integers(-8, 8, (20000, 6)).astype(np.float64),))

case("int_max_and_min_reductions", """
def f(A):
    hi = A[0]
    lo = A[0]
    for i in range(A.shape[0]):
        hi = max(hi, A[i])
        lo = min(A[i], lo)
    return locals()
""", "f", lambda: (rng.integers(-10**6, 10**6, 40000),))

case("reduction_with_unassigned_private", """
def f(A, C):
    s = 0.0
    last = -1
    for i in range(A.shape[0]):
        if A[i] > 0.5:
            last = i
        s += A[i]
        C[i] = A[i] * 2.0
    return locals()
""", "f", lambda: (np.concatenate([rng.integers(0, 4, 9999) * 0.25, [0.25]]), np.zeros(10000)))

case("row_sums_reduction_per_row", """
def f(A, out):
    for i in range(A.shape[0]):
        s = 0.0
        for j in range(A.shape[1]):
            s += A[i, j]
        out[i] = s
    return locals()
""", "f", lambda: (rng.random((300, 200)), np.zeros(300)))

case("sqrt_nbody_like", """
def f(X, Y, F):
    n = X.shape[0]
    for i in range(n):
        fx = X[i] * 0.0
        for j in range(n):
            dx = X[j] - X[i]
            dy = Y[j] - Y[i]
            r = np.sqrt(dx * dx + dy * dy + 0.01)
            fx += dx / (r * r * r)
        F[i] = fx
    return locals()
""", "f", lambda: (rng.random(300), rng.random(300), np.zeros(300)), expect_gpu=False)

case("python_lists", """
def f(A, C):
    for i in range(len(A)):
        C[i] = A[i] * 2.0 + 1.0
    return locals()
""", "f", lambda: ([float(x) for x in rng.random(N)], [0.0] * N))

case("divide_warnings", """
def f(A, B, C):
    for i in range(A.shape[0]):
        C[i] = A[i] / B[i]
    return locals()
""", "f", lambda: (rng.random(N), np.where(rng.random(N) < 0.01, 0.0, 1.0), np.zeros(N)))

def _two_warnings():
    a = np.zeros((64, 96))
    b = np.zeros((64, 96))
    a[5, 70] = 10.0      # the first site (multiply: overflow) first warns at column 70 ...
    b[5, 20] = np.inf    # ... after the second (subtract: invalid) did at column 20, same row
    return a, b, np.zeros((64, 96))


case("warning_order_within_a_row_on_a_2d_grid", """
def f(A, B, out):
    n, m = A.shape
    for i in range(n):
        for j in range(m):
            x = A[i, j] * 1e308
            y = B[i, j] - np.inf
            out[i, j] = x + y
    return locals()
""", "f", _two_warnings)

case("fmod_stays_on_cpu", """
def f(A, B):
    for i in range(A.shape[0]):
        B[i] = A[i] % 0.3
    return locals()
""", "f", lambda: (rng.random(N) * 10, np.zeros(N)), expect_gpu=False)

case("helper_reading_elements", """
def lap(u, i, j):
    return u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]

def f(u, v):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            v[i, j] = u[i, j] + 0.2 * lap(u, i, j)
    return locals()
""", "f", lambda: (rng.random((300, 310)), np.zeros((300, 310))))

case("helper_that_loops", """
def dot(a, b, p):
    s = 0.0
    for k in range(p):
        s += a[k] * b[k]
    return s

def f(A, B, C):
    n, p = A.shape
    for i in range(n):
        for j in range(B.shape[0]):
            C[i, j] = dot(A[i], B[j], p)
    return locals()
""", "f", lambda: (rng.random((200, 64)), rng.random((180, 64)), np.zeros((200, 180))))

case("helper_returning_early", """
def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if d * d > n:
            break
        if n % d == 0:
            return False
    return True

def first_above(a, t):
    for k in range(a.shape[0]):
        if a[k] > t:
            return k
    return -1

def f(flags, A, out):
    for n in range(flags.shape[0]):
        flags[n] = is_prime(n)
    for i in range(A.shape[0]):
        out[i] = first_above(A[i], 0.99)
    return locals()
""", "f", lambda: (np.zeros(200000, dtype=np.bool_), rng.random((4000, 300)), np.zeros(4000, dtype=np.int64)))

case("str_characters", """
def f(s, t, out):
    for i in range(len(out)):
        out[i] = 1 if s[i] == t[i] or ord(s[i]) < 66 else 0
    return locals()
""", "f", lambda: ("".join("ACGT"[int(x)] for x in rng.integers(0, 4, N)),
                   "".join("ACGT"[int(x)] for x in rng.integers(0, 4, N)), np.zeros(N, dtype=np.int64)),
     expect_gpu=False, why="str")

# A list made in a time loop (`row = [0.0] * 3`, held by its header, on the host) beside a
# loop over arrays that runs on the GPU at every step.
case("made_rows_beside_a_gpu_loop", """
def f(A, B, steps):
    hist = [0.0] * steps
    for t in range(steps):
        for i in range(A.shape[0]):
            B[i] = A[i] * 2.0 + t
        row = [0.0] * 3
        row[0] = B[0]
        row[2] = row[0] + B[A.shape[0] - 1]
        hist[t] = row[2]
    return locals()
""", "f", lambda: (rng.random(200000), np.zeros(200000), 5))

case("loops_over_a_row_inside_a_parallel_loop", """
def f(M, out, w):
    for i in range(M.shape[0]):
        s = 0.0
        for x in M[i]:
            s += x * x
        t = 0.0
        for j, x in enumerate(M[i]):
            t += x * j
        out[i] = s + t
        w[i] = s
    return locals()
""", "f", lambda: (rng.random((N, 64)), np.zeros(N), np.zeros(N)))

case("ragged_rows_stay_on_the_cpu", """
def f(A, out):
    for i in range(len(A)):
        s = 0.0
        for j in range(len(A[i])):
            s += A[i][j] * A[i][j]
        out[i] = s
    return locals()
""", "f", lambda: ([rng.random(int(k)).tolist() for k in rng.integers(0, 9, N // 8)], [0.0] * (N // 8)),
     expect_gpu=False, why="it reads a list of lists of different lengths")

case("python_ints_compared_with_floats_exactly", """
def f(X, out, big):
    for i in range(X.shape[0]):
        c = 0
        if big + i * 1024 > float(X[i]):
            c = 1
        if big - 1 + i * 1024 == float(X[i]):
            c += 10
        out[i] = c
    return locals()
""", "f", lambda: (2.0**60 + np.arange(N) * 1024.0 + rng.integers(-1, 2, N) * 256.0, np.zeros(N), 2**60 + 1))

case("random_draws_stay_on_the_cpu", """
import random
def f(A, out):
    random.seed(5)
    for i in range(A.shape[0]):
        out[i] = A[i] * random.random()
    return locals()
""", "f", lambda: (rng.standard_normal(N // 8), np.zeros(N // 8)),
     expect_gpu=False, why="it draws random numbers")

case("rows_built_around_a_gpu_loop", """
def f(A, B, steps):
    hist = []
    for t in range(steps):
        for i in range(A.shape[0]):
            B[i] = A[i] * 0.5 + t
        row = [t]
        row.append(B[0])
        hist.append(row)
    return locals()
""", "f", lambda: (rng.standard_normal(N), np.zeros(N), 4))

for _dt in ("complex128", "complex64"):
    # Complex elements read and written part by part (complex64: float32 parts, each
    # operation rounded to float32); under errstate "ignore" nothing needs CPython.
    case(f"{_dt}_arithmetic", """
def f(A, B, C):
    with np.errstate(all="ignore"):
        for i in range(A.shape[0]):
            C[i] = A[i] * B[i] + A[i] / (B[i] + 1) - 0.5 * A[i].conjugate() + A[i] ** 3
    return locals()
""", "f", (lambda d: lambda: ((rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(d),
                             (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(d),
                             np.zeros(N, d)))(_dt))


def same(a, b):
    if isinstance(a, np.ndarray):
        if not (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape):
            return False
        if a.dtype.kind in "fc":
            # Bit for bit, except the sign and payload of a NaN an operation produced, which
            # the guarantee leaves out (semantics.md): the GPU's conversions give the
            # canonical NaN where x86 keeps the operand's sign.
            x, y = a.view(a.real.dtype), b.view(b.real.dtype)
            nan = np.isnan(x)
            return bool((nan == np.isnan(y)).all()) and x[~nan].tobytes() == y[~nan].tobytes()
        return a.tobytes() == b.tobytes()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, np.generic):  # a NumPy scalar: as a 0-d array (a NaN equals a NaN)
        return type(a) is type(b) and same(np.asarray(a).reshape(1), np.asarray(b).reshape(1))
    if hasattr(a, "__dict__") and type(a).__eq__ is object.__eq__ and not isinstance(a, type):
        return type(a) is type(b) and same(vars(a), vars(b))  # a plain object: by its attributes
    return type(a) is type(b) and a == b


def _sprinkled_complex(d):
    big = float(np.finfo(np.dtype(d).type(0).real.dtype).max)
    a = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(d)
    b = (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(d)
    a[[300, 1500, 1900]] = [complex(big * 0.75, 1), complex(big, 1), complex(np.inf, 0)]
    b[[300, 1900]] = [complex(-big / 4, 0), 0j]  # subtract: overflow first; multiply: overflow, invalid
    return a, b, np.zeros(N, d)


for _dt in ("complex128", "complex64"):
    # NumPy's warnings from complex + - * / (default errstate), recorded on the device in
    # the order CPython raises them (lower_complex: ComplexWarn).
    case(f"{_dt}_warnings", """
def f(A, B, C):
    for i in range(A.shape[0]):
        C[i] = (A[i] - B[i] * 2) * A[i] / B[i]
    return locals()
""", "f", (lambda d: lambda: _sprinkled_complex(d))(_dt))


for _dt in ("complex128", "complex64"):
    case(f"{_dt}_sums", """
def f(A, B, C):
    s = 0j
    t = C.dtype.type(0)
    for i in range(A.shape[0]):
        C[i] = A[i] * B[i]
        s += C[i]
        t -= A[i]
    return locals()
""", "f", (lambda d: lambda: ((rng.integers(-9, 9, N) + 1j * rng.integers(-9, 9, N)).astype(d),
                             (rng.integers(-9, 9, N) - 1j * rng.integers(-9, 9, N)).astype(d),
                             np.zeros(N, d)))(_dt))
# (Integer parts: the sums are exact in any order. A NumPy complex sum is two float sums,
# the complex addition's warnings recorded as the other operations' are.)


def _sums_meeting_infinities():
    big = float(np.finfo(np.float64).max)
    a = (rng.integers(-9, 9, N) + 1j * rng.integers(-9, 9, N)).astype(np.complex128)
    a[[100, N // 2, N - 7]] = [complex(np.inf, 0), complex(-np.inf, 0), complex(big, 1)]
    x = rng.integers(-9, 9, N).astype(np.float64)
    x[[5, N // 3]] = [big, big]
    return a, x


# Tuples of numbers stored into rows: natively, on the CPU (stores into rows run in order).
case("tuples_into_rows", """
def f(P, x, y):
    for i in range(P.shape[0]):
        P[i] = (x[i] * 2.0, y[i] - x[i], 1.0)
    return P
""", "f", lambda: (np.zeros((N, 3)), rng.standard_normal(N), rng.standard_normal(N)),
     expect_gpu=False, why="rows or slices")


# NumPy sums whose parts combine into infinities or NaN (a loop that writes nothing): the
# combination is checked and the loop runs again in order on the CPU, so NumPy's warnings
# ("invalid value encountered in scalar add", an overflowing add) come as in CPython.
case("numpy_sums_meeting_infinities", """
def f(a, x):
    s = 0j
    t = np.float64(0)
    for i in range(a.shape[0]):
        s += a[i] * 2
        t += x[i]
    return s, t
""", "f", _sums_meeting_infinities)

class Particle:
    def __init__(self, x, v, m):
        self.x = x
        self.v = v
        self.m = m


    # Methods the cases call (a class of this module's: its methods read no globals).
    def step(self, dt):
        self.x += self.v * dt
        if self.x > 1.0 or self.x < 0.0:
            self.v = -self.v

    def pull(self, other, dt):
        d = other.x - self.x
        self.v += other.m * d / (d * d + 0.01) * dt


def _particles(n):
    return [Particle(float(a), float(b) - 0.5, float(c) + 0.5) for a, b, c in rng.random((n, 3))]


# Objects in a list, their attributes assigned (a table of attributes, set back on the objects).
case("objects_time_steps", """
def f(ps, dt):
    for t in range(10):
        for p in ps:
            p.x += p.v * dt
            if p.x > 1.0 or p.x < 0.0:
                p.v = -p.v
    return [(p.x, p.v) for p in ps]
""", "f", lambda: (_particles(N * 4), 0.01))

case("objects_pairwise_forces", """
def f(bs, dt):
    for a in bs:
        for b in bs:
            d = b.x - a.x
            a.v += b.m * d / (d * d + 0.01) * dt
    return [(b.x, b.v) for b in bs]
""", "f", lambda: (_particles(N // 2), 0.01))

# Methods on the objects: inlined as their functions, their attribute assignments at the end of
# each call.
case("methods_time_steps", """
def f(ps, dt):
    for t in range(10):
        for p in ps:
            p.step(dt)
    return [(p.x, p.v) for p in ps]
""", "f", lambda: (_particles(N * 4), 0.01))

case("methods_pairwise_forces", """
def f(bs, dt):
    for a in bs:
        for b in bs:
            a.pull(b, dt)
    return [(b.x, b.v) for b in bs]
""", "f", lambda: (_particles(N // 2), 0.01))


class Tagged:
    # Attributes of three kinds: an int, a float and a bool (a table with Type::columns).
    def __init__(self, i, x):
        self.id = i % 7
        self.x = x
        self.flag = x > 0.5


def _tagged(n):
    return [Tagged(i, float(x)) for i, x in enumerate(rng.random(n))]


case("objects_columns_of_kinds", """
def f(ps):
    for t in range(4):
        for p in ps:
            p.x = p.x * 0.5 + p.id
            p.flag = p.x > 3.0
            p.id = p.id % 5 if p.flag else p.id
    return [(p.id, p.x, p.flag) for p in ps]
""", "f", lambda: (_tagged(N * 8),))


def run(fn, args):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("default")
        try:
            out = fn(*args)
            err = None
        except Exception as e:  # noqa: BLE001 - compared, not handled
            out, err = None, f"{type(e).__name__}: {e}"
    return out, err, args, [(str(x.category.__name__), str(x.message), x.lineno) for x in w]


def main():
    results = []
    for c in CASES:
        ns = {"np": np, "math": math}
        exec(compile(c["src"], f"<gpu case {c['name']}>", "exec"), ns)
        fn = ns[c["fn"]]
        inputs = c["make"]()
        want = run(fn, copy.deepcopy(inputs))
        before = stagepy.gpu_info()
        stagepy.enable()
        try:
            got = run(fn, copy.deepcopy(inputs))
            got2 = run(fn, copy.deepcopy(inputs))  # a warm call: the cached kernel
        finally:
            stagepy.disable()
        after = stagepy.gpu_info()
        recs = [r for r in stagepy.report() if r["file"] == f"<gpu case {c['name']}>"]
        launches = sum(r.get("gpu_launches", 0) for r in recs)
        whys = [l["gpu"]["why_cpu"] for r in recs for l in r["loops"] if l.get("gpu")]
        grid2d = [l["gpu"]["nest_on_grid"] for r in recs for l in r["loops"] if l.get("gpu")]
        results.append(dict(name=c["name"], equal=same(want, got) and same(want, got2), launches=launches,
                            status=[r["status"] for r in recs], why=whys, grid2d=grid2d, expect_gpu=c["expect_gpu"],
                            expect_why=c["why"], error=want[1],
                            h2d_bytes=after.get("h2d_bytes", 0) - before.get("h2d_bytes", 0),
                            d2h_bytes=after.get("d2h_bytes", 0) - before.get("d2h_bytes", 0),
                            h2d_skipped_bytes=after.get("h2d_skipped_bytes", 0) - before.get("h2d_skipped_bytes", 0)))
        print(json.dumps(results[-1]), flush=True)
    print(json.dumps({"gpu_info": stagepy.gpu_info()}), flush=True)
    return results


if __name__ == "__main__":
    res = main()
    sys.exit(0 if all(r["equal"] for r in res) else 1)
