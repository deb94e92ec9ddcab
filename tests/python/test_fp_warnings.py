"""NumPy's floating-point warnings under the filters programs normally run with.

With a "default" filter (each warning shown once per line) and np.errstate's "warn",
kernels compute on where NumPy would warn and emit NumPy's warnings afterwards; these
tests check that a user sees the same warnings (category, message, line), the same
values, and that np.errstate("ignore" / "raise") and "error" filters keep CPython's
behaviour too. Inputs exercise the fast path (nothing warns), the exact re-run of a
chunk (an infinity or NaN appears), data that already holds infinities (no warning),
and in-place updates (the chunk's stores are undone before the re-run)."""
import warnings

import numpy as np
import pytest

import difftest
from difftest import run

STENCIL = """
def f(u, v, n):
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            v[i, j] = u[i, j] + 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
    return locals()
"""


def grid(n, poke=None):
    def make():
        u = np.linspace(0.0, 1.0, n * n).reshape(n, n)
        if poke is not None:
            for (i, j), x in poke.items():
                u[i, j] = x
        return u, np.zeros((n, n)), n
    return make


@pytest.mark.parametrize("flt", ["default", "always"])
def test_stencil_without_warnings(flt):
    run(STENCIL, "f", grid(40), warn_filter=flt)


@pytest.mark.parametrize("flt", ["default", "always", "module", "once"])
def test_stencil_overflow_midway(flt):
    # 1e308 * 4.0 overflows at one point: NumPy warns once for that line.
    run(STENCIL, "f", grid(300, {(150, 200): 1e308, (20, 280): -1e308}), expect=None, warn_filter=flt)


def test_stencil_with_infinities_already_in_the_data():
    # inf - inf is invalid (a warning), inf + finite is not.
    run(STENCIL, "f", grid(60, {(30, 30): np.inf}), expect=None, warn_filter="default")
    run(STENCIL, "f", grid(60, {(30, 30): np.nan}), expect=None, warn_filter="default")


@pytest.mark.parametrize("poke", [None, {(20, 30): 1e308}])
def test_stencil_on_one_array_passed_twice(poke):
    # A chunk whose stores go to an array it does not read runs without an undo log, its
    # re-run storing the same values again; with u and v the same array, the reads see the
    # stores, and every chunk runs exactly instead.
    def make():
        u, _, n = grid(50, poke)()
        return u, u, n
    run(STENCIL, "f", make, expect=None, warn_filter="default")


def test_a_chunk_whose_exact_rerun_hands_over_keeps_its_undo_log():
    # The helper's operation warns at the helper's line: the re-run hands that statement
    # to CPython, so the fast pass's stores after it must be undone first.
    src = """
    def h(x):
        return x * 4.0

    def f(u, v, n):
        for j in range(n):
            v[j] = u[j] * 0.5 + h(u[j])
        return locals()
    """

    def make():
        u = np.linspace(0.0, 1.0, 1000)
        u[300] = 1e308
        return u, np.zeros(1000), 1000
    run(src, "f", make, expect=None, warn_filter="default")


def test_in_place_update_that_overflows_is_undone_and_redone():
    src = """
    def f(A, n, m):
        for i in range(n):
            for j in range(m):
                A[i, j] = A[i, j] * 3.0 + A[i, j]
        return locals()
    """

    def make():
        A = np.ones((5, 700))
        A[2, 333] = 1e308    # * 3.0 overflows
        A[3, 10] = -1e308
        return A, 5, 700
    run(src, "f", make, expect=None, warn_filter="default")


def test_division_warnings_each_kind():
    src = """
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] / B[i]
        return locals()
    """

    def make():
        A = np.array([1.0, 0.0, 1e300, np.inf, 2.0] * 100)
        B = np.array([0.0, 0.0, 1e-300, np.inf, 4.0] * 100)
        return A, B, np.zeros(500), 500
    run(src, "f", make, expect=None, warn_filter="default")


def test_integer_wrap_in_a_chunked_loop():
    src = """
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] * A[i]
        return locals()
    """
    run(src, "f", lambda: (np.arange(1000, dtype=np.int32) * 100, np.zeros(1000, np.int32), 1000),
        expect=None, warn_filter="default")


