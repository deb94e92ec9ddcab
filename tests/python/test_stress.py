"""Stress: nests running in several Python threads at once, while another thread switches
stagepy off and on, give every thread CPython's results; the runtime's state (kernels,
helpers found at run time, lists being read) survives thread switches in the middle of a
dispatch."""
import random
import sys
import threading

import numpy as np

import stagepy
from helpers import compile_module

SOURCE = """
def sq(x):
    return x * x

def arrays(A, B, n):
    s = 0.0
    for i in range(n):
        B[i] = A[i] * 2.0 + 1.0
        s += B[i]
    return s

def lists(L, M, n):
    t = 0
    for i in range(n):
        for j in range(n):
            M[i][j] = L[i] * j - M[i][j]
            t += M[i][j]
    return t

def helpers(n):
    s = 0
    for i in range(n):
        s += sq(i) % 7
    return s
"""


def expected(ns_plain, kind, seed):
    return run_one(ns_plain, kind, seed)


def run_one(ns, kind, seed):
    rnd = random.Random(seed)
    n = rnd.randint(1, 60)
    if kind == 0:
        A = np.arange(n, dtype=np.float64) * rnd.random()
        B = np.zeros(n)
        return ns["arrays"](A, B, n), B.tolist()
    if kind == 1:
        L = [rnd.randint(-5, 5) for _ in range(n)]
        M = [[rnd.randint(-5, 5) for _ in range(n)] for _ in range(n)]
        return ns["lists"](L, M, n), M
    return ns["helpers"](n * 50)


def test_threads_and_enable_disable_toggling():
    ns_plain = {}
    exec(compile_module(SOURCE), ns_plain)
    with stagepy.enable():
        ns = {}
        exec(compile_module(SOURCE), ns)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as possible
    errors = []
    stop = threading.Event()

    def worker(w):
        try:
            for k in range(150):
                kind, seed = k % 3, w * 1000 + k
                got = run_one(ns, kind, seed)
                want = expected(ns_plain, kind, seed)
                if got != want:
                    errors.append((w, k, kind))
        except Exception as e:  # reported below
            errors.append((w, repr(e)))

    def toggler():
        while not stop.is_set():
            stagepy.enable()
            stagepy.disable()

    try:
        stagepy.enable()
        threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        t = threading.Thread(target=toggler)
        for th in threads:
            th.start()
        t.start()
        for th in threads:
            th.join()
        stop.set()
        t.join()
    finally:
        stagepy.disable()
        sys.setswitchinterval(old)
    assert not errors, errors[:5]
    recs = [r for r in stagepy.report() if r["function"] in ("arrays", "lists", "helpers")]
    assert sum(r["native_calls"] for r in recs) > 0, recs
