"""Copy bandwidth of stagepy's GPU path: an axpy over float64 arrays of 8 to 256 MB each,
forced onto the GPU, one call at a time; from stagepy.gpu_info() the bytes and seconds of the
copies to the device (x and y) and back (y). Run with STAGEPY_GPU_STAGING=0 for the driver's
own copies from pageable memory, and without it for stagepy's staged pinned copies.
CuPy's copies from pinned memory (cupy.cuda.alloc_pinned_memory) give the device's figure.

    PYTHONPATH=python python3 benchmarks/gpu_copies.py [--repeat 3] [--sizes 8,32,128,256]
"""
import argparse
import json
import os
import time

import numpy as np

import stagepy

SRC = """
def axpy(x, y, a):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
"""


def pinned_bandwidth(nbytes, repeat):
    """CuPy from and to page-locked host memory: the device's own copy bandwidth."""
    try:
        import cupy as cp
    except Exception:  # noqa: BLE001
        return None, None
    mem = cp.cuda.alloc_pinned_memory(nbytes)
    host = np.frombuffer(mem, np.uint8, nbytes)
    dev = cp.empty(nbytes, np.uint8)
    up = down = 1e9
    for _ in range(repeat):
        t0 = time.perf_counter()
        dev.set(host)
        cp.cuda.Device().synchronize()
        up = min(up, time.perf_counter() - t0)
        t0 = time.perf_counter()
        dev.get(out=host)
        cp.cuda.Device().synchronize()
        down = min(down, time.perf_counter() - t0)
    return nbytes / up / 1e9, nbytes / down / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="8,32,128,256", help="MB per array, comma-separated")
    args = ap.parse_args()
    ns = {}
    exec(compile(SRC, "<copies>", "exec"), ns)
    f = ns["axpy"]
    staged = os.environ.get("STAGEPY_GPU_STAGING", "1") != "0"
    stagepy.enable()
    stagepy.set_target("gpu")
    try:
        f(np.ones(1024), np.ones(1024), 2.0)  # compile, and the device's start-up, outside the figures
        for mb in [int(v) for v in args.sizes.split(",")]:
            n = mb * (1 << 20) // 8
            x, y = np.random.default_rng(0).random(n), np.zeros(n)
            best_up = best_down = 0.0
            best_call = 1e9
            for _ in range(args.repeat):
                before = stagepy.gpu_info()
                t0 = time.perf_counter()
                f(x, y, 2.0)
                call = time.perf_counter() - t0
                after = stagepy.gpu_info()
                up = (after["h2d_bytes"] - before["h2d_bytes"]) / max(after["h2d_s"] - before["h2d_s"], 1e-12)
                down = (after["d2h_bytes"] - before["d2h_bytes"]) / max(after["d2h_s"] - before["d2h_s"], 1e-12)
                best_up, best_down, best_call = max(best_up, up), max(best_down, down), min(best_call, call)
            print(json.dumps(dict(staged=staged, mb_per_array=mb, call_s=round(best_call, 4),
                                  up_gbs=round(best_up / 1e9, 2), down_gbs=round(best_down / 1e9, 2))), flush=True)
    finally:
        stagepy.set_target("auto")
        stagepy.disable()
    up, down = pinned_bandwidth(256 << 20, args.repeat)
    if up:
        print(json.dumps(dict(cupy_pinned_256mb_up_gbs=round(up, 2), down_gbs=round(down, 2))), flush=True)


if __name__ == "__main__":
    main()
