"""Interleaved iterations (src/specialize/plan_interleave.h): a loop whose body opens with
scalar work around an inner loop (`acc = 0.0; for k: acc += A[i, k] * B[k, j]`) runs several
iterations at a time, their inner loops side by side. The results must be CPython's bit for
bit (each iteration still adds in its own order), with CPython's warnings and exceptions;
each test is differential (difftest.run) and checks in the report that the loop did run
interleaved (or, where it must not, that the results are still right)."""
import functools

import numpy as np
import pytest

import stagepy
import difftest

run = functools.partial(difftest.run, warn_filter="default")


loops = difftest.loops


def interleaved(recs, var):
    return loops(recs).get(var, {}).get("interleaved", 0)


pytestmark = pytest.mark.usefixtures("cpu_only")  # conftest.py


GEMM = """
def f(A, B, C):
    n, m, p = A.shape[0], B.shape[1], A.shape[1]
    for i in range(n):
        for j in range(m):
            acc = 0.0
            for k in range(p):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc
    return locals()
"""


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("m", [1, 7, 8, 29, 64])
def test_gemm_with_an_accumulator_runs_columns_together(threads, m):
    recs = run(GEMM, "f", lambda: (rand(13, 11), rand(11, m, seed=1), np.zeros((13, m))))
    if m >= 8:
        assert interleaved(recs, "j") > 1, recs


def test_fortran_and_reversed_strided_arrays(threads):
    def args():
        A = np.asfortranarray(rand(9, 17))
        B = rand(17, 70, seed=3)
        C = np.zeros((9, 140))[:, ::-2]   # written with a negative stride
        return A, B, C
    recs = run(GEMM, "f", args)
    assert interleaved(recs, "j") > 1


def test_a_strided_view_read_by_the_lanes():
    # Lanes over a view whose columns are not side by side stay one by one; same results.
    run(GEMM, "f", lambda: (rand(9, 17), rand(17, 80, seed=3)[:, ::-2], np.zeros((9, 40))))


def test_float32_and_mixed_dtypes():
    run(GEMM, "f", lambda: (rand(6, 5, dtype=np.float32), rand(5, 19, seed=2, dtype=np.float32),
                            np.zeros((6, 19), dtype=np.float32)))
    recs = run(GEMM, "f", lambda: (rand(6, 5, dtype=np.float32), rand(5, 19, seed=2), np.zeros((6, 19))))
    assert interleaved(recs, "j") > 1


def test_a_column_loop_of_dot_products_with_a_descending_range():
    stagepy.set_threads(1)
    try:
        recs = run("""
        def f(A, x, y):
            m = A.shape[1]
            for j in range(m - 1, -1, -1):
                s = 0.0
                for k in range(A.shape[0]):
                    s += A[k, j] * x[k]
                y[j] = s * 0.5
            return locals()
        """, "f", lambda: (rand(21, 37), rand(21, seed=4), np.zeros(37)))
    finally:
        stagepy.set_threads(0)
    assert interleaved(recs, "j") > 1


ROWS = """
    def f(A, x, y):
        for i in range(A.shape[0]):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k] * x[k]
            y[i] = s
        return locals()
    """


def test_short_rows_read_one_per_lane_run_together():
    # `A[i, k]` with rows shorter than 512: each lane streams its own row, all of them in
    # the cache (3x faster at 300); the same results.
    recs = run(ROWS, "f", lambda: (rand(37, 21), rand(21, seed=4), np.zeros(37)))
    assert interleaved(recs, "i") > 1, recs


def test_rows_that_may_be_long_run_one_by_one():
    # Rows of 600: lanes streaming long rows side by side were measured slower.
    recs = run(ROWS, "f", lambda: (rand(9, 600), rand(600, seed=4), np.zeros(9)))
    assert interleaved(recs, "i") == 0, recs


def test_overflow_and_nan_warn_in_cpythons_order(threads):
    def args():
        A = rand(5, 6)
        B = rand(6, 24, seed=5)
        A[2, 3] = 1e300          # overflows in some columns of row 2 only
        B[3, 5] = 1e300
        B[4, 11] = np.inf        # inf - inf: invalid, in another column
        A[2, 4] = 1.0
        B[1, 11] = -np.inf
        return A, B, np.zeros((5, 24))
    recs = run(GEMM, "f", args)
    assert interleaved(recs, "j") > 1


