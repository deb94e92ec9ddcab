"""Calls to plain Python helper functions are inlined: `def sq(x): return x * x` called in a
nest runs natively, guarded on the identity of the function (and of its code), with CPython's
values and exceptions; functions stagepy cannot inline keep the nest in CPython, with a reason."""
import textwrap

import numpy as np
import pytest

import difftest
import stagepy
from difftest import run
from helpers import compile_module

HELPERS = """
import math
K = 3

def sq(x):
    return x * x

def clamp(x, lo, hi):
    if x < lo:
        return lo
    return hi if x > hi else x

def dist(x, y):
    t = sq(x) + sq(y)
    return math.sqrt(t) + K * math.pi

def sign(v):
    if v > 0:
        return 1
    elif v < 0:
        return -1
    return 0
"""


def test_helpers_inlined_with_globals_attributes_and_nested_calls():
    recs = run(HELPERS + """
def f(A, B, n):
    s = 0.0
    c = 0
    for i in range(n):
        B[i] = clamp(sq(A[i]) - 3.0, -1.0, 5.0) + dist(A[i], 1.0)
        s += dist(A[i], B[i])
        c += sign(A[i]) * K
    return locals()
""", "f", lambda: (np.linspace(-3, 3, 50).tolist(), [0.0] * 50, 50))
    assert all(r["reason"] == "" for r in recs if r["native_calls"]), recs


def test_helper_on_numpy_arrays_in_a_parallel_loop():
    run(HELPERS + """
def f(A, B, n):
    for i in range(n):
        B[i] = sq(float(A[i])) + 1.0
    return B
""", "f", lambda: (np.arange(2000.0), np.zeros(2000), 2000))


def test_rebinding_the_name_respecializes():
    run("""
def double(x):
    return 2 * x

def triple(x):
    return 3 * x

def f(A, n):
    global double
    out = []
    for rep in range(3):
        s = 0
        for i in range(n):
            s += double(A[i])
        out.append(s)
        double, triple = triple, double
    return out
""", "f", lambda: (list(range(20)), 20))


def test_replacing_the_code_of_the_function_respecializes():
    run("""
def g(x):
    return x + 1

def h(x):
    return x - 1

def f(n):
    res = []
    for rep in range(2):
        s = 0
        for i in range(n):
            s += g(i)
        res.append(s)
        g.__code__ = h.__code__
    g.__code__ = (lambda x: x + 1).__code__
    return res
""", "f", lambda: (30,))


def test_errors_inside_helpers_and_in_unused_arguments():
    src = """
def inv(x):
    return 1.0 / x

def first(a, b):
    return a

def unused_local(x, d):
    t = x // d
    return x

def f(A, n, d):
    s = 0.0
    for i in range(n):
        s += inv(A[i])
        s += first(A[i], A[i + 1])
        s += unused_local(i, d)
    return s
"""
    run(src, "f", lambda: ([3.0, 2.0, 0.0, 1.0, 5.0], 3, 1), expect="bail")   # ZeroDivisionError in inv
    run(src, "f", lambda: ([3.0, 2.0, 4.0, 1.0, 5.0], 5, 1), expect="bail")   # IndexError in an unused argument
    run(src, "f", lambda: ([3.0, 2.0, 4.0, 1.0, 5.0], 3, 0), expect="bail")   # ZeroDivisionError in an unused local


def test_python_ints_that_outgrow_64_bits_inside_a_helper():
    run("""
def cube(x):
    return x * x * x

def f(n):
    s = 0
    for i in range(n):
        s += cube(i * 1000003)
    return s
""", "f", lambda: (3000,), expect="bail")


def reason_of(recs):
    return " ".join(r["reason"] for r in recs)


