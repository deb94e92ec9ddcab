"""The rewriter's results for library code kept on disk (stagepy/_library_cache.py): a
second process of the same build rebuilds exactly the code the first one rewrote (every
byte, table and constant), skips the code it found nothing in, and the library functions
give the same results; a cache file of another build or a damaged one is ignored. The NumPy
type oracle's entries kept beside them read back equal to fresh probes."""
import json
import os

from helpers import run_python

SCRIPT = r"""
import hashlib, io, json, marshal, sys, time
import numpy as np
import stagepy
from stagepy import _compat, _library_cache, _rewrite

calls = {"rewrite": 0}
orig = _rewrite.rewrite
def counted(code):
    calls["rewrite"] += 1
    return orig(code)
_rewrite.rewrite = counted
stagepy.enable()

def f(a):
    for i in range(a.shape[0]):
        a[i] = a[i] * 2.0 + 1.0
x = np.arange(8.0)
f(x)
# Library functions with loops over range(), run with the rewritten code.
out = {"f": x.tolist()}
out["genfromtxt"] = np.genfromtxt(io.StringIO("1,2,3\n4,5,6\n"), delimiter=",").tolist()
out["gradient"] = np.gradient(np.array([1.0, 4.0, 9.0, 16.0, 25.0])).tolist()
out["pad"] = np.pad(np.arange(6).reshape(2, 3), 1, mode="reflect").tolist()
out["einsum_path"] = np.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))[0]
out["diff"] = np.diff(np.arange(10.0) ** 2, n=2).tolist()
def one():
    return 1
for _ in range(5000):  # the hook's sweep of every live function (after 2000 quiet frames)
    one()
assert stagepy.hook_stats()["sweeps"] >= 1
stagepy.disable()

def desc(code):
    consts = [type(c).__name__ if type(c).__name__ in ("Nest", "builtin_function_or_method", "SystemError")
              else desc(c) if type(c) is type(code) else repr(c) for c in code.co_consts]
    h = hashlib.sha256(code.co_code + code.co_linetable + code.co_exceptiontable).hexdigest()
    return [code.co_filename.rsplit("/", 1)[-1], code.co_qualname, h, code.co_stacksize, consts]
rewritten = sorted(desc(rep) for rep, orig in _compat._originals.values()
                   if not _rewrite.is_user_file(rep.co_filename))
from stagepy import _types
oracle_same = _types.cached_oracle_entries(np) == _types.oracle_entries(np)
st = _library_cache._state
print(json.dumps({"out": out, "rewritten": rewritten, "plain": len(st["plain"]),
                  "records": len(st["records"]), "hits": st["hits"], "rebuilt": st["rebuilt"],
                  "rewrite_calls": calls["rewrite"], "oracle_same": oracle_same}))
"""


def _run(tmp_path, extra=None):
    script = tmp_path / "lib.py"
    script.write_text(SCRIPT)
    env = {"STAGEPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "ignore"}
    env.update(extra or {})
    p = run_python([str(script)], env_extra=env, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_second_process_rebuilds_the_same_library_code(tmp_path):
    first = _run(tmp_path)
    cache = list((tmp_path / "cache" / "library").glob("*.marshal"))
    assert len(cache) == 1
    assert first["records"] > 0 and first["plain"] > 0 and first["hits"] == 0, first
    second = _run(tmp_path)
    # Every library function the first process decided came from the cache.
    assert second["hits"] == first["plain"] + first["records"], second
    assert second["rebuilt"] == first["records"]
    assert second["out"] == first["out"]
    # The same functions rewritten, byte for byte, with the same kinds of constants.
    assert second["rewritten"] == first["rewritten"]
    assert len(first["rewritten"]) >= first["records"] > 0
    # The type oracle's entries read back equal those probed afresh.
    assert (tmp_path / "cache" / "oracle").is_dir()
    assert first["oracle_same"] and second["oracle_same"]
    # Without the cache, the same again (the cache changed nothing a user sees).
    off = _run(tmp_path, {"STAGEPY_CACHE": "0"})
    assert off["out"] == first["out"] and off["rewritten"] == first["rewritten"]


def test_a_cache_file_of_another_build_or_damaged_is_ignored(tmp_path):
    first = _run(tmp_path)
    (path,) = (tmp_path / "cache" / "library").glob("*.marshal")
    path.write_bytes(b"\x00not marshal")
    damaged = _run(tmp_path)
    assert damaged["out"] == first["out"] and damaged["rewritten"] == first["rewritten"]
    # It was replaced by a good one at exit.
    import marshal
    data = marshal.loads(path.read_bytes())
    assert data["build"] and data["records"]
    data["build"] = "another build"
    path.write_bytes(marshal.dumps(data))
    other = _run(tmp_path)
    assert other["out"] == first["out"] and other["rewritten"] == first["rewritten"]
    assert marshal.loads(path.read_bytes())["build"] != "another build"
