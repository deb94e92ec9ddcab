"""Complex numbers (Python complex, NumPy complex128 scalars and arrays) in loop nests:
computed natively on their parts with CPython's and NumPy's algorithms, bit for bit, with
CPython's exceptions and NumPy's warnings; what stagepy does not compute stays interpreted
with a reason. Every test is differential (difftest.run)."""
import functools
import textwrap

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


def near_circle(radius, n, seed):
    """Complex numbers whose |z| is radius or a few ulps from it (both parts rounded, so
    hypot lands on either side), and ones far inside and outside, zeros, infinities, NaNs,
    parts whose squares underflow and ones whose |z| overflows."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, n)
    r = radius * (1 + rng.integers(-8, 9, n) * 2.0 ** -52)
    z = list(r * np.cos(t) + 1j * r * np.sin(t))
    z += [complex(radius, 0), complex(0, -radius), complex(np.nextafter(radius, 0), 0),
          complex(np.nextafter(radius, 9e99), 0), complex(radius * 0.6, radius * 0.8),
          complex(radius * (1 - 2.0 ** -41), 0), complex(radius * (1 + 2.0 ** -41), 0), 0j, complex(1e-170, 1e-170),
          complex(radius * 1e-3, 1e-200), complex(radius * 7, 0), complex(float("inf"), 0), complex(0, float("nan")),
          complex(float("nan"), float("inf")), complex(1e308, 1e308), complex(1e200, -1e200)]
    return np.array(z)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
@pytest.mark.parametrize("radius", [2.0, 1e-50, 3.7e60])
def test_abs_of_complex_compared_with_a_number(op, radius):
    # Compared without hypot where x*x + y*y is far from the number's square (codegen's
    # hypot_compare), with it near the boundary: every outcome is CPython's, the
    # OverflowError of |complex(1e308, 1e308)| included (then at that index, with the
    # earlier elements written).
    src = f"""
    def f(X, Y, Z, out, n):
        for i in range(n):
            z = complex(X[i], Y[i])
            out[i, 0] = abs(z) {op} {radius!r}
            out[i, 1] = {radius!r} {op} abs(Z[i])
            out[i, 2] = abs(Z[i]) {op} 2
        return locals()
    """
    def args():
        z = near_circle(radius, 300, 11)
        return z.real.copy(), z.imag.copy(), z, np.zeros((len(z), 3), dtype=bool), len(z)
    recs = run(src, "f", args, expect=None, warn_filter="default")
    assert sum(r["native_calls"] for r in recs) > 0

    def finite_args():
        X, Y, Z, out, n = args()
        keep = np.abs(Z) < 1e300
        return X[keep].copy(), Y[keep].copy(), Z[keep].copy(), np.zeros((keep.sum(), 3), dtype=bool), int(keep.sum())
    recs = run(src, "f", finite_args, warn_filter="default")
    assert all(r["bailouts"] == 0 for r in recs)


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
    # Python complex sums are two float reductions. NumPy complex division hands
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
    import cmath
    def f(A, n):
        s = 0j
        for i in range(n):
            s += cmath.isclose(A[i], 1j)
        return locals()
    """, "isclose"),
    ("""
    def f(A, n):
        s = 0j
        for i in range(n):
            s += A[i] ** 0.5
        return locals()
    """, "raises a NumPy complex number to a power"),
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
        if "stores" in reason:
            return (cvals(6, 13), np.zeros(6), 6)
        if "NumPy" in reason:
            return (cvals(6, 13), 6)
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


# ---------------------------------------------------------------- ** and cmath

def czs(n, seed):
    """Python complex numbers of many magnitudes, with zeros of both signs, integers and
    parts past log(DBL_MAX / 4), where CPython's formulas switch."""
    rng = np.random.default_rng(seed)
    mags = 10.0 ** rng.integers(-6, 6, (n, 2))
    zs = [complex(a, b) for a, b in rng.standard_normal((n, 2)) * mags]
    return zs + [0.5 + 0j, -0.0 - 2j, 3 + 0j, -1 + 0j, 1j, 1.2 - 0.4j, 710.0 + 0.5j, -712.0 - 3j, 2.2e-308 + 1e-310j]


