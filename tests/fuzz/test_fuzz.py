"""The differential fuzzer: random loop nests (tests/fuzz/programs.py) run under CPython and
under stagepy must agree on everything observable (see tests/python/difftest.py).

STAGEPY_FUZZ_EXAMPLES sets how many programs to try (CI: a bounded slice; the long mode is
`STAGEPY_FUZZ_EXAMPLES=100000 pytest tests/fuzz`). Every failure found becomes a regular
test in tests/python/test_fuzz_regressions.py once minimised and fixed."""
import contextlib
import os

from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import stagepy

from difftest import Hang, TooSlowToCompare, run, run_module
from helpers import core
from programs import module_program, programs

EXAMPLES = int(os.environ.get("STAGEPY_FUZZ_EXAMPLES", "150"))
# STAGEPY_FUZZ_LAST=path: each program is written there before it runs, so that one that
# crashes the process (no report from hypothesis then) is left behind.
LAST = os.environ.get("STAGEPY_FUZZ_LAST")


@contextlib.contextmanager
def float_sums_in_order():
    """Float sums split over threads may differ from CPython's in their last bits, as
    documented (semantics.md), which the exact comparison cannot allow: the programs run
    with them in order (stagepy.set_strict_fp); everything else still runs on threads."""
    strict = stagepy.strict_fp()
    stagepy.set_strict_fp(True)
    try:
        yield
    finally:
        stagepy.set_strict_fp(strict)


def keep_last(src, make_args):
    if LAST:
        with open(LAST, "w") as f:
            f.write(f"{src}\n# arguments: {make_args()!r}\n")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(programs(), st.sampled_from(["always", "default"]))
def test_random_nests_match_cpython(prog, warn_filter):
    """Under "always" kernels hand NumPy's warnings to CPython; under "default" they
    compute on and emit them afterwards."""
    src, make_args = prog
    keep_last(src, make_args)
    try:
        with float_sums_in_order():
            run(src, "f", make_args, calls=2, expect=None, warn_filter=warn_filter)
    except TooSlowToCompare:
        reject()
    except (AssertionError, Hang) as e:
        raise AssertionError(f"{e}\n--- program (warnings filter {warn_filter!r}) ---\n{src}\n--- arguments ---\n{make_args()!r}") from None


@settings(max_examples=max(10, EXAMPLES // 2), deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(programs(), st.integers(1, 12))
def test_random_nests_match_cpython_with_forced_handovers(prog, period):
    """Every statement start is a legal place for native code to hand over to CPython:
    stopping at random ones must not change anything."""
    src, make_args = prog
    keep_last(src, make_args)
    core._set_debug_bail(period)
    try:
        with float_sums_in_order():
            run(src, "f", make_args, calls=2, expect=None)
    except TooSlowToCompare:
        reject()
    except (AssertionError, Hang) as e:
        raise AssertionError(f"{e}\n--- program (hand-over every <= {period} statements) ---\n{src}") from None
    finally:
        core._set_debug_bail(0)


@settings(max_examples=max(10, EXAMPLES // 3), deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(programs(), st.sampled_from(["always", "default"]))
def test_random_nests_match_cpython_as_module_code(prog, warn_filter):
    """The same programs at module level (a script's main loop): the nest's variables are
    the module's globals, which the helpers it calls may read."""
    src, make_args = prog
    msrc = module_program(src)
    if msrc is None:
        reject()
    keep_last(msrc, make_args)
    try:
        with float_sums_in_order():
            run_module(msrc, lambda: {"ARGS": make_args()}, expect=None, warn_filter=warn_filter)
    except TooSlowToCompare:
        reject()
    except (AssertionError, Hang) as e:
        raise AssertionError(f"{e}\n--- module program (warnings filter {warn_filter!r}) ---\n{msrc}\n--- arguments ---\n{make_args()!r}") from None


def test_random_nests_match_cpython_on_threads():
    """The same programs with every loop the analysis proves parallel run on threads, however
    few its iterations (STAGEPY_MIN_PARALLEL_TRIP=2, STAGEPY_MIN_PARALLEL_COST=0, 3 threads):
    the programs' loops (n <= 7) are otherwise far below the thresholds. A process of its own:
    the thresholds are read once."""
    if os.environ.get("STAGEPY_MIN_PARALLEL_TRIP"):
        return  # (the run below itself)
    import subprocess
    import sys
    env = dict(os.environ, STAGEPY_MIN_PARALLEL_TRIP="2", STAGEPY_MIN_PARALLEL_COST="0", STAGEPY_THREADS="3",
               STAGEPY_FUZZ_EXAMPLES=str(max(10, EXAMPLES // 2)))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        f"{__file__}::test_random_nests_match_cpython"], env=env, capture_output=True, text=True,
                       cwd=os.path.dirname(__file__), timeout=1800)
    assert p.returncode == 0, p.stdout[-20000:] + p.stderr[-5000:]
