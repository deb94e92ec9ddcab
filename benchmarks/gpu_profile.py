"""Where a warm GPU call's time goes: for each kernel of benchmarks/gpu.py, the wall time of
warm calls with STAGEPY_TARGET=gpu split into copies to the device, kernels (first launch to
synchronisation), copies back, and the rest (dispatch, guards, the host's share of the call),
from `stagepy.gpu_info()` before and after each call.

    PYTHONPATH=python python3 benchmarks/gpu_profile.py [--repeat 5] [--quick] [--only a,b]

Two ways of calling: "fresh" builds the arguments anew before each call, as gpu.py does (new
output arrays whose pages the call touches first), "reused" calls again with the same arrays.
Milliseconds, median over `repeat` calls. Run on the GPU machine (no device: nothing to split).
"""
import argparse
import statistics
import time

import numpy as np

import stagepy
from gpu import SRC


def cases(q):
    rng = np.random.default_rng(0)
    n, T = (1024, 10) if q else (4096, 20)
    A0 = rng.random((n, n))
    yield "jacobi2d", lambda: (A0.copy(), np.zeros((n, n)), T)
    n = 256 if q else 1024
    A, B = rng.random((n, n)), rng.random((n, n))
    yield "gemm", lambda: (A, B, np.zeros((n, n)))
    h, w, maxit = (256, 384, 100) if q else (1024, 1536, 200)
    yield "mandelbrot", lambda: (np.zeros((h, w), dtype=np.int64), maxit)
    n = 1 << 20 if q else 1 << 24
    xd = rng.integers(-8, 8, n).astype(np.float64)
    yd = rng.integers(-8, 8, n).astype(np.float64)
    yield "dot", lambda: (xd, yd, np.zeros(1))
    n, T = (1 << 20, 10) if q else (1 << 24, 20)
    x0 = rng.random(n)
    yield "axpy_steps", lambda: (x0, np.zeros(n), 1.5, T)
    n, T = (1 << 18, 10) if q else (1 << 22, 20)
    A0c = rng.random(n) + 1j * rng.random(n)
    B0c = rng.random(n) + 1j * rng.random(n)
    yield "cmul_steps", lambda: (A0c, B0c, np.zeros(n, np.complex128), T)


KEYS = ("h2d_s", "kernel_s", "d2h_s", "launches", "h2d_bytes", "d2h_bytes")


def profile(f, args):
    a = stagepy.gpu_info()
    t0 = time.perf_counter()
    f(*args)
    wall = time.perf_counter() - t0
    b = stagepy.gpu_info()
    d = {k: b.get(k, 0) - a.get(k, 0) for k in KEYS}  # (builds before kernel_s: in the rest)
    d["wall_s"] = wall
    d["rest_s"] = wall - d["h2d_s"] - d["kernel_s"] - d["d2h_s"]
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    ns = {}
    exec(compile(SRC, "<bench>", "exec"), ns)
    info = stagepy.gpu_info()
    print("device:", info.get("name"), "enabled:", info.get("enabled"), info.get("why_not", ""))
    stagepy.enable()
    stagepy.set_target("gpu")
    print(f"{'kernel':12} {'calls':7} {'wall':>8} {'h2d':>8} {'kernel':>8} {'d2h':>8} {'rest':>8} "
          f"{'launches':>8} {'MB up':>8} {'MB back':>8}")
    try:
        for name, make in cases(args.quick):
            if only and name not in only:
                continue
            f = ns[name]
            f(*make())  # compile
            stagepy.finish_compiles()
            for how in ("fresh", "reused"):
                fixed = make()
                rows = [profile(f, make() if how == "fresh" else fixed) for _ in range(args.repeat)]
                med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
                print(f"{name:12} {how:7} {med['wall_s']*1e3:8.3f} {med['h2d_s']*1e3:8.3f} "
                      f"{med['kernel_s']*1e3:8.3f} {med['d2h_s']*1e3:8.3f} {med['rest_s']*1e3:8.3f} "
                      f"{med['launches']:8.0f} {med['h2d_bytes']/1e6:8.1f} {med['d2h_bytes']/1e6:8.1f}", flush=True)
    finally:
        stagepy.disable()
        stagepy.set_target("auto")


if __name__ == "__main__":
    main()
