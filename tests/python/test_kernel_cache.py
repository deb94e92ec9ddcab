"""The kernel cache (backends/cpu/jit.h): a second process running the same nests loads their
object code instead of compiling it, with the same results; a damaged cache file is compiled
again; STAGEPY_CACHE=0 writes nothing. CPU kernels only: a kernel with a GPU version holds
the address of its launch description and is not cached on disk (STAGEPY_TARGET=cpu here,
so the tests mean the same on a machine with a GPU)."""
import json
import os

from helpers import run_python

SCRIPT = """
import json, sys
import numpy as np
import stagepy
stagepy.enable()

def f(A, B, n):
    s = 0.0
    for i in range(n):
        for j in range(n):
            B[i, j] = A[i, j] * 2.0 + A[j, i]
            s += B[i, j]
    return s

def g(n):
    t = 0
    for i in range(n):
        t += i * i % 7
    return t

def h(A, n):
    u = 0.0
    for i in range(n):
        u += np.sin(A[i, 0]) * np.exp(-A[0, i])  # NumPy's own loops, reached by name
    return u

A = np.arange(36.0).reshape(6, 6)
B = np.zeros((6, 6))
out = [f(A, B, 6), B.tolist(), g(1000), h(A, 6)]
stagepy.disable()
recs = [r for r in stagepy.report() if r["function"] in ("f", "g", "h")]
print(json.dumps({"out": out, "native": sum(r["native_calls"] for r in recs),
                  "cached": sum(r["compile_phases"]["cached"] for r in recs),
                  "optimize_s": sum(r["compile_phases"]["optimize_s"] for r in recs)}))
"""


def run_script(tmp_path, **env):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    p = run_python([str(script)], env_extra={"STAGEPY_TARGET": "cpu", **env})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernels_it_compiled_before(tmp_path):
    cache = tmp_path / "cache"
    first = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    objects = sorted(os.listdir(cache))
    assert first["native"] == 3 and first["cached"] == 0 and first["optimize_s"] > 0
    assert len(objects) == 3 and all(o.endswith(".o") for o in objects)
    second = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    assert second["native"] == 3 and second["cached"] == 3 and second["optimize_s"] == 0
    assert second["out"] == first["out"]
    assert sorted(os.listdir(cache)) == objects


def test_a_damaged_cache_file_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    first = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    for name in os.listdir(cache):
        path = cache / name
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
    again = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    assert again["out"] == first["out"] and again["native"] == 3 and again["cached"] == 0
    third = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))  # rewritten whole
    assert third["cached"] == 3 and third["out"] == first["out"]


def test_the_cache_can_be_turned_off(tmp_path):
    cache = tmp_path / "cache"
    out = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache), STAGEPY_CACHE="0")
    assert out["native"] == 3 and out["cached"] == 0
    assert not cache.exists()
