"""Lists the loops make and then read and write — the rolling rows of a dynamic program
(`cur = [0] * (m + 1)`, `prev = cur`), a copy taken each step (`new = best[:]`), a small
display (`d = [a, b, c]`) — run natively with the loops that make them: kernels hold each
list by a header, reuse the memory of lists no variable holds any more, and hand back one
list object per list made, whichever names hold it, as CPython would have left them."""
import numpy as np
import pytest

import difftest


def _rng(seed):
    return np.random.default_rng(seed)


def _dna(seed, n):
    r = _rng(seed)
    return "".join("ACGT"[k] for k in r.integers(0, 4, n))


NATIVE = [
    ("LCS over two rolling rows", """
    def f(a, b):
        n, m = len(a), len(b)
        prev = [0] * (m + 1)
        for i in range(1, n + 1):
            cur = [0] * (m + 1)
            for j in range(1, m + 1):
                if a[i - 1] == b[j - 1]:
                    cur[j] = prev[j - 1] + 1
                else:
                    cur[j] = max(prev[j], cur[j - 1])
            prev = cur
        return prev[m], prev, cur
    """, lambda: (_dna(1, 60), _dna(2, 45))),
    ("0/1 knapsack over a copy of the row", """
    def f(w, v, W):
        best = [0] * (W + 1)
        for i in range(len(w)):
            new = best[:]
            for c in range(w[i], W + 1):
                if best[c - w[i]] + v[i] > new[c]:
                    new[c] = best[c - w[i]] + v[i]
            best = new
        return best
    """, lambda: ([int(x) for x in _rng(3).integers(1, 20, 30)], [int(x) for x in _rng(4).integers(1, 50, 30)], 100)),
    ("Pascal's triangle, each row one longer", """
    def f(n):
        row = [1]
        for i in range(n):
            nxt = [1] * (len(row) + 1)
            for k in range(1, len(row)):
                nxt[k] = (row[k - 1] + row[k]) % 1000007
            row = nxt
        return row
    """, lambda: (70,)),
    ("Jacobi relaxation on lists of floats", """
    def f(n, steps):
        u = [0.0] * n
        u[0] = 1.0
        for s in range(steps):
            v = [0.0] * n
            v[0] = 1.0
            for i in range(1, n - 1):
                v[i] = 0.5 * (u[i - 1] + u[i + 1])
            u = v
        return u, sum(u), max(u), len(u)
    """, lambda: (40, 30)),
    ("swapped with a tuple assignment, one made per step", """
    def f(n):
        a = [1] * n
        b = [2] * n
        for t in range(5):
            c = [t] * n
            for j in range(n):
                c[j] += a[j] * 2 + b[(j + 1) % n]
            a, b = b, c
        return a, b
    """, lambda: (17,)),
    ("a display of variables, indexed", """
    def f(X):
        out = 0.0
        for i in range(len(X)):
            d = [X[i][0], X[i][1] * 2.0, -X[i][2]]
            for k in range(3):
                out += d[k] * (k + 1)
        return out, d
    """, lambda: (_rng(5).random((50, 3)).tolist(),)),
    ("copies by slices with steps and negative bounds", """
    def f(L, n):
        s = 0
        for t in range(n):
            a = L[::2]
            b = L[-3:]
            c = L[5:1:-1]
            d = L[t:t + 4]
            e = L.copy()
            for k in range(len(a)):
                s += a[k] * (k + 1)
            for x in b:
                s += 3 * x
            for x in c:
                s -= x
            for k in range(len(d)):
                s += d[k] * t
            e[0] = t
            s += e[0] + len(e)
        return s, a, b, c, d, e
    """, lambda: (list(range(11, 30)), 12)),
    ("lists of bools: a sieve per step", """
    def f(n):
        count = 0
        for m in range(2, n):
            mark = [True] * (m + 1)
            mark[0] = False
            mark[1] = False
            for p in range(2, m + 1):
                if mark[p]:
                    for q in range(p * p, m + 1, p):
                        mark[q] = False
            for p in range(m + 1):
                if mark[p]:
                    count += 1
        return count, mark
    """, lambda: (60,)),
    ("a row read before the loop's body makes the next one", """
    def f(A, L, steps):
        prev = L
        for t in range(steps):
            for i in range(A.shape[0]):
                A[i] = A[i] * 0.5 + sum(prev) + prev[i % len(prev)]
            prev = [t * 1.0] * 4
        return A, prev
    """, lambda: (np.zeros(50), [1.0, 2.0, 3.0], 6)),
    ("three names, lists kept alive across steps", """
    def f(n, steps):
        x = [1] * n
        y = [2] * n
        z = [3] * n
        for t in range(steps):
            w = [0] * n
            for j in range(n):
                w[j] = x[j] + y[j] - z[j] + t
            x, y, z = y, z, w
        return x, y, z
    """, lambda: (9, 25)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_lists_made_in_the_loops_run_natively(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    outer = [r for r in recs if r["native_calls"] > 0]
    assert outer and all(r["native_calls"] == r["calls"] for r in outer), recs


def test_names_holding_one_made_list_hold_one_object():
    recs = difftest.run("""
    def f(n):
        prev = [0] * n
        for i in range(3):
            cur = [i] * n
            alias = cur
            alias[0] = 99
            prev = cur
        return prev is cur, cur is alias, prev is not None, cur
    """, "f", lambda: (5,))
    assert sum(r["native_calls"] for r in recs) > 0


def test_a_list_held_at_entry_is_changed_in_place_through_another_name():
    difftest.run("""
    def f(L, n):
        a = L
        for t in range(n):
            a[t % len(a)] += t
            b = [0] * len(a)
            for j in range(len(a)):
                b[j] = a[j] * 2
            a = b if t == 1 else a
        return L, a, a is L
    """, "f", lambda: ([1, 2, 3, 4], 5))


def test_an_index_out_of_range_raises_with_the_earlier_writes_done():
    difftest.run("""
    def f(n, bad):
        row = [0] * n
        try:
            for i in range(4):
                nxt = [0] * n
                for j in range(n + (bad if i == 2 else 0)):
                    nxt[j] = row[j] + i + j
                row = nxt
        except IndexError as e:
            return "IndexError", str(e), row, nxt
        return row
    """, "f", lambda: (6, 1), expect="bail")


def test_a_loop_over_a_list_that_its_body_replaces_checks_every_index():
    # range(len(prev)) is the first list's length; prev[k] indexes the one made in the body.
    difftest.run("""
    def f(n):
        prev = [1] * n
        s = 0
        try:
            for t in range(2):
                for k in range(len(prev)):
                    s += prev[k]
                    prev = [7] * (2 - k)
        except IndexError as e:
            return "IndexError", str(e), s, prev
        return s
    """, "f", lambda: (40,), expect="bail")


def test_an_array_loop_reading_a_made_list_runs_on_threads():
    recs = difftest.run("""
    def f(A, T):
        for t in range(T):
            row = [t * 0.5, 1.0, -2.0]
            for i in range(A.shape[0]):
                A[i] = A[i] + sum(row)
        return A
    """, "f", lambda: (np.zeros(200000), 4), warn_filter="default")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


def test_a_negative_count_makes_an_empty_list():
    difftest.run("""
    def f(n):
        out = 0
        for k in range(-2, n):
            r = [7] * k
            out += len(r)
            for x in r:
                out += x
        try:
            for k in range(2):
                r = [1] * (k - 1)
                out += r[0]
        except IndexError as e:
            return out, str(e), r
        return out, r
    """, "f", lambda: (6,), expect=None)


def test_a_list_too_large_to_make_raises_memory_error_in_cpython():
    difftest.run("""
    def f(n):
        t = 0
        try:
            for k in range(3):
                big = [0] * (n if k == 2 else 4)
                t += len(big)
        except MemoryError:
            return "MemoryError", t
        return t
    """, "f", lambda: (1 << 60,), expect=None)


def test_an_int_stored_into_a_made_list_of_floats_goes_to_cpython():
    difftest.run("""
    def f(A):
        for s in range(3):
            row = [0.0] * len(A)
            for i in range(len(A)):
                if A[i] > 0.8:
                    row[i] = 1
                else:
                    row[i] = A[i] * s
        return row
    """, "f", lambda: (_rng(6).random(30).tolist(),), expect=None)


TAGGED = [
    ("NumPy floats stored into a row made per step", """
    def f(A):
        for s in range(3):
            row = [0.0] * A.shape[0]
            for i in range(0, A.shape[0], 2):
                row[i] = A[i] * s
        return row
    """, lambda: (_rng(7).random(20),)),
    ("rows passed on, the first one made before the nest", """
    def f(X):
        n, d = X.shape
        prev = [0.0] * d
        for i in range(n):
            cur = prev[:]
            for j in range(d):
                if X[i, j] > 0.5:
                    cur[j] = prev[j] + X[i, j]
            prev = cur
        return prev, cur, prev is cur
    """, lambda: (_rng(8).random((30, 6)),)),
    ("a copy of a list holding both kinds at entry", """
    def f(L, A):
        t = 0.0
        for s in range(4):
            c = L[1:]
            c[s] = A[s]
            for x in c:
                t = t + x
        return t, c
    """, lambda: ([0.5, np.float64(1.5), 2.5, np.float64(-3.0), 4.0, 1.0], _rng(9).random(5))),
    ("a display of floats, then a NumPy float stored", """
    def f(A):
        out = []
        for i in range(A.shape[0]):
            d = [1.0, 2.0, 0.5]
            d[i % 3] = A[i]
            for k in range(3):
                out.append(d[k] * 2)
        return out, d
    """, lambda: (_rng(10).random(12),)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in TAGGED], ids=[c[0] for c in TAGGED])
def test_made_lists_holding_numpy_floats_keep_each_elements_type(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    assert any(r["native_calls"] == r["calls"] and r["calls"] > 0 for r in recs), recs


APPENDED = [
    ("a matrix built row by row", """
    def f(n, m):
        rows = []
        for i in range(n):
            row = [0] * m
            for j in range(m):
                row[j] = i * j - m
            rows.append(row)
        return rows, rows[-1] is row
    """, lambda: (12, 7)),
    ("a row changed after it was appended, and appended twice", """
    def f(n):
        rows = []
        for i in range(n):
            r = [i] * 3
            rows.append(r)
            r[1] = i * i
            if i % 3 == 0:
                rows.append(r)
            r[2] = -i
        return rows, [rows[k] is rows[k + 1] for k in range(len(rows) - 1)]
    """, lambda: (9,)),
    ("rows passed on and appended, the first made before the nest", """
    def f(X):
        hist = []
        prev = [0.0] * X.shape[1]
        for i in range(X.shape[0]):
            cur = prev[:]
            for j in range(X.shape[1]):
                cur[j] += X[i, j]
            hist.append(prev)
            prev = cur
        return hist, prev
    """, lambda: (_rng(11).random((8, 4)),)),
    ("a new list holding a made one", """
    def f(n):
        pairs = []
        for i in range(n):
            c = [i, i + 1, i + 2]
            pairs.append([i, c])
            c[0] = -1
        return pairs
    """, lambda: (7,)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in APPENDED], ids=[c[0] for c in APPENDED])
def test_made_lists_appended_to_other_lists_stay_one_object(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    assert any(r["native_calls"] == r["calls"] and r["calls"] > 0 for r in recs), recs


def test_a_made_list_read_by_a_helper():
    difftest.run("""
    def total(xs, k):
        t = 0
        for j in range(k):
            t += xs[j]
        return t

    def f(n):
        acc = 0
        for i in range(n):
            cur = [i] * (i + 1)
            cur[0] = -i
            acc += total(cur, len(cur))
        return acc
    """, "f", lambda: (30,), expect=None)


def test_a_module_level_dynamic_program():
    difftest.run_module("""
    a = "GATTACAGATTACA"
    b = "TACGATACCA"
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            cur[j] = prev[j - 1] + 1 if a[i - 1] == b[j - 1] else max(prev[j], cur[j - 1])
        prev = cur
    """, lambda: {})


# Lists of one length: where every list a class of variables holds is made as `[x] * n`
# (n fixed for the run), a display, or a whole copy of one, the analysis knows their length
# (src/analysis/made_lengths.h): subscripts get facts as arrays' do, and loops over them run
# on threads when nothing else forbids it (the lists they write checked apart from the lists
# they read where the loop starts).

def _native_with(recs, var):
    """The report record of the nest holding loop `var`; it ran natively."""
    rec = [r for r in recs if any(l["variable"] == var for l in r["loops"])]
    assert rec and rec[0]["native_calls"] > 0, recs
    return rec[0]


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_rows_of_one_length_are_relaxed_on_threads():
    recs = difftest.run("""
    def f(n, steps):
        u = [0.0] * n
        u[0] = 1.0
        for s in range(steps):
            v = [0.0] * n
            v[0] = 1.0
            for i in range(1, n - 1):
                v[i] = 0.5 * (u[i - 1] + u[i + 1])
            v[n - 1] = v[n - 2]
            u = v
        return u
    """, "f", lambda: (3000, 6))
    _native_with(recs, "s")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_a_row_written_while_read_through_another_name_runs_in_order():
    # v is u in the loop over i: each i reads the value the previous i wrote (Gauss-Seidel,
    # not Jacobi). The plan needs v and u apart, and the check where the loop starts says no.
    recs = difftest.run("""
    def f(n, steps):
        u = [0.0] * n
        u[0] = 1.0
        for s in range(steps):
            v = u
            for i in range(1, n - 1):
                v[i] = 0.5 * (u[i - 1] + u[i + 1])
            u = v[:]
        return u, v is u
    """, "f", lambda: (3000, 6))
    _native_with(recs, "s")
    assert difftest.loops(recs)["i"]["parallel_runs"] == 0, difftest.loops(recs)["i"]


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_a_list_at_entry_shorter_than_the_rows_keeps_every_check():
    # u's length at entry disagrees with [0.0] * n: no length is known, the subscripts are
    # checked, and u[i + 1] raises at the same i as in CPython, the earlier writes done.
    difftest.run("""
    def f(u, n):
        try:
            for s in range(3):
                v = [0.0] * n
                for i in range(1, n - 1):
                    v[i] = 0.5 * (u[i - 1] + u[i + 1])
                u = v
        except IndexError as e:
            return "IndexError", str(e), u, v
        return u
    """, "f", lambda: ([1.0, 2.0, 3.0, 4.0, 5.0], 9), expect="bail")


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_rows_as_long_as_a_list_at_entry_run_on_threads():
    recs = difftest.run("""
    def f(a, steps):
        out = [0.0] * len(a)
        for s in range(steps):
            nxt = [0.0] * len(a)
            for i in range(len(a)):
                nxt[i] = out[i] + a[i] * s
            out = nxt
        return out
    """, "f", lambda: ([float(x) for x in _rng(11).normal(size=5000)], 4))
    _native_with(recs, "s")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_a_copy_of_another_row_has_its_length():
    # prev = cur[:] joins no class with cur: its length is cur's class's.
    difftest.run("""
    def f(a, b):
        n, m = len(a), len(b)
        cur = [0] * (m + 1)
        for i in range(1, n + 1):
            prev = cur[:]
            cur = [0] * (m + 1)
            for j in range(1, m + 1):
                cur[j] = prev[j - 1] + 1 if a[i - 1] == b[j - 1] else max(prev[j], cur[j - 1])
        return cur[m], cur, prev
    """, "f", lambda: (_dna(5, 50), _dna(6, 40)))


@pytest.mark.parametrize("m", [0, 1, 7])
def test_rows_of_one_length_at_edge_sizes(m):
    # Lengths 0 and 1: the loops run never or once; the last row stays in range.
    difftest.run("""
    def f(m, steps):
        row = [1] * m
        for s in range(steps):
            nxt = [0] * m
            for j in range(m):
                nxt[j] = row[j] + row[m - 1 - j] + s
            row = nxt
        return row
    """, "f", lambda: (m, 5), expect=None)


@pytest.mark.usefixtures("two_threads_on_the_cpu")
def test_a_loop_to_the_length_of_a_made_list_runs_on_threads():
    # len(x) is the class's one length (x read at entry, y = x[:] copies): the loop over i
    # has affine bounds and its subscripts get facts.
    recs = difftest.run("""
    def f(x, steps):
        for s in range(steps):
            y = x[:]
            for i in range(1, len(x) - 1):
                y[i] = (x[i - 1] + x[i] + x[i + 1]) / 3.0
            x = y
        return x
    """, "f", lambda: ([float(v) for v in _rng(12).normal(size=4000)], 5))
    _native_with(recs, "s")
    assert difftest.ran_parallel(recs, "i"), difftest.loops(recs)["i"]


@pytest.mark.parametrize("m", [4, 10])
def test_len_of_a_list_replaced_inside_its_loop_is_checked_unless_all_have_one_length(m):
    # range(len(prev)) is the first list's length, prev[k] the one made in the body: where
    # [7] * m is shorter than the list at entry, CPython raises IndexError at k == m, and the
    # kernel must have kept the check (no one length: no facts for the nest at all).
    difftest.run("""
    def f(prev, m):
        s = 0
        try:
            for t in range(2):
                for k in range(len(prev)):
                    s += prev[k]
                    prev = [7] * m
        except IndexError as e:
            return "IndexError", str(e), s, prev
        return s, prev
    """, "f", lambda: (list(range(10)), m), expect=None)
