"""Reductions across loop nests (src/specialize/plan_parallel.h).

`s = 0.0` before `for i: for j: s += A[i, j]` makes `s` a Python float that becomes an
np.float64 at its first update: inside the outer loop it is `float | np.float64`. The
outer loop still runs on threads: each thread's part remembers whether it assigned `s`, so
a nest whose inner loops never run leaves the float 0.0, as CPython does. Every test is
differential (difftest.run); float sums on threads are reassociated (docs/semantics.md),
so the data are whole numbers (or infinities), whose sums are exact in any order."""
import functools
import os

import numpy as np
import pytest

import difftest
from helpers import whole

run = functools.partial(difftest.run, warn_filter="default")
loops, ran_parallel = difftest.loops, difftest.ran_parallel


pytestmark = pytest.mark.usefixtures("two_threads_on_the_cpu")  # conftest.py




TOTAL = """
def f(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j]
    return locals()
"""


def test_a_sum_over_a_matrix_runs_its_outer_loop_on_threads():
    recs = run(TOTAL, "f", lambda: (whole((300, 200)),))
    assert ran_parallel(recs, "i")


def test_a_sum_over_a_tall_thin_matrix_runs_on_threads():
    # The inner loop is too short for threads; the outer one takes them.
    recs = run(TOTAL, "f", lambda: (whole((20000, 3), 1),))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("shape", [(600, 0), (0, 600), (1, 1), (2, 700)])
def test_a_sum_whose_inner_loops_never_or_barely_run_keeps_the_type(shape):
    # (600, 0): no update ever runs: `s` stays the float 0.0, not np.float64(0.0).
    run(TOTAL, "f", lambda: (whole(shape, 2),), expect=None)


