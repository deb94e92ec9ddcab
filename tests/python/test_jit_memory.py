"""Kernels stay right however the process's address space is laid out. The CUDA driver, NumPy
and other extensions map large regions; kernels loaded after such a region must still reach
their own constants. With LLVM 16's default linker (RuntimeDyld) a kernel's code and its
constant pool could land more than 2 GiB apart and the 32-bit offset between them was cut
short without an error: the process crashed. Each run is a subprocess, so a crash is a
failure here rather than the end of the test session."""
import json

import pytest

from helpers import run_python

# Backend behaviour, the same on every CPython: scripts/test.sh runs these on the first only.
pytestmark = pytest.mark.backend

SCRIPT = r"""
import ctypes, ctypes.util, json, sys
import numpy as np
import stagepy

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE = 0x02, 0x20, 0x4000

SOURCE = '''
def k{n}(a, b):
    for i in range(a.shape[0]):
        b[i] = a[i] * {c} + {d} + (a[i] > {e}) * 1.5
'''
stagepy.enable()
a = np.linspace(-3.0, 3.0, 1001)
wrong = []
reserved = []
for n in range(40):
    if n % 4 == 0:
        # 8 GiB of address space, no memory: what a GPU driver's reservation looks like.
        reserved.append(libc.mmap(None, 8 << 30, 0, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0))
    c, d, e = 1.25 + n, 0.5 * n, 0.001 * n
    ns = {}
    exec(SOURCE.format(n=n, c=c, d=d, e=e), ns)
    b = np.zeros_like(a)
    ns["k%d" % n](a, b)
    if not np.array_equal(b, a * c + d + (a > e) * 1.5):
        wrong.append(n)
stagepy.disable()
native = [r for r in stagepy.report() if r["function"].startswith("k") and r["status"] == "cpu"]
print(json.dumps({"wrong": wrong, "native": len(native), "reserved": sum(1 for p in reserved if p not in (None, 2**64 - 1))}))
"""


def test_kernels_loaded_between_large_reservations_stay_right(tmp_path):
    # The first run compiles every kernel, the second loads them from the disk cache.
    env = {"STAGEPY_CACHE_DIR": str(tmp_path / "cache"), "STAGEPY_TARGET": "cpu"}
    for run in ("compiled", "cached"):
        p = run_python(["-c", SCRIPT], env_extra=env)
        assert p.returncode == 0, (run, p.returncode, p.stderr[-2000:])
        out = json.loads(p.stdout.strip().splitlines()[-1])
        assert out["reserved"] == 10, out
        assert out["native"] == 40, (run, out)
        assert out["wrong"] == [], (run, out)
