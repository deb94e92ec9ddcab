"""Loop nests run natively with CPython's results: values, types, locals after the loop."""
import numpy as np
import pytest

import difftest
from difftest import run, run_module

DTYPES = ["float64", "float32", "int64", "int32", "int16", "int8", "uint8", "bool"]


def arr(dtype, n=8, seed=0, shape=None):
    rng = np.random.default_rng(seed)
    shape = shape or (n,)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "f":
        return (rng.standard_normal(shape) * 10).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -20), min(info.max, 20)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def test_sum_of_products():
    run("""
    def f(A, B, n):
        s = 0.0
        for i in range(n):
            s += A[i] * B[i]
        return locals()
    """, "f", lambda: (np.arange(10.0), np.arange(10.0) * 0.5, 10))


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_per_dtype(dtype):
    src = """
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] + B[i]
            C[i] = C[i] * 2 if A[i] > B[i] else C[i]
        return locals()
    """
    if dtype == "bool":
        src = """
    def f(A, B, C, n):
        for i in range(n):
            C[i] = A[i] and not B[i]
            C[i] = C[i] | (A[i] ^ B[i])
        return locals()
    """
    run(src, "f", lambda: (arr(dtype, seed=1), arr(dtype, seed=2), np.zeros(8, dtype), 8))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_per_dtype(dtype):
    run("""
    def f(A, n):
        total = 0
        big = A[0]
        count = 0
        for i in range(n):
            total += A[i]
            if A[i] > big:
                big = A[i]
            count += 1
        return locals()
    """, "f", lambda: (arr(dtype, seed=3), 8))


@pytest.mark.parametrize("args", [(5,), (2, 9), (9, 2, -1), (0, 10, 3), (10, 0, -3), (5, 5), (3, 4), (0,), (-3,),
                                  (7, -7, -2), (-10, 10, 7)])
def test_range_forms_and_loop_variable_after(args):
    run("""
    def f(args):
        i = -100
        acc = 0
        for i in range(*args):
            acc += i * i
        return locals()
    """.replace("range(*args)", "range(" + ", ".join(f"args[{k}]" for k in range(len(args))) + ")"),
        "f", lambda: (args,))


def test_loop_variable_unbound_when_empty():
    run("""
    def f(n):
        for i in range(n):
            pass
        return sorted(locals())
    """, "f", lambda: (0,), expect=None)
    run("""
    def f(n):
        for i in range(n):
            k = i
        return locals()
    """, "f", lambda: (3,))


def test_bounds_depending_on_outer_variables():
    run("""
    def f(A, n):
        for i in range(n):
            for j in range(i + 1):
                A[i, j] = i - j
            for j in range(n - 1, i, -1):
                A[i, j] = -j
        return locals()
    """, "f", lambda: (np.zeros((6, 6)), 6))


def test_gemm_ijk():
    run("""
    def f(A, B, C, n, m, p):
        for i in range(n):
            for j in range(m):
                acc = 0.0
                for k in range(p):
                    acc += A[i, k] * B[k, j]
                C[i, j] = acc
        return locals()
    """, "f", lambda: (arr("float64", shape=(4, 5)), arr("float64", seed=5, shape=(5, 3)), np.zeros((4, 3)), 4, 3, 5))


def test_variables_each_iteration_assigns_first():
    # `acc` and `x` are assigned before anything reads them in every iteration, so their
    # types at the loop head (unbound, float, np.float64, int) do not shape the body; after
    # the loops they hold what the last iteration left (float when p == 0).
    for p in (0, 3):
        recs = run("""
        def f(A, B, C, p):
            n, m = C.shape
            for i in range(n):
                for j in range(m):
                    acc = 0.0
                    for k in range(p):
                        acc += A[i, k] * B[k, j]
                    C[i, j] = acc
                x = i
                if A[i, 0] > 0.5:
                    x = A[i, 0]
                C[i, 0] += x
            return locals()
        """, "f", lambda: (arr("float64", shape=(4, 5)), arr("float64", seed=5, shape=(5, 3)), np.zeros((4, 3)), p))
        assert recs[0]["native_calls"] > 0


