"""The GPU path without a GPU: STAGEPY_GPU_EMULATE=1 runs every GPU launch on the CPU
with separate "device" memory, so that the copies to and from the device, the mirrors
kept across the launches of one nest execution, the flushes before host code touches
arrays and the last-iteration protocol for private scalars are all checked here, against
CPython, on every CI run (tests/gpu/gpu_cases.py holds the programs; on the GPU machine
tests/gpu/test_gpu_device.py runs the same ones on the device)."""
import json
import os

import pytest

from helpers import run_python

# Backend behaviour, the same on every CPython: scripts/test.sh runs these on the first only.
pytestmark = pytest.mark.backend

CASES = os.path.join(os.path.dirname(__file__), "..", "gpu", "gpu_cases.py")


@pytest.fixture(scope="module")
def results():
    p = run_python([CASES], env_extra={"STAGEPY_GPU_EMULATE": "1", "STAGEPY_TARGET": "auto"}, timeout=600)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    assert lines and "gpu_info" in lines[-1], p.stdout + p.stderr
    return {r["name"]: r for r in lines[:-1]}, lines[-1]["gpu_info"]


def test_every_case_gives_cpythons_results(results):
    cases, _ = results
    bad = [name for name, r in cases.items() if not r["equal"]]
    assert not bad, bad


def test_parallel_loops_ran_on_the_emulated_gpu(results):
    cases, info = results
    assert info["emulated"] and info["enabled"]
    for name, r in cases.items():
        if r["expect_gpu"]:
            assert r["launches"] > 0, (name, r)
            assert "gpu" in r["status"] or r["why"], (name, r)


def test_strs_stay_on_the_cpu_with_the_reason(results):
    # The GPU body refuses a str's characters (the CPU's threads run the loop).
    r = results[0]["str_characters"]
    assert r["equal"] and r["launches"] == 0, r
    assert any("str" in w for w in r["why"]), r


def test_arrays_stay_on_the_device_across_a_time_loop(results):
    # Two calls of 6 time steps with two parallel loops each: A and B (96x96 float64) go to
    # the device once per call and come back once per call.
    r = results[0]["stencil_time_loop"]
    assert r["launches"] >= 2 * 6 * 2
    assert r["h2d_bytes"] == 2 * 2 * 96 * 96 * 8
    assert r["d2h_bytes"] == 2 * 2 * 96 * 96 * 8


def test_a_private_unassigned_in_the_last_iteration_goes_back_to_the_host(results):
    r = results[0]["private_unassigned_in_last_iteration"]
    assert r["equal"] and any("last iteration" in w for w in r["why"]), r


def test_cpu_target_keeps_everything_on_the_cpu():
    p = run_python([CASES], env_extra={"STAGEPY_GPU_EMULATE": "1", "STAGEPY_TARGET": "cpu"}, timeout=600)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    assert p.returncode == 0, p.stdout + p.stderr
    assert all(r["launches"] == 0 for r in lines[:-1])
    assert not lines[-1]["gpu_info"]["enabled"]


def test_complex_arithmetic_launches_once_per_call(results):
    # The Temps of complex arithmetic live within their statement: no thread keeps their
    # last values, so the loop is one launch per call (a private would make the last
    # iteration a launch of its own). Two calls each.
    for name in ("complex128_arithmetic", "complex64_warnings"):
        r = results[0][name]
        assert r["equal"] and r["launches"] == 2, (name, r)


def test_arrays_a_loop_overwrites_whole_are_not_copied_to_the_device(results):
    # Two calls each. Only an array every element of which the loop writes (its loops run
    # range(0, the extent), nothing in the nest reads it, no condition around the store,
    # no gap in its bytes) stays uncopied; the rest go up.
    cases = results[0]
    whole = {"overwritten_whole_2d": 50 * 70 * 8, "overwritten_whole_1d_shape": 5000 * 8,
             "overwritten_whole_sums": 40 * 20 * 8}
    for name, nbytes in whole.items():
        r = cases[name]
        assert r["equal"] and r["launches"] > 0 and r["h2d_skipped_bytes"] == 2 * nbytes, (name, r)
    for name in ("overwritten_from_row_one", "overwritten_but_the_last_column", "overwritten_where_a_condition_holds",
                 "overwritten_then_read", "overwritten_strided_view",
                 "overwritten_transposed"):
        r = cases[name]
        assert r["equal"] and r["launches"] > 0 and r["h2d_skipped_bytes"] == 0, (name, r)


def test_cpu_runs_of_loops_with_a_gpu_version_give_cpythons_results():
    # A real machine's cost model sends some runs of a loop that has a GPU version to the CPU's
    # threads; that CPU run must match CPython too. STAGEPY_GPU_EMULATE=alternate sends every
    # other run there, on 16 threads (more parts than this machine's cores): a NumPy float sum
    # whose parts combine into an infinity left out NumPy's warnings on the CPU's run until the
    # CPU's combination was checked as the GPU's is.
    p = run_python([CASES], env_extra={"STAGEPY_GPU_EMULATE": "alternate", "STAGEPY_TARGET": "auto",
                                       "STAGEPY_THREADS": "16"}, timeout=600)
    lines = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
    assert lines and "gpu_info" in lines[-1], p.stdout + p.stderr
    cases = {r["name"]: r for r in lines[:-1]}
    assert not [name for name, r in cases.items() if not r["equal"]]
    assert any("every other run on the CPU" in w for r in cases.values() for w in r["why"])