def test_helpers_stagepy_cannot_inline_stay_interpreted_with_a_reason():
    cases = {
        "loops": ("def h(x):\n    r = 0\n    for k in range(x):\n        r += len([k])\n    return r\n",
                  "builds a list"),
        "a default that is a list": ("def h(x, y=[2]):\n    return x * 2\n", "is not a number stagepy handles"),
        "too few arguments": ("def h(x, y, z=2):\n    return x * y\n", "with 1 arguments (it takes 2 to 3)"),
        "varargs": ("def h(*xs):\n    return xs[0]\n", "*args"),
        "slice": ("def h(x):\n    return x[0:1][0]\n", "takes a slice"),
        "recursion": ("def h(x):\n    return x if x < 2 else h(x - 1) + h(x - 2)\n", "not inlined"),
    }
    for name, (helper, reason) in cases.items():
        recs = run(helper + """
def f(A, n):
    s = 0
    for i in range(n):
        s += h(A[i])
    return s
""", "f", lambda: ([1, 2, 3, 4], 4) if name not in ("slice",) else ([[1], [2], [3], [4]], 4), expect=None)
        mine = [r for r in recs if r["function"] == "f"]  # (h's own loop may run natively)
        assert mine and not any(r["native_calls"] for r in mine), (name, recs)
        assert reason in reason_of(mine), (name, recs)


def test_defaults_of_a_helper_are_constants_of_the_kernel_keyed_by_their_values():
    # pend(th, om) with g, L and damp left to their defaults; then the defaults change on
    # the same function object (a new kernel: the values are part of the key), and a
    # default None tested with `is None`.
    recs = run("""
import math

def pend(theta, omega, g=9.81, L=1.0, damp=0.1):
    return omega, -(g / L) * math.sin(theta) - damp * omega

def scale(x, k=None, n=3):
    if k is None:
        return x * n
    return x * k

def f(steps):
    out = []
    for rep in range(2):
        th, om = 1.0, 0.0
        dt = 0.001
        s = 0
        for step in range(steps):
            a1, b1 = pend(th, om)
            a2, b2 = pend(th + 0.5 * dt * a1, om + 0.5 * dt * b1, 9.0)
            th += dt * (a1 + a2) / 2
            om += dt * (b1 + b2) / 2
            s += scale(step) + scale(step, 2)
        out.append((th, om, s))
        pend.__defaults__ = (1.62, 2.0, 0.0)
    pend.__defaults__ = (9.81, 1.0, 0.1)
    return out
""", "f", lambda: (500,))
    mine = [r for r in recs if r["function"] == "f"]
    assert sum(r["native_calls"] for r in mine) >= 2 and all(r["reason"] == "" for r in mine if r["native_calls"]), recs


UNPACKING = [
    ("a helper's tuple into names", """
def three(x):
    return x, x + 1, 2.5 * x

def f(A, n):
    s = 0.0
    for i in range(n):
        a, b, c = three(A[i])
        s += a * b - c
    return locals()
""", lambda: ([1.0, 2.0, 3.0, 4.0], 4), "native"),
    ("a helper unpacking another's tuple", """
def lorenz(x, y, z):
    return 10.0 * (y - x), x * (28.0 - z) - y, x * y - 2.5 * z

def euler(x, y, z, h):
    dx, dy, dz = lorenz(x, y, z)
    return x + h * dx, y + h * dy, z + h * dz

def f(n):
    x, y, z = 1.0, 1.0, 1.0
    for step in range(n):
        x, y, z = euler(x, y, z, 0.001)
    return locals()
""", lambda: (2000,), "native"),
    ("a helper's tuple of 3 into 2 names: ValueError", """
def three(x):
    return x, x + 1, x + 2

def f(A, n):
    for i in range(n):
        A[i] = i
        a, b = three(i)
        A[i] = a + b
    return locals()
""", lambda: ([0] * 5, 5), None),
    ("a tuple of 3 into 2 names: ValueError", """
def f(A, t):
    for i in range(len(A)):
        A[i] = i
        a, b = t
        A[i] = a + b
    return locals()
""", lambda: (np.zeros(5), (1, 2, 3)), None),
    ("rows of an array into names", """
def f(P, out):
    for i in range(P.shape[0]):
        x, y = P[i]
        out[i] = x * y
    return locals()
""", lambda: (np.arange(12.0).reshape(6, 2), np.zeros(6)), "native"),
    ("rows of 3 into 2 names: ValueError after the earlier writes", """
def f(P, out):
    for i in range(P.shape[0]):
        out[i] = -1.0
        x, y = P[i]
        out[i] = x * y
    return locals()
""", lambda: (np.arange(12.0).reshape(4, 3), np.zeros(4)), "bail"),
    ("rows of a complex array of the wrong length (a fuzzer find)", """
def f(M, n):
    s = t = 0j
    for v in range(n):
        s, t = M[n - 1 - v]
    return locals()
""", lambda: (np.arange(9.0).reshape(3, 3) * (1 + 2j), 2), None),
    ("rows of a list of lists of the wrong length", """
def f(L, out):
    for i in range(len(L)):
        out[i] = -1
        a, b = L[i]
        out[i] = a - b
    return locals()
""", lambda: ([[1, 2, 9], [3, 4, 9]], [0, 0]), None),
]


