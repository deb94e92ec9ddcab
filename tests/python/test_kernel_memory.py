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


GONE = r"""
import gc, json, weakref, numpy as np, stagepy
from stagepy import _hook
stagepy.enable()
core = _hook.core()
codes = []
a = np.arange(8.0)
for k in range(400):
    ns = {}
    exec(compile(f"def f(a):\n    for i in range(a.shape[0]):\n        a[i] = a[i] * 0.5 + {k}.25\n", f"<gone{k}>", "exec"), ns)
    codes.append(weakref.ref(ns["f"].__code__))
    for _ in range(2):
        a[:] = np.arange(8.0)
        ns["f"](a)
    assert a[3] == 1.5 + k + 0.25, (k, a)
    del ns
gc.collect()
# One more nest after them, still alive.
def g(a):
    for i in range(a.shape[0]):
        a[i] += 1.0
g(a)
recs = [r for r in stagepy.report() if r["file"].startswith("<gone")]
nums = [int(r["file"][5:-1]) for r in recs]
print(json.dumps({"alive": sum(c() is not None for c in codes), "loaded": core.kernel_stats()["loaded"],
                  "records": len(recs), "in_order": nums == sorted(nums), "newest": nums[-1],
                  "native": sum(r["native_calls"] for r in recs),
                  "g": [r["native_calls"] for r in stagepy.report() if r["function"] == "g"],
                  "dropped": core.nest_records_dropped()}))
"""


def test_nests_whose_code_went_leave_only_their_report_record():
    """Code made and dropped over and over (exec'd templates, a notebook's cells run again):
    once a code object is garbage, its replacement, its nests' state and their kernels go
    too; the report keeps the newest STAGEPY_MAX_RETIRED_RECORDS of their records, in the
    order the nests were made."""
    p = run_python(["-c", GONE], env_extra={"STAGEPY_MAX_RETIRED_RECORDS": "100", "STAGEPY_CACHE": "0"})
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout.strip().splitlines()[-1])
    gone = 400 - r["alive"]
    assert gone >= 200, r                   # all but those made since the last prune went
    assert r["loaded"] <= r["alive"] + 1, r  # with their kernels (the live ones' and g's stay)
    assert r["dropped"] == gone - 100, r     # the records of the oldest went past the limit
    assert r["records"] == 100 + r["alive"] and r["in_order"] and r["newest"] == 399, r
    assert r["native"] == 2 * r["records"], r
    assert r["g"] == [1], r
