"""Parallel loops: a loop runs on several threads only where the dependence analysis,
completed with the call's values, proves its iterations independent - and the results
are CPython's. Each test is differential (difftest.run) and also checks, in the report,
which loops did run on threads and why the others did not.

Float reductions on threads are reassociated (docs/semantics.md); tests of them use
values whose sums are exact in any order, so they still compare bit for bit."""
import functools

import textwrap

import numpy as np
import pytest

import stagepy
import difftest

# Python's default warnings filter (each warning once per place): kernels may then compute
# on where NumPy warns and emit the warnings afterwards, in CPython's order. Under "always"
# every NumPy float operation could hand over to CPython, and such loops stay sequential.
run = functools.partial(difftest.run, warn_filter="default")

N = 2000  # iterations enough to be split between threads


@pytest.fixture(autouse=True)
def two_threads():
    stagepy.set_threads(2)
    yield
    stagepy.set_threads(0)  # back to the default


loops, ran_parallel = difftest.loops, difftest.ran_parallel


def test_elementwise_loop_runs_on_threads(cpu_only):
    recs = run("""
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] * 2.0 + B[i]
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), np.ones(N), np.zeros(N), N))
    assert ran_parallel(recs, "i")
    assert recs[0]["threads"] == 2


def test_loop_bounded_by_the_arrays_shape_runs_on_threads(cpu_only):
    # `range(A.shape[0])`: the nest reads A.shape itself; its extent is A's rank, so the
    # bounds facts are decided and the loop runs in parallel without per-access checks.
    recs = run("""
    def f(A, B, C):
        for i in range(A.shape[0]):
            t = A[i] * 2.0 + B[i]
            C[i] = t * t
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), np.ones(N), np.zeros(N)))
    assert ran_parallel(recs, "i")
    assert loops(recs)["i"]["why"] == ""