def test_several_warning_lines_in_one_loop():
    src = """
    def f(A, B, n):
        s = 0.0
        for i in range(n):
            B[i] = A[i] * A[i]
            s = s + B[i] - B[i]
        return locals()
    """
    run(src, "f", lambda: (np.array([1.0, 1e200, 3.0, 1e250] * 50), np.zeros(200), 200), expect=None,
        warn_filter="default")


def test_errstate_ignore_and_raise():
    src = """
    import numpy as np
    def f(A, B, n, mode):
        with np.errstate(all=mode):
            pass
        for i in range(n):
            B[i] = A[i] * 1e300
        return locals()
    """
    mk = lambda: (np.array([1.0, 1e10, 2.0]), np.zeros(3), 3, "ignore")  # noqa: E731
    with np.errstate(over="ignore"):
        run(src, "f", mk, expect="native", warn_filter="default")
    with np.errstate(over="raise"):
        run(src, "f", mk, expect=None, warn_filter="default")


def test_error_filter_raises_at_the_same_iteration():
    src = """
    def f(A, B, n):
        k = -1
        for i in range(n):
            B[i] = A[i] * 1e300
            k = i
        return locals()
    """
    mk = lambda: (np.array([1.0, 2.0, 1e10, 3.0]), np.zeros(4), 4)  # noqa: E731
    run(src, "f", mk, expect=None, warn_filter="error")


def test_warning_is_attributed_to_the_users_line():
    import stagepy
    from helpers import define
    src = """
    def f(A, B, n):
        for i in range(n):
            B[i] = (A[i]
                    * 1e300)
        return B
    """
    with stagepy.enable():
        fn = define(src, "f")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        fn(np.array([1e10] * 300), np.zeros(300), 300)
    assert [str(w.message) for w in caught] == ["overflow encountered in scalar multiply"]
    with warnings.catch_warnings(record=True) as plain:
        warnings.simplefilter("default")
        exec(compile(__import__("textwrap").dedent(src), caught[0].filename, "exec"), ns := {})
        ns["f"](np.array([1e10] * 300), np.zeros(300), 300)
    assert caught[0].lineno == plain[0].lineno


def test_first_use_of_a_warning_message_does_not_reset_the_registries():
    # stagepy learns NumPy's text for each warning the first time it emits one; doing that
    # by catching the warning mutated the warnings filters, which resets every module's
    # registry, so a "default" filter showed an earlier warning once more (found by the
    # fuzzer: 4 warnings instead of 3, only in a fresh process).
    from helpers import run_python
    script = (
        "import sys, warnings, numpy as np, stagepy\n"
        "def f(A, B, n):\n"
        "    for i in range(n):\n"
        "        A[i] = A[i] * 1e300\n"
        "        B[i] = B[i] / 0.0\n"
        "if sys.argv[1] == 'on':\n"
        "    stagepy.enable()\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('default')\n"
        "    for call in range(3):\n"
        "        f(np.full(600, 1e300), np.ones(600), 600)\n"
        "print([(str(w.message), w.lineno) for w in caught])\n"
        "print([r['native_calls'] for r in stagepy.report()])\n")
    plain = run_python(["-c", script, "off"])
    fast = run_python(["-c", script, "on"])
    assert plain.returncode == 0 and fast.returncode == 0, plain.stderr + fast.stderr
    assert fast.stdout.splitlines()[0] == plain.stdout.splitlines()[0]
    assert fast.stdout.splitlines()[1] != "[0]"  # the nest did run natively


POWER = """
def f(A, B, C, n):
    for i in range(n):
        C[i] = A[i] ** B[i]
    return locals()
"""


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("flt", ["default", "always"])
def test_power_warnings_each_kind_stay_native(dt, flt):
    # Overflow, zero to a negative power (divide by zero), a negative number to a
    # fraction (invalid); infinite and NaN operands raise nothing (0 ** -inf included).
    # With a "default" filter the kernel records them and never stops for CPython.
    def make():
        big = np.finfo(dt).max / 8
        A = np.array([big, 0.0, -2.0, 0.0, np.inf, 2.0, np.nan, -np.inf, 3.0, 1e30, 0.5] * 60, dtype=dt)
        B = np.array([2.0, -1.0, 0.5, -np.inf, -1.0, 1e10, 0.0, 0.5, 2.0, 3, -np.inf] * 60, dtype=dt)
        return A, B, np.zeros(660, dt), 660
    recs = run(POWER, "f", make, warn_filter=flt)
    if flt == "default":  # "always" shows every occurrence: CPython raises each one
        assert recs[0]["bailouts"] == 0


