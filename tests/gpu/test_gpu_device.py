"""On a machine with a CUDA GPU: the cases of gpu_cases.py run on the device and give
CPython's results bit for bit. Skipped, with the reason, where there is no GPU (CI)."""
import json
import os
import subprocess
import sys

import pytest

import stagepy

HERE = os.path.dirname(__file__)


def _device():
    info = stagepy.gpu_info()
    return info.get("device") and not info.get("emulated"), info.get("name", "")


pytestmark = pytest.mark.skipif(not _device()[0], reason=f"no CUDA GPU: {_device()[1]}")


def test_cases_on_the_device():
    env = dict(os.environ, STAGEPY_TARGET="gpu")
    env.pop("STAGEPY_GPU_EMULATE", None)
    p = subprocess.run([sys.executable, os.path.join(HERE, "gpu_cases.py")], capture_output=True, text=True,
                       env=env, timeout=600)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    assert lines and "gpu_info" in lines[-1], p.stdout + p.stderr
    cases = lines[:-1]
    assert all(r["equal"] for r in cases), [r for r in cases if not r["equal"]]
    for r in cases:
        if r["expect_gpu"]:
            assert r["launches"] > 0, r
    assert lines[-1]["gpu_info"]["device"] and not lines[-1]["gpu_info"]["emulated"]


FORK_CASE = r"""
import json, os, sys
import numpy as np
import stagepy
stagepy.enable()

def scale(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i] * 3.0 + 1.0

a = np.arange(1 << 16, dtype=np.float64)
b = np.zeros_like(a)
scale(a, b)                      # the parent uses the GPU
parent = stagepy.gpu_info()
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    c = np.zeros_like(a)
    scale(a, c)                  # CUDA does not survive fork(): the child's CPU runs it
    info = stagepy.gpu_info()
    os.write(w, json.dumps({"equal": bool((c == a * 3.0 + 1.0).all()), "enabled": info["enabled"],
                            "why_not": info["why_not"], "launches": info["launches"]}).encode())
    os._exit(0)
os.close(w)
child = json.loads(os.read(r, 1 << 16).decode())
os.waitpid(pid, 0)
print(json.dumps({"parent_launches": parent["launches"], "parent_equal": bool((b == a * 3.0 + 1.0).all()),
                  "child": child}))
"""


def test_a_child_forked_after_the_parent_used_the_gpu_runs_on_its_cpu():
    env = dict(os.environ, STAGEPY_TARGET="gpu")
    env.pop("STAGEPY_GPU_EMULATE", None)
    p = subprocess.run([sys.executable, "-c", FORK_CASE], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["parent_launches"] > 0 and out["parent_equal"], out
    child = out["child"]
    assert child["equal"], out
    assert "fork" in child["why_not"] and child["launches"] == out["parent_launches"], out
