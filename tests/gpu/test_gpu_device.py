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
