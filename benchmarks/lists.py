"""PolyBench/Python-style kernels on Python lists of lists: CPython vs stagepy.

    python benchmarks/lists.py [--scale 1.0] [--repeat 3] [--only gemm,...]

The kernels are written the way PolyBench/Python writes its default (list) versions:
methods of a class that read their sizes and scalars from `self` and index `A[i][j]`.
Each runs on fresh lists per repetition:
  CPython       - the source as is;
  stagepy first - the first call with stagepy enabled (analysis, compile, conversion);
  stagepy       - best of the warm calls;
  convert       - of that, reading the lists into buffers and writing the changed
                  elements back (the report's convert_s, per call);
and the results are checked equal to CPython's (lists compared element by element).
A benchmark, not a test: figures go to docs/benchmarks.md.
"""
import argparse
import random
import sys
import textwrap
import time

SOURCE = textwrap.dedent("""
    class PolyBench:
        def __init__(self, n, data):
            self.N = n
            self.alpha = 1.5
            self.beta = 1.2
            for k, v in data.items():
                setattr(self, k, v)

        def gemm(self):
            for i in range(self.N):
                for j in range(self.N):
                    self.C[i][j] *= self.beta
                for k in range(self.N):
                    for j in range(self.N):
                        self.C[i][j] += self.alpha * self.A[i][k] * self.B[k][j]

        def k2mm(self):
            for i in range(self.N):
                for j in range(self.N):
                    self.tmp[i][j] = 0.0
                    for k in range(self.N):
                        self.tmp[i][j] += self.alpha * self.A[i][k] * self.B[k][j]
            for i in range(self.N):
                for j in range(self.N):
                    self.D[i][j] *= self.beta
                    for k in range(self.N):
                        self.D[i][j] += self.tmp[i][k] * self.C[k][j]

        def jacobi_2d(self, steps):
            for t in range(steps):
                for i in range(1, self.N - 1):
                    for j in range(1, self.N - 1):
                        self.B[i][j] = 0.2 * (self.A[i][j] + self.A[i][j - 1] + self.A[i][1 + j]
                                              + self.A[1 + i][j] + self.A[i - 1][j])
                for i in range(1, self.N - 1):
                    for j in range(1, self.N - 1):
                        self.A[i][j] = 0.2 * (self.B[i][j] + self.B[i][j - 1] + self.B[i][1 + j]
                                              + self.B[1 + i][j] + self.B[i - 1][j])

        def seidel_2d(self, steps):
            for t in range(steps):
                for i in range(1, self.N - 1):
                    for j in range(1, self.N - 1):
                        self.A[i][j] = (self.A[i - 1][j - 1] + self.A[i - 1][j] + self.A[i - 1][j + 1]
                                        + self.A[i][j - 1] + self.A[i][j] + self.A[i][j + 1]
                                        + self.A[i + 1][j - 1] + self.A[i + 1][j] + self.A[i + 1][j + 1]) / 9.0

        def mvt_pythonic(self):
            # mvt's first product as idiomatic Python writes it: rows, enumerate, zip.
            for i, row in enumerate(self.A):
                acc = 0.0
                for a, y in zip(row, self.y1):
                    acc += a * y
                self.x1[i] += acc

        def floyd_warshall(self):
            for k in range(self.N):
                for i in range(self.N):
                    for j in range(self.N):
                        if self.path[i][k] + self.path[k][j] < self.path[i][j]:
                            self.path[i][j] = self.path[i][k] + self.path[k][j]
""")


def mat(n, seed, kind=float):
    r = random.Random(seed)
    if kind is int:
        return [[r.randint(1, 100) for _ in range(n)] for _ in range(n)]
    return [[r.random() for _ in range(n)] for _ in range(n)]


def vec(n, seed):
    r = random.Random(seed)
    return [r.random() for _ in range(n)]


KERNELS = {
    # name: (size at scale 1, data, call)
    "gemm": (260, lambda n: {"A": mat(n, 1), "B": mat(n, 2), "C": mat(n, 3)}, lambda o: o.gemm()),
    "2mm": (200, lambda n: {"A": mat(n, 1), "B": mat(n, 2), "C": mat(n, 3), "D": mat(n, 4), "tmp": mat(n, 5)},
            lambda o: o.k2mm()),
    "jacobi-2d": (500, lambda n: {"A": mat(n, 1), "B": mat(n, 2)}, lambda o: o.jacobi_2d(10)),
    "seidel-2d": (400, lambda n: {"A": mat(n, 1)}, lambda o: o.seidel_2d(10)),
    "floyd-warshall": (180, lambda n: {"path": mat(n, 7, int)}, lambda o: o.floyd_warshall()),
    "mvt-rows": (1500, lambda n: {"A": mat(n, 1), "y1": vec(n, 2), "x1": vec(n, 3)}, lambda o: o.mvt_pythonic()),
}
OUTPUTS = {"gemm": ["C"], "2mm": ["D"], "jacobi-2d": ["A", "B"], "seidel-2d": ["A"], "floyd-warshall": ["path"],
           "mvt-rows": ["x1"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import stagepy


    ns_py = {}
    exec(compile(SOURCE, "<polybench-lists>", "exec"), ns_py)
    with stagepy.enable():
        ns_sp = {}
        exec(compile(SOURCE, "<polybench-lists-stagepy>", "exec"), ns_sp)

    def rec_of(name):
        method = {"2mm": "k2mm", "mvt-rows": "mvt_pythonic"}.get(name, name.replace("-", "_"))
        rows = [r for r in stagepy.report() if r["function"] == "PolyBench." + method]
        return rows[0] if rows else None

    print(f"{'kernel':<16}{'n':>5}{'CPython':>10}{'stagepy 1st':>13}{'stagepy':>10}{'convert':>10}{'speedup':>9}  where")
    only = [x for x in args.only.split(",") if x]
    for name, (n0, data, call) in KERNELS.items():
        if only and name not in only:
            continue
        n = max(8, int(n0 * args.scale))
        o = ns_py["PolyBench"](n, data(n))
        t = time.perf_counter()
        call(o)
        t_py = time.perf_counter() - t
        want = [getattr(o, k) for k in OUTPUTS[name]]
        best = first = None
        conv = 0.0
        with stagepy.enable():
            for rep in range(args.repeat + 1):
                o = ns_sp["PolyBench"](n, data(n))
                r0 = rec_of(name)
                c0 = r0["convert_s"] if r0 else 0.0
                t = time.perf_counter()
                call(o)
                dt = time.perf_counter() - t
                r1 = rec_of(name)
                got = [getattr(o, k) for k in OUTPUTS[name]]
                if got != want:
                    sys.exit(f"{name}: stagepy's result differs from CPython's")
                if rep == 0:
                    first = dt
                elif best is None or dt < best:
                    best, conv = dt, (r1["convert_s"] - c0 if r1 else 0.0)
        r = rec_of(name)
        where = (r["status"] + (f" x{r['threads']}" if r.get("threads", 1) > 1 else "")) if r and r["native_calls"] \
            else "interpreted: " + (r["reason"] if r else "?")
        print(f"{name:<16}{n:>5}{t_py:>9.3f}s{first:>12.3f}s{best:>9.4f}s{conv * 1e3:>8.2f}ms{t_py / best:>8.0f}x  {where}")
        sys.stdout.flush()



if __name__ == "__main__":
    main()
