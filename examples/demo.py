"""A plain script with no stagepy in it: heat diffusion on a plate, a matrix product and a
Mandelbrot count, written as loops over NumPy arrays. Run it with `STAGEPY=1` to see the
loop nests run natively (and STAGEPY_REPORT=1 for the report)."""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 120
t0 = time.perf_counter()

# 1. Heat diffusion with a time loop (module-level code).
u = np.zeros((n, n))
u[0, :] = 100.0
v = u.copy()
for step in range(100):
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            v[i, j] = u[i, j] + 0.2 * (u[i + 1, j] + u[i - 1, j] + u[i, j + 1] + u[i, j - 1] - 4.0 * u[i, j])
    u, v = v, u
print(f"heat: centre {u[n // 2, n // 2]:.6f}, edge {u[1, n // 2]:.6f}")


# 2. A matrix product in a function.
def matmul(A, B, C):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            acc = 0.0
            for k in range(A.shape[1]):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


rng = np.random.default_rng(1)
A, B = rng.random((n, n)), rng.random((n, n))
C = np.zeros((n, n))
matmul(A, B, C)
print(f"matmul: max |C - A@B| = {np.abs(C - A @ B).max():.2e}")


# 3. Mandelbrot escape counts with a while loop.
def mandelbrot(counts, maxit):
    h, w = counts.shape
    for y in range(h):
        for x in range(w):
            cr, ci = -2.0 + 2.5 * x / w, -1.25 + 2.5 * y / h
            zr = zi = 0.0
            k = 0
            while k < maxit and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                k += 1
            counts[y, x] = k


counts = np.zeros((n, n), dtype=np.int32)
mandelbrot(counts, 200)
print(f"mandelbrot: {int((counts == 200).sum())} points inside")
print(f"elapsed {time.perf_counter() - t0:.2f} s", file=sys.stderr)
