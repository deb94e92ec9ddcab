"""Rows, slices and whole arrays in loop bodies: `C[i, :] += a * B[k, :]`, `u[1:-1] = ...`,
`x[i] = x[i - 1] + dt * v[i - 1]`, `u += dt * f` run natively with NumPy's results, element
for element. The new elements are computed before any is stored (as NumPy computes a
temporary), so overlapping operands read the old values; shapes that do not broadcast,
zero steps, and operations where NumPy would warn hand the statement to CPython, which
raises or warns itself. Differential: every case runs under CPython and under stagepy."""
import itertools
import sys

import numpy as np
import pytest

import difftest
import stagepy

pytestmark = pytest.mark.skipif(int(np.__version__.split(".")[0]) < 2, reason="slices follow NumPy 2's rules only")


def rnd(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed + sum(shape)).random(shape).astype(dtype)


NATIVE = [
    ("a row times a scalar", """
    def f(C, A, x):
        for i in range(C.shape[0]):
            C[i, :] = A[i, :] * x + 1.0
        return locals()
    """, lambda: (np.zeros((5, 7)), rnd(5, 7), 2.5)),
    ("gemm with row updates", """
    def f(C, A, B, alpha, beta):
        for i in range(C.shape[0]):
            C[i, :] *= beta
            for k in range(A.shape[1]):
                C[i, :] += alpha * A[i, k] * B[k, :]
        return locals()
    """, lambda: (rnd(6, 5), rnd(6, 4, seed=1), rnd(4, 5, seed=2), 1.5, 1.2)),
    ("LU: a slice of the same array it reads", """
    def f(A):
        n = A.shape[0]
        for k in range(n):
            for j in range(k + 1, n):
                A[j, k] /= A[k, k]
                A[j, k + 1:] -= A[j, k] * A[k, k + 1:]
        return locals()
    """, lambda: (rnd(6, 6) + 6 * np.eye(6),)),
    ("rows of a 2-d array by one index", """
    def f(x, v, dt):
        for i in range(1, x.shape[0]):
            x[i] = x[i - 1] + dt * v[i - 1]
        return locals()
    """, lambda: (np.zeros((8, 3)), rnd(8, 3), 0.1)),
    ("a 1-d stencil over time", """
    def f(u, c, T):
        for t in range(T):
            u[1:-1] = u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])
        return locals()
    """, lambda: (rnd(40), 0.25, 30)),
    ("a 2-d Jacobi sweep, arrays swapped", """
    def f(A, B, T):
        for t in range(T):
            B[1:-1, 1:-1] = 0.25 * (A[:-2, 1:-1] + A[2:, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:])
            A, B = B, A
        return locals()
    """, lambda: (rnd(9, 11), rnd(9, 11, seed=3), 7)),
    ("filling rows and columns", """
    def f(C):
        for i in range(C.shape[0]):
            C[i, :] = 0
        for j in range(C.shape[1]):
            C[:, j] = float(j) * 0.5
            C[j % C.shape[0], ::2] = -1
        return locals()
    """, lambda: (rnd(4, 6),)),
    ("negative steps and reversal in place", """
    def f(a, b):
        for k in range(3):
            b[::-1] = a
            a[:] = a[::-1] + k
            a[1::3] = b[-1:0:-3][:len(a[1::3])]
        return locals()
    """, lambda: (rnd(10), np.zeros(10))),
    ("broadcasting a row over rows", """
    def f(C, b):
        for i in range(0, C.shape[0] - 1, 2):
            C[i:i + 2, :] = b
            C[i:i + 2] += b * i
        return locals()
    """, lambda: (np.zeros((6, 4)), rnd(4))),
    ("whole arrays in place", """
    def f(u, g, dt, T):
        for t in range(T):
            u += dt * g
            u *= 0.5
            g -= u
        return locals()
    """, lambda: (rnd(12), rnd(12, seed=1), 0.01, 5)),
    ("integer and boolean arrays", """
    def f(a, b, mask, A):
        for i in range(a.shape[0]):
            a[i, :] += b[i, :] * 3 - i
            a[i, 1:] //= 2
            mask[i, :] = A[i, :] > 0.5
            b[i, :] = a[i, :] & 7 | (b[i, :] << 1)
        return locals()
    """, lambda: (np.arange(20).reshape(4, 5), np.arange(20, 40).reshape(4, 5), np.zeros((4, 5), bool), rnd(4, 5))),
    ("float32 arrays", """
    def f(c, a, b):
        for i in range(c.shape[0]):
            c[i, :] = a[i, :] * 0.1 + b[i, :]
            c[i, :] += a[i, :]
        return locals()
    """, lambda: (np.zeros((3, 5), np.float32), rnd(3, 5, dtype=np.float32), rnd(3, 5))),
    ("NumPy functions computed exactly", """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = np.sqrt(np.abs(A[i, :] - 0.5)) + np.maximum(A[i, :], 0.25) - abs(np.minimum(A[i, :], 0.75))
            C[i, ::2] = np.floor(A[i, ::2] * 10) + np.sign(A[i, ::2] - 0.5) + np.square(A[i, ::2])
        return locals()
    """, lambda: (np.zeros((4, 6)), rnd(4, 6))),
    ("NumPy's own loops (np.exp, np.sin, np.cbrt...)", """
    def f(C, A, x):
        for i in range(C.shape[0]):
            C[i, :] = np.exp(-A[i, :] ** 2) * np.sin(x * A[i, ::-1]) + np.log1p(A[i, :])
            C[i, 1:] += np.arctan(A[i, 1:]) + np.cosh(A[::2, 0][i % 2]) + np.cbrt(A[i, :-1] - 0.5)
            C[:, i] += np.exp(A[:, i + 1])
        return locals()
    """, lambda: (np.zeros((4, 50)), rnd(4, 50), 2.0)),
    ("squares (NumPy's square)", """
    def f(C, A, a):
        for i in range(C.shape[0]):
            C[i, :] = (A[i, :] - 0.5) ** 2 + A[i, ::-1] ** 2.0
            a[i, :] **= 2
        return locals()
    """, lambda: (np.zeros((3, 4)), rnd(3, 4), np.arange(12, dtype=np.int16).reshape(3, 4))),
    ("np.sum of rows, columns and operations (NumPy's pairwise summation)", """
    def f(A, out, cnt):
        for i in range(A.shape[0]):
            out[i] = np.sum(A[i, :]) + np.sum(A[:, i] * 2.0) - np.sum(A[i, ::3] ** 2)
            cnt[i] = np.sum(A[i, :] > 0.5) + np.sum(A[i, 1:7]) + (A[i, ::-1] < 0.25).sum()
            out[i] += (A[i, :] * A[:, i]).sum() + A[i].sum() + np.mean(A[i, ::2]) * A[:, i].mean()
        return locals()
    """, lambda: (rnd(300, 300) * 10.0 ** rnd(300, 300, seed=5).round(), np.zeros(300), np.zeros(300, np.int64))),
    ("np.where and np.clip", """
    def f(C, D, A, N, I, x):
        for i in range(C.shape[0]):
            C[i, :] = np.where(A[i, :] > 0.5, A[i, :], x) + np.clip(A[i, ::-1] * 3 - 1, -0.0, 1.0)
            C[i, 1:] += np.where(I[i, 1:] % 2 == 0, 1, 2.5) + np.clip(I[i, :-1], 2, 9) + np.clip(x, 0, 0.5)
            I[i, :] = np.clip(I[i, :] - 5, 0, 3) + np.where(A[i, :] < 0.2, I[i, :], 7)
            D[i, :] = np.clip(N[i, ::-1], -0.0, 0.5)
            D[i, ::2] = np.where(N[i, ::2] > 0.5, N[i, ::2], -x)
        return locals()
    """, lambda: (np.zeros((5, 40)), np.zeros((5, 40)), rnd(5, 40, seed=3) - 0.25,
                    np.where(rnd(5, 40) > 0.9, np.nan, rnd(5, 40, seed=3) - 0.5),
                    np.arange(200, dtype=np.int32).reshape(5, 40) % 13, 0.75)),
    ("np.max and np.min of rows (NaN propagates)", """
    def f(A, N, B, out, nan, lo):
        for i in range(A.shape[0]):
            out[i] = np.max(A[i, :]) - A[i, 1:].min() + np.min(A[:, i] * 2) + (A[i, :] - 1).max()
            nan[i, 0] = np.max(N[i, :])
            nan[i, 1] = N[i, 1:].min()
            lo[i] = np.max(B[i, :]) + B[i, ::2].min() + np.amin(B[i, 1:] > 3)
        return locals()
    """, lambda: (rnd(5, 6, seed=2) - 0.5, np.where(rnd(5, 6) > 0.8, np.nan, rnd(5, 6, seed=2) - 0.5),
                    np.arange(30, dtype=np.int8).reshape(5, 6) - 9, np.zeros(5), np.zeros((5, 2)), np.zeros(5, np.int64))),
    ("np.sum of float32 and integer rows", """
    def f(A, B, out):
        s = 0
        for i in range(A.shape[0]):
            out[i] = np.sum(A[i, :]) + A[i, 3:].mean()
            s += np.sum(B[i, :]) + np.sum(B[i, :] * 3)
        return locals()
    """, lambda: (rnd(40, 257, dtype=np.float32), np.arange(40 * 257, dtype=np.int16).reshape(40, 257), np.zeros(40, np.float32))),
    ("bounds from variables, clamped", """
    def f(a, b, lo, hi):
        for k in range(4):
            a[lo:hi] = b[lo:hi] * k
            a[-hi:] += 1
            a[hi * 10:] = 99.0
        return locals()
    """, lambda: (np.zeros(9), rnd(9), 2, 20)),
    ("len and shape of slices, elements of slices", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = len(A[i, 1:]) + A[i, 2:].shape[0] + A[i, 1:][1] + A[1:][i - 1, 0]
        return locals()
    """, lambda: (rnd(4, 5), np.zeros(4))),
    ("tuples stored into rows (a trajectory)", """
    def f(n, dt, xs, ts, ks, bs):
        x, y, z = 1.0, 1.0, 1.0
        for i in range(n):
            dx = 10.0 * (y - x)
            dy = x * (28.0 - z) - y
            dz = x * y - 8.0 / 3.0 * z
            x += dx * dt
            y += dy * dt
            z += dz * dt
            xs[i] = (x, y, z)
            xs[i, 1:] = (z, x)
            ts[i] = (x, -0.0)
            ks[i] = (i, 2 ** 40 + i, -i)
            bs[i] = (i % 2 == 0, True)
        xs[0:2, 1:] = (7.0, 8.0)
        ks[:, 0] = (3,)
        return locals()
    """, lambda: (50, 0.01, np.zeros((50, 3)), np.zeros((50, 2), np.float32), np.zeros((50, 3), np.int64),
                  np.zeros((50, 2), bool))),
    ("ints and floats in one tuple into float64", """
    def f(A):
        for i in range(A.shape[0]):
            A[i] = (i, 2 ** 53 + 1, 0.5 * i)
        return locals()
    """, lambda: (np.zeros((20, 3)),)),
]


@pytest.mark.parametrize("what,src,make_args", NATIVE, ids=[n[0] for n in NATIVE])
def test_slices_run_natively(what, src, make_args):
    recs = difftest.run(src, "f", make_args, globals_={"np": np})
    assert all(r["bailouts"] == 0 for r in recs), [(r["line"], r["bailouts"], r["reason"]) for r in recs]


def test_module_level_slices_run_natively():
    src = """
for t in range(T):
    u[1:-1] = u[1:-1] + 0.2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    u[0] = u[-1] = 0.0
"""
    difftest.run_module(src, lambda: {"np": np, "T": 20, "u": rnd(30)})


HANDED_OVER = [
    ("shapes that do not broadcast (ValueError)", """
    def f(a, b):
        for k in range(3):
            a[k:k + 3] = b[k:k + 4]
        return locals()
    """, lambda: (np.zeros(8), rnd(8))),
    ("a zero step (ValueError)", """
    def f(a, s):
        for k in range(3):
            a[::s] = k
        return locals()
    """, lambda: (np.zeros(8), 0)),
    ("a row index out of range (IndexError, earlier rows written)", """
    def f(C, n):
        for i in range(n):
            C[i, :] = i
        return locals()
    """, lambda: (np.zeros((3, 4)), 5)),
    ("a float overflow (RuntimeWarning, once per operation)", """
    def f(C, A, x):
        for i in range(C.shape[0]):
            C[i, :] = A[i, :] * x
        return locals()
    """, lambda: (np.zeros((3, 4)), rnd(3, 4) + 1, 1e308)),
    ("an integer floor division by zero (RuntimeWarning)", """
    def f(a, b):
        for i in range(a.shape[0]):
            a[i, :] = a[i, :] // b[i, :]
        return locals()
    """, lambda: (np.arange(12).reshape(3, 4), np.array([[1, 2, 3, 4], [1, 0, 1, 1], [2, 2, 2, 2]]))),
    ("np.exp of a reversed view (NumPy's loop may round it differently)", """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = np.exp(A[i, ::-1])
        return locals()
    """, lambda: (np.zeros((3, 40)), rnd(3, 40) * 10)),
    ("np.max where +0.0 and -0.0 tie (NumPy picks either)", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = np.max(A[i, :])
        return locals()
    """, lambda: (np.array([[-1.0, 0.0, -0.0, -2.0], [-0.0, -3.0, 0.0, -1.0]]), np.zeros(2))),
    ("np.max of an empty slice (ValueError)", """
    def f(A, out):
        for i in range(A.shape[0]):
            out[i] = np.max(A[i, i:2])
        return locals()
    """, lambda: (rnd(4, 4), np.zeros(4))),
    ("a tuple of another length than the row (ValueError)", """
    def f(A):
        try:
            for i in range(A.shape[0]):
                A[i, :2] = (i * 1.0, 2.0)
                A[i] = (i * 1.0, 2.0)
        except ValueError as e:
            return str(e), A
        return A
    """, lambda: (np.zeros((3, 4)),)),
    ("an integer that does not fit int8 (OverflowError)", """
    def f(a, v):
        for i in range(a.shape[0]):
            a[i, :] += v
        return locals()
    """, lambda: (np.zeros((2, 3), np.int8), 300)),
]