def test_float_sum_reduction():
    recs = run("""
    def f(A, n):
        s = 0.0
        t = 1.0
        for i in range(n):
            s += A[i]
            s -= 0.5
            t *= 1.0 if A[i] < 10 else 1.0
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), N))
    assert ran_parallel(recs, "i")


def test_int_min_max_reductions():
    recs = run("""
    def f(A, n):
        lo = A[0]
        hi = A[0]
        for i in range(n):
            lo = min(lo, A[i])
            hi = max(A[i], hi)
        return locals()
    """, "f", lambda: (np.random.default_rng(1).integers(-10**6, 10**6, N), N))
    assert ran_parallel(recs, "i")


def zeros_nans_and_infinities(seed, dtype=np.float64):
    """Values where a float min/max depends on the order of the iterations: NaNs (never
    greater or smaller, so a NaN first stays), zeros of both signs (equal: the first stays)
    and infinities."""
    rng = np.random.default_rng(seed)
    A = rng.choice(np.array([0.0, -0.0, -1.5, 2.5, np.nan, -np.inf, np.inf], dtype=dtype), N)
    if seed % 4 == 1:
        A[0] = np.nan
    elif seed % 4 == 2:  # the extreme is a zero: which sign comes first decides
        A[:] = -1.5
        A[N // 8 + 10: N // 4 - 10] = -0.0  # ... and it is in an early part, not the first
        A[N // 4:] = 0.0
    elif seed % 4 == 3:
        A[: N // 2 + 3] = np.nan
        if seed == 7:  # nothing above -inf: `m = -math.inf` stays a Python float
            A[~np.isnan(A)] = -np.inf
    return A


@pytest.mark.parametrize("seed", range(8))
def test_float_min_max_reductions_combine_in_iteration_order(cpu_only, seed):
    # max(m, e), min(m, e) and `if e > m: m = e` keep m unless e is strictly beyond it: the
    # threads take contiguous runs of iterations and their parts combine in order, so NaNs
    # and the sign of a zero come out as CPython's. m = -inf (a Python float) takes np.float64
    # values: float | np.float64, whose type is combined too.
    recs = run("""
    def f(A, B, n):
        hi = A[0]
        lo = A[0]
        m = -math.inf
        z = 5.0
        err = 0.0
        nz = 1e300
        for i in range(n):
            hi = max(hi, A[i])
            lo = min(lo, A[i])
            nz = min(nz, -A[i])
            if A[i] > m:
                m = A[i]
            if z > A[i] * 2.0:
                z = A[i] * 2.0
            err = max(err, abs(A[i] - B[i]))
        return locals()
    """, "f", lambda: (zeros_nans_and_infinities(seed), zeros_nans_and_infinities(seed + 100), N),
        globals_={"math": __import__("math")})
    assert ran_parallel(recs, "i")
    assert loops(recs)["i"]["why"] == ""


@pytest.mark.parametrize("seed", range(4))
def test_float32_and_python_float_min_max_reductions(cpu_only, seed):
    recs = run("""
    def f(A, L, n):
        hi = A[0]
        lo = L[0]
        for i in range(n):
            lo = min(lo, L[i] * 0.5)
            if hi < A[i]:  # the loop's last statement: 3.12 puts a `continue` in both branches
                hi = A[i]
        return locals()
    """, "f", lambda: (zeros_nans_and_infinities(seed, np.float32), zeros_nans_and_infinities(seed).tolist(), N))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("update", ["hi = max(A[i], hi)", "if A[i] >= hi:\n                hi = A[i]"])
def test_float_min_max_that_keeps_the_later_value_stays_sequential(cpu_only, update):
    # max(e, m) keeps a NaN e and, of equal values, the later; so does `>=`: no split of
    # the iterations gives CPython's value in general.
    recs = run(f"""
    def f(A, n):
        hi = A[0]
        for i in range(n):
            {update}
        return locals()
    """, "f", lambda: (zeros_nans_and_infinities(2), N))
    assert not ran_parallel(recs, "i")
    assert "depends on the order of the iterations" in loops(recs)["i"]["why"]


def test_numpy_int_sum_where_numpy_ignores_overflow():
    src = """
    def f(A, n):
        s = np.int32(0)
        for i in range(n):
            s += A[i]
        return locals()
    """
    def args():
        return (np.random.default_rng(2).integers(-2**31, 2**31 - 1, N).astype(np.int32), N)
    with np.errstate(all="ignore"):
        recs = run(src, "f", args, globals_={"np": np})
    assert ran_parallel(recs, "i")
    recs = run(src, "f", args, globals_={"np": np})  # NumPy warns on overflow: order matters
    assert not loops(recs)["i"]["parallel"] or loops(recs)["i"]["why"] == ""


@pytest.mark.parametrize("start,amounts", [
    (2**63 - 10, [20, -20]),   # wraps up and back in order; the parts sum to 0
    (-2**63 + 10, [-20, 20]),
    (2**63 - 10, [3, 5]),      # one sign: wraps once the sum is past the end
    (0, [3, 5]),               # one sign, no wrap: stays on threads
    (2**62, [-7, 0]),
])
def test_numpy_int_sum_that_wraps_in_iteration_order_warns_as_cpython(cpu_only, start, amounts):
    # NumPy warns at every wrap of the sum in iteration order; the threads' parts may hide
    # one (a part of +20 and -20 is 0), so a run whose amounts had both signs is run again
    # in order.
    recs = run("""
    def f(A, n, s0):
        s = np.int64(s0)
        for i in range(n):
            s += A[i]
        return locals()
    """, "f", lambda: (np.array(amounts * (N // 2), dtype=np.int64), N, start), globals_={"np": np},
        expect=None)
    if start == 0:
        assert ran_parallel(recs, "i")


def test_numpy_int_product_stays_in_order(cpu_only):
    recs = run("""
    def f(A, n):
        p = np.int64(1)
        for i in range(n):
            p *= A[i]
        return locals()
    """, "f", lambda: (np.array([2**40, 2**40, 0, 1] * (N // 4), dtype=np.int64), N), globals_={"np": np},
        expect=None)
    assert "product" in loops(recs)["i"]["why"]


def test_private_scalars_and_their_values_after_the_loop():
    recs = run("""
    def f(A, B, n):
        last = -1
        for i in range(n):
            t = A[i] * 3.0
            B[i] = t - 1.0
            if A[i] > n // 2:
                last = i
                big = t
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), np.zeros(N), N))
    assert ran_parallel(recs, "i")


