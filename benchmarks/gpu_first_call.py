"""Where a first GPU call's time goes, in a fresh process (docs/benchmarks.md, "First GPU call").

    PYTHONPATH=python STAGEPY_CACHE=0 STAGEPY_TARGET=gpu python3 benchmarks/gpu_first_call.py raw|cold|warm

raw: the CUDA driver alone through ctypes (cuInit, the primary context, three module loads);
cold: Mandelbrot's first call in a process that has not used stagepy or CUDA yet; warm: the
same after a small nest has started stagepy's runtime and CUDA.
"""
import ctypes, time, sys, os
t0 = time.perf_counter()
def lap(what):
    global t0
    t = time.perf_counter(); print(f"{what}: {(t - t0) * 1e3:.1f} ms", flush=True); t0 = t
mode = sys.argv[1]
if mode == "raw":
    cu = ctypes.CDLL("libcuda.so.1")
    cu.cuInit(0); lap("cuInit")
    dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
    ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); lap("primary ctx retain")
    cu.cuCtxSetCurrent(ctx); lap("set current")
    ptx = b""".version 7.8
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) { ret; }
"""
    for k in range(3):
        mod = ctypes.c_void_p()
        r = cu.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.c_char_p(ptx + b"// %d\n" % k), 0, None, None); lap(f"module load {k} (rc {r})")
    p = ctypes.c_void_p(); r = cu.cuMemAlloc_v2(ctypes.byref(p), 1 << 20); lap(f"first alloc rc {r}")
    sys.exit()
import numpy as np
lap("import numpy")
import stagepy
lap("import stagepy")
stagepy.enable()
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
def axpy(x, y, a):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
lap("defs")
if mode == "warm":
    z = np.zeros(10); axpy(z, z.copy(), 2.0); lap("warm-up nest (runtime start-up)")
    print(stagepy.gpu_info()); lap("gpu_info")
out = np.zeros((1024, 1536), dtype=np.int64)
mandelbrot(out, 200); lap("first mandelbrot call")
mandelbrot(out, 200); lap("second mandelbrot call")
for r in stagepy.report():
    if r["function"] == "mandelbrot":
        print(r.get("compile_phases"), r.get("analysis_s"), r.get("gpu"))
