"""Python lists as loop data: nests over lists (and lists of lists) of ints, floats and bools
run natively and leave the lists exactly as CPython would (values, element types, the same
list objects); lists stagepy cannot hold keep the nest in CPython, with a reason."""
import random

import numpy as np
import pytest

import stagepy
from difftest import assert_reason, run, run_module
from helpers import compile_module


def ints(n, seed=0, lo=-50, hi=50):
    r = random.Random(seed)
    return [r.randint(lo, hi) for _ in range(n)]


def floats(n, seed=0):
    r = random.Random(seed)
    return [r.uniform(-10, 10) for _ in range(n)]


def matrix(n, m, seed=0, kind=float):
    r = random.Random(seed)
    if kind is float:
        return [[r.uniform(-1, 1) for _ in range(m)] for _ in range(n)]
    return [[r.randint(-9, 9) for _ in range(m)] for _ in range(n)]


def test_elementwise_ints_floats_bools():
    run("""
    def f(A, B, C, F, G, P, n):
        for i in range(n):
            C[i] = A[i] * 3 - B[i] // 2 + A[i] % 7
            F[i] = F[i] * 0.5 + A[i]
            P[i] = not P[i] if A[i] > B[i] else P[i]
            G[i] = A[i] / (B[i] if B[i] != 0 else 1)
        return locals()
    """, "f", lambda: (ints(40, 1), ints(40, 2), [0] * 40, floats(40, 3), [0.0] * 40,
                       [i % 3 == 0 for i in range(40)], 40))


def test_reductions_and_locals_after_the_loop():
    recs = run("""
    def f(A, X, n):
        total = 0
        best = A[0]
        acc = 0.0
        for i in range(n):
            total += A[i]
            best = max(best, A[i])
            acc += X[i] * X[i]
        return locals()
    """, "f", lambda: (ints(500, 4), floats(500, 5), 500))
    assert recs[0]["convert_s"] > 0


def test_polybench_gemm_lists_of_lists():
    run("""
    def gemm(ni, nj, nk, alpha, beta, C, A, B):
        for i in range(ni):
            for j in range(nj):
                C[i][j] *= beta
            for k in range(nk):
                for j in range(nj):
                    C[i][j] += alpha * A[i][k] * B[k][j]
        return C
    """, "gemm", lambda: (12, 10, 8, 1.5, 1.2, matrix(12, 10, 1), matrix(12, 8, 2), matrix(8, 10, 3)))


def test_int_matrices_and_negative_indices():
    run("""
    def f(M, R, n, m):
        for i in range(n):
            for j in range(m):
                R[-1 - i][j] = M[i][-1 - j] * 2 + M[i - 1][j]
        return locals()
    """, "f", lambda: (matrix(6, 5, 1, int), matrix(6, 5, 2, int), 6, 5))


def test_edit_distance_swapping_rows():
    src = """
    def edit_distance(a, b):
        n, m = len(a), len(b)
        prev = list(range(m + 1))
        cur = [0] * (m + 1)
        for i in range(1, n + 1):
            cur[0] = i
            for j in range(1, m + 1):
                cost = 0 if a[i - 1] == b[j - 1] else 1
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            prev, cur = cur, prev
        return prev[m], prev, cur
    """
    run(src, "edit_distance", lambda: (ints(30, 1, 0, 4), ints(27, 2, 0, 4)))


def test_identity_of_lists_and_rows_is_kept():
    run("""
    def f(M, n):
        row0 = M[0]
        outer = M
        for i in range(n):
            for j in range(n):
                M[i][j] = M[i][j] + i * j
        return M[0] is row0, outer is M, row0
    """, "f", lambda: (matrix(5, 5, 7), 5))


def test_other_references_see_the_changes():
    from helpers import compile_module
    src = "def f(L, n):\n    for i in range(n):\n        L[i] = L[i] * 2 + 1\n"
    with stagepy.enable():
        ns = {}
        exec(compile_module(src), ns)
        data = list(range(100))
        alias = data
        holder = {"x": data}
        for _ in range(3):
            ns["f"](data, 100)
    want = list(range(100))
    for _ in range(3):
        want = [v * 2 + 1 for v in want]
    assert alias is data and holder["x"] is data and data == want
    assert all(type(v) is int for v in data)
    recs = [r for r in stagepy.report() if r["function"] == "f" and r["native_calls"]]
    assert recs


def test_index_error_after_earlier_writes():
    run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] + 1
        return B
    """, "f", lambda: (ints(10, 1), [0] * 8, 10), expect="bail")


def test_ints_that_outgrow_64_bits_continue_in_cpython():
    run("""
    def f(A, n):
        for i in range(n):
            A[i] = A[i] * A[i] + 1
        return A
    """, "f", lambda: ([3, 2**31, 5, 2**40, 7], 5), expect="bail")


def test_same_list_twice_is_one_buffer():
    run("""
    def f(A, B, n):
        for i in range(1, n):
            A[i] = B[i - 1] + A[i]
        return A
    """, "f", lambda: ((lambda L: (L, L, 20))(ints(20, 3))))


def test_lists_with_arrays_and_module_level_histogram():
    run_module("""
    for y in range(h):
        for x in range(w):
            v = (x * 7 + y * 13) % 11
            img[y, x] = v
            hist[v * 4 // 11] += 1
    """, lambda: {"np": np, "h": 30, "w": 20, "img": np.zeros((30, 20), np.uint8), "hist": [0] * 4})


def test_special_floats_survive():
    run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] * 1.0
            A[i] = -A[i]
        return locals()
    """, "f", lambda: ([0.0, -0.0, float("nan"), float("inf"), 1e308, -5e-324], [1.0] * 6, 6))