def test_warnings_in_the_rest_of_an_iteration_keep_their_place():
    recs = run("""
    def f(A, B, C, scale):
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                acc = 0.0
                for k in range(A.shape[1]):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc * scale[j] / scale[i]
        return locals()
    """, "f", lambda: (rand(4, 3), rand(3, 20, seed=6), np.zeros((4, 20)),
                      np.where(np.arange(20) % 7 == 3, 0.0, 1.5) * 1e300))
    assert interleaved(recs, "j") > 1


def test_a_variable_set_only_inside_the_inner_loop(threads):
    # `t` is set only when the inner loop runs: with p == 0 it keeps its earlier value.
    src = """
    def f(A, out, p):
        t = -1.0
        for j in range(A.shape[1]):
            acc = 0.0
            for k in range(p):
                t = A[k, j] * 2.0
                acc += t * t
            out[j] = acc + t
        return locals()
    """
    recs = run(src, "f", lambda: (rand(7, 30), np.zeros(30), 7))
    assert interleaved(recs, "j") > 1
    run(src, "f", lambda: (rand(7, 30), np.zeros(30), 0))


def test_branches_continue_and_two_accumulators(threads):
    recs = run("""
    def f(A, B, lo, hi):
        for j in range(A.shape[1]):
            s = 0.0
            q = 0.0
            for k in range(A.shape[0]):
                v = A[k, j]
                if v < 0.0:
                    continue
                s += v
                q += v * B[k]
            if s > 3.0:
                hi[j] = q
                continue
            lo[j] = s - q
        return locals()
    """, "f", lambda: (rand(12, 45), rand(12, seed=7), np.zeros(45), np.zeros(45)))
    assert interleaved(recs, "j") > 1


def test_an_inner_loop_whose_range_depends_on_the_outer_variable():
    run("""
    def f(A, out):
        for j in range(A.shape[1]):
            acc = 0.0
            for k in range(j):
                acc += A[k % A.shape[0], j]
            out[j] = acc
        return locals()
    """, "f", lambda: (rand(5, 40), np.zeros(40)))


def test_the_same_array_read_and_written_stays_in_order(threads):
    # y is x: iteration j reads what earlier iterations wrote.
    src = """
    def f(x, y, w):
        for j in range(y.shape[0]):
            acc = 0.0
            for k in range(x.shape[0]):
                acc += x[k] * w[k]
            y[j] = acc * 0.25
        return locals()
    """
    def args():
        x = rand(33)
        return x, x, rand(33, seed=8)
    run(src, "f", args)
    recs = run(src, "f", lambda: (rand(33), np.zeros(33), rand(33, seed=8)))
    assert interleaved(recs, "j") > 1


def test_an_index_error_in_the_rest_of_an_iteration(threads):
    run("""
    def f(A, B, C, off):
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                acc = 0.0
                for k in range(A.shape[1]):
                    acc += A[i, k] * B[k, j]
                C[i, j + off] = acc
        return locals()
    """, "f", lambda: (rand(3, 4), rand(4, 30, seed=9), np.zeros((3, 40)), 13), expect=None)


def test_python_lists_and_python_floats():
    recs = run("""
    def f(A, B, C, n, m, p):
        for i in range(n):
            for j in range(m):
                acc = 0.0
                for k in range(p):
                    acc += A[i][k] * B[k][j]
                C[i][j] = acc
        return locals()
    """, "f", lambda: (rand(5, 6).tolist(), rand(6, 17, seed=10).tolist(), np.zeros((5, 17)).tolist(), 5, 17, 6))
    assert interleaved(recs, "j") > 1


def test_a_value_carried_from_the_rest_of_one_iteration_to_the_next(threads):
    run("""
    def f(A, out):
        prev = 0.5
        for j in range(A.shape[1]):
            acc = prev
            for k in range(A.shape[0]):
                acc += A[k, j]
            out[j] = acc
            prev = acc * 0.5
        return locals()
    """, "f", lambda: (rand(6, 40), np.zeros(40)))


def test_columns_on_threads_with_their_last_values(threads):
    # The column loop runs on threads (its privates' last values come from the last column
    # that assigned them), each thread's columns interleaved. In the second pass only the
    # first columns assign `last_big`, which holds the first pass's value until then.
    src = """
    def f(A, x, y, ts, lim, out):
        last_big = -1
        for r in range(2):
            for j in range(A.shape[1]):
                s = 0.0
                for k in range(A.shape[0]):
                    s += A[k, j] * x[k]
                if s > ts[r] and j < lim[r]:
                    last_big = j
                y[j] = s
            out[r] = last_big
        return locals()
    """
    def args():
        A = rand(9, 3000)
        A[:, :60] += 10.0
        A[:, 2500] += 30.0
        return A, np.ones(9), np.zeros(3000), [200.0, 40.0], [3000, 100], np.zeros(2)
    recs = run(src, "f", args)
    assert interleaved(recs, "j") > 1


