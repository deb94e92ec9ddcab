"""Parallel loops that write array elements and may stop for CPython (a math function's
domain error, `abs()` of a complex overflowing, an int leaving 64 bits): they run on
threads with their stores logged, and when a thread needs CPython the run is undone and
the loop runs again in order (docs/architecture.md, "Undo logs"). Differential against
CPython: the exception comes at the same iteration with exactly the earlier elements
written, and nothing after it; calls without a stop run on threads."""
import functools
import itertools

import numpy as np
import pytest

import stagepy
import difftest

# Backend behaviour, the same on every CPython: scripts/test.sh runs these on the first only.
pytestmark = pytest.mark.backend

run = functools.partial(difftest.run, warn_filter="default")
loops, ran_parallel = difftest.loops, difftest.ran_parallel

N = 4000


@pytest.fixture(autouse=True)
def two_threads(cpu_only):
    stagepy.set_threads(2)
    yield
    stagepy.set_threads(0)


def alternating(clean, failing):
    """make_args for difftest.run: clean and failing arguments in turn (each version of the
    function sees the same sequence)."""
    calls = itertools.count()
    return lambda: (clean if next(calls) % 2 == 0 else failing)()


@pytest.mark.parametrize("bad", [0, N // 2 - 1, N // 2, N - 1])
def test_a_domain_error_leaves_exactly_the_earlier_elements_written(bad):
    def args(neg):
        def make():
            a = np.linspace(1.0, 2.0, N)
            if neg:
                a[bad] = -1.0
            return a, np.full(N, 7.0)
        return make
    recs = run("""
    import math
    def f(A, out):
        for i in range(A.shape[0]):
            x = math.sqrt(A[i])
            out[i] = x + math.exp(-A[i])
        return locals()
    """, "f", alternating(args(False), args(True)), expect="bail")
    assert loops(recs)["i"]["parallel"]
    assert ran_parallel(recs, "i")


def test_several_stores_per_iteration_and_narrow_dtypes_are_undone():
    # int8, float32 and complex128 elements, two stores to one element in an iteration:
    # each comes back to the value from before the loop.
    def make(bad):
        def m():
            a = np.linspace(0.5, 3.0, N)
            if bad is not None:
                a[bad] = -2.0
            return (a, np.full(N, 9, dtype=np.int8), np.full(N, 5.0, dtype=np.float32),
                    np.full(N, 1 + 2j))
        return m
    src = """
    import math
    def f(A, small, single, z):
        for i in range(A.shape[0]):
            small[i] = 1
            single[i] = A[i]
            z[i] = complex(A[i], 1.0)
            small[i] = int(math.log(A[i]) > 0.0)
        return locals()
    """
    for bad in (None, 17, N - 30):
        recs = run(src, "f", make(bad), expect="bail" if bad is not None else "native")
        assert loops(recs)["i"]["parallel"]


def test_complex_abs_overflow_in_a_nest_like_mandelbrot():
    def make(huge):
        def m():
            re = np.linspace(-1.0, 1.0, 60 * 80).reshape(60, 80)
            im = re.T.copy().reshape(60, 80)
            if huge:
                re[41, 7] = im[41, 7] = 1.5e308
            return re, im, np.zeros((60, 80), dtype=np.int64)
        return m
    recs = run("""
    def f(re, im, out):
        h, w = out.shape
        for y in range(h):
            for x in range(w):
                z = complex(re[y, x], im[y, x])
                k = 0
                while k < 20 and abs(z) <= 2.0:
                    z = z * z + 0.25
                    k += 1
                out[y, x] = k
        return locals()
    """, "f", alternating(make(False), make(True)), expect="bail")
    assert loops(recs)["y"]["parallel"]
    assert ran_parallel(recs, "y")


def test_python_ints_leaving_64_bits_in_a_list_go_on_in_cpython():
    def make(big):
        def m():
            a = list(range(1, N + 1))
            if big:
                a[N - 100] = 2**40
            return a, list(range(N)), [0] * N
        return m
    recs = run("""
    def f(a, b, out):
        for i in range(len(a)):
            out[i] = a[i] ** 3 + b[i]
        return locals()
    """, "f", alternating(make(False), make(True)), expect="bail")
    assert loops(recs)["i"]["parallel"]


def test_a_body_that_computes_little_per_element_stays_in_order():
    # Conversions and plain arithmetic are bound by memory, which the log would take: such
    # a body that may stop keeps its loop sequential, and the report says why.
    def make(bad):
        def m():
            a = np.linspace(0.0, 100.0, N)
            if bad:
                a[N - 10] = np.nan
            return a, np.zeros(N, dtype=np.int64)
        return m
    recs = run("""
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = int(A[i]) + 1
        return locals()
    """, "f", alternating(make(False), make(True)), expect="bail")
    loop = loops(recs)["i"]
    assert not loop["parallel"]
    assert "too little per element" in loop["why"]


@pytest.mark.parametrize("stop", ["raise", "go_on"])
def test_windows_of_a_long_run_keep_reductions_privates_and_warnings(stop):
    # 2**14 columns: the run goes in windows of a few rows (each window's logs stay near a
    # million entries per thread). A stop in a later window finds the earlier windows'
    # stores kept, their sum and last values applied, and their NumPy warning emitted
    # before CPython raises (a negative square root), or goes on with the rest of the loop
    # (an int leaving 64 bits: the sum must count each earlier window once).
    rows, cols = 16, 1 << 14

    def make(bad_row):
        def m():
            a = np.ones((rows, cols))
            a[2, 5] = 0.0          # divide by zero in the first window: a warning
            a[3, 9] = 4.0          # `seen`, from the first window
            a[rows - 3, 9] = 5.0
            if bad_row is not None:
                a[bad_row, 11] = -1.0 if stop == "raise" else 2.0**40
            return a, np.zeros((rows, cols)), np.zeros((rows, cols), dtype=np.int64)
        return m
    src = """
    import math
    def f(A, out, out2):
        tot = 0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                v = A[i, j]
                if v > 2.0:
                    seen = v
                out[i, j] = math.sqrt(v) + 1.0 / v
                k = int(v)
                out2[i, j] = k * k * k % 7
                tot += v
        return locals()
    """
    # (The first windows of a run are smaller, doubling: rows 1, 10 and 14 stop in the
    # first, second and last.)
    for bad in (None, 1, 10, 14):
        recs = run(src, "f", make(bad), calls=2, expect="bail" if bad is not None else "native")
        assert loops(recs)["i"]["parallel"]


# Reads whose index the analysis cannot prove in range (a CSR row's bounds come from the
# data): checked at each access, so they stop a speculative run like any other check, and
# the loop over rows runs on threads where it writes only its own y[i].
SPMV = """
def f(row, col, val, x, y):
    for i in range(len(y)):
        s = 0.0
        for k in range(row[i], row[i + 1]):
            s += val[k] * x[col[k]]
        y[i] = s
    return locals()
"""


@pytest.mark.parametrize("bad", [None, "row", "col", "negative col"])
def test_csr_rows_run_on_threads_and_stop_where_cpython_raises(bad):
    rows, per = 2000, 6

    def make(fail):
        def args():
            rng = np.random.default_rng(5)
            row = np.arange(0, rows * per + 1, per)
            col = rng.integers(0, rows, rows * per)
            val = rng.standard_normal(rows * per)
            x = rng.standard_normal(rows)
            if fail and bad == "row":
                row[rows // 2 + 1:] += 3  # past val's end in the last rows
            elif fail and bad == "col":
                col[rows * per // 2 + 1] = rows + 7
            elif fail and bad == "negative col":
                col[rows * per // 3] = -5  # wraps, as in CPython
            return row, col, val, x, np.zeros(rows)
        return args
    recs = run(SPMV, "f", alternating(make(False), make(True)), expect="native")
    assert loops(recs)["i"]["parallel"], loops(recs)["i"]["why"]
    assert ran_parallel(recs, "i")


def test_an_unproven_read_of_an_array_the_loop_writes_keeps_it_in_order():
    recs = run("""
    def f(row, y):
        for i in range(len(y) - 1):
            s = 0.0
            for k in range(row[i], row[i + 1]):
                s += y[k]
            y[i] = s
        return locals()
    """, "f", lambda: (np.arange(0, 4001, 2) % 900, np.linspace(0.0, 1.0, 2001)))
    assert not loops(recs)["i"]["parallel"]
    assert "out of bounds" in loops(recs)["i"]["why"]


def test_unproven_reads_of_memory_the_loop_writes_through_another_array_keep_it_in_order():
    # x and y share memory (y is x's first half): reading x[col[k]] reads what the previous
    # iteration stored into y (a recurrence through memory), so the loop runs in order.
    def args():
        buf = np.ones(2 * N)
        row = np.arange(N + 1)
        col = np.maximum(np.arange(N) - 1, 0)
        return row, col, np.full(N, 0.5), buf, buf[:N]
    recs = run(SPMV, "f", args)
    assert not ran_parallel(recs, "i")
