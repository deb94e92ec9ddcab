"""Tier-up (docs/architecture.md): the calls of a kernel before and after its fully compiled
code arrives, on every core.

    STAGEPY_CACHE=0 python benchmarks/tier_up.py [--only gemm,stencil,nbody] [--repeat 5]

For each kernel of benchmarks/kernels.py: the first call (wall time), the best of `repeat`
calls on the quickly compiled code (taken while the background compile runs, so they also
compete with it for the cores), then stagepy.finish_compiles() and the best of `repeat` calls
on the full code. A benchmark, not a test."""
import argparse
import time

import kernels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="gemm,stencil,dot,mandelbrot,nbody")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import stagepy
    fast = {k: kernels.on(v) for k, v in kernels.define(True).items() if callable(v)}
    cases = kernels.cases(1.0)
    kernels.on(lambda: None)()  # the runtime's one-time start-up, outside the figures
    warm = kernels.define(True, "def warm(a):\n    s = 0.0\n    for i in range(a.shape[0]):\n        s += a[i]\n    return s\n")
    kernels.on(warm["warm"])(kernels.np.ones(4))
    print("| kernel | first call (ms) | quick code, while it compiles (ms) | full code (ms) | tier-up (ms) |")
    print("|---|---|---|---|---|")
    for name in args.only.split(","):
        call = cases[name][0]
        t0 = time.perf_counter()
        call(fast[name])
        first = time.perf_counter() - t0
        quick = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            call(fast[name])
            quick.append(time.perf_counter() - t0)
        pending = [r["compile_phases"]["tier_ups_pending"] for r in stagepy.report() if r["function"] == name]
        stagepy.finish_compiles()
        full = kernels.best(lambda: call(fast[name]), args.repeat)
        up = sum(r["compile_phases"]["tier_up_s"] for r in stagepy.report() if r["function"] == name)
        note = "" if any(pending) else " (landed before the quick calls ended)"
        print(f"| {name} | {first * 1e3:.1f} | {min(quick) * 1e3:.2f}{note} | {full * 1e3:.2f} | {up * 1e3:.0f} |")


if __name__ == "__main__":
    main()
