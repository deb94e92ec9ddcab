"""Lists a nest makes (`row = []`, `pairs.append([i, j])`) and fills only by appending run
natively: the kernel keeps each new list's items, and when it returns (also when it stops
for CPython at an error) the dispatcher makes one list object per list made, so that
`rows.append(row)` and the variable `row` are the same object, as in CPython. A list the nest
also reads, copies into another variable or passes to a function keeps the nest in CPython
with the reason."""
import numpy as np
import pytest

import difftest

NATIVE = [
    ("a matrix product built row by row", """
    def f(A, B):
        n = len(A); m = len(B[0]); p = len(B)
        C = []
        for i in range(n):
            row = []
            for j in range(m):
                s = 0.0
                for k in range(p):
                    s += A[i][k] * B[k][j]
                row.append(s)
            C.append(row)
        return C, row is C[-1], row
    """, lambda: (np.random.default_rng(1).random((23, 17)).tolist(), np.random.default_rng(2).random((17, 9)).tolist())),
    ("appends to a row after it went into the result", """
    def f(n):
        rows = []
        for i in range(n):
            row = [i]
            rows.append(row)
            for j in range(i):
                row.append(j * 0.5)
            row.append(-1)
        return rows, [r is rows[k] for k, r in enumerate(rows)]
    """, lambda: (30,)),
    ("new lists of items appended directly", """
    def f(a):
        pairs = []
        for i in range(len(a)):
            for j in range(i + 1, len(a)):
                if a[i] + a[j] == 10:
                    pairs.append([i, j, a[i] * 0.5, (i, a[j])])
        return pairs
    """, lambda: (np.random.default_rng(3).integers(0, 11, 80),)),
    ("a row made on either branch", """
    def f(n):
        out = []
        for i in range(n):
            if i % 3 == 0:
                row = []
            else:
                row = [i, i * i]
            for k in range(i % 4):
                row.append(k > 1)
            out.append(row)
            out.append(len(row))
        return out
    """, lambda: (40,)),
    ("a list of lists of lists", """
    def f(n, m):
        cube = []
        for i in range(n):
            plane = []
            for j in range(m):
                line = []
                for k in range(j + 1):
                    line.append(i * 100 + j * 10 + k)
                plane.append(line)
            cube.append(plane)
        return cube, plane is cube[-1], line is plane[-1]
    """, lambda: (4, 5)),
    ("a list the loop appends to, appended itself", """
    def f(a, out, holder):
        for i in range(len(a)):
            out.append(a[i])
        holder.append(out)
        holder.append(len(out))
        return holder[0] is out, holder
    """, lambda: (np.arange(7.0), [1], [])),
    ("the length of the row being built", """
    def f(a, width):
        rows = []
        row = []
        for i in range(len(a)):
            row.append(a[i])
            if len(row) == width:
                rows.append(row)
                row = []
        return rows, row
    """, lambda: (np.arange(47, dtype=np.int32), 6)),
    ("a deep chain of new lists", """
    def f(n):
        for i in range(n):
            if i == 0:
                node = [0]
            else:
                node = [i, node]
        depth = 1
        while len(node) == 2:
            node = node[1]
            depth += 1
        return depth, node
    """, lambda: (200000,)),
]


@pytest.mark.parametrize("src, make", [c[1:] for c in NATIVE], ids=[c[0] for c in NATIVE])
def test_built_lists_run_natively_and_equal_cpythons(src, make):
    recs = difftest.run(src, "f", make)
    assert sum(r["bailouts"] for r in recs) == 0, recs
    assert any(r["native_calls"] == r["calls"] and r["calls"] > 0 for r in recs), recs


def test_a_variable_the_loop_never_assigns_keeps_its_value():
    # No iteration: `row` keeps what it held (a str here), as in CPython.
    difftest.run("""
    def f(n):
        row = "before"
        rows = []
        for i in range(n):
            row = []
            row.append(i)
            rows.append(row)
        return row, rows
    """, "f", lambda: (0,), expect=None)


def test_an_error_leaves_the_rows_made_so_far():
    # ZeroDivisionError at row 3: rows 0-2 are in `rows`, and `row` holds row 3 as far as
    # it got (nothing: the error is at its first item).
    recs = difftest.run("""
    def f(a, d, m):
        rows = []
        row = None
        try:
            for i in range(len(a)):
                row = [i]
                for j in range(m):
                    row.append(a[i][j] // d[i])
                rows.append(row)
        except ZeroDivisionError as e:
            return "ZeroDivisionError", str(e), rows, row
        return rows
    """, "f", lambda: (np.arange(15).reshape(5, 3).tolist(), [1, 2, 3, 0, 5], 3), expect="bail")
    assert recs


def test_a_module_level_loop_building_rows():
    difftest.run_module("""
    table = []
    for i in range(1, 13):
        row = []
        for j in range(1, 13):
            row.append(i * j)
        table.append(row)
    """, dict)


INTERPRETED = [
    ("a new list of lists it reads", """
    def f(n):
        out = []
        for i in range(n):
            row = [[i]]
            row.append(row[0] + [1])
            out.append(row)
        return out
    """, lambda: (10,), "builds a list"),
]


@pytest.mark.parametrize("src, make, reason", [c[1:] for c in INTERPRETED], ids=[c[0] for c in INTERPRETED])
def test_built_lists_that_stay_in_cpython_say_why(src, make, reason):
    recs = difftest.run(src, "f", make, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_pascals_triangle_runs_its_inner_loop_natively():
    # The outer nest reads the previous row (`prev = tri[-1]`): it stays in CPython. The
    # inner loop appends to `row`, a list made before it: it runs natively.
    recs = difftest.run("""
    def f(n):
        tri = [[1]]
        for i in range(1, n):
            prev = tri[-1]
            row = [1]
            for k in range(1, i):
                row.append(prev[k - 1] + prev[k])
            row.append(1)
            tri.append(row)
        return tri
    """, "f", lambda: (40,), expect=None)
    difftest.assert_reason(recs, "gives `prev` a row of a list, `tri`, that the nest grows or shrinks")
    assert any(r["native_calls"] > 0 and [l["variable"] for l in r["loops"]] == ["k"] for r in recs), recs


def test_the_report_says_the_loops_make_lists_in_order():
    recs = difftest.run("""
    def f(n):
        grid = []
        for i in range(n):
            grid.append([i, -i])
        last = None
        for i in range(n):
            last = [i, i + 0.5]
        return grid, last
    """, "f", lambda: (50,))
    whys = [l["why"] for r in recs for l in r["loops"]]
    assert "it makes new lists (`last`), in order" in whys, whys