def test_stencil_with_time_loop_and_swap():
    run("""
    def f(u, v, steps, n):
        for t in range(steps):
            for i in range(1, n - 1):
                for j in range(1, n - 1):
                    v[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])
            u, v = v, u
        return locals()
    """, "f", lambda: (arr("float64", shape=(7, 7)), np.zeros((7, 7)), 5, 7))


def test_while_break_continue_elif():
    run("""
    def f(A, n):
        hits = 0
        for i in range(n):
            x = A[i]
            k = 0
            while k < 5 and x > 0:
                x = x - 3
                k += 1
            if k == 0:
                continue
            elif k > 3:
                hits += 10
            else:
                hits += 1
            if hits > 25:
                break
        return locals()
    """, "f", lambda: (arr("int64", n=12, seed=7), 12))


BREAK_THEN_OUTER_CODE = [
    ("range inner loop", """
    def f(a):
        hits = 0
        for i in range(len(a)):
            for t in range(3, 12, 2):
                if a[i] % t == 0:
                    hits += t
                    break
            last = t
            hits += last
        return locals()
    """),
    ("inner loop over a tuple", """
    def f(a):
        hits = 0
        for i in range(len(a)):
            for t in (3, 5, 7, 11):
                if a[i] % t == 0:
                    hits += t * i
                    break
            hits -= t
        return locals()
    """),
    ("break as the last branch, then two statements", """
    def f(a):
        s = 0
        for i in range(len(a)):
            k = 0
            for j in range(i):
                if a[j] > a[i]:
                    k = j
                    break
                s += 1
            s += k
            a[i] += k
        return locals()
    """),
]


@pytest.mark.parametrize("name,src", BREAK_THEN_OUTER_CODE, ids=[c[0] for c in BREAK_THEN_OUTER_CODE])
def test_break_in_an_inner_loop_then_more_code_in_the_outer_loop(name, src):
    # 3.12 lays the break path out after the inner loop's back edge; it is still inside
    # the inner loop (no for-else), so the nest runs natively on every version.
    run(src, "f", lambda: (np.arange(1, 60) * 7 % 23,))


def test_a_break_past_the_else_clause_of_the_nest_itself_is_named_as_such():
    recs = run("""
    def f(a):
        for i in range(len(a)):
            if a[i] < 0:
                break
        else:
            i = -1
        i = i * 2
        return locals()
    """, "f", lambda: (np.array([1.0, -2.0, 3.0]),), expect="interpreted")
    assert any("a break past the loop's else clause" in (r.get("reason") or "") for r in recs), recs


def test_a_break_past_a_for_else_runs_natively():
    recs = run("""
    def f(a):
        hits = 0
        for i in range(len(a)):
            for t in range(3, 12, 2):
                if a[i] % t == 0:
                    break
            else:
                hits += 100
            hits += t
        return locals()
    """, "f", lambda: (np.arange(1, 40),))
    assert all(r["native_calls"] for r in recs), recs


def test_conditional_expressions_and_or_chains():
    run("""
    def f(A, n):
        out = 0
        for i in range(n):
            a = A[i]
            b = a if a > 0 else -a
            c = (a > 1 and a < 5) or a == -2
            d = 0 < a < 10
            e = b and a
            out += b + c + d + e
        return locals()
    """, "f", lambda: (arr("int64", n=10, seed=8), 10))


@pytest.mark.parametrize("t", [(1.5, -2.25), (np.float32(0.5), np.float32(3.0)), (True, False), (2, 0.5),
                               (np.int8(3), np.float64(-1.0))], ids=["floats", "float32s", "bools", "int and float",
                                                                     "int8 and np.float64"])
