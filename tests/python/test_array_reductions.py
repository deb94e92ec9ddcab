"""Array reductions: a loop whose only use of an array (or list) is to update its elements
(`hist[idx[i]] += 1`, `out[j] += x[i, j]`) runs on threads, each summing into a copy of
its own, the copies added to the array after the loop. The results, exceptions and
warnings are CPython's: where the combination would not give them (an integer leaving 64
bits, a NumPy integer that wraps, a float total that is not finite, an index out of range)
the run is void and the loop runs again in order. Each test is differential
(difftest.run) and checks, in the report, whether the loop ran on threads and why not."""
import functools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stagepy
import difftest

run = functools.partial(difftest.run, warn_filter="default", globals_={"np": np})
loops, ran_parallel = difftest.loops, difftest.ran_parallel

N = 4000


@pytest.fixture(autouse=True)
def two_threads():
    stagepy.set_threads(2)
    yield
    stagepy.set_threads(0)


def summed(recs, var):
    return loops(recs)[var].get("summed", "")


def indices(lo, hi, n=N, seed=3):
    return np.random.default_rng(seed).integers(lo, hi, n)


HIST = """
def f(idx, h):
    for i in range(idx.shape[0]):
        h[idx[i]] += 1
    return locals()
"""


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float64, np.float32])
def test_histogram_runs_on_threads_with_a_copy_per_thread(cpu_only, dtype):
    recs = run(HIST, "f", lambda: (indices(0, 64), np.zeros(64, dtype=dtype)))  # (no uint8 count past 255)
    assert ran_parallel(recs, "i")
    assert summed(recs, "i") == "h"


def test_negative_indices_wrap_in_the_copies_too(cpu_only):
    recs = run(HIST, "f", lambda: (indices(-16, 16), np.zeros(16, dtype=np.int64)))
    assert ran_parallel(recs, "i")


def test_index_out_of_range_raises_where_cpython_does_with_earlier_updates_done(cpu_only):
    def args():
        idx = indices(0, 16)
        idx[N - 100] = 16
        return idx, np.zeros(16, dtype=np.int64)
    run(HIST, "f", args, expect=None)


@pytest.mark.parametrize("start", [0, 2**63 - 1000, np.iinfo(np.int64).max])
def test_numpy_int_histogram_that_wraps_warns_as_cpython(cpu_only, start):
    # NumPy warns where an element wraps; the threads' copies add up to a total that
    # leaves int64, so the run is void and the loop runs in order.
    run(HIST, "f", lambda: (indices(0, 4), np.full(4, start, dtype=np.int64)), expect=None)


def test_uint8_counts_that_wrap_warn_as_cpython(cpu_only):
    run(HIST, "f", lambda: (indices(0, 4), np.full(4, 200, dtype=np.uint8)), expect=None)


def test_python_int_counts_beyond_64_bits_are_exact(cpu_only):
    run("""
    def f(idx, n):
        h = [2**63 - 1000] * 4
        for i in range(n):
            h[idx[i]] += 1
        return locals()
    """, "f", lambda: (indices(0, 4).tolist(), N), expect=None)


def test_list_histograms_of_ints_and_floats(cpu_only):
    recs = run("""
    def f(idx, n):
        h = [0] * 8
        w = [0.0] * 8
        for i in range(n):
            h[idx[i] % 8] += 1
            w[idx[i] % 8] += 0.5 * i
            h[(idx[i] + 3) % 8] -= 2
        return locals()
    """, "f", lambda: (indices(0, 100).tolist(), N))
    assert ran_parallel(recs, "i")
    assert summed(recs, "i") == "h, w"


def test_column_sums_of_a_matrix(cpu_only):
    # Integers as floats: the sums are exact in any order, so they compare bit for bit.
    recs = run("""
    def f(x, out):
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[j] += x[i, j]
        return locals()
    """, "f", lambda: (np.random.default_rng(4).integers(0, 100, (400, 30)).astype(float), np.zeros(30)))
    assert ran_parallel(recs, "i")


def test_strided_and_fortran_order_arrays(cpu_only):
    recs = run("""
    def f(idx, h, g):
        for i in range(idx.shape[0]):
            h[idx[i] % 3, idx[i] % 5] += 1.0
            g[idx[i] % 4, 1] -= 2
        return locals()
    """, "f", lambda: (indices(0, 60), np.zeros((3, 5), order="F"), np.zeros((4, 6), dtype=np.int64)[:, ::2]))
    assert ran_parallel(recs, "i")


def test_scatter_of_centres_with_an_inner_loop(cpu_only):
    recs = run("""
    def f(points, labels, centres, counts):
        for p in range(points.shape[0]):
            c = labels[p]
            counts[c] += 1
            for k in range(points.shape[1]):
                centres[c, k] += points[p, k]
        return locals()
    """, "f", lambda: (np.random.default_rng(5).integers(-50, 50, (N, 3)).astype(float), indices(0, 6),
                       np.zeros((6, 3)), np.zeros(6, dtype=np.int64)))
    assert ran_parallel(recs, "p")
    assert summed(recs, "p") == "counts, centres"