# ---------------------------------------------------------------- elements as accumulators
# `C[i, j] = 0.0; for k: C[i, j] += ...` (PolyBench's 2mm/3mm inner products): the element
# only F touches is a lane variable, read before F and stored back before the rest of the
# lane's iteration.

TWO_MM = """
def f(A, B, C, alpha):
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            C[i, j] = 0.0
            for k in range(A.shape[1]):
                C[i, j] += alpha * A[i, k] * B[k, j]
    return locals()
"""


@pytest.mark.parametrize("m", [3, 8, 29])
def test_an_element_accumulated_in_place_runs_columns_together(threads, m):
    recs = run(TWO_MM, "f", lambda: (rand(11, 9), rand(9, m, seed=1), np.full((11, m), 7.0), 1.5))
    if m >= 8:
        assert interleaved(recs, "j") > 1, recs


def test_an_element_scaled_first_is_read_before_the_lanes(threads):
    # PolyBench gemm written i-j-k: the element's old value is the accumulator's start.
    recs = run("""
    def f(A, B, C, alpha, beta):
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                C[i, j] *= beta
                for k in range(A.shape[1]):
                    C[i, j] += alpha * A[i, k] * B[k, j]
        return locals()
    """, "f", lambda: (rand(6, 10), rand(10, 21, seed=2), rand(6, 21, seed=3), 1.5, 1.2))
    assert interleaved(recs, "j") > 1


def test_an_element_with_an_empty_inner_loop_and_no_access_before_it():
    # With no access at the top of the body the element is read ahead only when the inner
    # loop runs (it could be out of bounds when it is empty: CPython never touches it then).
    src = """
    def f(A, C, p, off):
        for j in range(A.shape[1]):
            for k in range(p):
                C[j + off] += A[k, j]
        return locals()
    """
    recs = run(src, "f", lambda: (rand(4, 20), np.ones(21), 4, 1))
    assert interleaved(recs, "j") > 1
    run(src, "f", lambda: (rand(4, 20), np.ones(21), 0, 5))
    run(src, "f", lambda: (rand(4, 20), np.ones(21), 0, 10**6))
    run(src, "f", lambda: (rand(4, 20), np.ones(21), 4, 5), expect=None)  # IndexError


# gemm as written most often: the element updated in the inner loop and nowhere else.
GEMM_IJK = """
def f(A, B, C):
    n, m, p = A.shape[0], B.shape[1], A.shape[1]
    for i in range(n):
        for j in range(m):
            for k in range(p):
                C[i, j] += A[i, k] * B[k, j]
    return locals()
"""


@pytest.mark.parametrize("m", [1, 7, 8, 9, 31, 32, 33, 40, 41, 47, 70])
@pytest.mark.parametrize("p", [0, 1, 6])
def test_an_element_updated_only_in_the_inner_loop_runs_columns_together(threads, m, p):
    # Blocks of 32 columns, then of 8, then one by one (plan_interleave.cpp, lanes).
    recs = run(GEMM_IJK, "f", lambda: (rand(5, p), rand(p, m, seed=1), rand(5, m, seed=2)))
    if m >= 8 and p > 0:
        assert interleaved(recs, "j") > 1, recs


def test_an_element_updated_only_in_the_inner_loop_with_an_empty_loop_and_a_short_array():
    # p = 0: CPython reads no element of C, which is smaller than the loops.
    src = """
    def f(A, B, C, n, m, p):
        for i in range(n):
            for j in range(m):
                for k in range(p):
                    C[i, j] += A[i, k] * B[k, j]
        return locals()
    """
    run(src, "f", lambda: (rand(6, 4), rand(4, 50, seed=3), np.ones((2, 3)), 6, 50, 0))
    run(src, "f", lambda: (rand(6, 4), rand(4, 50, seed=3), np.ones((6, 45)), 6, 50, 4), expect=None)


@pytest.mark.parametrize("where", [(1, 3), (2, 36), (0, 45), (3, 70)])
def test_an_element_updated_only_in_the_inner_loop_warns_in_cpythons_order(where):
    # An overflow in a block of 32 columns, in a block of 8, among the last ones: the block
    # runs again column by column and the warnings come in CPython's order.
    k, j = where
    def args():
        A, B, C = rand(4, 5), rand(5, 73, seed=4), rand(4, 73, seed=5)
        A[2, k] = 1e300
        B[k, j] = 1e300
        B[(k + 1) % 5, (j + 3) % 73] = np.inf
        A[2, (k + 1) % 5] = 0.0
        return A, B, C
    recs = run(GEMM_IJK, "f", args)
    assert interleaved(recs, "j") > 1