def test_tuples_of_numbers_passed_in_keep_their_values(t):
    # Each item reaches the kernel as its own machine type (a float in a float register).
    run("""
    def f(n, t):
        c = 0
        acc = 0.0
        out = []
        for i in range(n):
            if i == t[1]:
                c += 1
            acc = acc + t[0] * i - t[1]
            out.append(t[0] if i % 2 else t[1])
        return c, acc, out
    """, "f", lambda: (6, t))


def test_tuple_assignment_fibonacci_python_ints():
    run("""
    def f(n):
        a, b = 0, 1
        for i in range(n):
            a, b = b, a + b
        return locals()
    """, "f", lambda: (60,))


def test_python_int_overflow_gives_exact_big_ints():
    recs = run("""
    def f(n):
        x = 1
        for i in range(n):
            x = x * 3 + i
        return locals()
    """, "f", lambda: (100,), expect="bail")
    assert recs


def test_negative_indices_wrap_and_nested_subscripts():
    run("""
    def f(A, M, n):
        for i in range(n):
            A[-i - 1] = A[i] * 2
            M[i][-1] = M[-1][i] + 1
        return locals()
    """, "f", lambda: (np.arange(6.0), np.arange(36.0).reshape(6, 6), 6))


@pytest.mark.parametrize("kind", ["view", "strided", "negative", "fortran", "readonly_read"])
def test_array_layouts(kind):
    def make():
        base = np.arange(60.0).reshape(6, 10)
        if kind == "view":
            a = base[1:5, 2:8]
        elif kind == "strided":
            a = base[::2, ::3]
        elif kind == "negative":
            a = base[::-1, ::-2]
        elif kind == "fortran":
            a = np.asfortranarray(base)
        else:
            a = base.copy()
            a.setflags(write=False)
        out = np.zeros(a.shape)
        return a, out, base
    run("""
    def f(a, out, base):
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                out[i, j] = a[i, j] * 2 + len(a)
        return locals()
    """, "f", make)


def test_writes_through_a_view_reach_the_base():
    def make():
        base = np.zeros(10)
        return base[2:8], base
    run("""
    def f(v, base):
        for i in range(v.shape[0]):
            v[i] = i + 1
        return locals()
    """, "f", make)


def test_builtins_and_math():
    run("""
    import math
    def f(A, n):
        lo, hi = A[0], A[0]
        acc = 0.0
        for i in range(n):
            x = A[i]
            lo = min(lo, x)
            hi = max(hi, x, 0.0)
            acc += abs(x) + math.sqrt(abs(x)) + math.exp(-abs(x)) + math.sin(x) + math.floor(x)
            acc += int(x) + float(i) + bool(x) + round(x * 3)
        return locals()
    """, "f", lambda: (arr("float64", n=9, seed=11), 9))


@pytest.mark.parametrize("fn", ["erf", "erfc", "asinh", "acosh", "atanh", "cbrt", "exp2", "degrees", "radians"])
def test_more_math_functions_give_cpythons_values_and_errors(fn):
    # libm's own results (CPython calls the same functions), and CPython's errors where the
    # result is not finite: acosh below 1, atanh of 1, exp2 past the float range.
    def data():
        x = np.concatenate([np.linspace(-3.0, 3.0, 41), [0.0, -0.0, 1.5, 30.0, 1e300, 1100.0]])
        return x, len(x)
    src = f"""
    import math
    def f(A, n):
        out = [0.0] * n
        for i in range(n):
            out[i] = math.{fn}(A[i]) + math.{fn}(i)
        return out
    """
    run(src, "f", data, expect=None)
    recs = run(src, "f", lambda: (np.linspace(1.0, 2.0, 9) * 0.45, 9))
    assert all(r["native_calls"] for r in recs), recs


