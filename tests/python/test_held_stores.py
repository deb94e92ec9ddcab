"""Chunks whose one store waits for its iteration's warning test (codegen: `holds_stores`).

Under NumPy's default warnings, an innermost loop runs in chunks: a fast pass that only
tests "may a NumPy operation have warned", then, where it may have, an exact re-run. An
update in place such as `C[i, j] += A[i, k] * B[k, j]` (gemm written i-k-j) or
`y[i] = y[i] + a * x[i]` used to log each store to undo it before the re-run; now, where
each iteration stores one element in its last statement and the loop's iterations are
independent, the element keeps its value in an iteration whose result may have warned, and
only those iterations run again. These tests put infinities, NaNs, overflows and wrapping
integers at the start, middle and end of chunks (256 iterations), with variables the loop
leaves behind, arrays passed twice, float32 elements and threads, and compare values and
warnings with CPython's."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from difftest import run

GEMM_IKJ = """
def f(A, B, C, alpha):
    n, m, p = A.shape[0], B.shape[1], A.shape[1]
    for i in range(n):
        for k in range(p):
            for j in range(m):
                C[i, j] += alpha * A[i, k] * B[k, j]
    return locals()
"""


def gemm_args(n, m, p, pokes=(), dtype=np.float64, c0=0.0):
    def make():
        rng = np.random.default_rng(n * 1000 + m)
        A = (1.0 + rng.random((n, p))).astype(dtype)   # 1.5 * A * 1e308 overflows
        B = rng.random((p, m)).astype(dtype)
        C = np.full((n, m), c0, dtype=dtype)
        for name, (i, j), x in pokes:
            {"A": A, "B": B, "C": C}[name][i, j] = x
        return A, B, C, 1.5
    return make


@pytest.mark.parametrize("m", [1, 7, 255, 256, 257, 600])
@pytest.mark.parametrize("where", ["none", "first", "middle", "last"])
def test_gemm_ikj_overflow_positions(m, where):
    # An overflow in one column: that column's iteration waits and runs again, exactly.
    j = {"none": None, "first": 0, "middle": m // 2, "last": m - 1}[where]
    pokes = [] if j is None else [("B", (2, j), 1e308)]
    run(GEMM_IKJ, "f", gemm_args(4, m, 5, pokes), expect=None, warn_filter="default")


@pytest.mark.parametrize("poke", [
    [("C", (1, 3), np.inf)],                          # already infinite: no warning
    [("C", (1, 3), np.nan), ("C", (2, 300), -np.inf)],
    [("B", (0, 5), np.inf), ("A", (2, 0), 0.0)],      # inf * 0 is invalid, inf alone is not
    [("B", (1, 10), 1e308), ("B", (1, 11), -1e308), ("B", (3, 10), -1e308)],  # inf - inf
    [("A", (0, 2), 1e200), ("B", (2, 400), 1e200)],  # the product overflows
])
def test_gemm_ikj_nonfinite_values(poke):
    run(GEMM_IKJ, "f", gemm_args(3, 513, 4, poke), expect=None, warn_filter="default")


def test_gemm_ikj_float32_elements():
    run(GEMM_IKJ, "f", gemm_args(3, 300, 4, [("B", (1, 100), 3e38), ("C", (2, 7), -3e38)], dtype=np.float32), expect=None,
        warn_filter="default")


def test_float32_element_from_a_double_that_does_not_fit():
    # The element is float32, the value a float64 (a Python float operand): the cast to
    # float32 overflows where the double does not.
    src = """
    def f(y, x, n):
        for i in range(n):
            y[i] = y[i] + x[i] * 1e30
        return locals()
    """

    def make():
        y = np.ones(700, np.float32)
        x = np.ones(700, np.float64)
        x[350] = 1e10   # 1e40: finite as a double, inf as float32
        return y, x, 700
    run(src, "f", make, expect=None, warn_filter="default")


def test_gemm_ikj_on_threads(threads):
    run(GEMM_IKJ, "f", gemm_args(40, 300, 6, [("B", (3, 100), 1e308), ("A", (33, 2), np.nan)]),
        expect=None, warn_filter="default")


def test_gemm_ikj_with_an_empty_inner_loop():
    run(GEMM_IKJ, "f", gemm_args(3, 0, 4), expect=None, warn_filter="default")
    run(GEMM_IKJ, "f", gemm_args(3, 5, 0), expect=None, warn_filter="default")


AXPY_VARS = """
def f(y, x, a, n):
    for i in range(n):
        t = a * x[i]
        u = t + 1.0
        y[i] = y[i] + t * u
    return locals()
