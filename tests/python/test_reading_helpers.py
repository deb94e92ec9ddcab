"""Helpers that read elements of what they are passed (`def avg3(a, i): return (a[i - 1] +
a[i] + a[i + 1]) / 3`) are inlined like scalar helpers: the same values, the same IndexError
raised from inside the helper, negative indices wrapping. The polyhedral model is built before
the helper is known, so a loop runs in parallel only where no array a helper reads is written
in it (and the arrays it reads share no memory with those the loop writes, checked where the
loop starts)."""
import numpy as np
import pytest

from difftest import loops, ran_parallel, run

N = 3000


def test_a_stencil_helper_over_an_array_the_loop_only_reads_runs_in_parallel():
    recs = run("""
def avg3(a, i):
    return (a[i - 1] + a[i] + a[i + 1]) / 3.0

def f(a, b, n):
    for i in range(1, n - 1):
        b[i] = avg3(a, i)
    return b
""", "f", lambda: (np.random.default_rng(1).random(N), np.zeros(N), N), warn_filter="default")
    assert ran_parallel(recs, "i"), recs


def test_a_helper_reading_the_array_the_loop_writes_keeps_the_loop_in_order():
    # Gauss-Seidel in place: each i reads the a[i - 1] the previous iteration wrote.
    recs = run("""
def avg3(a, i):
    return (a[i - 1] + a[i] + a[i + 1]) / 3.0

def f(a, n, sweeps):
    for s in range(sweeps):
        for i in range(1, n - 1):
            a[i] = avg3(a, i)
    return a
""", "f", lambda: (np.random.default_rng(2).random(N), N, 3))
    ls = loops(recs)
    # The model saw the helper's reads: the reason names them.
    assert not ls["i"]["parallel"] and "a[i + 1]" in ls["i"]["why"], ls
    assert not ran_parallel(recs, "i")


def test_a_helper_reading_a_view_of_the_array_the_loop_writes_keeps_the_loop_in_order():
    # y is x[1:]: y[i] = x[i] + 1 is a recurrence through shared memory, which the names do
    # not show; the loop's check that its arrays do not overlap sends it to one thread.
    run("""
def plus1(x, i):
    return x[i] + 1.0

def f(x, n):
    y = x[1:]
    for i in range(n - 1):
        y[i] = plus1(x, i)
    return x
""", "f", lambda: (np.zeros(N), N))


@pytest.mark.parametrize("kind", ["numpy", "lists"])
def test_neighbours_of_a_grid_cell_in_two_dimensions(kind):
    def grid():
        g = (np.random.default_rng(3).random((40, 50)) < 0.4).astype(np.int64)
        return g if kind == "numpy" else g.tolist()
    idx = "G[i][j]" if kind == "lists" else "G[i, j]"
    recs = run(f"""
def live(G, i, j):
    return {idx}

def neighbours(G, i, j):
    return (live(G, i - 1, j - 1) + live(G, i - 1, j) + live(G, i - 1, j + 1) + live(G, i, j - 1) +
            live(G, i, j + 1) + live(G, i + 1, j - 1) + live(G, i + 1, j) + live(G, i + 1, j + 1))

def f(G, n, m):
    out = [[0] * m for _ in range(n)]
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            k = neighbours(G, i, j)
            alive = live(G, i, j)
            out[i][j] = 1 if k == 3 or (alive and k == 2) else 0
    return out
""", "f", lambda: (grid(), 40, 50))
    assert any(r["native_calls"] for r in recs), recs


def test_rows_passed_to_a_helper():
    run("""
import numpy as np

def dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]

def f(A, B, n):
    C = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            C[i][j] = dot3(A[i], B[j])
    return C
""", "f", lambda: (np.random.default_rng(4).random((30, 3)), np.random.default_rng(5).random((30, 3)), 30))


def test_an_index_error_inside_the_helper_after_the_earlier_writes():
    recs = run("""
def ahead(a, i):
    return a[i + 2] - a[i]

def f(a, b, n):
    for i in range(n):
        b[i] = ahead(a, i)
    return b
""", "f", lambda: (np.arange(50.0) ** 2, np.zeros(50), 50), expect="bail")


def test_negative_indices_inside_the_helper_wrap():
    run("""
def prev(a, i):
    return a[i - 1]

def f(a, n):
    out = [0] * n
    for i in range(n):
        out[i] = prev(a, i) * 2
    return out
""", "f", lambda: (list(range(100, 130)), 30))