@pytest.mark.parametrize("m", [1000003, -7, 1, -1, 2 ** 61 - 1, 9223372036854775807, -(2 ** 62), 0])
def test_pow_with_a_modulus(m):
    # (a ** b) % m with m's sign, through 128-bit products; m == 0 (ValueError) and a
    # negative exponent (a modular inverse) go to CPython.
    run(f"""
    def f(n, b0):
        s = 0
        out = []
        for i in range(-n, n):
            s += pow(i, 3, {m}) + pow(i * 7919, b0 + i % 5, {m})
            s = s % 1000000007
            out.append(pow(True, i % 3, {m}))
        return s, out
    """, "f", lambda: (300, 65537), expect="bail" if m == 0 else "native")
    run(f"""
    def f(n):
        s = 0
        for i in range(n):
            s += pow(5, 3 - i, {m})
        return s
    """, "f", lambda: (8,), expect=None)


INT_EXTREMES = [0, 1, -1, 2, -6, 12, 2 ** 31, 3 ** 39, -(2 ** 62), 2 ** 63 - 1, -(2 ** 63)]


def test_gcd_lcm_isqrt_factorial_are_cpythons():
    # Exact over int64, including -2**63 (whose gcd with 0 is 2**63: CPython computes it),
    # lcm overflowing 64 bits, a negative isqrt or factorial (ValueError), factorial(21).
    run("""
    import math
    def f(xs, n):
        s = 0
        out = []
        for i in range(len(xs)):
            for j in range(len(xs)):
                a, b = xs[i], xs[j]
                out.append(math.gcd(a, b))
                out.append(math.gcd(a, b, i + 6))
                out.append(math.lcm(a % 100000, b % 1000, j - 3))
            s += math.gcd() + math.lcm() + math.gcd(xs[i]) + math.gcd(True, i)
            if xs[i] >= 0:
                s += math.isqrt(xs[i])
        for k in range(n):
            s += math.factorial(k % 21) + math.isqrt(k * k - 1 if k else 0) + math.isqrt(k * k)
        return s, out
    """, "f", lambda: (list(INT_EXTREMES), 50))
    for src, args in [("math.gcd(xs[i], 0)", (list(INT_EXTREMES), 0)),
                      ("math.lcm(xs[i], 3, 2 ** 40)", (list(INT_EXTREMES), 0)),
                      ("math.isqrt(xs[i])", (list(INT_EXTREMES), 0)),
                      ("math.factorial(i + n)", ([1, 2, 3, 4], 18))]:
        run(f"""
        import math
        def f(xs, n):
            out = []
            for i in range(len(xs)):
                out.append({src})
            return out
        """, "f", lambda: args, expect=None)


def test_comb_and_perm_are_cpythons():
    # Exact up to 2**63 - 1; beyond it (comb(70, 35), perm(25, 20)), and for a negative
    # argument (ValueError), CPython computes or raises at the same statement.
    run("""
    import math
    def f(n):
        s = 0
        rows = []
        for a in range(n):
            for b in range(a + 2):
                rows.append(math.comb(a, b) % 1000003 + math.perm(a % 23, b % 23))
            s += math.perm(a % 21) + math.comb(a + 30, 3)
        return s, rows
    """, "f", lambda: (40,))
    run("""
    import math
    def f(n):
        s = 0
        for a in range(n):
            s += math.comb(62 + a, 31) % 97
        return s
    """, "f", lambda: (9,), expect="bail")
    for src, arg in [("math.comb(n - i, 2)", 3), ("math.perm(n, i - 2)", 5), ("math.comb(i, n)", 4),
                     ("math.perm(25, i + 18)", 4)]:
        run(f"""
        import math
        def f(n):
            out = []
            for i in range(6):
                out.append({src})
            return out
        """, "f", lambda: (arg,), expect=None)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint32", "int8", "uint8"])
def test_gcd_and_isqrt_of_numpy_integers(dtype):
    # Taken by __index__ as CPython does; the results are Python ints.
    run("""
    import math
    def f(A):
        s = 0
        out = []
        for i in range(len(A)):
            for j in range(len(A)):
                s += math.gcd(A[i], A[j]) + math.lcm(A[i], A[j] % 97 + 1)
            if A[i] >= 0:
                out.append(math.isqrt(A[i]))
        return s, out
    """, "f", lambda: (np.array([0, 1, -1, 6, 100, 127, -128, 2 ** 31 - 1], dtype=np.int64).astype(dtype),))


