"""Complex numbers (Python complex, NumPy complex128 scalars and arrays) in loop nests:
computed natively on their parts with CPython's and NumPy's algorithms, bit for bit, with
CPython's exceptions and NumPy's warnings; what stagepy does not compute stays interpreted
with a reason. Every test is differential (difftest.run)."""
import functools

import numpy as np
import pytest

import stagepy
import difftest
from difftest import run

SPECIAL = [0.0, -0.0, 1.0, -2.5, 3.0, 1e308, -1e-310, float("inf"), float("-inf"), float("nan")]


def cvals(n, seed, special=False):
    rng = np.random.default_rng(seed)
    if special:
        re = rng.choice(SPECIAL, n)
        im = rng.choice(SPECIAL, n)
    else:
        re = rng.standard_normal(n) * 4
        im = rng.standard_normal(n) * 4
    return re + 1j * im


def records(recs):
    return {r["line"]: r for r in recs}


def test_mandelbrot_with_python_complex_runs_natively():
    recs = run("""
    def f(w, h, maxit):
        out = [0] * (w * h)
        total = 0
        for y in range(h):
            for x in range(w):
                c = complex(-2.0 + 3.0 * x / w, -1.5 + 3.0 * y / h)
                z = 0j
                n = 0
                while abs(z) <= 2.0 and n < maxit:
                    z = z * z + c
                    n += 1
                total += n
        return locals()
    """, "f", lambda: (24, 18, 60))
    assert recs[0]["status"] == "cpu" and recs[0]["native_calls"] > 0


def test_arithmetic_with_ints_floats_and_bools():
    # A real operand becomes x + 0j before the operation, as CPython's to_complex does:
    # signed zeros, infinities and NaNs in the parts show it.
    run("""
    def f(Z, R, n):
        acc = 0j
        trace = []
        for i in range(n):
            z = Z[i]
            r = R[i]
            a = z + r - (r * z) + (2 - z) * 3 + True * z
            b = -z + (+z) * 1.5 - z * -0.0
            acc += a * b
            acc = acc - z.conjugate() * 0.5j
            re, im = a.real, b.imag
        return locals()
    """, "f", lambda: ([complex(x) for x in cvals(16, 1)], np.random.default_rng(2).standard_normal(16).tolist(), 16))


def test_special_values_in_products_and_quotients():
    # Infinities, NaNs, huge and subnormal parts: the same parts as CPython's _Py_c_prod and
    # _Py_c_quot (Smith's algorithm), where the textbook formulas would differ.
    Z = [complex(a, b) for a in SPECIAL for b in SPECIAL]
    W = [complex(b, -a) for a in SPECIAL for b in SPECIAL if (a, b) != (0.0, 0.0)]
    W = [w for w in W if w != 0] + [1 + 1j] * (len(Z) - len([w for w in W if w != 0]))
    run("""
    def f(Z, W, n):
        P = [0j] * n
        Q = [0j] * n
        for i in range(n):
            P[i] = Z[i] * W[i]
            Q[i] = Z[i] / W[i]
        return P, Q
    """, "f", lambda: (Z, W[:len(Z)], len(Z)), expect=None)
    # Lists of complex numbers are not native: the same arithmetic on scalars is.
    recs = run("""
    def f(zr, zi, wr, wi, n):
        total = 0j
        for i in range(n):
            z = complex(zr[i], zi[i])
            w = complex(wr[i], wi[i])
            p = z * w
            q = z / w
            total = total + p
        return locals()
    """, "f", lambda: ([z.real for z in Z], [z.imag for z in Z], [w.real for w in W[:len(Z)]],
                       [w.imag for w in W[:len(Z)]], len(Z)))
    assert recs[0]["native_calls"] > 0


def test_division_by_zero_raises_at_the_same_iteration():
    recs = run("""
    def f(Z, n):
        s = 1j
        k = 0
        for i in range(n):
            k = i
            s = s + 1 / Z[i]
        return locals()
    """, "f", lambda: ([1 + 1j, 2j, 3.0 + 0j, 0j, 5j], 5), expect="bail")


@pytest.mark.parametrize("exponent", ["2", "3", "7", "-1", "-3", "0", "2.0", "True", "(2+0j)", "100"])
def test_constant_integer_powers(exponent):
    run(f"""
    def f(Z, n):
        out = []
        s = 0j
        for i in range(n):
            s += Z[i] ** {exponent}
        return locals()
    """, "f", lambda: ([complex(x) for x in cvals(12, 3)] + [0.5 + 0.25j, 1j, -1 + 0j], 15))


def test_power_overflow_and_zero_to_a_negative_power_are_cpythons_errors():
    run("""
    def f(Z, n):
        s = 0j
        for i in range(n):
            s = s + Z[i] ** 3
        return locals()
    """, "f", lambda: ([1 + 1j, 1e200 + 1j, 2j], 3), expect="bail")
    run("""
    def f(Z, n):
        s = 0j
        for i in range(n):
            s = s + Z[i] ** -2
        return locals()
    """, "f", lambda: ([1 + 1j, 0j, 2j], 3), expect="bail")