def test_conditional_private_never_assigned_stays_unbound():
    run("""
    def f(A, n):
        for i in range(n):
            if A[i] > 10**9:
                hit = i
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), N))


def test_triangular_nest():
    recs = run("""
    def f(C, n):
        for i in range(n):
            for j in range(i + 1):
                C[i, j] = i * 0.5 + j
        return locals()
    """, "f", lambda: (np.zeros((300, 300)), 300))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("threads", [2, 3])
def test_each_thread_takes_one_block_where_iterations_do_the_same_work(cpu_only, threads):
    # A rectangular nest (and one with a branch of straight-line code, or an early
    # `continue`): one contiguous block of rows per thread. Triangular bounds, a `while`
    # loop and a loop under a branch do uneven work per iteration: round-robin chunks. A
    # float max combines in order. 3 threads: blocks of unequal size (199 rows).
    stagepy.set_threads(threads)
    recs = run("""
    def f(u, v, A, C, D, out, n, steps):
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    v[i, j] = u[i, j] + 0.2 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
            u, v = v, u
        for a in range(n):
            for b in range(n):
                if A[a, b] > 0.5:
                    C[a, b] = A[a, b] * 2.0
                else:
                    C[a, b] = -A[a, b]
        for c in range(n):
            for d in range(c + 1):
                D[c, d] = c * 0.5 + d
        for e in range(n):
            k = 0
            x = A[e, 0]
            while x < 10.0 and k < 50:
                x = x * 1.5 + 0.1
                k += 1
            out[e] = k
        for g in range(n):
            if A[g, 1] > 0.9:
                for h in range(n):
                    C[g, h] += 1.0
        m = 0.0
        for q in range(n):
            for r in range(n):
                m = max(m, A[q, r])
        return locals()
    """, "f", lambda: (np.random.default_rng(3).random((201, 201)), np.zeros((201, 201)),
                       np.random.default_rng(4).random((201, 201)), np.zeros((201, 201)), np.zeros((201, 201)),
                       np.zeros(201, dtype=np.int64), 201, 3))
    ls = loops(recs)
    assert [v for v in "iacegq" if not ran_parallel(recs, v)] == [], ls
    assert [ls[v]["schedule"] for v in "iacegq"] == ["blocks", "blocks", "chunks", "chunks", "chunks", "in order"]
    assert ls["t"]["schedule"] == ""
    text = stagepy._report.format_table(recs)
    assert "`i` (line 4) parallel (a block of iterations per thread)" in text
    assert "`c` (line 14) parallel (chunks dealt round-robin)" in text


def test_empty_and_one_iteration_ranges():
    for n in (0, 1, 2):
        run("""
        def f(A, n):
            for i in range(n):
                A[i] = i * 2.0
            return locals()
        """, "f", lambda: (np.zeros(4), n))


def test_short_parallel_loops_run_their_body_here_with_cpythons_results(cpu_only):
    # Too few iterations for threads: the outlined body runs them all on the calling
    # thread (the sequential version). Privates, the loop variables, the warnings (the later
    # site first) and an outer loop of one iteration must still be CPython's.
    def args(n):
        def make():
            a = np.ones((n, 200))
            a[n - 1, 4] = 1e300
            b = np.ones((n, 200))
            b[n - 1, 1] = np.inf
            return a, b, np.zeros((n, 200)), n
        return make
    nest = """
    def f(A, B, out, n):
        for i in range(n):
            for j in range(200):
                x = A[i, j] * 1e10
                y = B[i, j] - np.inf
                out[i, j] = x + y
            last = i * 2
        return locals()
    """
    # (the nest with 3 rows, 600 iterations in all, runs on threads: the same results from
    # the other version)
    for src, var, n, threads in ((nest, "i", 1, False), (nest, "i", 3, True)):
        recs = run(src, "f", args(n), globals_={"np": np})
        assert recs[0]["native_calls"] > 0 and loops(recs)[var]["parallel"]
        assert ran_parallel(recs, var) == threads


def test_an_innermost_loop_that_runs_short_at_times_runs_those_times_here(cpu_only):
    # The inner loop has 300 iterations for i = 1 (below the 512 that pay for threads: its
    # body runs on this thread) and 600 for i = 2 (threads). The outer loop carries a
    # dependence. Privates, the loop variables and a warning raised in the short run must be
    # CPython's.
    def make():
        a = np.ones((3, 600))
        a[1, 7] = 1e300
        return a, np.zeros((3, 600)), 3
    recs = run("""
    def f(A, out, n):
        for i in range(1, n):
            for j in range(i * 300):
                x = A[i, j] * 1e10
                out[i, j] = out[i - 1, j] + x
        return locals()
    """, "f", make, globals_={"np": np})
    assert loops(recs)["j"]["parallel"] and not loops(recs)["i"]["parallel"]
    assert loops(recs)["j"]["parallel_runs"] == recs[0]["native_calls"]  # once per call: i = 2


def test_an_innermost_loop_never_long_enough_for_threads_is_not_made_parallel(cpu_only):
    # Every run of the j loop has 5 iterations (the dependence analysis bounds it with the
    # call's values): no parallel version is compiled, and the report says why. With 600
    # the same nest gets one.
    src = """
    def f(A, out, n, m):
        for i in range(1, n):
            for j in range(m):
                out[i, j] = out[i - 1, j] + A[i, j]
        return locals()
    """
    recs = run(src, "f", lambda: (np.ones((4, 5)), np.zeros((4, 5)), 4, 5))
    j = loops(recs)["j"]
    assert not j["parallel"] and "fewer than 512 iterations each time" in j["why"]
    recs = run(src, "f", lambda: (np.ones((4, 600)), np.zeros((4, 600)), 4, 600))
    assert loops(recs)["j"]["parallel"] and ran_parallel(recs, "j")


def test_a_loop_whose_inner_loops_have_number_bounds_and_little_work_is_not_made_parallel(cpu_only):
    # Inside a loop that carries a dependence, the k loop has independent iterations, but
    # it and the m loop inside come to 9 iterations: waking the threads at every t would
    # cost far more than they do. No parallel version, and the report says why.
    recs = run("""
    def f(A, w, n):
        for t in range(1, n):
            for k in range(3):
                for m in range(3):
                    A[t, k] += A[t - 1, (k + m) % 3] * w[m]
        return locals()
    """, "f", lambda: (np.ones((300, 3)), np.array([0.25, 0.5, 0.125]), 300))
    k = loops(recs)["k"]
    assert not k["parallel"] and "it and the loops inside it run fewer than 512 iterations" in k["why"]


def test_a_loop_with_little_work_inside_for_the_calls_values_runs_on_this_thread(cpu_only):
    # The same with bounds the call decides: the k loop gets a parallel version, which runs
    # only where the k and m loops together have 512 iterations or more (m = 40: 1600), as
    # estimated where the k loop starts. With m = 3 (9 iterations) it never wakes the threads.
    src = """
    def f(A, w, n, m):
        for t in range(1, n):
            for k in range(m):
                for q in range(m):
                    A[t, k] += A[t - 1, k] * w[q]
        return locals()
    """
    for m, threads in ((3, False), (40, True)):
        recs = run(src, "f", lambda: (np.ones((50, m)), np.full(m, 0.25), 50, m))
        assert loops(recs)["k"]["parallel"]
        assert ran_parallel(recs, "k") == threads, m


def test_inner_bounds_from_shapes_count_in_the_work_estimate(cpu_only):
    # The same with bounds read from the arrays' shapes (`range(C.shape[0])`), as k-means
    # writes them: 8 x 2 iterations never wake the threads; 8 x 200 do.
    src = """
    def f(A, C, out):
        for t in range(1, A.shape[0]):
            for c in range(C.shape[0]):
                d = 0.0
                for k in range(C.shape[1]):
                    d += (A[t - 1, k] - C[c, k]) ** 2
                out[t, c] = d
            A[t, 0] = A[t - 1, 0] * 0.5 + out[t, 0] * 0.25
        return locals()
    """
    for m, threads in ((2, False), (200, True)):
        recs = run(src, "f", lambda: (np.ones((40, m)), np.linspace(0, 1, 8 * m).reshape(8, m), np.zeros((40, 8))))
        assert loops(recs)["c"]["parallel"]
        assert ran_parallel(recs, "c") == threads, m


def test_an_argmin_inside_each_iteration_leaves_the_outer_loop_parallel(cpu_only):
    # k-means' assignment step: best_d and best are set afresh in every iteration of p before
    # the inner loop's min-with-companion updates them, so they are p's privates.
    recs = run("""
    def f(P, C, labels):
        changed = 0
        for p in range(P.shape[0]):
            best = 0
            best_d = 1e300
            for c in range(C.shape[0]):
                d = 0.0
                for k in range(P.shape[1]):
                    diff = P[p, k] - C[c, k]
                    d += diff * diff
                if d < best_d:
                    best_d = d
                    best = c
            if labels[p] != best:
                labels[p] = best
                changed += 1
        return locals()
    """, "f", lambda: (np.random.default_rng(3).random((N, 2)), np.random.default_rng(4).random((8, 2)),
                       np.full(N, -1)))
    assert ran_parallel(recs, "p"), loops(recs)["p"]["why"]
    # Once per call, for p only.
    assert sum(l["parallel_runs"] for r in recs for l in r["loops"]) == sum(r["native_calls"] for r in recs)


# ------------------------------------------------------------------ carried dependences

def test_prefix_sum_stays_sequential():
    recs = run("""
    def f(A, n):
        for i in range(1, n):
            A[i] += A[i - 1]
        return locals()
    """, "f", lambda: (np.random.default_rng(3).random(N), N))
    l = loops(recs)["i"]
    assert not l["parallel"] and l["parallel_runs"] == 0
    assert "A[i - 1]" in l["why"] and "earlier iteration" in l["why"]


def test_gauss_seidel():
    recs = run("""
    def f(A, n, steps):
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1] + A[i, j]) / 5.0
        return locals()
    """, "f", lambda: (np.random.default_rng(4).random((60, 60)), 60, 3))
    assert not any(l["parallel_runs"] for l in loops(recs).values())


def test_jacobi_with_swapped_arrays_runs_rows_in_parallel():
    recs = run("""
    def f(u, v, n, steps):
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            u, v = v, u
        return locals()
    """, "f", lambda: (np.random.default_rng(5).random((80, 80)), np.zeros((80, 80)), 80, 5))
    assert ran_parallel(recs, "i") and not loops(recs)["t"]["parallel"]


def test_lu_decomposition():
    recs = run("""
    def f(A, n):
        for k in range(n):
            for i in range(k + 1, n):
                A[i, k] /= A[k, k]
                for j in range(k + 1, n):
                    A[i, j] -= A[i, k] * A[k, j]
        return locals()
    """, "f", lambda: (np.random.default_rng(6).random((70, 70)) + 70 * np.eye(70), 70))
    assert not loops(recs)["k"]["parallel"] and ran_parallel(recs, "i")


def test_floyd_warshall():
    recs = run("""
    def f(D, n):
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    if D[i, k] + D[k, j] < D[i, j]:
                        D[i, j] = D[i, k] + D[k, j]
        return locals()
    """, "f", lambda: (np.random.default_rng(7).integers(1, 100, (50, 50)).astype(float), 50))
    # D[i, k] and D[k, j] are written in the k-th row/column itself: no loop is provably
    # free of carried dependences for every k, so the results must simply be CPython's.
    assert recs and recs[0]["native_calls"] > 0


def test_triangular_solve():
    # Unit diagonal, a band of small integers below it: every value stays an exact float,
    # so the sums come out the same in any order.
    n = 60
    rng = np.random.default_rng(8)
    L = np.eye(n) + np.tril(rng.integers(-1, 2, (n, n)), -1) * (np.tri(n, k=-1) - np.tri(n, k=-3))
    run("""
    def f(L, b, x, n):
        for i in range(n):
            s = b[i]
            for j in range(i):
                s -= L[i, j] * x[j]
            x[i] = s / L[i, i]
        return locals()
    """, "f", lambda: (L.copy(), np.ones(n), np.zeros(n), n))


def test_short_inner_reduction_stays_sequential():
    recs = run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += A[i]
        return locals()
    """, "f", lambda: (np.random.default_rng(9).random(100), 100))
    assert not ran_parallel(recs, "i")  # too short to be worth the threads: CPython's sum