def test_isqrt_is_exact_near_squares():
    run("""
    import math
    def f(n):
        bad = 0
        for k in range(1, n):
            for d in (-1, 0, 1):
                x = k * k * 1000003 + d
                r = math.isqrt(x)
                bad += (r * r > x) + ((r + 1) * (r + 1) <= x)
                bad += r % 7
        return bad
    """, "f", lambda: (20000,))


def test_pow_of_two_arguments_is_the_power_operator():
    run("""
    import numpy as np
    def f(A, n):
        t = 0.0
        k = 0
        for i in range(n):
            t += pow(A[i] - 0.5, 2) + pow(abs(A[i]), 0.5) + pow(np.float32(A[i]), 3)
            k += pow(i, 2) + pow(-2, i % 5)
        return t, k
    """, "f", lambda: (np.linspace(-1.0, 1.0, 50), 50))
    recs = run("""
    def f(A, n):
        t = 0
        for i in range(n):
            t += pow(A[i], 2, 7)
        return t
    """, "f", lambda: (np.arange(5.0), 5), expect=None)
    assert "Python ints only" in recs[0]["reason"], recs


def test_numpy_functions():
    run("""
    import numpy as np
    def f(A, B, n):
        for i in range(n):
            B[i] = np.sqrt(abs(A[i])) + np.maximum(A[i], 0.5) + np.floor(A[i]) + np.abs(A[i])
        return locals()
    """, "f", lambda: (arr("float64", n=9, seed=12), np.zeros(9), 9))


def test_shape_len_ndim_size():
    run("""
    def f(A):
        s = 0
        for i in range(A.shape[0]):
            for j in range(len(A[i])):
                s += A.ndim + A.size + j
        return locals()
    """, "f", lambda: (np.zeros((3, 4)),))


def test_int_division_and_modulo_signs():
    run("""
    def f(A, B, n):
        q = 0
        for i in range(n):
            for j in range(n):
                if B[j] != 0:
                    q += A[i] // B[j] + A[i] % B[j]
        return locals()
    """, "f", lambda: ([7, -7, 3, -3, 0, 13], [2, -2, 5, -5, 0, 1], 6), expect=None)
    run("""
    def f(A, B, n):
        q = 0.0
        for i in range(n):
            for j in range(n):
                if B[j] != 0:
                    q += A[i] // B[j] + A[i] % B[j] + A[i] / B[j]
        return locals()
    """, "f", lambda: (np.array([7, -7, 3, -3, 0, 13]), np.array([2, -2, 5, -5, 0, 1]), 6))
    run("""
    def f(A, B, n):
        q = 0.0
        for i in range(n):
            for j in range(n):
                if B[j] != 0:
                    q += A[i] // B[j] + A[i] % B[j]
        return locals()
    """, "f", lambda: (np.array([7.5, -7.5, 3.0, -0.0, 0.0, 13.25]), np.array([2.0, -2.0, 0.5, -5.0, 0.0, 1.5]), 6))


def test_float32_arithmetic_stays_float32():
    run("""
    def f(A, n):
        s = A[0] * 0
        for i in range(n):
            s = s + A[i] * 1.1 + 3
        return locals()
    """, "f", lambda: (arr("float32", n=8, seed=13), 8))


def test_mixed_int_types_promote_like_numpy():
    run("""
    def f(A, B, n):
        r = 0
        for i in range(n):
            r = A[i] + B[i] + r
        return locals()
    """, "f", lambda: (arr("int8", seed=14), arr("uint8", seed=15), 8))