def test_empty_lists():
    run("""
    def f(A, M, n):
        s = 0
        for i in range(n):
            s += len(A) + len(M)
        return locals()
    """, "f", lambda: ([], [[], []], 50), expect=None)


class _Float(float):
    pass


@pytest.mark.parametrize("case, args, reason", [
    ("ragged two levels down", lambda: ([[[1.0], [2.0]], [[3.0]]], 2), "ragged"),
    ("mixed", lambda: ([[1, 2.0], [3, 1j]], 2), "mixes element types"),
    ("big int", lambda: ([[1, 2**70], [3, 4]], 2), "beyond 64 bits"),
    ("aliased rows", lambda: ((lambda r: [r, r])([1.0, 2.0]), 2), "holds one list twice"),
    ("subclass of float", lambda: ([[_Float(1.0), _Float(2.0)], [_Float(3.0), _Float(4.0)]], 2), "holds"),
    ("numpy float32", lambda: ([[np.float32(1.0), np.float32(2.0)], [3.0, 4.0]], 2), "holds"),
    ("strings", lambda: ([["a", "b"], ["c", "d"]], 2), "holds str"),
])
def test_lists_stagepy_cannot_hold_stay_interpreted(case, args, reason):
    recs = run("""
    def f(M, n):
        for i in range(n):
            for j in range(n):
                M[i][j] = M[i][j] + M[j][i]
        return M
    """, "f", args, expect="interpreted")
    assert_reason(recs, reason)


def test_a_float_stored_into_a_list_of_ints_makes_it_one_of_ints_and_floats():
    # CPython's list then holds floats (and ints where no store reached): the list is read
    # tagged (test_mixed_lists.py) and the nest runs natively.
    recs = run("""
    def f(A, n):
        for i in range(0, n, 2):
            A[i] = A[i] / 2
        return A
    """, "f", lambda: (ints(10, 1), 10))
    assert recs[0]["native_calls"] == recs[0]["calls"] and recs[0]["bailouts"] == 0, recs


def test_a_bool_stored_into_a_list_of_ints_stays_interpreted():
    recs = run("""
    def f(A, n):
        for i in range(n):
            A[i] = A[i] > 2
        return A
    """, "f", lambda: (ints(10, 1), 10), expect="interpreted")
    assert "stores a bool into a list of ints" in recs[0]["reason"]


@pytest.mark.parametrize("m", [7, 0])
def test_a_sum_started_at_int_zero_goes_into_a_list_of_floats(m):
    # `s = 0` then a loop: s is a float after a non-empty loop, the int 0 after an empty
    # one (CPython then stores the int, and the list holds both; the kernel hands that
    # store to CPython).
    recs = run("""
    def f(A, C, n, m):
        for i in range(n):
            s = 0
            for k in range(m):
                s += A[i][k] * 0.5
            C[i] = s
        return locals()
    """, "f", lambda: (matrix(6, 7), floats(6, 3), 6, m))
    assert recs[0]["status"] == "cpu", recs[0]["reason"]


def test_a_value_that_is_sometimes_an_int_goes_into_a_list_of_floats():
    # The store is typed once per way of the `if` (x an int on one, a float on the other):
    # the int one makes C a list of ints and floats, read so (test_mixed_lists.py).
    recs = run("""
    def f(A, C, n):
        for i in range(n):
            x = 0
            if A[i] > 0:
                x = A[i] * 2.0
            C[i] = x
        return locals()
    """, "f", lambda: (floats(12, 4), floats(12, 5), 12))
    assert recs[0]["bailouts"] == 0, recs


def test_a_nest_that_failed_for_some_values_still_compiles_for_others():
    # Values a kernel cannot be compiled for are not looked at again on every call (calls
    # back off, reading lists costs); values it can be compiled for still get a kernel.
    with stagepy.enable():
        ns = {}
        exec(compile_module("""
def f(A, n):
    for i in range(n):
        A[i] = A[i] / 2
    return A
"""), ns)
        big = [2**70 + k for k in range(8)]  # ints beyond 64 bits: no kernel holds them
        for _ in range(20):
            assert ns["f"](list(big), 8) == [x / 2 for x in big]
        for _ in range(2100):
            assert ns["f"](floats(8, 2), 8) == [x / 2 for x in floats(8, 2)]
    rec = [r for r in stagepy.report() if r["function"] == "f" and r["calls"] == 2120]
    # Natively from the first call with floats; for how long depends on the cost probe,
    # which times the calls and may find CPython faster on lists of 8 (it starts early where
    # reading the lists looks 50 times the kernel's work: on a loaded machine, sometimes).
    assert rec and rec[0]["native_calls"] >= 1 and rec[0]["specializations"] == 1, rec