@pytest.mark.parametrize("what, src, make_args, expect", UNPACKING, ids=[c[0] for c in UNPACKING])
def test_unpacking_into_names_checks_the_number_of_items(what, src, make_args, expect):
    # CPython raises ValueError where the value has another number of items than there are
    # names (before any of them is assigned): so must the kernel, or the nest stays in CPython.
    recs = run(src, "f", make_args, expect=expect)
    if expect == "native":
        assert all(r["reason"] == "" for r in recs if r["function"] == "f"), recs


def test_a_helper_returning_a_tuple_of_strings_stays_interpreted():
    # A tuple of strings is a constant kernels have no value for (nor is it taken for the
    # keyword names of a call).
    recs = run('''
def h(x):
    return ("a", "b")
def f(A, n):
    t = None
    for i in range(n):
        t = h(A[i])
    return t
''', "f", lambda: ([1, 2, 3], 3), expect="interpreted")
    assert "constant" in reason_of([r for r in recs if r["function"] == "f"]), recs


def test_closures_and_numpy_scalars_stay_interpreted():
    recs = run("""
def make(k):
    def h(x):
        return x * k
    return h

def f(A, n):
    h = make(3)
    s = 0
    for i in range(n):
        s += h(A[i])
    return s
""", "f", lambda: ([1, 2, 3], 3), expect="interpreted")
    assert "closure" in reason_of(recs), recs


@pytest.mark.parametrize("warn_filter", ["always", "default"])
def test_helpers_on_numpy_scalars_warn_from_the_helpers_line(warn_filter):
    # NumPy's warnings inside an inlined helper belong to the helper's line: with "always"
    # the statement that called it goes back to CPython, which calls the helper and warns
    # there; with "default" the kernel emits them afterwards, from the helper's line.
    src = """
def sq(x):
    return x * x

def scale(x, y):
    t = x / y
    return t + 1 if t > 0 else -t

def f(A, B, I, n):
    s = 0.0
    c = 0
    for i in range(n):
        s += sq(A[i]) + scale(A[i], B[i])
        c += sq(I[i])
        B[i] = sq(B[i])
    return locals()
"""
    def big():
        A = np.linspace(-3.0, 3.0, 40)
        A[17] = 1e200  # sq overflows: a warning on sq's line
        B = np.linspace(1.0, 2.0, 40)
        B[25] = 0.0    # scale divides by zero
        I = np.arange(40, dtype=np.int16) * 300  # sq wraps around
        return A, B, I, 40
    recs = run(src, "f", big, warn_filter=warn_filter, expect=None)
    assert recs[0]["status"] == "cpu" and recs[0]["native_calls"] > 0, recs
    recs = run(src, "f", lambda: (np.linspace(-3.0, 3.0, 40), np.linspace(1.0, 2.0, 40),
                                  np.arange(40, dtype=np.int32), 40), warn_filter=warn_filter)
    assert recs[0]["bailouts"] == 0, recs


