"""Tier-up (backends/cpu/jit.h): a kernel with parallel loops first runs code compiled without
code generation's optimizations, while a background thread compiles it fully; parallel loops
switch bodies between two chunks, later calls take the full kernel. What a user sees: the same results before, during and after
the switch; the report saying the background compile finished; kernels that go, forks and the
disk cache while one is under way; STAGEPY_TIER_UP=0 turning it off. Each case runs in a
subprocess on two threads (set_threads(2)), so that the kernels have parallel bodies."""
import json
import os
import subprocess
import sys
import time

from helpers import run_python

PRELUDE = r"""
import gc, json, os, sys
import numpy as np
import stagepy
stagepy.set_threads(2)

def heat(u, v, steps):
    n = u.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
        u, v = v, u
    return u

def heat_numpy(u, v, steps):
    # The same operations in the same order, element by element: the same bits as CPython's
    # loop, for the size CPython would take a minute over.
    for t in range(steps):
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                               - 4.0 * u[1:-1, 1:-1])
        u, v = v, u
    return u

def start(n=64):
    rng = np.random.default_rng(5)
    u = rng.standard_normal((n, n))
    return u, u.copy()

# The expected results, before stagepy is on: CPython running heat itself (numpy's slices for
# the long case).
WANT = {(steps, 64): heat(*start(64), steps).copy() for steps in (2, 3, 4)}
WANT[(1500, 200)] = heat_numpy(*start(200), 1500).copy()
stagepy.enable()

def same(steps, n=64):
    u, v = start(n)
    return bool(np.array_equal(heat(u, v, steps), WANT[(steps, n)]))

def phases():
    recs = [r for r in stagepy.report() if r["function"] == "heat"]
    return recs[0]["compile_phases"] if recs else {}
"""


def run(body, **env):
    p = run_python(["-c", PRELUDE + body], env_extra={"STAGEPY_TARGET": "cpu", "STAGEPY_CACHE": "0", **env})
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_results_are_the_same_before_and_after_the_fully_compiled_bodies_arrive():
    out = run(r"""
first = same(3)               # the quick bodies (the background compile has just started)
finished = stagepy.finish_compiles(60)
after = same(3)               # the full ones
ph = phases()
rec = [r for r in stagepy.report() if r["function"] == "heat"][0]
print(json.dumps({"first": first, "after": after, "finished": finished, "ph": ph,
                  "parallel": any(l["parallel"] for l in rec["loops"]), "specs": rec["specializations"]}))
""")
    assert out["parallel"] and out["specs"] == 1
    assert out["first"] and out["after"] and out["finished"]
    ph = out["ph"]
    assert ph["tier_ups"] == 1 and ph["tier_ups_pending"] == 0 and ph["tier_ups_failed"] == 0
    assert ph["tier_up_s"] > 0


def test_a_long_call_switches_bodies_while_it_runs_and_stays_right():
    # Hundreds of parallel launches in one call: the full bodies arrive during it.
    out = run(r"""
ok = same(1500, n=200)
stagepy.finish_compiles(60)
print(json.dumps({"ok": ok, "ph": phases()}))
""")
    assert out["ok"]
    assert out["ph"]["tier_ups"] == 1


def test_kernels_that_go_before_their_background_compile_ends_are_freed_cleanly():
    out = run(r"""
SRC = '''
def k(a, b):
    for i in range(1, a.shape[0] - 1):
        for j in range(a.shape[1]):
            b[i, j] = a[i - 1, j] * C + a[i + 1, j]
'''
a = np.arange(64 * 64, dtype=np.float64).reshape(64, 64)
wrong = []
for n in range(12):
    ns = {}
    exec(SRC.replace("C", repr(1.5 + n)), ns)
    b = np.zeros_like(a)
    ns["k"](a, b)
    want = np.zeros_like(a)
    want[1:-1] = a[:-2] * (1.5 + n) + a[2:]
    if not np.array_equal(b, want):
        wrong.append(n)
    del ns                     # its code, nest and kernel go now, its tier-up is queued
    gc.collect()
finished = stagepy.finish_compiles(60)
print(json.dumps({"wrong": wrong, "finished": finished, "loaded": stagepy._hook.core().kernel_stats()["loaded"]}))
""")
    assert out["wrong"] == [] and out["finished"]


def test_a_forked_child_runs_the_kernel_right_while_the_parent_tiers_up():
    out = run(r"""
first = same(2)
pid = os.fork()
if pid == 0:
    ok = same(2) and same(4)
    done = stagepy.finish_compiles(60)
    os._exit(0 if ok and done else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps({"first": first, "child": os.waitstatus_to_exitcode(status), "parent": same(2),
                  "finished": stagepy.finish_compiles(60)}))
""")
    assert out == {"first": True, "child": 0, "parent": True, "finished": True}


def test_the_disk_cache_gets_the_fully_compiled_kernel_at_exit(tmp_path):
    body = r"""
ok = same(2)
print(json.dumps({"ok": ok, "ph": phases()}))
"""
    cache = str(tmp_path / "cache")
    first = run(body, STAGEPY_CACHE="1", STAGEPY_CACHE_DIR=cache)
    assert first["ok"] and first["ph"]["cached"] == 0
    # The process waited at exit for the full bodies, then wrote the kernel.
    second = run(body, STAGEPY_CACHE="1", STAGEPY_CACHE_DIR=cache)
    assert second["ok"] and second["ph"]["cached"] == 1
    assert second["ph"]["tier_ups"] == 0 and second["ph"]["tier_ups_pending"] == 0


def test_stagepy_tier_up_0_compiles_everything_before_the_first_call():
    out = run(r"""
ok = same(2)
print(json.dumps({"ok": ok, "ph": phases()}))
""", STAGEPY_TIER_UP="0")
    assert out["ok"]
    assert out["ph"]["tier_ups"] == 0 and out["ph"]["tier_ups_pending"] == 0


def test_a_busy_machine_does_not_hold_up_the_exit_for_a_background_compile():
    # The background compile runs only on an idle core. While every core is busy, the
    # exit (which waits for the compile under way) must not wait for the machine to quiet
    # down: that compile then finishes at the ordinary priority.
    BODY = r"""
print(json.dumps({"ok": same(2), "pending": phases()["tier_ups_pending"]}))
"""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        t0 = time.monotonic()
        try:
            p = run_python(["-c", PRELUDE + BODY], env_extra={"STAGEPY_TARGET": "cpu", "STAGEPY_CACHE": "0"},
                           timeout=60)
        except subprocess.TimeoutExpired:
            p = None
        took = time.monotonic() - t0
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert p is not None, "the script did not end while the machine was busy"
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["ok"] and out["pending"] == 1, out  # its background compile had not ended
    assert took < 30, took