def test_abs_truth_and_equality():
    run("""
    def f(Z, W, n):
        big = 0.0
        count = 0
        same = 0
        for i in range(n):
            big = max(big, abs(Z[i]))
            if Z[i]:
                count += 1
            if not W[i]:
                count -= 1
            if Z[i] == W[i] or Z[i] != 2 or Z[i] == 1.5 or W[i] == True:
                same += 1
        return locals()
    """, "f", lambda: ([0j, 1 + 0j, 2 + 0j, 1.5 + 0j, complex(3, 4), complex(float("nan"), 1), complex(float("inf"), float("nan"))],
                       [0j, 1 + 0j, -0j, 1.5 + 0j, complex(3, 4), complex(float("nan"), 1), 0j], 7))


def test_abs_overflow_is_cpythons_overflow_error():
    run("""
    def f(Z, n):
        s = 0.0
        for i in range(n):
            s += abs(Z[i])
        return locals()
    """, "f", lambda: ([3 + 4j, complex(1.5e308, 1.5e308)], 2), expect="bail")


def test_numpy_complex_arrays_elementwise():
    recs = run("""
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] * B[i] - A[i] / B[i] + 1j * A[i].real
            C[i] = C[i] + B[i].conjugate() * 2 - A[i].imag
        return locals()
    """, "f", lambda: (cvals(64, 4), cvals(64, 5), np.zeros(64, np.complex128), 64))
    assert recs[0]["status"] == "cpu"


def test_numpy_complex_special_values_warn_like_numpy():
    # A zero divisor, overflow, NaN: NumPy warns; CPython runs those statements.
    for flt in ("always", "default"):
        run("""
        def f(A, B, C, n):
            for i in range(n):
                C[i] = A[i] / B[i] + A[i] * B[i]
            return locals()
        """, "f", lambda: (cvals(40, 6, special=True), cvals(40, 7, special=True), np.zeros(40, np.complex128), 40),
            expect=None, warn_filter=flt)


def test_numpy_scalars_mix_with_python_numbers():
    # np.complex128 with Python floats and complex numbers, np.float64 with 1j, NumPy
    # integers: the result types NumPy gives (NEP 50 on NumPy 2), values bit for bit.
    run("""
    def f(A, X, I, n):
        s = A[0] * 0
        t = 0
        for i in range(n):
            a = A[i]
            u = a * 2.5 + 1j - X[i] * 1j + I[i] * a
            v = X[i] + a
            s = s + u * v
            t = abs(a) + (a == X[i]) + (a != 1j)
            w = a.real * a.imag
        return locals()
    """, "f", lambda: (cvals(20, 8), np.random.default_rng(9).standard_normal(20), np.arange(20, dtype=np.int64), 20))


def test_real_values_stored_into_complex_arrays():
    run("""
    def f(C, X, I, n):
        for i in range(n):
            C[i] = X[i]
            C[n + i] = I[i] * 3
            C[2 * n + i] = 0.5
            C[3 * n + i] = complex(X[i], I[i])
        return locals()
    """, "f", lambda: (np.full(40, 9 + 9j), np.random.default_rng(10).standard_normal(10), np.arange(10), 10))


def test_dft_over_a_complex_array():
    run("""
    import math
    def f(x, X, n):
        for k in range(n):
            s = 0j
            for t in range(n):
                angle = -2.0 * math.pi * k * t / n
                s += x[t] * complex(math.cos(angle), math.sin(angle))
            X[k] = s
        return locals()
    """, "f", lambda: (cvals(32, 11), np.zeros(32, np.complex128), 32))


def test_complex_live_in_and_live_out_keep_their_types():
    run("""
    import numpy as np
    def f(z0, w0, n):
        z = z0
        w = w0
        for i in range(n):
            z = z * 0.5 + 1j
            w = w * (1 - 0.5j)
        return locals()
    """, "f", lambda: (1 + 2j, np.complex128(3 - 1j), 9))


def test_complex_and_another_type_in_one_variable_stays_correct():
    # s is an int before the loop and complex after its first iteration (peeled); an
    # empty loop leaves the int.
    for n in (0, 5):
        run("""
        def f(A, n):
            s = 0
            for i in range(n):
                s += A[i]
            return locals()
        """, "f", lambda: (cvals(5, 12), n), expect=None)


