"""Buffer-protocol objects as loop data: array.array, bytearray, bytes and 1-d memoryviews
run natively in their own memory, items read as the Python values indexing gives, stores
converted (or refused) as the object's own setitem does."""
import array

import numpy as np
import pytest

from difftest import assert_reason, run

FORMATS = ["b", "B", "h", "H", "i", "I", "l", "q", "f", "d"]


def arr(fmt, n=40, seed=0):
    vals = [((k * 37 + seed * 11) % 100) for k in range(n)]
    if fmt in "fd":
        return array.array(fmt, [v / 4 - 10 for v in vals])
    if fmt in "BHI":
        return array.array(fmt, vals)
    return array.array(fmt, [v - 50 for v in vals])


@pytest.mark.parametrize("fmt", FORMATS)
def test_array_array_reads_as_python_values(fmt):
    run("""
    def f(a, out, n):
        s = 0
        big = a[0]
        for i in range(n):
            s += a[i] * 2
            big = max(big, a[i])
            out[i] = a[i] / 3 + a[n - 1 - i]
        return locals()
    """, "f", lambda: (arr(fmt), array.array("d", [0.0] * 40), 40))


@pytest.mark.parametrize("fmt", ["b", "B", "h", "i", "q"])
def test_int_stores_out_of_range_raise_like_cpython(fmt):
    run("""
    def f(a, n):
        for i in range(n):
            a[i] = a[i] * 9 + i
        return a
    """, "f", lambda: (arr(fmt), 40), expect=None)


def test_bytearray_values_and_value_error():
    run("""
    def f(b, n, k):
        for i in range(n):
            b[i] = (b[i] * k + 3) % 256
        for i in range(n):
            b[i] = b[i] + k
        return b
    """, "f", lambda: (bytearray(range(50)), 50, 9), expect="bail")


def test_memoryviews_of_bytearrays_and_numpy_arrays():
    def args():
        base = np.arange(30.0)
        return memoryview(bytearray(range(30))), memoryview(base), base, 30
    run("""
    def f(mb, md, base, n):
        t = 0.0
        for i in range(n):
            md[i] = md[i] * 2 + mb[i]
            t += base[i]
        return locals()
    """, "f", args)


def test_bytes_are_read_only():
    run("""
    def f(b, n):
        s = 0
        for i in range(n):
            s += b[i] * i
        return s
    """, "f", lambda: (bytes(range(60)), 60))
    run("""
    def f(b, n):
        for i in range(n):
            b[i] = 1
        return b
    """, "f", lambda: (bytes(range(6)), 6), expect="interpreted")


@pytest.mark.parametrize("case, make, reason", [
    ("2-d memoryview", lambda: memoryview(np.zeros((3, 3))), "2-dimensional"),
    ("uint64 items", lambda: array.array("Q", [1, 2, 3]), "format 'Q'"),
    ("float into int array", lambda: array.array("i", [1, 2, 3]), "stores a float"),
])
def test_buffers_stagepy_cannot_take_stay_interpreted(case, make, reason):
    recs = run("""
    def f(a, n):
        for i in range(n):
            a[i] = 1.5
        return a
    """, "f", lambda: (make(), 3), expect="interpreted")
    assert_reason(recs, reason)