@pytest.mark.parametrize("d", [0, 3, -3, 1, -1])
def test_runtime_offset_decides(d):
    recs = run("""
    def f(A, n, d):
        for i in range(3, n):
            A[i] = A[i + d] + 1.0
        return locals()
    """, "f", lambda: (np.arange(N + 10, dtype=float), N, d))
    assert ran_parallel(recs, "i") == (d == 0)
    # The report says which values decided, and when the iterations would conflict.
    loop = loops(recs)["i"]
    assert loop["decided_with"] == f"n = {N}, d = {d}"
    pieces = {frozenset(p.split(" and ")) for p in loop["carried_when"].split(", or ")}  # (isl's order)
    assert pieces == {frozenset({"d >= 1", "n >= d + 4"}), frozenset({"d <= -1", "n + d >= 4"})}
    text = stagepy._report.format_table(recs)
    if d == 0:
        assert f"`i` (line 3) parallel (a block of iterations per thread) because n = {N}, d = 0" in text
    else:
        assert f"(n = {N}, d = {d}; its iterations conflict when " in text


# ------------------------------------------------------------------ aliasing

def test_overlapping_view_arguments_run_sequentially():
    def args():
        a = np.arange(N + 1, dtype=float)
        return a, a[1:], N
    recs = run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] * 2.0
        return locals()
    """, "f", args)
    assert recs[0]["native_calls"] > 0 and not ran_parallel(recs, "i")


def test_same_array_twice():
    def args():
        a = np.arange(N, dtype=float)
        return a, a, N
    run("""
    def f(A, B, n):
        for i in range(n):
            B[n - 1 - i] = A[i] + 1.0
        return locals()
    """, "f", args)


# ------------------------------------------------------------------ exceptions, warnings

def test_zero_divisor_raises_at_the_first_iteration_after_its_writes():
    for w in (0, 7):
        recs = run("""
        def f(A, n, w):
            for i in range(n):
                A[i] = 1.0
                A[i] = A[i] / w
            return locals()
        """, "f", lambda: (np.ones(N), N, w))
    assert ran_parallel(recs, "i")


def test_index_error_in_a_parallelizable_loop():
    run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] * 2.0
        return locals()
    """, "f", lambda: (np.ones(N - 5), np.zeros(N), N))