@pytest.mark.parametrize("update", ["acc = 1.0 / (acc + A[i, k] * B[k, j])",
                                    "acc = A[i, k] * B[k, j] - 1e-300 / acc",
                                    "acc = (acc + A[i, k] * B[k, j]) * 0.0 + 1.0"])
def test_a_recurrence_whose_infinity_does_not_last_warns_in_cpythons_order(update):
    # An overflow the variable does not keep (1 / inf is 0; inf * 0.0 is NaN... + 1.0 is
    # not finite, but 1.0 / inf is): tested where it happens, not only after the loop.
    recs = run(f"""
    def f(A, B, C):
        n, m, p = A.shape[0], B.shape[1], A.shape[1]
        for i in range(n):
            for j in range(m):
                acc = 1.0
                for k in range(p):
                    {update}
                C[i, j] = acc
        return locals()
    """, "f", lambda: (np.full((3, 6), 1e300), np.where(np.arange(6 * 40).reshape(6, 40) % 7 == 3, 1e300, 0.5),
                       np.zeros((3, 40))))
    if "/ acc" not in update:  # (a Python float divisor may be zero: that one runs plainly)
        assert interleaved(recs, "j") > 1


def test_an_element_updated_only_in_the_inner_loop_of_an_array_also_read(threads):
    # C is B: the columns read elements other columns write, in order.
    def aliased():
        B = rand(40, 40, seed=6)
        return rand(40, 40, seed=7), B, B
    run(GEMM_IJK, "f", aliased)


def test_an_element_read_after_the_inner_loop_and_in_the_next_statement(threads):
    recs = run("""
    def f(A, B, C, D):
        for i in range(A.shape[0]):
            for j in range(B.shape[1]):
                C[i, j] = 1.0
                for k in range(A.shape[1]):
                    C[i, j] += A[i, k] * B[k, j]
                C[i, j] = C[i, j] * 0.5
                D[i, j] = C[i, j] + D[i, j]
        return locals()
    """, "f", lambda: (rand(5, 7), rand(7, 24, seed=4), np.zeros((5, 24)), rand(5, 24, seed=5)))
    assert interleaved(recs, "j") > 1


def test_an_element_in_float32_and_in_python_lists():
    run(TWO_MM, "f", lambda: (rand(5, 6, dtype=np.float32), rand(6, 19, seed=6, dtype=np.float32),
                              np.zeros((5, 19), dtype=np.float32), np.float32(0.5)))
    recs = run("""
    def f(A, B, C, alpha, n, m, p):
        for i in range(n):
            for j in range(m):
                C[i][j] = 0.0
                for k in range(p):
                    C[i][j] += alpha * A[i][k] * B[k][j]
        return locals()
    """, "f", lambda: (rand(5, 6).tolist(), rand(6, 17, seed=7).tolist(), np.ones((5, 17)).tolist(),
                      1.5, 5, 17, 6))
    assert interleaved(recs, "j") > 1


def test_an_element_also_read_through_another_subscript_stays_in_memory(threads):
    # C[i + 0, j] is the same element written another way: it is not taken for a variable
    # (the read must see each update), so these columns run one at a time.
    run("""
    def f(B, C):
        for i in range(C.shape[0]):
            for j in range(C.shape[1]):
                C[i, j] = 0.5
                for k in range(B.shape[0]):
                    C[i, j] += C[i + 0, j] * B[k, j] * 0.25
        return locals()
    """, "f", lambda: (rand(12, 16, seed=8), np.zeros((5, 16))))


def test_an_element_of_an_array_that_is_also_read_under_another_name(threads):
    src = """
    def f(A, C, out):
        for j in range(C.shape[0]):
            C[j] = 0.0
            for k in range(A.shape[0]):
                C[j] += A[k, j] * out[k]
        return locals()
    """
    def aliased():
        C = rand(40, seed=10)
        return rand(40, 40, seed=11), C, C   # out is C: reads see the columns written before
    run(src, "f", aliased)
    recs = run(src, "f", lambda: (rand(40, 40, seed=11), np.zeros(40), rand(40, seed=10)))
    assert interleaved(recs, "j") > 1


def test_an_element_with_an_error_after_the_inner_loop(threads):
    # The lanes before the failing column have stored their elements, the ones after not.
    recs = run("""
    def f(A, B, C, w, out):
        for j in range(B.shape[1]):
            C[j] = 0.0
            for k in range(A.shape[0]):
                C[j] += A[k, 0] * B[k, j]
            out[j] = C[j] + 1.0 / w[j]
        return locals()
    """, "f", lambda: (rand(6, 2), rand(6, 30, seed=12), np.full(30, 9.0),
                      [0.0 if j == 13 else 2.0 for j in range(30)], np.zeros(30)), expect="bail")
    assert interleaved(recs, "j") > 1