@pytest.mark.parametrize("exponent", ["w", "k", "x", "0.5", "-1.5", "2.5j", "(0.5 - 1j)", "101", "-120", "1e3"])
def test_powers_with_any_exponent_are_cpythons(exponent):
    # complex_pow: a small integer exponent (even a variable one, or a float or complex
    # with an integer value) by repeated squaring, any other by _Py_c_pow's polar formula.
    run(f"""
    def f(Z, W, K, X, n):
        s = 0j
        out = [0j] * n
        for i in range(n):
            z = Z[i]
            w = W[i]
            k = K[i]
            x = X[i]
            out[i] = z ** {exponent}
            s += out[i]
        return locals()
    """, "f", lambda: (czs(20, 31), czs(29, 32)[:29], [(-1) ** i * i * 13 % 211 - 105 for i in range(29)],
                      [0.5 * i - 7.25 for i in range(29)], 29))


def test_real_numbers_to_complex_powers():
    run("""
    def f(A, W, n):
        out = [0j] * n
        for i in range(n):
            out[i] = A[i] ** W[i] + 2 ** W[i] + 1.5 ** (W[i] * 0.5)
        return locals()
    """, "f", lambda: ([0.5 * i + 0.25 for i in range(12)], czs(3, 33)[:12], 12))


def test_power_errors_are_cpythons_at_the_same_iteration():
    # 0j ** -0.5 and 0j ** 1j: ZeroDivisionError; a result past DBL_MAX: OverflowError.
    for W, Z in [([0.5, -0.5, 1j], [1 + 1j, 0j, 0j]), ([0.5, 1j, 2.0], [2j, 0j, 3]),
                 ([2.5, 300.5, 1.0], [1 + 1j, 1e10 + 1j, 2j])]:
        W, Z = [complex(w) for w in W], [complex(z) for z in Z]
        run("""
        def f(Z, W, n):
            s = 0j
            for i in range(n):
                s = s + Z[i] ** W[i]
            return locals()
        """, "f", lambda: (Z, W, 3), expect="bail")


def test_powers_of_special_values_are_cpythons():
    sp = [complex(a, b) for a in SPECIAL for b in SPECIAL]
    run("""
    def f(Z, W, n):
        out = [0j] * n
        for i in range(n):
            try_ = Z[i] ** 0.5 if Z[i] != 0 else 0j
            out[i] = try_ + (1 + 1j) ** W[i]
        return locals()
    """, "f", lambda: (sp, sp[::-1], len(sp)), expect=None)


CMATH_FUNCTIONS = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
                   "asinh", "acosh", "atanh"]


@pytest.mark.parametrize("name", CMATH_FUNCTIONS)
def test_cmath_functions_are_cpythons_bit_for_bit(name):
    recs = run(f"""
    import cmath
    def f(Z, X, n):
        out = [0j] * n
        s = 0j
        for i in range(n):
            out[i] = cmath.{name}(Z[i])
            s += cmath.{name}(X[i]) + cmath.{name}(i)
        return locals()
    """, "f", lambda: (czs(30, 41), [0.37 * i - 5.0 for i in range(39)], 39))
    assert recs[0]["status"] == "cpu"


@pytest.mark.parametrize("name", CMATH_FUNCTIONS)
def test_cmath_functions_of_special_values_are_cpythons(name):
    # Infinities and NaNs take cmath's special-value tables: kernels hand those to CPython,
    # which also raises where cmath does (log(0j): ValueError; exp(1000): OverflowError).
    Z = [complex(a, b) for a in SPECIAL for b in SPECIAL] + [1000 + 1j, -1000 + 0.5j, 0j]
    run(f"""
    import cmath
    def f(Z, n):
        out = []
        for i in range(n):
            try:
                r = cmath.{name}(Z[i])
            except (ValueError, OverflowError) as e:
                r = type(e).__name__
            out.append(r)
        return locals()
    """, "f", lambda: (Z, len(Z)), expect=None)
    run(f"""
    import cmath
    def f(Z, n):
        s = 0j
        for i in range(n):
            s += cmath.{name}(Z[i])
        return locals()
    """, "f", lambda: (Z, len(Z)), expect=None)