def test_numpy_warnings_in_parallel_loops_come_in_cpythons_order():
    def args():
        a = np.ones(N)
        a[1500] = 0.0
        a[700] = 0.0
        b = np.ones(N)
        b[900] = np.inf
        return a, b, np.zeros(N), N
    recs = run("""
    def f(A, B, C, n):
        for i in range(n):
            C[i] = 1.0 / A[i]
            C[i] = B[i] - B[i]
        return locals()
    """, "f", args)
    assert ran_parallel(recs, "i")


def test_warnings_first_seen_in_one_parallel_iteration_keep_their_order():
    # Both sites first warn in iteration i == 0 of the parallel loop, the later site (the
    # subtraction) at an earlier j: CPython warns about the subtraction first. (The ranking
    # of a parallel loop's warnings went by iteration, then by site: the other order.)
    def args():
        a = np.zeros((N, 4))
        b = np.zeros((N, 4))
        a[0, 3] = 10.0
        b[0, 1] = np.inf
        return a, b, np.zeros((N, 4))
    recs = run("""
    def f(A, B, out):
        n, m = A.shape
        for i in range(n):
            for j in range(m):
                x = A[i, j] * 1e308
                y = B[i, j] - np.inf
                out[i, j] = x + y
        return locals()
    """, "f", args, globals_={"np": np})
    assert ran_parallel(recs, "i")


def test_escape_time_loop_with_counter_runs_on_threads():
    recs = run("""
    def f(out, maxit):
        h, w = out.shape
        for y in range(h):
            for x in range(w):
                cr = -2.0 + 3.0 * x / w
                ci = -1.5 + 3.0 * y / h
                zr = 0.0
                zi = 0.0
                k = 0
                while k < maxit and zr * zr + zi * zi <= 4.0:
                    zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                    k += 1
                out[y, x] = k
        return locals()
    """, "f", lambda: (np.zeros((40, 60), np.int64), 50))
    assert ran_parallel(recs, "y")


