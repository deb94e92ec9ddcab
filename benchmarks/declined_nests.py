"""What nests stagepy leaves to CPython cost: each of these functions has a loop nest that
stays interpreted (a recursive call it cannot inline, a method of `random`, a list mixing
ints and floats), called many times beside big lists; or a loop calling a helper it cannot
inline (`search`: one that builds a list), entered once per call of a recursion. Until stop
56 the first read those lists at every call before declining (a recursion became quadratic,
a fill of an n x n list cubic). Since stop 57 `fill` and `relax` run natively (stagepy draws
from `random`'s generator, and holds lists of ints and floats): what they cost then is the
kernel's. Until stop 63 a nest declined for its helper read every variable at each call
before declining again. Times: CPython, then stagepy's first call (its decisions included) and best of the next; the results are compared
with CPython's.

    python benchmarks/declined_nests.py [--repeat N] [--scale S]
"""
import argparse
import math
import random
import sys
import time

import stagepy

from kernels import jitted_namespace

SOURCE = """
import random

def visit(a, lo, hi):
    while lo < hi:
        k = lo
        while k < lo + 2:
            a[k] += 1
            k += 1
        mid = (lo + hi) // 2
        visit(a, lo, mid)
        lo = mid + 1
    return a

def quicksort(a, lo, hi):
    while lo < hi:
        p = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while a[i] < p:
                i += 1
            while a[j] > p:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if j - lo < hi - i:  # the smaller side by recursion, the larger by the loop
            quicksort(a, lo, j)
            lo = i
        else:
            quicksort(a, i, hi)
            hi = j
    return a

def fill(W):
    n = len(W)
    for i in range(n):
        for j in range(n):
            W[i][j] = random.random()
    return W

def count_free(row):
    return len([v for v in row if v == 0])

def free_cells(rows, k):
    t = 0
    for r in range(k):
        t += count_free(rows[r])
    return t

def search(rows, depth):
    total = free_cells(rows, 2)
    if depth > 0:
        for m in range(3):
            total += search(rows, depth - 1)
    return total

def relax(adj, dist):
    for u in range(len(adj)):
        du = dist[u]
        for v in adj[u]:
            if du + 1 < dist[v]:
                dist[v] = du + 1
    return dist
"""


def cases(scale):
    s = lambda n: max(16, int(n * scale))  # noqa: E731
    n_rec, n_sort, n_fill, n_adj = s(40000), s(100000), s(700), s(80000)
    depth = max(3, 10 + round(math.log(scale, 3))) if scale > 0 else 10
    r = random.Random(0)
    keys = [r.randrange(10 ** 6) for _ in range(n_sort)]
    adj = [[(u * 7 + k) % n_adj for k in range(3)] for u in range(n_adj)]

    def fill_args():
        random.seed(1)
        return ([[0.0] * n_fill for _ in range(n_fill)],)
    return {
        "visit": (lambda: ([0] * n_rec, 0, n_rec - 1), f"recursion over {n_rec} ints, a 2-step inner loop"),
        "quicksort": (lambda: (list(keys), 0, n_sort - 1), f"recursive quicksort of {n_sort} ints"),
        "fill": (fill_args, f"{n_fill} x {n_fill} list of lists, `W[i][j] = random.random()`"),
        "search": (lambda: ([[0, 1, 0, 2], [1, 0, 0, 3]], depth),
                   f"recursion to depth {depth}, 3 ways: {(3 ** (depth + 1) - 1) // 2} calls of a loop calling "
                   "a helper that builds a list"),
        "relax": (lambda: (adj, [0] + [float("inf")] * (n_adj - 1)), f"{n_adj} vertices, `dist` mixing ints and floats"),
    }


def timed(fn, args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0)
    args = ap.parse_args()
    sys.setrecursionlimit(100000)
    plain = jitted_namespace(SOURCE, "<benchmark declined>", False)
    fast = jitted_namespace(SOURCE, "<benchmark declined>", True)
    print(f"Python {sys.version.split()[0]}, {stagepy.threads()} threads")
    print("| function | size | CPython (s) | stagepy first call (s) | stagepy (s) | same result |")
    print("|---|---|---|---|---|---|")
    for name, (make, size) in cases(args.scale).items():
        want, _ = timed(plain[name], make())
        t_py = min(timed(plain[name], make())[1] for _ in range(args.repeat))
        with stagepy.enable():
            got, t_first = timed(fast[name], make())
            t_sp = min(timed(fast[name], make())[1] for _ in range(args.repeat))
        print(f"| {name} | {size} | {t_py:.3f} | {t_first:.3f} | {t_sp:.3f} | {want == got} |")
    for r in stagepy.report():
        if r["file"] == "<benchmark declined>":
            print(f"  {r['function']}:{r['line']} {r['status']} calls {r['calls']}, native {r['native_calls']}, "
                  f"lists read {r.get('lists_read', '-')}" + (f" reason: {r['reason']}" if r["reason"] else ""))


if __name__ == "__main__":
    main()