@pytest.mark.parametrize("fill", [1e308, np.nan, np.inf])
def test_float_totals_that_are_not_finite_are_summed_in_order(cpu_only, fill):
    # 1e308 + 1e308 overflows (NumPy warns) in some order; a NaN or inf amount makes every
    # total after it non-finite: the run is void and the loop runs in order.
    def args():
        w = np.ones(N)
        w[::7] = fill
        return w, indices(0, 4), np.zeros(4)
    run("""
    def f(w, idx, h):
        for i in range(idx.shape[0]):
            h[idx[i]] += w[i]
        return locals()
    """, "f", args, expect=None)


def test_numpy_int_amounts_of_either_sign_stay_in_order(cpu_only):
    src = """
    def f(a, idx, h):
        for i in range(idx.shape[0]):
            h[idx[i]] += a[i]
        return locals()
    """
    def args():
        return indices(-5, 5), indices(0, 4), np.zeros(4, dtype=np.int64)
    recs = run(src, "f", args)
    assert not ran_parallel(recs, "i")
    assert "non-negative constant" in loops(recs)["i"]["why"]
    with np.errstate(all="ignore"):  # wrapping is exact in any order, and NumPy says nothing
        recs = run(src, "f", args)
    assert ran_parallel(recs, "i")


def test_an_array_read_other_than_by_its_updates_is_not_summed(cpu_only):
    recs = run("""
    def f(idx, h, out):
        for i in range(idx.shape[0]):
            h[idx[i]] += 1
            out[i] = h[0]
        return locals()
    """, "f", lambda: (indices(0, 4), np.zeros(4, dtype=np.int64), np.zeros(N, dtype=np.int64)))
    assert not ran_parallel(recs, "i")


def test_summed_array_that_shares_memory_with_an_array_read_stays_in_order(cpu_only):
    def args():
        base = np.zeros(N + 16)
        return base, base[N:]
    recs = run("""
    def f(base, h):
        for i in range(h.shape[0] * 0 + 4000):
            h[i % 16] += base[i] + 1.0
        return locals()
    """, "f", args)
    assert not loops(recs)["i"]["parallel"] or not loops(recs)["i"]["parallel_runs"]


def test_large_array_with_few_updates_stays_in_order(cpu_only):
    # The copies cost more than the loop's work: the loop runs in order.
    recs = run(HIST, "f", lambda: (indices(0, 10**6, n=600), np.zeros(10**6, dtype=np.int64)))
    assert not loops(recs)["i"]["parallel_runs"]


ESCAPE = """
def f(cs, img, hist, maxit):
    for y in range(cs.shape[0]):
        for x in range(cs.shape[1]):
            zr = 0.0
            zi = 0.0
            it = 0
            while it < maxit and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cs[y, x], 2.0 * zr * zi + 0.3
                it += 1
            img[y, x] = it
            hist[it * 8 // (maxit + 1)] += 1
    return locals()
"""


def plane(rows=60, cols=50):
    return np.linspace(-2.0, 0.6, rows * cols).reshape(rows, cols)


def test_summing_beside_other_stores_runs_in_undoable_windows(cpu_only):
    # The stores into img are logged; each window's copies are added to hist once its
    # threads finished.
    recs = run(ESCAPE, "f", lambda: (plane(), np.zeros((60, 50), dtype=np.int64), [0] * 8, 50))
    assert ran_parallel(recs, "y")
    assert summed(recs, "y") == "hist"


def test_a_window_that_fails_is_undone_and_the_loop_goes_on_in_order(cpu_only):
    # hist is one bin short: the first pixel to escape late raises IndexError in a late
    # row, with every earlier pixel's store and count done.
    run(ESCAPE, "f", lambda: (plane(200, 40), np.zeros((200, 40), dtype=np.int64), [0] * 7, 50), expect=None)


def test_a_window_whose_counts_leave_64_bits_is_summed_in_order(cpu_only):
    run(ESCAPE, "f", lambda: (plane(200, 40), np.zeros((200, 40), dtype=np.int64), [2**63 - 30] * 8, 50),
        expect=None)


# ---------------------------------------------------------------- random scatter loops
# Loops of updates into a histogram-like array or list, at sizes that run on threads: the
# container, its dtype and start values (some near overflow), the index (wrapping, out of
# range), the update's form and amount (signs, floats, specials), and other stores beside
# it (windows with undo logs) are drawn at random; every call must match CPython.