def test_stores_cast_like_numpy():
    run("""
    def f(I, F, B, n):
        for i in range(n):
            I[i] = i * 2.7 - 5
            F[i] = i // 3
            B[i] = i % 3
        return locals()
    """, "f", lambda: (np.zeros(8, np.int16), np.zeros(8, np.float32), np.zeros(8, bool), 8))


def test_globals_and_module_constants_in_functions():
    run("""
    ALPHA = 0.5
    import numpy as np
    def f(A, n):
        for i in range(n):
            A[i] = A[i] * ALPHA + np.pi
        return locals()
    """, "f", lambda: (np.ones(5), 5))


def test_module_level_nest():
    run_module("""
    total = 0.0
    for i in range(n):
        for j in range(n):
            total += u[i, j] * (i - j)
    last = i
    """, lambda: {"n": 6, "u": np.arange(36.0).reshape(6, 6)})


def test_module_level_time_loop_with_swap():
    run_module("""
    for t in range(steps):
        for i in range(1, n - 1):
            new[i] = 0.5 * (u[i - 1] + u[i + 1])
        u, new = new, u
    """, lambda: {"n": 9, "steps": 4, "u": np.arange(9.0) ** 2, "new": np.zeros(9)})


def test_closure_cells_read_and_written():
    run("""
    def outer(A, n):
        scale = 3
        total = 0
        def helper():
            return scale, total
        for i in range(n):
            total += A[i] * scale
        return helper()
    """, "outer", lambda: (np.arange(5), 5))


def test_many_calls_reuse_the_specialization():
    recs = run("""
    def f(A, n):
        s = 0.0
        for i in range(n):
            s += A[i]
        return s
    """, "f", lambda: (np.arange(4.0), 4), calls=30)
    assert sum(r["specializations"] for r in recs) == 1


def test_numpy_transcendentals_are_numpys_own():
    run("""
    import numpy as np
    def f(A, B, n):
        for i in range(n):
            B[i] = np.exp(A[i]) + np.sin(A[i]) * np.log(abs(A[i]) + 1) + np.arctan2(A[i], 2.0) + np.tanh(A[i])
        return locals()
    """, "f", lambda: (arr("float64", n=50, seed=21), np.zeros(50), 50))
    run("""
    import numpy as np
    def f(A, B, n):
        for i in range(n):
            B[i] = np.exp(A[i]) + np.cos(A[i])
        return locals()
    """, "f", lambda: (arr("float32", n=50, seed=22), np.zeros(50, np.float32), 50))


# Zeros, halves and tiny values first; the values NumPy warns about (or that make kernels
# hand a statement to CPython) last, so that the rows before them run in the kernel.
QUIET = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -0.5, -1e-310, 7.0, -3.25]
LOUD = [np.nan, np.inf, -np.inf, 1e200]


def specials(dtype, n=40, seed=0):
    a = arr("float64", n=n, seed=seed) * 4
    a[:len(QUIET)] = QUIET
    a[n - len(LOUD):] = LOUD
    with np.errstate(over="ignore"):
        return a.astype(dtype)