def test_cmath_log_with_a_base_rect_polar_phase_and_predicates():
    recs = run("""
    import cmath
    def f(Z, B, n):
        out = [0j] * n
        r_sum = 0.0
        flags = 0
        for i in range(n):
            r, phi = cmath.polar(Z[i])
            out[i] = cmath.log(Z[i], B[i]) + cmath.rect(r, phi) + cmath.log(Z[i], 10) + cmath.rect(i, 0.25 * i)
            r_sum += r + phi + cmath.phase(Z[i]) + cmath.phase(-i) + cmath.polar(i - 3)[1]
            flags += cmath.isnan(Z[i]) + 2 * cmath.isinf(out[i]) + 4 * cmath.isfinite(i * 1j)
        return locals()
    """, "f", lambda: (czs(30, 43), czs(30, 44)[::-1], 39))
    assert recs[0]["status"] == "cpu"
    Z = [complex(a, b) for a in SPECIAL for b in SPECIAL]
    run("""
    import cmath
    def f(Z, n):
        flags = []
        ph = []
        for i in range(n):
            flags.append(cmath.isnan(Z[i]) + 2 * cmath.isinf(Z[i]) + 4 * cmath.isfinite(Z[i]))
            r, p = cmath.polar(Z[i])
            ph.append(cmath.phase(Z[i]) + p)
        return locals()
    """, "f", lambda: (Z, len(Z)), expect=None)


def test_cmath_log_of_zero_raises_at_the_same_iteration():
    run("""
    import cmath
    def f(Z, n):
        out = [0j] * n
        for i in range(n):
            out[i] = cmath.log(Z[i])
        return locals()
    """, "f", lambda: ([1 + 1j, 2j, 0j, 3 + 0j], 4), expect="bail")


def test_cmath_on_numpy_complex_arrays_and_scalars():
    run("""
    import cmath
    def f(A, B, n):
        for i in range(n):
            B[i] = cmath.exp(A[i] * 1j) + cmath.sqrt(A[i]) ** 1.5
        return locals()
    """, "f", lambda: (cvals(25, 45), np.zeros(25, np.complex128), 25))


def test_a_rebound_cmath_function_is_not_stagepys():
    # `cmath` here is the program's own object, whose sqrt is not cmath.sqrt.
    run("""
    def f(Z, n):
        out = [0j] * n
        for i in range(n):
            out[i] = cmath.sqrt(Z[i])
        return locals()
    """, "f", lambda: (czs(5, 46), 14), globals_={"cmath": __import__("types").SimpleNamespace(sqrt=lambda z: z * 2)},
        expect=None)


def test_complex_functions_pass_their_self_test():
    from stagepy import _types
    for name in ["pow", "sqrt", "exp", "log", "log_base", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
                 "asin", "acos", "atan", "asinh", "acosh", "atanh", "rect"]:
        assert _types.verify_cfunc(name), name


# ---------------------------------------------------------------- numpy.complex64

def c64vals(n, seed, special=False):
    return cvals(n, seed, special).astype(np.complex64)


def test_complex64_arithmetic_rounds_like_numpy():
    # Every operation of a complex64 result rounds its parts to float32, as NumPy's float
    # arithmetic does; Python numbers and complex numbers are converted to complex64 first
    # (NEP 50), float64 and int32 operands make complex128 results.
    recs = run("""
    import numpy as np
    def f(A, B, X, I, C, D, n):
        s = A[0] * 0
        t = np.complex64(0)
        w = 0j
        for i in range(n):
            s += A[i] * B[i]
            C[i] = A[i] * B[i] + A[i] / (B[i] + 1) - 0.1 * A[i] + 3 - (0.1 + 0.2j) * A[i] + i
            D[i] = A[i] * X[i] + I[i] * B[i]                     # complex128
            t = t + abs(A[i]) + A[i].real * 2 + (A[i] == 0.1) + A[i].imag / 3
            t -= np.float32(0.7) * A[i].conjugate() + np.int16(i) * B[i] + (1.5 + 2j) / (A[i] - 7.0)
            w += A[i] - (0.25 + 0.5j) if A[i] != B[i] else -A[i]
            ok = bool(A[i]) and A[i] != 0.1
        return locals()
    """, "f", lambda: (c64vals(40, 51), c64vals(40, 52), np.random.default_rng(53).standard_normal(40),
                      np.arange(40, dtype=np.int32), np.zeros(40, np.complex64), np.zeros(40, np.complex128), 40))
    assert recs[0]["status"] == "cpu"