RK4 = """
SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0

def lorenz(x, y, z):
    return SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z

def rk4_step(x, y, z, h):
    k1x, k1y, k1z = lorenz(x, y, z)
    k2x, k2y, k2z = lorenz(x + 0.5 * h * k1x, y + 0.5 * h * k1y, z + 0.5 * h * k1z)
    k3x, k3y, k3z = lorenz(x + 0.5 * h * k2x, y + 0.5 * h * k2y, z + 0.5 * h * k2z)
    k4x, k4y, k4z = lorenz(x + h * k3x, y + h * k3y, z + h * k3z)
    x += h / 6.0 * (k1x + 2 * k2x + 2 * k3x + k4x)
    y += h / 6.0 * (k1y + 2 * k2y + 2 * k3y + k4y)
    z += h / 6.0 * (k1z + 2 * k2z + 2 * k3z + k4z)
    return x, y, z
"""


def test_a_helper_whose_locals_feed_nested_helpers_is_computed_once_per_use():
    # Substituting each local at each use would make rk4_step's body grow 3-fold per stage
    # (it was refused as "too large an expression"); its locals are computed once instead.
    recs = run(RK4 + """
def f(n, h):
    x, y, z = 1.0, 1.0, 1.0
    total = 0.0
    for step in range(n):
        x, y, z = rk4_step(x, y, z, h)
        total += z
    return locals()
""", "f", lambda: (2000, 0.001))
    assert all(r["reason"] == "" for r in recs if r["native_calls"]), recs


def test_rk4_per_particle_on_threads():
    # The same step for many independent particles: the particle loop is parallel.
    recs = run(RK4 + """
def f(X, Y, Z, n, steps, h):
    for p in range(n):
        x, y, z = X[p], Y[p], Z[p]
        for s in range(steps):
            x, y, z = rk4_step(x, y, z, h)
        X[p], Y[p], Z[p] = x, y, z
    return X, Y, Z
""", "f", lambda: tuple((np.linspace(0.5, 1.5, 64) + k).tolist() for k in range(3)) + (64, 50, 0.001))
    assert any(l["parallel"] and l["variable"] == "p" for r in recs for l in r.get("loops", [])), recs


def test_unpacking_what_a_helper_returns_that_is_memory_keeps_the_loop_sequential():
    # g returns V, a view of A: `a, b = g()` reads A[3] and A[4], which the loop writes.
    recs = run("""
import numpy as np
A = np.zeros(5000)
V = A[3:5]

def g():
    return V

def f(n):
    for i in range(n):
        a, b = g()
        A[i] = a + 0.5 * b + i
    return A.copy()
""", "f", lambda: (5000,))
    loops = [l for r in recs for l in r.get("loops", []) if l["variable"] == "i"]
    assert loops and not any(l["parallel_runs"] for l in loops), recs


HOISTED = """
def inv(x):
    return 1.0 / x

def pair(x):
    return 1.0 / x, x + 1.0

def poly(x):
    t = x * x - 1.0
    return t * t + t / (x - 3.0)

def ignore(a, b):
    return a
"""


@pytest.mark.parametrize("values, expect", [
    ([1.0, 2.0, 4.0, 5.0, 6.0], "native"),
    ([1.0, 2.0, 3.0, 5.0, 6.0], "bail"),   # ZeroDivisionError in poly's local, at i = 2
    ([1.0, 0.0, 4.0, 5.0, 6.0], "bail"),   # ZeroDivisionError in pair's first item, which [1] drops
])
def test_values_computed_before_a_statement_keep_its_errors_and_earlier_writes(values, expect):
    run(HOISTED + """
def f(A, B, n):
    s = 0.0
    for i in range(n):
        B[i] = poly(A[i]) + pair(A[i])[1]
        s += B[i]
    return locals()
""", "f", lambda: (list(values), [0.0] * 5, 5), expect=expect)


