"""First-sight analysis time of big loop nests (PolyBench kernels written as plain loops):
the report's `analysis_s` (lifting, the polyhedral model, and the conditions derived with isl
from symbolic bounds), per nest, with the kernel cache off. Each kernel is defined anew for each
repeat (a new code object is analysed again); the table gives the best of the repeats. Small
sizes: the kernels run once each, the time is the analysis's, not the run's.

    python benchmarks/analysis_time.py [--repeat N]
"""
import argparse
import os

os.environ["STAGEPY_CACHE"] = "0"  # before stagepy is imported: every nest is compiled

import numpy as np  # noqa: E402

SOURCE = """
def adi(tsteps, n, u, v, p, q, a, b, c, d, e, f):
    for t in range(1, tsteps + 1):
        for i in range(1, n - 1):
            v[0, i] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = v[0, i]
            for j in range(1, n - 1):
                p[i, j] = -c / (a * p[i, j - 1] + b)
                q[i, j] = (-d * u[j, i - 1] + (1.0 + 2.0 * d) * u[j, i] - f * u[j, i + 1]
                           - a * q[i, j - 1]) / (a * p[i, j - 1] + b)
            v[n - 1, i] = 1.0
            for j in range(n - 2, 0, -1):
                v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
        for i in range(1, n - 1):
            u[i, 0] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = u[i, 0]
            for j in range(1, n - 1):
                p[i, j] = -f / (d * p[i, j - 1] + e)
                q[i, j] = (-a * v[i - 1, j] + (1.0 + 2.0 * a) * v[i, j] - c * v[i + 1, j]
                           - d * q[i, j - 1]) / (d * p[i, j - 1] + e)
            u[i, n - 1] = 1.0
            for j in range(n - 2, 0, -1):
                u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]

def heat3d(tsteps, n, A, B):
    for t in range(1, tsteps + 1):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    B[i, j, k] = (0.125 * (A[i + 1, j, k] - 2.0 * A[i, j, k] + A[i - 1, j, k])
                                  + 0.125 * (A[i, j + 1, k] - 2.0 * A[i, j, k] + A[i, j - 1, k])
                                  + 0.125 * (A[i, j, k + 1] - 2.0 * A[i, j, k] + A[i, j, k - 1])
                                  + A[i, j, k])
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    A[i, j, k] = (0.125 * (B[i + 1, j, k] - 2.0 * B[i, j, k] + B[i - 1, j, k])
                                  + 0.125 * (B[i, j + 1, k] - 2.0 * B[i, j, k] + B[i, j - 1, k])
                                  + 0.125 * (B[i, j, k + 1] - 2.0 * B[i, j, k] + B[i, j, k - 1])
                                  + B[i, j, k])

def fdtd2d(tmax, nx, ny, ex, ey, hz, fict):
    for t in range(tmax):
        for j in range(ny):
            ey[0, j] = fict[t]
        for i in range(1, nx):
            for j in range(ny):
                ey[i, j] = ey[i, j] - 0.5 * (hz[i, j] - hz[i - 1, j])
        for i in range(nx):
            for j in range(1, ny):
                ex[i, j] = ex[i, j] - 0.5 * (hz[i, j] - hz[i, j - 1])
        for i in range(nx - 1):
            for j in range(ny - 1):
                hz[i, j] = hz[i, j] - 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])

def nussinov(n, seq, table):
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < n:
                if i < j - 1:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + (1 if seq[i] + seq[j] == 3 else 0))
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])

def gramschmidt(m, n, A, R, Q):
    for k in range(n):
        nrm = 0.0
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = np.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = 0.0
            for i in range(m):
                R[k, j] += Q[i, k] * A[i, j]
            for i in range(m):
                A[i, j] = A[i, j] - Q[i, k] * R[k, j]

def gemm(ni, nj, nk, alpha, beta, C, A, B):
    for i in range(ni):
        for j in range(nj):
            C[i, j] *= beta
        for k in range(nk):
            for j in range(nj):
                C[i, j] += alpha * A[i, k] * B[k, j]
"""


def cases():
    rng = np.random.default_rng(0)
    n = 12
    sq = lambda *shape: rng.random(shape) + 1.0  # noqa: E731
    return {
        "adi": (2, n, sq(n, n), sq(n, n), sq(n, n), sq(n, n), -0.5, 2.0, -0.5, -0.25, 1.5, -0.25),
        "heat3d": (2, 8, sq(8, 8, 8), sq(8, 8, 8)),
        "fdtd2d": (2, n, n + 2, sq(n, n + 2), sq(n, n + 2), sq(n, n + 2), np.arange(2.0)),
        "nussinov": (n, np.arange(n) % 4, np.zeros((n, n), dtype=np.int64)),
        "gramschmidt": (n + 2, n, sq(n + 2, n), np.zeros((n, n)), np.zeros((n + 2, n))),
        "gemm": (n, n + 1, n + 2, 1.5, 1.2, sq(n, n + 1), sq(n, n + 2), sq(n + 2, n + 1)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    import stagepy
    best = {}
    for r in range(args.repeat):
        ns = {"np": np}
        code = compile(SOURCE, f"<analysis {r}>", "exec")
        with stagepy.enable():
            exec(code, ns)
            for name, a in cases().items():
                ns[name](*a)
        for rec in stagepy.report():
            if rec["file"] != f"<analysis {r}>" or rec["function"] not in ns:
                continue
            key = (rec["function"], rec["line"])
            entry = (rec["analysis_s"] * 1e3, rec["status"], sum(1 for lp in rec["loops"] if lp.get("parallel")))
            if key not in best or entry[0] < best[key][0]:
                best[key] = entry
    print("| nest (function:line) | analysis (ms), best of %d | ran | parallel loops |" % args.repeat)
    print("|---|---|---|---|")
    total = 0.0
    for (fn, line), (ms, status, par) in sorted(best.items(), key=lambda kv: kv[0][1]):
        total += ms
        print(f"| {fn}:{line} | {ms:.1f} | {status} | {par} |")
    print(f"| all | {total:.1f} | | |")


if __name__ == "__main__":
    main()
