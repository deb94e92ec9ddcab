"""Memory stays bounded however many kernels a program makes: past STAGEPY_MAX_KERNELS, the
specializations called longest ago are dropped with their machine code, and a nest whose
kernel went compiles it again when it is called again (no recompile limit is spent on it),
with the same results."""
import json

from helpers import run_python

SCRIPT = r"""
import json, numpy as np, stagepy
from stagepy import _hook
stagepy.enable()
core = _hook.core()
fns = []
for k in range(120):
    ns = {}
    exec(compile(f"def f(a):\n    for i in range(a.shape[0]):\n        a[i] = a[i] * 0.5 + {k}.25\n", f"<gen{k}>", "exec"), ns)
    fns.append(ns["f"])
peak = 0
for k, f in enumerate(fns):
    for _ in range(2):
        a = np.arange(8.0)
        f(a)
        assert a.tolist() == [x * 0.5 + k + 0.25 for x in range(8)], (k, a)
    peak = max(peak, core.kernel_stats()["loaded"])
mid = core.kernel_stats()
# The first ones were evicted long ago: they compile again and give the same results.
for k, f in enumerate(fns[:10]):
    a = np.arange(8.0)
    f(a)
    assert a.tolist() == [x * 0.5 + k + 0.25 for x in range(8)], (k, a)
recs = {r["file"]: r for r in stagepy.report() if r["file"].startswith("<gen")}
print(json.dumps({"peak": peak, "mid": mid, "end": core.kernel_stats(),
                  "first_native": [recs[f"<gen{k}>"]["native_calls"] for k in range(10)],
                  "first_specializations": [recs[f"<gen{k}>"]["specializations"] for k in range(10)]}))
"""


def test_kernels_beyond_the_limit_are_evicted_and_compiled_again_when_needed():
    p = run_python(["-c", SCRIPT], env_extra={"STAGEPY_MAX_KERNELS": "16", "STAGEPY_CACHE": "0"})
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    assert r["peak"] <= 17, r              # never more than the limit (and the one just made)
    assert r["mid"]["max"] == 16, r
    assert r["mid"]["evicted"] >= 100, r   # 120 kernels, at most 16 kept
    assert r["first_native"] == [3] * 10, r  # two calls, then one more after its eviction
    assert r["end"]["loaded"] <= 17, r