def test_row_shared_with_another_argument_stays_interpreted():
    def args():
        M = matrix(4, 4, 1)
        return M, M[2], 4
    recs = run("""
    def f(M, r, n):
        for i in range(n):
            for j in range(n):
                M[i][j] = M[i][j] + r[j]
        return M, r
    """, "f", args, expect="interpreted")
    assert "share a list" in recs[0]["reason"]


@pytest.mark.parametrize("case", ["same matrix twice", "rows shared", "row beside its matrix"])
def test_lists_that_share_rows_but_are_only_read_run_natively(case):
    # Copies of a list the kernel only reads hold the same values: sharing is harmless.
    def args():
        A = matrix(12, 12, 1)
        if case == "same matrix twice":
            return A, A, A[3], [0.0] * 12, 12
        if case == "rows shared":
            r = [float(k) for k in range(12)]
            return [r] * 12, A, r, [0.0] * 12, 12
        return A, matrix(12, 12, 2), A[5], [0.0] * 12, 12
    recs = run("""
    def f(A, B, r, out, n):
        for i in range(n):
            s = 0.0
            for k in range(n):
                s += A[i][k] * B[k][i] + r[k]
            out[i] = s
        return out
    """, "f", args)
    assert all(rec["native_calls"] for rec in recs), recs


def test_a_written_list_reached_through_a_variable_that_only_reads_it():
    # B is A (one buffer, written), and r is A[0]: its own copy would miss the stores into A[0].
    def args():
        A = matrix(6, 6, 1)
        return A, A, A[0], 6
    recs = run("""
    def f(A, B, r, n):
        for i in range(n):
            for j in range(n):
                B[j][i] = A[i][j] + r[j]
        return A
    """, "f", args, expect="interpreted")
    assert "share a list" in recs[0]["reason"], recs


def test_tuple_subscript_of_a_list_raises_like_cpython():
    run("""
    def f(M, n):
        s = 0.0
        for i in range(n):
            s += M[i, 0]
        return s
    """, "f", lambda: (matrix(3, 3, 1), 3), expect="interpreted")


def test_nest_that_inserts_into_a_list_it_reads_stays_interpreted():
    # (Appending to a list the nest does not read runs natively: test_appends.py; to one it
    # reads, too: test_growing_lists.py.)
    recs = run("""
    def f(A, n):
        for i in range(n):
            A.insert(0, A[i] + i)
        return A
    """, "f", lambda: ([1], 10), expect="interpreted")
    assert_reason(recs, "changes the length of a list it also reads")


def test_report_names_elements_as_written():
    recs = run("""
    def f(A, n):
        for i in range(1, n):
            for j in range(n):
                A[i][j] = A[i - 1][j] * 2 + j // (i + 1)
        return A
    """, "f", lambda: (matrix(6, 6, 3, int), 6))
    why = recs[0]["loops"][0]["why"]
    assert "A[i - 1][j]" in why and "A[i][j]" in why, why


def test_a_list_tested_for_emptiness_runs_natively():
    run("""
    def f(stack, other):
        n = 0
        while stack:
            stack.pop()
            n += 1 if other else 2
        return n, stack, not stack
    """, "f", lambda: ([1, 2, 3], [[]]))


def test_a_list_it_cannot_take_then_one_it_can():
    # A helper over a list of mixed ints and floats, called once per row: the nest is not
    # read again on every call (from the third in a row, 1, 2, 4... calls go to CPython
    # without looking), and once the list is one it can take, it runs natively again.
    src = """
    def row_sum(A, i):
        t = 0
        for j in range(len(A[i])):
            t += A[i][j]
        return t

    def driver(A):
        tot = 0
        for i in range(len(A)):
            tot += row_sum(A, i)
        return tot
    """
    ns_py, ns_sp = {}, {}
    exec(compile_module(src), ns_py)
    with stagepy.enable():
        exec(compile_module(src), ns_sp)
        mixed = [[1, 2.5, 3]] * 300 + [[4, 5, 2**70]] * 300
        ints_only = [[1, 2, 3] for _ in range(3000)]
        for A in (mixed, ints_only):
            got = ns_sp["driver"](A)
            want = ns_py["driver"](A)
            assert got == want and type(got) is type(want)
    recs = [r for r in stagepy.report() if r["function"] in ("row_sum", "driver")]
    # The int rows ran natively after the mixed ones: in `driver`'s nest, row_sum's loop
    # inlined into it (while the mixed list kept that nest in CPython, row_sum's own nest
    # was called per row, and backed off).
    assert any(r["function"] == "driver" and r["native_calls"] > 0 for r in recs), recs
    assert any(r["function"] == "row_sum" and r["calls"] >= 300 for r in recs), recs