def test_power_with_an_integer_exponent_in_a_parallel_sum():
    # `a[i] ** 2` of NumPy floats no longer stops the loop for CPython: it runs on threads,
    # and an overflow midway is NumPy's warning, once.
    src = """
    def f(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] ** 2
        return locals()
    """
    import stagepy
    stagepy.set_threads(2)
    try:
        # Whole numbers: their squares sum exactly in any order (the sum is reassociated).
        recs = run(src, "f", lambda: (np.random.default_rng(3).integers(-99, 99, 5000).astype(float),),
                   warn_filter="default")
        assert difftest.ran_parallel(recs, "i")
        run(src, "f", lambda: (np.where(np.arange(5000) == 4000, 1e200, 1.0),), warn_filter="default")
    finally:
        stagepy.set_threads(0)


def test_power_under_errstate_raise_is_the_error_at_that_iteration():
    def make():
        A = np.ones(300)
        A[200] = 1e200
        return A, np.full(300, 2.0), np.zeros(300), 300
    with np.errstate(over="raise"):
        run(POWER, "f", make, expect=None, warn_filter="default")


BRANCHY = """
def f(a, b, n):
    err = 0.0
    k = -1
    s = 0.0
    c = 0.0
    for i in range(n):
        d = abs(a[i] - b[i])
        if d > err:
            err = d
            k = i
        if a[i] < 0.0:
            continue
        s += a[i] * b[i]
        if s > 1e300:
            c += 1.0
    return locals()
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("poke", [None, {100: 1e308}, {300: np.inf}, {301: np.nan}, {5: -1e308, 900: 1e308}])
def test_loops_with_ifs_that_store_nothing_run_in_chunks(threads, poke):
    # An innermost loop with ifs and a `continue` that stores no element runs in speculative
    # chunks too (a fast pass that only tests "did anything come out infinite or NaN", an
    # exact re-run when it did): the argmax, the conditional sum and the count are CPython's,
    # and so are the warnings of `a[i] - b[i]` and `a[i] * b[i]` where values overflow, are
    # infinite or NaN. (A Python int count would need its overflow check: no chunks.)
    import stagepy
    n = 2000

    def make():
        rng = np.random.default_rng(41)
        a, b = rng.standard_normal(n), rng.standard_normal(n)
        for i, x in (poke or {}).items():
            a[i] = x
        return a, b, n
    stagepy.set_threads(threads)
    try:
        run(BRANCHY, "f", make, warn_filter="default")
    finally:
        stagepy.set_threads(0)


@pytest.mark.parametrize("warn_filter", ["default", "always"])
def test_integer_wraparound_through_numpys_ufunc_path_does_not_warn(warn_filter):
    # NumPy 2 sends np.bool_ - np.uint8 (an np.bool_ on the left of an integer, or a Python
    # int on the left of an np.bool_) through the ufunc, whose integer loop wraps without a
    # warning; np.int8 - np.bool_ and int - np.uint8 take its scalar arithmetic, which warns.
    # Found by the fuzzer: the kernel's deferred warnings said "overflow encountered in
    # subtract" for the first kind.
    run("""
    def f(A, B, C, n, big):
        out = []
        for i in range(n):
            d = A[i] - B[i]
            e = i - d
            g = C[i] - A[i]
            h = big + A[i]
            out.append((d, e, g, h))
        return out
    """, "f", lambda: (np.array([True, False, True, True]), np.array([7, 0, 1, 200], np.uint8),
                       np.array([-128, 5, -128, 0], np.int8), 4, 2 ** 63 - 1), warn_filter=warn_filter)
