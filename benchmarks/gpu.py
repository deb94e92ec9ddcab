"""GPU benchmarks (issue 5): the same undecorated Python loop nests under stagepy on the
GPU and on the CPU's threads, against CuPy (NumPy-style code on the GPU) and numba.cuda
(a hand-written kernel), in one run on the GPU machine.

    PYTHONPATH=python python3 benchmarks/gpu.py [--repeat 3] [--quick]

Times are the best of `repeat` warm calls (seconds, wall clock, including every copy
between host and device that the call makes; CuPy and numba.cuda get their arrays on the
device before the clock starts, so their figures exclude the copies). "first" is stagepy's
first call on the GPU: analysis, LLVM (CPU and PTX), module load, and the run. The
stagepy GPU and CPU results are compared bit for bit.
"""
import argparse
import json
import math
import sys
import textwrap
import time

import numpy as np

import stagepy

SRC = textwrap.dedent("""
def jacobi2d(A, B, T):
    n = A.shape[0]
    for t in range(T):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i - 1, j] + B[i + 1, j] + B[i, j - 1] + B[i, j + 1])

def jacobi2d_while(A, B, T):
    n = A.shape[0]
    t = 0
    while t < T:
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i - 1, j] + B[i + 1, j] + B[i, j - 1] + B[i, j + 1])
        t += 1

def gemm(A, B, C):
    n, m = A.shape
    p = B.shape[1]
    for i in range(n):
        for j in range(p):
            s = 0.0
            for k in range(m):
                s += A[i, k] * B[k, j]
            C[i, j] = s

def mandelbrot(out, maxit):
    h, w = out.shape
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

def dot(x, y, out):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    out[0] = s

def cmul_steps(A, B, C, T):
    for t in range(T):
        for j in range(A.shape[0]):
            C[j] = A[j] * B[j] + C[j]

def axpy_steps(x, y, a, T):
    for t in range(T):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]
""")