@pytest.mark.parametrize("warn_filter", ["always", "default"])
@pytest.mark.parametrize("what,src,make_args", HANDED_OVER, ids=[n[0] for n in HANDED_OVER])
def test_slices_hand_statements_to_cpython(what, src, make_args, warn_filter):
    difftest.run(src, "f", make_args, expect="bail", warn_filter=warn_filter, globals_={"np": np})


INTERPRETED = [
    ("a slice of a list (a copy)", """
    def f(L, M):
        for i in range(len(L)):
            M[i][1:3] = L[i][0:2]
        return locals()
    """, lambda: ([[1.0, 2.0, 3.0] for _ in range(2)], [[0.0] * 4 for _ in range(2)]), "slices a list"),
    ("a power of an integer array other than a square", """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = A[i, :] ** 3
        return locals()
    """, lambda: (np.zeros((2, 3), np.int64), np.arange(6).reshape(2, 3)), "powers of float arrays"),
    ("a NumPy function of arrays stagepy does not know", """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = np.cumsum(A[i, :])
        return locals()
    """, lambda: (np.zeros((2, 3)), rnd(2, 3)), "cumsum"),
    ("a number raised to an array through NumPy's loop", """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, 1:] = np.power(-0.0, A[i, 1:])
        return locals()
    """, lambda: (np.zeros((2, 5)), rnd(2, 5)), "np.power() of a number and an array"),
    ("an integer array updated in place by floats (UFuncTypeError)", """
    def f(a):
        for i in range(a.shape[0]):
            a[i, :] += 0.5
        return locals()
    """, lambda: (np.zeros((2, 3), int),), "NumPy refuses the cast"),
    ("np.sum of a whole 2-d array", """
    def f(A, out):
        for i in range(out.shape[0]):
            out[i] = np.sum(A[i:, :])
        return locals()
    """, lambda: (rnd(3, 3), np.zeros(3)), "2-d array"),
    ("a view stored after another store", """
    def f(a, b):
        for k in range(2):
            a[:], b[:] = b, a
        return locals()
    """, lambda: (rnd(4), rnd(4, seed=1)), "after another store"),
    ("a tuple of floats into an integer array (NumPy casts the array)", """
    def f(A):
        for i in range(A.shape[0]):
            A[i] = (1.5, 2.5)
        return locals()
    """, lambda: (np.zeros((3, 2), np.int64),), "into a row or slice of an array of int64"),
    ("a slice of a complex array", """
    def f(z):
        for k in range(2):
            z[1:] = z[:-1] * 2
        return locals()
    """, lambda: (np.arange(4) * (1 + 1j),), "complex"),
]