def test_complex64_special_values_and_zero_divisors_warn_like_numpy():
    run("""
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] / B[i] + A[i] * B[i]
        return locals()
    """, "f", lambda: (c64vals(30, 54, True), c64vals(30, 55, True), np.zeros(30, np.complex64), 30), expect=None)
    run("""
    def f(A, B, n):
        s = A[0] * 0
        for i in range(n):
            s = s + A[i] / B[i]
        return locals()
    """, "f", lambda: (c64vals(6, 56), np.array([1, 2j, 0, 3, 1e-45, 4], np.complex64), 6), expect="bail")


def test_stores_into_complex64_arrays_round_each_part():
    # A Python complex, float or int stored into a complex64 element is NumPy's cast;
    # one that overflows float32 (NumPy warns), and ints past 2**53, go to CPython.
    run("""
    def f(Z, C, n):
        for i in range(n):
            C[i] = Z[i] * 1.1
            C[n - 1 - i] += 0.1
            C[i] = C[i] + i * 1000003
        return locals()
    """, "f", lambda: (czs(30, 57)[:30], np.zeros(30, np.complex64), 30))
    run("""
    def f(Z, C, n):
        for i in range(n):
            C[i] = Z[i]
        return locals()
    """, "f", lambda: ([1 + 1j, 1e300 + 0j, 2j], np.zeros(3, np.complex64), 3), expect="bail")
    run("""
    def f(C, n):
        for i in range(n):
            C[i] = C[i] + 2 ** 60 + i
        return locals()
    """, "f", lambda: (np.ones(3, np.complex64), 3), expect="bail")


def test_complex64_live_in_and_live_out_keep_their_type():
    run("""
    import cmath
    def f(A, z, n):
        r = 0.0
        for i in range(n):
            z = z * A[i] + 1
            r += abs(cmath.exp(A[i] * 0.1)) + cmath.phase(A[i])
        return locals()
    """, "f", lambda: (c64vals(20, 58), np.complex64(0.5 - 0.25j), 20))


NP_POWER_BASES = [complex(a, b) for a in SPECIAL for b in SPECIAL] + [1e200 + 1j, 1e-200 - 2j, 0.5 - 0.25j]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("ignore", [False, True])
def test_numpy_complex_constant_integer_powers(dtype, ignore):
    # npy_cpow: n = 1, 2, 3 unrolled, other |n| < 100 (negative ones too) by repeated squaring
    # from 1 + 0j, then NumPy's division; a zero base is 0 or NaN. NumPy's warnings where
    # any step is not finite (CPython redoes the statement); under np.errstate(all="ignore")
    # the special values are computed natively.
    def args():
        rng = np.random.default_rng(59)
        with np.errstate(all="ignore"):
            A = np.array(NP_POWER_BASES + list(rng.standard_normal(20) + 1j * rng.standard_normal(20)), dtype)
        return (A, np.zeros((8, len(A)), dtype), len(A))
    old = np.seterr(all="ignore") if ignore else None
    try:
        run("""
        def f(A, C, n):
            for i in range(n):
                C[0, i] = A[i] ** 2
                C[1, i] = A[i] ** 3 + A[i] ** 1
                C[2, i] = A[i] ** -1
                C[3, i] = A[i] ** -2
                C[4, i] = A[i] ** 7 - A[i] ** 0
                C[5, i] = A[i] ** -13
                C[6, i] = A[i] ** 99.0
                C[7, i] = A[i] ** (4 + 0j)
            return locals()
        """, "f", args, expect="native" if ignore else "bail")
    finally:
        if old is not None:
            np.seterr(**old)