def test_a_triangular_sum_some_rows_empty():
    recs = run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            for j in range(i - n // 2):
                s += A[i, j] * 2.0
        return locals()
    """, "f", lambda: (whole((800, 800), 3), 800))
    assert ran_parallel(recs, "i")


def test_a_product_and_a_sum_of_squares_across_the_nest():
    recs = run("""
    def f(A):
        p = 1.0
        q = 0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                p *= A[i, j]
                q += A[i, j] ** 2
        return locals()
    """, "f", lambda: (np.random.default_rng(4).choice([1.0, -1.0, 2.0, 0.5], (400, 50)),))
    assert ran_parallel(recs, "i")


def test_negative_zero_survives_the_split_sum():
    run("""
    def f(A):
        s = -0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                s += A[i, j]
        return locals()
    """, "f", lambda: (np.full((700, 4), -0.0),))


def test_an_overflowing_split_sum_warns_once_as_numpy_does():
    recs = run(TOTAL, "f", lambda: (np.full((600, 4), 1e308),))
    assert ran_parallel(recs, "i")


def test_a_sum_that_takes_floats_and_np_floats_stays_exact():
    # One update gives a float, the other an np.float64: `s`'s type depends on which ran
    # last, so the sum is not split.
    recs = run("""
    def f(A):
        s = 0.0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] > 0:
                    s += A[i, j]
                else:
                    s = s + 1.0
        return locals()
    """, "f", lambda: (whole((300, 300), 5),))
    assert not loops(recs)["i"]["parallel"]


def test_a_sum_over_a_list_of_rows_from_an_np_float_start():
    # np.float64 from the start: the ordinary split sum, in a nest of lists.
    recs = run("""
    def f(A, n, m):
        s = np.float64(0)
        t = 0.0
        for i in range(n):
            for j in range(m):
                s += A[i][j]
                t += A[i][j]
        return locals()
    """, "f", lambda: (whole((900, 40), 6).tolist(), 900, 40), globals_={"np": np})
    assert ran_parallel(recs, "i")


# ---------------------------------------------------------------- speculative runs
# A loop that writes no array element may run on threads even where an iteration could
# stop for CPython (an overflow): should one do so, the threads' results are dropped and
# the loop runs sequentially, stopping where CPython does.

INT_TOTAL = TOTAL.replace("s = 0.0", "s = 0")


def test_an_int_sum_of_an_int64_matrix_runs_on_threads():
    # s: int, then np.int64 (NumPy's type for int + np.int64).
    recs = run(INT_TOTAL, "f", lambda: (np.random.default_rng(7).integers(-10**9, 10**9, (400, 300)),))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("shape", [(500, 0), (0, 5)])
def test_an_int_sum_that_never_runs_stays_a_python_int(shape):
    run(INT_TOTAL, "f", lambda: (np.ones(shape, np.int64),), expect=None)


def test_an_int64_sum_that_wraps_warns_as_numpy_does():
    # Every order overflows: the threads' run is dropped, the sequential one warns once
    # and wraps as NumPy does.
    recs = run(INT_TOTAL, "f", lambda: (np.full((100, 100), 2**62, np.int64),))
    assert recs[0]["bailouts"] == 0


def alternating_chunks(n, big):
    """+big, -big in runs of n // 8 (a quarter of a thread's share on two threads): each
    thread's part gathers four +runs or four -runs, which overflows 64 bits, though no
    prefix of the sum in order does."""
    run_len = n // 8
    return [big if (k // run_len) % 2 == 0 else -big for k in range(n)]


def test_an_int64_sum_whose_parts_overflow_but_not_the_sum_is_exact_and_silent():
    n = 2000
    big = 2**62 // 250
    recs = run("""
    def f(a):
        s = np.int64(0)
        for i in range(a.shape[0]):
            s += a[i]
        return locals()
    """, "f", lambda: (np.array(alternating_chunks(n, big), np.int64),), globals_={"np": np})
    assert recs[0]["bailouts"] == 0


def test_a_python_int_sum_whose_parts_overflow_is_exact():
    n = 2000
    big = 2**62 // 250
    recs = run("""
    def f(a, n):
        s = 0
        for i in range(n):
            s += a[i]
        return locals()
    """, "f", lambda: (alternating_chunks(n, big), n))
    assert recs[0]["bailouts"] == 0


def test_a_count_runs_on_threads_and_stays_a_python_int():
    recs = run("""
    def f(a, t):
        c = 0
        k = 0
        for i in range(len(a)):
            if a[i] > t:
                c += 1
            k = k + i * i
        return locals()
    """, "f", lambda: (np.random.default_rng(8).random(100000), 0.5))
    assert ran_parallel(recs, "i")


def test_a_python_int_sum_beyond_64_bits_is_cpythons_big_int():
    recs = run("""
    def f(n):
        s = 0
        for i in range(n):
            s += i * i * i
        return locals()
    """, "f", lambda: (3_000_000,), expect=None)
    assert recs[0]["bailouts"] > 0


def test_a_sum_of_python_float_squares_over_a_list_runs_on_threads():
    # float ** 2 may raise OverflowError: speculative.
    recs = run("""
    def f(x):
        s = 0.0
        for i in range(len(x)):
            s += (x[i] - 3.0) ** 2
        return locals()
    """, "f", lambda: (whole(5000, 9).tolist(),))
    assert ran_parallel(recs, "i")


def test_a_float_power_that_overflows_midway_raises_at_the_same_iteration():
    run("""
    def f(x):
        s = 0.0
        for i in range(len(x)):
            s += x[i] ** 2
        return locals()
    """, "f", lambda: ([1.0] * 3000 + [1e200] + [1.0] * 3000,), expect=None)


def test_math_exp_that_overflows_midway_raises_at_the_same_iteration():
    run("""
    def f(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += math.exp(a[i])
        return locals()
    """, "f", lambda: (np.where(np.arange(6000) == 4321, 800.0, 0.0),), expect=None, globals_={"math": __import__("math")})


def test_numpy_float_sums_under_an_always_filter_run_on_threads():
    # "always": each warning is CPython's, so every NumPy float operation may stop for
    # it; the loop writes nothing, so it runs on threads anyway.
    src = """
    def f(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i] * 2.0
        return locals()
    """
    recs = difftest.run(src, "f", lambda: (whole(6000, 10),), warn_filter="always")
    assert ran_parallel(recs, "i")
    difftest.run(src, "f", lambda: (np.where(np.arange(6000) % 1000 == 7, 1e308, 1.0),), warn_filter="always",
                 expect=None)


def test_an_int_sum_in_a_loop_that_writes_stays_sequential():
    recs = run("""
    def f(a, out):
        s = 0
        for i in range(len(a)):
            out[i] = a[i] + 1
            s += i
        return locals()
    """, "f", lambda: (np.arange(5000), np.zeros(5000, np.int64)))
    assert not loops(recs)["i"]["parallel"]
    assert "writes array elements" in loops(recs)["i"]["why"]


# ---------------------------------------------------------------- argmax and friends
# `if a[i] > best: best = a[i]; k = i`: k is a companion of the max. The threads' parts
# combine in iteration order, a part that raises the max bringing its k: the first index
# of the maximum, as CPython's loop gives.

ARGMAX = """
def f(a):
    best = a[0]
    k = 0
    for i in range(len(a)):
        if a[i] > best:
            best = a[i]
            k = i
    return locals()
"""


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64, np.int32, np.uint8])
def test_argmax_with_many_ties_gives_the_first_index(dt):
    recs = run(ARGMAX, "f", lambda: (np.random.default_rng(11).integers(0, 20, 50000).astype(dt),))
    assert ran_parallel(recs, "i")


def test_argmax_over_a_list_of_floats():
    recs = run(ARGMAX, "f", lambda: (whole(30000, 12).tolist(),))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("poke", ["nan_first", "nan_inside", "all_minus_inf"])
def test_argmax_with_nans_and_infinities(poke):
    def make():
        a = whole(20000, 13)
        if poke == "nan_first":
            a[0] = np.nan          # nothing is greater than NaN: k stays 0
        elif poke == "nan_inside":
            a[7777] = np.nan       # a NaN never wins a comparison
        else:
            a[:] = -np.inf
        return (a,)
    run(ARGMAX, "f", make)


def test_argmin_of_a_matrix_with_two_companions_and_a_start_none_can_beat():
    recs = run("""
    def f(A):
        best = np.inf
        bi = None
        bj = -1
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] < best:
                    best = A[i, j]
                    bi = i
                    bj = j * 2
        return locals()
    """, "f", lambda: (whole((300, 200), 14, 0, 30),), globals_={"np": np})
    assert ran_parallel(recs, "i")
    # Nothing below the start: the companions keep their values (None stays None).
    run("""
    def f(A):
        best = -1.0
        bi = None
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] < best:
                    best = A[i, j]
                    bi = i
        return locals()
    """, "f", lambda: (whole((300, 200), 15, 0, 30),), expect=None)


def test_argmax_of_a_computed_value_with_a_value_companion():
    recs = run("""
    def f(x, y):
        best = -1.0
        where = -1
        scaled = 0.0
        for i in range(len(x)):
            d = x[i] * x[i] + y[i] * y[i]
            if d > best:
                best = d
                where = i
                scaled = x[i] * 0.5
        return locals()
    """, "f", lambda: (whole(40000, 16), whole(40000, 17)))
    assert ran_parallel(recs, "i")


def test_argmax_keeping_the_last_of_equal_values_stays_sequential():
    recs = run("""
    def f(a):
        best = a[0]
        k = 0
        for i in range(len(a)):
            if a[i] >= best:
                best = a[i]
                k = i
        return locals()
    """, "f", lambda: (np.random.default_rng(18).integers(0, 20, 50000),))
    assert not loops(recs)["i"]["parallel"]


def test_a_companion_read_in_the_loop_stays_sequential():
    recs = run("""
    def f(a, out):
        best = a[0]
        k = 0
        for i in range(len(a)):
            if a[i] > best:
                best = a[i]
                k = i
            out[i] = k
        return locals()
    """, "f", lambda: (np.random.default_rng(19).integers(0, 1000, 50000), np.zeros(50000, np.int64)))
    assert not loops(recs)["i"]["parallel"]


@pytest.mark.parametrize("at", [0, 1234, 5999])
def test_a_sum_that_meets_an_infinity_warns_where_cpython_does(at):
    # -inf + (a part that reached +inf) is NumPy's "invalid value" warning; in order it comes
    # from the first line, at the iteration holding the infinity. The combination of parts
    # would raise it elsewhere: the loop (it writes nothing) runs in order instead.
    def make():
        a = whole(6000, 20)
        a[at] = np.inf
        return (a,)
    run("""
    def f(a):
        s = -np.inf
        for i in range(a.shape[0]):
            s += abs(a[i])
            s += a[i]
        return locals()
    """, "f", make, globals_={"np": np})
    # A loop that also writes: its parts' combination warns at the sum's line.
    run("""
    def f(a, out):
        s = -np.inf
        for i in range(a.shape[0]):
            out[i] = a[i] * 2.0
            s += a[i]
        return locals()
    """, "f", lambda: (make()[0], np.zeros(6000)), globals_={"np": np})


EVERY_SIZE = """
import re, sys
from stagepy import _rewrite
for k in range(1, 37):
    assigns = "\\n".join(f"        v{j} = A[i] + {j}" for j in range(k))
    src = f'''
def f(A, B, n):
    s = 0.0
    for i in range(n):
{assigns}
        s += sum(B) + max(B) + any(B) + v{k - 1}
    return s
'''
    code = compile(src, f"<every size {k}>", "exec")
    fn = next(c for c in code.co_consts if hasattr(c, "co_code"))
    nests = [c for c in _rewrite.rewrite(fn).co_consts if type(c).__name__ == "Nest"]
    positions = re.findall(r"\\$([a-z]*)\\(\\.\\.\\.\\)\\.position", nests[0].ir)
    assert sorted(set(positions)) == ["any", "max", "sum"], (k, positions)