def test_a_helper_in_a_branch_of_a_conditional_expression_runs_only_where_taken():
    # inv(0.0) is never evaluated: the call is inlined in place, not computed before.
    run(HOISTED + """
def f(A, n):
    s = 0.0
    for i in range(n):
        s += inv(A[i]) if A[i] != 0.0 else -1.0
        if poly(A[i]) > 2.0 and inv(A[i] - 1.0) > 0.0:
            s += 1.0
    return s
""", "f", lambda: ([0.0, 2.0, 0.5, 4.0, 0.0, -2.0], 6))


def test_an_argument_the_helper_never_reads_is_still_evaluated():
    # `y` is unbound in the first iterations: CPython raises UnboundLocalError there.
    run(HOISTED + """
def f(n):
    s = 0.0
    for i in range(n):
        if i > 2:
            y = i * 0.5
        s += ignore(1.0, y)
    return s
""", "f", lambda: (6,), expect=None)


# Module code: the loop's variables are the module's globals, and a function it calls reads
# them as globals. One variable for both: the function sees what the loop assigned.
MODULE_GLOBALS_READ_BY_HELPERS = [
    ("a running total", """
    total = 0
    def bump(i):
        return total % 7 + i
    for i in range(10):
        total += bump(i)
    """),
    ("a best value compared in a helper", """
    best = 0
    def better(v):
        return v > best
    for v in [3, 1, 4, 1, 5, 9, 2, 6]:
        if better(v):
            best = v
    """),
    ("a while loop advanced by a helper", """
    cnt = 0
    def nxt():
        return cnt + 1
    while cnt < 10:
        cnt = nxt()
    """),
    ("a reassigned list a helper indexes", """
    prev = [0] * 5
    def cost(j):
        return prev[j] + j
    for step in range(4):
        cur = [0] * 5
        for j in range(5):
            cur[j] = cost(j) + 1
        prev = cur
    """),
    ("the loop's own variable", """
    k = 0
    def f():
        return k
    s = 0
    for k in range(1000):
        s += f()
    """),
    ("arrays swapped each step, read by a stencil helper", """
    import numpy as np
    n = 50
    u = np.zeros(n)
    u[n // 2] = 1.0
    un = np.zeros(n)
    def avg(i):
        return 0.5 * (u[i - 1] + u[i + 1])
    for step in range(20):
        for i in range(1, n - 1):
            un[i] = avg(i)
        u, un = un, u
    """),
    ("a looping helper reading the running value", """
    x = 1.5
    def walk(n):
        s = 0.0
        for k in range(n):
            s += x * k
        return s
    acc = 0.0
    for i in range(20):
        acc += walk(i)
        x = x * 0.5 + i
    """),
]


@pytest.mark.parametrize("src", [c[1] for c in MODULE_GLOBALS_READ_BY_HELPERS],
                         ids=[c[0] for c in MODULE_GLOBALS_READ_BY_HELPERS])
def test_module_loops_and_their_helpers_share_the_globals(src):
    difftest.run_module(src, dict)


def test_module_code_with_separate_locals_keeps_the_names_apart():
    # exec(code, g, l): the loop's `total` is a local of l; the helper reads g's. The same
    # code object run first as a module (one variable) then so must not keep sharing them,
    # nor, run apart first, keep them apart when run as a module.
    src = textwrap.dedent("""
    total = 0
    for i in range(10):
        total += bump(i)
    """)
    helper = "def bump(i):\n    return total % 7 + i\n"

    def as_module():
        g = {}
        exec(helper, g)
        exec(code, g)
        return g["total"]

    def apart():
        g2 = {"total": 100}
        exec(helper, g2)
        loc = {}
        exec(code, g2, loc)
        return loc["total"], g2["total"]

    def both(module_first):
        return (as_module(), *apart()) if module_first else (*apart(), as_module())

    for module_first in (True, False):
        code = compile_module(src)
        expected = both(module_first)
        with stagepy.enable():
            code = compile_module(src)
            got = [both(module_first) for _ in range(3)]
        assert sorted(expected) == sorted((68, 65, 100)) and got == [expected] * 3
        recs = [r for r in stagepy.report() if r["file"] == code.co_filename]
        difftest.assert_reason(recs, "a function it calls reads a global of the same name")