EXAMPLES = max(20, int(os.environ.get("STAGEPY_FUZZ_EXAMPLES", "150")) // 3)


@st.composite
def scatter_loops(draw):
    m = draw(st.sampled_from([1, 4, 16]))
    kind = draw(st.sampled_from(["int64", "int32", "uint8", "float64", "float32", "list_int", "list_float"]))
    two_d = draw(st.booleans()) and not kind.startswith("list")
    index = draw(st.sampled_from(["idx[i]", "idx[i] % m", "-1 - idx[i] % m", "i % m", "(i * 3) % m", "idx[i] - 2"]))
    amount = draw(st.sampled_from(["1", "2", "0", "True", "a[i]", "a[i] * 0.5", "-1", "2**40", "w[i]"]))
    form = draw(st.sampled_from(["h[K] += E", "h[K] -= E", "h[K] = h[K] + E", "h[K] = E + h[K]"]))
    beside = draw(st.sampled_from(["", "", "out[i] = a[i] * 2", "out[i] = idx[i]", "s += a[i]", "s += w[i]"]))
    s0 = draw(st.sampled_from(["0", "np.int64(0)", "0.0", "np.float64(0.0)"] +
                              ([] if beside == "s += w[i]" else ["np.int64(2**63 - 3000)"])))  # (float sums of
    # quarters are exact in any order only well within 53 bits)
    inner = draw(st.booleans())
    guarded = draw(st.booleans())
    start = draw(st.sampled_from([0, 0, 5, -3, "max", "min"]))
    special = draw(st.sampled_from([None, None, np.nan, 1e308, np.inf]))
    seed = draw(st.integers(0, 2**16))
    stmt = form.replace("K", f"{index}, 1" if two_d else index).replace("E", amount)
    body = [f"        {stmt}"] if not guarded else ["        if a[i] > 0:", f"            {stmt}"]
    if beside:
        body.append(f"        {beside}")
    if inner:
        body = ["        for j in range(2):"] + ["    " + b.replace("a[i]", "a[i] + j") for b in body]
    src = (f"def f(idx, a, w, h, out, n, m):\n    s = {s0}\n    for i in range(n):\n" + "\n".join(body) +
           "\n    return locals()\n")
    n = 1500

    def make_args():
        rng = np.random.default_rng(seed)
        idx = rng.integers(-m, m + (1 if rng.random() < 0.3 else 0), n)
        a = rng.integers(-5, 6, n)
        w = rng.integers(-40, 40, n) / 4.0  # sums exact in any order (floats are reassociated)
        if special is not None:
            w[int(rng.integers(0, n))] = special
        dt = {"list_int": "int64", "list_float": "float64"}.get(kind, kind)
        shape = (m, 3) if two_d else (m,)
        if dt.startswith("float"):
            h = np.full(shape, 0.0 if start in ("max", "min") else float(start), dtype=dt)
            if start == "max":
                h[...] = 1e308
        else:
            info = np.iinfo(dt)
            v = info.max - 3 if start == "max" else info.min + 3 if start == "min" else max(start, info.min)
            h = np.full(shape, v, dtype=dt)
        if kind.startswith("list"):
            h = h.tolist()
        return idx, a, w, h, np.zeros(n), n, m
    return src, make_args


@settings(max_examples=EXAMPLES, deadline=None, derandomize=os.environ.get("CI") == "true",
          suppress_health_check=list(HealthCheck))
@given(scatter_loops())
def test_random_scatter_loops_match_cpython(loop):
    src, make_args = loop
    try:
        run(src, "f", make_args, calls=2, expect=None)
    except AssertionError as e:
        raise AssertionError(f"{e}\n--- program ---\n{src}\n--- arguments ---\n{make_args()!r}") from None


def test_a_loop_that_sums_into_an_array_is_neither_interleaved_nor_interchanged(cpu_only):
    # Interleaved lanes keep an element F alone updates in a variable per lane, which holds
    # only where no other iteration updates it: a loop that sums into an array is not
    # `independent` for plan_interleave and plan_interchange.
    recs = run("""
    def f(idx, A, B, h, n, m):
        for j in range(n):
            for k in range(m):
                h[idx[j]] += A[k, j] * B[k]
        return locals()
    """, "f", lambda: (indices(0, 4, n=2000), np.random.default_rng(8).integers(0, 5, (16, 2000)).astype(float),
                       np.arange(16.0), np.zeros(4), 2000, 16))
    assert ran_parallel(recs, "j")
    assert loops(recs)["j"]["interleaved"] == 0 and not loops(recs)["j"]["interchanged"]


@pytest.mark.parametrize("s0,fill", [
    ("np.int64(0)", 3),                   # a checked NumPy int sum beside: both on threads
    ("np.int64(2**63 - 2000)", 3),        # ... whose combination overflows: void, in order
    ("0", 2**62),                         # a Python int sum (not a counter) leaving 64 bits
    ("np.float64(0.0)", 0.5),             # a NumPy float sum, checked where parts combine
    ("np.float64(0.0)", 1e308),           # ... whose combination overflows: void, in order
])
def test_summing_into_an_array_beside_a_checked_scalar_sum(cpu_only, s0, fill):
    # The scalar sum's combination may still find the run void after the copies were
    # checked: the arrays get their totals only after it, or the loop runs in order with
    # the arrays untouched (else hist would count twice).
    recs = run(f"""
    def f(idx, a, h):
        s = {s0}
        for i in range(idx.shape[0]):
            h[idx[i]] += 1
            s += a[i]
        return locals()
    """, "f", lambda: (indices(0, 16), np.full(N, fill, dtype=type(fill)) if not isinstance(fill, int) or fill < 2**31
                       else [fill] * N, np.zeros(16, dtype=np.int64)), expect=None)
    if fill in (3, 0.5):
        assert ran_parallel(recs, "i")