print("lifted")
"""


def test_sequence_reductions_in_nests_of_every_size():
    # sum/min/max/any/all of a sequence name their hidden loop variables after the callee;
    # the lifter once read that name from its variable table while adding to the table (a
    # use after free that aborted a fuzzer run). Nests with 1 to 36 other variables put the
    # addition at every size of the table; glibc's MALLOC_PERTURB_ fills freed memory with
    # garbage, so a read of it shows (the old code aborted on every run).
    import subprocess
    import sys
    env = dict(os.environ, MALLOC_PERTURB_="165")
    r = subprocess.run([sys.executable, "-c", EVERY_SIZE], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "lifted" in r.stdout, r.stderr[-2000:]
    run("""
    def f(A, B, n):
        s = 0.0
        for i in range(n):
            v0 = A[i] * 2
            s += sum(B) + max(B) + any(B) + v0
        return s
    """, "f", lambda: (np.arange(8.0), [1.0, 2.0, 3.0], 8))


@pytest.mark.parametrize("dt", [np.float64, np.float32])
@pytest.mark.parametrize("poke", ["none", "overflow", "sum_overflow", "nan", "infs", "start_inf"])
def test_a_dot_product_on_threads_tests_its_sum_where_each_chunk_ends(dt, poke):
    # A parallel body's speculative chunks (NumPy's default warnings) test a sum for an
    # infinity or a NaN once, where the chunk's fast pass ends (one stays in a sum), so the
    # vectorizer can split it (an np.float32 sum in a float variable of its own): a product
    # that overflows in the middle of a chunk, a sum that overflows (not its terms), a NaN,
    # infinities of both signs, a sum that starts infinite all give CPython's values and
    # warnings, in a loop that writes nothing and in one that writes.
    n = 6000
    big = float(np.finfo(dt).max)

    def make():
        a, b = whole(n, 31).astype(dt), whole(n, 32).astype(dt)
        if poke == "overflow":
            a[1000], b[1000] = big, 4
        elif poke == "sum_overflow":
            a[1000:1003], b[1000:1003] = big / 2, 1
        elif poke == "nan":
            a[3333] = np.nan
        elif poke == "infs":
            a[700], a[4100] = np.inf, -np.inf
        return a, b, dt(np.inf if poke == "start_inf" else 0), np.zeros(n, dt)
    recs = run("""
    def f(a, b, start, out):
        s = start
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        t = start
        for i in range(a.shape[0]):
            out[i] = a[i] - b[i]
            t = t - a[i] * b[i]
        return locals()
    """, "f", make)
    assert all(l["parallel_runs"] > 0 for l in loops(recs).values()), recs


@pytest.mark.parametrize("dt", [np.float32, np.complex64])
@pytest.mark.parametrize("poke", ["none", "overflow", "sum_overflow", "nan", "inf"])
def test_float32_sums_in_order_inside_a_parallel_loop(dt, poke):
    # An inner sum of float32 numbers (np.float32, or the parts of a complex64 sum) runs in
    # order, in a float variable of its own during the fast pass: the same values and
    # warnings as CPython where a term overflows, the sum overflows (not its terms), a NaN
    # or an infinity comes in; the rows run on threads.
    n, m = 400, 40
    big = float(np.finfo(np.float32).max)

    def make():
        M = whole((n, m), 41, -8, 9).astype(dt)
        v = whole(m, 42, -8, 9).astype(dt)
        if dt == np.complex64:
            M = M + 1j * whole((n, m), 43, -8, 9).astype(np.float32)
        if poke == "overflow":
            M[100, 7], v[7] = big, 4
        elif poke == "sum_overflow":
            M[200, 3:6], v[3:6] = big / 2, 1
        elif poke == "nan":
            M[300, 11] = np.nan
        elif poke == "inf":
            M[10, 0], M[10, 5] = np.inf, -np.inf
        return M, v, np.zeros(n, dt), dt(0)
    recs = run("""
    def f(M, v, out, zero):
        for i in range(M.shape[0]):
            acc = zero
            for j in range(M.shape[1]):
                acc += M[i, j] * v[j]
            out[i] = acc
        return out
    """, "f", make)
    assert loops(recs)["i"]["parallel_runs"] > 0, recs