def best(f, repeat):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def device_best(run, sync, repeat):
    """Best of `repeat` timed calls of run() (on data already on the device), each waited for
    with sync(), after one untimed call (compilation, caches)."""
    run()
    sync()
    ts = []
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        run()
        sync()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def stagepy_times(fn, make, repeat):
    """(first GPU call, warm GPU, warm CPU, results equal, warm with the default target
    `auto`: the cost model, which measures both after a first call on each)."""
    ns = {}
    exec(compile(SRC, "<bench>", "exec"), ns)
    f = ns[fn]
    out = {}
    res = {}
    stagepy.enable()
    try:
        for target in ("gpu", "cpu", "auto"):
            stagepy.set_target(target)
            args = make()
            t0 = time.perf_counter()
            f(*args)
            first = time.perf_counter() - t0
            stagepy.finish_compiles()  # warm calls run the fully compiled kernel, nothing compiling beside them
            res[target] = [a.copy() for a in args if isinstance(a, np.ndarray)]
            out[target] = (first, best(lambda: f(*make()), repeat) if repeat else first)
    finally:
        stagepy.disable()
        stagepy.set_target("auto")
    equal = all(a.tobytes() == b.tobytes() for a, b in zip(res["gpu"], res["cpu"]))
    # The make() inside the timed lambda allocates inputs: time it alone and subtract.
    alloc = best(make, repeat)
    return out["gpu"][0], out["gpu"][1] - alloc, out["cpu"][1] - alloc, equal, out["auto"][1] - alloc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    q = args.quick
    rng = np.random.default_rng(0)
    rows = []

    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        cp = None
        print("no CuPy:", e)
    try:
        np.row_stack = getattr(np, "row_stack", np.vstack)  # numba.cuda's typing registry needs it (NumPy 2.5)
        from numba import cuda
        if not cuda.is_available():
            cuda = None
    except Exception as e:  # noqa: BLE001
        cuda = None
        print("no numba.cuda:", e)

    def sync():
        if cp is not None:
            cp.cuda.Device().synchronize()

    # ---------------------------------------------------------------- jacobi-2d
    n, T = (1024, 10) if q else (4096, 20)
    A0 = rng.random((n, n))
    make = lambda: (A0.copy(), np.zeros((n, n)), T)  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("jacobi2d", make, args.repeat)
    row = dict(kernel=f"jacobi-2d {n}x{n}, {T} steps", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t, stagepy_auto=auto_t, equal=eq)
    if cp is not None:
        def cupy_jacobi():
            A = cp.asarray(A0)
            B = cp.zeros_like(A)
            sync()
            t0 = time.perf_counter()
            for _ in range(T):
                B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
                A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[:-2, 1:-1] + B[2:, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:])
            sync()
            return time.perf_counter() - t0
        row["cupy"] = min(cupy_jacobi() for _ in range(args.repeat))
    if cuda is not None:
        @cuda.jit
        def jstep(A, B):
            i, j = cuda.grid(2)
            if 1 <= i < A.shape[0] - 1 and 1 <= j < A.shape[1] - 1:
                B[i, j] = 0.2 * (A[i, j] + A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])

        def numba_jacobi():
            A = cuda.to_device(A0)
            B = cuda.to_device(np.zeros((n, n)))
            grid = ((n + 15) // 16, (n + 15) // 16)
            jstep[grid, (16, 16)](A, B)
            cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(T):
                jstep[grid, (16, 16)](A, B)
                jstep[grid, (16, 16)](B, A)
            cuda.synchronize()
            return time.perf_counter() - t0
        row["numba_cuda"] = min(numba_jacobi() for _ in range(args.repeat))
    row["bytes_per_step"] = 2 * 2 * n * n * 8
    rows.append(row)
    print(json.dumps(row), flush=True)
    # The same steps under `t = 0; while t < T:` (one nest: the data stays on the device).
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("jacobi2d_while", make, args.repeat)
    row = dict(kernel=f"jacobi-2d {n}x{n}, {T} steps, while t < T", first=first, stagepy_gpu=gpu_t,
               stagepy_cpu=cpu_t, stagepy_auto=auto_t, equal=eq, bytes_per_step=2 * 2 * n * n * 8)
    rows.append(row)
    print(json.dumps(row), flush=True)

    # ---------------------------------------------------------------- gemm
    n = 256 if q else 1024
    A, B = rng.random((n, n)), rng.random((n, n))
    make = lambda: (A, B, np.zeros((n, n)))  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("gemm", make, args.repeat)
    row = dict(kernel=f"gemm i-j-k {n}", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t, stagepy_auto=auto_t, equal=eq)
    if cp is not None:
        dA, dB = cp.asarray(A), cp.asarray(B)
        row["cupy"] = device_best(lambda: cp.matmul(dA, dB), sync, args.repeat)
    if cuda is not None:
        @cuda.jit
        def mm(A, B, C):
            i, j = cuda.grid(2)
            if i < C.shape[0] and j < C.shape[1]:
                s = 0.0
                for k in range(A.shape[1]):
                    s += A[i, k] * B[k, j]
                C[i, j] = s
        dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.to_device(np.zeros((n, n)))
        grid = ((n + 15) // 16, (n + 15) // 16)
        row["numba_cuda"] = device_best(lambda: mm[grid, (16, 16)](dA, dB, dC), cuda.synchronize, args.repeat)
    rows.append(row)
    print(json.dumps(row), flush=True)

    # ---------------------------------------------------------------- mandelbrot
    h, w, maxit = (256, 384, 100) if q else (1024, 1536, 200)
    make = lambda: (np.zeros((h, w), dtype=np.int64), maxit)  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("mandelbrot", make, args.repeat)
    row = dict(kernel=f"mandelbrot {h}x{w}, maxit {maxit}", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t,
               stagepy_auto=auto_t, equal=eq)
    if cuda is not None:
        @cuda.jit
        def mb(out, maxit):
            y, x = cuda.grid(2)
            hh, ww = out.shape
            if y < hh and x < ww:
                cr = -2.0 + 3.0 * x / ww
                ci = -1.5 + 3.0 * y / hh
                zr = 0.0
                zi = 0.0
                k = 0
                while k < maxit and zr * zr + zi * zi < 4.0:
                    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                    k += 1
                out[y, x] = k
        d = cuda.to_device(np.zeros((h, w), dtype=np.int64))
        grid = ((h + 15) // 16, (w + 15) // 16)
        row["numba_cuda"] = device_best(lambda: mb[grid, (16, 16)](d, maxit), cuda.synchronize, args.repeat)
    rows.append(row)
    print(json.dumps(row), flush=True)

    # ---------------------------------------------------------------- a reduction
    # Small integers as floats: the sum is exact in any order, so GPU and CPU compare bit for bit.
    n = 1 << 20 if q else 1 << 24
    xd = rng.integers(-8, 8, n).astype(np.float64)
    yd = rng.integers(-8, 8, n).astype(np.float64)
    make = lambda: (xd, yd, np.zeros(1))  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("dot", make, args.repeat)
    row = dict(kernel=f"dot product {n}", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t, stagepy_auto=auto_t,
               equal=eq)
    if cp is not None:
        dx, dy = cp.asarray(xd), cp.asarray(yd)
        row["cupy"] = device_best(lambda: cp.dot(dx, dy), sync, args.repeat)
    rows.append(row)
    print(json.dumps(row), flush=True)

    # ---------------------------------------------------------------- axpy with a time loop
    n, T = (1 << 20, 10) if q else (1 << 24, 20)
    x0 = rng.random(n)
    make = lambda: (x0, np.zeros(n), 1.5, T)  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("axpy_steps", make, args.repeat)
    row = dict(kernel=f"axpy {n}, {T} steps", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t, stagepy_auto=auto_t, equal=eq)
    if cp is not None:
        dx = cp.asarray(x0)
        def cupy_axpy():
            y = cp.zeros(n)
            sync()
            t0 = time.perf_counter()
            for _ in range(T):
                y = 1.5 * dx + y
            sync()
            return time.perf_counter() - t0
        row["cupy"] = min(cupy_axpy() for _ in range(args.repeat))
    rows.append(row)
    print(json.dumps(row), flush=True)

    # ---------------------------------------------------------------- NumPy complex, default warnings
    # complex128 products under NumPy's default errstate: the kernel records NumPy's
    # overflow/invalid warnings itself (none arise with these values).
    n, T = (1 << 18, 10) if q else (1 << 22, 20)
    A0 = (rng.random(n) + 1j * rng.random(n)) * 0.5
    B0 = (rng.random(n) - 0.5 + 1j * (rng.random(n) - 0.5)) * 0.5
    make = lambda: (A0, B0, np.zeros(n, np.complex128), T)  # noqa: E731
    first, gpu_t, cpu_t, eq, auto_t = stagepy_times("cmul_steps", make, args.repeat)
    row = dict(kernel=f"complex128 C = A*B + C {n}, {T} steps", first=first, stagepy_gpu=gpu_t, stagepy_cpu=cpu_t,
               stagepy_auto=auto_t, equal=eq)
    if cp is not None:
        dA, dB = cp.asarray(A0), cp.asarray(B0)
        def cupy_cmul():
            C = cp.zeros(n, cp.complex128)
            sync()
            t0 = time.perf_counter()
            for _ in range(T):
                C = dA * dB + C
            sync()
            return time.perf_counter() - t0
        row["cupy"] = min(cupy_cmul() for _ in range(args.repeat))
    if cuda is not None:
        @cuda.jit
        def cm(A, B, C):
            j = cuda.grid(1)
            if j < C.shape[0]:
                C[j] = A[j] * B[j] + C[j]

        def numba_cmul():
            dA, dB, dC = cuda.to_device(A0), cuda.to_device(B0), cuda.to_device(np.zeros(n, np.complex128))
            cm[(n + 255) // 256, 256](dA, dB, dC)
            cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(T):
                cm[(n + 255) // 256, 256](dA, dB, dC)
            cuda.synchronize()
            return time.perf_counter() - t0
        row["numba_cuda"] = min(numba_cmul() for _ in range(args.repeat))
    rows.append(row)
    print(json.dumps(row), flush=True)
    print(json.dumps({"gpu_info": stagepy.gpu_info()}), flush=True)
    for r in stagepy.report():
        for l in r["loops"]:
            if l.get("gpu"):
                print(json.dumps({"function": r["function"], "loop_line": l["line"], "gpu": l["gpu"],
                                  "compile_phases": r["compile_phases"]}))


if __name__ == "__main__":
    main()
