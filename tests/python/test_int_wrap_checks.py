"""NumPy integers that wrap, in loops whose fast pass may vectorize (codegen: wrapping_op).

Under NumPy's default warnings an innermost loop runs in chunks whose fast pass only tests
"may a NumPy operation have warned". For fixed-width integers that test used LLVM's
*.with.overflow intrinsics, which kept the loop scalar; where the loop may vectorize (no
variable carried between iterations, no 64-bit product) it is now plain arithmetic: sign
tests for + and -, a product in twice the width (signed) or compared in floating point
(unsigned). A test that misses one wrap would lose NumPy's "overflow encountered" warning
(the values wrap the same either way), so each case below puts one pair of operands at
the edges of its dtype's range into an array of harmless values, at the start, middle or
end of a chunk, and compares the warnings and values with CPython's, call by call."""
import itertools
import warnings

import numpy as np
import pytest

import difftest
import stagepy

ELEMENTWISE = """
def f(x, y, out):
    for i in range(x.shape[0]):
        out[i] = x[i] {op} y[i]
"""

# In place, the stores waiting for their iteration's flag (holds_stores), three operations
# in one statement.
IN_PLACE = """
def f(x, y, out):
    for i in range(x.shape[0]):
        out[i] = out[i] + x[i] {op} y[i] - x[i]
"""

DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def edges(dt):
    info = np.iinfo(dt)
    lo, hi = int(info.min), int(info.max)
    bits = info.bits
    root = 1 << (bits // 2 - (1 if info.min < 0 else 0))  # root * root just wraps
    vals = {lo, lo + 1, -1, 0, 1, 2, 3, hi - 1, hi, root, root - 1, root + 1, hi // 2, hi // 2 + 1,
            -root, -(root - 1), lo // 2, lo // 2 - 1}
    return sorted(v for v in vals if lo <= v <= hi)


def pairs(dt):
    e = edges(dt)
    return list(itertools.product(e, e))


def outcome(fn, args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        fn(*args)
    return [(type(w.message).__name__, str(w.message), w.lineno) for w in caught], args[2].copy()


def compile_both(src):
    src = src.strip() + "\n"
    ns_py = {}
    exec(difftest.compile_module(src), ns_py)
    with stagepy.enable():
        ns_sp = {}
        exec(difftest.compile_module(src), ns_sp)
    return ns_py["f"], ns_sp["f"]


def native_calls(fn):
    return sum(r["native_calls"] for r in stagepy.report() if r["file"] == fn.__code__.co_filename)


def check(src, dt, n, positions, ps):
    # A fresh function every 50 calls: from its 64th call a nest this small may have its
    # calls measured against CPython's on alternate calls (dispatch.cpp's cost probe).
    for k in range(0, len(ps), 50):
        check_calls(src, dt, n, positions, ps[k:k + 50])


def check_calls(src, dt, n, positions, ps):
    f_py, f_sp = compile_both(src)
    for (a, b), pos in zip(ps, itertools.cycle(positions)):
        def make():
            x = np.full(n, 1, dtype=dt)
            y = np.full(n, 1, dtype=dt)
            x[pos], y[pos] = a, b
            out = np.full(n, 5, dtype=dt)
            return x, y, out
        want = outcome(f_py, make())
        with stagepy.enable():
            got = outcome(f_sp, make())
        assert got[0] == want[0], f"{dt} {a}, {b} at {pos}: warnings {got[0]} != CPython's {want[0]}"
        assert np.array_equal(got[1], want[1]), f"{dt} {a}, {b} at {pos}: values differ"
    assert native_calls(f_sp) == len(ps), "the loop did not run natively"


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("op", ["+", "-", "*"])
def test_one_pair_at_the_edges_of_the_range(dt, op):
    # 600 elements: three chunks of up to 256; the pair at a chunk's start, middle, end.
    check(ELEMENTWISE.format(op=op), dt, 600, [0, 255, 256, 300, 511, 599], pairs(dt))


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
@pytest.mark.parametrize("op", ["+", "*"])
def test_in_place_updates_that_wrap(dt, op):
    check(IN_PLACE.format(op=op), dt, 300, [0, 17, 256, 299], pairs(dt)[::3])


def test_unsigned_products_at_the_float_compare_s_limit():
    # uint32 products compared in float64: 65535 * 65537 = 2**32 - 1 fits exactly, 65536 *
    # 65536 = 2**32 wraps to 0; uint16 products compared in float32: 255 * 257 = 65535.
    cases = {
        "uint32": [(65535, 65537), (65537, 65535), (65536, 65536), (4294967295, 1), (2147483648, 2),
                   (2147483647, 2), (4294967295, 4294967295), (92681, 46341), (92682, 46341)],
        "uint16": [(255, 257), (256, 256), (65535, 1), (32768, 2), (32767, 2), (65535, 65535), (4369, 15)],
        "uint8": [(15, 17), (16, 16), (255, 1), (128, 2), (127, 2), (255, 255)],
    }
    for dt, ps in cases.items():
        check(ELEMENTWISE.format(op="*"), dt, 300, [3, 256], ps)


def test_values_wrap_in_every_lane():
    # Many wraps in one chunk, in every lane of a vector: values and the one warning.
    for dt in ["int8", "int16", "int32", "uint8", "uint16", "uint32"]:
        for op in ["+", "-", "*"]:
            f_py, f_sp = compile_both(ELEMENTWISE.format(op=op))
            info = np.iinfo(dt)
            rng = np.random.default_rng(7)

            def make():
                x = rng.integers(info.min, int(info.max) + 1, 1000, dtype=dt)
                y = rng.integers(info.min, int(info.max) + 1, 1000, dtype=dt)
                return x, y, np.zeros(1000, dtype=dt)
            args = make()
            want = outcome(f_py, tuple(a.copy() for a in args))
            with stagepy.enable():
                got = outcome(f_sp, tuple(a.copy() for a in args))
            assert got[0] == want[0] and np.array_equal(got[1], want[1]), (dt, op)
            assert native_calls(f_sp) == 1


# A Python int meeting a NumPy integer or float32 must fit it (NumPy raises OverflowError,
# or for float32 beyond 2**24 stagepy lets CPython compute): in a chunk's fast pass the
# check only marks the chunk (value_check), whose exact re-run stops where CPython does.
WEAK_OPERAND = """
def f(y, x, a):
    for k in range(x.shape[0]):
        y[k] = y[k] + a * x[k]
    return locals()
"""

WEAK_OPERAND_VARYING = """
def f(y, x, a):
    for k in range(x.shape[0]):
        y[k] = y[k] + (a + k * k * k) * x[k]
    return locals()
"""


@pytest.mark.parametrize("dt", ["int8", "int32", "uint16", "uint32", "float32"])
@pytest.mark.parametrize("a", [3, -3, 127, 128, 2**24, 2**24 + 1, 2**31 - 1, 2**31, -2**31, 2**32, 2**40])
def test_a_python_int_operand_that_may_not_fit(dt, a, threads):
    # The loop's version without the check runs where `a` fits (checked where the loop
    # starts: codegen's versioned_for_operands, and before threads: invariant_operands).
    def make():
        x = (np.arange(600) % 5).astype(dt)
        return np.ones(600, dtype=dt), x, a
    if dt == "float32":
        fits = abs(a) <= 2**24
    else:
        fits = np.iinfo(dt).min <= a <= np.iinfo(dt).max
    difftest.run(WEAK_OPERAND, "f", make, expect="native" if fits else None, warn_filter="default")


@pytest.mark.parametrize("dt", ["int16", "int32", "float32"])
def test_a_python_int_operand_that_stops_fitting_midway(dt):
    # a + k**3 passes int16's limit at k = 32, int32's at k = 1291, 2**24 at k = 257: the
    # statement stops for CPython there (OverflowError for the integers), earlier stores done.
    def make():
        return np.ones(1500, dtype=dt), (np.arange(1500) % 3).astype(dt), 5
    difftest.run(WEAK_OPERAND_VARYING, "f", make, expect=None, warn_filter="default")


# The operand is the outer loop's (checked once where the nest starts), or assigned by the
# outer loop (checked where each row starts: `b` stops fitting int16 at row 3).
NESTED = """
def f(img, out, a):
    for i in range(img.shape[0]):
        b = a * (i + 1) ** 5
        for j in range(img.shape[1]):
            out[i, j] = img[i, j] * a + img[i, j] // 3 - b * img[i, j]
    return locals()
"""


@pytest.mark.parametrize("dt", ["uint8", "int16", "float32"])
@pytest.mark.parametrize("a", [2, 100, 300, 40000])
def test_operands_of_a_nest_that_may_not_fit(dt, a, threads):
    def make():
        img = (np.arange(6 * 300) % 7).reshape(6, 300).astype(dt)
        return img, np.zeros_like(img), a
    difftest.run(NESTED, "f", make, expect=None, warn_filter="default")