def test_an_element_that_overflows_warns_in_cpythons_order():
    def args():
        A = rand(5, 6)
        B = rand(6, 24, seed=13)
        A[2, 3] = 1e300
        B[3, 5] = 1e300
        B[4, 11] = np.inf
        A[2, 4] = 1.0
        B[1, 11] = -np.inf
        return A, B, np.zeros((5, 24)), 1.0
    recs = run(TWO_MM, "f", args)
    assert interleaved(recs, "j") > 1


# F with loops around loops (plan_interleave.cpp, FastPart::loop): a window's `for di: for dj:`.
BLUR = """
def f(u, v):
    n, m = u.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            s = 0.0
            for di in (-1, 0, 1):
                for dj in (-1, 0, 1):
                    s += u[i + di, j + dj]
            v[i, j] = s / 9.0
    return locals()
"""


@pytest.mark.parametrize("m", [3, 9, 10, 11, 37])
def test_a_window_over_offset_tuples_runs_columns_together(threads, m):
    recs = run(BLUR, "f", lambda: (rand(7, m), np.zeros((7, m))))
    if m >= 11:
        assert interleaved(recs, "j") > 1, recs


def test_a_window_whose_sums_overflow_warns_in_cpythons_order(threads):
    def args():
        u = rand(6, 30)
        u[2, 7] = 1.5e308
        u[3, 8] = 1.5e308    # overflows in the windows around both
        u[4, 20] = np.nan
        u[1, 25] = np.inf
        u[2, 26] = -np.inf   # inf - inf: invalid
        return u, np.zeros((6, 30))
    recs = run(BLUR, "f", args)
    assert interleaved(recs, "j") > 1


def test_a_weighted_window_with_a_runtime_radius_and_an_inner_range_of_the_outer_offset(threads):
    src = """
    def f(u, w, v, r):
        n, m = u.shape
        for i in range(r, n - r):
            for j in range(r, m - r):
                s = u[i, j] * 0.0   # an np.float64 from the start: no peeled copies of F's loops
                for a in range(-r, r + 1):
                    t = u[i, j] * 0.0
                    for b in range(-r, a + 1):
                        t += u[i + a, j + b] * w[a + r, b + r]
                    s += t * t
                v[i, j] = s
        return locals()
    """
    for r in (0, 1, 2):
        recs = run(src, "f", lambda: (rand(9, 40), rand(2 * r + 1, 2 * r + 1, seed=3), np.zeros((9, 40)), r))
        assert interleaved(recs, "j") > 1


def test_a_window_past_the_edge_raises_index_error_after_the_earlier_writes(threads):
    # j + 1 reaches m in the last column: CPython raises there with the columns before done.
    run("""
    def f(u, v):
        n, m = u.shape
        for i in range(1, n - 1):
            for j in range(1, m):
                s = 0.0
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        s += u[i + di, j + dj]
                v[i, j] = s
        return locals()
    """, "f", lambda: (rand(5, 21), np.zeros((5, 21))), expect=None)


def test_a_window_with_a_skip_in_its_innermost_loop_and_python_lists():
    recs = run("""
    def f(u, v, n, m):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                s = 0.0
                c = 0.0   # (an int count may leave 64 bits as far as codegen knows: F would not run)
                for di in (-1, 0, 1):
                    for dj in [-1, 0, 1]:
                        x = u[i + di][j + dj]
                        if x < 0.0:
                            continue
                        s += x
                        c += 1.0
                v[i][j] = s / (c + 1.0)
        return locals()
    """, "f", lambda: (rand(6, 30).tolist(), np.zeros((6, 30)).tolist(), 6, 30))
    assert interleaved(recs, "j") > 1


def test_a_float32_element_set_from_a_python_float_runs_natively():
    # tmp[i] = 0.0 rounds 0.1-like floats into float32: the element is not kept in a
    # register as the float (gesummv and atax with float32 data).
    recs = run("""
    def f(x, tmp, n, c):
        for i in range(n):
            tmp[i] = c
            for j in range(n):
                tmp[i] += x[j] * 0.1
        return tmp
    """, "f", lambda: (rand(40, dtype=np.float32), np.ones(40, dtype=np.float32), 40, 0.1))
    assert all(r["native_calls"] for r in recs if r["line"] == 3), recs