def test_overflowing_stores_into_float32_and_complex64_under_errstate_ignore():
    # NumPy warns "overflow encountered in cast" unless np.errstate ignores it: then the
    # stores are native (no hand-over), infinities included.
    old = np.seterr(all="ignore")
    try:
        recs = run("""
        def f(X, Z, F, C, n):
            for i in range(n):
                F[i] = X[i] * 1e300
                C[i] = Z[i] * 1e300
            return locals()
        """, "f", lambda: (np.linspace(-2, 2, 9), [complex(x, -x) for x in np.linspace(-2, 2, 9)],
                          np.zeros(9, np.float32), np.zeros(9, np.complex64), 9))
        assert sum(r["bailouts"] for r in recs) == 0
    finally:
        np.seterr(**old)
    run("""
    def f(X, F, C, n):
        for i in range(n):
            F[i] = X[i] * 1e300
            C[i] = X[i] * 1e300
        return locals()
    """, "f", lambda: (np.linspace(-2, 2, 9), np.zeros(9, np.float32), np.zeros(9, np.complex64), 9), expect="bail")


NP_COMPLEX_FUNCTIONS = ["sqrt", "exp", "log", "log10", "log2", "expm1", "log1p", "sin", "cos", "tan", "sinh", "cosh",
                        "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "square"]


@pytest.mark.parametrize("name", NP_COMPLEX_FUNCTIONS)
def test_numpy_functions_of_complex_numbers_are_numpys(name):
    # NumPy's own loop for the dtype, one number at a time: NumPy's values bit for bit;
    # special values (not finite results) go to CPython, which warns as NumPy does.
    def args():
        A = cvals(30, 62)
        A[3], A[7] = 0, complex(np.inf, 1.0)
        return (A, A.astype(np.complex64), [complex(x) for x in cvals(30, 63)], np.zeros(30, np.complex128),
                np.zeros(30, np.complex64), 30)
    recs = run(f"""
    import numpy as np
    def f(A, A32, Z, C, C32, n):
        for i in range(n):
            C[i] = np.{name}(A[i]) + np.{name}(Z[i])
            C32[i] = np.{name}(A32[i]) * 2
        return locals()
    """, "f", args, expect=None)
    assert recs[0]["status"] == "cpu" and recs[0]["native_calls"] > 0


# ---------------------------------------------------------------- deferred warnings

def sprinkled(n, seed, dtype, k=12):
    """Normal complex values with k special ones (overflowing, infinite, NaN parts) at
    random places, so that NumPy's warnings first arise at different iterations."""
    rng = np.random.default_rng(seed)
    z = cvals(n, seed).astype(dtype)
    big = float(np.finfo(z.real.dtype).max)
    specials = [complex(big, 1), complex(1, big), complex(big, big), complex(np.inf, 0), complex(0, -np.inf),
                complex(np.nan, 1), 0j, complex(-big, 2)]
    for i in rng.choice(n, k, replace=False):
        z[i] = specials[rng.integers(len(specials))]
    return z


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_numpy_complex_warnings_are_deferred_and_the_loop_runs_on_threads(dtype):
    # NumPy's + - * / of complex numbers warn (overflow, invalid value, divide by zero)
    # from their parts' float operations; under the default warnings filter the kernel records which ones
    # arose, at which iteration, and emits them in CPython's order afterwards: nothing
    # goes back to CPython, and the elementwise loop runs on both threads.
    n = 6000
    stagepy.set_threads(2)
    try:
        for seed in (61, 62, 63):
            recs = run("""
            def f(A, B, C, D, E, n):
                for i in range(n):
                    C[i] = A[i] * B[i] + A[i]
                for i in range(n):
                    D[i] = (A[i] - B[i]) * 0.5 - B[i] * A[i]
                for i in range(n):
                    E[i] = A[i] / B[i]
                return locals()
            """, "f", lambda: (sprinkled(n, seed, dtype), sprinkled(n, seed + 100, dtype), np.zeros(n, dtype),
                               np.zeros(n, dtype), np.zeros(n, dtype), n), warn_filter="default")
            assert sum(r["bailouts"] for r in recs) == 0, recs
            loops = [l for r in recs for l in r["loops"]]
            assert loops and all(l["parallel_runs"] > 0 for l in loops), loops
    finally:
        stagepy.set_threads(0)


def int_cvals(n, seed, specials=()):
    """Complex values with small integer parts (their sums are exact in any order), and
    `specials` at random places."""
    rng = np.random.default_rng(seed)
    z = rng.integers(-8, 9, n) + 1j * rng.integers(-8, 9, n)
    for i, v in zip(rng.choice(n, len(specials), replace=False), specials):
        z[i] = v
    return z


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("specials", [(), ("big", "big_imag"), (complex(np.inf, 1),),
                                      (complex(np.inf, 0), complex(-np.inf, 0)), (complex(np.nan, 2),),
                                      ("tenth",) * 40])
def test_numpy_complex_sums_run_on_threads_with_cpythons_warnings(dtype, specials):
    # `s += A[i] * B[i]` of NumPy complex numbers is two float sums, s.real and s.imag, whose
    # warnings the kernel records (the addition's from a copy of the part before and the
    # part after): the loop runs on threads, and where the parts combine into something
    # infinite or NaN it runs again in order, so values and warnings are CPython's (an
    # overflowing product, infinities of both signs, a NaN, a sum that overflows). complex64
    # parts are float32 sums: each update and the combination round to float32.
    n = 5000
    big = float(np.finfo(np.dtype(dtype).type(0).real.dtype).max)
    named = {"big": complex(big, 1), "big_imag": complex(0, big), "tenth": complex(big / 10, big / 10)}
    vals = tuple(named.get(x, x) for x in specials)
    stagepy.set_threads(2)
    try:
        recs = run("""
        def f(A, B, n, c):
            s = 0j
            for i in range(n):
                s += A[i] * B[i]
            t = c(1 - 1j)
            for i in range(n):
                t = t - A[i]
            u = c(0)
            for i in range(n):
                u = (A[i] + B[i]) + u
            return locals()
        """, "f", lambda: (int_cvals(n, 71, vals).astype(dtype), int_cvals(n, 72).astype(dtype), n, dtype),
                   globals_={"np": np}, warn_filter="default")
    finally:
        stagepy.set_threads(0)
    loops = [l for r in recs for l in r["loops"]]
    assert len(loops) == 3 and all(l["parallel_runs"] > 0 for l in loops), loops


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_numpy_complex_sums_beside_stores_and_in_outer_loops(dtype):
    # Beside stores (the parts' combination warns at the sum's line), in a loop whose
    # iterations each sum a row, and under np.errstate(all="ignore"), where nothing warns.
    n, m = 3000, 12
    stagepy.set_threads(2)
    old = np.seterr(all="ignore")
    try:
        for errstate in ("default", "ignore"):
            np.seterr(**(old if errstate == "default" else {"all": "ignore"}))
            recs = run("""
            def f(A, B, M, C, y, n, m):
                s = C.dtype.type(0)
                for i in range(n):
                    C[i] = A[i] * B[i]
                    s += C[i] * 2
                for i in range(n):
                    acc = 0j
                    for j in range(m):
                        acc += M[i, j] * B[j]
                    y[i] = acc
                return locals()
            """, "f", lambda: (int_cvals(n, 73).astype(dtype), int_cvals(n, 74).astype(dtype),
                               int_cvals(n * m, 75).reshape(n, m).astype(dtype), np.zeros(n, dtype), np.zeros(n, dtype),
                               n, m),
                       globals_={"np": np}, warn_filter="default")
            loops = {l["line"]: l for r in recs for l in r["loops"]}
            assert loops[4]["parallel_runs"] > 0 and loops[7]["parallel_runs"] > 0, loops
    finally:
        np.seterr(**old)
        stagepy.set_threads(0)


def test_numpy_complex_warnings_with_other_warnings_or_errors_in_the_statement():
    # A float operation that may warn beside the complex ones (their order in the
    # statement is CPython's only if CPython warns them), an index that fails before or
    # after the complex operation in CPython's order, a value stored into another dtype:
    # the warnings and the IndexError come out as CPython gives them.
    n = 300
    def args():
        rng = np.random.default_rng(64)
        X = rng.standard_normal(n)
        X[rng.choice(n, 6, replace=False)] = 1e308
        K = np.arange(n)
        K[250] = n + 5
        return sprinkled(n, 65, np.complex128, 20), sprinkled(n, 66, np.complex128, 20), X, K, np.zeros(n, np.complex128), np.zeros(n, np.complex64), n
    for body in ["C[i] = X[i] * X[i] + A[i] * B[i]",
                 "C[i] = A[i] * B[i] + X[i] * X[i]",
                 "C[i] = A[i] * B[i] + A[K[i]]",
                 "C[i] = A[K[i]] + A[i] * B[i]",
                 "C[K[i]] = A[i] * B[i]",
                 "D[i] = A[i] * B[i] - A[i]",
                 "C[i] = (A[i] * B[i]).real + A[i] * 1j"]:
        run(f"""
        def f(A, B, X, K, C, D, n):
            for i in range(n):
                {body}
            return locals()
        """, "f", args, expect=None, warn_filter="default")


def test_python_complex_operands_of_numpy_complex_operations_warn_alike():
    run("""
    def f(A, C, n):
        z = 1e308 + 1e308j
        for i in range(n):
            C[i] = z * A[i] - A[i] * 2.0 + (A[i] + 1j)
        return locals()
    """, "f", lambda: (sprinkled(500, 67, np.complex128, 30), np.zeros(500, np.complex128), 500), warn_filter="default")


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_numpy_complex_division_by_huge_numbers_warns_although_the_quotient_is_finite(dtype):
    # NumPy divides by b.real + b.imag * (b.imag / b.real), which overflows for 1e308 + 1e308j:
    # its reciprocal is 0, the quotient 0j is finite, and NumPy warns "overflow" (so does
    # x ** -1, through the same division). A kernel that only checked the quotient missed it.
    big = float(np.finfo(np.dtype(dtype).type(0).real.dtype).max)
    def args():
        B = cvals(64, 70).astype(dtype)
        B[[9, 40]] = [complex(big, big), complex(big, big / 2)]
        B[20] = complex(big / 2, big / 2)  # no overflow: a tiny finite quotient
        return cvals(64, 71).astype(dtype), B, np.zeros(64, dtype), np.zeros(64, dtype), 64
    for flt in ("always", "default"):
        run("""
        def f(A, B, C, D, n):
            for i in range(n):
                C[i] = A[i] / B[i]
            for i in range(n):
                D[i] = B[i] ** -1
            return locals()
        """, "f", args, expect=None, warn_filter=flt)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_numpy_complex_quotients_of_special_values_warn_like_numpy_one_by_one(dtype):
    # Division's warnings come from NumPy's scaled reciprocal and from the comparison that
    # picks the scaling (a NaN in the divisor: "invalid"). Each pair in a call of its own,
    # in a native nest that defers warnings (default filter), against CPython: the same
    # quotient (NaN for NaN) and the same warnings.
    import warnings
    src = textwrap.dedent("""
    def f(A, B, C):
        for i in range(A.shape[0]):
            C[i] = A[i] / B[i]
            C[i] = C[i] * B[i] - A[i]
    """)
    code_py = compile(src, "<quotients>", "exec")
    ns_py = {}
    exec(code_py, ns_py)
    with stagepy.enable():
        ns_sp = {}
        exec(compile(src, "<quotients>", "exec"), ns_sp)
    big = float(np.finfo(np.dtype(dtype).type(0).real.dtype).max)
    parts = [0.0, -0.0, 1.0, -2.5, big, big / 2, 1e-310, np.inf, -np.inf, np.nan]
    rng = np.random.default_rng(72)
    values = [complex(re, im) for re in parts for im in parts]
    def call(f, a, b):
        # (1000 elements, the others plain, so that every call is long enough natively that no
        # cost probe runs some calls in CPython: 300 took 1.9 us on a faster VM, under the
        # probe's 2 us)
        A, B, C = np.full(1000, 1 + 2j, dtype), np.full(1000, 3 - 1j, dtype), np.zeros(1000, dtype)
        A[0], B[0] = a, b
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("default")
            f(A, B, C)
        return C.view(C.real.dtype), [str(x.message) for x in w]
    native_before = sum(r["native_calls"] for r in stagepy.report() if r["file"] == "<quotients>")
    for k in range(1500):
        a, b = values[rng.integers(len(values))], values[rng.integers(len(values))]
        with stagepy.enable():
            got, gw = call(ns_sp["f"], a, b)
        want, ww = call(ns_py["f"], a, b)
        assert gw == ww, (a, b, gw, ww)
        assert np.array_equal(got, want, equal_nan=True) and (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), (a, b, got, want)
    recs = [r for r in stagepy.report() if r["file"] == "<quotients>"]
    assert sum(r["native_calls"] for r in recs) - native_before >= 1500 and sum(r["bailouts"] for r in recs) == 0, recs
