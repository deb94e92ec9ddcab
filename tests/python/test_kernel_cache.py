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
    for i in range(n):
        for j in range(n):
            B[i, j] = A[i, j] * 2.0 + A[j, i]
    return B[n - 1, 0]

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


def kernel_files(cache):
    """The kernel objects in the cache folder (the library and oracle caches have folders of
    their own there)."""
    return sorted(n for n in os.listdir(cache) if not (cache / n).is_dir())


def run_script(tmp_path, **env):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    p = run_python([str(script)], env_extra={"STAGEPY_TARGET": "cpu", **env})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_kernels_it_compiled_before(tmp_path):
    cache = tmp_path / "cache"
    first = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    objects = kernel_files(cache)
    assert first["native"] == 3 and first["cached"] == 0 and first["optimize_s"] > 0
    assert len(objects) == 3 and all(o.endswith(".o") for o in objects)
    second = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    assert second["native"] == 3 and second["cached"] == 3 and second["optimize_s"] == 0
    assert second["out"] == first["out"]
    assert kernel_files(cache) == objects


def test_a_damaged_cache_file_is_compiled_again(tmp_path):
    cache = tmp_path / "cache"
    first = run_script(tmp_path, STAGEPY_CACHE_DIR=str(cache))
    for name in kernel_files(cache):
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


def test_a_cache_file_cut_between_two_objects_is_compiled_again(tmp_path):
    # A kernel with a parallel loop is compiled in parts (the kernel and its loop body), and
    # its cache file holds one object per part. A file holding only the first of them must
    # not be taken for the whole kernel.
    import struct

    cache = tmp_path / "cache"
    env = {"STAGEPY_CACHE_DIR": str(cache), "STAGEPY_THREADS": "2"}
    first = run_script(tmp_path, **env)
    header = b"stagepy objects 1\n"
    cut = 0
    for name in kernel_files(cache):
        path = cache / name
        data = path.read_bytes()
        assert data.startswith(header)
        (count,) = struct.unpack_from("<Q", data, len(header))
        if count < 2:
            continue
        (size,) = struct.unpack_from("<Q", data, len(header) + 8)
        path.write_bytes(data[: len(header) + 16 + size])
        cut += 1
    assert cut >= 1  # f's outer loop runs on threads: two parts
    again = run_script(tmp_path, **env)
    assert again["out"] == first["out"] and again["native"] == 3 and again["cached"] == 3 - cut