def test_complex_reductions_and_elementwise_loops_run_on_threads():
    # Python complex sums are two float reductions. NumPy complex arithmetic hands
    # non-finite results to CPython (NumPy would warn), which keeps a loop sequential;
    # where np.errstate ignores the warnings, nothing can warn and the loop runs on threads.
    # (Values whose sums are exact in any order: float reductions on threads reassociate.)
    n = 3000
    A = (np.arange(n) % 7) + 1j * (np.arange(n) % 5)
    B = (np.arange(n) % 3) - 2j
    stagepy.set_threads(2)
    old = np.seterr(all="ignore")
    try:
        recs_py = difftest.run("""
        def f(X, Y, n):
            s = 0j
            for i in range(n):
                s += complex(X[i], Y[i]) * (1 - 2j)
            return locals()
        """, "f", lambda: (A.real.copy(), A.imag.copy(), n), warn_filter="default")
        recs_np = difftest.run("""
        def f(A, B, C, n):
            s = 0j
            for i in range(n):
                s += A[i] * B[i]
            for i in range(n):
                C[i] = A[i] * B[i] + A[i] / (B[i] + 1)
            return locals()
        """, "f", lambda: (A, B, np.zeros(n, np.complex128), n), warn_filter="default")
    finally:
        np.seterr(**old)
        stagepy.set_threads(0)
    for recs in (recs_py, recs_np):
        loops = [l for r in recs for l in r["loops"]]
        assert all(l["parallel_runs"] + l.get("gpu", {}).get("launches", 0) > 0 for l in loops), loops


def test_module_level_complex_loop():
    difftest.run_module("""
    z = 0.5 + 0.5j
    acc = 0j
    for i in range(50):
        z = z * z * 0.9 + 0.1j
        acc += z
    """, lambda: {})


@pytest.mark.parametrize("src, reason", [
    ("""
    def f(A, n):
        s = A[0] * 0
        for i in range(n):
            s += A[i] * A[i]
        return locals()
    """, "complex64"),
    ("""
    import cmath
    def f(A, n):
        s = 0j
        for i in range(n):
            s += cmath.exp(A[i])
        return locals()
    """, "cmath"),
    ("""
    def f(A, n):
        s = 0j
        for i in range(n):
            s += A[i] ** i
        return locals()
    """, "power"),
    ("""
    def f(A, n):
        s = 0
        for i in range(n):
            if A[i] < 1j:
                s += 1
        return locals()
    """, "comparison is not defined for complex"),
    ("""
    def f(A, B, n):
        for i in range(n):
            B[i] = A[i]
        return locals()
    """, "stores a complex number"),
])
def test_what_stays_interpreted_says_why(src, reason):
    def args():
        if "complex64" == reason:
            return (cvals(6, 13).astype(np.complex64), 6)
        if "stores" in reason:
            return (cvals(6, 13), np.zeros(6), 6)
        return ([complex(x) for x in cvals(6, 13)], 6)
    recs = run(src, "f", args, expect="interpreted")
    difftest.assert_reason(recs, reason)


def test_numpy_complex_special_values_under_errstate_ignore_run_natively():
    # Nothing can warn: NumPy's own formulas, zero divisors included, computed natively.
    old = np.seterr(all="ignore")
    try:
        recs = run("""
        def f(A, B, C, n):
            for i in range(n):
                C[i] = A[i] / B[i] + A[i] * B[i] - (A[i] + B[i])
            return locals()
        """, "f", lambda: (cvals(200, 14, special=True), cvals(200, 15, special=True), np.zeros(200, np.complex128), 200))
    finally:
        np.seterr(**old)
    assert recs[0]["bailouts"] == 0


def test_lists_of_complex_numbers_keep_their_identity():
    run("""
    def f(Z, W, n):
        for i in range(n):
            W[i] = Z[i] * Z[i] + W[i]
            Z[i] = Z[i].conjugate()
        return locals()
    """, "f", lambda: ([complex(x) for x in cvals(10, 16)], [complex(x) for x in cvals(10, 17)], 10))


def test_real_numbers_have_real_imag_and_conjugate():
    # Python ints, floats and bools and NumPy real scalars have them too: the value itself
    # (a Python bool's is an int) and a zero of the same type; live-ins included.
    run("""
    def f(A, L, M, n, x, b):
        s = 0
        t = 0.0
        out = []
        for i in range(n):
            s += (i > 2).real + (i > 3).imag + b.conjugate() + n.imag
            t += A[i].real + A[i].imag + L[i].conjugate() + x.real
            M[i] = A[i].conjugate() - M[i].imag + (A[i] * 1j).conjugate()
            u = A[i].imag
            v = L[i].imag
            w = (i % 2 == 0).real
            y = A[i] if i % 2 else 1.5 * i  # float | np.float64
            q = y.imag
            t += y.real * 2 + q
            b2 = (i > 2) if i % 3 else (A[i] > 0)  # bool | np.bool_
            s += b2.real
        return locals()
    """, "f", lambda: (np.array([1.5, -0.0, 2.0, np.inf, 3.0, -1.0]), [0.5, -0.0, 2.0, 3.0, 4.0, 5.0],
                      np.zeros(6, np.complex128), 6, -2.5, True))
    for dtype in (np.int32, np.uint8, np.float32, np.bool_):
        run("""
        def f(A, n):
            for i in range(n):
                r = A[i].real
                z = A[i].imag
                c = A[i].conjugate()
            return locals()
        """, "f", lambda: (np.arange(5).astype(dtype), 5))


def test_imag_of_an_element_out_of_range_raises_at_the_same_iteration():
    recs = run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += A[i].imag + 1.0
        return locals()
    """, "f", lambda: (np.arange(4.0), 6), expect=None)
    assert recs[0]["status"] == "cpu"
