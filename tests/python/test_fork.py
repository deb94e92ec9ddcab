"""fork() after parallel kernels ran: GNU OpenMP's threads do not survive it, and a child's
next parallel loop used to wait for them forever. A forked child now runs parallel loops
on its one thread, with the same results. Subprocesses with a timeout, so that a hang is
a failure."""
import json

from helpers import run_python

PRELUDE = r"""
import json, os, sys
import multiprocessing as mp
import numpy as np
import stagepy
stagepy.set_threads(2)
stagepy.enable()

def scale(a, b, c):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i, j] = a[i, j] * c + 1.0
    return b

def total(a):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * a[i]
    return s

def work(c):
    a = np.arange(200 * 300, dtype=np.float64).reshape(200, 300)
    b = scale(a, np.zeros_like(a), c)
    return bool(np.array_equal(b, a * c + 1.0)), bool(total(np.arange(5000.0)) == float(sum(x * x for x in range(5000))))

def parallel_ran():
    return any(l["parallel_runs"] for r in stagepy.report() if r["function"] == "scale" for l in r["loops"])
"""


def run(body, **env):
    p = run_python(["-c", PRELUDE + body], env_extra={"STAGEPY_TARGET": "cpu", **env}, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_forked_child_runs_parallel_kernels_after_its_parent_did():
    out = run(r"""
parent = work(2.0)
pid = os.fork()
if pid == 0:
    ok = work(2.0) == (True, True) and work(3.0) == (True, True)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps({"parent": parent, "ran": parallel_ran(), "child": os.waitstatus_to_exitcode(status)}))
""", STAGEPY_TIER_UP="0")
    assert out == {"parent": [True, True], "ran": True, "child": 0}


def test_a_fork_pool_after_parallel_kernels():
    out = run(r"""
first = work(1.5)
with mp.get_context("fork").Pool(2) as pool:
    results = pool.map(work, [0.5, 1.0, 2.5, 4.0])
print(json.dumps({"first": first, "ran": parallel_ran(), "pool": results}))
""")
    assert out["first"] == [True, True] and out["ran"]
    assert out["pool"] == [[True, True]] * 4