"""


@pytest.mark.parametrize("at", [None, 0, 255, 256, 511, 699])
def test_variables_left_by_the_loop(at):
    # t and u end as the last iteration leaves them, also where that iteration (or another
    # in its chunk) waited and ran again.
    def make():
        x = np.linspace(-1.0, 1.0, 700)
        y = np.linspace(0.0, 3.0, 700)
        if at is not None:
            x[at] = 1e200
        return y, x, 2.0, 700
    run(AXPY_VARS, "f", make, expect=None, warn_filter="default")


def test_a_variable_carried_between_iterations_keeps_the_log():
    # s flows from one iteration to the next: the fast pass's value of a later iteration
    # would not be what it reads after an earlier one ran again.
    src = """
    def f(y, x, n):
        s = 0.0
        for i in range(n):
            s = s * 0.5 + x[i]
            y[i] = y[i] * s
        return locals()
    """

    def make():
        x = np.linspace(0.0, 1.0, 600)
        y = np.ones(600)
        y[300] = 1e308
        x[301] = 1e308
        return y, x, 600
    run(src, "f", make, expect=None, warn_filter="default")


def test_a_read_after_the_store():
    # The element is read again after the store, in the same iteration: the store cannot wait.
    src = """
    def f(y, x, n):
        for i in range(n):
            y[i] = y[i] + x[i]
            z = y[i] * 2.0
        return locals()
    """

    def make():
        x = np.ones(600)
        x[599] = 1e308
        y = np.full(600, 1e308)
        return y, x, 600
    run(src, "f", make, expect=None, warn_filter="default")


@pytest.mark.parametrize("shift", [0, 1, -1])
def test_one_array_passed_twice(shift):
    # y and x the same memory: iterations are not independent unless shift is 0, and the
    # chunks run exactly when the arrays the plan needs disjoint share memory.
    src = """
    def f(y, x, n, d):
        for i in range(1, n - 1):
            y[i] = y[i] + 2.0 * x[i + d]
        return locals()
    """

    def make():
        y = np.linspace(1.0, 2.0, 600)
        y[200] = 1e308
        return y, y, 600, shift
    run(src, "f", make, expect=None, warn_filter="default")


def test_overlapping_views():
    src = """
    def f(y, x, n):
        for i in range(n):
            y[i] = y[i] * 3.0 + x[i]
        return locals()
    """

    def make():
        base = np.linspace(1.0, 2.0, 900)
        base[400] = 1e308
        return base[1:], base[:-1], 899
    run(src, "f", make, expect=None, warn_filter="default")


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16])
def test_integer_elements_that_wrap(dtype, threads):
    # A NumPy integer operation that wraps warns ("overflow encountered in scalar add").
    src = """
    def f(y, x, n):
        for i in range(n):
            y[i] = y[i] + x[i] * x[i]
        return locals()
    """

    def make():
        info = np.iinfo(dtype)
        y = np.zeros(600, dtype)
        x = np.ones(600, dtype)
        y[10] = info.max
        y[300] = info.max - 1
        x[590] = int(np.sqrt(info.max)) + 1
        return y, x, 600
    run(src, "f", make, expect=None, warn_filter="default")


def test_errstate_raise_and_error_filter():
    # Not deferred: the first overflow raises where CPython's does, earlier stores done.
    run(GEMM_IKJ, "f", gemm_args(3, 300, 4, [("B", (2, 150), 1e308)]), expect=None, warn_filter="error")


def test_division_in_the_update():
    # x / d: a zero divisor gives inf (divide), 0/0 NaN (invalid); the dividend chain keeps it.
    src = """
    def f(y, x, d, n):
        for i in range(n):
            y[i] = y[i] + x[i] / d[i]
        return locals()
    """

    def make():
        x = np.linspace(0.0, 1.0, 700)
        d = np.ones(700)
        d[0] = 0.0      # 0 / 0
        d[400] = 0.0    # x / 0
        return np.zeros(700), x, d, 700
    run(src, "f", make, expect=None, warn_filter="default")


def test_a_divisor_that_hides_the_overflow():
    # 1 / inf is 0: the stored value is finite although the product overflowed; the
    # iteration's own test must see the overflow (the divisor is not absorbed).
    src = """
    def f(y, x, n):
        for i in range(n):
            y[i] = y[i] + 1.0 / (x[i] * x[i])
        return locals()
    """

    def make():
        x = np.linspace(1.0, 2.0, 700)
        x[123] = 1e200
        return np.zeros(700), x, 700
    run(src, "f", make, expect=None, warn_filter="default")


# ---------------------------------------------------------------- random in-place updates
# An innermost loop updating one array in place (the form these chunks hold), with the
# update's shape, its dtypes, a variable before it, a second array that may be the same
# one (shifted or not), and values that overflow, divide by zero or are already infinite
# drawn at random, under both the default and the "always" filter.

EXAMPLES = max(20, int(os.environ.get("STAGEPY_FUZZ_EXAMPLES", "150")) // 3)


@st.composite
def in_place_loops(draw):
    ty = draw(st.sampled_from(["float64", "float64", "float32", "int64", "int16"]))
    upd = draw(st.sampled_from(["y[K] = y[K] + E", "y[K] += E", "y[K] = E - y[K]", "y[K] *= E",
                                "y[K] = y[K] * c + E", "y[K] = y[K] / E"]))
    e = draw(st.sampled_from(["x[i]", "x[i] * c", "t", "t * x[i]", "x[i] / c", "c / x[i]", "x[i] * x[i]"]))
    pre = draw(st.sampled_from(["", "t = x[i] + c", "t = c * x[i]; u = t * t"]))
    after = draw(st.sampled_from(["", "", "z = y[K] * 2.0", "w = t"]))
    two_d = draw(st.booleans())
    same = draw(st.sampled_from([None, None, 0, 1, -1]))
    n = draw(st.sampled_from([3, 255, 256, 600]))
    specials = draw(st.lists(st.sampled_from([1e308, -1e308, np.inf, np.nan, 0.0, 1e200, 3e38]), max_size=3))
    seed = draw(st.integers(0, 2**16))
    c = draw(st.sampled_from(["1.5", "np.float32(2.0)", "3", "np.int64(2)"]))
    flt = draw(st.sampled_from(["default", "default", "always"]))
    if "t" in e and "t =" not in pre:
        e = "x[i]"
    if after == "w = t" and "t =" not in pre:
        after = ""
    K = "r, i" if two_d else "i"
    lines = [f"    for r in range(2):"] if two_d else []
    ind = "        " if two_d else "    "
    lines.append(f"{ind}for i in range(lo, n):")
    for stmt in [x for x in pre.split("; ") if x]:
        lines.append(f"{ind}    " + stmt.replace("x[i]", f"x[{K}]"))
    lines.append(f"{ind}    " + upd.replace("E", e).replace("x[i]", "x[K]").replace("K", K))
    if after:
        lines.append(f"{ind}    " + after.replace("K", K))
    src = "def f(y, x, n, lo, c):\n" + "\n".join(lines) + "\n    return locals()\n"

    def make_args():
        rng = np.random.default_rng(seed)
        shape = (2, n + 2) if two_d else (n + 2,)
        if ty.startswith("int"):
            y = rng.integers(-50, 50, shape).astype(ty)
            x = rng.integers(1, 9, shape).astype(ty)
            if specials:
                y.flat[int(rng.integers(0, y.size))] = np.iinfo(ty).max - 3
        else:
            y = (rng.standard_normal(shape) * 4).astype(ty)
            x = (rng.standard_normal(shape) * 4).astype(ty)
            with np.errstate(all="ignore"):
                for v in specials:
                    (x if rng.random() < 0.5 else y).flat[int(rng.integers(0, y.size))] = v
        if same is not None:
            x = y[..., 1:] if same == 1 else y[..., :-1] if same == -1 else y
            y = y[..., 1:] if same == -1 else y[..., :-1] if same == 1 else y
        return y, x, n, 1 if same else 0, eval(c)
    return src, make_args, flt


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(in_place_loops())
def test_random_in_place_updates_match_cpython(loop):
    src, make_args, flt = loop
    try:
        run(src, "f", make_args, calls=2, expect=None, warn_filter=flt)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program ---\n{src}\n--- arguments ---\n{make_args()!r}") from None