def test_break_keeps_the_loop_sequential():
    recs = run("""
    def f(A, n):
        for i in range(n):
            if A[i] > 100:
                break
            A[i] = A[i] * 2.0
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), N))
    l = loops(recs)["i"]
    assert not l["parallel"] and "break" in l["why"]


def test_one_thread_runs_nothing_in_parallel(cpu_only):
    stagepy.set_threads(1)
    recs = run("""
    def f(A, n):
        for i in range(n):
            A[i] = i * 2.0
        return locals()
    """, "f", lambda: (np.zeros(N), N))
    assert not ran_parallel(recs, "i") and recs[0]["threads"] == 1


def test_strict_fp_keeps_float_reductions_sequential():
    from helpers import run_python
    src = ("import numpy as np, stagepy\n"
           "def f(A):\n    s = 0.0\n    for i in range(A.shape[0]):\n        s += A[i]\n    return s\n"
           "A = np.random.default_rng(0).random(100000)\n"
           "want = f(A)\n"
           "with stagepy.enable():\n    r = f(A)\n"
           "print(r == want, [l['parallel'] for n in stagepy.report() for l in n['loops']])\n")
    out = run_python(["-c", src], env_extra={"STAGEPY_STRICT_FP": "1", "STAGEPY_THREADS": "2"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True [False]"


def test_set_strict_fp_switches_float_sums_between_threads_and_order(two_threads_on_the_cpu):
    # The setting is part of a specialization's key: one function runs its sum in CPython's
    # order while it is on (equal bit for bit) and on threads again after.
    src = textwrap.dedent("""
    def f(A):
        s = 0.0
        for i in range(A.shape[0]):
            s += A[i] * 0.1
        return s
    """)
    A = np.random.default_rng(0).random(N)
    plain = {}
    exec(compile(src, "<strict_fp_plain>", "exec"), plain)
    want = plain["f"](A)
    assert not stagepy.strict_fp()
    with stagepy.enable():
        ns = {}
        exec(compile(src, "<strict_fp>", "exec"), ns)
        try:
            assert stagepy.set_strict_fp(True) and stagepy.strict_fp()
            assert ns["f"](A) == want
            rec = [r for r in stagepy.report() if r["file"] == "<strict_fp>"][0]
            assert rec["native_calls"] == 1 and loops([rec])["i"]["parallel_runs"] == 0
        finally:
            stagepy.set_strict_fp(False)
        ns["f"](A)
        rec = [r for r in stagepy.report() if r["file"] == "<strict_fp>"][0]
        assert rec["native_calls"] == 2 and loops([rec])["i"]["parallel_runs"] == 1


def test_a_loop_over_range_of_the_arrays_size_runs_on_threads(cpu_only):
    # `a.size` is the product of a's extents: for a 1-d array the subscripts are in bounds.
    recs = run("""
    def f(a, out):
        for i in range(a.size):
            out[i] = a[i] * 2.0
        return locals()
    """, "f", lambda: (np.arange(N, dtype=float), np.zeros(N)))
    assert ran_parallel(recs, "i")
    # A 2-d array's size is not its first extent: a[i] would leave it (IndexError).
    run("""
    def f(a):
        s = 0.0
        for i in range(a.size):
            s += a[i, 0]
        return locals()
    """, "f", lambda: (np.ones((N, 2)),), expect=None)


def test_periodic_subscripts_run_on_threads_where_the_divisor_fits_the_array(cpu_only):
    # `x % n` with n > 0 lies in [0, n), whatever x: where n is at most the extent, the
    # subscript needs no check, and the loop runs on threads.
    recs = run("""
    def f(u, v):
        n, m = u.shape
        for i in range(n):
            for j in range(m):
                v[i, j] = u[(i + 1) % n, j] + u[(i - 1) % n, j] + u[i, (j + 1) % m] - 3.0 * u[i, (j - 1) % m]
        return locals()
    """, "f", lambda: (np.arange(64.0 * 40).reshape(64, 40), np.zeros((64, 40))))
    assert ran_parallel(recs, "i")
    recs = run("""
    def f(a, out, shift):
        n = len(a)
        for i in range(n):
            out[i] = a[(i + shift) % n] * 2.0 - a[(i * 7) % n]
        return locals()
    """, "f", lambda: (np.arange(float(N)), np.zeros(N), -7))
    assert ran_parallel(recs, "i")


@pytest.mark.parametrize("divisor", ["n + 3", "-3", "0", "len(b)"])
def test_periodic_subscripts_that_may_leave_the_array_keep_cpythons_errors(cpu_only, divisor):
    # A divisor beyond the extent gives IndexError, a negative one wraps from the end, zero
    # gives ZeroDivisionError: the checks stay, with the earlier writes done.
    src = """
    def f(a, b, out):
        n = len(a)
        for i in range(n):
            out[i] = a[(i + 1) % (DIV)] + 1.0
        return locals()
    """.replace("DIV", divisor)
    run(src, "f", lambda: (np.arange(float(N)), np.zeros(N + 5), np.zeros(N)), expect=None)


def test_a_write_through_a_periodic_subscript_stays_sequential(cpu_only):
    recs = run("""
    def f(a, n):
        for i in range(n):
            a[(i + 1) % n] = a[i] * 0.5 + 1.0
        return locals()
    """, "f", lambda: (np.arange(float(N)), N))
    assert not ran_parallel(recs, "i")


@pytest.mark.parametrize("header, index", [
    ("for i in range(n - 1, 0, -2):", "i"),
    ("for i in range(n - 1, -1, -7):", "i"),
    ("for i in range((n - 1) // 3):", "n - 1 + i * -3"),
    ("for i in range((n - 1) // 3):", "n - 1 - 3 * i"),
])
def test_negative_steps_and_coefficients_are_analysed(cpu_only, header, index):
    # isl reads `-2 * k`, not `(-2) * k`: these once made the analysis give up.
    recs = run(f"""
    def f(A, n):
        {header}
            A[{index}] = A[{index}] * 2.0 + 1.0
        return A
    """, "f", lambda: (np.arange(8 * N, dtype=float), 8 * N))  # (at least 512 iterations: threads)
    assert ran_parallel(recs, "i"), loops(recs)


@pytest.mark.parametrize("offsets", ["(-1, 0, 1)", "[-1, 0, 1]", "(1, 0, -1)", "(0, 2, 1)"])
def test_neighbour_offsets_from_a_constant_tuple_are_affine(cpu_only, offsets):
    # `for di in (-1, 0, 1)` is `di = -1 + k` over a hidden k: u[i + di, j + dj] is an affine
    # access whose bounds the analysis proves, and the i loop runs on threads. Offsets that
    # are not in arithmetic progression still give CPython's results.
    recs = run(f"""
    def f(u, v, n, m):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                s = 0.0
                for di in {offsets}:
                    for dj in {offsets}:
                        s += u[i + di, j + dj]
                v[i, j] = s / 9.0
        return v
    """, "f", lambda: (np.arange(600.0 * 40).reshape(600, 40) % 7, np.zeros((600, 40)), 600, 40))
    if offsets != "(0, 2, 1)":
        assert ran_parallel(recs, "i"), loops(recs)


def test_an_offset_reassigned_in_the_loop_is_not_taken_as_affine(cpu_only):
    run("""
    def f(u, v, n):
        for i in range(n):
            for d in (0, 1, 2):
                if i % 3 == 0:
                    d = d * 2
                v[i] += u[i + d]
        return v
    """, "f", lambda: (np.arange(2010.0), np.zeros(2000), 2000))


# Python int counters (Reduction::bound): `done += 1` beside array writes.
COUNTER = """
def f(a, out, start, step):
    done = start
    hits = 0
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0
        done += step
        if a[i] > 0.5:
            hits += 1
        else:
            hits -= 2
    return locals()
"""


@pytest.mark.parametrize("start,step", [(0, 1), (-7, 3), (10**18, -1000)])
def test_counters_beside_array_writes_run_on_threads(cpu_only, start, step):
    recs = run(COUNTER, "f", lambda: (np.random.default_rng(3).random(N), np.zeros(N), start, step))
    assert ran_parallel(recs, "i"), recs


@pytest.mark.parametrize("start", [2**63 - 1500, -(2**63) + 10])
def test_a_counter_that_would_leave_64_bits_runs_in_order_and_grows_as_cpython(cpu_only, start):
    # |start| + N * 3 does not fit in 64 bits: the loop runs in order, and `done` leaves
    # 64 bits in it (CPython's int), or might (the bound is for all iterations).
    recs = run(COUNTER, "f", lambda: (np.random.default_rng(4).random(N), np.zeros(N), start, 1), expect=None)
    assert not ran_parallel(recs, "i")


def test_a_counter_in_an_inner_loop_is_not_bounded_by_the_outer_trip(cpu_only):
    recs = run("""
    def f(A, out):
        cnt = 0
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                if A[i, j] > 0.5:
                    cnt += 1
            out[i] = A[i, 0]
        return locals()
    """, "f", lambda: (np.random.default_rng(5).random((50, 40)), np.zeros(50)))
    assert not ran_parallel(recs, "i")
    assert "cnt" in loops(recs)["i"]["why"], loops(recs)["i"]


@pytest.mark.parametrize("seed", [0, 1])
def test_regions_on_the_calling_thread_while_cores_are_busy(cpu_only, seed):
    # Where a parallel region found a thread starting late (other processes had the cores),
    # the next regions run their chunks on the calling thread for a while (parallel_runtime.h,
    # Contention): the same chunks, records and results as the threads'. Forced here: a
    # counter, privates, a warning in the first block, a stop for CPython in the last.
    src = """
    import math
    def f(A, out, n):
        cnt = 0
        for i in range(n):
            v = A[i]
            out[i] = math.sqrt(v) + 1.0 / v
            cnt += 1
            last = i
        return locals()
    """

    def make(bad):
        def m():
            A = np.random.default_rng(seed).random(N) + 0.5
            A[7] = 0.0                 # 1 / 0: a warning, in the first block
            if bad:
                A[N - 5] = -1.0        # math.sqrt: ValueError in the last block
            return A, np.zeros(N), N
        return m
    before = stagepy.thread_info()["on_caller_regions"]
    stagepy._hook.core()._force_contended(60.0)
    try:
        for bad in (False, True):
            recs = run(src, "f", make(bad), expect="bail" if bad else "native")
            assert loops(recs)["i"]["parallel"]
    finally:
        stagepy._hook.core()._force_contended(0.0)
    assert stagepy.thread_info()["on_caller_regions"] > before


def test_regions_with_too_little_work_stay_on_this_thread(cpu_only):
    # The default minimum (32768 cost units, about a simple operation each: a math call 16,
    # a division 8): 2000 iterations of `C[i] = A[i] * 2.0 + B[i]` (2000 x 5 units) run on
    # this thread, 20000 on the threads; 4000 of a math.exp call reach it (4000 x 21).
    # A sequential loop entering a small parallel region 1200 times ran 10x slower on two
    # threads than on one (a survey's doitgen).
    core = stagepy._hook.core()
    old = core.min_parallel_cost()
    core.min_parallel_cost(32768)
    try:
        def runs(src, n):
            recs = run(src, "f", lambda: (np.linspace(0.0, 1.0, n), np.ones(n), np.zeros(n), n))
            return loops(recs)["i"]["parallel_runs"]
        simple = """
        def f(A, B, C, n):
            for i in range(n):
                C[i] = A[i] * 2.0 + B[i]
            return locals()
        """
        calls = """
        import math
        def f(A, B, C, n):
            for i in range(n):
                C[i] = math.exp(A[i]) + B[i]
            return locals()
        """
        assert runs(simple, 2000) == 0
        assert runs(simple, 20000) > 0
        assert runs(calls, 1000) == 0
        assert runs(calls, 4000) > 0
        # More threads cost more to wake: four ask twice the minimum (8000 x 5 is enough
        # for two, not for four).
        assert runs(simple, 8000) > 0
        stagepy.set_threads(4)
        assert runs(simple, 8000) == 0
        assert runs(simple, 20000) > 0
    finally:
        core.min_parallel_cost(old)
        stagepy.set_threads(2)


# A row picked by a computed index (`s = spheres[k]`, k the closest sphere, in a helper the
# nest inlines): an access through it is one of the container's at an unknown row, which
# conflicts with no store into another array (a ray tracer's pixels are independent).
ROWS_BY_COMPUTED_INDEX = """
def closest(x, spheres):
    best = -1
    best_d = 1e30
    for k in range(len(spheres)):
        s = spheres[k]
        d = abs(x - s[0]) - s[1]
        if d < best_d:
            best_d = d
            best = k
    return best

def shade(x, spheres):
    k = closest(x, spheres)
    s = spheres[k]
    return s[2] * (x - s[0]) + s[1]

def f(img, spheres, h, w):
    for j in range(h):
        for i in range(w):
            x = (i * 7 + j * 3) % 50 / 10.0
            img[j, i] = shade(x, spheres)
    return locals()
"""


def _spheres(kind):
    rows = [[0.5, 0.25, 1.0], [2.0, 0.5, -1.0], [3.5, 0.125, 2.0], [4.75, 0.5, 0.5]]
    return np.array(rows) if kind == "ndarray" else rows


@pytest.mark.parametrize("kind", ["list", "ndarray"])
def test_rows_picked_by_a_computed_index_do_not_keep_the_loop_in_order(cpu_only, kind):
    recs = run(ROWS_BY_COMPUTED_INDEX, "f", lambda: (np.zeros((60, 80)), _spheres(kind), 60, 80))
    assert loops(recs)["j"]["parallel"], loops(recs)["j"]["why"]
    assert ran_parallel(recs, "j")


def test_stores_through_rows_picked_by_a_computed_index(cpu_only):
    # Two iterations may pick one row: in order, or summed in a copy per thread (an update
    # of one element), never two threads storing into one row.
    recs = run("""
    def f(table, idx, n):
        for i in range(n):
            s = table[idx[i]]
            s[0] += 3 * i
            s[1] = s[0] - i
        return locals()
    """, "f", lambda: ([[0, 1] for _ in range(8)], [(i * 5) % 8 for i in range(N)], N))
    assert not loops(recs)["i"]["parallel"]


def test_reads_through_a_row_picked_by_a_computed_index_meet_the_containers_stores(cpu_only):
    # s is some row of A; the loop also stores into A: the unknown row may be the stored one.
    recs = run("""
    def f(A, out, n):
        for i in range(n):
            s = A[(i * 7) % 5]
            A[i % 5, 0] = s[1] + i
            out[i] = s[0]
        return locals()
    """, "f", lambda: (np.arange(10.0).reshape(5, 2), np.zeros(N), N))
    assert not loops(recs)["i"]["parallel"]
