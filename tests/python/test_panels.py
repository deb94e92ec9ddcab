"""Rows run panel by panel (codegen: `panel_rows`).

In a parallel loop whose body is one interleaved loop J over an inner range() loop K (gemm:
`for i: for j: acc = 0.0; for k: acc += A[i, k] * B[k, j]`), the rows run J's iterations a
panel of columns at a time — every row's columns [pb, pb + width), then the next panel — so
that the strip of B a panel walks stays in the cache. The panel's width shrinks as K grows
(32 columns from K = 2048 up): these tests use long K loops so that rows have several panels,
and check values, the loop variables and privates left behind, and NumPy's warnings (their
order across rows and panels included) against CPython, on one thread and two."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stagepy
from difftest import run
# (The same gemm sources as the interleaving tests: there one panel per row, here several.)
from test_interleave import GEMM as ACC, GEMM_IJK as IJK

# Backend behaviour, the same on every CPython: scripts/test.sh runs these on the first only.
pytestmark = [pytest.mark.usefixtures("cpu_only"), pytest.mark.backend]  # conftest.py: the CPU's panels


def args(n, m, p, pokes=()):
    def make():
        rng = np.random.default_rng(n * 7 + m)
        A = rng.integers(-4, 5, (n, p)).astype(np.float64)  # sums exact: any order would pass
        B = rng.integers(-4, 5, (p, m)).astype(np.float64) / 4.0
        C = np.zeros((n, m))
        for name, at, x in pokes:
            {"A": A, "B": B, "C": C}[name][at] = x
        return A, B, C
    return make


@pytest.mark.parametrize("src", [ACC, IJK], ids=["acc", "ijk"])
@pytest.mark.parametrize("shape", [(5, 100, 2100), (7, 33, 2100), (3, 200, 1100), (4, 0, 2100),
                                   (4, 90, 0), (0, 90, 2100), (9, 64, 2048)])
def test_panels_match_cpython(src, shape, threads):
    run(src, "f", args(*shape), expect=None, warn_filter="default")


@pytest.mark.parametrize("src", [ACC, IJK], ids=["acc", "ijk"])
def test_warnings_in_several_rows_and_panels(src, threads):
    # An add that overflows in row 4's first panel, a multiply in row 1's last panel and an
    # invalid inf - inf in row 2's second: CPython warns in row order (multiply, invalid,
    # add), which the panels' order (row 4's first panel before row 1's last) is not.
    pokes = [("A", (4, 3), 1e308), ("A", (4, 4), 1e308), ("B", (3, 5), 1.5), ("B", (4, 5), 1.5),
             ("A", (1, 7), 1e200), ("B", (7, 95), 1e200),
             ("A", (2, 9), 1e308), ("B", (9, 40), 8.0), ("A", (2, 10), -1e308), ("B", (10, 40), 8.0)]
    run(src, "f", args(6, 100, 2100, pokes), expect=None, warn_filter="default")


def test_already_infinite_values(threads):
    run(ACC, "f", args(5, 100, 2100, [("B", (100, 70), np.inf), ("A", (3, 5), np.nan)]), expect=None,
        warn_filter="default")


def test_a_row_dependent_inner_range_is_not_paneled(threads):
    # (range(i) differs by row: each row's own evaluation decides, in order.)
    src = """
    def f(A, B, C):
        n, m = C.shape
        for i in range(n):
            for j in range(m):
                acc = 0.0
                for k in range(i * 500):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc
        return locals()
    """
    run(src, "f", args(5, 80, 2100), expect=None, warn_filter="default")


def test_a_row_with_more_than_the_loop(threads):
    src = """
    def f(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            s = A[i, 0] * 2.0
            for j in range(m):
                acc = s
                for k in range(p):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc
        return locals()
    """
    run(src, "f", args(5, 80, 2100), expect=None, warn_filter="default")


def test_errstate_ignore_and_error_filter(threads):
    run(ACC, "f", args(5, 100, 2100, [("A", (2, 3), 1e308), ("B", (3, 50), 4.0)]), expect=None,
        warn_filter="error")


# ---------------------------------------------------------------- random panel nests
# gemm-like nests with K long enough for several panels per row: the update's operation,
# how the element or variable starts and ends, dtypes, values that overflow, divide by zero
# or are already infinite, and the warnings filter are drawn at random.

EXAMPLES = max(8, int(os.environ.get("STAGEPY_FUZZ_EXAMPLES", "150")) // 10)


@st.composite
def panel_nests(draw):
    e = draw(st.sampled_from(["A[i, k] * B[k, j]", "A[i, k] * B[k, j] + s", "A[i, k] / B[k, j]",
                              "(A[i, k] - B[k, j]) * (A[i, k] - B[k, j])", "A[i, k] * 2.0 - B[k, j]"]))
    form = draw(st.sampled_from(["acc", "acc", "elem", "max"]))
    start = draw(st.sampled_from(["0.0", "s", "C[i, j]"]))
    end = draw(st.sampled_from(["C[i, j] = acc", "C[i, j] = acc * 0.5"]))
    dt = draw(st.sampled_from(["float64", "float64", "float32"]))
    pokes = draw(st.lists(st.tuples(st.sampled_from("AB"), st.integers(0, 10**6),
                                    st.sampled_from([1e308, -1e308, np.inf, np.nan, 0.0, 3e38, 1e200])),
                          max_size=3))
    m = draw(st.sampled_from([33, 70, 100]))
    seed = draw(st.integers(0, 2**16))
    flt = draw(st.sampled_from(["default", "default", "always"]))
    if form == "elem":
        body = ["            for k in range(p):", f"                C[i, j] += {e}"]
    elif form == "max":
        body = [f"            acc = {start}", "            for k in range(p):",
                f"                acc = max(acc, {e})", f"            {end}"]
    else:
        body = [f"            acc = {start}", "            for k in range(p):",
                f"                acc += {e}", f"            {end}"]
    src = ("def f(A, B, C, s):\n    n, m, p = A.shape[0], B.shape[1], A.shape[1]\n    for i in range(n):\n"
           "        for j in range(m):\n" + "\n".join(body) + "\n    return locals()\n")

    def make():
        rng = np.random.default_rng(seed)
        A = rng.integers(-3, 4, (3, 2100)).astype(dt)
        B = (rng.integers(-3, 4, (2100, m)) / 2.0).astype(dt)
        B[B == 0] = 0.5
        C = np.zeros((3, m), dt)
        with np.errstate(all="ignore"):
            for name, at, x in pokes:
                a = A if name == "A" else B
                a.flat[at % a.size] = x
        return A, B, C, 1.5
    return src, make, flt


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(panel_nests(), st.sampled_from([1, 2]))
def test_random_panel_nests_match_cpython(nest, threads):
    src, make, flt = nest
    stagepy.set_threads(threads)
    # Float sums split over threads may differ from CPython's in their last bits (documented):
    # after a hand-over the `k` loop alone is a nest of its own, a sum that would go on threads
    # (B[16, 35] = nan: 178 elements of C off in their last bits). In order, as the fuzzer runs.
    strict = stagepy.strict_fp()
    stagepy.set_strict_fp(True)
    try:
        run(src, "f", make, calls=1, expect=None, warn_filter=flt)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program (threads {threads}) ---\n{src}") from None
    finally:
        stagepy.set_threads(0)
        stagepy.set_strict_fp(strict)