def test_a_global_array_read_by_a_helper():
    recs = run("""
import numpy as np
W = np.linspace(0.0, 1.0, 64)

def weight(i):
    return W[i % 64] * 2.0

def f(x, n):
    y = np.zeros(n)
    for i in range(n):
        y[i] = weight(i) * x[i]
    return y
""", "f", lambda: (np.random.default_rng(6).random(1000), 1000))


def test_shape_len_and_tuple_subscripts_inside_a_helper():
    run("""
def at(A, i, j):
    n, m = A.shape
    return A[i % n, j % m] + len(A)

def f(A, n):
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(n):
            out[i][j] = float(at(A, i, j + 1))
    return out
""", "f", lambda: (np.random.default_rng(7).random((7, 5)), 20))


def test_a_read_in_a_branch_not_taken_raises_nothing():
    run("""
def safe(a, i, n):
    return a[i] if i < n else -1.0

def f(a, n):
    s = 0.0
    for i in range(n + 10):
        s += safe(a, i, n)
    return s
""", "f", lambda: (np.random.default_rng(8).random(40), 40))


def test_a_helper_reading_an_object_stagepy_does_not_take_stays_interpreted():
    recs = run("""
def get(d, i):
    return d[i]

def f(d, n):
    s = 0
    for i in range(n):
        s += get(d, i)
    return s
""", "f", lambda: ({i: i * i for i in range(20)}, 20), expect="interpreted")
    assert all(r["reason"] for r in recs if r["function"] == "f"), recs


def test_helpers_read_elements_for_a_row_the_loop_writes_through_another_name():
    # The helper reads A's row i while the loop writes A[i][j]: in order.
    run("""
def left(r, j):
    return r[j - 1]

def f(A, n):
    for i in range(n):
        row = A[i]
        for j in range(1, n):
            A[i, j] = left(row, j) + A[i, j]
    return A
""", "f", lambda: (np.random.default_rng(9).random((60, 60)), 60))


@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_numpy_warnings_inside_a_reading_helper_come_from_its_line(warn_filter):
    src = """
def scaled(a, i, k):
    t = a[i] * k
    return t - a[i - 1]

def f(a, b, n):
    for i in range(1, n):
        b[i] = scaled(a, i, 1e300)
    return b
"""
    def big():
        a = np.linspace(-3.0, 3.0, 400)
        a[117] = 1e200  # overflows in the helper
        a[300] = np.inf  # inf - inf: invalid, at the helper's second line
        a[301] = np.inf
        return a, np.zeros(400), 400
    recs = run(src, "f", big, warn_filter=warn_filter, expect=None)
    assert any(r["native_calls"] for r in recs), recs
    if warn_filter == "default":
        # Deferred: the kernel ran to the end and emitted them afterwards.
        assert not any(r["bailouts"] for r in recs), recs


def test_a_helper_from_another_file_warns_from_there():
    # Same module globals, another file name: its lines are not the caller's file's, so its
    # operations hand their statement to CPython where they may warn.
    src = """
exec(compile("def scaled(a, i):\\n    return a[i] * 1e300\\n", "elsewhere.py", "exec"), globals())

def f(a, b, n):
    for i in range(n):
        b[i] = scaled(a, i)
    return b
"""
    def big():
        a = np.linspace(-3.0, 3.0, 400)
        a[117] = 1e200
        return a, np.zeros(400), 400
    recs = run(src, "f", big, warn_filter="default", expect="bail")


def test_an_index_error_inside_a_helper_in_a_parallel_loop():
    src = """
def ahead(a, i, k):
    return a[i + k] * 0.5

def f(a, b, n, k):
    for i in range(n):
        b[i] = ahead(a, i, k)
    return b
"""
    # k = 1 reads one past the end at the last i: IndexError, with every earlier b[i] written.
    recs = run(src, "f", lambda: (np.arange(float(N)), np.zeros(N), N, 1), expect=None, warn_filter="default")
    assert any(r["native_calls"] for r in recs), recs
    recs = run(src, "f", lambda: (np.arange(float(N)), np.zeros(N), N - 1, 1), warn_filter="default")
    assert ran_parallel(recs, "i"), recs
