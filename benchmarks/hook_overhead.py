"""Cost of the frame-evaluation hook on call-heavy code that has nothing to accelerate.

Runs a call-heavy program (recursive fib twice, then a small object-heavy workload; beside
them a function with a loop stagepy runs natively, called once first) in fresh processes,
with no hook, with `STAGEPY=1` (the hook on from the start: the module's own code is
replaced too) and with `stagepy.enable()` as the script's first line (the module's frame
runs its original code, which defines the functions), and prints the minimum wall time of
each part and the ratios. The first fib call carries the
one-time cost of discovery (the hook sees every frame until it steps aside, then sweeps
the live functions once); the later parts show the steady state.

    python benchmarks/hook_overhead.py [--runs 7] [--python PY ...]

A benchmark, not a test: the figures go to docs/benchmarks.md.
"""
import argparse
import os
import subprocess
import sys
import textwrap

WORKLOAD = textwrap.dedent("""
    import time

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    class Vec:
        __slots__ = ("x", "y")
        def __init__(self, x, y):
            self.x = x
            self.y = y
        def add(self, o):
            return Vec(self.x + o.x, self.y + o.y)
        def norm2(self):
            return self.x * self.x + self.y * self.y

    def objects(n):
        acc = Vec(0, 0)
        d = {}
        for i in range(n):
            v = Vec(i, -i)
            acc = acc.add(v)
            d[i % 97] = v.norm2()
        return acc.norm2() + sum(d.values())

    def total(a):
        s = 0
        for i in range(len(a)):
            s += a[i]
        return s

    total(list(range(1000)))
    t0 = time.perf_counter()
    fib(30)
    t1 = time.perf_counter()
    fib(30)
    t2 = time.perf_counter()
    objects(300_000)
    t3 = time.perf_counter()
    print(f"{t1 - t0:.6f} {t2 - t1:.6f} {t3 - t2:.6f}")
""")


def run(python, env_extra, runs, enable=False):
    env = dict(os.environ)
    env.pop("STAGEPY", None)
    env.update(env_extra)
    best = [float("inf")] * 3
    src = ("import stagepy; stagepy.enable()\n" if enable else "") + WORKLOAD
    for _ in range(runs):
        out = subprocess.run([python, "-c", src], env=env, capture_output=True, text=True, check=True)
        best = [min(b, float(x)) for b, x in zip(best, out.stdout.split())]
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--python", nargs="*", default=[sys.executable])
    args = ap.parse_args()
    print("| Python | workload | no hook (s) | STAGEPY=1 (s) | ratio | enable() (s) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for py in args.python:
        ver = subprocess.run([py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                             capture_output=True, text=True, check=True).stdout.strip()
        # Interleave the two configurations so machine noise hits both alike.
        plain, hooked, enabled = [float("inf")] * 3, [float("inf")] * 3, [float("inf")] * 3
        for _ in range(args.runs):
            p = run(py, {}, 1)
            h = run(py, {"STAGEPY": "1"}, 1)
            e = run(py, {}, 1, enable=True)
            plain = [min(a, b) for a, b in zip(plain, p)]
            hooked = [min(a, b) for a, b in zip(hooked, h)]
            enabled = [min(a, b) for a, b in zip(enabled, e)]
        names = ["fib(30), first call (the hook's discovery and its one-time sweep included)",
                 "fib(30), second call", "objects(3e5)"]
        for i, name in enumerate(names):
            print(f"| {ver} | {name} | {plain[i]:.4f} | {hooked[i]:.4f} | {hooked[i] / plain[i]:.3f} "
                  f"| {enabled[i]:.4f} | {enabled[i] / plain[i]:.3f} |")


if __name__ == "__main__":
    main()