@pytest.mark.parametrize("what,src,make_args,reason", INTERPRETED, ids=[n[0] for n in INTERPRETED])
def test_slices_stagepy_leaves_to_cpython(what, src, make_args, reason):
    recs = difftest.run(src, "f", make_args, expect="interpreted", globals_={"np": np})
    difftest.assert_reason(recs, reason)


def test_a_statement_whose_operands_overlap_its_target_reads_old_values():
    # NumPy computes the right-hand side before storing: a shift right by one, not a smear.
    src = """
    def f(a):
        for k in range(3):
            a[1:] = a[:-1]
            a[:-1] += a[1:]
        return locals()
    """
    recs = difftest.run(src, "f", lambda: (np.arange(10.0),))
    assert all(r["bailouts"] == 0 for r in recs)


def _slice_pairs(seed, n, count):
    """`count` pairs of slices of range(n) (negative steps too) selecting as many elements,
    over and over (difftest.run makes `count` calls' arguments for each side in turn)."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        ds, ss = (int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in range(2))
        d0, s0 = int(rng.integers(0, n)), int(rng.integers(0, n))
        d = range(n)[d0::ds]
        s = range(n)[s0::ss]
        m = int(rng.integers(1, 1 + min(len(d), len(s))))
        d1 = d0 + m * ds
        s1 = s0 + m * ss
        out.append((d0, d1 if d1 >= 0 else None, ds, s0, s1 if s1 >= 0 else None, ss))
    return itertools.cycle(out)


def test_a_1d_view_assigned_over_itself_goes_as_numpy_goes():
    # NumPy copies a view that overlaps its target first, except into a 1-d target with
    # strides of one sign: it assigns element by element then, forward or backward by where
    # the view starts (array_assign_array.c). `a[::2][:5] = a[0:5]` smears a[0] along;
    # `M[1, :] = M[:, 4]` reads M[1, 4] after it is stored. The fuzzer found the second.
    src = """
    def f(a, d0, d1, ds, s0, s1, ss):
        for k in range(2):
            a[d0:d1:ds] = a[s0:s1:ss]
        return locals()
    """
    for seed, dt in enumerate((np.float64, np.int16, np.uint8)):
        pairs = _slice_pairs(seed, 24, 40)
        recs = difftest.run(src, "f", lambda: (np.arange(24).astype(dt) * 3 + 1, *next(pairs)), calls=40)
        assert all(r["bailouts"] == 0 for r in recs)


def test_a_row_and_a_column_of_one_matrix_assigned_to_each_other():
    src = """
    def f(M, n):
        for v in range(n):
            M[v // 2, :10] = M[:10, (v * 2) % n]
            M[(v * 3) % n, 1:] = M[1:, v // 3]
            M[::-1, v % 3] = M[v % 5, ::-1]
            M[1:-1, 2:5] = M[:-2, 3:6]
        return locals()
    """
    recs = difftest.run(src, "f", lambda: (np.random.default_rng(1).random((8, 8)).astype(np.float32), 7))
    assert all(r["bailouts"] == 0 for r in recs)


def test_a_view_of_another_dtype_over_the_same_memory_goes_to_cpython_where_numpy_casts_in_place():
    src = """
    def f(a, b, d0, d1, ds, s0, s1, ss):
        for k in range(2):
            a[d0:d1:ds] = b[s0:s1:ss]
        return locals()
    """
    pairs = _slice_pairs(7, 16, 40)

    def make():
        a = np.arange(16.0) - 5
        return (a, a.view(np.int64), *next(pairs))
    recs = difftest.run(src, "f", make, calls=40, expect="bail")
    assert sum(r["native_calls"] for r in recs) > 0


def test_slice_loops_run_in_order_and_say_why():
    src = """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = A[i, :] + 1
        return locals()
    """
    recs = difftest.run(src, "f", lambda: (np.zeros((600, 8)), rnd(600, 8)))
    loop = difftest.loops(recs)["i"]
    assert "rows or slices" in loop["why"], loop


def test_scratch_memory_is_released_after_a_huge_slice():
    a = np.zeros(3_000_000)
    src = """
    def f(a):
        for k in range(2):
            a[:] = a + 1.0
        return a
    """
    difftest.run(src, "f", lambda: (a.copy(),), calls=1)
    assert stagepy._hook.core().scratch_bytes() < 1 << 20


@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_elements_numpy_computes_for_an_empty_target_still_warn(warn_filter):
    # Found by the fuzzer: NumPy computes the right-hand side (a row, where 0.0 // 0.0 is
    # invalid) before storing it into no rows at all; a loop over the target's shape would
    # compute nothing and lose the warning.
    src = """
    def f(M, r):
        for k in range(2):
            M[5:2, :] -= (M[r, :] // M[r, :]) > 0.5
            M[r, 0:0] = M[r, 0:1] / 0.0
        return locals()
    """
    difftest.run(src, "f", lambda: (np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 1.0]]), 1), expect="bail",
                 warn_filter=warn_filter)


@pytest.mark.parametrize("args", ["same", "shifted", "transposed"])
def test_arguments_that_share_memory(args):
    # The new elements are all computed before any is stored, whichever arguments alias.
    src = """
    def f(C, A):
        for i in range(C.shape[0]):
            C[i, :] = A[i, :] * 0.5 + A[:, i] + C[i, ::-1]
            C[i, 1:] += C[i, :-1]
        return locals()
    """

    def make():
        base = rnd(7, 7)
        if args == "same":
            return base, base
        if args == "shifted":
            return base[1:, 1:], base[:-1, :-1]
        return base, base.T
    recs = difftest.run(src, "f", make)
    assert all(r["bailouts"] == 0 for r in recs)


def test_np_sum_of_a_whole_array_the_loop_writes_runs_in_order():
    # np.sum(a) reads all of `a`, which the polyhedral model does not see: the loop must not
    # run in parallel (each iteration reads what the earlier ones wrote).
    src = """
    def f(a, out):
        for i in range(1, out.shape[0]):
            a[i] = np.sum(a) * 1e-4
            out[i] = a[i]
        return locals()
    """
    recs = difftest.run(src, "f", lambda: (rnd(2000) * 1e-3, np.zeros(2000)), globals_={"np": np})
    assert all(r["bailouts"] == 0 for r in recs), [(r["bailouts"], r["reason"]) for r in recs]
    assert not difftest.ran_parallel(recs, "i")
    assert "np.sum reads whole" in difftest.loops(recs)["i"]["why"]


def test_np_mean_of_more_float32_items_than_float32_counts_exactly():
    # NumPy divides the float32 sum by the count as a float64 (2^24 + 2 is not a float32).
    src = """
    def f(a, out):
        for k in range(1):
            out[k] = np.mean(a[1:]) + a[2:].mean()
        return locals()
    """
    a = np.full(2**24 + 3, 1.0, np.float32)
    a[1] = 3.0
    a[2] = 5.0
    recs = difftest.run(src, "f", lambda: (a, np.zeros(1, np.float32)), calls=1, globals_={"np": np})
    assert all(r["bailouts"] == 0 for r in recs), [(r["bailouts"], r["reason"]) for r in recs]
