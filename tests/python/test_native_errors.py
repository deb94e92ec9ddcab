"""Errors and warnings from native code are CPython's: same exception, same message, same
iteration, with the earlier writes done and the locals as CPython leaves them."""
import numpy as np
import pytest

from difftest import run, run_module


def test_index_error_at_the_same_iteration_with_earlier_writes():
    run("""
    def f(A, B, n):
        k = 0
        for i in range(n):
            B[i] = A[i] * 2
            k = i
            B[i + 1] = 1.0
        return locals()
    """, "f", lambda: (np.arange(5.0), np.zeros(5), 5), expect="bail")


def test_index_error_2d_message_names_the_axis():
    run("""
    def f(A, n, m):
        s = 0.0
        for i in range(n):
            for j in range(m):
                s += A[i, j]
        return locals()
    """, "f", lambda: (np.ones((3, 4)), 3, 5), expect="bail")


def test_index_error_is_catchable_in_the_same_function():
    run("""
    def f(A, n):
        done = -1
        try:
            for i in range(n):
                A[i] = i
                done = i
        except IndexError as e:
            return (str(e), done, i)
        return locals()
    """, "f", lambda: (np.zeros(4), 7), expect="bail")


def test_negative_index_out_of_range():
    run("""
    def f(A, n):
        for i in range(n):
            A[-i - 1] += 1
        return locals()
    """, "f", lambda: (np.zeros(4), 6), expect="bail")


def test_python_zero_division():
    run("""
    def f(A, n):
        s = 0
        for i in range(n):
            s += 10 // (3 - i)
        return locals()
    """, "f", lambda: (None, 6), expect="bail")
    run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += 1.0 / (A[i] - 2.0) if False else 1.5 / (float(i) - 2.0)
        return locals()
    """, "f", lambda: (np.zeros(5), 5), expect="bail")


def test_numpy_division_by_zero_warns_and_gives_inf():
    recs = run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = 1.0 / A[i]
        return locals()
    """, "f", lambda: (np.array([1.0, 2.0, 0.0, 4.0, -0.0, 5.0]), np.zeros(6), 6), expect="bail")


def test_numpy_invalid_and_overflow_warn():
    run("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i] * 1e308 - A[i] * 1e308
        return locals()
    """, "f", lambda: (np.array([1.0, 2.0, 10.0]), np.zeros(3), 3), expect="bail")


def test_numpy_integer_overflow_warns_and_wraps():
    run("""
    def f(A, n):
        s = A[0]
        for i in range(n):
            s = s + A[i]
        return locals()
    """, "f", lambda: (np.array([100, 100, 100], dtype=np.int8), 3), expect="bail")


def test_math_domain_and_range_errors():
    run("""
    import math
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += math.sqrt(A[i])
        return locals()
    """, "f", lambda: (np.array([4.0, 1.0, -1.0, 9.0]), 4), expect="bail")
    run("""
    import math
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += math.exp(A[i])
        return locals()
    """, "f", lambda: (np.array([1.0, 800.0, 2.0]), 3), expect="bail")


def test_unbound_local_read_in_loop():
    run("""
    def f(n):
        for i in range(n):
            if i == 2:
                print_me = t
            t = i
        return locals()
    """, "f", lambda: (4,), expect=None)
    run("""
    def f(n):
        for i in range(n):
            if i > 1:
                t = t + i
            t = i
        return locals()
    """, "f", lambda: (5,), expect="native")
    run("""
    def f(n):
        for i in range(n):
            t = u + 1
            u = i
        return locals()
    """, "f", lambda: (3,), expect="bail")


def test_name_error_at_module_level():
    run_module("""
    for i in range(n):
        if i == 3:
            y = undefined_name
        x = i
    """, lambda: {"n": 6}, expect=None)


def test_float_to_int_store_of_nan_and_inf():
    run("""
    def f(A, I, n):
        for i in range(n):
            I[i] = A[i]
        return locals()
    """, "f", lambda: (np.array([1.5, -2.5, np.nan, 3.0]), np.zeros(4, np.int64), 4), expect="bail")
    run("""
    def f(I, n):
        for i in range(n):
            I[i] = 1e20 if i == 2 else 2.5
        return locals()
    """, "f", lambda: (np.zeros(4, np.int64), 4), expect="bail")


def test_python_int_out_of_range_store():
    run("""
    def f(I, n):
        for i in range(n):
            I[i] = 100 * i
        return locals()
    """, "f", lambda: (np.zeros(4, np.int8), 4), expect="bail")


def test_range_step_zero():
    run("""
    def f(n, step):
        for i in range(n):
            for j in range(0, n, step):
                pass
        return locals()
    """, "f", lambda: (3, 0), expect="bail")


def test_bail_inside_nested_loops_resumes_every_iterator():
    run("""
    def f(A, n, m):
        s = 0
        for i in range(n):
            for j in range(m):
                for k in range(2):
                    s = s * 7 + A[i, j] + k
        return locals()
    """, "f", lambda: (np.arange(12).reshape(3, 4).tolist() and np.arange(12).reshape(3, 4), 3, 4),
        expect=None)
    run("""
    def f(n, m):
        s = 1
        for i in range(n):
            for j in range(m):
                s = s * 3 + i - j
        return locals()
    """, "f", lambda: (6, 7), expect="bail")


def test_bail_in_while_loop_and_after_break():
    run("""
    def f(n):
        x = 1
        hits = 0
        for i in range(n):
            k = 0
            while k < 30:
                x = x * 5 + k
                k += 1
                if k == 20:
                    break
            hits += k
        return locals()
    """, "f", lambda: (4,), expect="bail")


def test_exception_traceback_points_at_the_users_line():
    import traceback
    from helpers import compile_module
    import stagepy
    src = "def f(A, n):\n    for i in range(n):\n        A[i] = 1.0\n        x = A[i + 1]\n"
    with stagepy.enable():
        ns = {}
        exec(compile_module(src, filename="userfile.py"), ns)
        with pytest.raises(IndexError) as info:
            ns["f"](np.zeros(3), 3)
    tb = traceback.extract_tb(info.value.__traceback__)[-1]
    assert (tb.filename, tb.lineno, tb.line if tb.line else None) [:2] == ("userfile.py", 4)