@pytest.mark.parametrize("warn_filter", ["always", "default"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_more_numpy_functions_on_floats(dtype, warn_filter):
    """sign, square, trunc, rint and copysign are computed in the kernel; the others call
    NumPy's loop, self-tested on first use. Warnings (square's overflow, arctanh's invalid
    values) as CPython shows them."""
    recs = run("""
    import numpy as np
    def f(A, Y, B, n):
        for i in range(n):
            x = A[i]
            y = Y[i]
            B[i, 0] = np.sign(x)
            B[i, 1] = np.square(x)
            B[i, 2] = np.trunc(x)
            B[i, 3] = np.rint(x)
            B[i, 4] = np.cbrt(x)
            B[i, 5] = np.exp2(x)
            B[i, 6] = np.arcsinh(x)
            B[i, 7] = np.arctanh(x / 16)
            B[i, 8] = np.arccosh(abs(x) + 1)
            B[i, 9] = np.deg2rad(x) + np.rad2deg(x)
            B[i, 10] = np.copysign(1.5, x)
            B[i, 11] = np.fmin(x, y)
            B[i, 12] = np.fmax(y, x)
            B[i, 13] = np.radians(y) - np.degrees(y)
        return locals()
    """, "f", lambda: (specials(dtype, seed=3), np.roll(specials(dtype, seed=4), -3), np.zeros((40, 14), dtype), 40),
               warn_filter=warn_filter)
    assert any(r["status"] == "cpu" for r in recs), recs
    from stagepy import _types
    assert f"numpy.cbrt[{dtype}]" in _types._verified


@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8"])
def test_more_numpy_functions_on_integers(dtype):
    """NumPy's integer loops: sign in the array's type, square wrapping around, and
    floor/ceil/trunc returning their operand (NumPy 2)."""
    info = np.iinfo(dtype)
    def make():
        a = np.random.default_rng(5).integers(info.min, info.max, 30, dtype=dtype, endpoint=True)
        a[:3] = [info.min, info.max, 0]
        return a, np.zeros((30, 3), "int64"), 30
    run("""
    import numpy as np
    def f(A, B, n):
        for i in range(n):
            B[i, 0] = np.sign(A[i])
            B[i, 1] = np.square(A[i])
            B[i, 2] = np.trunc(A[i]) - np.floor(A[i]) + np.ceil(A[i])
        return locals()
    """, "f", make, expect="native" if np.__version__ >= "2" else None)


def test_aliased_arguments_give_cpythons_result():
    def make():
        a = np.arange(10.0)
        return a[1:], a[:-1], a
    run("""
    def f(dst, src, base):
        for i in range(dst.shape[0]):
            dst[i] = src[i] * 2 + 1
        return locals()
    """, "f", make)


def test_loops_with_a_constant_nonempty_range_leave_only_their_bodys_types():
    # After `for k in range(3)` (or over a constant tuple) the body has run: s is an
    # np.float64, not also the int it started as; loops whose first iteration changes a
    # type (peeled) run without the check that the range is not empty.
    recs = run("""
def f(A, n):
    for i in range(n):
        s = 0
        for k in range(3):
            s = s + A[i] * 0.5
        t = 1
        for d in (2, 3):
            t = t * d + A[i]
        x = 0
        for k in range(2, 5, 2):
            x = k
        for k in range(5, 4):   # empty: s keeps its type
            s = 7
        A[i] = s / 3.0 + t + x
    return locals()
""", "f", lambda: (np.arange(10.0), 10))
    assert all(r["reason"] == "" for r in recs), recs


DIVMOD = """
def f(a, b, n):
    out = []
    s = 0
    for i in range(n):
        q, r = divmod(a + i, b)
        out.append((q, r))
        s += q * 3 + r
    return out, s
"""


@pytest.mark.parametrize("args", [
    (17, 5, 40), (-17, 5, 40), (17, -5, 40), (10 ** 15, 7, 30),
    (7.5, 2.0, 20), (-7.5, 2.25, 20), (1.0, -0.5, 10), (5, 0, 3), (5.0, 0.0, 3), (2.0, float("inf"), 3),
    (float("nan"), 2.0, 3), (True, 3, 5),
], ids=str)
def test_divmod_of_python_numbers_is_cpythons(args):
    recs = difftest.run(DIVMOD, "f", lambda: args, expect=None)
    assert sum(r["native_calls"] for r in recs) > 0, recs


def test_divmod_of_numpy_scalars_stays_in_cpython():
    recs = difftest.run(DIVMOD, "f", lambda: (np.float64(7.5), np.float64(2.0), 5), expect="interpreted")
    difftest.assert_reason(recs, "calls divmod() on a np.float64")


def test_a_function_of_ones_own_named_divmod_is_not_the_builtin():
    difftest.run("""
    def divmod(a, b):
        return a, b
    def f(n):
        s = 0
        for i in range(n):
            q, r = divmod(i, 3)
            s += q - r
        return s
    """, "f", lambda: (20,), expect=None)


IN_TUPLE = """
def f(a, out):
    c = 0
    for i in range(len(a)):
        if a[i] in (1, 2.5, 3):
            c += 1
        out[i] = a[i] not in [0, -1]
        c += (a[i] * 2 in (4, 5)) + (i in (7,))
    return c, out
"""


@pytest.mark.parametrize("make", [
    lambda: (np.array([0, 1, 2, 3, -1, 5, 2, 2]), np.zeros(8, dtype=bool)),
    lambda: (np.array([0.0, 2.5, 1.0, float("nan"), -1.0, 3.0, 2.0, 2.5]), np.zeros(8, dtype=bool)),
    lambda: ([0, 1, 2, 3, -1, 5, 2, 0], np.zeros(8, dtype=bool)),
], ids=["int64", "float64", "list"])
def test_in_a_tuple_of_numbers_is_cpythons(make):
    recs = run(IN_TUPLE, "f", make)
    assert all(r["native_calls"] == r["calls"] for r in recs), recs


def test_in_a_tuple_holding_a_nan_stays_in_cpython():
    # (CPython folds 1e999 - 1e999 into a NaN constant of the tuple. `in` tries identity
    # first: the item that is that very NaN object is in the tuple, an equal NaN is not.)
    recs = run("""
    def f(a):
        c = 0
        t = (1.0, 1e999 - 1e999)
        for i in range(len(a)):
            c += a[i] in (1.0, 1e999 - 1e999)
        return c, t[1] in t
    """, "f", lambda: (np.array([1.0, np.nan]),), expect="interpreted")
    assert_reason = [r["reason"] for r in recs]
    assert any("a tuple holding a NaN" in r for r in assert_reason), assert_reason


def test_in_an_empty_tuple_stays_in_cpython():
    recs = run("""
    def f(a):
        c = 0
        for i in range(len(a)):
            c += a[i] in ()
        return c
    """, "f", lambda: (np.array([1, 2, 3]),), expect="interpreted")
    assert recs


IN_SET = """
def f(a, z, out):
    c = 0
    for i in range(len(a)):
        if a[i] in {1, 2.5, 3, True}:
            c += 1
        out[i] = a[i] not in {0, -1, 1e300}
        c += (a[i] * 2 in {4, 5}) + (i in {7, 8.0}) + (z[i] in {1j, 2, 0.5 + 0.5j})
    return c, out
"""


@pytest.mark.parametrize("make", [
    lambda: (np.array([0, 1, 2, 3, -1, 5, 2, 2]), [1j, 2 + 0j, 0j, 0.5 + 0.5j] * 2, np.zeros(8, dtype=bool)),
    lambda: (np.array([0.0, 2.5, 1.0, float("nan"), -1.0, 3.0, 2.0, -0.0]), [complex("nan+1j")] * 8,
             np.zeros(8, dtype=bool)),
    lambda: ([0, 1, 2, 3, -1, 5, 2, 0], [1j] * 8, np.zeros(8, dtype=bool)),
], ids=["int64", "float64", "list"])
def test_in_a_set_of_numbers_is_cpythons(make):
    # A frozenset constant of numbers: `in` is equality with one of them (a NaN is in no
    # such set: none holds a NaN).
    recs = run(IN_SET, "f", make)
    assert all(r["native_calls"] == r["calls"] for r in recs), recs


def test_in_a_set_holding_a_nan_or_a_string_stays_in_cpython():
    for container, reason in (("{1.0, 1e999 - 1e999}", "a set holding a NaN"), ("{1, 'a'}", "")):
        recs = run(f"""
        def f(a):
            c = 0
            for i in range(len(a)):
                c += a[i] in {container}
            return c
        """, "f", lambda: (np.array([1.0, np.nan]),), expect="interpreted")
        assert any(reason in r["reason"] for r in recs), [r["reason"] for r in recs]
